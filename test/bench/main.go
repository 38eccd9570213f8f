// Command bench is `make bench`: it times the kit's sample-controller beside upstream
// kubernetes/sample-controller and beside a plain client (the floor), each on a
// freshly created local cluster, one after another, then prints a Markdown table and
// writes results.json and converged.png to the output folder.
//
// Per controller it measures a burst (create N Foos at once: time until every
// Deployment exists and until every Foo reports its replicas available; the
// controller's peak RSS and CPU seconds) and an idle window after convergence
// (the controller's writes to Foos and Deployments and the Events it records,
// counted from the API server's audit log, not from the controller's own logs).
// See docs/performance.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// options are the command's flags, plus paths derived from them.
type options struct {
	n         int
	idle      time.Duration
	repeat    int
	workers   int
	scenarios string
	timeout   time.Duration
	root      string
	out       string
	oursCRD   string
	// oneCluster is -one-cluster: every scenario on one cluster (make test's
	// smoke run), its namespaces deleted between scenarios.
	oneCluster bool
	// lastOnCluster is set, with -one-cluster, for the run's last scenario:
	// its namespaces are left to the cluster's deletion.
	lastOnCluster bool
	// scale is -scale: the Ns of `make bench-scale`, or "" for one burst per scenario.
	scale       string
	upstreamMax int
	scaleReport string
}

// scaleCluster is the cluster -scale creates afresh for each step unless
// -cluster names another: not make bench's, so both can run on one machine.
const scaleCluster = "controller-kit-scale"

