package debugger

// What lesson 4's debugger tests read of the processes make debug starts: a
// port listened on, the processes running a binary, and make debug's state
// files. The delve client itself is test/kittest/delve.

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

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
