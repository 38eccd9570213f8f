//go:build e2e

package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

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
	first := startRunScheduler(t)
	out := filepath.Join(kittest.RepoRoot(), "_output", "scheduler-plugin-example")
	before := snapshot(t, filepath.Join(out, "scheduler-config.yaml"), filepath.Join(out, "kubeconfig"))

	if err := kittest.SecondRunRefused(t, first, deadline, "run-scheduler"); err != nil {
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
