package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// usage returns the peak resident memory (MiB) and the CPU time (seconds, user
// plus system) of a process that has exited, from the resource usage the OS
// reported when the process was reaped (getrusage's ru_maxrss, ru_utime and
// ru_stime; state is what kittest.Process.State returns). The error says the
// process has not exited, or that this OS reports no such usage.
func usage(state *os.ProcessState) (peakRSSMiB, cpuSeconds float64, err error) {
	if state == nil {
		return 0, 0, errors.New("the process has not exited, so its resource usage is not known yet")
	}
	ru, ok := state.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0, 0, fmt.Errorf("no resource usage for the process (%T)", state.SysUsage())
	}
	peakRSSMiB = float64(ru.Maxrss) * maxrssBytes / (1 << 20)
	// UserTime and SystemTime are ru_utime and ru_stime.
	cpuSeconds = (state.UserTime() + state.SystemTime()).Seconds()
	return peakRSSMiB, cpuSeconds, nil
}
