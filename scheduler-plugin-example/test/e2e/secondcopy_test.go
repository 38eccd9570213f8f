//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// TestASecondRunSchedulerIsRefused: two make run-scheduler against one cluster
// would bind the same Pods, each refused the bindings the other made first and
// spreading them as neither would. While one runs and has bound the example's
// Pods, a second fails at once, the first runs on, and the second has written
// nothing: the scheduler configuration and kubeconfig the first wrote are as
// they were. Not parallel: make run-scheduler applies lesson 8's example Nodes
// and Deployment, which the test deletes again before the other tests run.
func TestASecondRunSchedulerIsRefused(t *testing.T) {
	info, err := kittest.CurrentClusterInfo()
	if err != nil {
		t.Fatalf("make run-scheduler's test runs on the kit's local cluster: %v", err)
	}
	root := kittest.RepoRoot()
	examples := filepath.Join(root, "scheduler-plugin-example", "config", "examples")
	t.Cleanup(func() {
		kittest.Kubectl(t, "delete", "--ignore-not-found", "--wait=false",
			"-f", filepath.Join(examples, "deployment.yaml"), "-f", filepath.Join(examples, "nodes.yaml"))
	})
	// make run-scheduler builds bin/scheduler-plugin-example first, a minute or
	// more: built here, as the root Makefile builds it (hack/lib.sh's GOFLAGS),
	// so that its own build finds it up to date, not in a wait bounded by the
	// deadline.
	build := exec.Command("bash", "-c", `source hack/lib.sh && make --no-print-directory -C scheduler-plugin-example build`)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make -C scheduler-plugin-example build: %v\n%s", err, out)
	}
	// The example's Pods an earlier run left (make check runs the suite more
	// than once on one cluster) would look bound before the first copy has
	// written anything: its Deployment goes first, and only Pods made after the
	// first copy started count.
	kittest.Kubectl(t, "delete", "--ignore-not-found", "-f", filepath.Join(examples, "deployment.yaml"))
	started := time.Now().Truncate(time.Second)
	env := []string{"KIT_CLUSTER=" + info.Name}
	first := kittest.StartTarget(t, "run-scheduler", env, "run-scheduler")

	cs := kittest.Clientset(t)
	kittest.Eventually(t, deadline, "the first make run-scheduler to bind the example's Pods (app=zonespread-example)", func(ctx context.Context) (bool, error) {
		if first.Exited() {
			t.Fatal("the first make run-scheduler exited")
		}
		pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=zonespread-example"})
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
	out := filepath.Join(root, "_output", "scheduler-plugin-example")
	before := snapshot(t, filepath.Join(out, "scheduler-config.yaml"), filepath.Join(out, "kubeconfig"))

	if err := kittest.SecondCopyRefused(t, first, deadline, env, "run-scheduler"); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, filepath.Join(out, "scheduler-config.yaml"), filepath.Join(out, "kubeconfig"))
	for path, was := range before {
		if now := after[path]; !bytes.Equal(now.data, was.data) || !now.mod.Equal(was.mod) {
			t.Errorf("the refused make run-scheduler wrote %s (modified %s, was %s)", path, now.mod, was.mod)
		}
	}
}

// written is a file's content and modification time.
type written struct {
	data []byte
	mod  time.Time
}

// snapshot reads each of paths, which must exist.
func snapshot(t *testing.T, paths ...string) map[string]written {
	t.Helper()
	files := map[string]written{}
	for _, path := range paths {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files[path] = written{data: data, mod: info.ModTime()}
	}
	return files
}
