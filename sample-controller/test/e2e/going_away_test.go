//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// What a controller owes objects that are going away, and children that are no
// longer its own (docs/lessons/02-sample-controller.md, "Objects that are going
// away"). Each test counts the controller's writes in the API server's audit log.

// controllerUser is the user the e2e controllers act as (see startController).
const controllerUser = "system:serviceaccount:" + controllerNamespace + ":" + serviceAccount

// controllerCreate matches the creates the controller sent to namespace, Events excluded.
func controllerCreate(namespace string) func(kittest.AuditEntry) bool {
	return func(e kittest.AuditEntry) bool {
		return e.User == controllerUser && e.Namespace == namespace && e.Verb == "create" && e.Resource != "events"
	}
}

// retries reads the controller's workqueue_retries_total{name="foos"} from
// its /metrics at addr (the controller's --metrics-bind-address). The queue
// counts one retry each time a worker hands a key back with AddRateLimited,
// which the controller does only when Reconcile returned an error.
func retries(t *testing.T, addr string) float64 {
	t.Helper()
	m, err := kittest.Scrape(context.Background(), "http://"+addr+"/metrics")
	if err != nil {
		t.Fatalf("reading the controller's retries: %v", err)
	}
	n, found := m.Value("workqueue_retries_total", map[string]string{"name": "foos"})
	if !found {
		t.Fatal(`the controller's /metrics has no workqueue_retries_total{name="foos"}`)
	}
	return n
}

// requireOnlyStaleCacheRetries fails the test when the controller at addr, a
// process of this test started after started, retried a key for any other
// reason than a stale cache: each retry it counted since it started must match
// one of its writes to namespace since started (Events aside: the recorder
// retries those itself) that the API server answered
// with 409 (Conflict or AlreadyExists), the only errors a Reconciler may expect
// around a deletion. Counting over the controller's whole life leaves no window
// for a 409 received just before a test's step and retried just after it. A
// second reconcile of the same key is not a retry: every event queues the key
// again, and two events (the Foo's and its Deployment's, on two watches) can
// arrive in either order.
func requireOnlyStaleCacheRetries(t *testing.T, addr, namespace string, started time.Time, what string) {
	t.Helper()
	retried := retries(t, addr)
	conflicts := kittest.Writes(t, started, func(e kittest.AuditEntry) bool {
		return e.User == controllerUser && e.Namespace == namespace && e.Code == 409 && e.Resource != "events"
	})
	if retried > float64(len(conflicts)) {
		t.Errorf("%s: the controller retried %g times (workqueue_retries_total), and only %d of its writes were answered 409 (a stale cache); "+
			"Reconcile returned another error: see \"Reconcile failed\" in the controller's log", what, retried, len(conflicts))
	}
}

// controllerCreates returns the creates the controller sent to namespace since
// the given time, Events excluded, one line each.
func controllerCreates(t *testing.T, namespace string, since time.Time) []string {
	t.Helper()
	var out []string
	for _, w := range kittest.Writes(t, since, controllerCreate(namespace)) {
		out = append(out, w.String())
	}
	return out
}