// clusterFlagSet reports whether -cluster was given.
func clusterFlagSet() bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "cluster" })
	return set
}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 200, "How many Foos a burst creates (the guestbook scenario creates n/10 Guestbooks).")
	flag.DurationVar(&o.idle, "idle", 60*time.Second, "Length of the idle window after convergence, in which writes are counted.")
	flag.IntVar(&o.repeat, "repeat", 1, "How many times each scenario runs; the table shows medians.")
	flag.IntVar(&o.workers, "floor-workers", 16, "Concurrency of the floor's writes; keep it equal to sample-controller's default --workers.")
	flag.StringVar(&o.scenarios, "scenarios", "ours,upstream,ours-upstream-settings,floor,guestbook", "Comma-separated scenarios to run.")
	flag.DurationVar(&o.timeout, "timeout", 20*time.Minute, "Upper bound on one scenario's burst; past it the run fails.")
	flag.StringVar(&benchCluster, "cluster", benchCluster, "Name of the local cluster each scenario creates afresh (and deletes): one no one else uses.")
	flag.BoolVar(&o.oneCluster, "one-cluster", false, "Run every scenario on one cluster, created once while the controllers build, deleting the scenario's namespaces between scenarios, "+
		"with shorter pauses before the idle window and before the audit log is read: "+
		"a smoke run that the harness still drives each scenario (make test), whose figures are not comparable with fresh clusters'.")
	flag.StringVar(&o.out, "out", "", "Folder for logs, results.json and converged.png (default: <repo>/_output/bench, or <repo>/_output/bench-scale with -scale).")
	flag.StringVar(&o.scale, "scale", "", "Comma-separated Ns, such as 100,1000,5000,10000: run every scenario at each N instead (make bench-scale), "+
		"and write results-scale.json and scale.png; -n and -repeat are then ignored.")
	flag.IntVar(&o.upstreamMax, "scale-upstream-max", 1000, "With -scale, the largest N at which upstream and ours-upstream-settings run "+
		"(at client-go's 5 requests per second, 10,000 Foos take over an hour).")
	flag.StringVar(&o.scaleReport, "scale-report", "", "Print the table and redraw scale.png from this results-scale.json of an earlier -scale run (a run cut short included), and run nothing.")
	flag.Parse()
	if o.scale != "" && !clusterFlagSet() {
		benchCluster = scaleCluster
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.oneCluster && (o.scale != "" || o.repeat > 1) {
		return fmt.Errorf("-one-cluster is for a smoke run: it goes with neither -scale nor -repeat, which compare runs on fresh clusters")
	}
	if o.n < 1 || o.repeat < 1 || o.workers < 1 {
		return fmt.Errorf("-n, -repeat and -floor-workers must be at least 1 (got %d, %d, %d)", o.n, o.repeat, o.workers)
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	o.root = filepath.Clean(filepath.Join(wd, "..", ".."))
	if o.out == "" {
		o.out = filepath.Join(o.root, "_output", "bench")
		if o.scale != "" {
			o.out += "-scale"
		}
	}
	if err := os.MkdirAll(filepath.Join(o.out, "bin"), 0o755); err != nil {
		return err
	}
	o.oursCRD = filepath.Join(o.root, "sample-controller", "config", "crd", "samplecontroller.k8s.io_foos.yaml")
	if o.scaleReport != "" {
		return scaleReport(o)
	}
	if o.scale != "" {
		return runScale(o)
	}

	names := strings.Split(o.scenarios, ",")
	for i, name := range names {
		names[i] = strings.TrimSpace(name)
	}
	if o.oneCluster {
		defer func() {
			if shared != nil {
				shared.stop()
			}
		}()
	}
	all, err := prepare(o, names)
	if err != nil {
		return err
	}
	var results []result
	for i, name := range names {
		r, err := runScenario(o, all, name, i == len(names)-1)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	table := markdown(o, results)
	fmt.Print(table)
	return writeOutputs(o.out, results)
}

// prepare checks the scenarios' names and builds their binaries; with
// -one-cluster it creates the run's one cluster meanwhile, with as many kwok
// nodes as the largest scenario needs.
func prepare(o options, names []string) (map[string]scenarioFunc, error) {
	for _, name := range names {
		if !slices.Contains(scenarioNames, name) {
			return nil, fmt.Errorf("-scenarios: unknown scenario %q (known: %s)", name, strings.Join(scenarioNames, ", "))
		}
	}
	clusterDone := make(chan error, 1)
	if o.oneCluster {
		nodes := 0
		for _, name := range names {
			nodes = max(nodes, nodesFor(objectsOf(name, o.n)*podsPer(name)))
		}
		say := phases("cluster", nodes)
		say("creating the run's one local cluster with %d kwok nodes (-one-cluster), while the binaries build", nodes)
		go func() {
			c, err := startCluster(o.root, nodes)
			shared = c
			say("the run's one cluster is up")
			clusterDone <- err
		}()
	} else {
		clusterDone <- nil
	}
	all, err := scenarios(o)
	if clusterErr := <-clusterDone; err == nil {
		err = clusterErr
	}
	return all, err
}

// runScenario runs the scenario name o.repeat times and returns the run with
// the median burst time; last says it is the run's last scenario.
func runScenario(o options, all map[string]scenarioFunc, name string, last bool) (result, error) {
	o.lastOnCluster = o.oneCluster && last
	n := objectsOf(name, o.n)
	began := time.Now()
	var runs []result
	for i := range o.repeat {
		where := "on a fresh local cluster"
		if o.oneCluster {
			where = "on the run's one cluster"
		}
		fmt.Fprintf(os.Stderr, ">> %s: run %d/%d, %d objects, %s\n", name, i+1, o.repeat, n, where)
		r, err := all[name](o, n)
		if err != nil {
			return r, fmt.Errorf("%s: %w", name, err)
		}
		fmt.Fprintf(os.Stderr, "   Deployments exist after %.1fs, converged after %.1fs\n", r.DeploymentsExist, r.Converged)
		runs = append(runs, r)
	}
	fmt.Fprintf(os.Stderr, "   %s took %.1fs\n", name, time.Since(began).Seconds())
	return median(runs), nil
}

// scenarioNames are the scenarios a run may name, in the order of the table.
var scenarioNames = []string{"ours", "upstream", "ours-upstream-settings", "floor", "guestbook"}

// scenarioFunc runs one scenario with n objects.
type scenarioFunc func(o options, n int) (result, error)

// objectsOf is how many objects scenario name creates for a burst of n: the
// guestbook scenario creates n/10 Guestbooks (at least one), each with three
// Deployments.
func objectsOf(name string, n int) int {
	if name == "guestbook" {
		return max(1, n/10)
	}
	return n
}

// podsPer is how many Pods one object of scenario name ends up with.
func podsPer(name string) int {
	if name == "guestbook" {
		return 5
	}
	return 1
}

// scenarios builds the binaries under test and returns each scenario by name.
func scenarios(o options) (map[string]scenarioFunc, error) {
	bin := filepath.Join(o.out, "bin")
	if err := buildControllers(o.root, bin); err != nil {
		return nil, err
	}
	upstreamDir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/sample-controller").Output()
	if err != nil {
		return nil, fmt.Errorf("locate k8s.io/sample-controller in the module cache: %w", err)
	}
	foo := controllerScenario{
		gvr: kittest.FooGVR, crdName: "foos.samplecontroller.k8s.io",
		newObject: func(namespace string, i int) *unstructured.Unstructured {
			return kittest.NewFoo(namespace, i, 1) // one replica: the rollout is part of the figure
		},
		deploymentsPer: 1, ready: fooAvailable, podsPer: 1,
	}
	ours := foo
	ours.name, ours.bin, ours.crdPath = "ours", filepath.Join(bin, "sample-controller"), o.oursCRD
	ours.args = func(kubeconfig string) []string { return []string{"--kubeconfig=" + kubeconfig} }
	ours.metricsArgs = func(addr string) []string { return []string{"--metrics-bind-address=" + addr} }
	ours.queue = "foos"
	// Upstream has no metrics endpoint. Its client throttling is measured on
	// ours run with upstream's settings: client-go's default 5 QPS and burst
	// of 10, 2 workers, a 30 s resync. Ours still writes less than upstream
	// (no status write or event on a pass that changes nothing), so this wait
	// is a lower bound of upstream's.
	upstreamLike := ours
	upstreamLike.name = "ours-upstream-settings"
	upstreamLike.args = func(kubeconfig string) []string {
		return []string{"--kubeconfig=" + kubeconfig, "--kube-api-qps=5", "--kube-api-burst=10", "--workers=2", "--resync=30s"}
	}
	upstream := foo
	upstream.name, upstream.bin = "upstream", filepath.Join(bin, "upstream-sample-controller")
	upstream.crdPath = filepath.Join(strings.TrimSpace(string(upstreamDir)), "artifacts", "examples", "crd-status-subresource.yaml")
	upstream.args = func(kubeconfig string) []string { return []string{"-kubeconfig=" + kubeconfig} }
	guestbook := controllerScenario{
		name: "guestbook", bin: filepath.Join(bin, "guestbook-manager"),
		args: func(kubeconfig string) []string {
			return []string{"--kubeconfig=" + kubeconfig, "--enable-webhooks=false",
				"--health-probe-bind-address=0", "--operator-namespace=" + warmupNamespace}
		},
		metricsArgs: func(addr string) []string {
			return []string{"--metrics-bind-address=" + addr, "--metrics-secure=false"}
		},
		queue:   "guestbook",
		crdPath: filepath.Join(o.root, "kubebuilder-guestbook", "config", "crd", "bases", "webapp.controller-kit.dev_guestbooks.yaml"),
		crdName: "guestbooks.webapp.controller-kit.dev",
		gvr:     schema.GroupVersionResource{Group: "webapp.controller-kit.dev", Version: "v1", Resource: "guestbooks"},
		newObject: func(namespace string, i int) *unstructured.Unstructured {
			return &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "webapp.controller-kit.dev/v1", "kind": "Guestbook",
				"metadata": map[string]any{"name": fmt.Sprintf("gb-%04d", i), "namespace": namespace},
				"spec":     map[string]any{},
			}}
		},
		deploymentsPer: 3, ready: conditionTrue("Available"), podsPer: 5,
	}
	return map[string]scenarioFunc{
		"ours":                   ours.run,
		"ours-upstream-settings": upstreamLike.run,
		"upstream":               upstream.run,
		"floor":                  runFloor,
		"guestbook":              guestbook.run,
	}, nil
}

