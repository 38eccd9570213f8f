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
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
)

// An optimistic-lock conflict on a child Deployment (the deployment controller
// wrote its status between the cache read and the update) is a quiet requeue:
// Reconcile returns no error, records no Warning event and sets no Degraded
// condition. The test runs the Reconciler on a fake client, apart from the
// suite's manager.
func TestChildUpdateConflictIsARequeueNotAFailure(t *testing.T) {
	ctx := context.Background()
	gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Namespace: "shop-ns", Name: "shop"}}
	gb.Spec.Frontend.Replicas = ptr.To[int32](1)
	gb.Spec.Redis.FollowerReplicas = ptr.To[int32](0)
	gb.Spec.Frontend.Image, gb.Spec.Redis.Image = "frontend:v1", "redis:v1"
	// The namespace must exist: the Reconciler records no event in one that is gone.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop-ns"}}
	conflicts := 0
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(ns, gb).WithStatusSubresource(gb).
		WithInterceptorFuncs(interceptor.Funcs{
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				if _, ok := obj.(*appsv1.Deployment); ok {
					conflicts++
					return apierrors.NewConflict(appsv1.Resource("deployments"), obj.GetName(), errConflictForTest)
				}
				return c.Update(ctx, obj, opts...)
			},
		}).Build()
	recorder := events.NewFakeRecorder(100)
	r := &GuestbookReconciler{Client: c, Scheme: scheme, Recorder: recorder,
		Directory: &Directory{Client: c, Reader: c, Key: types.NamespacedName{Namespace: "ops", Name: DirectoryName}}}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "shop-ns", Name: "shop"}}

	// The first pass creates the children; creates never conflict.
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatalf("first Reconcile: %v", err)
	}
	if created := drain(recorder); len(created) == 0 {
		t.Fatal("the first Reconcile recorded no event: the test could not see a Warning either")
	}
	// A new spec: the next pass updates the frontend Deployment, and conflicts.
	if err := c.Get(ctx, req.NamespacedName, gb); err != nil {
		t.Fatal(err)
	}
	gb.Spec.Frontend.Replicas = ptr.To[int32](3)
	if err := c.Update(ctx, gb); err != nil {
		t.Fatal(err)
	}

	_, err := r.Reconcile(ctx, req)

	if conflicts == 0 {
		t.Fatal("no Deployment update was attempted: the test did not cause a conflict")
	}
	if err != nil {
		t.Errorf("Reconcile returned %v after a conflict on a child; want nil (a requeue: the child's change queues the Guestbook again)", err)
	}
	if err := c.Get(ctx, req.NamespacedName, gb); err != nil {
		t.Fatal(err)
	}
	if meta.IsStatusConditionTrue(gb.Status.Conditions, webappv1.ConditionDegraded) {
		t.Errorf("the Guestbook is Degraded after a conflict on a child: %+v", meta.FindStatusCondition(gb.Status.Conditions, webappv1.ConditionDegraded))
	}
	for _, e := range drain(recorder) {
		if strings.HasPrefix(e, "Warning") {
			t.Errorf("a conflict on a child recorded the event %q; want no Warning", e)
		}
	}
}

// errConflictForTest is the cause of the conflicts the test's client returns.
var errConflictForTest = errors.New("the object has been modified; please apply your changes to the latest version and try again")

// drain returns the events recorded so far.
func drain(r *events.FakeRecorder) []string {
	var got []string
	for {
		select {
		case e := <-r.Events:
			got = append(got, e)
		default:
			return got
		}
	}
}