func TestForegroundDeletedFooGetsNoNewDeployment(t *testing.T) {
	t.Parallel()
	cs, fooClient := clients(t)
	ns := kittest.Namespace(t, cs, "sample-foreground")
	startController(t, "controller", ns)
	names := []string{"web", "api", "db"}
	for _, name := range names {
		createFoo(t, fooClient, newFoo(ns, name, 1))
	}
	for _, name := range names {
		waitForFooStatus(t, fooClient, ns, name, 1)
	}

	// Foreground deletion: each Foo stays, with deletionTimestamp set, until the
	// garbage collector has deleted its Deployment. Every step of that deletion
	// (the Deployment deleted, its ReplicaSets and Pods going) queues the Foo.
	deleted := time.Now()
	foreground := metav1.DeletePropagationForeground
	for _, name := range names {
		if err := fooClient.SamplecontrollerV1alpha1().Foos(ns).Delete(context.Background(), name, metav1.DeleteOptions{PropagationPolicy: &foreground}); err != nil {
			t.Fatalf("deleting Foo %s with --cascade=foreground: %v", name, err)
		}
	}
	kittest.Eventually(t, kittest.GarbageCollectionDeadline(deadline), "every Foo and Deployment to be gone", func(ctx context.Context) (bool, error) {
		foos, err := fooClient.SamplecontrollerV1alpha1().Foos(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		deployments, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		return len(foos.Items) == 0 && len(deployments.Items) == 0, nil
	})
	// The API server logs a request a moment after answering it.
	time.Sleep(2 * time.Second)

	if creates := controllerCreates(t, ns, deleted); len(creates) > 0 {
		t.Errorf("the controller created %d objects for Foos that were being deleted (a Foo with deletionTimestamp set gets no new children):\n  %s",
			len(creates), strings.Join(creates, "\n  "))
	}
}

func TestFooInTerminatingNamespaceIsNotRetried(t *testing.T) {
	t.Parallel()
	cs, fooClient := clients(t)
	ns := kittest.Namespace(t, cs, "sample-ns-gone")
	addr, started := kittest.FreeAddress(t), time.Now()
	startController(t, "controller", ns, "--metrics-bind-address="+addr)
	createFoo(t, fooClient, newFoo(ns, "web", 1))
	waitForFooStatus(t, fooClient, ns, "web", 1)

	// The namespace controller deletes everything in the namespace, Deployments
	// and Foos alike and in no promised order. A Foo that outlives its
	// Deployment for a moment is reconciled, and its create is refused for good.
	if err := cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting namespace %s: %v", ns, err)
	}
	kittest.Eventually(t, kittest.NamespaceDeletionDeadline(deadline), "namespace "+ns+" to be gone", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return gone(err)
	})
	// The API server logs a request a moment after answering it.
	time.Sleep(2 * time.Second)

	// Each event that queues the Foo while it outlives its Deployment may end in
	// one refused create; a retry of it would be the Reconciler treating
	// "the namespace is going away" as an error.
	requireOnlyStaleCacheRetries(t, addr, ns, started,
		"a create refused with the NamespaceTerminating cause is the end of the work, not an error to retry")
}

func TestDeploymentThatLostItsOwnerReferenceIsReportedNotAdopted(t *testing.T) {
	t.Parallel()
	cs, fooClient, ns, _ := convergedFoo(t, "sample-lost-owner", 1)
	ctx := context.Background()

	// Someone removes the owner reference: the Deployment is no longer the Foo's.
	// Nothing about the Foo changed, so only the Deployment's event can queue it.
	if _, err := cs.AppsV1().Deployments(ns).Patch(ctx, "web", types.JSONPatchType,
		[]byte(`[{"op":"remove","path":"/metadata/ownerReferences"}]`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("removing Deployment web's owner references: %v", err)
	}
	msg := waitForEvent(t, cs, ns, "web", corev1.EventTypeWarning, "ErrResourceExists")
	if !strings.Contains(msg, "web") {
		t.Errorf("ErrResourceExists message %q does not name the Deployment", msg)
	}
	waitForFooStatus(t, fooClient, ns, "web", 0)

	// Scaling it by hand is its new owner's business: the Foo is reconciled
	// again (one more warning) and leaves the replicas alone.
	warnings := func(ctx context.Context) (int32, error) {
		selector := fields.Set{"involvedObject.name": "web", "type": corev1.EventTypeWarning, "reason": "ErrResourceExists"}.String()
		events, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: selector})
		if err != nil {
			return 0, err
		}
		var count int32
		for _, e := range events.Items {
			count += max(e.Count, 1)
		}
		return count, nil
	}
	before, err := warnings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kittest.Kubectl(t, "-n", ns, "scale", "deployment/web", "--replicas=4")
	kittest.Eventually(t, deadline, "one more ErrResourceExists warning on Foo web after the scale", func(ctx context.Context) (bool, error) {
		n, err := warnings(ctx)
		return n > before, err
	})
	d := waitForDeployment(t, cs, ns, "web", "Deployment web to exist", func(*appsv1.Deployment) bool { return true })
	if replicas := ptr.Deref(d.Spec.Replicas, 1); replicas != 4 || len(d.OwnerReferences) != 0 {
		t.Errorf("Deployment web was changed by the controller after it lost its owner reference: replicas %d (want 4), owner references %v (want none)",
			replicas, d.OwnerReferences)
	}
}

