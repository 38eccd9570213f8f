package controller

import (
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	appslisters "k8s.io/client-go/listers/apps/v1"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/utils/ptr"

	samplev1alpha1 "github.com/controller-kit/controller-kit/sample-controller/pkg/apis/samplecontroller/v1alpha1"
	foofake "github.com/controller-kit/controller-kit/sample-controller/pkg/generated/clientset/versioned/fake"
	foolisters "github.com/controller-kit/controller-kit/sample-controller/pkg/generated/listers/samplecontroller/v1alpha1"
)

// These tests drive FooReconciler.Reconcile directly, with the listers filled by
// hand (standing in for the informers' caches) and the generated fake
// clientsets recording every API call. Each test asserts the exact writes.

// fixture is one Reconcile's world: the cached objects and the fake clients.
type fixture struct {
	t           *testing.T
	foos        []*samplev1alpha1.Foo
	deployments []*appsv1.Deployment
	// createErr, when set, is what the API server answers to a Deployment create.
	createErr error
	// foosDeleted, when set, leaves the Foos out of the API server (the fake
	// clientset) while the cache still has them: deleted while reconciled.
	foosDeleted bool

	kubeClient *kubefake.Clientset
	fooClient  *foofake.Clientset
	recorder   *record.FakeRecorder
}

func newFixture(t *testing.T) *fixture {
	return &fixture{t: t}
}

// reconcile runs one Reconcile for foo's key and returns its error.
func (f *fixture) reconcile(key cache.ObjectName) error {
	f.t.Helper()
	var kubeObjects, fooObjects []runtime.Object
	fooIndexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	deploymentIndexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, foo := range f.foos {
		if !f.foosDeleted {
			fooObjects = append(fooObjects, foo)
		}
		if err := fooIndexer.Add(foo); err != nil {
			f.t.Fatal(err)
		}
	}
	for _, d := range f.deployments {
		kubeObjects = append(kubeObjects, d)
		if err := deploymentIndexer.Add(d); err != nil {
			f.t.Fatal(err)
		}
	}
	f.kubeClient = kubefake.NewClientset(kubeObjects...)
	f.fooClient = foofake.NewSimpleClientset(fooObjects...)
	f.recorder = record.NewFakeRecorder(10)
	if f.createErr != nil {
		f.kubeClient.PrependReactor("create", "deployments", func(core.Action) (bool, runtime.Object, error) {
			return true, nil, f.createErr
		})
	}

	r := &FooReconciler{
		KubeClient:  f.kubeClient,
		FooClient:   f.fooClient,
		Foos:        foolisters.NewFooLister(fooIndexer),
		Deployments: appslisters.NewDeploymentLister(deploymentIndexer),
		Recorder:    f.recorder,
	}
	_, ctx := ktesting.NewTestContext(f.t)
	return r.Reconcile(ctx, key)
}

// writes returns the API calls that changed something, as "verb resource[/subresource]".
func writes(actions []core.Action) []string {
	var out []string
	for _, a := range actions {
		if a.GetVerb() == "get" || a.GetVerb() == "list" || a.GetVerb() == "watch" {
			continue
		}
		s := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			s += "/" + a.GetSubresource()
		}
		out = append(out, s)
	}
	return out
}

// events drains the recorded events ("Type Reason Message").
func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func assertWrites(t *testing.T, who string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("%s writes: got %q, want %q", who, got, want)
	}
}

func newFoo(name string, replicas *int32) *samplev1alpha1.Foo {
	return &samplev1alpha1.Foo{
		TypeMeta:   metav1.TypeMeta{APIVersion: samplev1alpha1.SchemeGroupVersion.String(), Kind: "Foo"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, UID: types.UID(name + "-uid"), Generation: 1},
		Spec:       samplev1alpha1.FooSpec{DeploymentName: name + "-deployment", Replicas: replicas},
	}
}

