//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	samplev1alpha1 "github.com/controller-kit/controller-kit/sample-controller/pkg/apis/samplecontroller/v1alpha1"
	"github.com/controller-kit/controller-kit/test/kittest"
)

func TestFooCreatesOwnedDeploymentAndReportsAvailableReplicas(t *testing.T) {
	t.Parallel()
	cs, fooClient := clients(t)
	ns := kittest.Namespace(t, cs, "sample-create")
	startController(t, "controller", ns)

	foo := createFoo(t, fooClient, newFoo(ns, "web", 2))

	d := waitForDeployment(t, cs, ns, "web", "Deployment web to be created", func(*appsv1.Deployment) bool { return true })
	ref := metav1.GetControllerOf(d)
	if ref == nil || ref.UID != foo.UID || ref.Kind != "Foo" || ref.APIVersion != samplev1alpha1.SchemeGroupVersion.String() ||
		ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Fatalf("Deployment web's controller reference = %+v, want Foo web (uid %s) with blockOwnerDeletion", ref, foo.UID)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("Deployment web has replicas %v, want 2", d.Spec.Replicas)
	}

	kittest.Eventually(t, deadline, "2 running Pods labelled app.kubernetes.io/instance=web", func(ctx context.Context) (bool, error) {
		n, err := runningPods(ctx, cs, ns, "web")
		return n == 2, err
	})
	waitForFooStatus(t, fooClient, ns, "web", 2)
	waitForEvent(t, cs, ns, "web", corev1.EventTypeNormal, "DeploymentCreated")
}

func TestScalingFooScalesDeployment(t *testing.T) {
	t.Parallel()
	cs, fooClient, ns, _ := convergedFoo(t, "sample-scale", 1)

	patch := []byte(`{"spec":{"replicas":3}}`)
	if _, err := fooClient.SamplecontrollerV1alpha1().Foos(ns).Patch(context.Background(), "web", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("scaling Foo web to 3: %v", err)
	}

	waitForDeployment(t, cs, ns, "web", "Deployment web to have 3 replicas", func(d *appsv1.Deployment) bool {
		return d.Spec.Replicas != nil && *d.Spec.Replicas == 3
	})
	waitForFooStatus(t, fooClient, ns, "web", 3)
}

func TestKubectlScaleOnDeploymentIsReverted(t *testing.T) {
	t.Parallel()
	cs, _, ns, _ := convergedFoo(t, "sample-revert", 2)

	kittest.Kubectl(t, "-n", ns, "scale", "deployment/web", "--replicas=5")

	waitForDeployment(t, cs, ns, "web", "Deployment web to be scaled back to the Foo's 2 replicas", func(d *appsv1.Deployment) bool {
		return d.Spec.Replicas != nil && *d.Spec.Replicas == 2 && d.Generation > 2
	})
	waitForEvent(t, cs, ns, "web", corev1.EventTypeNormal, "DeploymentScaled")
}

func TestForeignDeploymentIsLeftUntouched(t *testing.T) {
	t.Parallel()
	cs, fooClient := clients(t)
	ns := kittest.Namespace(t, cs, "sample-foreign")
	labels := map[string]string{"app": "someone-elses"}
	foreign, err := cs.AppsV1().Deployments(ns).Create(context.Background(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox:1.36"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the foreign Deployment: %v", err)
	}
	startController(t, "controller", ns)

	createFoo(t, fooClient, newFoo(ns, "web", 3))

	msg := waitForEvent(t, cs, ns, "web", corev1.EventTypeWarning, "ErrResourceExists")
	if !strings.Contains(msg, "web") {
		t.Errorf("ErrResourceExists message %q does not name the Deployment", msg)
	}
	d, err := cs.AppsV1().Deployments(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Generation != foreign.Generation || *d.Spec.Replicas != 1 || len(d.OwnerReferences) != 0 {
		t.Errorf("the foreign Deployment was changed: generation %d -> %d, replicas %d, owner references %v",
			foreign.Generation, d.Generation, *d.Spec.Replicas, d.OwnerReferences)
	}
}

func TestDeletingFooGarbageCollectsDeployment(t *testing.T) {
	t.Parallel()
	cs, fooClient := clients(t)
	ns := kittest.Namespace(t, cs, "sample-gc")
	addr, started := kittest.FreeAddress(t), time.Now()
	controller := startController(t, "controller", ns, "--metrics-bind-address="+addr)
	createFoo(t, fooClient, newFoo(ns, "web", 1))
	waitForDeployment(t, cs, ns, "web", "Deployment web to be created", func(*appsv1.Deployment) bool { return true })
	waitForFooStatus(t, fooClient, ns, "web", 1)

	if err := fooClient.SamplecontrollerV1alpha1().Foos(ns).Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting Foo web: %v", err)
	}

	// The controller deletes nothing: kube-controller-manager's garbage
	// collector follows the owner reference.
	kittest.Eventually(t, kittest.GarbageCollectionDeadline(deadline), "Deployment web to be garbage-collected", func(ctx context.Context) (bool, error) {
		_, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		return gone(err)
	})
	// A deleted Foo is a normal event for the Reconciler: a log line, no error,
	// no retry. (That the Deployment's own deletion does not queue a Foo that is
	// gone is TestDeploymentEventsEnqueueFoosOfTheDeployment's, in
	// pkg/controller: here the two watches may deliver the two deletions in
	// either order, and a Deployment event that comes first queues the Foo once
	// more.)
	kittest.Eventually(t, deadline, "the controller to log the Foo's deletion", func(context.Context) (bool, error) {
		return strings.Contains(controller.Logs(), "Foo is gone, nothing to do"), nil
	})
	time.Sleep(2 * time.Second)
	requireOnlyStaleCacheRetries(t, addr, ns, started, "a Foo that is gone is the end of the work, not an error to retry")
	controller.RequireNoLine(t, `"Connected; the API server serves Foos"`, "the controller reported a failed reconcile around the deletion", "Reconcile failed")
}

