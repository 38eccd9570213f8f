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

// Three field cases: the directory kept true against the Guestbooks that exist
// (state-outlives-object.md), a child's own failure reported
// (child-failure-surfaces.md), and the child of a deleted Guestbook of the same
// name waited for, not reported as a conflict.

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
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
)

// setEntry writes one directory entry by hand, as a person (or an operator
// before a crash) would: kubectl patch configmap guestbook-directory ...
func setEntry(t *testing.T, key, value string) {
	t.Helper()
	patch := fmt.Sprintf(`{"data":{%q:%q}}`, key, value)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: DirectoryName}}
	if err := k8sClient.Patch(context.Background(), cm, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("writing the directory entry %s by hand: %v", key, err)
	}
}

// An entry whose Guestbook no longer exists (it went without its finalizer)
// is dropped, while the entries of Guestbooks that exist stay.
func TestDirectoryEntryOfAGuestbookThatIsGoneIsDropped(t *testing.T) {
	ns := newNamespace(t)
	createGuestbook(t, ns, "shop")
	eventually(t, "the directory entry of shop", func(ctx context.Context) (bool, error) {
		_, ok, err := directoryEntry(ctx, ns, "shop")
		return ok, client.IgnoreNotFound(err)
	})

	// What a Guestbook deleted without its finalizer leaves behind.
	setEntry(t, ns+".ghost", "http://ghost-frontend."+ns+".svc")

	eventually(t, "the entry of Guestbook ghost, which does not exist, dropped", func(ctx context.Context) (bool, error) {
		_, ok, err := directoryEntry(ctx, ns, "ghost")
		return !ok, err
	})
	if _, ok, err := directoryEntry(context.Background(), ns, "shop"); !ok || err != nil {
		t.Errorf("the entry of Guestbook shop, which exists, is gone too (err %v)", err)
	}
}

// A finalizer removed from a Guestbook that lives (kubectl replace with a
// manifest that has none, a patch) is put back: the removal is an update, and
// the reconcile it queues adds the finalizer again before anything else.
func TestFinalizerRemovedFromALivingGuestbookIsPutBack(t *testing.T) {
	ns := newNamespace(t)
	createGuestbook(t, ns, "shop")
	eventually(t, "the finalizer on shop", func(ctx context.Context) (bool, error) {
		gb, err := getGuestbook(ctx, ns, "shop")
		return err == nil && controllerutil.ContainsFinalizer(gb, FinalizerName), err
	})
	gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"}}
	if err := k8sClient.Patch(context.Background(), gb, client.RawPatch(types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/finalizers"}]`))); err != nil {
		t.Fatalf("removing the finalizer by hand: %v", err)
	}
	eventually(t, "the finalizer put back on shop", func(ctx context.Context) (bool, error) {
		gb, err := getGuestbook(ctx, ns, "shop")
		return err == nil && controllerutil.ContainsFinalizer(gb, FinalizerName), err
	})
}

// At the operator's start the informer lists the directory ConfigMap, which
// reaches Repairs as a create: each entry whose Guestbook does not exist queues
// that Guestbook's key, and nothing else is queued; the reconcile of a key whose
// Guestbook is gone removes its entry. Together: an entry left by a Guestbook
// deleted while the operator was away is dropped as soon as it starts.
func TestDirectoryAtStartQueuesAndDropsTheEntriesOfGuestbooksThatAreGone(t *testing.T) {
	ns := newNamespace(t)
	createGuestbook(t, ns, "shop")
	eventually(t, "the directory entry of shop", func(ctx context.Context) (bool, error) {
		_, ok, err := directoryEntry(ctx, ns, "shop")
		return ok, client.IgnoreNotFound(err)
	})

	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: DirectoryName},
		Data: map[string]string{
			ns + ".shop":  "http://shop-frontend." + ns + ".svc",
			ns + ".ghost": "http://ghost-frontend." + ns + ".svc",
			"no-dot":      "not an entry the operator writes",
		},
	}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	reconciler.Directory.Repairs(k8sClient).Create(context.Background(), ctrlevent.CreateEvent{Object: cm}, q)
	ghost := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "ghost"}}
	if q.Len() != 1 {
		t.Fatalf("the directory's create queued %d keys; want 1, the Guestbook that is gone (%s)", q.Len(), ghost)
	}
	if got, _ := q.Get(); got != ghost {
		t.Fatalf("the directory's create queued %s; want %s, the Guestbook that is gone", got, ghost)
	}

	setEntry(t, ns+".ghost", "http://ghost-frontend."+ns+".svc")
	eventually(t, "the reconcile of ghost, which is gone, to drop its entry", func(ctx context.Context) (bool, error) {
		if _, err := reconciler.Reconcile(ctx, ctrl.Request{NamespacedName: ghost.NamespacedName}); err != nil {
			return false, err
		}
		_, ok, err := directoryEntry(ctx, ns, "ghost")
		return !ok, err
	})
}

