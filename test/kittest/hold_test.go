package kittest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// holdShell runs `source hack/lib.sh; SCRIPT` in bash at the repository root,
// with env added, in a process group of its own.
func holdShell(env []string, script string) *exec.Cmd {
	cmd := exec.Command("bash", "-c", `source hack/lib.sh && `+script)
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// startHolder starts a command that takes the hold key (shared with -s in
// mode) as hack/lib/hold.sh's kit_hold does, then sleeps until killed, and
// returns once its note is written.
func startHolder(t *testing.T, env []string, mode, key string) *exec.Cmd {
	t.Helper()
	holder := holdShell(env, `kit_hold `+mode+` "`+key+`" "make run-test" "fight" && exec sleep 300`)
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-holder.Process.Pid, syscall.SIGKILL); _ = holder.Wait() })
	note := filepath.Join(RepoRoot(), "_output", "holds", key+"."+strconv.Itoa(holder.Process.Pid)+".note")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(note); err == nil {
			return holder
		}
		if time.Now().After(deadline) {
			t.Fatalf("the holder wrote no note %s", note)
		}
	}
}

// noteFields reads a holder's note (KEY=value lines).
func noteFields(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fields := map[string]string{}
	for s := bufio.NewScanner(f); s.Scan(); {
		if k, v, ok := strings.Cut(s.Text(), "="); ok {
			fields[k] = v
		}
	}
	return fields
}

// A foreground command of the kit that cannot share what it holds refuses a
// second copy at once, exit status HeldElsewhereExit, and the first runs on;
// copies that elect a leader share the hold with each other, but not with a
// copy that holds it alone. Needs no cluster.
func TestASecondCopyOfAHeldCommandRefusesAtOnce(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock here: hack/lib/hold.sh holds nothing (util-linux)")
	}
	key := "kittest-hold-" + strconv.Itoa(os.Getpid())
	env := []string{"KIT_CLUSTER=kittest-hold"}
	t.Cleanup(func() {
		files, _ := filepath.Glob(filepath.Join(RepoRoot(), "_output", "holds", key+".*"))
		for _, f := range files {
			os.Remove(f)
		}
	})
	first := startHolder(t, env, "", key)
	note := noteFields(t, filepath.Join(RepoRoot(), "_output", "holds", key+"."+strconv.Itoa(first.Process.Pid)+".note"))
	if note["PID"] != strconv.Itoa(first.Process.Pid) || note["WHAT"] != "make run-test" || note["CLUSTER"] != "kittest-hold" || note["SINCE"] == "" || note["STOP"] == "" {
		t.Errorf("the holder's note says %v; want its pid, command, cluster, since when and how to stop it", note)
	}
	for _, mode := range []string{"", "-s"} {
		second := holdShell(env, `kit_hold `+mode+` "`+key+`" "make run-test" "fight" && echo started`)
		done := make(chan error, 1)
		var out []byte
		go func() { var err error; out, err = second.CombinedOutput(); done <- err }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-second.Process.Pid, syscall.SIGKILL)
			t.Fatalf("a second copy (kit_hold %s) still waits 30 s after it started; it should refuse at once", mode)
		}
		if code := second.ProcessState.ExitCode(); code != HeldElsewhereExit {
			t.Errorf("a second copy (kit_hold %s) exited %d, want %d (HeldElsewhereExit); it said:\n%s", mode, code, HeldElsewhereExit, out)
		}
		if strings.Contains(string(out), "started") || !strings.Contains(string(out), "pid "+strconv.Itoa(first.Process.Pid)) {
			t.Errorf("a second copy (kit_hold %s) did not refuse naming the first's pid %d:\n%s", mode, first.Process.Pid, out)
		}
	}
	if err := syscall.Kill(first.Process.Pid, 0); err != nil {
		t.Errorf("the first copy does not run any more: %v", err)
	}

	// Copies that elect a leader: two at once, but not one alone beside them.
	shared := key + "-shared"
	t.Cleanup(func() {
		files, _ := filepath.Glob(filepath.Join(RepoRoot(), "_output", "holds", shared+".*"))
		for _, f := range files {
			os.Remove(f)
		}
	})
	startHolder(t, env, "-s", shared)
	startHolder(t, env, "-s", shared)
	alone := holdShell(env, `kit_hold "`+shared+`" "make debug WHAT=x" "fight"`)
	if out, _ := alone.CombinedOutput(); alone.ProcessState.ExitCode() != HeldElsewhereExit {
		t.Errorf("a copy that holds alone started beside two shared holders (exit %d):\n%s", alone.ProcessState.ExitCode(), out)
	}
}

// HeldElsewhereExit is the exit status hack/lib/hold.sh gives a refused copy.
func TestHeldElsewhereExitIsTheHoldsRefusal(t *testing.T) {
	out, err := holdShell(nil, `echo "$KIT_HOLD_REFUSED"`).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != strconv.Itoa(HeldElsewhereExit) {
		t.Errorf("hack/lib/hold.sh's KIT_HOLD_REFUSED is %s, kittest.HeldElsewhereExit %d", got, HeldElsewhereExit)
	}
}

// make local-down ends what the kit still runs against the cluster: a command
// whose hold names the cluster's context is gone when local-down returns, and
// one against another cluster runs on. Needs no cluster (local-down of a
// cluster that is not there has nothing else to do).
func TestLocalDownEndsWhatRunsAgainstTheCluster(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("no flock here: hack/lib/hold.sh holds nothing (util-linux)")
	}
	root := RepoRoot()
	if _, err := os.Stat(filepath.Join(root, "bin", "kubectl")); err != nil {
		t.Skip("bin/kubectl is not built (make bins): a hold names its cluster's context through it")
	}
	dir := t.TempDir()
	kubeconfig := func(name, port string) string {
		path := filepath.Join(dir, name)
		data := "apiVersion: v1\nkind: Config\ncurrent-context: kwok-" + name + "\nclusters:\n- name: kwok-" + name +
			"\n  cluster:\n    server: https://127.0.0.1:" + port + "\ncontexts:\n- name: kwok-" + name +
			"\n  context:\n    cluster: kwok-" + name + "\n    user: u\nusers:\n- name: u\n  user: {}\n"
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	gone, other := "kittest-down", "kittest-other"
	key := "kittest-down-" + strconv.Itoa(os.Getpid())
	t.Cleanup(func() {
		files, _ := filepath.Glob(filepath.Join(root, "_output", "holds", key+"*"))
		for _, f := range files {
			os.Remove(f)
		}
	})
	ended := startHolder(t, []string{"KIT_CLUSTER=" + gone, "KUBECONFIG=" + kubeconfig(gone, "1")}, "", key+"@"+gone)
	kept := startHolder(t, []string{"KIT_CLUSTER=" + other, "KUBECONFIG=" + kubeconfig(other, "2")}, "", key+"@"+other)
	exited := make(chan struct{})
	go func() { _ = ended.Wait(); close(exited) }()

	down := exec.Command(filepath.Join(root, "hack", "cluster", "local-down.sh"))
	down.Env = append(os.Environ(), "KIT_CLUSTER="+gone)
	if out, err := down.CombinedOutput(); err != nil {
		t.Fatalf("local-down.sh: %v\n%s", err, out)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Errorf("the command holding %s@%s (context kwok-%s) still runs after make local-down", key, gone, gone)
	}
	if err := syscall.Kill(kept.Process.Pid, 0); err != nil {
		t.Errorf("make local-down of %s ended a command of the cluster %s: %v", gone, other, err)
	}
}
