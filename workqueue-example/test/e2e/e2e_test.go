//go:build e2e

// Package e2e is workqueue-example's conformance suite: each test starts the
// controller as a real process against the kit cluster ($KUBECONFIG), running as
// the ServiceAccount bound to the RBAC in config/rbac (by impersonation), and
// checks one behaviour a user would notice. Run it with `make test-e2e`;
// `make test-e2e RECONCILER=stub` shows which behaviours the stub still lacks.
// Every test runs in parallel (t.Parallel): each works in a namespace of its
// own, with a controller of its own where it needs one, so a failing check
// waits out its deadline beside the others instead of after them.
package e2e

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/controller-kit/controller-kit/test/kittest"
)

const (
	// controllerNamespace and serviceAccount are where config/rbac binds the
	// controller's ClusterRole; the tests impersonate that ServiceAccount.
	controllerNamespace = "workqueue-example-system"
	serviceAccount      = "workqueue-example"
	// phaseLabel is the label the reference Reconciler keeps equal to the phase.
	phaseLabel = "controller-kit.dev/phase"
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
)

func TestMain(m *testing.M) { os.Exit(suite.Run(m)) }

// clientset returns a client as the test's own (admin) user, after applying the
// shipped RBAC once per run. kittest.Clientset refuses clusters other than the
// kit's before anything is applied.
func clientset(t *testing.T) kubernetes.Interface {
	t.Helper()
	cs := kittest.Clientset(t)
	installOnce.Do(func() {
		kittest.Kubectl(t, "apply", "--server-side",
			"-f", filepath.Join(suite.TierDir, "config/manager/namespace.yaml"),
			"-f", manifest(t, "config/rbac/role.yaml"),
			"-f", filepath.Join(suite.TierDir, "config/rbac/service_account.yaml"),
			"-f", filepath.Join(suite.TierDir, "config/rbac-namespaced/service_account.yaml"))
	})
	return cs
}

