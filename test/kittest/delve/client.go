// Package delve is a client of delve's JSON-RPC API (version 2, what `dlv exec
// --headless --api-version=2` serves), written against the standard library
// only, so that delve's own packages never enter go.work, and the lessons'
// quoted stacks: a stack that a lesson page shows as delve's `stack` command
// prints it, read from the page (ReadQuotedStack) and held to the stack the
// running program shows (RequireQuotedStack).
//
// The lessons' debugger checks use it the way an editor uses delve: Dial the
// delve that make debug started, Halt the program, Break where the lesson
// does, ContinueUntilStop, WaitForBreakpoint, then read the stopped goroutine's
// Stack and Eval what the lesson prints. The types below carry only the fields
// these checks read or set, under the names delve's service/api and
// service/rpc2 packages give them on the wire.
package delve

import (
	"fmt"
	"net"
	"net/rpc"
	"net/rpc/jsonrpc"
	"strconv"
	"testing"
	"time"
)

// State is delve's api.DebuggerState: where the program stands.
type State struct {
	// Pid is the debugged process's.
	Pid int
	// Running is true while the program runs (not stopped by delve).
	Running bool
	// CurrentThread is the thread the program stopped on, with its goroutine
	// and breakpoint; nil while it runs.
	CurrentThread *Thread `json:"currentThread,omitempty"`
	// Exited is true once the program has ended, with ExitStatus.
	Exited     bool `json:"exited"`
	ExitStatus int  `json:"exitStatus"`
}

// Thread is delve's api.Thread: the goroutine it runs and the breakpoint it
// stopped at.
type Thread struct {
	// ID is the operating system's thread ID.
	ID int `json:"id"`
	// GoroutineID is the goroutine the thread runs, what Stack and Eval take.
	GoroutineID int64 `json:"goroutineID"`
	// Breakpoint is the breakpoint the thread stopped at, nil if none.
	Breakpoint *Breakpoint `json:"breakPoint,omitempty"`
}

// Breakpoint is delve's api.Breakpoint.
type Breakpoint struct {
	// ID is delve's number for it, what Clear takes.
	ID int `json:"id"`
	// File and Line are where it stands.
	File string `json:"file"`
	Line int    `json:"line"`
	// FunctionName is the function it stands in.
	FunctionName string `json:"functionName,omitempty"`
	// Cond is the condition under which it stops the program ("" always).
	Cond string
}

// Variable is delve's api.Variable: a value as delve prints it.
type Variable struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// Value is the value as delve's print shows it (a string quoted).
	Value string `json:"value"`
}

// stackframe is one frame of delve's api.Stackframe.
type stackframe struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Function *struct {
		Name string `json:"name"`
	} `json:"function,omitempty"`
}

// loadConfig is delve's api.LoadConfig: how much of a value to read.
type loadConfig struct {
	FollowPointers     bool
	MaxVariableRecurse int
	MaxStringLen       int
	MaxArrayValues     int
	MaxStructFields    int
}

// Client is a connection to a headless delve.
type Client struct {
	addr   string
	client *rpc.Client
}

// Dial connects to the delve listening at addr (host:port).
func Dial(addr string) (*Client, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("connecting to delve at %s: %w", addr, err)
	}
	return &Client{addr: addr, client: jsonrpc.NewClient(conn)}, nil
}

// callTimeout bounds each call but continue: delve answers at once, unless it
// waits for the program to stop (a breakpoint set while the program runs).
const callTimeout = time.Minute

// call calls delve's method with in and reads the answer into out, failing
// when delve does not answer within timeout.
func (c *Client) call(method string, in, out any, timeout time.Duration) error {
	done := c.client.Go("RPCServer."+method, in, out, make(chan *rpc.Call, 1))
	select {
	case <-done.Done:
		return done.Error
	case <-time.After(timeout):
		return fmt.Errorf("delve at %s did not answer %s within %s", c.addr, method, timeout)
	}
}

