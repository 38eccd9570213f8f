package kittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// make test runs its checks of the kit's files through hack/once.sh: a command
// that passed is not run again while its inputs are the same, one whose inputs
// changed (here a KIT_ variable, part of the key as go test's cache keys on the
// variables a test reads) runs again, and one that failed is never remembered.
func TestOnceRunsACommandAgainOnlyWhenItsInputsChanged(t *testing.T) {
	root := RepoRoot()
	name := "kittest-once"
	t.Cleanup(func() { os.Remove(filepath.Join(root, "_output", name+".key")) })
	runs := filepath.Join(t.TempDir(), "runs")
	once := func(env string, command string) error {
		cmd := exec.Command(filepath.Join(root, "hack", "once.sh"), name, "sh", "-c", command)
		cmd.Env = append(os.Environ(), "KIT_ONCE_TEST="+env)
		out, err := cmd.CombinedOutput()
		t.Logf("once.sh (KIT_ONCE_TEST=%s, %s): %v\n%s", env, command, err, out)
		return err
	}
	count := func() int {
		b, _ := os.ReadFile(runs)
		return strings.Count(string(b), "ran\n")
	}
	record := "echo ran >> " + runs

	for i, step := range []struct {
		env, command string
		wantErr      bool
		wantRuns     int
	}{
		{"a", record, false, 1},             // first time: runs
		{"a", record, false, 1},             // nothing changed: not again
		{"b", record, false, 2},             // an input changed: runs again
		{"c", record + "; exit 1", true, 3}, // fails
		{"c", record + "; exit 1", true, 4}, // a failure is not remembered
	} {
		if err := once(step.env, step.command); (err != nil) != step.wantErr {
			t.Fatalf("step %d: once.sh returned %v, want an error: %v", i, err, step.wantErr)
		}
		if got := count(); got != step.wantRuns {
			t.Fatalf("step %d: the command ran %d times in all, want %d", i, got, step.wantRuns)
		}
	}
}
