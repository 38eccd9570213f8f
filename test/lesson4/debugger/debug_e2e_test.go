//go:build e2e

package debugger

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/controller-kit/controller-kit/test/kittest"
	"github.com/controller-kit/controller-kit/test/kittest/delve"
)

// deadline bounds every wait; make debug's own build and restart get longer.
var deadline = kittest.Deadline(90 * time.Second)

const (
	// syncDeployment is the Deployment controller's sync function, as `break` names it.
	syncDeployment = "k8s.io/kubernetes/pkg/controller/deployment.(*DeploymentController).syncDeployment"
	// fooReconcile is lesson 2's reference Reconciler (sample-controller/pkg/controller/reference.go).
	fooReconcile = "github.com/controller-kit/controller-kit/sample-controller/pkg/controller.(*FooReconciler).Reconcile"
	// buildDeadline bounds make debug: a first debug build recompiles packages
	// (11 min 4 s for kube-controller-manager's on 2026-12-07, 2 cores at a
	// load average near 20; seconds once cached).
	buildDeadline = 40 * time.Minute
	// lessonPage is the lesson that quotes the stack at syncDeployment.
	lessonPage = "docs/lessons/04-changing-kubernetes.md"
	// stackDepth is how deep a stopped goroutine's stack is read: more than
	// any quote shows.
	stackDepth = 50
)

// cluster returns the kit local cluster $KUBECONFIG reaches; the test needs one,
// whose components make debug can swap.
func cluster(t *testing.T) kittest.ClusterInfo {
	t.Helper()
	info, err := kittest.CurrentClusterInfo()
	if err != nil {
		t.Fatalf("this test needs a kit local cluster (make test-debug makes one): %v", err)
	}
	return info
}

// runMake runs make TARGET VAR=... at the repository root for the cluster, and
// fails the test when make fails, printing its output (which also goes to standard error as it comes).
func runMake(t *testing.T, info kittest.ClusterInfo, timeout time.Duration, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", append([]string{"--no-print-directory"}, args...)...)
	cmd.Dir = kittest.RepoRoot()
	cmd.Env = append(os.Environ(), kittest.ClusterEnv+"="+info.Name, "KUBECONFIG="+info.Kubeconfig)
	// make's progress lines (a first debug build's) show as they come.
	var out bytes.Buffer
	cmd.Stdout = io.MultiWriter(&out, os.Stderr)
	cmd.Stderr = cmd.Stdout
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	t.Logf("make %s: done in %.0f s", strings.Join(args, " "), time.Since(start).Seconds())
	return out.String()
}

// freePort returns a port on 127.0.0.1 nothing listens on.
func freePort(t *testing.T) string {
	t.Helper()
	addr, err := kittest.FreeAddressE()
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(addr, ":")
	return port
}

// newDeployment returns a Deployment of replicas Pods on the kwok nodes.
func newDeployment(namespace, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.com/app:1"}}},
			},
		},
	}
}

// requireRolledOut waits until the Deployment has all its Pods available.
func requireRolledOut(t *testing.T, cs kubernetes.Interface, namespace, name string) {
	t.Helper()
	kittest.Eventually(t, deadline, "Deployment "+namespace+"/"+name+" to roll out", func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		want := ptr.Deref(d.Spec.Replicas, 1)
		return d.Status.ObservedGeneration == d.Generation && d.Status.UpdatedReplicas == want &&
			d.Status.AvailableReplicas == want, nil
	})
}

