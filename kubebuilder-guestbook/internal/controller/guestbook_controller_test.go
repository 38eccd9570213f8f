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

package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
)

var nsCounter atomic.Int32

// newNamespace creates a namespace of the test's own.
func newNamespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("test-%d-%d", time.Now().Unix()%100000, nsCounter.Add(1))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := k8sClient.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	return name
}

// createGuestbook creates a Guestbook with an empty spec (the CRD defaults fill it).
func createGuestbook(t *testing.T, namespace, name string) *webappv1.Guestbook {
	t.Helper()
	gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if err := k8sClient.Create(context.Background(), gb); err != nil {
		t.Fatalf("creating Guestbook: %v", err)
	}
	return gb
}

func getGuestbook(ctx context.Context, namespace, name string) (*webappv1.Guestbook, error) {
	var gb webappv1.Guestbook
	err := k8sClient.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &gb)
	return &gb, err
}

// children lists the names of the three components' children.
func children(name string) []string {
	return []string{name + "-redis-leader", name + "-redis-follower", name + "-frontend"}
}

// waitForChildren waits until every Deployment and Service of the Guestbook exists
// and returns the Deployments by name.
func waitForChildren(t *testing.T, namespace, name string) map[string]*appsv1.Deployment {
	t.Helper()
	out := map[string]*appsv1.Deployment{}
	eventually(t, "the Guestbook's Deployments and Services", func(ctx context.Context) (bool, error) {
		for _, child := range children(name) {
			key := types.NamespacedName{Namespace: namespace, Name: child}
			var d appsv1.Deployment
			if err := k8sClient.Get(ctx, key, &d); err != nil {
				return false, err
			}
			out[child] = &d
			if err := k8sClient.Get(ctx, key, &corev1.Service{}); err != nil {
				return false, err
			}
		}
		return true, nil
	})
	return out
}

// makeAvailable plays the Deployment controller envtest does not run: it reports
// every replica of the Deployment as updated and available.
func makeAvailable(t *testing.T, namespace, name string) {
	t.Helper()
	eventually(t, "Deployment "+name+" status set", func(ctx context.Context) (bool, error) {
		var d appsv1.Deployment
		if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &d); err != nil {
			return false, err
		}
		n := ptr.Deref(d.Spec.Replicas, 1)
		d.Status = appsv1.DeploymentStatus{
			ObservedGeneration: d.Generation,
			Replicas:           n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n,
		}
		return true, k8sClient.Status().Update(ctx, &d)
	})
}

// waitForCondition waits until the Guestbook's condition has the given status
// and reason and returns the Guestbook.
func waitForCondition(t *testing.T, namespace, name, condType string, status metav1.ConditionStatus, reason string) *webappv1.Guestbook {
	t.Helper()
	var gb *webappv1.Guestbook
	eventually(t, fmt.Sprintf("condition %s=%s (%s)", condType, status, reason), func(ctx context.Context) (bool, error) {
		var err error
		if gb, err = getGuestbook(ctx, namespace, name); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(gb.Status.Conditions, condType)
		return c != nil && c.Status == status && c.Reason == reason, nil
	})
	return gb
}

// directoryEntry returns the Guestbook's entry in the directory ConfigMap.
func directoryEntry(ctx context.Context, namespace, name string) (string, bool, error) {
	var cm corev1.ConfigMap
	err := k8sClient.Get(ctx, types.NamespacedName{Namespace: operatorNamespace, Name: DirectoryName}, &cm)
	if err != nil {
		return "", false, err
	}
	v, ok := cm.Data[namespace+"."+name]
	return v, ok, nil
}