// waitRunning waits until the program runs: delve starts it stopped and its
// --continue starts it from a client of its own just after delve listens. A
// halt sent before that would find nothing to stop, and the program would then
// run on with this client waiting.
func (c *Client) waitRunning(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var out struct{ State *State }
		if err := c.call("State", map[string]any{"NonBlocking": true}, &out, max(time.Until(deadline), time.Second)); err != nil {
			return err
		}
		if out.State != nil && out.State.Running {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the program under delve at %s is not running after %s", c.addr, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// command sends one of delve's commands (halt, continue, next, ...) and
// returns the state it leaves the program in; continue returns only when the
// program stops again.
func (c *Client) command(name string) (State, error) {
	var out struct{ State State }
	timeout := callTimeout
	if name == "continue" {
		// The callers bound continue themselves (WaitForBreakpoint).
		timeout = 24 * time.Hour
	}
	err := c.call("Command", map[string]any{"name": name}, &out, timeout)
	if err != nil {
		return out.State, fmt.Errorf("delve %s: %w", name, err)
	}
	return out.State, nil
}

// startTimeout bounds the wait for the program to run: delve reads the
// binary's debug information before its --continue starts it, which took over
// a minute for csi-provisioner's debug build on 2 cores at a load average near
// 50 (2026-12-07).
const startTimeout = 10 * time.Minute

// Halt stops the running program, so that breakpoints can be set: delve
// changes them only while it is stopped. It first waits for the program to run
// (delve's --continue starts it once delve has read the binary).
func (c *Client) Halt() error {
	if err := c.waitRunning(startTimeout); err != nil {
		return err
	}
	_, err := c.command("halt")
	return err
}

// Break sets a breakpoint at location (as delve's `break` takes it, such as
// pkg.(*Type).Method) that stops the program only when cond holds (delve's
// `condition`; "" stops it every time).
func (c *Client) Break(location, cond string) (Breakpoint, error) {
	var out struct{ Breakpoint Breakpoint }
	in := map[string]any{"Breakpoint": Breakpoint{Cond: cond}, "LocExpr": location}
	if err := c.call("CreateBreakpoint", in, &out, callTimeout); err != nil {
		return out.Breakpoint, fmt.Errorf("setting a breakpoint at %s: %w", location, err)
	}
	return out.Breakpoint, nil
}

// Clear removes the breakpoint whose ID is id.
func (c *Client) Clear(id int) error {
	var out struct{}
	if err := c.call("ClearBreakpoint", map[string]any{"Id": id}, &out, callTimeout); err != nil {
		return fmt.Errorf("clearing breakpoint %d: %w", id, err)
	}
	return nil
}

// Result is what a continue ended with: the program's state, or delve's error.
type Result struct {
	State State
	Err   error
}

// ContinueUntilStop resumes the program and returns a channel that receives
// the state once the program stops again (at a breakpoint, or exited).
func (c *Client) ContinueUntilStop() <-chan Result {
	done := make(chan Result, 1)
	go func() {
		st, err := c.command("continue")
		done <- Result{st, err}
	}()
	return done
}

// WaitForBreakpoint waits up to timeout for the continue that stopped
// (ContinueUntilStop's channel) to stop at bp, and fails the test when it does
// not: the breakpoint was never hit, the program exited, or delve failed. It
// returns the state the program stopped in; its CurrentThread's GoroutineID is
// the goroutine to read.
func (c *Client) WaitForBreakpoint(t testing.TB, stopped <-chan Result, bp Breakpoint, timeout time.Duration) State {
	t.Helper()
	select {
	case r := <-stopped:
		if r.Err != nil {
			t.Fatalf("waiting for the breakpoint at %s: %v", bp.FunctionName, r.Err)
		}
		if r.State.Exited {
			t.Fatalf("the program exited (status %d) before the breakpoint at %s was hit", r.State.ExitStatus, bp.FunctionName)
		}
		if r.State.CurrentThread == nil || r.State.CurrentThread.Breakpoint == nil || r.State.CurrentThread.Breakpoint.ID != bp.ID {
			t.Fatalf("the program stopped, but not at the breakpoint at %s (condition %s): %+v", bp.FunctionName, bp.Cond, r.State.CurrentThread)
		}
		return r.State
	case <-time.After(timeout):
		// Stop the pending continue, so that the test's clean-up finds delve answering.
		_, _ = c.command("halt")
		t.Fatalf("the breakpoint at %s (condition %s) was never hit within %s", bp.FunctionName, bp.Cond, timeout)
	}
	return State{}
}

// Stack returns the function names of goroutine's innermost depth+1 frames,
// innermost first, as delve's `stack depth` prints them ("?" for a frame delve
// cannot name).
func (c *Client) Stack(goroutine int64, depth int) ([]string, error) {
	var out struct{ Locations []stackframe }
	if err := c.call("Stacktrace", map[string]any{"Id": goroutine, "Depth": depth}, &out, callTimeout); err != nil {
		return nil, fmt.Errorf("reading goroutine %d's stack: %w", goroutine, err)
	}
	return frameNames(out.Locations), nil
}

// Ancestors returns the stacks of up to n goroutines that goroutine descends
// from (the one that started it first), each its innermost depth frames as
// they were when the go statement ran, innermost first, as delve's `stack -a n
// -adepth depth` prints them under "Created by Goroutine N:". The program must
// run with GODEBUG=tracebackancestors=n (or more), else there are none.
func (c *Client) Ancestors(goroutine int64, n, depth int) ([][]string, error) {
	var out struct {
		Ancestors []struct {
			ID         int64
			Stack      []stackframe
			Unreadable string
		}
	}
	if err := c.call("Ancestors", map[string]any{"GoroutineID": goroutine, "NumAncestors": n, "Depth": depth}, &out, callTimeout); err != nil {
		return nil, fmt.Errorf("reading goroutine %d's ancestors: %w", goroutine, err)
	}
	stacks := make([][]string, 0, len(out.Ancestors))
	for _, a := range out.Ancestors {
		if a.Unreadable != "" {
			return nil, fmt.Errorf("goroutine %d's ancestor %d: %s", goroutine, a.ID, a.Unreadable)
		}
		stacks = append(stacks, frameNames(a.Stack))
	}
	return stacks, nil
}

// frameNames returns the function names of frames.
func frameNames(frames []stackframe) []string {
	names := make([]string, 0, len(frames))
	for _, f := range frames {
		name := "?"
		if f.Function != nil {
			name = f.Function.Name
		}
		names = append(names, name)
	}
	return names
}

// Eval evaluates expr in goroutine's innermost frame, as delve's `print` does.
func (c *Client) Eval(goroutine int64, expr string) (Variable, error) {
	var out struct{ Variable *Variable }
	in := map[string]any{
		"Scope": map[string]any{"GoroutineID": goroutine, "Frame": 0},
		"Expr":  expr,
		"Cfg":   loadConfig{FollowPointers: true, MaxVariableRecurse: 1, MaxStringLen: 256, MaxArrayValues: 16, MaxStructFields: -1},
	}
	if err := c.call("Eval", in, &out, callTimeout); err != nil {
		return Variable{}, fmt.Errorf("evaluating %s: %w", expr, err)
	}
	if out.Variable == nil {
		return Variable{}, fmt.Errorf("evaluating %s: delve returned no value", expr)
	}
	return *out.Variable, nil
}

// WantString evaluates expr in the top frame of goroutine (Eval) and marks the
// test failed unless it is the string want: delve's API gives a string as it
// is and its print quotes it, so either form is accepted. where names the stop
// (a function) in the message. A wrong value does not stop the test (Errorf),
// so the caller still clears its breakpoint and lets the program run; an
// evaluation delve refuses does (Fatal).
func (c *Client) WantString(t testing.TB, goroutine int64, expr, want, where string) {
	t.Helper()
	got, err := c.Eval(goroutine, expr)
	if err != nil {
		t.Fatal(err)
	}
	if got.Value != want && got.Value != strconv.Quote(want) {
		t.Errorf("%s stopped with %s = %s, want %q", where, expr, got.Value, want)
	}
}

// DetachRunning leaves the program running and closes the connection, the way
// an editor's "disconnect" does on a server started with --accept-multiclient.
func (c *Client) DetachRunning() {
	// Go has written the request when it returns; the reply is not waited for.
	c.client.Go("RPCServer.Command", map[string]any{"name": "continue"}, &struct{ State State }{}, nil)
	_ = c.client.Close()
}
