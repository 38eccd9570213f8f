package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// listener is a process that listens on a TCP port, as Linux's /proc shows it.
type listener struct {
	pid     int
	command string // its command line, arguments joined with spaces
}

// String describes the process for an error: "pid 1234 (/usr/bin/python3 -m http.server 10257)".
func (l listener) String() string {
	return fmt.Sprintf("pid %d (%s)", l.pid, l.command)
}

// portListener returns the process that listens on the port of address
// ("127.0.0.1:10257"), read from /proc: the socket in LISTEN state on that port
// in /proc/net/tcp or tcp6, then the process with that socket among its open
// files. ok is false where /proc cannot say: not Linux, no such socket, or a
// process of another user, whose files are not ours to read.
func portListener(address string) (l listener, ok bool) {
	_, portText, err := net.SplitHostPort(address)
	if err != nil {
		return listener{}, false
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return listener{}, false
	}
	inode := ""
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if inode = listeningInode(table, port); inode != "" {
			break
		}
	}
	if inode == "" {
		return listener{}, false
	}
	socket := "socket:[" + inode + "]"
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err != nil || target != socket {
			continue
		}
		pid, err := strconv.Atoi(strings.Split(fd, "/")[2])
		if err != nil {
			continue
		}
		return listener{pid: pid, command: commandLine(pid)}, true
	}
	return listener{}, false
}

// listeningInode returns the inode of the socket that listens on port in a
// /proc/net/tcp table ("" when none does). A line of the table reads
// "sl local_address rem_address st ... inode", the address as hex IP:PORT and
// LISTEN as the state 0A.
func listeningInode(table string, port int) string {
	f, err := os.Open(table)
	if err != nil {
		return ""
	}
	defer f.Close()
	want := fmt.Sprintf(":%04X", port)
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) > 9 && strings.HasSuffix(fields[1], want) && fields[3] == "0A" {
			return fields[9]
		}
	}
	return ""
}

// commandLine returns the command line of process pid, its arguments joined
// with spaces and cut after 160 characters; "?" when /proc does not say.
func commandLine(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(data) == 0 {
		return "?"
	}
	command := strings.TrimSpace(strings.ReplaceAll(string(data), "\x00", " "))
	if len(command) > 160 {
		command = command[:160] + " ..."
	}
	return command
}

// parentPID returns the parent of process pid, from /proc/PID/stat; 0 when it
// cannot be read.
func parentPID(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// "PID (COMMAND) STATE PPID ...": the command may hold spaces and parentheses.
	rest := string(data)
	if i := strings.LastIndex(rest, ")"); i >= 0 {
		rest = rest[i+1:]
	}
	fields := strings.Fields(rest)
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// descendsFrom reports whether process pid is ancestor or one of its children,
// grandchildren and so on (the debug build delve starts under a component's
// wrapper, say).
func descendsFrom(pid, ancestor int) bool {
	for i := 0; pid > 1 && i < 64; i++ {
		if pid == ancestor {
			return true
		}
		pid = parentPID(pid)
	}
	return false
}

// exited reports whether process pid has ended: /proc has no entry for it, or
// the entry is a zombie (state Z), one that has exited and waits for its
// parent to read its status. On a system without /proc it reports false, and
// the caller waits as if the process ran.
func exited(pid int) bool {
	if _, err := os.Stat("/proc/self"); err != nil {
		return false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	rest := string(data)
	if i := strings.LastIndex(rest, ")"); i >= 0 {
		rest = rest[i+1:]
	}
	fields := strings.Fields(rest)
	return len(fields) > 0 && fields[0] == "Z"
}
