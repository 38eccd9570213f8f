package kittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Two `make local-up` of one cluster at once used to end, minutes later, in
// "no context exists with the name ...". While one holds the cluster's lock, a
// second refuses at once (exit 1), names the command that holds it, and changes
// nothing: no kubeconfig, no cluster state. Needs no cluster: the lock comes first.
func TestSecondLocalUpOfOneClusterRefusesAtOnce(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock here: local-up.sh does not lock (util-linux)")
	}
	root := RepoRoot()
	name := "kittest-lock"
	out := filepath.Join(root, "_output")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	lock, note := filepath.Join(out, ".cluster-"+name+".lock"), filepath.Join(out, ".cluster-"+name+".holder")
	t.Cleanup(func() { os.Remove(lock); os.Remove(note) })
	if err := os.WriteFile(note, []byte("KIT_CLUSTER="+name+" make local-up (pid 4242, since 12:00:00)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The other command: holds the lock as local-up.sh does, until killed.
	holder := exec.Command("flock", lock, "sleep", "60")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	for deadline := time.Now().Add(10 * time.Second); exec.Command("flock", "-n", lock, "true").Run() == nil; {
		if time.Now().After(deadline) {
			t.Fatal("the holder never took the lock")
		}
		time.Sleep(50 * time.Millisecond)
	}

	cmd := exec.Command(filepath.Join(root, "hack", "cluster", "local-up.sh"))
	cmd.Env = append(os.Environ(), "KIT_CLUSTER="+name)
	stderr, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != 1 {
		t.Errorf("local-up.sh exited %d (%v), want 1 at once", code, err)
	}
	for _, want := range []string{"local cluster '" + name + "' is being started by another command", "pid 4242", "Nothing was changed", "make local-up again"} {
		if !strings.Contains(string(stderr), want) {
			t.Errorf("local-up.sh does not say %q:\n%s", want, stderr)
		}
	}
	for _, left := range []string{"kubeconfig-" + name, "cluster-" + name + ".json", "kwok/clusters/" + name} {
		if _, err := os.Stat(filepath.Join(out, left)); err == nil {
			t.Errorf("_output/%s exists after the refusal", left)
		}
	}
}