func TestInvalidFooIsRejectedByTheAPINamingTheField(t *testing.T) {
	t.Parallel()
	cs, fooClient := clients(t)
	ns := kittest.Namespace(t, cs, "sample-invalid")
	ctx := context.Background()
	foos := fooClient.SamplecontrollerV1alpha1().Foos(ns)

	for _, tc := range []struct {
		name      string
		foo       *samplev1alpha1.Foo
		wantField string
	}{
		{"deployment name not a DNS-1123 label", newFoo(ns, "bad-name", 1), "spec.deploymentName"},
		{"replicas above 100", newFoo(ns, "too-many", 1000), "spec.replicas"},
		{"replicas below 0", newFoo(ns, "negative", -1), "spec.replicas"},
		{"deployment name missing", newFoo(ns, "no-name", 1), "spec.deploymentName"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			switch tc.foo.Name {
			case "bad-name":
				tc.foo.Spec.DeploymentName = "Not_A_Name"
			case "no-name":
				tc.foo.Spec.DeploymentName = ""
			}
			_, err := foos.Create(ctx, tc.foo, metav1.CreateOptions{})
			if err == nil {
				t.Fatalf("the API accepted an invalid Foo: %+v", tc.foo.Spec)
			}
			if !strings.Contains(err.Error(), tc.wantField) {
				t.Errorf("error %q does not name %s", err, tc.wantField)
			}
		})
	}

	t.Run("deployment name changed", func(t *testing.T) {
		createFoo(t, fooClient, newFoo(ns, "web", 1))
		patch := []byte(`{"spec":{"deploymentName":"web2"}}`)
		_, err := foos.Patch(ctx, "web", types.MergePatchType, patch, metav1.PatchOptions{})
		if err == nil {
			t.Fatal("the API accepted a change of spec.deploymentName")
		}
		if !strings.Contains(err.Error(), "spec.deploymentName") || !strings.Contains(err.Error(), "immutable") {
			t.Errorf("error %q does not say spec.deploymentName is immutable", err)
		}
	})
}

func TestFooStatusIsWrittenThroughStatusSubresource(t *testing.T) {
	t.Parallel()
	cs, fooClient := clients(t)
	ns := kittest.Namespace(t, cs, "sample-status")
	startController(t, "controller", ns)
	createFoo(t, fooClient, newFoo(ns, "web", 2))

	waitForFooStatus(t, fooClient, ns, "web", 2)

	foo, err := fooClient.SamplecontrollerV1alpha1().Foos(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var viaStatus bool
	for _, m := range foo.ManagedFields {
		if m.Manager == "sample-controller" {
			if m.Subresource != "status" {
				t.Errorf("sample-controller wrote Foo web through %q, want only the status subresource", m.Subresource)
			}
			viaStatus = true
		}
	}
	if !viaStatus {
		t.Errorf("no managedFields entry of sample-controller on Foo web: the writes did not set FieldManager (entries: %+v)", foo.ManagedFields)
	}
	// The spec is the user's: the controller's status writes never touch it.
	if foo.Generation != 1 {
		t.Errorf("Foo web generation = %d, want 1 (the controller changed the spec)", foo.Generation)
	}
}

func TestMissingCRDFailsFastNamingTheFix(t *testing.T) {
	t.Parallel()
	// An API server that serves nothing, so discovery cannot find Foos. A
	// cluster without the CRD answers the same way.
	server := newEmptyAPIServer(t)
	kubeconfig := writeKubeconfig(t, server.URL)

	p := kittest.StartProcess(t, "controller", suite.Bin, "--kubeconfig="+kubeconfig)
	code, err := p.Wait(30 * time.Second)
	if err != nil {
		t.Fatalf("the controller did not exit without its CRD: %v", err)
	}
	if code == 0 {
		t.Errorf("exit code 0, want non-zero")
	}
	logs := p.Logs()
	for _, want := range []string{"foos.samplecontroller.k8s.io", "make run-sample", "kubectl apply --server-side"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the controller's output does not mention %q:\n%s", want, logs)
		}
	}
}

