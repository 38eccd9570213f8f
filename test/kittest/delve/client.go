package debugger

// A client of delve's JSON-RPC API (version 2, what `dlv exec --headless
// --api-version=2` serves), written against the standard library only, so that
// delve's own packages never enter go.work. The types below carry only the
// fields these tests read or set, under the names delve's service/api and
// service/rpc2 packages give them on the wire.

import (
	"errors"
	"fmt"
	"net"
	"net/rpc"
	"net/rpc/jsonrpc"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// debuggerState is delve's api.DebuggerState: where the program stands.
type debuggerState struct {
	Pid           int
	Running       bool
	CurrentThread *thread `json:"currentThread,omitempty"`
	Exited        bool    `json:"exited"`
	ExitStatus    int     `json:"exitStatus"`
}

// thread is delve's api.Thread: the goroutine it runs and the breakpoint it stopped at.
type thread struct {
	ID          int         `json:"id"`
	GoroutineID int64       `json:"goroutineID"`
	Breakpoint  *breakpoint `json:"breakPoint,omitempty"`
}

// breakpoint is delve's api.Breakpoint.
type breakpoint struct {
	ID           int    `json:"id"`
	File         string `json:"file"`
	Line         int    `json:"line"`
	FunctionName string `json:"functionName,omitempty"`
	Cond         string
}

// stackframe is one frame of delve's api.Stackframe.
type stackframe struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Function *struct {
		Name string `json:"name"`
	} `json:"function,omitempty"`
}

// variable is delve's api.Variable, its value as delve prints it.
type variable struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Value string `json:"value"`
}

// loadConfig is delve's api.LoadConfig: how much of a value to read.
type loadConfig struct {
	FollowPointers     bool
	MaxVariableRecurse int
	MaxStringLen       int
	MaxArrayValues     int
	MaxStructFields    int
}

// delve is a connection to a headless delve.
type delve struct {
	addr   string
	client *rpc.Client
}

// dialDelve connects to the delve listening at addr.
func dialDelve(addr string) (*delve, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("connecting to delve at %s: %w", addr, err)
	}
	return &delve{addr: addr, client: jsonrpc.NewClient(conn)}, nil
}

// callTimeout bounds each call but continue: delve answers at once, unless it
// waits for the program to stop (a breakpoint set while the program runs).
const callTimeout = time.Minute

// call calls delve's method with in and reads the answer into out, failing
// when delve does not answer within timeout.
func (d *delve) call(method string, in, out any, timeout time.Duration) error {
	c := d.client.Go("RPCServer."+method, in, out, make(chan *rpc.Call, 1))
	select {
	case <-c.Done:
		return c.Error
	case <-time.After(timeout):
		return fmt.Errorf("delve did not answer %s within %s", method, timeout)
	}
}

