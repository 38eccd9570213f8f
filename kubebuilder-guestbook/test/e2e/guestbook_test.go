//go:build e2e

/*
Copyright 2026 The controller-kit Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/controller-kit/controller-kit/test/kittest"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
)

// TestGuestbookOperator runs one manager for all its subtests (a manager watches
// every namespace, so two at once would both act on each test's Guestbook);
// each subtest works in a namespace of its own, so they run in parallel
// (t.Parallel; make test-e2e passes -parallel to go test).
func TestGuestbookOperator(t *testing.T) {
	c := newClient(t)
	cs := kittest.Clientset(t)
	operatorNS := kittest.Namespace(t, cs, "guestbook-operator")
	installRBAC(t, c, operatorNS)
	manager := startManager(t, "manager", operatorNS)
	// Parallel subtests run after this function returns, and cleanups run after
	// them, in reverse order: this one reads the manager's log once every
	// subtest is done and before the manager is stopped.
	t.Cleanup(func() {
		// The shipped RBAC was enough for every subtest. A create refused with
		// "cannot find RESTMapping" is no RBAC error: the API server's
		// OwnerReferencesPermissionEnforcement plugin could not look up the
		// Guestbook kind in its discovery cache for a moment (seen on kind,
		// with other lessons' CRDs applied beside this suite; see
		// kittest.WaitForCRD), and the reconcile is retried. Nor is a Pod
		// refused by a ResourceQuota ("forbidden: exceeded quota"), which
		// FailedChildIsDegradedNamingItAndRecovers causes on purpose and the
		// operator reports in its ChildFailed event.
		if len(manager.Lines("Starting manager")) == 0 {
			manager.RequireNoLine(t, "Starting manager", "the manager hit RBAC errors with the shipped role", "forbidden")
			return
		}
		var refused []string
		for _, line := range manager.Lines("forbidden") {
			if !strings.Contains(line, "cannot find RESTMapping") && !strings.Contains(line, "exceeded quota") {
				refused = append(refused, line)
			}
		}
		if len(refused) > 0 {
			t.Errorf("manager: the manager hit RBAC errors with the shipped role:\n%s", strings.Join(refused, "\n"))
		}
	})

	t.Run("BecomesAvailableAsPodsRunOnNodes", func(t *testing.T) {
		t.Parallel()
		ns := kittest.Namespace(t, cs, "guestbook")
		createGuestbook(t, c, ns, "shop", 2)

		waitAvailable(t, c, ns, "shop", 2)
		var pods corev1.PodList
		if err := c.List(context.Background(), &pods, client.InNamespace(ns),
			client.MatchingLabels{"app.kubernetes.io/instance": "shop"}); err != nil {
			t.Fatal(err)
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "" {
				running++
			}
		}
		if running < 5 { // 1 leader + 2 followers + 2 frontends
			t.Errorf("%d Guestbook Pods running on nodes; want 5", running)
		}
		kittest.Eventually(t, deadline, "the directory entry", hasDirectoryEntry(c, operatorNS, ns, "shop"))
		kittest.Eventually(t, deadline, "the operator's Available event", func(ctx context.Context) (bool, error) {
			var events corev1.EventList
			if err := c.List(ctx, &events, client.InNamespace(ns)); err != nil {
				return false, err
			}
			for _, e := range events.Items {
				if e.Reason == "Available" && e.InvolvedObject.Name == "shop" && e.ReportingController == "guestbook-operator" {
					return true, nil
				}
			}
			return false, nil
		})
	})

	t.Run("ScalingTheFrontendReachesTheNewCount", func(t *testing.T) {
		t.Parallel()
		ns := kittest.Namespace(t, cs, "guestbook")
		createGuestbook(t, c, ns, "shop", 1)
		waitAvailable(t, c, ns, "shop", 1)

		kittest.Eventually(t, deadline, "the scale-up to 3", func(ctx context.Context) (bool, error) {
			gb, err := getGuestbook(ctx, c, ns, "shop")
			if err != nil {
				return false, err
			}
			gb.Spec.Frontend.Replicas = ptr.To[int32](3)
			return true, c.Update(ctx, gb)
		})

		waitAvailable(t, c, ns, "shop", 3)
	})

	t.Run("DeletedChildIsRecreated", func(t *testing.T) {
		t.Parallel()
		ns := kittest.Namespace(t, cs, "guestbook")
		createGuestbook(t, c, ns, "shop", 1)
		var old appsv1.Deployment
		kittest.Eventually(t, deadline, "the frontend Deployment", func(ctx context.Context) (bool, error) {
			return true, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop-frontend"}, &old)
		})

		if err := c.Delete(context.Background(), &old); err != nil {
			t.Fatal(err)
		}

		kittest.Eventually(t, deadline, "a new frontend Deployment", func(ctx context.Context) (bool, error) {
			var d appsv1.Deployment
			err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shop-frontend"}, &d)
			return err == nil && d.UID != old.UID, client.IgnoreNotFound(err)
		})
	})

	t.Run("DeletingTheGuestbookRemovesChildrenAndDirectoryEntry", func(t *testing.T) {
		t.Parallel()
		ns := kittest.Namespace(t, cs, "guestbook")
		createGuestbook(t, c, ns, "shop", 1)
		waitAvailable(t, c, ns, "shop", 1)

		gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"}}
		if err := c.Delete(context.Background(), gb); err != nil {
			t.Fatal(err)
		}

		kittest.Eventually(t, deadline, "the Guestbook to be gone", func(ctx context.Context) (bool, error) {
			_, err := getGuestbook(ctx, c, ns, "shop")
			return isGone(err)
		})
		kittest.Eventually(t, kittest.GarbageCollectionDeadline(deadline), "the garbage collector to delete the children", func(ctx context.Context) (bool, error) {
			var deployments appsv1.DeploymentList
			var services corev1.ServiceList
			sel := client.MatchingLabels{"app.kubernetes.io/instance": "shop"}
			if err := c.List(ctx, &deployments, client.InNamespace(ns), sel); err != nil {
				return false, err
			}
			if err := c.List(ctx, &services, client.InNamespace(ns), sel); err != nil {
				return false, err
			}
			return len(deployments.Items) == 0 && len(services.Items) == 0, nil
		})
		var cm corev1.ConfigMap
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: operatorNS, Name: "guestbook-directory"}, &cm); err != nil {
			t.Fatal(err)
		}
		if _, ok := cm.Data[ns+".shop"]; ok {
			t.Errorf("directory entry %s.shop is still there after the Guestbook was deleted", ns)
		}
	})

	// A controller watches what it generates: an entry removed by hand is
	// written back. (Only the test's own entry: the directory is shared by the
	// parallel tests, so this one never deletes the whole ConfigMap; the
	// envtest suite does.)
	t.Run("DirectoryEntryRemovedByHandIsRestored", func(t *testing.T) {
		t.Parallel()
		ns := kittest.Namespace(t, cs, "guestbook")
		createGuestbook(t, c, ns, "shop", 1)
		entry := hasDirectoryEntry(c, operatorNS, ns, "shop")
		kittest.Eventually(t, deadline, "the directory entry", entry)
		// Settled: no child is changing any more, so no event of its own
		// brings the Guestbook back to the Reconciler; only the watch can.
		waitAvailable(t, c, ns, "shop", 1)
		time.Sleep(2 * time.Second)

		// kubectl -n <operator namespace> patch configmap guestbook-directory --type=json \
		//   -p '[{"op":"remove","path":"/data/<namespace>.shop"}]'
		patch := fmt.Sprintf(`[{"op":"remove","path":"/data/%s.shop"}]`, ns)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNS, Name: "guestbook-directory"}}
		removed := time.Now()
		if err := c.Patch(context.Background(), cm, client.RawPatch(types.JSONPatchType, []byte(patch))); err != nil {
			t.Fatalf("removing the directory entry by hand: %v", err)
		}
		kittest.Eventually(t, deadline, "the entry removed by hand to be written back", entry)
		t.Logf("the entry removed by hand was written back %.1fs later", time.Since(removed).Seconds()) // a figure for docs/reliability.md
	})

	t.Run("InvalidGuestbookIsRejectedNamingTheField", func(t *testing.T) {
		t.Parallel()
		ns := kittest.Namespace(t, cs, "guestbook")
		gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"}}
		gb.Spec.Frontend.Replicas = ptr.To[int32](-1)

		err := c.Create(context.Background(), gb)

		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.frontend.replicas") {
			t.Errorf("creating a Guestbook with frontend replicas -1 = %v; want Invalid naming spec.frontend.replicas", err)
		}
	})

	// What the Reconciler reports (conditions_test.go) and what it costs at
	// rest (steadystate_test.go).
	t.Run("UnusableNameIsDegradedWithoutChildren", func(t *testing.T) {
		t.Parallel()
		unusableNameIsDegradedWithoutChildren(t, c, cs)
	})
	t.Run("ConditionsFollowTheRollout", func(t *testing.T) {
		t.Parallel()
		conditionsFollowTheRollout(t, c, cs)
	})
	t.Run("ChildNameTakenIsDegradedAndLeftAlone", func(t *testing.T) {
		t.Parallel()
		childNameTakenIsDegradedAndLeftAlone(t, c, cs)
	})
	// Field cases (fieldcases_test.go).
	t.Run("FailedChildIsDegradedNamingItAndRecovers", func(t *testing.T) {
		t.Parallel()
		failedChildIsReportedAndRecovers(t, c, cs)
	})
	t.Run("ChildOfADeletedGuestbookOfTheSameNameIsWaitedFor", func(t *testing.T) {
		t.Parallel()
		childOfADeletedGuestbookIsWaitedFor(t, c, cs)
	})
	t.Run("RestingGuestbookCostsNoWrite", func(t *testing.T) {
		t.Parallel()
		restingGuestbookCostsNoWrite(t, c, cs, operatorNS)
	})
	t.Run("ConflictsAreRequeuesNotErrors", func(t *testing.T) {
		t.Parallel()
		conflictsAreRequeuesNotErrors(t, c, cs, manager)
	})
	// What it owes a Guestbook that is going away (goingaway_test.go).
	t.Run("DeletedGuestbookGetsNoNewChildren", func(t *testing.T) {
		t.Parallel()
		deletedGuestbookGetsNoNewChildren(t, c, cs)
	})
	t.Run("DeletingWorksWhileTheWebhookServerIsDown", func(t *testing.T) {
		t.Parallel()
		deletingWorksWhileTheWebhookServerIsDown(t, c, cs, operatorNS)
	})
}

// createGuestbook creates a Guestbook with frontendReplicas frontend Pods and two
// Redis followers. At cleanup it deletes the Guestbook and waits until it is
// gone, while the manager still runs to remove its finalizer: a Guestbook left
// behind after the operator stops would keep its namespace Terminating.
func createGuestbook(t *testing.T, c client.Client, ns, name string, frontendReplicas int32) {
	t.Helper()
	gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	gb.Spec.Frontend.Replicas = ptr.To(frontendReplicas)
	gb.Spec.Redis.FollowerReplicas = ptr.To[int32](2)
	if err := c.Create(context.Background(), gb); err != nil {
		t.Fatalf("creating Guestbook %s/%s: %v", ns, name, err)
	}
	t.Cleanup(func() {
		if err := c.Delete(context.Background(), gb); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting Guestbook %s/%s: %v", ns, name, err)
		}
		kittest.Eventually(t, deadline, "Guestbook "+ns+"/"+name+" to be gone", func(ctx context.Context) (bool, error) {
			_, err := getGuestbook(ctx, c, ns, name)
			return isGone(err)
		})
	})
}

// waitAvailable waits until the Guestbook is Available with frontend replicas
// available frontend Pods, for the generation it has now. On failure it logs the
// last status it saw.
func waitAvailable(t *testing.T, c client.Client, ns, name string, frontend int32) {
	t.Helper()
	var seen string
	defer func() {
		if t.Failed() {
			t.Logf("last seen of Guestbook %s/%s: %s", ns, name, seen)
		}
	}()
	kittest.Eventually(t, deadline, "the Guestbook to be Available", func(ctx context.Context) (bool, error) {
		gb, err := getGuestbook(ctx, c, ns, name)
		if err != nil {
			if ctx.Err() != nil {
				return false, nil // the deadline, not an API error
			}
			return false, err
		}
		seen = fmt.Sprintf("generation %d, status %+v", gb.Generation, gb.Status)
		available := meta.FindStatusCondition(gb.Status.Conditions, webappv1.ConditionAvailable)
		return available != nil && available.Status == metav1.ConditionTrue &&
			available.ObservedGeneration == gb.Generation &&
			gb.Status.Frontend.AvailableReplicas == frontend, nil
	})
}
