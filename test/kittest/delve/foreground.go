package delve

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// CachedOnlyEnv, set to 1, tells Foreground not to spend minutes on a first
// debug build: a check whose debug build is not there yet skips itself with
// one line naming the make target that runs it (hack/debug.sh's
// KIT_DEBUG_CACHED, which make test's smoke of lesson 6 sets too).
const CachedOnlyEnv = "KIT_DEBUG_CACHED"

// buildTimeout bounds make debug up to delve listening: a first debug build
// (optimisation off everywhere) recompiles every package the program imports,
// over 20 minutes on a loaded 2-core machine.
const buildTimeout = 40 * time.Minute

// Foreground runs `make debug WHAT=what PORT=...` at the repository root, on a
// free port, the way a learner runs it in a terminal, for a debug entry that
// runs in the foreground (start: controller, or a lesson's own script such as
// csi-provisioner's). env is added to the test's environment (the cluster's
// KIT_CLUSTER and KUBECONFIG, a GODEBUG). Until delve listens, make's output
// (the debug build's progress lines) goes to the test's standard error; then,
// like the program's own logs, only to the test's folder (kittest.TestDir),
// printed when the test fails. It returns a client of that delve with the
// program running. At cleanup it ends make debug with the SIGINT Ctrl-C
// sends, then runs make undebug WHAT=what.
//
// With CachedOnlyEnv=1 and no debug build at _output/debug/bin/what yet, the
// test skips itself, saying which make target runs it (lesson, e.g. "make
// test-lesson7").
func Foreground(t testing.TB, what, lesson string, env ...string) *Client {
	t.Helper()
	root := kittest.RepoRoot()
	binary := filepath.Join(root, "_output", "debug", "bin", what)
	if os.Getenv(CachedOnlyEnv) == "1" {
		if _, err := os.Stat(binary); err != nil {
			t.Skipf("no debug build of %s yet (_output/debug/bin/%s; %s=1 builds none): %s takes this stack again", what, what, CachedOnlyEnv, lesson)
		}
	}
	addr, err := kittest.FreeAddressE()
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(addr, ":")
	logPath := filepath.Join(kittest.TestDir(t), "make-debug-"+what+".log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", "--no-print-directory", "debug", "WHAT="+what, "PORT="+port)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	fmt.Fprintf(os.Stderr, ">> make debug WHAT=%s PORT=%s (a first debug build takes minutes; its log: %s)\n", what, port, logPath)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := make(chan struct{})
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		copyUntil(out, log, os.Stderr, listening)
	}()
	ended := make(chan struct{})
	go func() { <-copied; _ = cmd.Wait(); close(ended) }()
	stop := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-ended:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-ended
			t.Errorf("make debug WHAT=%s did not end within 30 s of SIGINT (killed now)", what)
		}
	}
	t.Cleanup(func() {
		select {
		case <-ended:
		default:
			stop()
		}
		undebug := exec.Command("make", "--no-print-directory", "undebug", "WHAT="+what)
		undebug.Dir, undebug.Env = root, cmd.Env
		if b, err := undebug.CombinedOutput(); err != nil {
			t.Errorf("make undebug WHAT=%s: %v\n%s", what, err, b)
		}
		_ = log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("make debug WHAT=%s's output:\n%s", what, b)
		}
	})
	if err := WaitListening(addr, buildTimeout, ended); err != nil {
		t.Fatalf("make debug WHAT=%s: %v (its output: %s)", what, err, logPath)
	}
	close(listening)
	fmt.Fprintf(os.Stderr, ">> make debug WHAT=%s: delve listening at %s, %.0f s after it started\n", what, addr, time.Since(start).Seconds())
	c, err := Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// copyUntil copies r's lines to log, and to progress too until listening is
// closed.
func copyUntil(r io.Reader, log, progress io.Writer, listening <-chan struct{}) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(log, line)
		select {
		case <-listening:
		default:
			fmt.Fprintln(progress, "   ", line)
		}
	}
	_, _ = io.Copy(log, r)
}

// WaitListening waits up to timeout for something to accept connections at
// addr (a delve starting), or for ended to be closed (what should listen there
// has ended).
func WaitListening(addr string, timeout time.Duration, ended <-chan struct{}) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-ended:
			return fmt.Errorf("the process that should listen at %s has ended", addr)
		case <-time.After(300 * time.Millisecond):
		}
	}
	return fmt.Errorf("nothing listens at %s after %s", addr, timeout)
}
