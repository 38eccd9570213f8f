//go:build e2e

package lesson4

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/controller-kit/controller-kit/hack/kittest"
)

const (
	// debugKeyScript is where the exercise's script of delve commands lives in
	// the copy of Kubernetes' source (docs/lessons/04-changing-kubernetes.md,
	// "Exercise: debug-key").
	debugKeyScript = "kit-debug/deployment-key.dlv"
	// debugKeyNamespace and debugKeyName name the one Deployment the script's
	// breakpoint must stop for; debugKeyOther is a namespace with a Deployment
	// of the same name, which it must let pass.
	debugKeyNamespace = "debug-key"
	debugKeyOther     = "debug-key-other"
	debugKeyName      = "web"
)

// breakpointSet matches delve's answer to a break command.
var breakpointSet = regexp.MustCompile(`Breakpoint \S+ set at`)

// lockedBuffer is a bytes.Buffer that a process writes to while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// freshNamespace deletes namespace if it exists, waits until it is gone,
// creates it again and waits for its ServiceAccount "default" (the
// ReplicaSets' Pods need it); it is deleted at cleanup.
func freshNamespace(t *testing.T, cs kubernetes.Interface, namespace string) {
	t.Helper()
	ctx := context.Background()
	if err := cs.CoreV1().Namespaces().Delete(ctx, namespace, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	kittest.Eventually(t, kittest.NamespaceDeletionDeadline(deadline), "namespace "+namespace+" from an earlier run to be gone", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), namespace, metav1.DeleteOptions{}) })
	kittest.Eventually(t, deadline, "the ServiceAccount default in "+namespace, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(namespace).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

// debugScript runs hack/debug.sh with args against the cluster under test and
// the copy under check, on port; it returns the combined output.
func debugScript(t *testing.T, port string, args ...string) (string, error) {
	t.Helper()
	info, err := kittest.CurrentClusterInfo()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(kittest.RepoRoot(), "hack", "debug.sh"), args...)
	cmd.Env = append(os.Environ(), kittest.ClusterEnv+"="+info.Name, "KUBE_SRC="+copyDir, "PORT="+port, "PKGS=")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestExerciseDebugKeyScriptStopsAtTheNamedDeployment runs the learner's script
// of delve commands against the cluster's kube-controller-manager under the
// debugger (make debug) while two Deployments named web are created, in
// debug-key-other and then in debug-key: what it prints must name the key of
// the second and not of the first, it must end by itself, and it must leave the
// controller manager running with no breakpoint of its own, so that the
// Deployment rolls out.
func TestExerciseDebugKeyScriptStopsAtTheNamedDeployment(t *testing.T) {
	kittest.Exercise(t, "debug-key")
	requireCopy(t)
	script := filepath.Join(copyDir, debugKeyScript)
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("no script of delve commands at %s (%v): write it there, in your copy", script, err)
	}
	cs := kittest.Clientset(t)
	// Both namespaces before the debugger: their ServiceAccounts come from the
	// controller manager, which the script halts.
	freshNamespace(t, cs, debugKeyOther)
	freshNamespace(t, cs, debugKeyNamespace)

	port, err := kittest.FreeAddressE()
	if err != nil {
		t.Fatal(err)
	}
	port = port[strings.LastIndex(port, ":")+1:]
	if out, err := debugScript(t, port, "debug", component); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 3 {
			t.Fatalf("%s is under the debugger already: the check runs make debug itself; run make undebug WHAT=%s first", component, component)
		}
		t.Fatalf("make debug WHAT=%s: %v\n%s", component, err, out)
	}
	t.Cleanup(func() {
		if out, err := debugScript(t, port, "undebug", component); err != nil {
			t.Errorf("make undebug WHAT=%s: %v\n%s", component, err, out)
		}
	})

	// The script runs as a learner runs it, with nothing to read on its input.
	ctx, cancel := context.WithTimeout(context.Background(), deadline+30*time.Second)
	defer cancel()
	var out lockedBuffer
	dlv := exec.CommandContext(ctx, filepath.Join(kittest.RepoRoot(), "bin", "dlv"), "connect", "127.0.0.1:"+port, "--init", script)
	dlv.Stdout, dlv.Stderr = &out, &out
	if err := dlv.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- dlv.Wait() }()
	// The Deployments come once its breakpoint is set (delve says
	// "Breakpoint NAME set at", NAME its name or number), the other one first:
	// a breakpoint with no condition stops there.
	kittest.Eventually(t, deadline, "the script to set a breakpoint", func(context.Context) (bool, error) {
		return breakpointSet.MatchString(out.String()), nil
	})
	for _, ns := range []string{debugKeyOther, debugKeyNamespace} {
		if _, err := cs.AppsV1().Deployments(ns).Create(context.Background(), newDebugDeployment(ns), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
	}
	select {
	case err := <-done:
		if err != nil && ctx.Err() != nil {
			t.Fatalf("the script did not end within %s: end it with quit -c; its output:\n%s", deadline+30*time.Second, out.String())
		}
	case <-ctx.Done():
		<-done
		t.Fatalf("the script did not end within %s: end it with quit -c; its output:\n%s", deadline+30*time.Second, out.String())
	}
	printed := out.String()
	want, other := `"`+debugKeyNamespace+"/"+debugKeyName+`"`, `"`+debugKeyOther+"/"+debugKeyName+`"`
	if !strings.Contains(printed, want) || strings.Contains(printed, other) {
		t.Fatalf("the script printed %s: %v, and %s: %v; want the first only (a condition on the key, then print key); its output:\n%s",
			want, strings.Contains(printed, want), other, strings.Contains(printed, other), printed)
	}
	kittest.Eventually(t, deadline, "Deployment "+debugKeyNamespace+"/"+debugKeyName+" to roll out after the script (the controller manager runs on, with no breakpoint left: clearall before quit -c)", func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments(debugKeyNamespace).Get(ctx, debugKeyName, metav1.GetOptions{})
		return err == nil && d.Status.AvailableReplicas == 1, err
	})
}

// newDebugDeployment returns the Deployment web of one replica of pause in
// namespace.
func newDebugDeployment(namespace string) *appsv1.Deployment {
	labels := map[string]string{"app": debugKeyName}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: debugKeyName, Namespace: namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
}