// requireSecondDebugRefused runs make debug WHAT=kube-scheduler on port, the
// delve port a running make debug holds, and fails the test unless it fails
// within deadline (refused at once, before any build: hack/lib/debug.sh's
// hold_port), leaving the cluster's kube-scheduler on the binary it ran and
// the first session's delve listening.
func requireSecondDebugRefused(t *testing.T, info kittest.ClusterInfo, port string) {
	t.Helper()
	binary := func() string {
		path, err := kittest.RunningBinary(info.Name, "kube-scheduler")
		if err != nil {
			t.Fatal(err)
		}
		return path
	}
	was := binary()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	second := exec.CommandContext(ctx, "make", "--no-print-directory", "debug", "WHAT=kube-scheduler", "PORT="+port)
	second.Dir = kittest.RepoRoot()
	second.Env = append(os.Environ(), kittest.ClusterEnv+"="+info.Name, "KUBECONFIG="+info.Kubeconfig)
	out, err := second.CombinedOutput()
	switch {
	case ctx.Err() != nil:
		t.Fatalf("a second make debug on port %s, which make debug WHAT=kube-controller-manager holds, still ran after %s: it should be refused at once, naming the first\n%s", port, deadline, out)
	case err == nil:
		t.Fatalf("a second make debug on port %s, which make debug WHAT=kube-controller-manager holds, succeeded; want it refused\n%s", port, out)
	}
	if now := binary(); now != was {
		t.Errorf("the refused make debug WHAT=kube-scheduler swapped the cluster's kube-scheduler: it runs %s, was %s", now, was)
	}
	if !listening("127.0.0.1:" + port) {
		t.Errorf("after the refused second make debug, nothing listens on delve's port 127.0.0.1:%s any more", port)
	}
}

// requireNoDebugger fails the test when anything make debug started is left:
// a process running the debug build, or delve on its port.
func requireNoDebugger(t *testing.T, binary, port string) {
	t.Helper()
	requireGone(t, binary, goneWithin)
	if listening("127.0.0.1:" + port) {
		t.Fatalf("something still listens on delve's port 127.0.0.1:%s after make undebug", port)
	}
}

// requireStoppedAt waits until bp stops the program (WaitForBreakpoint, within
// deadline), fails the test unless expr evaluates there to the string want
// (delve shows a string quoted; either form is accepted), and returns the
// stopped goroutine's stack, innermost first.
func requireStoppedAt(t *testing.T, d *delve.Client, stopped <-chan delve.Result, bp delve.Breakpoint, expr, want string) []string {
	t.Helper()
	st := d.WaitForBreakpoint(t, stopped, bp, deadline)
	gid := st.CurrentThread.GoroutineID
	stack, err := d.Stack(gid, stackDepth)
	if err != nil {
		t.Fatal(err)
	}
	d.WantString(t, gid, expr, want, bp.FunctionName)
	return stack
}