func TestGuestbookCreatesControlledChildrenAndRegisters(t *testing.T) {
	ns := newNamespace(t)
	gb := createGuestbook(t, ns, "shop")

	deployments := waitForChildren(t, ns, "shop")

	for _, child := range children("shop") {
		d := deployments[child]
		ref := metav1.GetControllerOf(d)
		if ref == nil || ref.UID != gb.UID || ref.Kind != "Guestbook" || !ptr.Deref(ref.BlockOwnerDeletion, false) {
			t.Errorf("Deployment %s: controller reference = %+v; want the Guestbook (uid %s) with blockOwnerDeletion", child, ref, gb.UID)
		}
		var s corev1.Service
		if err := k8sClient.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: child}, &s); err != nil {
			t.Fatal(err)
		}
		if !metav1.IsControlledBy(&s, gb) {
			t.Errorf("Service %s is not controlled by the Guestbook: %+v", child, s.OwnerReferences)
		}
	}
	frontend := deployments["shop-frontend"]
	if got := ptr.Deref(frontend.Spec.Replicas, -1); got != 2 {
		t.Errorf("frontend replicas = %d; want the CRD default 2", got)
	}
	if got := frontend.Spec.Template.Spec.Containers[0].Image; got != webappv1.DefaultFrontendImage {
		t.Errorf("frontend image = %q; want %q", got, webappv1.DefaultFrontendImage)
	}
	follower := deployments["shop-redis-follower"].Spec.Template.Spec.Containers[0]
	if !slices.Equal(follower.Args, []string{"--replicaof", "shop-redis-leader", "6379"}) {
		t.Errorf("follower args = %q; want it to replicate from shop-redis-leader", follower.Args)
	}

	eventually(t, "the finalizer and the directory entry", func(ctx context.Context) (bool, error) {
		got, err := getGuestbook(ctx, ns, "shop")
		if err != nil {
			return false, err
		}
		v, ok, err := directoryEntry(ctx, ns, "shop")
		return slices.Contains(got.Finalizers, FinalizerName) && ok && v == "http://shop-frontend."+ns+".svc", err
	})
	if got := waitForExactlyEvents(t, ns, "Created", 6); len(got) != 6 {
		t.Errorf("Created events = %v; want one per child (6)", got)
	}
}

func TestGuestbookSpecChangePropagatesToDeployment(t *testing.T) {
	ns := newNamespace(t)
	createGuestbook(t, ns, "shop")
	waitForChildren(t, ns, "shop")

	eventually(t, "the spec update", func(ctx context.Context) (bool, error) {
		gb, err := getGuestbook(ctx, ns, "shop")
		if err != nil {
			return false, err
		}
		gb.Spec.Frontend.Replicas = ptr.To[int32](5)
		gb.Spec.Frontend.Image = "registry.example/gb-frontend:v6"
		return true, k8sClient.Update(ctx, gb)
	})

	eventually(t, "frontend Deployment with 5 replicas of gb-frontend:v6", func(ctx context.Context) (bool, error) {
		var d appsv1.Deployment
		if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "shop-frontend"}, &d); err != nil {
			return false, err
		}
		return ptr.Deref(d.Spec.Replicas, 0) == 5 &&
			d.Spec.Template.Spec.Containers[0].Image == "registry.example/gb-frontend:v6", nil
	})
	for _, e := range waitForEvents(t, ns, "Updated", 1) {
		if e.name != "shop" || !strings.Contains(e.note, "shop-frontend") {
			t.Errorf("Updated event %+v; want it on Guestbook shop, naming Deployment shop-frontend", e)
		}
	}
}

