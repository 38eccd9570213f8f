package kittest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// StartRunTarget runs `make TARGET` (a run target of the kit, such as run-csi)
// from the repository's root, as a learner does, against the cluster under
// test: its environment is the test's (KUBECONFIG, the cluster's admin, as in
// a learner's shell after make env) with KIT_CLUSTER naming the local cluster
// and env (NAME=value) added. make and everything it starts run in a process
// group of their own, their output in the log file TARGET.log in the test's
// folder. At cleanup the group gets SIGTERM (each run target stops what it
// started on it), then SIGKILL after a minute; when the test failed, the last
// 80 lines of the log are printed first.
func StartRunTarget(t testing.TB, target string, env ...string) *Process {
	t.Helper()
	info, err := CurrentClusterInfo()
	if err != nil {
		t.Fatalf("make %s runs beside the local cluster here: %v", target, err)
	}
	logPath := filepath.Join(TestDir(t), target+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatalf("cannot create the log file of make %s: %v", target, err)
	}
	cmd := exec.Command("make", "--no-print-directory", "-C", RepoRoot(), target)
	cmd.Env = append(append(os.Environ(), ClusterEnv+"="+info.Name), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p, err := startLogged("make "+target, cmd, logFile, true)
	if err != nil {
		t.Fatalf("cannot start make %s: %v", target, err)
	}
	t.Logf("started make %s %s (log: %s)", target, strings.Join(env, " "), logPath)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last lines of make %s's output:\n%s", target, tail(p.Logs(), 80))
		}
		if _, err := p.Stop(time.Minute); err != nil {
			t.Errorf("make %s: %v", target, fmt.Errorf("%w; killed", err))
		}
		// What make started outlives it when it ignored SIGTERM.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
	return p
}