// ownedDeployment is the Deployment the controller would have made for foo,
// with the given number of available replicas.
func ownedDeployment(foo *samplev1alpha1.Foo, available int32) *appsv1.Deployment {
	d := newDeployment(foo)
	d.Status.AvailableReplicas = available
	return d
}

func key(foo *samplev1alpha1.Foo) cache.ObjectName {
	return cache.MetaObjectToName(foo)
}

func TestReconcileCreatesOwnedDeployment(t *testing.T) {
	f := newFixture(t)
	foo := newFoo("test", ptr.To[int32](3))
	f.foos = append(f.foos, foo)

	if err := f.reconcile(key(foo)); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}

	// The fake returns the created Deployment without status, so the status
	// write records observedGeneration with 0 available replicas.
	assertWrites(t, "kube", writes(f.kubeClient.Actions()), "create deployments")
	assertWrites(t, "foo", writes(f.fooClient.Actions()), "update foos/status")

	created := f.kubeClient.Actions()[0].(core.CreateAction).GetObject().(*appsv1.Deployment)
	if created.Name != "test-deployment" || *created.Spec.Replicas != 3 {
		t.Errorf("created Deployment %s with %d replicas, want test-deployment with 3", created.Name, *created.Spec.Replicas)
	}
	ref := metav1.GetControllerOf(created)
	if ref == nil || ref.UID != foo.UID || ref.Kind != "Foo" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("created Deployment's controller reference = %+v, want Foo %s with blockOwnerDeletion", ref, foo.UID)
	}
	if got := f.events(); len(got) != 1 || !strings.HasPrefix(got[0], "Normal DeploymentCreated") {
		t.Errorf("events = %q, want one Normal DeploymentCreated", got)
	}
}

func TestReconcileWritesNothingWhenUpToDate(t *testing.T) {
	f := newFixture(t)
	foo := newFoo("test", ptr.To[int32](2))
	foo.Status = samplev1alpha1.FooStatus{AvailableReplicas: 2, ObservedGeneration: 1}
	f.foos = append(f.foos, foo)
	f.deployments = append(f.deployments, ownedDeployment(foo, 2))

	if err := f.reconcile(key(foo)); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}

	assertWrites(t, "kube", writes(f.kubeClient.Actions()))
	assertWrites(t, "foo", writes(f.fooClient.Actions()))
	if got := f.events(); len(got) != 0 {
		t.Errorf("events = %q, want none (no \"Synced\" event on a pass that changed nothing)", got)
	}
}

func TestReconcileUpdatesReplicasOnDrift(t *testing.T) {
	f := newFixture(t)
	foo := newFoo("test", ptr.To[int32](2))
	foo.Status = samplev1alpha1.FooStatus{AvailableReplicas: 5, ObservedGeneration: 1}
	drifted := ownedDeployment(foo, 5)
	drifted.Spec.Replicas = ptr.To[int32](5) // someone ran kubectl scale
	f.foos = append(f.foos, foo)
	f.deployments = append(f.deployments, drifted)

	if err := f.reconcile(key(foo)); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}

	assertWrites(t, "kube", writes(f.kubeClient.Actions()), "update deployments")
	assertWrites(t, "foo", writes(f.fooClient.Actions()))
	updated := f.kubeClient.Actions()[0].(core.UpdateAction).GetObject().(*appsv1.Deployment)
	if *updated.Spec.Replicas != 2 {
		t.Errorf("updated Deployment to %d replicas, want 2", *updated.Spec.Replicas)
	}
	if *drifted.Spec.Replicas != 5 {
		t.Errorf("the cached Deployment was modified (replicas now %d): Reconcile must change a copy", *drifted.Spec.Replicas)
	}
	if got := f.events(); len(got) != 1 || !strings.HasPrefix(got[0], "Normal DeploymentScaled") {
		t.Errorf("events = %q, want one Normal DeploymentScaled", got)
	}
}

