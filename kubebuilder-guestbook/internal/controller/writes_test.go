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
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// How the suite sees the Reconciler's writes: the manager's client is wrapped by
// controller-runtime's interceptor package (see NewClient in suite_test.go), and
// recordWrites notes each write in a writeLog before sending it on.

// writeLog keeps, per namespace, every write a client sent to the API server, as
// "<verb> <kind> <name>": "Update Deployment shop-frontend", "Patch Guestbook
// shop/status" (a subresource write names the subresource after a slash),
// "DeleteAllOf ConfigMap" (no name). A cluster-scoped write is kept under "".
type writeLog struct {
	mu     sync.Mutex
	writes map[string][]string
}

func (l *writeLog) add(namespace, verb, kind, name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.writes == nil {
		l.writes = map[string][]string{}
	}
	l.writes[namespace] = append(l.writes[namespace], strings.TrimSpace(verb+" "+kind+" "+name))
}

// in returns the writes made in namespace so far, oldest first.
func (l *writeLog) in(namespace string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.writes[namespace])
}

// recordWrites returns the interceptor functions that add every write a client
// makes to log and then send it on unchanged. Every verb that changes something
// on the API server is there: Create, Update, Patch (a JSON, merge or apply
// patch), Delete, DeleteAllOf, Apply (server-side apply), and their subresource
// forms (Status().Update and the like). Reads (Get, List, Watch) pass through.
func recordWrites(log *writeLog) interceptor.Funcs {
	// record adds one write of obj, or of its subresource when there is one.
	record := func(c client.Client, verb string, obj client.Object, subResource string) {
		name := obj.GetName()
		if subResource != "" {
			name += "/" + subResource
		}
		log.add(obj.GetNamespace(), verb, kindName(c, obj), name)
	}
	// recordApply adds one server-side apply: its namespace, kind and name are
	// in the apply configuration instead of an object.
	recordApply := func(obj runtime.ApplyConfiguration, subResource string) {
		namespace, kind, name := appliedObject(obj)
		if subResource != "" {
			name += "/" + subResource
		}
		log.add(namespace, "Apply", kind, name)
	}
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			record(c, "Create", obj, "")
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			record(c, "Update", obj, "")
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			record(c, "Patch", obj, "")
			return c.Patch(ctx, obj, patch, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			record(c, "Delete", obj, "")
			return c.Delete(ctx, obj, opts...)
		},
		DeleteAllOf: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
			// The namespace is an option (client.InNamespace), not obj's.
			namespace := (&client.DeleteAllOfOptions{}).ApplyOptions(opts).Namespace
			log.add(namespace, "DeleteAllOf", kindName(c, obj), "")
			return c.DeleteAllOf(ctx, obj, opts...)
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			recordApply(obj, "")
			return c.Apply(ctx, obj, opts...)
		},
		SubResourceCreate: func(ctx context.Context, c client.Client, subResource string, obj, body client.Object, opts ...client.SubResourceCreateOption) error {
			record(c, "Create", obj, subResource)
			return c.SubResource(subResource).Create(ctx, obj, body, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, subResource string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			record(c, "Update", obj, subResource)
			return c.SubResource(subResource).Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, subResource string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			record(c, "Patch", obj, subResource)
			return c.SubResource(subResource).Patch(ctx, obj, patch, opts...)
		},
		SubResourceApply: func(ctx context.Context, c client.Client, subResource string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			recordApply(obj, subResource)
			return c.SubResource(subResource).Apply(ctx, obj, opts...)
		},
	}
}

// kindName returns obj's kind as the client's scheme knows it (typed objects
// read from the cache carry no TypeMeta), or its Go type if the scheme does not.
func kindName(c client.Client, obj runtime.Object) string {
	if gvk, err := c.GroupVersionKindFor(obj); err == nil {
		return gvk.Kind
	}
	return fmt.Sprintf("%T", obj)
}

// appliedObject returns the namespace, kind and name of what a server-side apply
// writes. A typed apply configuration (corev1ac.ConfigMap(name, namespace), ...)
// holds them as pointers; client.ApplyConfigurationFromUnstructured wraps an
// object that holds them as strings.
func appliedObject(obj runtime.ApplyConfiguration) (namespace, kind, name string) {
	switch o := obj.(type) {
	case interface {
		GetNamespace() *string
		GetKind() *string
		GetName() *string
	}:
		return ptr.Deref(o.GetNamespace(), ""), ptr.Deref(o.GetKind(), ""), ptr.Deref(o.GetName(), "")
	case client.Object:
		return o.GetNamespace(), o.GetObjectKind().GroupVersionKind().Kind, o.GetName()
	}
	return "", fmt.Sprintf("%T", obj), ""
}

// The log must see every way a client can write, in the namespace written to:
// a write it missed would let a Reconciler that writes at steady state pass
// TestGuestbookAtSteadyStateMakesNoWrites.
func TestWriteLogRecordsEveryWriteInItsNamespace(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	base, err := client.NewWithWatch(restConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	log := &writeLog{}
	c := interceptor.NewClient(base, recordWrites(log))
	owner := client.FieldOwner("write-log-test") // server-side apply needs a field manager
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	// Writes to an object.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"}}
	must("Create", c.Create(ctx, cm))
	cm.Data = map[string]string{"k": "v"}
	must("Update", c.Update(ctx, cm))
	must("Patch", c.Patch(ctx, cm, client.RawPatch(types.MergePatchType, []byte(`{"data":{"k":"w"}}`))))
	must("Apply", c.Apply(ctx, corev1ac.ConfigMap("applied", ns).WithData(map[string]string{"k": "v"}), owner))
	must("Delete", c.Delete(ctx, cm))
	must("DeleteAllOf", c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(ns)))

	// Writes to a subresource: status, then a Pod's eviction (which creates).
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example/web:v1"}}},
			},
		},
	}
	must("Create", c.Create(ctx, d))
	d.Status.ObservedGeneration = d.Generation
	must("Status().Update", c.Status().Update(ctx, d))
	must("Status().Patch", c.Status().Patch(ctx, d, client.RawPatch(types.MergePatchType, []byte(`{"status":{"replicas":1}}`))))
	must("Status().Apply", c.Status().Apply(ctx,
		appsv1ac.Deployment("web", ns).WithStatus(appsv1ac.DeploymentStatus().WithCollisionCount(1)), owner))
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "evicted"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example/web:v1"}}},
	}
	must("Create", c.Create(ctx, pod))
	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "evicted"}}
	must("SubResource(eviction).Create", c.SubResource("eviction").Create(ctx, pod, eviction))

	want := []string{
		"Create ConfigMap plain",
		"Update ConfigMap plain",
		"Patch ConfigMap plain",
		"Apply ConfigMap applied",
		"Delete ConfigMap plain",
		"DeleteAllOf ConfigMap",
		"Create Deployment web",
		"Update Deployment web/status",
		"Patch Deployment web/status",
		"Apply Deployment web/status",
		"Create Pod evicted",
		"Create Pod evicted/eviction",
	}
	if got := log.in(ns); !slices.Equal(got, want) {
		t.Errorf("writes in the namespace:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if got := log.in(""); len(got) != 0 {
		t.Errorf("writes recorded without a namespace: %q; want none", got)
	}
}
