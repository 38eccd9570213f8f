package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/flowcontrol"
)

// benchCluster is the name of the local cluster each scenario gets afresh; it
// lives beside the learner's controller-kit and make test's controller-kit-test.
const benchCluster = "controller-kit-bench"

// cluster is one freshly created local cluster and the clients the harness uses on it.
type cluster struct {
	root       string
	kubeconfig string
	auditLog   string
	kube       kubernetes.Interface
	dyn        dynamic.Interface
	cfg        *rest.Config
}

// startCluster deletes any previous bench cluster and creates a new one with the
// given number of kwok nodes, through the same scripts as `make local-up`.
func startCluster(root string, nodes int) (*cluster, error) {
	env := append(os.Environ(), "KIT_CLUSTER="+benchCluster, "KIT_NODES="+strconv.Itoa(nodes))
	for _, script := range []string{"local-down.sh", "local-up.sh"} {
		cmd := exec.Command(filepath.Join(root, "hack", script))
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("hack/%s: %w\n%s", script, err, out)
		}
		// A scenario measured on the previous one's cluster would be wrong.
		if script == "local-up.sh" && !strings.Contains(string(out), "creating local cluster") {
			return nil, fmt.Errorf("hack/local-up.sh did not create a fresh cluster (was the previous one deleted?):\n%s", out)
		}
	}
	c := &cluster{
		root:       root,
		kubeconfig: filepath.Join(root, "_output", "kubeconfig-"+benchCluster),
		auditLog:   filepath.Join(root, "_output", "kwok", "clusters", benchCluster, "logs", "audit.log"),
	}
	// Inline the certificate files: client-go caches TLS transports by file path,
	// and every bench cluster has a new CA at the same path.
	raw, err := clientcmd.LoadFromFile(c.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", c.kubeconfig, err)
	}
	if err := clientcmdapi.FlattenConfig(raw); err != nil {
		return nil, fmt.Errorf("inline the files of %s: %w", c.kubeconfig, err)
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*raw, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("client config from %s: %w", c.kubeconfig, err)
	}
	// The harness must never be what is slow: no client-side rate limit at all.
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	cfg.UserAgent = "controller-kit-bench"
	c.cfg = cfg
	if c.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if c.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, err
	}
	return c, nil
}

// stop deletes the bench cluster.
func (c *cluster) stop() {
	cmd := exec.Command(filepath.Join(c.root, "hack", "local-down.sh"))
	cmd.Env = append(os.Environ(), "KIT_CLUSTER="+benchCluster)
	_ = cmd.Run()
}

// kubectl runs the kit's kubectl against the bench cluster.
func (c *cluster) kubectl(args ...string) error {
	cmd := exec.Command(filepath.Join(c.root, "bin", "kubectl"), append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// installCRD applies a CRD manifest server-side and waits until it is Established.
func (c *cluster) installCRD(path, name string) error {
	if err := c.kubectl("apply", "--server-side", "-f", path); err != nil {
		return err
	}
	return c.kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd/"+name)
}

// writeCounts is what the audit log shows the controllers wrote in a window.
type writeCounts struct {
	// CustomWrites counts create/update/patch/delete of the custom resources
	// (Foos or Guestbooks), status subresource included.
	CustomWrites int `json:"customWrites"`
	// DeploymentWrites counts create/update/patch/delete of Deployments.
	DeploymentWrites int `json:"deploymentWrites"`
	// Events counts Events created or patched (core and events.k8s.io).
	Events int `json:"events"`
}

// countWrites reads the bench cluster's audit log (hack/audit-policy.yaml logs one
// Metadata line per write to the kit's objects) and counts the writes that
// arrived within [from, to) and whose user agent starts with
// userAgentPrefix: the controller's own, not the control plane's (the scheduler
// and controller-manager may still be recording events of the burst). Each
// counted write is also listed on detail, when it is not nil, for a look at what
// a controller wrote while nothing changed.
func (c *cluster) countWrites(from, to time.Time, customGroup, userAgentPrefix string, detail io.Writer) (writeCounts, error) {
	var counts writeCounts
	f, err := os.Open(c.auditLog)
	if err != nil {
		return counts, fmt.Errorf("open audit log: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e struct {
			Stage     string `json:"stage"`
			UserAgent string `json:"userAgent"`
			// The time the request arrived: a write that made the last object
			// converge arrived before the harness saw it converge, even when its
			// response completed a moment after.
			Stamp     time.Time `json:"requestReceivedTimestamp"`
			Verb      string    `json:"verb"`
			ObjectRef struct {
				APIGroup    string `json:"apiGroup"`
				Resource    string `json:"resource"`
				Subresource string `json:"subresource"`
				Namespace   string `json:"namespace"`
				Name        string `json:"name"`
			} `json:"objectRef"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return counts, fmt.Errorf("audit log line: %w", err)
		}
		if e.Stage != "ResponseComplete" || e.Stamp.Before(from) || !e.Stamp.Before(to) ||
			!strings.HasPrefix(e.UserAgent, userAgentPrefix) {
			continue
		}
		if detail != nil {
			fmt.Fprintf(detail, "%s %s %s %s/%s %s/%s\n", e.Stamp.Format(time.RFC3339Nano), e.UserAgent, e.Verb,
				e.ObjectRef.APIGroup, e.ObjectRef.Resource, e.ObjectRef.Namespace, e.ObjectRef.Name+subresource(e.ObjectRef.Subresource))
		}
		switch {
		case e.ObjectRef.APIGroup == customGroup:
			counts.CustomWrites++
		case e.ObjectRef.APIGroup == "apps" && e.ObjectRef.Resource == "deployments":
			counts.DeploymentWrites++
		case e.ObjectRef.Resource == "events":
			counts.Events++
		}
	}
	return counts, sc.Err()
}

// process is a controller under test, started with its output in a log file.
type process struct {
	cmd  *exec.Cmd
	done chan error
}

// startProcess runs bin with args, output appended to logPath.
func startProcess(logPath, bin string, args ...string) (*process, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	p := &process{cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait(); log.Close() }()
	return p, nil
}

// usage returns the process's peak resident memory (MiB, VmHWM) and the CPU time it
// has used so far (seconds, user + system), read from /proc.
func (p *process) usage() (peakRSSMiB, cpuSeconds float64, err error) {
	pid := strconv.Itoa(p.cmd.Process.Pid)
	status, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			peakRSSMiB = kib / 1024
		}
	}
	stat, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return 0, 0, err
	}
	// Fields after the command name (which may hold spaces) start at state (field 3);
	// utime and stime are fields 14 and 15, in clock ticks of 1/100 s on Linux.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return peakRSSMiB, (utime + stime) / 100, nil
}

// stop ends the process (SIGTERM, then SIGKILL after 10 s).
func (p *process) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// waitCtx is a helper for scenario deadlines.
func waitCtx(timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), timeout)
}

// subresource formats an audit objectRef's subresource as a path suffix.
func subresource(s string) string {
	if s == "" {
		return ""
	}
	return "/" + s
}
