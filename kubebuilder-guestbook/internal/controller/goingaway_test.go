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

// What the Reconciler owes a Guestbook that is going away, deleted itself or
// with its namespace: no new children, no events, no errors.

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
)

// holdFinalizer is the tests' own finalizer: it keeps a Guestbook in its
// deleting state after the operator has removed its finalizer.
const holdFinalizer = "controller-kit.dev/test-hold"

func TestGuestbookBeingDeletedGetsNoNewChildren(t *testing.T) {
	ns := newNamespace(t)
	createGuestbook(t, ns, "shop")
	waitForChildren(t, ns, "shop")
	waitForExactlyEvents(t, ns, ReasonCreated, 6)
	updateGuestbook(t, ns, "shop", "the hold finalizer", func(gb *webappv1.Guestbook) bool {
		// After the operator's own, so its finalizer work is done first.
		return controllerutil.ContainsFinalizer(gb, FinalizerName) && controllerutil.AddFinalizer(gb, holdFinalizer)
	})
	t.Cleanup(func() {
		updateGuestbook(t, ns, "shop", "the hold finalizer removed", func(gb *webappv1.Guestbook) bool {
			return controllerutil.RemoveFinalizer(gb, holdFinalizer)
		})
	})
	if err := k8sClient.Delete(context.Background(), &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"}}); err != nil {
		t.Fatalf("deleting the Guestbook: %v", err)
	}
	eventually(t, "the operator's finalizer work", func(ctx context.Context) (bool, error) {
		gb, err := getGuestbook(ctx, ns, "shop")
		return err == nil && !gb.DeletionTimestamp.IsZero() && !controllerutil.ContainsFinalizer(gb, FinalizerName), err
	})
	writes, reconciles, events := len(written.in(ns)), reconciled.get(ns), recorder.count(ns)

	// A child deleted while its owner is going away (the garbage collector,
	// or a person) queues the owner through Owns.
	frontend := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop-frontend"}}
	if err := k8sClient.Delete(context.Background(), frontend); err != nil {
		t.Fatalf("deleting a child: %v", err)
	}
	eventually(t, "the reconcile of the deleted child's owner", func(context.Context) (bool, error) {
		return reconciled.get(ns) > reconciles, nil
	})

	expectQuiet(t, ns, writes, reconciles, 2*time.Second)
	if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(frontend), &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("Deployment shop-frontend of a Guestbook being deleted: get = %v; want NotFound (no new child)", err)
	}
	if n := recorder.count(ns) - events; n != 0 {
		t.Errorf("%d events recorded on a Guestbook being deleted; want none", n)
	}
}

func TestGuestbookInTerminatingNamespaceStopsQuietly(t *testing.T) {
	ns := availableGuestbookInTerminatingNamespace(t)
	writes, reconciles, errs, events := len(written.in(ns)), reconciled.get(ns), failed.get(ns), recorder.count(ns)

	// Deletes are allowed: the Reconciler then tries to create the child again.
	frontend := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop-frontend"}}
	if err := k8sClient.Delete(context.Background(), frontend); err != nil {
		t.Fatalf("deleting a child: %v", err)
	}
	eventually(t, "the refused create of the deleted child", func(context.Context) (bool, error) {
		return slices.Contains(written.in(ns)[writes:], "Create Deployment shop-frontend"), nil
	})

	// The refused create is the only write, and it is not retried.
	expectQuiet(t, ns, writes+1, reconciles, 2*time.Second)
	if n := failed.get(ns) - errs; n != 0 {
		t.Errorf("Reconcile returned %d errors for a Guestbook whose namespace is terminating; want none", n)
	}
	gb, err := getGuestbook(context.Background(), ns, "shop")
	if err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(gb.Status.Conditions, webappv1.ConditionDegraded); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("Degraded = %+v in a terminating namespace; want it still False", c)
	}
	if n := recorder.count(ns) - events; n != 0 {
		t.Errorf("%d events recorded into a terminating namespace; want none", n)
	}

	// What one such reconcile logs: a single informational line.
	var lines []string
	log := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 1})
	res, err := reconciler.Reconcile(logf.IntoContext(context.Background(), log),
		ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "shop"}})
	if err != nil || res != (ctrl.Result{}) {
		t.Errorf("Reconcile in a terminating namespace = %+v, %v; want no requeue and no error", res, err)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "terminating") || strings.Contains(lines[0], `"error"`) {
		t.Errorf("log lines = %q; want exactly one, informational, saying the namespace is terminating", lines)
	}
}

func TestGuestbookInTerminatingNamespaceRecordsNoEvents(t *testing.T) {
	ns := availableGuestbookInTerminatingNamespace(t)
	events := recorder.count(ns)

	// As the namespace empties, Pods go first: a component becomes unavailable.
	// The status still changes (updates are allowed), but an Unavailable event
	// would be refused, and logged as an error by client-go's recorder.
	eventually(t, "Deployment shop-redis-follower unavailable", func(ctx context.Context) (bool, error) {
		var d appsv1.Deployment
		if err := k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "shop-redis-follower"}, &d); err != nil {
			return false, err
		}
		d.Status.AvailableReplicas, d.Status.ReadyReplicas = 0, 0
		return true, k8sClient.Status().Update(ctx, &d)
	})
	waitForCondition(t, ns, "shop", webappv1.ConditionAvailable, metav1.ConditionFalse, "ComponentsUnavailable")
	expectQuiet(t, ns, len(written.in(ns)), reconciled.get(ns), time.Second)
	if n := recorder.count(ns) - events; n != 0 {
		t.Errorf("%d events recorded into a terminating namespace; want none", n)
	}
}

// availableGuestbookInTerminatingNamespace makes a new namespace with a Guestbook
// "shop" that is Available (with its one Available event), deletes the namespace
// and returns its name once it is Terminating. envtest runs no namespace
// controller: the namespace stays Terminating with everything in it, and the API
// server refuses every create there.
func availableGuestbookInTerminatingNamespace(t *testing.T) string {
	t.Helper()
	ns := newNamespace(t)
	createGuestbook(t, ns, "shop")
	waitForChildren(t, ns, "shop")
	for _, child := range children("shop") {
		makeAvailable(t, ns, child)
	}
	waitForCondition(t, ns, "shop", webappv1.ConditionAvailable, metav1.ConditionTrue, "AllComponentsAvailable")
	waitForExactlyEvents(t, ns, ReasonAvailable, 1)
	if err := k8sClient.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatalf("deleting the namespace: %v", err)
	}
	eventually(t, "the namespace to be Terminating", func(ctx context.Context) (bool, error) {
		var n corev1.Namespace
		err := k8sClient.Get(ctx, types.NamespacedName{Name: ns}, &n)
		return n.Status.Phase == corev1.NamespaceTerminating, err
	})
	return ns
}

// updateGuestbook reads the Guestbook, lets change modify it, and writes it back,
// again until the write succeeds; change returns false while the Guestbook is not
// yet ready for it (nothing is written then).
func updateGuestbook(t *testing.T, namespace, name, what string, change func(*webappv1.Guestbook) bool) {
	t.Helper()
	eventually(t, what, func(ctx context.Context) (bool, error) {
		gb, err := getGuestbook(ctx, namespace, name)
		if err != nil || !change(gb) {
			return false, client.IgnoreNotFound(err)
		}
		return true, k8sClient.Update(ctx, gb)
	})
}
