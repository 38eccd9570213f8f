package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/kwok/pkg/apis/internalversion"
	"sigs.k8s.io/kwok/pkg/config"
	"sigs.k8s.io/kwok/pkg/kwokctl/runtime"
)

// useBinary restarts the component of the cluster on binary, with flags set on
// its command line (applyFlags; none: the flags it has), and waits up to
// timeout for its /healthz to answer ok (kube-apiserver: and to admit a
// create, admitsACreate). Nothing is stopped before binary has
// shown that it runs (`binary --version`) and the flags are well formed; a
// component that does not become healthy is put back on the binary and the
// flags it had and started again, and the error says where its log is.
func useBinary(ctx context.Context, cluster, component, binary string, flags []string, timeout time.Duration) error {
	binary, err := filepath.Abs(binary)
	if err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, binary, "--version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s does not run (%v), so %s keeps the binary it has:\n%s", binary, err, component, out)
	}
	version := strings.TrimSpace(string(out))

	rt, c, err := load(ctx, cluster, component)
	if err != nil {
		return err
	}
	link := c.Binary
	old, err := os.Readlink(link)
	if err != nil {
		return fmt.Errorf("%s runs from %s, which is not the link kwokctl's binary runtime makes: %w", component, link, err)
	}

	restoreFlags := func() error { return nil }
	if len(flags) > 0 {
		if restoreFlags, err = applyFlags(ctx, rt, cluster, component, flags); err != nil {
			return fmt.Errorf("%s keeps its binary and flags: %w", component, err)
		}
	}

	start := time.Now()
	fmt.Printf("%s: restarting %s on %s (%s)\n", cluster, component, binary, version)
	log := filepath.Join(config.ClustersDir, cluster, "logs", component+".log")
	if err := swapTo(ctx, rt, cluster, c, link, binary); err != nil {
		return err
	}
	// Where the new process's lines start in its log (kwokctl appends to it),
	// for the panic admitsACreate looks for.
	var logStart int64
	if info, err := os.Stat(log); err == nil {
		logStart = info.Size()
	}
	err = waitHealthy(ctx, cluster, c, timeout)
	if err == nil && component == "kube-apiserver" {
		// See admits.go for why healthy asks more of kube-apiserver.
		err = admitsACreate(ctx, c, log, logStart, timeout)
	}
	if err != nil {
		// kwokctl starts the old binary on the same log file, which loses the
		// failed run's reason: keep a copy of it first.
		if kept, keepErr := keepLog(log); keepErr == nil {
			log = kept
		} else {
			fmt.Fprintf(os.Stderr, "%s: cannot keep %s (%v); the old binary's start overwrites it\n", cluster, log, keepErr)
		}
		fmt.Fprintf(os.Stderr, "%s: %s on %s is not healthy (%v); going back to %s\n", cluster, component, binary, err, old)
		if len(flags) > 0 {
			fmt.Fprintf(os.Stderr, "%s: and to the flags it had\n", cluster)
		}
		// A component that refuses its flags says why in its last lines.
		if tail := lastLines(log, 3); tail != "" {
			fmt.Fprintf(os.Stderr, "%s: the last lines of its log:\n%s\n", cluster, tail)
		}
		if backErr := restoreFlags(); backErr != nil {
			return fmt.Errorf("%s on %s never became healthy (%v), and its flags could not be put back: %w; its log: %s",
				component, binary, err, backErr, log)
		}
		if backErr := swapTo(ctx, rt, cluster, c, link, old); backErr != nil {
			return fmt.Errorf("%s on %s never became healthy (%v), and going back to %s failed too: %w; its log: %s",
				component, binary, err, old, backErr, log)
		}
		if backErr := waitHealthy(ctx, cluster, c, timeout); backErr != nil {
			return fmt.Errorf("%s on %s never became healthy (%v); back on %s, it is not healthy either (%v); its log: %s",
				component, binary, err, old, backErr, log)
		}
		again := old
		if len(flags) > 0 {
			again += " with the flags it had"
		}
		within := " within " + timeout.String()
		if errors.As(err, new(exitedError)) || errors.As(err, new(admissionError)) {
			within = ""
		}
		return fmt.Errorf("%s on %s never became healthy%s (%v), so it runs %s again; read why in %s",
			component, binary, within, err, again, log)
	}
	fmt.Printf("%s: %s is healthy on %s after %.1f s\n", cluster, component, binary, time.Since(start).Seconds())
	return nil
}