// waitRunning waits until the program runs: delve starts it stopped and its
// --continue starts it from a client of its own just after delve listens. A
// halt sent before that would find nothing to stop, and the program would then
// run on with this client waiting.
func (d *delve) waitRunning(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var out struct{ State *debuggerState }
		if err := d.call("State", map[string]any{"NonBlocking": true}, &out, callTimeout); err != nil {
			return err
		}
		if out.State != nil && out.State.Running {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the program under delve at %s is not running after %s", d.addr, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// command sends one of delve's commands (halt, continue, next, ...) and
// returns the state it leaves the program in; continue returns only when the
// program stops again.
func (d *delve) command(name string) (debuggerState, error) {
	var out struct{ State debuggerState }
	timeout := callTimeout
	if name == "continue" {
		// The callers bound continue themselves (waitForBreakpoint).
		timeout = 24 * time.Hour
	}
	err := d.call("Command", map[string]any{"name": name}, &out, timeout)
	if err != nil {
		return out.State, fmt.Errorf("delve %s: %w", name, err)
	}
	return out.State, nil
}

// halt stops the running program, so that breakpoints can be set: delve
// changes them only while it is stopped.
func (d *delve) halt() error {
	if err := d.waitRunning(callTimeout); err != nil {
		return err
	}
	_, err := d.command("halt")
	return err
}

// breakAt sets a breakpoint at the location (as `break` takes it, such as
// pkg.(*Type).Method) that stops only when cond holds.
func (d *delve) breakAt(location, cond string) (breakpoint, error) {
	var out struct{ Breakpoint breakpoint }
	in := map[string]any{"Breakpoint": breakpoint{Cond: cond}, "LocExpr": location}
	if err := d.call("CreateBreakpoint", in, &out, callTimeout); err != nil {
		return out.Breakpoint, fmt.Errorf("setting a breakpoint at %s: %w", location, err)
	}
	return out.Breakpoint, nil
}

// clear removes a breakpoint.
func (d *delve) clear(id int) error {
	var out struct{}
	if err := d.call("ClearBreakpoint", map[string]any{"Id": id}, &out, callTimeout); err != nil {
		return fmt.Errorf("clearing breakpoint %d: %w", id, err)
	}
	return nil
}

// continueUntilStop resumes the program and returns a channel that receives
// the state once the program stops again (at a breakpoint, or exited).
func (d *delve) continueUntilStop() <-chan result {
	done := make(chan result, 1)
	go func() {
		st, err := d.command("continue")
		done <- result{st, err}
	}()
	return done
}

// result is what a continue ended with.
type result struct {
	state debuggerState
	err   error
}

// waitForBreakpoint waits up to timeout for the continue started by
// continueUntilStop to stop at bp, and fails the test when it does not: the
// breakpoint was never hit, the program exited, or delve failed.
func waitForBreakpoint(t *testing.T, d *delve, stopped <-chan result, bp breakpoint, timeout time.Duration) debuggerState {
	t.Helper()
	select {
	case r := <-stopped:
		if r.err != nil {
			t.Fatalf("waiting for the breakpoint at %s: %v", bp.FunctionName, r.err)
		}
		if r.state.Exited {
			t.Fatalf("the program exited (status %d) before the breakpoint at %s was hit", r.state.ExitStatus, bp.FunctionName)
		}
		if r.state.CurrentThread == nil || r.state.CurrentThread.Breakpoint == nil || r.state.CurrentThread.Breakpoint.ID != bp.ID {
			t.Fatalf("the program stopped, but not at the breakpoint at %s (condition %s): %+v", bp.FunctionName, bp.Cond, r.state.CurrentThread)
		}
		return r.state
	case <-time.After(timeout):
		// Stop the pending continue, so that the test's clean-up finds delve answering.
		_, _ = d.command("halt")
		t.Fatalf("the breakpoint at %s (condition %s) was never hit within %s", bp.FunctionName, bp.Cond, timeout)
	}
	return debuggerState{}
}

// stack returns the function names of goroutine gid's innermost depth frames.
func (d *delve) stack(gid int64, depth int) ([]string, error) {
	var out struct{ Locations []stackframe }
	if err := d.call("Stacktrace", map[string]any{"Id": gid, "Depth": depth}, &out, callTimeout); err != nil {
		return nil, fmt.Errorf("reading goroutine %d's stack: %w", gid, err)
	}
	names := make([]string, 0, len(out.Locations))
	for _, f := range out.Locations {
		name := "?"
		if f.Function != nil {
			name = f.Function.Name
		}
		names = append(names, name)
	}
	return names, nil
}

// eval evaluates expr in goroutine gid's innermost frame, as `print` does.
func (d *delve) eval(gid int64, expr string) (variable, error) {
	var out struct{ Variable *variable }
	in := map[string]any{
		"Scope": map[string]any{"GoroutineID": gid, "Frame": 0},
		"Expr":  expr,
		"Cfg":   loadConfig{FollowPointers: true, MaxVariableRecurse: 1, MaxStringLen: 256, MaxArrayValues: 16, MaxStructFields: -1},
	}
	if err := d.call("Eval", in, &out, callTimeout); err != nil {
		return variable{}, fmt.Errorf("evaluating %s: %w", expr, err)
	}
	if out.Variable == nil {
		return variable{}, fmt.Errorf("evaluating %s: delve returned no value", expr)
	}
	return *out.Variable, nil
}

// detachRunning leaves the program running and closes the connection, the way
// an editor's "disconnect" does on a server started with --accept-multiclient.
func (d *delve) detachRunning() {
	// Go has written the request when it returns; the reply is not waited for.
	d.client.Go("RPCServer.Command", map[string]any{"name": "continue"}, &struct{ State debuggerState }{}, nil)
	_ = d.client.Close()
}

// requireChain fails the test unless the innermost frames of stack are the
// functions want names (each matched as a suffix of the frame's function),
// in order; closures' wrappers (-fm) in between are skipped.
func requireChain(t *testing.T, stack []string, want ...string) {
	t.Helper()
	var frames []string
	for _, f := range stack {
		if strings.HasSuffix(f, "-fm") {
			continue
		}
		frames = append(frames, f)
	}
	ok := len(frames) >= len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = strings.HasSuffix(frames[i], want[i])
	}
	if !ok {
		t.Fatalf("the goroutine stopped at the breakpoint has the stack\n  %s\nwant its innermost frames to be\n  %s", strings.Join(stack, "\n  "), strings.Join(want, "\n  "))
	}
	t.Logf("stopped with the stack:\n  %s", strings.Join(stack, " <- "))
}

// waitListening waits up to timeout for something to accept connections at
// addr, or for done to be closed (the process that should listen has ended).
func waitListening(addr string, timeout time.Duration, done <-chan struct{}) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-done:
			return errors.New("the process that should listen there has ended")
		case <-time.After(300 * time.Millisecond):
		}
	}
	return fmt.Errorf("nothing listens at %s after %s", addr, timeout)
}

// listening reports whether something accepts connections at addr.
func listening(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// processesOf returns the pids of the live processes running binary.
func processesOf(binary string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || strings.TrimSuffix(exe, " (deleted)") != binary {
			continue
		}
		// A zombie has ended; only its parent has not collected it yet.
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 0 && f[0] == "Z" {
				continue
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

// goneWithin is how long the debugged program may outlive its delve: the
// watchdog beside delve looks once a second, but on a loaded machine (make test
// with other builds beside it) a bash loop can wait many seconds for the CPU, so
// the deadline is generous; a program that is never killed still fails.
const goneWithin = time.Minute

// requireGone fails the test unless no process runs binary within timeout.
func requireGone(t *testing.T, binary string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		pids := processesOf(binary)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("processes %v still run %s %s after their delve ended (killed now)", pids, binary, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// readState reads one of make debug's state files (KEY=value lines; see
// hack/debug.sh).
func readState(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("make debug's state file: %w", err)
	}
	state := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			state[k] = v
		}
	}
	return state, nil
}
