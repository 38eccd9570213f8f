//go:build e2e

package reliability

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/controller-kit/controller-kit/test/kittest"
)

const (
	// podsPerNode is how many Pods the suite puts on one kwok node (each takes
	// 110), leaving room for what the garbage collector has yet to delete.
	podsPerNode = 100
	// guestbookPods is how many Pods one Guestbook of the crash scenario runs:
	// one frontend, the Redis leader, one follower.
	guestbookPods = 3
)

// cluster is the suite's fresh local cluster.
type cluster struct {
	root string
	info kittest.ClusterInfo
}

// startCluster deletes any cluster left over by an earlier run, then creates a
// new one with room for pods Pods, through the scripts of `make local-up`
// (hack/cluster/local-up.sh with KIT_FRESH=1 creates a new cluster or fails), and reads
// its paths from the file local-up.sh writes.
func startCluster(root string, pods int) (*cluster, error) {
	c := &cluster{root: root}
	if out, err := c.script("local-down.sh"); err != nil {
		return nil, fmt.Errorf("hack/cluster/local-down.sh: %w\n%s", err, out)
	}
	nodes := pods/podsPerNode + 2
	fmt.Printf("starting the local cluster %s with %d kwok nodes\n", *clusterName, nodes)
	start := time.Now()
	out, err := c.script("local-up.sh", "KIT_NODES="+strconv.Itoa(nodes), "KIT_FRESH=1")
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == kittest.LocalUpClusterExists {
		return nil, fmt.Errorf("the cluster %s from an earlier run was not deleted (hack/cluster/local-down.sh):\n%s", *clusterName, out)
	}
	if err != nil {
		return nil, fmt.Errorf("hack/cluster/local-up.sh: %w\n%s", err, out)
	}
	if c.info, err = kittest.ReadClusterInfo(kittest.ClusterInfoPath(root, *clusterName)); err != nil {
		return nil, err
	}
	fmt.Printf("cluster %s ready in %.0f s\n", *clusterName, time.Since(start).Seconds())
	return c, nil
}

// stop deletes the cluster.
func (c *cluster) stop() {
	if out, err := c.script("local-down.sh"); err != nil {
		fmt.Fprintf(os.Stderr, "deleting the cluster %s: %v\n%s", *clusterName, err, out)
	}
}

// script runs one of the kit's cluster scripts on the suite's cluster, with env
// added to the environment, and returns its combined output.
func (c *cluster) script(name string, env ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(c.root, "hack", "cluster", name))
	cmd.Env = append(append(os.Environ(), "KIT_CLUSTER="+*clusterName), env...)
	return cmd.CombinedOutput()
}

// install applies what both tiers ship for running outside the cluster (the
// CRDs, sample-controller's namespace and RBAC) server-side, as `make install`
// does, waits until a controller running with that RBAC can use the CRDs, and
// adds the Guestbook operator's namespace and RBAC (installGuestbookRBAC).
func install(root string) error {
	sample := filepath.Join(root, "sample-controller", "config")
	guestbook := filepath.Join(root, "kubebuilder-guestbook", "config")
	for _, manifest := range []string{
		filepath.Join(sample, "crd", "samplecontroller.k8s.io_foos.yaml"),
		filepath.Join(sample, "manager", "namespace.yaml"),
		filepath.Join(sample, "rbac"),
		filepath.Join(guestbook, "crd", "bases", "webapp.controller-kit.dev_guestbooks.yaml"),
	} {
		if out, err := kittest.KubectlE("apply", "--server-side", "-f", manifest); err != nil {
			return fmt.Errorf("applying %s: %w\n%s", manifest, err, out)
		}
	}
	if err := kittest.WaitForCRD("foos.samplecontroller.k8s.io", "samplecontroller.k8s.io/v1alpha1", "Foo", 90*time.Second); err != nil {
		return err
	}
	if err := kittest.WaitForCRD("guestbooks.webapp.controller-kit.dev", "webapp.controller-kit.dev/v1", "Guestbook", 90*time.Second); err != nil {
		return err
	}
	return installGuestbookRBAC(root)
}