// printBinary prints the absolute path of the binary the component runs: the
// target of the link kwokctl starts it from.
func printBinary(ctx context.Context, cluster, component string) error {
	_, c, err := load(ctx, cluster, component)
	if err != nil {
		return err
	}
	target, err := filepath.EvalSymlinks(c.Binary)
	if err != nil {
		return err
	}
	fmt.Println(target)
	return nil
}

// printArgs prints the command-line flags the cluster gives the component
// (its configuration's args, as kwokctl starts it), one a line.
func printArgs(ctx context.Context, cluster, component string) error {
	_, c, err := load(ctx, cluster, component)
	if err != nil {
		return err
	}
	for _, arg := range c.Args {
		fmt.Println(arg)
	}
	return nil
}

// swapTo stops the component, points its link at binary and starts it.
func swapTo(ctx context.Context, rt runtime.Runtime, cluster string, c internalversion.Component, link, binary string) error {
	component := c.Name
	if err := rt.StopComponent(ctx, component); err != nil {
		return fmt.Errorf("stopping %s: %w", component, err)
	}
	if err := waitPortFree(cluster, c, 10*time.Second); err != nil {
		return err
	}
	// A new link renamed over the old one: the link is never missing.
	tmp := link + ".new"
	_ = os.Remove(tmp)
	if err := os.Symlink(binary, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, link); err != nil {
		return err
	}
	if err := rt.StartComponent(ctx, component); err != nil {
		return fmt.Errorf("starting %s: %w", component, err)
	}
	return nil
}

