package kittest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// HeldElsewhereExit is the exit status of a foreground target of the kit (make
// run-scheduler, run-csi, run-aggregated, run-workqueue, debug, ...) that refuses
// to start because another command holds what it needs: hack/lib/hold.sh's
// KIT_HOLD_REFUSED, to which a unit test holds it.
const HeldElsewhereExit = 3

// StartTarget runs `make ARGS...` at the repository root (a target and its
// variables, such as "run-scheduler"), with env added to the test's environment,
// in a process group of its own, so that Stop ends make and all it started, the
// way Ctrl-C in a terminal does. Its output goes to <name>.log in TestDir; at
// cleanup it is stopped as StartProcess's are.
func StartTarget(t testing.TB, name string, env []string, args ...string) *Process {
	t.Helper()
	logPath := filepath.Join(TestDir(t), name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", append([]string{"--no-print-directory", "-C", RepoRoot()}, args...)...)
	// The target runs as a learner types it in a shell: without the make
	// settings of a make that runs this test (make check RECONCILER=stub
	// hands its RECONCILER=stub down in MAKEFLAGS, which would outweigh env).
	cmd.Env = append(withoutMakeSettings(os.Environ()), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p, err := startLogged(name, cmd, logFile, true)
	if err != nil {
		t.Fatalf("starting make %s: %v", strings.Join(args, " "), err)
	}
	t.Logf("started %s: make %s (log: %s)", name, strings.Join(args, " "), logPath)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last lines of %s's log:\n%s", name, tail(p.Logs(), 80))
		}
		_, _ = p.Stop(30 * time.Second)
	})
	return p
}

// SecondCopyRefused runs `make ARGS...` again beside first, a copy of the same
// target that runs, and returns an error unless the second fails within timeout
// while first runs on (make reports its recipe's HeldElsewhereExit as a failure
// of its own, exit status 2). A second copy that starts all the same is stopped
// at timeout.
func SecondCopyRefused(t testing.TB, first *Process, timeout time.Duration, env []string, args ...string) error {
	t.Helper()
	second := StartTarget(t, first.Name+"-second", env, args...)
	code, err := second.Wait(timeout)
	if err != nil {
		return fmt.Errorf("a second make %s still runs %s after it started, beside the first: it should refuse at once, naming the first (log: %s)", strings.Join(args, " "), timeout, second.logPath)
	}
	if first.Exited() {
		return errors.New("the first copy has exited: the second should refuse and leave it running")
	}
	if code == 0 {
		return fmt.Errorf("the second make %s exited 0, want a failure: refused, another command holds what it needs; its log: %s", strings.Join(args, " "), second.logPath)
	}
	return nil
}

// SecondRunRefused is SecondCopyRefused for a run target StartRunTarget started
// (first): a second `make TARGET` with the same environment (KIT_CLUSTER naming
// the local cluster, and env) must fail within timeout while first runs on.
func SecondRunRefused(t testing.TB, first *Process, timeout time.Duration, target string, env ...string) error {
	t.Helper()
	info, err := CurrentClusterInfo()
	if err != nil {
		return fmt.Errorf("make %s runs beside the local cluster here: %w", target, err)
	}
	return SecondCopyRefused(t, first, timeout, append([]string{ClusterEnv + "=" + info.Name}, env...), target)
}

// StartRunTarget runs `make TARGET` (a run target of the kit, such as run-csi)
// as StartTarget does, as a learner does against the cluster under test: the
// test's environment (KUBECONFIG, the cluster's admin, as in a learner's shell
// after make env) with KIT_CLUSTER naming the local cluster and env (NAME=value)
// added; its output in TARGET.log in the test's folder.
func StartRunTarget(t testing.TB, target string, env ...string) *Process {
	t.Helper()
	info, err := CurrentClusterInfo()
	if err != nil {
		t.Fatalf("make %s runs beside the local cluster here: %v", target, err)
	}
	return StartTarget(t, target, append([]string{ClusterEnv + "=" + info.Name}, env...), target)
}

// withoutMakeSettings returns environ less the variables through which a make
// hands its flags and command-line variables to the makes under it (MAKEFLAGS,
// MFLAGS, MAKELEVEL, MAKEOVERRIDES).
func withoutMakeSettings(environ []string) []string {
	var kept []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES":
			continue
		}
		kept = append(kept, kv)
	}
	return kept
}