func TestGuestbookStatusFollowsDeploymentsThroughStatusSubresource(t *testing.T) {
	ns := newNamespace(t)
	createGuestbook(t, ns, "shop")
	waitForChildren(t, ns, "shop")

	gb := waitForCondition(t, ns, "shop", webappv1.ConditionAvailable, metav1.ConditionFalse, "ComponentsUnavailable")
	if !meta.IsStatusConditionTrue(gb.Status.Conditions, webappv1.ConditionProgressing) {
		t.Errorf("Progressing is not True while nothing is available: %+v", gb.Status.Conditions)
	}
	if !meta.IsStatusConditionFalse(gb.Status.Conditions, webappv1.ConditionDegraded) {
		t.Errorf("Degraded is not False: %+v", gb.Status.Conditions)
	}

	for _, child := range children("shop") {
		makeAvailable(t, ns, child)
	}

	gb = waitForCondition(t, ns, "shop", webappv1.ConditionAvailable, metav1.ConditionTrue, "AllComponentsAvailable")
	if !meta.IsStatusConditionFalse(gb.Status.Conditions, webappv1.ConditionProgressing) {
		t.Errorf("Progressing is not False once everything is available: %+v", gb.Status.Conditions)
	}
	for _, c := range gb.Status.Conditions {
		if c.ObservedGeneration != gb.Generation {
			t.Errorf("condition %s has observedGeneration %d; want %d", c.Type, c.ObservedGeneration, gb.Generation)
		}
	}
	want := webappv1.ComponentStatus{Replicas: 2, AvailableReplicas: 2}
	if gb.Status.Frontend != want || gb.Status.RedisFollower != want {
		t.Errorf("status frontend=%+v follower=%+v; want %+v each", gb.Status.Frontend, gb.Status.RedisFollower, want)
	}
	if got := waitForExactlyEvents(t, ns, "Available", 1); len(got) != 1 {
		t.Errorf("Available events = %v; want exactly one", got)
	}
}

// The zero-columns case: 0 Pods is stored as 0, not left out, so kubectl's
// FRONTEND and FOLLOWERS columns show 0 instead of a blank.
func TestGuestbookWithZeroReplicasStoresZeroCounts(t *testing.T) {
	ns := newNamespace(t)
	gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Name: "idle", Namespace: ns}}
	gb.Spec.Frontend.Replicas = ptr.To[int32](0)
	gb.Spec.Redis.FollowerReplicas = ptr.To[int32](0)
	if err := k8sClient.Create(context.Background(), gb); err != nil {
		t.Fatalf("creating Guestbook: %v", err)
	}
	waitForChildren(t, ns, "idle")
	waitForCondition(t, ns, "idle", webappv1.ConditionAvailable, metav1.ConditionFalse, "ComponentsUnavailable")

	// Read as kubectl does, without the Go type that would fill in a zero.
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(webappv1.GroupVersion.WithKind("Guestbook"))
	if err := k8sClient.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "idle"}, u); err != nil {
		t.Fatal(err)
	}
	for _, component := range []string{"frontend", "redisFollower"} {
		for _, field := range []string{"replicas", "availableReplicas"} {
			v, found, err := unstructured.NestedInt64(u.Object, "status", component, field)
			if !found || err != nil || v != 0 {
				t.Errorf("status.%s.%s = %d (present: %t, err: %v); want it stored as 0", component, field, v, found, err)
			}
		}
	}
}

func TestGuestbookAtSteadyStateMakesNoWrites(t *testing.T) {
	ns := newNamespace(t)
	createGuestbook(t, ns, "shop")
	waitForChildren(t, ns, "shop")
	for _, child := range children("shop") {
		makeAvailable(t, ns, child)
	}
	waitForCondition(t, ns, "shop", webappv1.ConditionAvailable, metav1.ConditionTrue, "AllComponentsAvailable")
	writes, reconciles := len(written.in(ns)), reconciled.get(ns)

	// Touch the Guestbook without changing its spec: it is reconciled again.
	eventually(t, "the annotation update", func(ctx context.Context) (bool, error) {
		gb, err := getGuestbook(ctx, ns, "shop")
		if err != nil {
			return false, err
		}
		metav1.SetMetaDataAnnotation(&gb.ObjectMeta, "example.com/touched", "yes")
		return true, k8sClient.Update(ctx, gb)
	})
	eventually(t, "one more reconcile", func(context.Context) (bool, error) {
		return reconciled.get(ns) > reconciles, nil
	})

	expectQuiet(t, ns, writes, reconciles, 2*time.Second)
}