// manifest returns the path of the tier's file rel, or of its replacement when
// a reference solution is checked (make check SOLUTION=...).
func manifest(t *testing.T, rel string) string {
	t.Helper()
	path, err := kittest.File(filepath.Join(suite.TierDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// startController runs the controller as the shipped ServiceAccount (bound by
// config/rbac) with the Reconciler named by $RECONCILER (default reference) plus
// args. At cleanup it fails the test if the API server's authorizer ever refused
// the controller a request ("... is forbidden: User ... cannot ...": RBAC; an
// admission policy's refusal, also "forbidden", is a test's own doing).
func startController(t *testing.T, args ...string) *kittest.Process {
	t.Helper()
	return startControllerAs(t, serviceAccount, args...)
}

// startControllerAs is startController running as the ServiceAccount sa of
// controllerNamespace. A --reconciler=NAME in args replaces $RECONCILER, so the
// controller gets the flag once.
func startControllerAs(t *testing.T, sa string, args ...string) *kittest.Process {
	t.Helper()
	kubeconfig := kittest.ImpersonatingKubeconfig(t, controllerNamespace, sa)
	flags := []string{"--kubeconfig=" + kubeconfig}
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--reconciler=") }) {
		flags = append(flags, "--reconciler="+kittest.Reconciler())
	}
	args = append(flags, args...)
	p := kittest.StartProcess(t, "workqueue-example", suite.Bin, args...)
	t.Cleanup(func() {
		p.RequireNoLine(t, `"Starting workers"`, "the API server refused the controller a request (forbidden): it asked for a verb or resource that config/rbac does not grant (the api: lines of make check say which)", "forbidden: User")
	})
	return p
}

// createPod creates a Pod that kwok (or a kind node) will run.
func createPod(t *testing.T, cs kubernetes.Interface, namespace, name string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	if _, err := cs.CoreV1().Pods(namespace).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Pod %s/%s: %v", namespace, name, err)
	}
}

func TestPodsGetAPhaseLabelThatFollowsThemToRunning(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	ns := kittest.Namespace(t, cs, "wq-label")
	start := time.Now()
	p := startController(t, "--namespace="+ns)

	names := []string{"web-1", "web-2", "web-3"}
	for _, name := range names {
		createPod(t, cs, ns, name)
	}
	kittest.Eventually(t, deadline, "every Pod to run with "+phaseLabel+"=Running", func(ctx context.Context) (bool, error) {
		for _, name := range names {
			pod, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if pod.Status.Phase != corev1.PodRunning || pod.Labels[phaseLabel] != string(corev1.PodRunning) {
				return false, fmt.Errorf("Pod %s: phase %q, label %q", name, pod.Status.Phase, pod.Labels[phaseLabel])
			}
		}
		return true, nil
	})

	// Writes are counted where they happen: in the API server's audit log. First
	// the label writes must be there, or the count below would prove nothing.
	if len(controllerWrites(t, ns, start)) == 0 {
		t.Fatalf("the audit log shows no write of the controller in %s, although it labelled the Pods", ns)
	}

	// Now wake the Reconciler for every Pod without changing anything it owns (an
	// annotation of ours), then break one label on purpose. The broken label must
	// be fixed, which also shows the events after the annotations were
	// reconciled; the annotations must cost nothing: one write in all.
	touched := time.Now()
	for _, name := range names {
		kittest.Kubectl(t, "-n", ns, "annotate", "pod", name, "controller-kit.dev/e2e-touched=yes")
	}
	kittest.Kubectl(t, "-n", ns, "label", "--overwrite", "pod", "web-1", phaseLabel+"=Wrong")
	kittest.Eventually(t, deadline, "the broken label on web-1 to be set back to Running", func(ctx context.Context) (bool, error) {
		pod, err := cs.CoreV1().Pods(ns).Get(ctx, "web-1", metav1.GetOptions{})
		return err == nil && pod.Labels[phaseLabel] == string(corev1.PodRunning), err
	})
	// The API server logs a request a moment after answering it, and the other
	// Pods' reconciles may still be running: a generous pause before counting.
	time.Sleep(3 * time.Second)
	writes := controllerWrites(t, ns, touched)
	if len(writes) != 1 || writes[0].Name != "web-1" {
		t.Errorf("after the Pods were annotated (nothing the controller owns changed) and web-1's label was broken, "+
			"the controller wrote %d times, want once (web-1's label); write only when the label differs:\n%s",
			len(writes), strings.Join(entryLines(writes), "\n"))
	}
	p.RequireNoLine(t, "Starting workers", "reconciles failed", "Reconcile failed")
}

// controllerWrites returns the writes to Pods of namespace that the controller
// (as its ServiceAccount) sent since since, from the API server's audit log.
func controllerWrites(t *testing.T, namespace string, since time.Time) []kittest.AuditEntry {
	t.Helper()
	user := "system:serviceaccount:" + controllerNamespace + ":" + serviceAccount
	return kittest.Writes(t, since, func(e kittest.AuditEntry) bool {
		return e.User == user && e.Namespace == namespace && e.Resource == "pods"
	})
}

// entryLines formats audit entries one per line.
func entryLines(entries []kittest.AuditEntry) []string {
	lines := make([]string, len(entries))
	for i, e := range entries {
		lines[i] = "  " + e.String()
	}
	return lines
}

func TestDeletedPodIsLoggedAsGoneWithoutErrorOrRetry(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	ns := kittest.Namespace(t, cs, "wq-delete")
	p := startController(t, "--namespace="+ns)

	createPod(t, cs, ns, "p1")
	kittest.Eventually(t, deadline, "the controller to reconcile Pod p1", func(context.Context) (bool, error) {
		return len(p.Lines(ns+"/p1")) > 0, nil
	})
	if err := cs.CoreV1().Pods(ns).Delete(context.Background(), "p1", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting Pod p1: %v", err)
	}
	kittest.Eventually(t, deadline, "Pod p1 to be gone from the API server", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Pods(ns).Get(ctx, "p1", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})

	// The stub and the reference say it in the same line.
	kittest.Eventually(t, deadline, "a log line saying Pod p1 is gone", func(context.Context) (bool, error) {
		return len(p.Lines(`"Pod is gone, nothing to do"`, `pod="`+ns+`/p1"`)) > 0, nil
	})
	p.RequireNoLine(t, "Starting workers", "the deletion was treated as a failure (error or retry)", "Reconcile failed")
}

func TestNamespacedRoleIsEnoughToReconcileOneNamespace(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	ns := kittest.Namespace(t, cs, "wq-role")
	kittest.Kubectl(t, "-n", ns, "apply", "--server-side", "-f", manifest(t, "config/rbac-namespaced/role.yaml"))
	// This ServiceAccount has no ClusterRole: only the Role in ns, in force
	// once the authorizer has seen its binding.
	for _, verb := range []string{"list", "watch", "patch"} {
		kittest.WaitAuthorized(t, cs, deadline, controllerNamespace, "workqueue-example-namespaced", verb, "pods", ns)
	}
	p := startControllerAs(t, "workqueue-example-namespaced", "--namespace="+ns)

	createPod(t, cs, ns, "p1")
	kittest.Eventually(t, deadline, "Pod p1 to be reconciled", func(context.Context) (bool, error) {
		return len(p.Lines(ns+"/p1")) > 0, nil
	})
	p.RequireNoLine(t, "Starting workers", "reconciles failed", "Reconcile failed")
}

func TestShippedClusterRoleAllowsWatchingEveryNamespace(t *testing.T) {
	t.Parallel()
	clientset(t)
	// The stub only reads, so watching the whole shared cluster changes nothing.
	p := startController(t, "--reconciler=stub")
	kittest.Eventually(t, deadline, "the cluster-wide Pod cache to sync", func(context.Context) (bool, error) {
		return len(p.Lines("Starting workers")) > 0, nil
	})
}

func TestSIGTERMStopsTheControllerCleanly(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	ns := kittest.Namespace(t, cs, "wq-stop")
	p := startController(t, "--namespace="+ns)
	kittest.Eventually(t, deadline, "the workers to start", func(context.Context) (bool, error) {
		return len(p.Lines("Starting workers")) > 0, nil
	})

	p.Signal(syscall.SIGTERM)
	code, err := p.Wait(deadline)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
	if len(p.Lines("Workers stopped")) == 0 {
		t.Error(`no "Workers stopped" in the log: the shutdown did not wait for the workers`)
	}
}

func TestPodBeingDeletedGetsNoWrite(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	ns := kittest.Namespace(t, cs, "wq-deleting")
	startController(t, "--namespace="+ns)

	// A finalizer of the test's own holds the Pod after its deletion, with
	// deletionTimestamp set, for as long as the test needs: the state of every
	// Pod in a namespace being deleted.
	const hold = "controller-kit.dev/e2e-hold"
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: ns, Finalizers: []string{hold}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}},
	}
	if _, err := cs.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Pod held: %v", err)
	}
	t.Cleanup(func() {
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		if _, err := cs.CoreV1().Pods(ns).Patch(context.Background(), "held", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("removing the finalizer %s from Pod held: %v", hold, err)
		}
	})
	kittest.Eventually(t, deadline, "Pod held to be labelled "+phaseLabel+"=Running", func(ctx context.Context) (bool, error) {
		pod, err := cs.CoreV1().Pods(ns).Get(ctx, "held", metav1.GetOptions{})
		return err == nil && pod.Labels[phaseLabel] == string(corev1.PodRunning), err
	})
	if err := cs.CoreV1().Pods(ns).Delete(context.Background(), "held", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting Pod held: %v", err)
	}

	// Break its label while it is going away, then create a Pod the controller
	// must label: once that one is labelled, the controller has seen the change.
	deleting := time.Now()
	kittest.Kubectl(t, "-n", ns, "label", "--overwrite", "pod", "held", phaseLabel+"=Wrong")
	createPod(t, cs, ns, "sentinel")
	kittest.Eventually(t, deadline, "Pod sentinel to be labelled "+phaseLabel+"=Running", func(ctx context.Context) (bool, error) {
		pod, err := cs.CoreV1().Pods(ns).Get(ctx, "sentinel", metav1.GetOptions{})
		return err == nil && pod.Labels[phaseLabel] == string(corev1.PodRunning), err
	})
	time.Sleep(2 * time.Second)

	var ofHeld []kittest.AuditEntry
	for _, w := range controllerWrites(t, ns, deleting) {
		if w.Name == "held" {
			ofHeld = append(ofHeld, w)
		}
	}
	if len(ofHeld) > 0 {
		t.Errorf("the controller wrote to Pod held after its deletion, although a Pod with deletionTimestamp set is going away and gets no write:\n%s",
			strings.Join(entryLines(ofHeld), "\n"))
	}
}