func TestDebuggerStopsTheDeploymentControllerAtItsSyncFunction(t *testing.T) {
	// Read first: a quote that lost its marker fails before any build.
	quoted, err := delve.ReadQuotedStack(lessonPage, "syncDeployment")
	if err != nil {
		t.Fatal(err)
	}
	info := cluster(t)
	cs := kittest.Clientset(t)
	port := freePort(t)
	runMake(t, info, buildDeadline, "debug", "WHAT=kube-controller-manager", "PORT="+port)
	state, err := readState(filepath.Join(kittest.RepoRoot(), "_output", "debug", info.Name, "kube-controller-manager.env"))
	if err != nil {
		t.Fatal(err)
	}
	undone := false
	undebug := func() {
		undone = true
		runMake(t, info, 3*time.Minute, "undebug", "WHAT=kube-controller-manager")
	}
	t.Cleanup(func() {
		if !undone {
			undebug()
		}
	})
	requireSecondDebugRefused(t, info, port)

	// The namespace first: its ServiceAccount comes from this controller manager,
	// which cannot make it while halted.
	namespace := kittest.Namespace(t, cs, "debug-deployment")
	d, err := delve.Dial("127.0.0.1:" + port)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Halt(); err != nil {
		t.Fatal(err)
	}
	const name = "dbg"
	key := namespace + "/" + name
	bp, err := d.Break(syncDeployment, fmt.Sprintf("key == %q", key))
	if err != nil {
		t.Fatal(err)
	}
	stopped := d.ContinueUntilStop()
	ctx := context.Background()
	if _, err := cs.AppsV1().Deployments(namespace).Create(ctx, newDeployment(namespace, name, 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The stack the lesson quotes, taken again: its frames, in order.
	delve.RequireQuotedStack(t, quoted, requireStoppedAt(t, d, stopped, bp, "key", key))
	// Paused, the controller has not scaled anything: no ReplicaSet yet.
	if rss, err := cs.AppsV1().ReplicaSets(namespace).List(ctx, metav1.ListOptions{}); err != nil || len(rss.Items) != 0 {
		t.Fatalf("while syncDeployment is paused, the namespace has ReplicaSets %v (err %v); want none", rss, err)
	}
	if err := d.Clear(bp.ID); err != nil {
		t.Fatal(err)
	}
	d.DetachRunning()
	requireRolledOut(t, cs, namespace, name)

	undebug()
	requireNoDebugger(t, state["BINARY"], port)
	// Back on the binary it ran before, the controller manager works again.
	if _, err := cs.AppsV1().Deployments(namespace).Create(ctx, newDeployment(namespace, name+"-after", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	requireRolledOut(t, cs, namespace, name+"-after")
}

func TestDebuggerStopsTheFooReconciler(t *testing.T) {
	info := cluster(t)
	cs := kittest.Clientset(t)
	port := freePort(t)

	// make debug WHAT=sample-controller runs in the foreground, as make run-sample
	// does: started here in a process group of its own, ended with the SIGINT
	// Ctrl-C would send it.
	logPath := filepath.Join(kittest.TestDir(t), "make-debug-sample-controller.log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command("make", "--no-print-directory", "debug", "WHAT=sample-controller", "PORT="+port)
	cmd.Dir = kittest.RepoRoot()
	cmd.Env = append(os.Environ(), kittest.ClusterEnv+"="+info.Name, "KUBECONFIG="+info.Kubeconfig)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() { _ = cmd.Wait(); close(ended) }()
	stop := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-ended:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-ended
			t.Errorf("make debug WHAT=sample-controller did not end within 30 s of SIGINT (killed now)")
		}
	}
	t.Cleanup(func() {
		select {
		case <-ended:
		default:
			stop()
		}
		if t.Failed() {
			out, _ := os.ReadFile(logPath)
			t.Logf("make debug WHAT=sample-controller's output:\n%s", out)
		}
	})
	if err := delve.WaitListening("127.0.0.1:"+port, buildDeadline, ended); err != nil {
		t.Fatalf("make debug WHAT=sample-controller: %v", err)
	}
	state, err := readState(filepath.Join(kittest.RepoRoot(), "_output", "debug", "sample-controller.env"))
	if err != nil {
		t.Fatal(err)
	}

	namespace := kittest.Namespace(t, cs, "debug-foo")
	d, err := delve.Dial("127.0.0.1:" + port)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Halt(); err != nil {
		t.Fatal(err)
	}
	foo := kittest.NewFoo(namespace, 1, 1)
	bp, err := d.Break(fooReconcile, fmt.Sprintf("key.Namespace == %q && key.Name == %q", namespace, foo.GetName()))
	if err != nil {
		t.Fatal(err)
	}
	stopped := d.ContinueUntilStop()
	dyn, err := dynamic.NewForConfig(kittest.Config(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := dyn.Resource(kittest.FooGVR).Namespace(namespace).Create(ctx, foo, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stack := requireStoppedAt(t, d, stopped, bp, "key.Name", foo.GetName())
	requireChain(t, stack, ".(*FooReconciler).Reconcile", ".processNextWorkItem", ".runWorker")
	if err := d.Clear(bp.ID); err != nil {
		t.Fatal(err)
	}
	d.DetachRunning()
	kittest.Eventually(t, deadline, "the Foo's Deployment", func(ctx context.Context) (bool, error) {
		dep, err := cs.AppsV1().Deployments(namespace).Get(ctx, foo.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		owner := metav1.GetControllerOf(dep)
		return owner != nil && owner.Kind == "Foo" && owner.Name == foo.GetName(), nil
	})

	stop()
	runMake(t, info, time.Minute, "undebug", "WHAT=sample-controller")
	requireNoDebugger(t, state["BINARY"], port)
}