func TestRestartedControllerWritesNothingWhenUpToDate(t *testing.T) {
	t.Parallel()
	cs, fooClient, ns, first := convergedFoo(t, "sample-idle", 2)
	if code, err := first.Stop(30 * time.Second); err != nil || code != 0 {
		t.Fatalf("stopping the first controller: exit code %d (%v), want 0", code, err)
	}

	ctx := context.Background()
	fooBefore, err := fooClient.SamplecontrollerV1alpha1().Foos(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deploymentBefore, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventsBefore := controllerEvents(t, cs, ns)

	// A new process lists everything and reconciles every Foo once, as a resync
	// would. With nothing to change it must send no write at all, counted where
	// writes happen: in the API server's audit log (an unchanged status write
	// would not even move the Foo's resourceVersion). A second Foo, created now,
	// must get its Deployment: that shows the new process runs, and that the
	// audit log holds its writes, so the count for web below can fail.
	restarted := time.Now()
	startController(t, "controller-restarted", ns)
	createFoo(t, fooClient, newFoo(ns, "sentinel", 1))
	waitForDeployment(t, cs, ns, "sentinel", "the restarted controller to create Deployment sentinel", func(*appsv1.Deployment) bool { return true })
	// The API server logs a request a moment after answering it, and web's
	// reconcile may still run: a generous pause before counting.
	time.Sleep(3 * time.Second)
	user := "system:serviceaccount:" + controllerNamespace + ":" + serviceAccount
	var ofSentinel, ofWeb []string
	for _, w := range kittest.Writes(t, restarted, func(e kittest.AuditEntry) bool { return e.User == user && e.Namespace == ns }) {
		// An Event's name starts with the name of the object it is about.
		switch {
		case w.Name == "sentinel" || strings.HasPrefix(w.Name, "sentinel."):
			ofSentinel = append(ofSentinel, w.String())
		case w.Name == "web" || strings.HasPrefix(w.Name, "web."):
			ofWeb = append(ofWeb, w.String())
		}
	}
	if len(ofSentinel) == 0 {
		t.Fatalf("the audit log shows no write of the restarted controller, although it created Deployment sentinel")
	}
	if len(ofWeb) > 0 {
		t.Errorf("the restarted controller wrote to Foo web or its Deployment, or recorded an event on it, although nothing changed:\n  %s",
			strings.Join(ofWeb, "\n  "))
	}

	fooAfter, err := fooClient.SamplecontrollerV1alpha1().Foos(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fooAfter.ResourceVersion != fooBefore.ResourceVersion {
		t.Errorf("Foo web was written again (resourceVersion %s -> %s, status %+v): status must only be written when it changes",
			fooBefore.ResourceVersion, fooAfter.ResourceVersion, fooAfter.Status)
	}
	deploymentAfter, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if deploymentAfter.Generation != deploymentBefore.Generation {
		t.Errorf("Deployment web's spec was written again (generation %d -> %d)", deploymentBefore.Generation, deploymentAfter.Generation)
	}
	if eventsAfter := controllerEvents(t, cs, ns); eventsAfter != eventsBefore {
		t.Errorf("the restarted controller recorded events (%d -> %d) although nothing changed", eventsBefore, eventsAfter)
	}
}

// controllerEvents counts the events sample-controller recorded on Foo web in
// namespace, including repeats the recorder merged into one Event.
func controllerEvents(t *testing.T, cs kubernetes.Interface, namespace string) int32 {
	t.Helper()
	events, err := cs.CoreV1().Events(namespace).List(context.Background(), metav1.ListOptions{FieldSelector: "source=sample-controller,involvedObject.name=web"})
	if err != nil {
		t.Fatal(err)
	}
	var n int32
	for _, e := range events.Items {
		n += max(e.Count, 1)
	}
	return n
}
