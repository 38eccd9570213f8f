package kittest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BuildBinary compiles the main package in pkgDir (a folder path, absolute or
// relative to the working directory) to outPath. Suites call it once from TestMain,
// so every test runs the controller exactly as a learner's `go build` would make it.
// When $KIT_E2E_OVERLAY names an overlay file (see OverlayEnv), the build uses
// it. The error carries the compiler's output.
func BuildBinary(pkgDir, outPath string) error {
	args := []string{"build", "-o", outPath}
	if overlay := os.Getenv(OverlayEnv); overlay != "" {
		args = append(args, "-overlay="+overlay)
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Dir = pkgDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build in %s: %w\n%s", pkgDir, err, out)
	}
	return nil
}

// BuildForSuite is BuildBinary for a suite's TestMain: it compiles the main package
// in pkgDir to a binary called name in a new temporary folder, and returns the
// binary's path and a cleanup that removes the folder (call it after m.Run).
// When $RECONCILER is set (see ReconcilerEnv), it also makes sure the binary
// knows that Reconciler, so a misspelt or unregistered name stops the suite in
// seconds with the controller's own message, instead of failing every test after
// its deadline.
func BuildForSuite(pkgDir, name string) (bin string, cleanup func(), err error) {
	tmp, err := os.MkdirTemp("", name+"-e2e-")
	if err != nil {
		return "", func() {}, err
	}
	cleanup = func() { _ = os.RemoveAll(tmp) }
	bin = filepath.Join(tmp, name)
	if err := BuildBinary(pkgDir, bin); err != nil {
		cleanup()
		return "", func() {}, err
	}
	if reconciler := os.Getenv(ReconcilerEnv); reconciler != "" {
		if err := checkReconcilerKnown(bin, reconciler, tmp); err != nil {
			cleanup()
			return "", func() {}, err
		}
	}
	return bin, cleanup, nil
}

// ReconcilerEnv names the Reconciler the suites run: each passes it to its
// controller's --reconciler flag (reference when unset).
const ReconcilerEnv = "RECONCILER"

// checkReconcilerKnown runs bin with --reconciler=reconciler and a kubeconfig
// that does not exist: every tier checks the flag before it loads a kubeconfig,
// so a binary that does not know the name says so (`--reconciler="x": want one
// of ...`), and one that does fails on the kubeconfig, at once and without
// reaching a cluster. tmp is a folder for the missing kubeconfig's path.
func checkReconcilerKnown(bin, reconciler, tmp string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--reconciler="+reconciler, "--kubeconfig="+filepath.Join(tmp, "no-such-kubeconfig"))
	out, _ := cmd.CombinedOutput() // it is meant to fail; what it says is the answer
	if strings.Contains(string(out), "--reconciler=") && strings.Contains(string(out), "want one of") {
		return fmt.Errorf("%s=%s: the controller does not know this Reconciler; register it in the tier first "+
			"(the lesson's \"Your own Reconciler\"). It said:\n%s", ReconcilerEnv, reconciler, strings.TrimSpace(string(out)))
	}
	return nil
}

// Process is a controller started by StartProcess: a real OS process whose
// standard output and error go to a log file the test can read.
type Process struct {
	// Name labels the process in test output, e.g. "controller-a".
	Name string

	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	mu      sync.Mutex
	waitErr error
}

// StartProcess starts bin with args, its output captured in a log file under the
// test's temp folder. At cleanup the process gets SIGTERM, then SIGKILL if it has
// not exited within 15 s; when the test failed, the last 80 lines of its log are
// printed first. The test fails at once if the process cannot be started.
func StartProcess(t testing.TB, name, bin string, args ...string) *Process {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatalf("cannot create log file for %s: %v", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		t.Fatalf("cannot start %s (%s): %v", name, bin, err)
	}
	p := &Process{Name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		_ = logFile.Close()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(p.done)
	}()
	t.Logf("started %s: %s %s (log: %s)", name, bin, strings.Join(args, " "), logPath)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last lines of %s's log:\n%s", name, tail(p.Logs(), 80))
		}
		_, _ = p.Stop(15 * time.Second)
	})
	return p
}

// Logs returns everything the process has written to standard output and error so far.
func (p *Process) Logs() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", p.logPath, err)
	}
	return string(b)
}

// Signal sends sig to the process; it is a no-op once the process has exited.
func (p *Process) Signal(sig os.Signal) {
	if !p.Exited() {
		_ = p.cmd.Process.Signal(sig)
	}
}

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits up to timeout for the process to exit and returns its exit code
// (-1 when a signal ended it). It returns an error when the process is still
// running after timeout.
func (p *Process) Wait(timeout time.Duration) (int, error) {
	select {
	case <-p.done:
	case <-time.After(timeout):
		return 0, fmt.Errorf("%s still running after %s", p.Name, timeout)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var exitErr *exec.ExitError
	switch {
	case p.waitErr == nil:
		return 0, nil
	case errors.As(p.waitErr, &exitErr):
		return exitErr.ExitCode(), nil
	default:
		return 0, p.waitErr
	}
}

// Stop asks the process to shut down gracefully (SIGTERM), waits up to timeout,
// then kills it. It returns the exit code as Wait does; stopping a process that has
// already exited only reports how it ended.
func (p *Process) Stop(timeout time.Duration) (int, error) {
	p.Signal(syscall.SIGTERM)
	code, err := p.Wait(timeout)
	if err != nil {
		p.Signal(syscall.SIGKILL)
		code, _ = p.Wait(5 * time.Second)
	}
	return code, err
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
