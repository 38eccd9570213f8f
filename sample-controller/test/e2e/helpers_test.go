//go:build e2e

// Package e2e is sample-controller's conformance suite: each test starts the
// controller as a real process against the kit cluster ($KUBECONFIG), running
// as the ServiceAccount bound to the RBAC in config/rbac (by impersonation), and
// checks one behaviour a user would notice. Run it with `make test-e2e`;
// `make test-e2e RECONCILER=stub` shows which behaviours your own Reconciler
// still lacks.
//
// Every test works in a namespace of its own with a controller of its own
// (started with --namespace, and a Lease of its own when it elects a leader), so
// no test can see another's objects and they all call t.Parallel: the suite
// takes about as long as its slowest test. `make test-e2e` passes -parallel to
// go test, whose default (the number of CPUs) would run only two at a time on a
// 2-core machine.
package e2e

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	samplev1alpha1 "github.com/controller-kit/controller-kit/sample-controller/pkg/apis/samplecontroller/v1alpha1"
	"github.com/controller-kit/controller-kit/sample-controller/pkg/generated/clientset/versioned"
	"github.com/controller-kit/controller-kit/test/kittest"
)

const (
	// controllerNamespace and serviceAccount are where config/rbac binds the
	// controller's RBAC; the tests impersonate that ServiceAccount.
	controllerNamespace = "sample-controller-system"
	serviceAccount      = "sample-controller"
)

// lessonFile is this suite's row of the lesson table: which lesson it checks,
// the controller to build and one row per check (kittest.Lesson).
//
//go:embed lesson.yaml
var lessonFile []byte

var (
	// deadline bounds every poll: long enough for a loaded 2-core machine, and
	// only reached when a test is going to fail anyway. `make check` shortens it
	// through $KIT_E2E_TIMEOUT.
	deadline = kittest.Deadline(90 * time.Second)
	// suite builds the controller once for every test (suite.Bin) in this tier
	// (suite.TierDir); its checks are in lesson.yaml, which make check reads too.
	suite       = &kittest.Suite{File: lessonFile}
	installOnce sync.Once
	installErr  error
)

func TestMain(m *testing.M) { os.Exit(suite.Run(m)) }

// clients returns clients as the test's own (admin) user, after installing the
// CRD and the shipped RBAC once per run. kittest.Config refuses clusters other
// than the kit's before anything is applied.
func clients(t *testing.T) (kubernetes.Interface, versioned.Interface) {
	t.Helper()
	cfg := kittest.Config(t)
	installOnce.Do(func() {
		rbac, err := filepath.Glob(filepath.Join(suite.TierDir, "config/rbac/*.yaml"))
		if err != nil {
			installErr = err
			return
		}
		for _, manifest := range append([]string{
			filepath.Join(suite.TierDir, "config/crd/samplecontroller.k8s.io_foos.yaml"),
			filepath.Join(suite.TierDir, "config/manager/namespace.yaml"),
		}, rbac...) {
			// A reference solution (make check SOLUTION=...) may replace a manifest.
			path, err := kittest.File(manifest)
			if err != nil {
				installErr = err
				return
			}
			if _, err := kittest.KubectlE("apply", "--server-side", "-f", path); err != nil {
				installErr = fmt.Errorf("applying %s: %w", path, err)
				return
			}
		}
		installErr = kittest.WaitForCRD("foos.samplecontroller.k8s.io", "samplecontroller.k8s.io/v1alpha1", "Foo", 90*time.Second)
	})
	if installErr != nil {
		t.Fatalf("installing the CRD and RBAC: %v", installErr)
	}
	fooClient, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return kittest.Clientset(t), fooClient
}