// TestReconcileRefusesForeignDeployment covers a Deployment with the Foo's
// deploymentName that the Foo does not control: one that was never ours, and one
// whose owner reference was removed after the Foo had reported its Pods. Either
// way the Deployment is left untouched, one Warning names it, and the status
// stops claiming its Pods. No error: DeploymentNameIndex queues the Foo again
// when that Deployment changes, so a retry would only repeat the warning.
func TestReconcileRefusesForeignDeployment(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     samplev1alpha1.FooStatus
		wantStatus bool
	}{
		{name: "never ours", wantStatus: true},
		{name: "lost its owner reference", status: samplev1alpha1.FooStatus{AvailableReplicas: 1, ObservedGeneration: 1}, wantStatus: true},
		{name: "conflict already reported", status: samplev1alpha1.FooStatus{ObservedGeneration: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			foo := newFoo("test", ptr.To[int32](1))
			foo.Status = tc.status
			foreign := ownedDeployment(foo, 1)
			foreign.OwnerReferences = nil
			foreign.Spec.Replicas = ptr.To[int32](7)
			f.foos = append(f.foos, foo)
			f.deployments = append(f.deployments, foreign)

			if err := f.reconcile(key(foo)); err != nil {
				t.Fatalf("Reconcile returned %v, want nil: a retry cannot resolve a name conflict", err)
			}

			assertWrites(t, "kube", writes(f.kubeClient.Actions()))
			if tc.wantStatus {
				assertWrites(t, "foo", writes(f.fooClient.Actions()), "update foos/status")
				updated := f.fooClient.Actions()[0].(core.UpdateAction).GetObject().(*samplev1alpha1.Foo)
				if want := (samplev1alpha1.FooStatus{ObservedGeneration: 1}); updated.Status != want {
					t.Errorf("status = %+v, want %+v (no available replicas: the Deployment is not this Foo's)", updated.Status, want)
				}
			} else {
				assertWrites(t, "foo", writes(f.fooClient.Actions()))
			}
			got := f.events()
			if len(got) != 1 || !strings.HasPrefix(got[0], "Warning ErrResourceExists") || !strings.Contains(got[0], "test-deployment") {
				t.Errorf("events = %q, want one Warning ErrResourceExists naming test-deployment", got)
			}
		})
	}
}