func TestGuestbookDeletionWithChildDeletedByHandRemovesEntryAndObject(t *testing.T) {
	ns := newNamespace(t)
	createGuestbook(t, ns, "shop")
	waitForChildren(t, ns, "shop")
	eventually(t, "the directory entry", func(ctx context.Context) (bool, error) {
		_, ok, err := directoryEntry(ctx, ns, "shop")
		return ok, err
	})

	frontend := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop-frontend"}}
	if err := k8sClient.Delete(context.Background(), frontend); err != nil {
		t.Fatalf("deleting a child by hand: %v", err)
	}
	gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"}}
	if err := k8sClient.Delete(context.Background(), gb); err != nil {
		t.Fatalf("deleting the Guestbook: %v", err)
	}

	eventually(t, "the Guestbook to be gone", func(ctx context.Context) (bool, error) {
		_, err := getGuestbook(ctx, ns, "shop")
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if _, ok, err := directoryEntry(context.Background(), ns, "shop"); ok || err != nil {
		t.Errorf("directory entry still there after deletion (err %v)", err)
	}
}

func TestGuestbookDeletionWithEntryAlreadyMissingDoesNotHang(t *testing.T) {
	ns := newNamespace(t)
	createGuestbook(t, ns, "shop")
	eventually(t, "the directory entry", func(ctx context.Context) (bool, error) {
		_, ok, err := directoryEntry(ctx, ns, "shop")
		return ok, err
	})
	// Someone cleaned the directory by hand.
	eventually(t, "the entry removed by hand", func(ctx context.Context) (bool, error) {
		var cm corev1.ConfigMap
		if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: operatorNamespace, Name: DirectoryName}, &cm); err != nil {
			return false, err
		}
		delete(cm.Data, ns+".shop")
		return true, k8sClient.Update(ctx, &cm)
	})

	gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"}}
	if err := k8sClient.Delete(context.Background(), gb); err != nil {
		t.Fatalf("deleting the Guestbook: %v", err)
	}

	eventually(t, "the Guestbook to be gone", func(ctx context.Context) (bool, error) {
		_, err := getGuestbook(ctx, ns, "shop")
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

func TestGuestbookWithUnusableNameIsDegradedWithoutChildren(t *testing.T) {
	ns := newNamespace(t)
	// A valid object name (the API server allows 253 characters) that is too
	// long for the children's Service names. The webhook would reject it; this
	// suite runs without webhooks, as `make run` does.
	name := strings.Repeat("g", webappv1.MaxNameLength+1)
	createGuestbook(t, ns, name)

	expectDegradedWithoutChildren(t, ns, name, ReasonInvalidName, "metadata.name")
}

func TestGuestbookLeavesChildItDoesNotOwnAlone(t *testing.T) {
	ns := newNamespace(t)
	labels := map[string]string{"app": "theirs"}
	theirs := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop-frontend"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example/theirs:v1"}}},
			},
		},
	}
	if err := k8sClient.Create(context.Background(), theirs); err != nil {
		t.Fatal(err)
	}
	createGuestbook(t, ns, "shop")

	gb := waitForCondition(t, ns, "shop", webappv1.ConditionDegraded, metav1.ConditionTrue, "ChildConflict")
	if msg := meta.FindStatusCondition(gb.Status.Conditions, webappv1.ConditionDegraded).Message; !strings.Contains(msg, "Deployment shop-frontend") {
		t.Errorf("Degraded message %q does not name Deployment shop-frontend", msg)
	}
	var d appsv1.Deployment
	if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(theirs), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.OwnerReferences) != 0 || d.Spec.Template.Spec.Containers[0].Image != "registry.example/theirs:v1" {
		t.Errorf("the Deployment the Guestbook does not own was changed: owners %v, image %s",
			d.OwnerReferences, d.Spec.Template.Spec.Containers[0].Image)
	}
}