// startController runs the controller as the shipped ServiceAccount, watching
// only namespace (so tests do not see each other's Foos). At cleanup the test
// fails if the controller was ever refused an API call.
func startController(t *testing.T, name, namespace string, extraArgs ...string) *kittest.Process {
	t.Helper()
	kubeconfig := kittest.ImpersonatingKubeconfig(t, controllerNamespace, serviceAccount)
	args := append([]string{
		"--kubeconfig=" + kubeconfig,
		"--namespace=" + namespace,
		"--reconciler=" + kittest.Reconciler(),
		"-v=2",
	}, extraArgs...)
	p := kittest.StartProcess(t, name, suite.Bin, args...)
	t.Cleanup(func() {
		p.RequireNoLine(t, `"Connected; the API server serves Foos"`, "the API server refused a request (forbidden): it asked for a verb or resource that config/rbac does not grant (the api: lines of make check say which)", "forbidden")
	})
	return p
}

// convergedFoo is the start of many tests: in a new namespace (named from
// prefix), a controller of its own, and a Foo "web" with replicas, waited for
// until its status reports them all available. It returns the clients, the
// namespace and the controller.
func convergedFoo(t *testing.T, prefix string, replicas int32) (kubernetes.Interface, versioned.Interface, string, *kittest.Process) {
	t.Helper()
	cs, fooClient := clients(t)
	ns := kittest.Namespace(t, cs, prefix)
	controller := startController(t, "controller", ns)
	createFoo(t, fooClient, newFoo(ns, "web", replicas))
	waitForFooStatus(t, fooClient, ns, "web", replicas)
	return cs, fooClient, ns, controller
}

// newFoo returns a Foo named name asking for a Deployment of the same name.
func newFoo(namespace, name string, replicas int32) *samplev1alpha1.Foo {
	return &samplev1alpha1.Foo{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       samplev1alpha1.FooSpec{DeploymentName: name, Replicas: ptr.To(replicas)},
	}
}

func createFoo(t *testing.T, fooClient versioned.Interface, foo *samplev1alpha1.Foo) *samplev1alpha1.Foo {
	t.Helper()
	created, err := fooClient.SamplecontrollerV1alpha1().Foos(foo.Namespace).Create(context.Background(), foo, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating Foo %s: %v", foo.Name, err)
	}
	return created
}

// waitForDeployment waits until Deployment namespace/name exists and cond holds.
func waitForDeployment(t *testing.T, cs kubernetes.Interface, namespace, name, what string, cond func(*appsv1.Deployment) bool) *appsv1.Deployment {
	t.Helper()
	var got *appsv1.Deployment
	kittest.Eventually(t, deadline, what, func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = d
		return cond(d), nil
	})
	return got
}

// waitForFooStatus waits until the Foo's status has available replicas and
// describes its current generation.
func waitForFooStatus(t *testing.T, fooClient versioned.Interface, namespace, name string, available int32) {
	t.Helper()
	kittest.Eventually(t, deadline, fmt.Sprintf("Foo %s status.availableReplicas = %d", name, available), func(ctx context.Context) (bool, error) {
		foo, err := fooClient.SamplecontrollerV1alpha1().Foos(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return foo.Status.AvailableReplicas == available && foo.Status.ObservedGeneration == foo.Generation, nil
	})
}

// waitForEvent waits for an event with the given type and reason on the named
// object and returns its message.
func waitForEvent(t *testing.T, cs kubernetes.Interface, namespace, object, eventType, reason string) string {
	t.Helper()
	var message string
	selector := fields.Set{"involvedObject.name": object, "type": eventType, "reason": reason}.String()
	kittest.Eventually(t, deadline, fmt.Sprintf("a %s %s event on %s", eventType, reason, object), func(ctx context.Context) (bool, error) {
		events, err := cs.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: selector})
		if err != nil || len(events.Items) == 0 {
			return false, err
		}
		message = events.Items[0].Message
		return true, nil
	})
	return message
}

// runningPods counts the pods of a Foo's Deployment that run on a node.
func runningPods(ctx context.Context, cs kubernetes.Interface, namespace, deploymentName string) (int, error) {
	pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + deploymentName})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n, nil
}

// gone reports whether err says the object does not exist.
func gone(err error) (bool, error) {
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}
