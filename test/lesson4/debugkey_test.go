//go:build e2e

package lesson4

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/controller-kit/controller-kit/test/kittest"
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
	kittest.WaitDefaultServiceAccount(t, cs, namespace)
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
	kittest.RequireKubeCopy(t, copyDir)
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
	dlv := kittest.StartProcess(t, "dlv-script", filepath.Join(kittest.RepoRoot(), "bin", "dlv"), "connect", "127.0.0.1:"+port, "--init", script)
	// The Deployments come once its breakpoint is set (delve says
	// "Breakpoint NAME set at", NAME its name or number), the other one first:
	// a breakpoint with no condition stops there.
	kittest.Eventually(t, deadline, "the script to set a breakpoint", func(context.Context) (bool, error) {
		return breakpointSet.MatchString(dlv.Logs()), nil
	})
	for _, ns := range []string{debugKeyOther, debugKeyNamespace} {
		if _, err := cs.AppsV1().Deployments(ns).Create(context.Background(), newPauseDeployment(ns, debugKeyName), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
	}
	if _, err := dlv.Wait(deadline + 30*time.Second); err != nil {
		t.Fatalf("the script did not end (%v): end it with quit -c; its output:\n%s", err, dlv.Logs())
	}
	printed := dlv.Logs()
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
