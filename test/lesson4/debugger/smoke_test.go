// Package debugger is lesson 4's debugger test (docs/lessons/04-changing-kubernetes.md,
// part 2): programs run under delve the way make debug runs them, driven
// through delve's JSON-RPC API as an editor drives it.
//
// Without build tags it is make test's smoke of it (hack/debug.sh smoke): a
// small program built for debugging, run by hack/debug.sh's delve wrapper,
// stopped at a breakpoint, and its delve killed as kwokctl kills a component,
// after which the program must be gone too. With -tags e2e (make test-debug,
// on a local cluster of its own) it puts the cluster's kube-controller-manager
// and lesson 2's sample-controller under delve with make debug and stops each
// at its sync function; a second make debug on the first one's delve port is
// refused at once.
package debugger

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/controller-kit/controller-kit/test/kittest"
	"github.com/controller-kit/controller-kit/test/kittest/delve"
)

// smokeProgram counts in a loop, slowly; the test stops it in count.
const smokeProgram = `package main

import (
	"fmt"
	"time"
)

func count(n int) int {
	doubled := 2 * n
	return doubled
}

func main() {
	for n := 0; ; n++ {
		fmt.Println(count(n))
		time.Sleep(100 * time.Millisecond)
	}
}
`

func TestSmokeDelveStopsADebugBuildAndTakesItDownWithIt(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"main.go": smokeProgram, "go.mod": "module smoke\n\ngo 1.26.0\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	binary := filepath.Join(dir, "smoke")
	// Optimisation off for the program's own package only, as make debug does
	// for the packages it names: the standard library stays in the build cache.
	build := exec.Command("go", "build", "-gcflags=-N -l", "-o", binary, ".")
	build.Dir = dir
	// Without -trimpath (which make exports for every other build): delve finds
	// a debug build's files where they are on disk, as make debug's builds do.
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS="+untrimmed(os.Getenv("GOFLAGS")))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the smoke program for debugging: %v\n%s", err, out)
	}

	addr, err := kittest.FreeAddressE()
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(addr, ":")
	log, err := os.Create(filepath.Join(dir, "delve.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command(filepath.Join(kittest.RepoRoot(), "hack", "debug.sh"), "delve", port, binary)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting hack/debug.sh delve: %v", err)
	}
	ended := make(chan struct{})
	go func() { _ = cmd.Wait(); close(ended) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-ended
		for _, pid := range processesOf(binary) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if err := delve.WaitListening(addr, 60*time.Second, ended); err != nil {
		out, _ := os.ReadFile(log.Name())
		t.Fatalf("delve on the smoke program: %v; its output:\n%s", err, out)
	}

	d, err := delve.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Halt(); err != nil {
		t.Fatal(err)
	}
	// The program has been counting since delve started it: a condition that
	// holds again and again, as a key comes back through a queue.
	bp, err := d.Break("main.count", "n%5 == 4")
	if err != nil {
		t.Fatal(err)
	}
	st := d.WaitForBreakpoint(t, d.ContinueUntilStop(), bp, 30*time.Second)
	stack, err := d.Stack(st.CurrentThread.GoroutineID, 10)
	if err != nil {
		t.Fatal(err)
	}
	requireChain(t, stack, "main.count", "main.main")
	n, err := d.Eval(st.CurrentThread.GoroutineID, "n")
	if err != nil {
		t.Fatal(err)
	}
	var value int
	if _, err := fmt.Sscan(n.Value, &value); err != nil || value%5 != 4 {
		t.Fatalf("stopped with n = %q; the condition n%%5 == 4 says it cannot be", n.Value)
	}
	if err := d.Clear(bp.ID); err != nil {
		t.Fatal(err)
	}
	d.DetachRunning()

	// kwokctl stops a component with SIGKILL to the pid it started: delve's.
	// The program it debugged must not outlive it.
	if pids := processesOf(binary); len(pids) != 1 {
		t.Fatalf("want the smoke program running under delve, found processes %v", pids)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-ended
	requireGone(t, binary, goneWithin)
}

// untrimmed returns the GOFLAGS value goflags without -trimpath.
func untrimmed(goflags string) string {
	var kept []string
	for _, f := range strings.Fields(goflags) {
		if f != "-trimpath" {
			kept = append(kept, f)
		}
	}
	return strings.Join(kept, " ")
}
