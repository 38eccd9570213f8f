//go:build e2e

package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// exampleLabel selects the Pods of the example Deployment make run-scheduler
// applies (config/examples/deployment.yaml).
const exampleLabel = "app=zonespread-example"

// startRunScheduler runs make run-scheduler as a learner does against the
// cluster under test (kittest.StartRunTarget, with env added) and returns once
// its scheduler has bound Pods of the example Deployment that this run made.
// At cleanup it deletes what make run-scheduler applied, its Deployment and its
// Nodes.
//
// Two things would otherwise let the wait end before this run's scheduler
// acts. The example's Pods an earlier run left (the learner's own make
// run-scheduler, or an earlier check: make check runs the suite more than once
// on one cluster, and a deleted Deployment's Pods stay a while Terminating)
// are bound already: the Deployment goes first, and only Pods created after
// this run started, and not being deleted, count. And make run-scheduler
// builds bin/scheduler-plugin-example first, a minute or more: it is built
// here, as the root Makefile builds it (hack/lib.sh's GOFLAGS), so that the
// target's own build finds it up to date instead of running inside a wait the
// deadline bounds.
func startRunScheduler(t *testing.T, env ...string) *kittest.Process {
	t.Helper()
	root := kittest.RepoRoot()
	examples := filepath.Join(root, "scheduler-plugin-example", "config", "examples")
	t.Cleanup(func() {
		if _, err := kittest.KubectlE("delete", "--ignore-not-found", "--wait=false",
			"-f", filepath.Join(examples, "deployment.yaml"), "-f", filepath.Join(examples, "nodes.yaml")); err != nil {
			t.Logf("cannot delete what make run-scheduler applied: %v", err)
		}
	})
	build := exec.Command("bash", "-c", `source hack/lib.sh && make --no-print-directory -C scheduler-plugin-example build`)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make -C scheduler-plugin-example build: %v\n%s", err, out)
	}
	kittest.Kubectl(t, "delete", "--ignore-not-found", "-f", filepath.Join(examples, "deployment.yaml"))
	// Creation timestamps have whole seconds.
	started := time.Now().Truncate(time.Second)
	run := kittest.StartRunTarget(t, "run-scheduler", env...)

	cs := kittest.Clientset(t)
	kittest.Eventually(t, deadline, "make run-scheduler to bind the Pods of the example Deployment it applied ("+exampleLabel+", created after it started)",
		func(ctx context.Context) (bool, error) {
			if run.Exited() {
				code, _ := run.Wait(0)
				t.Fatalf("make run-scheduler exited (status %d) before it bound the example's Pods", code)
			}
			pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: exampleLabel})
			if err != nil {
				return false, err
			}
			bound := 0
			for _, p := range pods.Items {
				if p.DeletionTimestamp != nil || p.CreationTimestamp.Time.Before(started) {
					continue // an earlier run's
				}
				if p.Spec.NodeName == "" {
					return false, nil
				}
				bound++
			}
			return bound > 0, nil
		})
	return run
}