// TestFooRecreatedUnderItsNameWaitsForTheOldDeployment: a Foo deleted and
// created again under its name (kubectl replace --force, a GitOps tool syncing
// again) while its old Deployment is held by a finalizer. That Deployment,
// controlled by the old Foo's UID and with deletionTimestamp set, is going away,
// not a stranger's: the new Foo gets no ErrResourceExists Warning and waits, and
// once the finalizer is removed and the old Deployment gone it gets its own.
func TestFooRecreatedUnderItsNameWaitsForTheOldDeployment(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs, fooClient, ns, _ := convergedFoo(t, "sample-recreated", 1)
	const hold = "controller-kit.dev/e2e-hold"
	setHold := func(remove bool) {
		t.Helper()
		kittest.Eventually(t, deadline, "the test's finalizer on Deployment web", func(ctx context.Context) (bool, error) {
			d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return gone(err)
			}
			kept := d.Finalizers[:0]
			for _, f := range d.Finalizers {
				if f != hold {
					kept = append(kept, f)
				}
			}
			if d.Finalizers = kept; !remove {
				d.Finalizers = append(d.Finalizers, hold)
			}
			_, err = cs.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{})
			return err == nil, client409(err)
		})
	}
	setHold(false)
	t.Cleanup(func() { setHold(true) })
	old, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// kubectl replace --force -f web.yaml
	if err := fooClient.SamplecontrollerV1alpha1().Foos(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, deadline, "the old Foo to be gone", func(ctx context.Context) (bool, error) {
		_, err := fooClient.SamplecontrollerV1alpha1().Foos(ns).Get(ctx, "web", metav1.GetOptions{})
		return gone(err)
	})
	foo := createFoo(t, fooClient, newFoo(ns, "web", 1))
	waitForDeployment(t, cs, ns, "web", "the old Deployment held by its finalizer, deletionTimestamp set", func(d *appsv1.Deployment) bool {
		return d.UID == old.UID && d.DeletionTimestamp != nil
	})
	// The new Foo was reconciled with the old Deployment in its way: its
	// status says so (observedGeneration written, no Pods claimed).
	kittest.Eventually(t, deadline, "the new Foo's first status", func(ctx context.Context) (bool, error) {
		f, err := fooClient.SamplecontrollerV1alpha1().Foos(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && f.Status.ObservedGeneration == f.Generation, err
	})
	f, err := fooClient.SamplecontrollerV1alpha1().Foos(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f.Status.AvailableReplicas != 0 {
		t.Errorf("the new Foo claims %d available replicas of the old Foo's Deployment; want 0", f.Status.AvailableReplicas)
	}

	setHold(true)
	waitForDeployment(t, cs, ns, "web", "a Deployment controlled by the new Foo", func(d *appsv1.Deployment) bool {
		return metav1.IsControlledBy(d, foo)
	})
	waitForFooStatus(t, fooClient, ns, "web", 1)
	selector := fields.Set{"involvedObject.name": "web", "involvedObject.uid": string(foo.UID), "type": corev1.EventTypeWarning}.String()
	events, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		t.Errorf("Warning %s on the new Foo: %q; want none: the old Foo's Deployment, going away, is no conflict", e.Reason, e.Message)
	}
}

// client409 turns a conflict into "try again" for kittest.Eventually.
func client409(err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}