// TestReconcileWaitsForTheDeploymentOfADeletedFooOfTheSameName: the Foo was
// deleted and created again under its name (kubectl replace --force) while its
// old Deployment is still there: not yet collected (its controller the old
// Foo's UID), or being deleted and held by a finalizer. That Deployment is not
// a stranger's: no Warning, no write to it, a status that claims none of its
// Pods, no error. A Deployment that is being deleted is waited for whoever
// owns it. One of another Foo, or of none, stays a conflict.
func TestReconcileWaitsForTheDeploymentOfADeletedFooOfTheSameName(t *testing.T) {
	for _, tc := range []struct {
		name     string
		change   func(old *appsv1.Deployment)
		conflict bool
	}{
		{name: "not yet collected", change: func(*appsv1.Deployment) {}},
		{name: "being deleted, held by a finalizer", change: func(d *appsv1.Deployment) {
			d.DeletionTimestamp = &metav1.Time{Time: time.Now()}
			d.Finalizers = []string{"example.com/hold"}
		}},
		{name: "being deleted, no owner", change: func(d *appsv1.Deployment) {
			d.OwnerReferences = nil
			d.DeletionTimestamp = &metav1.Time{Time: time.Now()}
			d.Finalizers = []string{"example.com/hold"}
		}},
		{name: "of another Foo", conflict: true, change: func(d *appsv1.Deployment) {
			d.OwnerReferences[0].Name = "other"
		}},
		{name: "also owned by something else", conflict: true, change: func(d *appsv1.Deployment) {
			d.OwnerReferences = append(d.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "keep", UID: "keep-uid"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			foo := newFoo("test", ptr.To[int32](1))
			previous := newFoo("test", ptr.To[int32](1))
			previous.UID = "previous-uid"
			old := ownedDeployment(previous, 1)
			tc.change(old)
			f.foos = append(f.foos, foo)
			f.deployments = append(f.deployments, old)

			if err := f.reconcile(key(foo)); err != nil {
				t.Fatalf("Reconcile returned %v, want nil", err)
			}

			assertWrites(t, "kube", writes(f.kubeClient.Actions()))
			assertWrites(t, "foo", writes(f.fooClient.Actions()), "update foos/status")
			updated := f.fooClient.Actions()[0].(core.UpdateAction).GetObject().(*samplev1alpha1.Foo)
			if want := (samplev1alpha1.FooStatus{ObservedGeneration: 1}); updated.Status != want {
				t.Errorf("status = %+v, want %+v (no available replicas: the Deployment is not this Foo's)", updated.Status, want)
			}
			got := f.events()
			switch {
			case tc.conflict && (len(got) != 1 || !strings.HasPrefix(got[0], "Warning ErrResourceExists")):
				t.Errorf("events = %q, want one Warning ErrResourceExists: the Deployment is not going away", got)
			case !tc.conflict && len(got) != 0:
				t.Errorf("events = %q, want none: the Deployment is going away, which is no conflict", got)
			}
		})
	}
}

// TestReconcileLeavesAFooBeingDeletedAlone: a Foo with deletionTimestamp set
// (a foreground deletion, with the garbage collector deleting its Deployment)
// gets no Deployment, no status write and no event.
func TestReconcileLeavesAFooBeingDeletedAlone(t *testing.T) {
	for _, tc := range []struct {
		name       string
		deployment bool
	}{
		{name: "Deployment already collected"},
		{name: "Deployment still there, drifted", deployment: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			foo := newFoo("test", ptr.To[int32](2))
			foo.DeletionTimestamp = &metav1.Time{Time: time.Now()}
			foo.Finalizers = []string{metav1.FinalizerDeleteDependents}
			f.foos = append(f.foos, foo)
			if tc.deployment {
				d := ownedDeployment(foo, 2)
				d.Spec.Replicas = ptr.To[int32](5)
				f.deployments = append(f.deployments, d)
			}

			if err := f.reconcile(key(foo)); err != nil {
				t.Fatalf("Reconcile returned %v, want nil", err)
			}

			assertWrites(t, "kube", writes(f.kubeClient.Actions()))
			assertWrites(t, "foo", writes(f.fooClient.Actions()))
			if got := f.events(); len(got) != 0 {
				t.Errorf("events = %q, want none for a Foo that is going away", got)
			}
		})
	}
}

// TestReconcileStopsQuietlyInATerminatingNamespace: a create refused because the
// namespace is being deleted (the NamespaceTerminating cause) ends the work: nil,
// so the key is not retried, and no event or status write.
func TestReconcileStopsQuietlyInATerminatingNamespace(t *testing.T) {
	f := newFixture(t)
	foo := newFoo("test", ptr.To[int32](1))
	f.foos = append(f.foos, foo)
	refused := apierrors.NewForbidden(appsv1.Resource("deployments"), "test-deployment",
		errors.New("unable to create new content in namespace default because it is being terminated"))
	refused.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type:    corev1.NamespaceTerminatingCause,
		Message: "namespace default is being terminated",
		Field:   "metadata.namespace",
	}}
	f.createErr = refused

	if err := f.reconcile(key(foo)); err != nil {
		t.Fatalf("Reconcile returned %v, want nil: the namespace will not come back", err)
	}

	assertWrites(t, "kube", writes(f.kubeClient.Actions()), "create deployments")
	assertWrites(t, "foo", writes(f.fooClient.Actions()))
	if got := f.events(); len(got) != 0 {
		t.Errorf("events = %q, want none", got)
	}
}

