package kittest

import (
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

// Process is a controller started by Start or StartProcess: a real OS process
// whose standard output and error go to a log file.
type Process struct {
	// Name labels the process in test output, e.g. "controller-a".
	Name string

	cmd     *exec.Cmd
	logPath string
	// group is set for a process that leads a process group of its own
	// (StartTarget): signals go to the whole group.
	group   bool
	done    chan struct{}
	mu      sync.Mutex
	waitErr error
}

// Start starts bin with args as the process called name, its standard output and
// error written to a new file at logPath. It is StartProcess without a test: the
// caller stops the process (Stop) when it is done with it. The error says whether
// the log file or the process could not be created.
//
// The process inherits the test's environment, except that when args give it a
// kubeconfig (--kubeconfig=PATH), its KUBECONFIG names that file too: a program
// that reads the variable before its flag (csi-provisioner v6.4.0 does) would
// otherwise act as the test's own user, the cluster's admin, instead of the
// ServiceAccount its kubeconfig impersonates (ImpersonatingKubeconfig).
func Start(name, logPath, bin string, args ...string) (*Process, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("cannot create the log file of %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	if kubeconfig := kubeconfigArg(args); kubeconfig != "" {
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	}
	p, err := startLogged(name, cmd, logFile, false)
	if err != nil {
		return nil, fmt.Errorf("cannot start %s (%s): %w", name, bin, err)
	}
	return p, nil
}

// startLogged starts cmd, its standard output and error written to logFile,
// which it closes once the process has exited (or could not start), and
// returns it as the Process called name; group says that cmd leads a process
// group of its own, which signals then reach as a whole.
func startLogged(name string, cmd *exec.Cmd, logFile *os.File, group bool) (*Process, error) {
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, err
	}
	p := &Process{Name: name, cmd: cmd, logPath: logFile.Name(), done: make(chan struct{}), group: group}
	go func() {
		err := cmd.Wait()
		_ = logFile.Close()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// StartProcess starts bin with args, its output captured in the log file
// <name>.log in the test's folder (TestDir: kept for `make check`, else the test's
// temporary folder; see Start). At cleanup the process gets SIGTERM, then
// SIGKILL if it has not exited within 15 s; when the test failed, the last 80
// lines of its log are printed first. The test fails at once if the process
// cannot be started.
func StartProcess(t testing.TB, name, bin string, args ...string) *Process {
	t.Helper()
	logPath := filepath.Join(TestDir(t), name+".log")
	p, err := Start(name, logPath, bin, args...)
	if err != nil {
		t.Fatal(err)
	}
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

// Signal sends sig to the process (to its process group, for one StartTarget
// started); it is a no-op once the process has exited.
func (p *Process) Signal(sig os.Signal) {
	if p.Exited() {
		return
	}
	if s, ok := sig.(syscall.Signal); ok && p.group {
		_ = syscall.Kill(-p.cmd.Process.Pid, s)
		return
	}
	_ = p.cmd.Process.Signal(sig)
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

// State returns how the process ended, with the resources it used (its
// SysUsage, UserTime and SystemTime), once it has exited; nil while it runs.
func (p *Process) State() *os.ProcessState {
	if !p.Exited() {
		return nil
	}
	return p.cmd.ProcessState
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

// Lines returns the lines of the process's log that contain every one of parts.
func (p *Process) Lines(parts ...string) []string {
	var found []string
	for _, line := range strings.Split(p.Logs(), "\n") {
		matches := true
		for _, part := range parts {
			matches = matches && strings.Contains(line, part)
		}
		if matches && line != "" {
			found = append(found, line)
		}
	}
	return found
}

// RequireNoLine fails the test with the error of CheckNoLine.
func (p *Process) RequireNoLine(t testing.TB, proof, meaning string, unwanted ...string) {
	t.Helper()
	if err := p.CheckNoLine(proof, meaning, unwanted...); err != nil {
		t.Error(err)
	}
}

// CheckNoLine returns an error when the process's log has a line containing
// every one of unwanted (a refused request; a failed reconcile in one
// namespace), saying what it means with meaning. A check for an absent line
// passes on any log that lacks it, an empty one included, so it first requires a
// line containing proof: one the process writes once it is up (its startup
// line), without which the error says the log proves nothing.
func (p *Process) CheckNoLine(proof, meaning string, unwanted ...string) error {
	if len(p.Lines(proof)) == 0 {
		return fmt.Errorf("%s's log has no line with %q, so it cannot show that %q never happened; its log ends with:\n%s",
			p.Name, proof, strings.Join(unwanted, " ... "), tail(p.Logs(), 20))
	}
	if lines := p.Lines(unwanted...); len(lines) > 0 {
		return fmt.Errorf("%s: %s:\n%s", p.Name, meaning, strings.Join(lines, "\n"))
	}
	return nil
}

// kubeconfigArg returns the kubeconfig that args give a program, the value of
// its last --kubeconfig=PATH or --kubeconfig PATH (one dash or two), or "".
func kubeconfigArg(args []string) string {
	var path string
	for i, arg := range args {
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		if !strings.HasPrefix(arg, "-") || name != "kubeconfig" {
			continue
		}
		if !hasValue && i+1 < len(args) {
			value = args[i+1]
		}
		path = value
	}
	return path
}
