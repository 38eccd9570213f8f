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
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
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

// The server-assigned-fields case: a frontend Service switched to NodePort by
// hand gets a nodePort from the API server. Neither the type nor the nodePort is
// the Reconciler's, so it leaves both alone: reconciling five times costs no
// Service write and no Updated event, and nodePort, clusterIP and the
// resourceVersion stay as they were.
func TestGuestbookLeavesServiceSwitchedToNodePortAlone(t *testing.T) {
	ns := newNamespace(t)
	createGuestbook(t, ns, "shop")
	waitForChildren(t, ns, "shop")
	for _, child := range children("shop") {
		makeAvailable(t, ns, child)
	}
	waitForCondition(t, ns, "shop", webappv1.ConditionAvailable, metav1.ConditionTrue, "AllComponentsAvailable")
	ctx := context.Background()
	writes := len(written.in(ns))

	// kubectl patch service shop-frontend -p '{"spec":{"type":"NodePort"}}'
	key := types.NamespacedName{Namespace: ns, Name: "shop-frontend"}
	var before corev1.Service
	before.Namespace, before.Name = key.Namespace, key.Name
	if err := k8sClient.Patch(ctx, &before, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"type":"NodePort"}}`))); err != nil {
		t.Fatalf("switching the Service to NodePort: %v", err)
	}
	if before.Spec.Ports[0].NodePort == 0 || before.Spec.ClusterIP == "" {
		t.Fatalf("the API server assigned no nodePort or clusterIP: %+v", before.Spec)
	}

	// Five reconciles, each queued by an annotation on the Guestbook.
	for i := range 5 {
		reconciles := reconciled.get(ns)
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"example.com/touched":"%d"}}}`, i)
		gb := &webappv1.Guestbook{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"}}
		if err := k8sClient.Patch(ctx, gb, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatalf("annotating the Guestbook: %v", err)
		}
		eventually(t, "one more reconcile", func(context.Context) (bool, error) {
			return reconciled.get(ns) > reconciles, nil
		})
	}

	if extra := written.in(ns)[writes:]; len(extra) > 0 {
		t.Errorf("the Reconciler wrote after the Service became a NodePort: %s; want no write", strings.Join(extra, ", "))
	}
	if got := recorder.in(ns, ReasonUpdated); len(got) > 0 {
		t.Errorf("Updated events = %v; want none", got)
	}
	var after corev1.Service
	if err := k8sClient.Get(ctx, key, &after); err != nil {
		t.Fatal(err)
	}
	if after.Spec.Type != corev1.ServiceTypeNodePort || after.Spec.Ports[0].NodePort != before.Spec.Ports[0].NodePort ||
		after.Spec.ClusterIP != before.Spec.ClusterIP || after.ResourceVersion != before.ResourceVersion {
		t.Errorf("Service after the reconciles: type %s, nodePort %d, clusterIP %s, resourceVersion %s; want %s, %d, %s, %s as set by hand",
			after.Spec.Type, after.Spec.Ports[0].NodePort, after.Spec.ClusterIP, after.ResourceVersion,
			before.Spec.Type, before.Spec.Ports[0].NodePort, before.Spec.ClusterIP, before.ResourceVersion)
	}
}

// Every field the API server defaults in a child is one the setters leave as it
// is: run on a stored child (defaulted, and a Service switched to NodePort by
// hand), setDeployment and setService change nothing, so CreateOrUpdate, which
// compares the object before and after them, sends no write. The test first
// checks that the server did default the fields it names, so it cannot pass
// against objects that lack them.
func TestSettersLeaveServerDefaultedFieldsAlone(t *testing.T) {
	ns := newNamespace(t)
	createGuestbook(t, ns, "shop")
	waitForChildren(t, ns, "shop")
	ctx := context.Background()
	nodePort := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"type":"NodePort"}}`))
	if err := k8sClient.Patch(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop-frontend"}}, nodePort); err != nil {
		t.Fatalf("switching the Service to NodePort: %v", err)
	}
	gb, err := getGuestbook(ctx, ns, "shop")
	if err != nil {
		t.Fatal(err)
	}

	for _, c := range components(gb) {
		key := types.NamespacedName{Namespace: ns, Name: gb.Name + c.suffix}
		var d appsv1.Deployment
		if err := k8sClient.Get(ctx, key, &d); err != nil {
			t.Fatal(err)
		}
		pod, ct := d.Spec.Template.Spec, d.Spec.Template.Spec.Containers[0]
		defaulted := map[string]bool{
			"strategy":                      d.Spec.Strategy.RollingUpdate != nil,
			"revisionHistoryLimit":          d.Spec.RevisionHistoryLimit != nil,
			"progressDeadlineSeconds":       d.Spec.ProgressDeadlineSeconds != nil,
			"terminationGracePeriodSeconds": pod.TerminationGracePeriodSeconds != nil,
			"dnsPolicy":                     pod.DNSPolicy != "",
			"restartPolicy":                 pod.RestartPolicy != "",
			"schedulerName":                 pod.SchedulerName != "",
			"securityContext":               pod.SecurityContext != nil,
			"imagePullPolicy":               ct.ImagePullPolicy != "",
			"terminationMessagePath":        ct.TerminationMessagePath != "",
		}
		expectDefaulted(t, "Deployment "+key.Name, defaulted)
		set := d.DeepCopy()
		setDeployment(set, gb, c)
		if !equality.Semantic.DeepEqual(&d, set) {
			t.Errorf("setDeployment changes the stored Deployment %s; want it equal. Stored spec:\n%+v\nafter setDeployment:\n%+v", key.Name, d.Spec, set.Spec)
		}

		var s corev1.Service
		if err := k8sClient.Get(ctx, key, &s); err != nil {
			t.Fatal(err)
		}
		defaulted = map[string]bool{
			"clusterIP":             s.Spec.ClusterIP != "",
			"type":                  s.Spec.Type != "",
			"sessionAffinity":       s.Spec.SessionAffinity != "",
			"ipFamilies":            len(s.Spec.IPFamilies) > 0,
			"ipFamilyPolicy":        s.Spec.IPFamilyPolicy != nil,
			"internalTrafficPolicy": s.Spec.InternalTrafficPolicy != nil,
		}
		if s.Spec.Type == corev1.ServiceTypeNodePort {
			defaulted["nodePort"] = s.Spec.Ports[0].NodePort != 0
			defaulted["externalTrafficPolicy"] = s.Spec.ExternalTrafficPolicy != ""
		}
		expectDefaulted(t, "Service "+key.Name, defaulted)
		setS := s.DeepCopy()
		setService(setS, gb, c)
		if !equality.Semantic.DeepEqual(&s, setS) {
			t.Errorf("setService changes the stored Service %s; want it equal. Stored spec:\n%+v\nafter setService:\n%+v", key.Name, s.Spec, setS.Spec)
		}
	}
}

// expectDefaulted fails the test for each field of what that the API server was
// expected to fill in and did not.
func expectDefaulted(t *testing.T, what string, fields map[string]bool) {
	t.Helper()
	for _, field := range slices.Sorted(maps.Keys(fields)) {
		if !fields[field] {
			t.Errorf("%s: the API server did not fill in %s; this test relies on it", what, field)
		}
	}
}