// TestReconcileRetriesOtherForbiddenCreates: a create refused for another reason
// (RBAC, a quota, an admission webhook) is an error, retried with backoff.
func TestReconcileRetriesOtherForbiddenCreates(t *testing.T) {
	f := newFixture(t)
	foo := newFoo("test", ptr.To[int32](1))
	f.foos = append(f.foos, foo)
	f.createErr = apierrors.NewForbidden(appsv1.Resource("deployments"), "test-deployment", errors.New("exceeded quota: pods"))

	if err := f.reconcile(key(foo)); !apierrors.IsForbidden(err) {
		t.Fatalf("Reconcile returned %v, want the Forbidden error so the key is retried", err)
	}
}

func TestReconcileWritesStatusOnlyWhenChanged(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     samplev1alpha1.FooStatus
		available  int32
		wantWrites []string
	}{
		{"available replicas changed", samplev1alpha1.FooStatus{AvailableReplicas: 1, ObservedGeneration: 1}, 2, []string{"update foos/status"}},
		{"generation not yet observed", samplev1alpha1.FooStatus{AvailableReplicas: 2}, 2, []string{"update foos/status"}},
		{"unchanged", samplev1alpha1.FooStatus{AvailableReplicas: 2, ObservedGeneration: 1}, 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			foo := newFoo("test", ptr.To[int32](2))
			foo.Status = tc.status
			f.foos = append(f.foos, foo)
			f.deployments = append(f.deployments, ownedDeployment(foo, tc.available))

			if err := f.reconcile(key(foo)); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}

			assertWrites(t, "kube", writes(f.kubeClient.Actions()))
			assertWrites(t, "foo", writes(f.fooClient.Actions()), tc.wantWrites...)
			for _, a := range f.fooClient.Actions() {
				if u, ok := a.(core.UpdateAction); ok {
					got := u.GetObject().(*samplev1alpha1.Foo).Status
					want := samplev1alpha1.FooStatus{AvailableReplicas: tc.available, ObservedGeneration: 1}
					if got != want {
						t.Errorf("status written = %+v, want %+v", got, want)
					}
				}
			}
			if got := f.events(); len(got) != 0 {
				t.Errorf("events = %q, want none for a status change", got)
			}
		})
	}
}

func TestReconcileHandlesDeploymentWithNilReplicas(t *testing.T) {
	f := newFixture(t)
	foo := newFoo("test", nil) // nil: the default, 1
	foo.Status = samplev1alpha1.FooStatus{ObservedGeneration: 1}
	d := ownedDeployment(foo, 0)
	d.Spec.Replicas = nil
	f.foos = append(f.foos, foo)
	f.deployments = append(f.deployments, d)

	if err := f.reconcile(key(foo)); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}

	assertWrites(t, "kube", writes(f.kubeClient.Actions()), "update deployments")
	updated := f.kubeClient.Actions()[0].(core.UpdateAction).GetObject().(*appsv1.Deployment)
	if updated.Spec.Replicas == nil || *updated.Spec.Replicas != 1 {
		t.Errorf("updated Deployment replicas = %v, want 1", updated.Spec.Replicas)
	}
}

func TestReconcileTreatsMissingFooAsDeleted(t *testing.T) {
	f := newFixture(t)

	if err := f.reconcile(cache.ObjectName{Namespace: "default", Name: "gone"}); err != nil {
		t.Fatalf("Reconcile of a deleted Foo returned %v, want nil (a deletion is not an error)", err)
	}

	assertWrites(t, "kube", writes(f.kubeClient.Actions()))
	assertWrites(t, "foo", writes(f.fooClient.Actions()))
}

func TestReconcileOfFooDeletedMeanwhileIsNotAnError(t *testing.T) {
	f := newFixture(t)
	foo := newFoo("web", ptr.To[int32](1))
	f.foos = []*samplev1alpha1.Foo{foo}
	f.deployments = []*appsv1.Deployment{ownedDeployment(foo, 1)}
	f.foosDeleted = true

	if err := f.reconcile(cache.ObjectName{Namespace: foo.Namespace, Name: foo.Name}); err != nil {
		t.Fatalf("Reconcile of a Foo deleted while it was reconciled returned %v, want nil (its status write found it gone)", err)
	}

	assertWrites(t, "kube", writes(f.kubeClient.Actions()))
	assertWrites(t, "foo", writes(f.fooClient.Actions()), "update foos/status")
}