// The lost-ownership case: a child whose owner reference someone removed is no
// longer the Guestbook's (the kit never adopts), and each change to it still
// reaches the Guestbook through the watch by name, up to the delete that lets
// the Guestbook create its own child again.
func TestGuestbookNoticesChildThatLostItsOwnerReference(t *testing.T) {
	ns := newNamespace(t)
	createGuestbook(t, ns, "shop")
	waitForChildren(t, ns, "shop")
	for _, child := range children("shop") {
		makeAvailable(t, ns, child)
	}
	waitForCondition(t, ns, "shop", webappv1.ConditionAvailable, metav1.ConditionTrue, "AllComponentsAvailable")
	ctx := context.Background()
	frontend := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop-frontend"}}

	// kubectl patch deployment shop-frontend --type=json -p '[{"op":"remove","path":"/metadata/ownerReferences"}]'
	removeOwners := client.RawPatch(types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/ownerReferences"}]`))
	if err := k8sClient.Patch(ctx, frontend, removeOwners); err != nil {
		t.Fatalf("removing the owner references: %v", err)
	}
	gb := waitForCondition(t, ns, "shop", webappv1.ConditionDegraded, metav1.ConditionTrue, ReasonChildConflict)
	if msg := meta.FindStatusCondition(gb.Status.Conditions, webappv1.ConditionDegraded).Message; !strings.Contains(msg, "Deployment shop-frontend") {
		t.Errorf("Degraded message %q does not name Deployment shop-frontend", msg)
	}
	if gb.Status.Frontend != (webappv1.ComponentStatus{}) {
		t.Errorf("status.frontend = %+v while its Deployment is not the Guestbook's; want zero counts (no claim on Pods it does not control)", gb.Status.Frontend)
	}

	// kubectl scale deployment shop-frontend --replicas=4: no owner reference
	// leads from it to the Guestbook any more, its name does.
	reconciles := reconciled.get(ns)
	if err := k8sClient.Patch(ctx, frontend, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":4}}`))); err != nil {
		t.Fatalf("scaling by hand: %v", err)
	}
	eventually(t, "a reconcile of the Guestbook after its former child was scaled", func(context.Context) (bool, error) {
		return reconciled.get(ns) > reconciles, nil
	})
	var d appsv1.Deployment
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(frontend), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.OwnerReferences) != 0 || ptr.Deref(d.Spec.Replicas, 0) != 4 {
		t.Errorf("the Deployment that lost its owner was written to: owners %v, replicas %d; want it left alone (never adopted)",
			d.OwnerReferences, ptr.Deref(d.Spec.Replicas, 0))
	}

	// Deleting it resolves the conflict at once, not at a periodic retry.
	if err := k8sClient.Delete(ctx, frontend); err != nil {
		t.Fatal(err)
	}
	waitForCondition(t, ns, "shop", webappv1.ConditionDegraded, metav1.ConditionFalse, "AsExpected")
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(frontend), &d); err != nil || !metav1.IsControlledBy(&d, gb) {
		t.Errorf("Deployment shop-frontend after the conflict was resolved: get = %v, owners %v; want one the Guestbook controls", err, d.OwnerReferences)
	}
}

func TestReconcileOfDeletedGuestbookLogsOnceAndSucceeds(t *testing.T) {
	var lines []string
	log := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{})
	ctx := logf.IntoContext(context.Background(), log)

	res, err := reconciler.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "never-existed"}})

	if err != nil || res != (ctrl.Result{}) {
		t.Errorf("Reconcile of a missing Guestbook = %+v, %v; want no requeue and no error", res, err)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "gone") {
		t.Errorf("log lines = %q; want exactly one saying the Guestbook is gone", lines)
	}
}

func TestRequireCRDNamesTheMissingKindAndTheFix(t *testing.T) {
	mapper := k8sClient.RESTMapper()
	if err := RequireCRD(mapper, GuestbookGVK, "run make install"); err != nil {
		t.Errorf("RequireCRD(Guestbook) with the CRD installed = %v; want nil", err)
	}

	missing := schema.GroupVersionKind{Group: "webapp.controller-kit.dev", Version: "v1", Kind: "Visitor"}
	err := RequireCRD(mapper, missing, "run make install")

	if err == nil || !strings.Contains(err.Error(), "Kind=Visitor") || !strings.Contains(err.Error(), "run make install") {
		t.Errorf("RequireCRD(missing kind) = %v; want an error naming the kind and the fix", err)
	}
}

