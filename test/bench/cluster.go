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
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/ptr"

	"github.com/controller-kit/controller-kit/test/kittest"
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

// shared is the one cluster of a -one-cluster run, created by its first
// scenario; nil until then.
var shared *cluster

// clusterFor returns the cluster a scenario runs on, with the given number of
// kwok nodes, and release, for the scenario to call when it is done with it: a
// fresh cluster, which release deletes. With -one-cluster it is the run's one
// cluster (sized by the first scenario), and release deletes the scenario's
// namespaces, bench and warmup, and waits until they are gone (once, however
// often it is called); a scenario with a controller calls it before stopping
// the controller, which may have finalizers to remove.
func clusterFor(o options, nodes int, say func(format string, args ...any)) (*cluster, func(), error) {
	if !o.oneCluster {
		say("creating a fresh local cluster with %d kwok nodes", nodes)
		c, err := startCluster(o.root, nodes)
		if err != nil {
			return nil, nil, err
		}
		return c, c.stop, nil
	}
	if shared == nil {
		say("creating the run's one local cluster with %d kwok nodes (-one-cluster)", nodes)
		c, err := startCluster(o.root, nodes)
		if err != nil {
			return nil, nil, err
		}
		shared = c
	} else {
		say("on the run's one cluster (-one-cluster)")
		if err := shared.namespacesGone(benchNamespace, warmupNamespace); err != nil {
			return nil, nil, err
		}
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			if o.lastOnCluster {
				return // the cluster is deleted next, namespaces and all
			}
			began := time.Now()
			if err := shared.deleteNamespaces(benchNamespace, warmupNamespace); err != nil {
				say("%v", err)
			} else {
				say("namespaces %s and %s deleted in %.1fs", benchNamespace, warmupNamespace, time.Since(began).Seconds())
			}
		})
	}
	return shared, release, nil
}

// namespaceDeletion bounds how long deleteNamespaces waits.
const namespaceDeletion = 2 * time.Minute

// deleteNamespaces deletes the namespaces and waits until they are gone (at
// most namespaceDeletion). The error names those still there.
func (c *cluster) deleteNamespaces(names ...string) error {
	for _, ns := range names {
		err := c.kube.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting namespace %s: %w", ns, err)
		}
	}
	// The namespace controller waits out its Pods' grace period (kwok's fake
	// kubelet stops nothing) before it looks again: delete them at once. A
	// terminating namespace takes no new Pod, so none comes back.
	for _, ns := range names {
		err := c.kube.CoreV1().Pods(ns).DeleteCollection(context.Background(),
			metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting the Pods of namespace %s: %w", ns, err)
		}
	}
	return c.namespacesGone(names...)
}

// namespacesGone waits until none of the namespaces exists (at most
// namespaceDeletion), and otherwise returns an error naming those left.
func (c *cluster) namespacesGone(names ...string) error {
	deadline := time.Now().Add(namespaceDeletion)
	for {
		var left []string
		for _, ns := range names {
			_, err := c.kube.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
			if err == nil {
				left = append(left, ns)
			} else if !apierrors.IsNotFound(err) {
				return fmt.Errorf("reading namespace %s: %w", ns, err)
			}
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("-one-cluster: namespaces %s of the previous scenario still exist after %s; see their objects' finalizers with kubectl",
				strings.Join(left, ", "), namespaceDeletion)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// startCluster deletes any previous bench cluster and creates a new one with the
// given number of kwok nodes, through the same scripts as `make local-up`, and
// reads the cluster's paths from the file local-up.sh writes (kittest.ClusterInfo).
func startCluster(root string, nodes int) (*cluster, error) {
	if out, err := clusterScript(root, "local-down.sh"); err != nil {
		return nil, fmt.Errorf("hack/cluster/local-down.sh: %w\n%s", err, out)
	}
	// A scenario measured on the previous one's cluster would be wrong: with
	// KIT_FRESH=1, local-up.sh creates a new cluster or fails.
	out, err := clusterScript(root, "local-up.sh", "KIT_NODES="+strconv.Itoa(nodes), "KIT_FRESH=1")
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == kittest.LocalUpClusterExists {
		return nil, fmt.Errorf("the previous cluster %s was not deleted (hack/cluster/local-down.sh), "+
			"and hack/cluster/local-up.sh with KIT_FRESH=1 does not reuse it:\n%s", benchCluster, out)
	}
	if err != nil {
		return nil, fmt.Errorf("hack/cluster/local-up.sh: %w\n%s", err, out)
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

// clusterScript runs one of the kit's cluster scripts (hack/cluster/local-up.sh,
// hack/cluster/local-down.sh) on the bench cluster, with env added to the environment,
// and returns its combined output and how it ended (an *exec.ExitError for a
// non-zero exit status).
func clusterScript(root, script string, env ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(root, "hack", "cluster", script))
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

// createNamespaces creates the namespaces.
func (c *cluster) createNamespaces(ctx context.Context, names ...string) error {
	for _, name := range names {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := c.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating namespace %s: %w", name, err)
		}
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

// countWrites reads the bench cluster's audit log (hack/cluster/audit-policy.yaml logs one
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