func TestReconcileDoesNotRecreateDeploymentOfFooDeletedMeanwhile(t *testing.T) {
	// The Foo was reconciled before (observedGeneration is set), its Deployment
	// is gone from the cache, and the API server no longer has the Foo: the
	// garbage collector deleted the Deployment of a deleted Foo before the
	// Foo's own deletion reached the cache.
	f := newFixture(t)
	foo := newFoo("web", ptr.To[int32](1))
	foo.Status.ObservedGeneration = foo.Generation
	f.foos = []*samplev1alpha1.Foo{foo}
	f.foosDeleted = true

	if err := f.reconcile(cache.ObjectName{Namespace: foo.Namespace, Name: foo.Name}); err != nil {
		t.Fatalf("Reconcile returned %v, want nil", err)
	}

	assertWrites(t, "kube", writes(f.kubeClient.Actions()))
	assertWrites(t, "foo", writes(f.fooClient.Actions()))
	if n := len(f.recorder.Events); n != 0 {
		t.Errorf("recorded %d events for a deleted Foo, want none: %v", n, <-f.recorder.Events)
	}
}

func TestReconcileRecreatesDeploymentDeletedByHand(t *testing.T) {
	// The same, but the Foo still exists: someone deleted its Deployment, and
	// the Reconciler creates it again after one GET of the Foo.
	f := newFixture(t)
	foo := newFoo("web", ptr.To[int32](1))
	foo.Status.ObservedGeneration = foo.Generation
	f.foos = []*samplev1alpha1.Foo{foo}

	if err := f.reconcile(cache.ObjectName{Namespace: foo.Namespace, Name: foo.Name}); err != nil {
		t.Fatalf("Reconcile returned %v, want nil", err)
	}

	assertWrites(t, "kube", writes(f.kubeClient.Actions()), "create deployments")
	gets := 0
	for _, a := range f.fooClient.Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == "foos" {
			gets++
		}
	}
	if gets != 1 {
		t.Errorf("the Reconciler read the Foo from the API server %d times, want once (before creating the Deployment again)", gets)
	}
}

func TestReconcileRefusesInvalidSpecWithOneWarning(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mutate    func(*samplev1alpha1.Foo)
		wantField string
	}{
		{"deployment name not a DNS-1123 label", func(foo *samplev1alpha1.Foo) { foo.Spec.DeploymentName = "Not_Valid" }, "spec.deploymentName"},
		{"deployment name empty", func(foo *samplev1alpha1.Foo) { foo.Spec.DeploymentName = "" }, "spec.deploymentName"},
		{"replicas out of bounds", func(foo *samplev1alpha1.Foo) { foo.Spec.Replicas = ptr.To[int32](1000) }, "spec.replicas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			foo := newFoo("test", ptr.To[int32](1))
			tc.mutate(foo)
			f.foos = append(f.foos, foo)

			// nil: retrying cannot fix a spec, so the key must not come back.
			if err := f.reconcile(key(foo)); err != nil {
				t.Fatalf("Reconcile returned %v, want nil (no retry loop for a bad spec)", err)
			}

			assertWrites(t, "kube", writes(f.kubeClient.Actions()))
			assertWrites(t, "foo", writes(f.fooClient.Actions()))
			got := f.events()
			if len(got) != 1 || !strings.HasPrefix(got[0], "Warning InvalidSpec") || !strings.Contains(got[0], tc.wantField) {
				t.Errorf("events = %q, want one Warning InvalidSpec naming %s", got, tc.wantField)
			}
		})
	}
}