// The rename-and-invalid case, input B: a spec the schema lets through and the
// Reconciler cannot act on; then the user fixes it.
func TestGuestbookWithUnusableImageIsDegradedThenConvergesWhenFixed(t *testing.T) {
	ns := newNamespace(t)
	gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: ns}}
	gb.Spec.Frontend.Image = " registry.example/gb-frontend:v5" // the API server refuses it in a Pod
	if err := k8sClient.Create(context.Background(), gb); err != nil {
		t.Fatalf("creating Guestbook: %v", err)
	}

	expectDegradedWithoutChildren(t, ns, "shop", ReasonInvalidSpec, "spec.frontend.image")

	eventually(t, "the fixed spec", func(ctx context.Context) (bool, error) {
		gb, err := getGuestbook(ctx, ns, "shop")
		if err != nil {
			return false, err
		}
		gb.Spec.Frontend.Image = "registry.example/gb-frontend:v5"
		return true, k8sClient.Update(ctx, gb)
	})

	waitForChildren(t, ns, "shop")
	waitForCondition(t, ns, "shop", webappv1.ConditionDegraded, metav1.ConditionFalse, "AsExpected")
	if got := waitForExactlyEvents(t, ns, "Recovered", 1); len(got) != 1 {
		t.Errorf("Recovered events = %v; want exactly one", got)
	}
}

// expectDegradedWithoutChildren waits until the Guestbook is Degraded for reason,
// with a message naming field, then holds it to what a Guestbook the Reconciler
// cannot act on gets: no further write and no retry loop (expectQuiet), no
// Deployment, and exactly one Warning event of that reason naming field.
func expectDegradedWithoutChildren(t *testing.T, ns, name, reason, field string) {
	t.Helper()
	gb := waitForCondition(t, ns, name, webappv1.ConditionDegraded, metav1.ConditionTrue, reason)
	if msg := meta.FindStatusCondition(gb.Status.Conditions, webappv1.ConditionDegraded).Message; !strings.Contains(msg, field) {
		t.Errorf("Degraded message %q does not name the field %s", msg, field)
	}
	expectQuiet(t, ns, len(written.in(ns)), reconciled.get(ns), 2*time.Second)
	var deployments appsv1.DeploymentList
	if err := k8sClient.List(context.Background(), &deployments, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(deployments.Items) != 0 {
		t.Errorf("%d Deployments created for a Guestbook that is Degraded (%s); want none", len(deployments.Items), reason)
	}
	if got := recorder.in(ns, reason); len(got) != 1 || got[0].eventType != corev1.EventTypeWarning || !strings.Contains(got[0].note, field) {
		t.Errorf("%s events = %v; want exactly one Warning naming %s", reason, got, field)
	}
}

// A controller watches what it generates: the directory ConfigMap, deleted or
// edited by hand, is repaired within seconds, not at the next resync (10 h).
func TestDirectoryDeletedOrEditedByHandIsRepaired(t *testing.T) {
	ns := newNamespace(t)
	for _, name := range []string{"alpha", "beta"} {
		createGuestbook(t, ns, name)
	}
	listed := func(names ...string) func(ctx context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			for _, name := range names {
				v, ok, err := directoryEntry(ctx, ns, name)
				if err != nil || !ok || v != "http://"+name+"-frontend."+ns+".svc" {
					return false, client.IgnoreNotFound(err)
				}
			}
			return true, nil
		}
	}
	eventually(t, "both Guestbooks in the directory", listed("alpha", "beta"))
	key := types.NamespacedName{Namespace: operatorNamespace, Name: DirectoryName}

	// kubectl delete configmap guestbook-directory
	if err := k8sClient.Delete(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}); err != nil {
		t.Fatalf("deleting the directory: %v", err)
	}
	eventually(t, "the deleted directory back with both Guestbooks", listed("alpha", "beta"))

	// One entry removed by hand (a JSON patch), another entry changed by hand.
	patch := fmt.Sprintf(`[{"op":"remove","path":"/data/%s.alpha"},{"op":"replace","path":"/data/%s.beta","value":"http://elsewhere"}]`, ns, ns)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if err := k8sClient.Patch(context.Background(), cm, client.RawPatch(types.JSONPatchType, []byte(patch))); err != nil {
		t.Fatalf("editing the directory by hand: %v", err)
	}
	eventually(t, "the hand-edited entries restored", listed("alpha", "beta"))
}