// buildControllers builds the three controllers under test into bin, at once,
// each in its own module (make bench runs the harness with GOWORK=off, which the
// builds inherit). A run with no file of the kit changed builds nothing
// (kittest.BuildIfChanged).
func buildControllers(root, bin string) error {
	say := phases("build", 3)
	say("building the controllers under test")
	builds := []struct{ dir, out, pkg string }{
		{filepath.Join(root, "sample-controller"), filepath.Join(bin, "sample-controller"), "."},
		{filepath.Join(root, "kubebuilder-guestbook"), filepath.Join(bin, "guestbook-manager"), "./cmd"},
		// Upstream builds in this module (GOWORK=off), with client-go at v0.37.2.
		{filepath.Join(root, "test", "bench"), filepath.Join(bin, "upstream-sample-controller"), "k8s.io/sample-controller"},
	}
	err := kittest.ForEach(context.Background(), len(builds), len(builds), func(_ context.Context, i int) error {
		b := builds[i]
		// Built again only when a file of the kit changed since the last run.
		return kittest.BuildIfChanged(b.dir, b.pkg, b.out)
	})
	if err == nil {
		say("built")
	}
	return err
}

// conditionTrue reports whether an object's status has the named condition True.
func conditionTrue(name string) func(u *unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == name && m["status"] == "True" {
				return true
			}
		}
		return false
	}
}

// median returns the run with the median burst time (the runs themselves when one).
func median(runs []result) result {
	slices.SortFunc(runs, func(a, b result) int {
		switch {
		case a.DeploymentsExist < b.DeploymentsExist:
			return -1
		case a.DeploymentsExist > b.DeploymentsExist:
			return 1
		}
		return 0
	})
	return runs[len(runs)/2]
}