// waitPortFree waits until nothing accepts connections on the component's
// endpoint any more, so that the health of the process started next is never read
// from one that outlived the stop (a process a debugger started, say, which its
// debugger's death does not end). The error names the address and, on Linux, the
// process that holds it, says that the component is not running now, and gives
// the two fixes: a leftover of the cluster is stopped and the command run again;
// a port that another cluster took while the component was stopped never comes
// back, so the cluster is started again on free ports, or another one is used.
func waitPortFree(cluster string, c internalversion.Component, timeout time.Duration) error {
	if c.Metric == nil || c.Metric.Host == "" {
		return nil
	}
	deadline := time.Now().Add(timeout)
	for {
		conn, err := net.DialTimeout("tcp", c.Metric.Host, time.Second)
		if err != nil {
			return nil
		}
		conn.Close()
		if time.Now().After(deadline) {
			holder := "ss -ltnp | grep " + c.Metric.Host + " names it"
			if l, ok := portListener(c.Metric.Host); ok {
				holder = "it is " + l.String()
			}
			return fmt.Errorf("%[1]s is stopped, but another process still listens on its port %[2]s (%[3]s), so %[1]s is not running now. "+
				"If that process is left from this cluster (a debug build, say), stop it and run the same command again. "+
				"If it is another cluster's or another program's (one that started while %[1]s was stopped can take its free port), this is not your code, "+
				"and the port does not come back: start this cluster again on free ports (KIT_CLUSTER=%[4]s make local-down, then KIT_CLUSTER=%[4]s make local-up), "+
				"or use a cluster of its own (KIT_CLUSTER=NAME make local-up, then KIT_CLUSTER=NAME before each make command)",
				c.Name, c.Metric.Host, holder, cluster)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitHealthy polls the component's /healthz on the host and with the client
// certificate kwokctl gives its metrics endpoint, until it answers 200 ok, its
// process has exited (exitedError), or timeout passes; the error is the last
// answer seen. An answer from another process on the component's port (plain
// HTTP where the component serves HTTPS, or, at the timeout, a listener that is
// not the component's process) ends the wait with an error that says so
// (portTaken).
func waitHealthy(ctx context.Context, cluster string, c internalversion.Component, timeout time.Duration) error {
	client, err := componentClient(c)
	if err != nil {
		return err
	}
	m := c.Metric
	url := componentURL(c, "/healthz")
	scheme, _, _ := strings.Cut(url, ":")
	deadline := time.Now().Add(timeout)
	last := errors.New("no answer yet")
	for time.Now().Before(deadline) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Errorf("%s answered %d: %s", url, resp.StatusCode, strings.TrimSpace(string(body)))
		} else if errors.Is(err, http.ErrSchemeMismatch) && scheme == "https" {
			return portTaken(c, "it answered in plain HTTP, where "+c.Name+" serves HTTPS")
		} else {
			last = err
		}
		// A component that has exited never answers: say so now rather
		// than at the timeout (its log says why).
		if pid, err := componentPID(cluster, c.Name); err == nil && exited(pid) {
			return exitedError{pid: pid, url: url}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	if l, ok := portListener(m.Host); ok {
		if pid, err := componentPID(cluster, c.Name); err == nil && !descendsFrom(l.pid, pid) {
			return portTaken(c, fmt.Sprintf("its health check got no ok (%v), and the port's listener is not %s's process (pid %d)", last, c.Name, pid))
		}
	}
	return last
}

// componentClient returns an HTTP client for the component's endpoint, with
// the client certificate kwokctl gives its metrics endpoint (for kube-apiserver,
// the cluster's admin), each request bounded to 2 s.
func componentClient(c internalversion.Component) (*http.Client, error) {
	m := c.Metric
	if m == nil || m.Host == "" {
		return nil, errors.New("kwokctl records no endpoint for this component, so its health cannot be read")
	}
	tlsConfig := &tls.Config{InsecureSkipVerify: m.InsecureSkipVerify} //nolint:gosec // loopback, the cluster's own self-signed serving certificates
	if m.CertPath != "" && m.KeyPath != "" {
		cert, err := tls.LoadX509KeyPair(m.CertPath, m.KeyPath)
		if err != nil {
			return nil, fmt.Errorf("reading the client certificate kwokctl made: %w", err)
		}
		tlsConfig.Certificates = []tls.Certificate{cert}
	}
	return &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig}}, nil
}

// componentURL returns the URL of path on the component's endpoint (https
// unless kwokctl says otherwise).
func componentURL(c internalversion.Component, path string) string {
	scheme := c.Metric.Scheme
	if scheme == "" {
		scheme = "https"
	}
	return scheme + "://" + c.Metric.Host + path
}

// portTaken is the error for a component whose port another process answers:
// which port and why it is not the component, the process that holds it where
// Linux's /proc says, and that a rerun or a cluster of its own is the fix.
func portTaken(c internalversion.Component, why string) error {
	holder := "ss -ltnp | grep " + c.Metric.Host + " names the process that holds it"
	if l, ok := portListener(c.Metric.Host); ok {
		holder = "it is held by " + l.String()
	}
	return fmt.Errorf("port %s is answered by another process, not by the %s just started (%s); %s. "+
		"Another cluster or a process left from an earlier run took the port while %s restarted: this is not your code. "+
		"Run the same command again, or use a cluster of its own (KIT_CLUSTER=NAME make local-up, then KIT_CLUSTER=NAME before each make command)",
		c.Metric.Host, c.Name, why, holder, c.Name)
}

// componentPID returns the process id kwokctl's binary runtime recorded for the
// component of the cluster (its pids/ folder).
func componentPID(cluster, component string) (int, error) {
	data, err := os.ReadFile(filepath.Join(config.ClustersDir, cluster, "pids", component+".pid"))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(data)))
}

// keepLog copies a component's log (logs/NAME.log) to logs/NAME.failed.log,
// which the next start does not touch, and returns the copy's path.
func keepLog(log string) (string, error) {
	data, err := os.ReadFile(log)
	if err != nil {
		return "", err
	}
	kept := strings.TrimSuffix(log, ".log") + ".failed.log"
	return kept, os.WriteFile(kept, data, 0o644)
}

// exitedError is waitHealthy's error for a component whose process ended
// before its /healthz answered ok.
type exitedError struct {
	pid int
	url string
}

func (e exitedError) Error() string {
	return fmt.Sprintf("it exited (pid %d) without answering %s", e.pid, e.url)
}

// lastLines returns the last n lines of the file at path, each indented by
// four spaces, or "" when it cannot be read or is empty.
func lastLines(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	lines = lines[max(0, len(lines)-n):]
	return "    " + strings.Join(lines, "\n    ")
}
