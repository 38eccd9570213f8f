package main

import (
	"context"
	"errors"
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

	"github.com/controller-kit/controller-kit/hack/kittest"
)

// benchCluster is the name of the local cluster each scenario gets afresh; it
// lives beside the learner's controller-kit and make test's controller-kit-test
// (-cluster names another, for two benches on one machine).
var benchCluster = "controller-kit-bench"

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
// given number of kwok nodes, through the same scripts as `make local-up`, and
// reads the cluster's paths from the file local-up.sh writes (kittest.ClusterInfo).
func startCluster(root string, nodes int) (*cluster, error) {
	if out, err := clusterScript(root, "local-down.sh"); err != nil {
		return nil, fmt.Errorf("hack/local-down.sh: %w\n%s", err, out)
	}
	// A scenario measured on the previous one's cluster would be wrong: with
	// KIT_FRESH=1, local-up.sh creates a new cluster or fails.
	out, err := clusterScript(root, "local-up.sh", "KIT_NODES="+strconv.Itoa(nodes), "KIT_FRESH=1")
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == kittest.LocalUpClusterExists {
		return nil, fmt.Errorf("the previous cluster %s was not deleted (hack/local-down.sh), "+
			"and hack/local-up.sh with KIT_FRESH=1 does not reuse it:\n%s", benchCluster, out)
	}
	if err != nil {
		return nil, fmt.Errorf("hack/local-up.sh: %w\n%s", err, out)
	}
	info, err := kittest.ReadClusterInfo(kittest.ClusterInfoPath(root, benchCluster))
	if err != nil {
		return nil, err
	}
	c := &cluster{root: root, kubeconfig: info.Kubeconfig, auditLog: info.AuditLog}
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

// clusterScript runs one of the kit's cluster scripts (hack/local-up.sh,
// hack/local-down.sh) on the bench cluster, with env added to the environment,
// and returns its combined output and how it ended (an *exec.ExitError for a
// non-zero exit status).
func clusterScript(root, script string, env ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(root, "hack", script))
	cmd.Env = append(append(os.Environ(), "KIT_CLUSTER="+benchCluster), env...)
	return cmd.CombinedOutput()
}

// stop deletes the bench cluster.
func (c *cluster) stop() {
	_, _ = clusterScript(c.root, "local-down.sh")
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
	entries, err := kittest.ReadAuditLog(c.auditLog)
	if err != nil {
		return counts, err
	}
	for _, e := range entries {
		// e.Received: a write that made the last object converge arrived before
		// the harness saw it converge, even when its response completed after.
		if !e.IsWrite() || e.Received.Before(from) || !e.Received.Before(to) ||
			!strings.HasPrefix(e.UserAgent, userAgentPrefix) {
			continue
		}
		if detail != nil {
			fmt.Fprintf(detail, "%s %s\n", e, e.UserAgent)
		}
		switch {
		case e.APIGroup == customGroup:
			counts.CustomWrites++
		case e.APIGroup == "apps" && e.Resource == "deployments":
			counts.DeploymentWrites++
		case e.Resource == "events":
			counts.Events++
		}
	}
	return counts, nil
}

// waitCtx is a helper for scenario deadlines.
func waitCtx(timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), timeout)
}