func TestMetricsShowTheQueueAndTheReconciles(t *testing.T) {
	t.Parallel()
	cs := clientset(t)
	ns := kittest.Namespace(t, cs, "wq-metrics")
	addr := kittest.FreeAddress(t)
	startController(t, "--namespace="+ns, "--metrics-bind-address="+addr)

	names := []string{"m-1", "m-2", "m-3"}
	for _, name := range names {
		createPod(t, cs, ns, name)
	}
	// Each Pod is reconciled at least once (the reference also for its own label
	// write and the Pod's changes on its way to Running); then the queue is idle.
	kittest.Eventually(t, deadline, "/metrics to show the queue's and the reconciles' series of an idle loop", func(ctx context.Context) (bool, error) {
		m, err := kittest.Scrape(ctx, "http://"+addr+"/metrics")
		if err != nil {
			return false, err
		}
		err = m.CheckLoop("workqueue-example", "workqueue-example", len(names))
		if err == nil && labelled(ctx, cs, ns, names) {
			// A Reconciler that wrote the labels sent requests: the client
			// observed them (its informers' watches alone are none).
			err = m.CheckClient()
		}
		return err == nil, err
	})
	if err := kittest.GetOK(context.Background(), "http://"+addr+"/debug/pprof/"); err != nil {
		t.Error(err)
	}
}

// labelled reports whether every Pod of names in namespace carries phaseLabel.
func labelled(ctx context.Context, cs kubernetes.Interface, namespace string, names []string) bool {
	for _, name := range names {
		pod, err := cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil || pod.Labels[phaseLabel] == "" {
			return false
		}
	}
	return true
}
