//go:build e2e

package reliability

import (
	"context"
	"fmt"
	"net/http"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/controller-kit/controller-kit/sample-controller/pkg/generated/clientset/versioned"
	"github.com/controller-kit/controller-kit/test/kittest"
)

// createWorkers is how many goroutines create a burst's objects at once.
const createWorkers = 16

// fooClients returns the clients a Foo scenario works through, each with the
// test's own (admin) identity: the typed clientset, sample-controller's Foo
// clientset, and a dynamic client for kittest.CreateFoos.
func fooClients(t *testing.T) (kubernetes.Interface, versioned.Interface, dynamic.Interface) {
	t.Helper()
	cs := kittest.Clientset(t)
	cfg := kittest.Config(t)
	foos, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, foos, dyn
}

// TestFooBurstSurvivesControllerCrash creates a burst of Foos, kills
// sample-controller with SIGKILL (no shutdown, no cleanup: a node lost, an OOM
// kill) once about a third of their Deployments exist, and starts a new one.
// The new controller knows nothing of the old one's work but what the API server
// holds: it lists Foos and Deployments, and its Reconciler creates only the
// Deployments that are missing. Every Foo ends with exactly one Deployment, which
// it controls, and reports its replicas available; no Foo reports a Deployment
// it does not own (ErrResourceExists), which would mean the controller mistook
// its own earlier work for someone else's.
func TestFooBurstSurvivesControllerCrash(t *testing.T) {
	scenario(t)
	n := *foos
	cs, fooClient, dyn := fooClients(t)
	ns := kittest.Namespace(t, cs, "crash-foo")
	ctx := context.Background()
	started := time.Now()

	// The Foos may come before the controller's workers start: its informers
	// list them either way.
	first := startSampleController(t, "controller-killed", ns)
	third := deploymentsReach(t, cs, ns, max(n/3, 1))
	if _, err := kittest.CreateFoos(ctx, dyn, ns, n, 1, createWorkers); err != nil {
		t.Fatalf("creating %d Foos: %v", n, err)
	}
	select {
	case <-third:
	case <-time.After(deadline):
		t.Fatalf("timed out after %s waiting for a third of %d Deployments", deadline, n)
	}
	first.Signal(syscall.SIGKILL)
	if _, err := first.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	record(t, "Foos in the burst", float64(n), "")

	restarted := time.Now()
	second := startSampleController(t, "controller-restarted", ns)
	kittest.Eventually(t, deadline, fmt.Sprintf("all %d Foos to report 1 available replica", n), func(ctx context.Context) (bool, error) {
		list, err := fooClient.SamplecontrollerV1alpha1().Foos(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		converged := 0
		for _, foo := range list.Items {
			if foo.Status.AvailableReplicas == 1 && foo.Status.ObservedGeneration == foo.Generation {
				converged++
			}
		}
		return converged == n, nil
	})
	record(t, "converged after restart", time.Since(restarted).Seconds(), "s")

	// Exactly one Deployment per Foo, controlled by that Foo.
	list, err := fooClient.SamplecontrollerV1alpha1().Foos(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	uids := map[string]string{}
	for _, foo := range list.Items {
		uids[string(foo.UID)] = foo.Name
	}
	deployments, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	perFoo := map[string]int{}
	for _, d := range deployments.Items {
		ref := metav1.GetControllerOf(&d)
		if ref == nil || ref.Kind != "Foo" || uids[string(ref.UID)] != d.Name {
			t.Errorf("Deployment %s is not controlled by its Foo: controller reference %+v", d.Name, ref)
			continue
		}
		perFoo[d.Name]++
	}
	if len(deployments.Items) != n || len(perFoo) != n {
		t.Errorf("%d Deployments for %d Foos (%d Foos have one); want exactly one each", len(deployments.Items), n, len(perFoo))
	}

	// Nothing the controller made is taken for someone else's.
	events, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("reason", "ErrResourceExists").String(),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		t.Errorf("Foo %s reported a Deployment it does not own: %s", e.InvolvedObject.Name, e.Message)
	}

	// Figures from the audit log: what each controller created. A create the
	// first sent just before it died is recorded as cut short (504: the client
	// went away), whether or not the object was stored; the restarted
	// controller creates what the API server does not hold.
	time.Sleep(2 * time.Second) // the API server logs a request a moment after answering it
	sa := "system:serviceaccount:" + sampleControllerNamespace + ":" + sampleControllerServiceAccount
	var before, cut, after, refused int
	for _, e := range kittest.Writes(t, started, func(e kittest.AuditEntry) bool {
		return e.User == sa && e.Verb == "create" && e.Resource == "deployments" && e.Namespace == ns
	}) {
		switch {
		case e.Code == http.StatusConflict:
			refused++
		case e.Code != http.StatusCreated:
			cut++
		case e.Received.Before(restarted):
			before++
		default:
			after++
		}
	}
	record(t, "Deployments created before the kill", float64(before), "")
	record(t, "creates cut short by the kill", float64(cut), "")
	record(t, "Deployments created after the restart", float64(after), "")
	record(t, "creates refused as already existing", float64(refused), "")
	second.RequireNoLine(t, "Starting workers", "the API server refused a request (forbidden): the controller asked for something config/rbac does not grant", "forbidden")
}

// sampleControllerNamespace and sampleControllerServiceAccount are where
// sample-controller's config/rbac binds its RBAC.
const (
	sampleControllerNamespace      = "sample-controller-system"
	sampleControllerServiceAccount = "sample-controller"
)

// startSampleController runs sample-controller as its shipped ServiceAccount
// (by impersonation), watching only namespace, with extra flags appended.
func startSampleController(t *testing.T, name, namespace string, extra ...string) *kittest.Process {
	t.Helper()
	args := append([]string{
		"--kubeconfig=" + kittest.ImpersonatingKubeconfig(t, sampleControllerNamespace, sampleControllerServiceAccount),
		"--namespace=" + namespace, "-v=2",
	}, extra...)
	return kittest.StartProcess(t, name, sampleControllerBin, args...)
}

// deploymentsReach watches the Deployments of namespace and returns a channel
// closed once at least n have been created (it starts watching before it
// returns, so nothing created afterwards is missed). The watch ends with the test.
func deploymentsReach(t *testing.T, cs kubernetes.Interface, namespace string, n int) <-chan struct{} {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := cs.AppsV1().Deployments(namespace).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watching Deployments: %v", err)
	}
	reached := make(chan struct{})
	go func() {
		defer w.Stop()
		seen := 0
		for ev := range w.ResultChan() {
			if _, ok := ev.Object.(*appsv1.Deployment); ok && ev.Type == watch.Added {
				if seen++; seen == n {
					close(reached)
				}
			}
		}
	}()
	return reached
}