// A Deployment that has given up (Progressing False, ProgressDeadlineExceeded;
// ReplicaFailure True, a quota) is not "rolling out": the Guestbook is Degraded
// with reason ChildFailed, naming the Deployment and the cause, one Warning
// event says so, and when the Deployment recovers the Guestbook does, with one
// Recovered event. Its Available condition still follows the counts: the old
// Pod keeps serving.
func TestFailedChildIsReportedAndItsRecoveryToo(t *testing.T) {
	ns := newNamespace(t)
	createGuestbook(t, ns, "pd-gb")
	waitForChildren(t, ns, "pd-gb")
	for _, child := range children("pd-gb") {
		makeAvailable(t, ns, child)
	}
	waitForCondition(t, ns, "pd-gb", webappv1.ConditionAvailable, metav1.ConditionTrue, "AllComponentsAvailable")

	quota := `pods "pd-gb-frontend-7c9f-x" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=2, limited: pods=2`
	setDeploymentConditions(t, ns, "pd-gb-frontend",
		appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
			Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "pd-gb-frontend-7c9f" has timed out progressing.`},
		appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue,
			Reason: "FailedCreate", Message: quota})

	gb := waitForCondition(t, ns, "pd-gb", webappv1.ConditionDegraded, metav1.ConditionTrue, "ChildFailed")
	msg := meta.FindStatusCondition(gb.Status.Conditions, webappv1.ConditionDegraded).Message
	for _, want := range []string{"Deployment pd-gb-frontend", "ProgressDeadlineExceeded", "has timed out progressing", "exceeded quota"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Degraded message %q does not say %q", msg, want)
		}
	}
	if p := meta.FindStatusCondition(gb.Status.Conditions, webappv1.ConditionProgressing); p.Status != metav1.ConditionFalse {
		t.Errorf("Progressing = %s (%s: %s) while the frontend has given up; want False", p.Status, p.Reason, p.Message)
	}
	if !meta.IsStatusConditionTrue(gb.Status.Conditions, webappv1.ConditionAvailable) {
		t.Errorf("Available is not True while every old Pod still serves: %+v", meta.FindStatusCondition(gb.Status.Conditions, webappv1.ConditionAvailable))
	}
	warnings := waitForExactlyEvents(t, ns, "ChildFailed", 1)
	if w := warnings[0]; w.eventType != corev1.EventTypeWarning || w.name != "pd-gb" || !strings.Contains(w.note, "Deployment pd-gb-frontend") {
		t.Errorf("ChildFailed event = %+v; want a Warning on Guestbook pd-gb naming Deployment pd-gb-frontend", w)
	}
	expectQuiet(t, ns, len(written.in(ns)), reconciled.get(ns), time.Second)

	// The quota goes; the new ReplicaSet makes its Pod.
	setDeploymentConditions(t, ns, "pd-gb-frontend",
		appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue,
			Reason: "NewReplicaSetAvailable", Message: `ReplicaSet "pd-gb-frontend-7c9f" has successfully progressed.`})
	waitForCondition(t, ns, "pd-gb", webappv1.ConditionDegraded, metav1.ConditionFalse, "AsExpected")
	waitForCondition(t, ns, "pd-gb", webappv1.ConditionProgressing, metav1.ConditionFalse, "RolloutComplete")
	waitForExactlyEvents(t, ns, ReasonRecovered, 1)
	waitForExactlyEvents(t, ns, "ChildFailed", 1)
}

// setDeploymentConditions plays the Deployment controller: the Deployment's
// status, all replicas available, with exactly these conditions.
func setDeploymentConditions(t *testing.T, namespace, name string, conditions ...appsv1.DeploymentCondition) {
	t.Helper()
	eventually(t, "Deployment "+name+" conditions set", func(ctx context.Context) (bool, error) {
		var d appsv1.Deployment
		if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &d); err != nil {
			return false, err
		}
		d.Status.Conditions = conditions
		return true, k8sClient.Status().Update(ctx, &d)
	})
}

// The Guestbook deleted and created again under its name while its old children
// are still there (no garbage collector runs in envtest, so this test plays it,
// and a finalizer of its own holds the old frontend Deployment): the new
// Guestbook waits for them, Progressing with reason ChildGoingAway, with no
// ChildConflict, no Degraded and no Warning, and then creates its own.
func TestChildOfADeletedGuestbookOfTheSameNameIsWaitedForNotAConflict(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	old := createGuestbook(t, ns, "shop")
	waitForChildren(t, ns, "shop")
	frontend := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop-frontend"}}
	eventually(t, "the hold finalizer on Deployment shop-frontend", func(ctx context.Context) (bool, error) {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(frontend), frontend); err != nil {
			return false, err
		}
		controllerutil.AddFinalizer(frontend, holdFinalizer)
		return true, k8sClient.Update(ctx, frontend)
	})
	t.Cleanup(func() { releaseHold(t, frontend) })

	// kubectl replace --force -f shop.yaml: delete, then create under the same name.
	if err := k8sClient.Delete(ctx, old); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the old Guestbook to be gone", func(ctx context.Context) (bool, error) {
		_, err := getGuestbook(ctx, ns, "shop")
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	gb := createGuestbook(t, ns, "shop")

	// Every old child is still there, its owner the old UID.
	waiting := waitForCondition(t, ns, "shop", webappv1.ConditionProgressing, metav1.ConditionTrue, "ChildGoingAway")
	if msg := meta.FindStatusCondition(waiting.Status.Conditions, webappv1.ConditionProgressing).Message; !strings.Contains(msg, "Deployment shop-redis-leader") || !strings.Contains(msg, string(old.UID)) {
		t.Errorf("Progressing message %q does not name Deployment shop-redis-leader and its owner, the old Guestbook (uid %s)", msg, old.UID)
	}

	// The garbage collector deletes the old children; the frontend Deployment
	// is held by its finalizer, deletionTimestamp set.
	for _, name := range children("shop") {
		for _, obj := range []client.Object{
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
		} {
			if err := k8sClient.Delete(ctx, obj, client.Preconditions{UID: ptrUID(ownedBy(t, obj, old.UID))}); err != nil {
				t.Fatalf("deleting the old %T %s: %v", obj, name, err)
			}
		}
	}
	waiting = waitForCondition(t, ns, "shop", webappv1.ConditionProgressing, metav1.ConditionTrue, "ChildGoingAway")
	eventually(t, "the wait to be on the frontend, being deleted", func(ctx context.Context) (bool, error) {
		gb, err := getGuestbook(ctx, ns, "shop")
		if err != nil {
			return false, err
		}
		p := meta.FindStatusCondition(gb.Status.Conditions, webappv1.ConditionProgressing)
		return p != nil && strings.Contains(p.Message, "Deployment shop-frontend") && strings.Contains(p.Message, "being deleted"), nil
	})

	releaseHold(t, frontend)
	eventually(t, "children controlled by the new Guestbook", func(ctx context.Context) (bool, error) {
		for _, name := range children("shop") {
			var d appsv1.Deployment
			if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &d); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			if !metav1.IsControlledBy(&d, gb) {
				return false, nil
			}
		}
		return true, nil
	})
	for _, child := range children("shop") {
		makeAvailable(t, ns, child)
	}
	waitForCondition(t, ns, "shop", webappv1.ConditionAvailable, metav1.ConditionTrue, "AllComponentsAvailable")
	if got := recorder.in(ns, ReasonChildConflict); len(got) != 0 {
		t.Errorf("ChildConflict events for the children of a deleted Guestbook of the same name: %v; want none", got)
	}
	recorder.mu.Lock()
	defer recorder.mu.Unlock()
	for _, e := range recorder.events {
		if e.namespace == ns && e.eventType == corev1.EventTypeWarning {
			t.Errorf("Warning event %s %q while waiting for the old children; want none", e.reason, e.note)
		}
	}
}

// ownedBy reads obj and fails the test unless its controller is the Guestbook
// with uid; it returns obj's own UID.
func ownedBy(t *testing.T, obj client.Object, uid types.UID) types.UID {
	t.Helper()
	if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(obj); ref == nil || ref.UID != uid {
		t.Fatalf("%T %s: controller %+v; want the old Guestbook (uid %s)", obj, obj.GetName(), ref, uid)
	}
	return obj.GetUID()
}

func ptrUID(uid types.UID) *types.UID { return &uid }

// releaseHold removes the tests' finalizer from the Deployment, if it is still there.
func releaseHold(t *testing.T, d *appsv1.Deployment) {
	t.Helper()
	eventually(t, "the hold finalizer removed from "+d.Name, func(ctx context.Context) (bool, error) {
		var now appsv1.Deployment
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(d), &now); err != nil || now.UID != d.UID {
			return true, client.IgnoreNotFound(err)
		}
		if !controllerutil.RemoveFinalizer(&now, holdFinalizer) {
			return true, nil
		}
		return true, k8sClient.Update(ctx, &now)
	})
}
