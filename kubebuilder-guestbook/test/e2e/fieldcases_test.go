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

// Three field cases on a real cluster: a child that has failed is reported
// (child-failure-surfaces.md), the child of a deleted Guestbook of the same
// name is waited for, and the directory drops the entry of a Guestbook that
// went while the operator was away (state-outlives-object.md).

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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/controller-kit/controller-kit/test/kittest"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
)

// failedChildIsReportedAndRecovers is child-failure-surfaces.md's input: an
// Available Guestbook in a namespace whose ResourceQuota allows exactly the
// Pods running now, its frontend Deployment's progressDeadlineSeconds set to 10
// by an administrator, and then a new frontend image. The new ReplicaSet cannot
// create its Pod (ReplicaFailure), the deadline passes
// (ProgressDeadlineExceeded), and the old Pod keeps serving. The Guestbook must
// say so: Degraded with reason ChildFailed naming the Deployment, one Warning
// event; once the quota is gone, back to complete, with a Recovered event.
func failedChildIsReportedAndRecovers(t *testing.T, c client.Client, cs kubernetes.Interface) {
	ctx := context.Background()
	ns := kittest.Namespace(t, cs, "guestbook")
	createGuestbook(t, c, ns, "pd-gb", 1)
	waitAvailable(t, c, ns, "pd-gb", 1)

	// 1 leader, 2 followers, 1 frontend: 4 Pods, and not one more.
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pods"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("4")}},
	}
	if err := c.Create(ctx, quota); err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, deadline, "the quota's usage counted", func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(quota), quota)
		used, ok := quota.Status.Used[corev1.ResourcePods]
		return ok && used.Value() == 4, err
	})
	// kubectl patch deployment pd-gb-frontend -p '{"spec":{"progressDeadlineSeconds":10}}'
	frontend := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pd-gb" + webappv1.FrontendSuffix}}
	if err := c.Patch(ctx, frontend, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"progressDeadlineSeconds":10}}`))); err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, deadline, "the new frontend image", func(ctx context.Context) (bool, error) {
		gb, err := getGuestbook(ctx, c, ns, "pd-gb")
		if err != nil {
			return false, err
		}
		// nginx:1.29: an image a real kubelet can start (kind pulls it, or the
		// kit's node image holds a stand-in for it), so that the rollout
		// completes once the quota goes.
		gb.Spec.Frontend.Image = "nginx:1.29"
		err = c.Update(ctx, gb)
		return err == nil, client.IgnoreNotFound(ignoreConflict(err))
	})

	changed := time.Now()
	waitCondition(t, c, ns, "pd-gb", webappv1.ConditionDegraded, metav1.ConditionTrue, "ChildFailed")
	t.Logf("Degraded=True (ChildFailed) %.1fs after the image change", time.Since(changed).Seconds()) // a figure for docs/reliability.md
	gb, err := getGuestbook(ctx, c, ns, "pd-gb")
	if err != nil {
		t.Fatal(err)
	}
	if msg := meta.FindStatusCondition(gb.Status.Conditions, webappv1.ConditionDegraded).Message; !strings.Contains(msg, "Deployment pd-gb-frontend") {
		t.Errorf("Degraded message %q does not name Deployment pd-gb-frontend", msg)
	}
	if hasCondition(gb, webappv1.ConditionProgressing, metav1.ConditionTrue, "RollingOut") {
		t.Errorf("the Guestbook still says it is rolling out while its frontend has failed: %s", conditionsText(gb.Status.Conditions))
	}
	waitEvent(t, c, ns, "pd-gb", corev1.EventTypeWarning, "ChildFailed")

	if err := c.Delete(ctx, quota); err != nil {
		t.Fatal(err)
	}
	lifted := time.Now()
	waitCondition(t, c, ns, "pd-gb", webappv1.ConditionDegraded, metav1.ConditionFalse, "AsExpected")
	waitCondition(t, c, ns, "pd-gb", webappv1.ConditionProgressing, metav1.ConditionFalse, "RolloutComplete")
	t.Logf("back to RolloutComplete %.1fs after the quota was deleted", time.Since(lifted).Seconds()) // a figure for docs/reliability.md
	waitEvent(t, c, ns, "pd-gb", corev1.EventTypeNormal, "Recovered")
	if n := countEvents(t, c, ns, "pd-gb", corev1.EventTypeWarning, "ChildFailed"); n != 1 {
		t.Errorf("%d ChildFailed Warnings; want exactly one, on the transition", n)
	}
}

// childOfADeletedGuestbookIsWaitedFor: the Guestbook deleted and created again
// under its name (kubectl replace --force) while its old frontend Deployment is
// held by a finalizer. That Deployment (controlled by the old Guestbook's UID,
// deletionTimestamp set) is going away, not a stranger's: no ChildConflict, no
// Degraded, no Warning; once it is gone the new Guestbook makes its own.
func childOfADeletedGuestbookIsWaitedFor(t *testing.T, c client.Client, cs kubernetes.Interface) {
	ctx := context.Background()
	ns := kittest.Namespace(t, cs, "guestbook")
	createGuestbook(t, c, ns, "shop", 1)
	waitAvailable(t, c, ns, "shop", 1)
	const hold = "controller-kit.dev/e2e-hold"
	key := client.ObjectKey{Namespace: ns, Name: "shop" + webappv1.FrontendSuffix}
	setHold := func(on bool) {
		t.Helper()
		kittest.Eventually(t, deadline, fmt.Sprintf("the test's finalizer on %s set to %v", key.Name, on), func(ctx context.Context) (bool, error) {
			var d appsv1.Deployment
			if err := c.Get(ctx, key, &d); err != nil {
				return isGone(err)
			}
			kept := d.Finalizers[:0]
			for _, f := range d.Finalizers {
				if f != hold {
					kept = append(kept, f)
				}
			}
			if d.Finalizers = kept; on {
				d.Finalizers = append(d.Finalizers, hold)
			}
			err := c.Update(ctx, &d)
			return err == nil, ignoreConflict(err)
		})
	}
	setHold(true)
	t.Cleanup(func() { setHold(false) })
	var old appsv1.Deployment
	if err := c.Get(ctx, key, &old); err != nil {
		t.Fatal(err)
	}

	// kubectl replace --force -f shop.yaml
	if err := c.Delete(ctx, &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"}}); err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, deadline, "the old Guestbook to be gone", func(ctx context.Context) (bool, error) {
		_, err := getGuestbook(ctx, c, ns, "shop")
		return isGone(err)
	})
	createGuestbook(t, c, ns, "shop", 1)
	gb, err := getGuestbook(ctx, c, ns, "shop")
	if err != nil {
		t.Fatal(err)
	}

	// The old frontend Deployment is held, deletionTimestamp set; the other
	// old children go. The new Guestbook waits for it.
	kittest.Eventually(t, deadline, "the new Guestbook waiting for the old frontend (Progressing=True, ChildGoingAway, naming it)", func(ctx context.Context) (bool, error) {
		var d appsv1.Deployment
		if err := c.Get(ctx, key, &d); err != nil || d.UID != old.UID || d.DeletionTimestamp == nil {
			return false, err
		}
		gb, err := getGuestbook(ctx, c, ns, "shop")
		if err != nil {
			return false, err
		}
		p := meta.FindStatusCondition(gb.Status.Conditions, webappv1.ConditionProgressing)
		return p != nil && p.Status == metav1.ConditionTrue && p.Reason == "ChildGoingAway" && strings.Contains(p.Message, "Deployment "+key.Name), nil
	})

	setHold(false)
	kittest.Eventually(t, deadline, "a frontend Deployment controlled by the new Guestbook", func(ctx context.Context) (bool, error) {
		var d appsv1.Deployment
		err := c.Get(ctx, key, &d)
		return err == nil && metav1.IsControlledBy(&d, gb), client.IgnoreNotFound(err)
	})
	waitAvailable(t, c, ns, "shop", 1)
	var events corev1.EventList
	if err := c.List(ctx, &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.InvolvedObject.UID == gb.UID && e.Type == corev1.EventTypeWarning {
			t.Errorf("Warning %s on the new Guestbook: %q; want none: the old Guestbook's child, going away, is no conflict", e.Reason, e.Message)
		}
	}
	waitCondition(t, c, ns, "shop", webappv1.ConditionDegraded, metav1.ConditionFalse, "AsExpected")
}

// TestDirectoryDropsTheEntryOfAGuestbookDeletedWhileTheOperatorWasAway is
// state-outlives-object.md for the Guestbook: with the operator stopped, a
// Guestbook's finalizer is removed by hand and the Guestbook deleted, so no
// one removes its directory entry. Within a minute of the operator's start the
// entry is gone; the entry of a Guestbook that still exists stays. It runs
// managers of its own, one after the other, so it is not a subtest of
// TestGuestbookOperator (two managers at once would both act).
func TestDirectoryDropsTheEntryOfAGuestbookDeletedWhileTheOperatorWasAway(t *testing.T) {
	ctx := context.Background()
	c := newClient(t)
	cs := kittest.Clientset(t)
	operatorNS := kittest.Namespace(t, cs, "guestbook-operator")
	installRBAC(t, c, operatorNS)
	ns := kittest.Namespace(t, cs, "guestbook")
	first := startManager(t, "manager-before", operatorNS)
	for _, name := range []string{"away", "stays"} {
		gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		gb.Spec.Frontend.Replicas = ptr.To[int32](1)
		if err := c.Create(ctx, gb); err != nil {
			t.Fatal(err)
		}
		kittest.Eventually(t, deadline, "the directory entry of "+name, hasDirectoryEntry(c, operatorNS, ns, name))
	}
	if _, err := first.Stop(deadline); err != nil {
		t.Fatalf("stopping the operator: %v", err)
	}

	// While it is away: kubectl patch guestbook away --type=json \
	//   -p '[{"op":"remove","path":"/metadata/finalizers"}]'; kubectl delete guestbook away
	away := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "away"}}
	if err := c.Patch(ctx, away, client.RawPatch(types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`))); err != nil {
		t.Fatalf("removing the finalizer by hand: %v", err)
	}
	if err := c.Delete(ctx, away); err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, deadline, "Guestbook away to be gone", func(ctx context.Context) (bool, error) {
		_, err := getGuestbook(ctx, c, ns, "away")
		return isGone(err)
	})

	started := time.Now()
	startManager(t, "manager-after", operatorNS)
	kittest.Eventually(t, time.Minute+deadline/2, "the entry of Guestbook away, which is gone, dropped", func(ctx context.Context) (bool, error) {
		var cm corev1.ConfigMap
		if err := c.Get(ctx, client.ObjectKey{Namespace: operatorNS, Name: "guestbook-directory"}, &cm); err != nil {
			return false, err
		}
		_, there := cm.Data[ns+".away"]
		return !there, nil
	})
	t.Logf("the entry of the Guestbook deleted while the operator was away was dropped %.1fs after the operator started", time.Since(started).Seconds()) // a figure for docs/reliability.md
	if ok, err := hasDirectoryEntry(c, operatorNS, ns, "stays")(ctx); !ok || err != nil {
		t.Errorf("the entry of Guestbook stays, which exists, is gone too (err %v)", err)
	}

	// Let the operator that runs remove the finalizer of the Guestbook that stays.
	if err := c.Delete(ctx, &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stays"}}); err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, deadline, "Guestbook stays to be gone", func(ctx context.Context) (bool, error) {
		_, err := getGuestbook(ctx, c, ns, "stays")
		return isGone(err)
	})
}

// ignoreConflict turns a write conflict into "try again" for kittest.Eventually.
func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// countEvents counts the events of type eventType with reason on Guestbook
// name in ns (an event recorded again is one Event with a higher count).
func countEvents(t *testing.T, c client.Client, ns, name, eventType, reason string) int {
	t.Helper()
	var events corev1.EventList
	if err := c.List(context.Background(), &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range events.Items {
		if e.Reason == reason && e.Type == eventType && e.InvolvedObject.Name == name {
			n += max(int(e.Count), 1)
			if e.Series != nil {
				n += int(e.Series.Count) - 1
			}
		}
	}
	return n
}
