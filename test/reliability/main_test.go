//go:build e2e

package reliability

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/controller-kit/controller-kit/test/kittest"
)

var (
	foos       = flag.Int("foos", 500, "how many Foos the tier 2 crash scenario creates at once")
	guestbooks = flag.Int("guestbooks", 50, "how many Guestbooks the tier 3 crash scenario creates at once")
	report     = flag.String("report", "", "where the figures go as JSON (default: <kit>/_output/reliability.json)")
	// clusterName is the suite's own local cluster, beside the learner's
	// controller-kit and make test's controller-kit-test and -bench.
	clusterName = flag.String("cluster", "controller-kit-reliability", "the local cluster the suite creates (and deletes) for itself")
	keep        = flag.Bool("keep-cluster", false, "leave the cluster running after the tests, for a look with kubectl")
)

// deadline bounds every wait of the suite: generous for a loaded 2-core machine
// and a burst of 500 objects, and only reached by a test that is failing anyway.
var deadline = kittest.Deadline(5 * time.Minute)

// Binaries the suite builds once from the tiers, as a learner's go build would.
var sampleControllerBin, managerBin string

func TestMain(m *testing.M) {
	flag.Parse()
	// controller-runtime's client (the Guestbook scenarios) logs through klog.
	ctrllog.SetLogger(klog.NewKlogr())
	os.Exit(run(m))
}

// run starts the cluster, builds and installs what the scenarios need, runs
// them, and writes the report; it returns the exit code. Whatever it started is
// deleted on the way out, whether the tests pass or fail.
func run(m *testing.M) int {
	root := kittest.RepoRoot()
	pods := *foos + guestbookPods*(*guestbooks)
	c, err := startCluster(root, pods)
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}
	if !*keep {
		defer c.stop()
	}
	// The kit's helpers (kittest.Config, Kubectl, Writes ...) reach the cluster
	// that $KUBECONFIG names.
	os.Setenv("KUBECONFIG", c.info.Kubeconfig)

	// The same cached binaries as the e2e suites' (kittest.CachedBinary).
	if sampleControllerBin, err = kittest.CachedBinary(filepath.Join(root, "sample-controller"), "sample-controller", ""); err == nil {
		managerBin, err = kittest.CachedBinary(filepath.Join(root, "kubebuilder-guestbook", "cmd"), "manager", "")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}
	if err := install(root); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}

	code := m.Run()
	path := *report
	if path == "" {
		path = filepath.Join(root, "_output", "reliability.json")
	}
	if err := writeReport(path, c.info.Name); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: writing the report:", err)
		return 1
	}
	if *keep {
		fmt.Printf("the cluster %s is still running (-keep-cluster): KUBECONFIG=%s\n", c.info.Name, c.info.Kubeconfig)
	}
	return code
}
