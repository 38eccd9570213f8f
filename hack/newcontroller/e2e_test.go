//go:build e2e

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestNewControllerFromSampleController runs `make new-controller` as a user
// does, for a Bar kind, into a folder outside the kit's tree; then builds the
// project, runs its unit and envtest tests and its `make verify`; then, when
// $KUBECONFIG reaches a cluster, runs the project's own e2e suite, and installs
// its CRD and RBAC, runs the controller as its ServiceAccount and sees a Bar get
// its Deployment and its status.
func TestNewControllerFromSampleController(t *testing.T) {
	dir := newProject(t, "bar-controller", "FROM=sample-controller", "MODULE=example.com/bar-controller", "GROUP=bar.example.com", "KIND=Bar")

	// Its own build, with its own name, and its own reconcilers map.
	mustRun(t, dir, "make", "--no-print-directory", "build")
	if got := mustRun(t, dir, "bin/bar-controller", "--list-reconcilers"); got != "reference\nstub\n" {
		t.Errorf("bar-controller --list-reconcilers printed %q, want reference and stub", got)
	}
	start := time.Now()
	unit := mustRun(t, dir, "make", "--no-print-directory", "test-unit")
	t.Logf("make test-unit in the project: %s", time.Since(start).Round(time.Second))
	if !strings.Contains(unit, "ok  \texample.com/bar-controller/pkg/controller") {
		t.Errorf("make test-unit did not pass the controller's tests:\n%s", unit)
	}
	start = time.Now()
	verify := mustRun(t, dir, "make", "--no-print-directory", "verify")
	t.Logf("make verify in the project: %s", time.Since(start).Round(time.Second))
	if !strings.Contains(verify, "of "+dir+" into") {
		t.Errorf("make verify did not check the project itself (its clone of %s):\n%s", dir, verify)
	}
	if !strings.Contains(verify, ">> verify passed") {
		t.Errorf("make verify passed without saying so:\n%s", verify)
	}

	// The project's verify must see a stale generated file: it checks itself.
	t.Run("VerifyFailsOnStaleGeneratedCode", func(t *testing.T) {
		verifyFailsOnStaleCRD(t, dir, "pkg/apis/bar/v1alpha1/types.go", "type BarSpec struct {", "verify-codegen", "config/crd/bar.example.com_bars.yaml")
	})

	// The project's own suite first: it installs the CRD and deletes it, waiting
	// until it is gone, so the check below installs it anew.
	t.Run("ItsOwnE2ESuitePasses", func(t *testing.T) {
		projectE2E(t, dir, "TestBarGetsItsDeploymentAndStatus")
	})
	t.Run("ReconcilesABarOnTheCluster", func(t *testing.T) {
		reconcileOnCluster(t, dir)
	})
}

// TestNewControllerFromKubebuilder runs `make new-controller` from the
// kubebuilder tier, for a Bar kind with a NAME of its own, outside the kit's
// tree; checks that the pinned CLI scaffolded it at the tier's versions; builds
// it, runs its tests and `make verify`; then, when $KUBECONFIG reaches a
// cluster, runs its own e2e suite, and runs the manager as its ServiceAccount,
// with leader election, and sees a Bar become Available and the Lease named as
// the project is.
func TestNewControllerFromKubebuilder(t *testing.T) {
	dir := newProject(t, "bar-operator", "FROM=kubebuilder-guestbook", "MODULE=example.org/bar-operator", "GROUP=bar.example.org", "KIND=Bar", "NAME=bar-operator")
	kit, _ := filepath.Abs("../..")

	// Scaffolded by the pinned CLI, for the names asked, at the tier's versions.
	project := readFile(t, filepath.Join(dir, "PROJECT"))
	tierCLI := regexp.MustCompile(`(?m)^cliVersion: .*$`).FindString(readFile(t, filepath.Join(kit, "kubebuilder-guestbook", "PROJECT")))
	for _, want := range []string{tierCLI, "domain: example.org", "projectName: bar-operator", "repo: example.org/bar-operator", "group: bar", "kind: Bar", "version: v1alpha1"} {
		if !strings.Contains(project, want+"\n") {
			t.Errorf("the project's PROJECT file does not say %q:\n%s", want, project)
		}
	}
	tierMod, projectMod := readFile(t, filepath.Join(kit, "kubebuilder-guestbook", "go.mod")), readFile(t, filepath.Join(dir, "go.mod"))
	for _, module := range pinnedByTier {
		want, _ := requiredVersion(tierMod, module)
		if got, _ := requiredVersion(projectMod, module); got != want {
			t.Errorf("the project requires %s %s, kubebuilder-guestbook %s", module, got, want)
		}
	}
	if got := mustRun(t, dir, "go", "tool", "-modfile=hack/tools/go.mod", "kubebuilder", "version"); !strings.Contains(got, strings.TrimPrefix(tierCLI, "cliVersion: ")) {
		t.Errorf("the project's pinned CLI (go tool -modfile=hack/tools/go.mod kubebuilder version) says:\n%s\nwant %s", got, tierCLI)
	}

	mustRun(t, dir, "make", "--no-print-directory", "build")
	start := time.Now()
	unit := mustRun(t, dir, "make", "--no-print-directory", "test")
	t.Logf("make test in the project: %s", time.Since(start).Round(time.Second))
	if !strings.Contains(unit, "ok  \texample.org/bar-operator/internal/controller") {
		t.Errorf("make test did not pass the controller's tests:\n%s", unit)
	}
	start = time.Now()
	if verify := mustRun(t, dir, "make", "--no-print-directory", "verify"); !strings.Contains(verify, ">> verify passed") {
		t.Errorf("make verify passed without saying so:\n%s", verify)
	}
	t.Logf("make verify in the project: %s", time.Since(start).Round(time.Second))

	t.Run("VerifyFailsOnStaleGeneratedCode", func(t *testing.T) {
		verifyFailsOnStaleCRD(t, dir, "api/v1alpha1/bar_types.go", "type BarSpec struct {", "verify", "config/crd/bases/bar.example.org_bars.yaml")
	})
	t.Run("ItsOwnE2ESuitePasses", func(t *testing.T) {
		projectE2E(t, dir, "TestBarBecomesAvailable")
	})
	t.Run("ReconcilesABarAsItsServiceAccountWithALeaseOfItsOwn", func(t *testing.T) {
		reconcileWithKubebuilder(t, dir)
	})
}

// newProject runs make new-controller at the kit's root with vars, DIR a new
// folder called name outside the kit, and checks what every project is: the
// kit untouched, one first commit holding every file.
func newProject(t *testing.T, name string, vars ...string) string {
	t.Helper()
	kit, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	kitBefore := gitStatus(t, kit)
	dir := filepath.Join(t.TempDir(), name)

	start := time.Now()
	out := mustRun(t, kit, "make", append([]string{"--no-print-directory", "new-controller", "DIR=" + dir}, vars...)...)
	t.Logf("make new-controller %s: %s", strings.Join(vars, " "), time.Since(start).Round(time.Second))
	for _, want := range []string{"the project is outside the kit's tree: the kit is untouched", "Done: " + dir} {
		if !strings.Contains(out, want) {
			t.Errorf("make new-controller did not say %q:\n%s", want, out)
		}
	}
	if after := gitStatus(t, kit); after != kitBefore {
		t.Errorf("make new-controller changed the kit's tree, although DIR is outside it:\nbefore:\n%s\nafter:\n%s", kitBefore, after)
	}
	if log := mustRun(t, dir, "git", "log", "--oneline"); strings.Count(log, "\n") != 1 {
		t.Errorf("the project's git log is %q, want one first commit", log)
	}
	if status := mustRun(t, dir, "git", "status", "--porcelain"); status != "" {
		t.Errorf("the project's first commit leaves files out:\n%s", status)
	}
	return dir
}

// verifyFailsOnStaleCRD adds a field to the spec type in types (after the line
// spec), commits it without regenerating, and expects make target to fail
// naming the CRD file crd; then it puts the project back.
func verifyFailsOnStaleCRD(t *testing.T, dir, types, spec, target, crd string) {
	file := filepath.Join(dir, filepath.FromSlash(types))
	changed := strings.Replace(readFile(t, file), spec, spec+"\n\t// Extra is a field the generated code does not know yet.\n\t// +optional\n\tExtra string `json:\"extra,omitempty\"`\n", 1)
	if err := os.WriteFile(file, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "git", "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "--quiet", "-am", "a field, not regenerated")
	defer mustRun(t, dir, "git", "reset", "--quiet", "--hard", "HEAD~1")
	cmd := exec.Command("make", "--no-print-directory", target)
	cmd.Dir = dir
	got, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(got), crd) {
		t.Errorf("make %s passed or did not name the stale CRD %s after a field was added without make generate (err %v):\n%s", target, crd, err, got)
	}
}

// projectE2E runs the project's own e2e suite (make test-e2e) against
// $KUBECONFIG and expects test to pass in it.
func projectE2E(t *testing.T, dir, test string) {
	needCluster(t)
	start := time.Now()
	out := mustRun(t, dir, "make", "--no-print-directory", "test-e2e")
	t.Logf("make test-e2e in the project: %s", time.Since(start).Round(time.Second))
	if !strings.Contains(out, "--- PASS: "+test) {
		t.Errorf("make test-e2e did not pass %s:\n%s", test, out)
	}
}

// needCluster skips the test when $KUBECONFIG reaches no cluster.
func needCluster(t *testing.T) {
	t.Helper()
	kubeconfig := os.Getenv("KUBECONFIG")
	if kubeconfig == "" {
		t.Skip("skipped: KUBECONFIG is not set, so there is no cluster to reconcile a Bar on (in the kit: KIT_CLUSTER=NAME make local-up, then eval \"$(KIT_CLUSTER=NAME make env)\")")
	}
	if _, err := kubectl(t, "get", "--raw", "/readyz", "--request-timeout=3s"); err != nil {
		t.Skipf("skipped: KUBECONFIG=%s reaches no cluster (%v)", kubeconfig, err)
	}
}

// kubeconfigAs writes a kubeconfig for the current context of $KUBECONFIG whose
// user is the ServiceAccount namespace/name, by a token the API server issues
// for it: a controller run with it has exactly the RBAC the project ships.
func kubeconfigAs(t *testing.T, namespace, name string) string {
	t.Helper()
	asSA := filepath.Join(t.TempDir(), "kubeconfig")
	flat := mustKubectl(t, "config", "view", "--raw", "--minify", "--flatten")
	if err := os.WriteFile(asSA, []byte(flat), 0o600); err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(mustKubectl(t, "-n", namespace, "create", "token", name, "--duration=1h"))
	mustKubectl(t, "--kubeconfig", asSA, "config", "set-credentials", name, "--token="+token)
	mustKubectl(t, "--kubeconfig", asSA, "config", "set-context", "--current", "--user="+name)
	return asSA
}

// startProcess runs a controller until the test ends (interrupted as Ctrl-C
// would), and shows its output and the namespace's events when the test failed.
func startProcess(t *testing.T, ns string, env []string, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var logs bytes.Buffer
	controller := exec.CommandContext(ctx, name, args...)
	controller.Env = append(os.Environ(), env...)
	controller.Stdout, controller.Stderr = &logs, &logs
	controller.Cancel = func() error { return controller.Process.Signal(os.Interrupt) }
	if err := controller.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = controller.Wait()
		if t.Failed() {
			t.Logf("%s's log:\n%s", filepath.Base(name), logs.String())
			out, _ := kubectl(t, "-n", ns, "get", "events")
			t.Logf("events in %s:\n%s", ns, out)
		}
	})
}

// reconcileWithKubebuilder installs the kubebuilder project's CRD (make
// install) and its RBAC as config/default names and places it, runs the
// manager as its ServiceAccount with leader election in its namespace, and
// waits for a Bar to become Available and for the Lease bar-operator.
func reconcileWithKubebuilder(t *testing.T, dir string) {
	needCluster(t)
	const system, sa = "bar-operator-system", "bar-operator-controller-manager"
	ns := fmt.Sprintf("new-controller-%d", time.Now().UnixNano()%1_000_000)
	mustKubectl(t, "create", "namespace", ns)
	t.Cleanup(func() { kubectl(t, "delete", "namespace", ns, "--wait=false") })

	mustRun(t, dir, "make", "--no-print-directory", "install")
	// config/rbac as config/default places it (namespace and name prefix),
	// without the manager's Deployment, which the test runs as a process.
	overlay := filepath.Join(dir, "bin", "e2e-rbac")
	if err := writeFile(filepath.Join(overlay, "kustomization.yaml"), "namespace: "+system+"\nnamePrefix: bar-operator-\nresources:\n- ../../config/rbac\n", 0o644); err != nil {
		t.Fatal(err)
	}
	mustKubectl(t, "create", "namespace", system)
	mustKubectl(t, "apply", "--server-side", "-k", overlay)
	t.Cleanup(func() {
		kubectl(t, "delete", "--ignore-not-found", "--wait=false", "-k", overlay)
		kubectl(t, "delete", "--ignore-not-found", "--wait=false", "namespace", system)
		kubectl(t, "delete", "--ignore-not-found", "--wait=false", "crd/bars.bar.example.org")
	})

	asSA := kubeconfigAs(t, system, sa)
	startProcess(t, ns, []string{"KUBECONFIG=" + asSA}, filepath.Join(dir, "bin", "manager"),
		"--leader-elect", "--leader-elect-resource-namespace="+system, "--health-probe-bind-address=0")

	bar := fmt.Sprintf("apiVersion: bar.example.org/v1alpha1\nkind: Bar\nmetadata:\n  name: example-bar\n  namespace: %s\nspec:\n  foo: example\n", ns)
	mustRunIn(t, bar, "", kubectlPath(), "apply", "--server-side", "-f", "-")
	waitFor(t, "the Bar's condition Available=True for generation 1", func() (string, bool) {
		cond, err := kubectl(t, "-n", ns, "get", "bar", "example-bar", "-o", `jsonpath={.status.conditions[?(@.type=="Available")].status}/{.status.conditions[?(@.type=="Available")].observedGeneration}`)
		return cond, err == nil && cond == "True/1"
	})
	waitFor(t, "the Lease bar-operator in "+system+", held", func() (string, bool) {
		holder, err := kubectl(t, "-n", system, "get", "lease", "bar-operator", "-o", "jsonpath={.spec.holderIdentity}")
		return holder, err == nil && holder != ""
	})
}

// reconcileOnCluster installs the sample project's CRD and RBAC on the cluster
// $KUBECONFIG reaches, runs the controller as its ServiceAccount in a namespace
// of its own and waits for a Bar's Deployment and status.
func reconcileOnCluster(t *testing.T, dir string) {
	needCluster(t)
	ns := fmt.Sprintf("new-controller-%d", time.Now().UnixNano()%1_000_000)
	mustKubectl(t, "create", "namespace", ns)
	t.Cleanup(func() { kubectl(t, "delete", "namespace", ns, "--wait=false") })

	mustRun(t, dir, "make", "--no-print-directory", "install")
	mustKubectl(t, "apply", "--server-side", "-f", filepath.Join(dir, "config/manager/namespace.yaml"), "-f", filepath.Join(dir, "config/rbac/"))
	t.Cleanup(func() {
		kubectl(t, "delete", "--ignore-not-found", "--wait=false", "-f", filepath.Join(dir, "config/rbac/"), "-f", filepath.Join(dir, "config/manager/namespace.yaml"))
		kubectl(t, "delete", "--ignore-not-found", "--wait=false", "crd/bars.bar.example.com")
	})

	asSA := kubeconfigAs(t, "bar-controller-system", "bar-controller")
	startProcess(t, ns, nil, filepath.Join(dir, "bin/bar-controller"), "--kubeconfig", asSA, "--namespace", ns, "--workers", "2")

	bar := fmt.Sprintf("apiVersion: bar.example.com/v1alpha1\nkind: Bar\nmetadata:\n  name: example-bar\n  namespace: %s\nspec:\n  deploymentName: example-bar\n  replicas: 1\n", ns)
	mustRunIn(t, bar, "", kubectlPath(), "apply", "--server-side", "-f", "-")

	waitFor(t, "the Bar's Deployment example-bar, controlled by the Bar", func() (string, bool) {
		owner, err := kubectl(t, "-n", ns, "get", "deployment", "example-bar", "-o", "jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}/{.metadata.ownerReferences[0].controller}")
		return owner, err == nil && owner == "Bar/example-bar/true"
	})
	waitFor(t, "the Bar's status: observedGeneration 1 and availableReplicas 1", func() (string, bool) {
		status, err := kubectl(t, "-n", ns, "get", "bar", "example-bar", "-o", "jsonpath={.status.observedGeneration}/{.status.availableReplicas}")
		return status, err == nil && status == "1/1"
	})
}

// waitFor polls cond every half second for up to 90 s and fails naming what it
// waited for and what it last saw.
func waitFor(t *testing.T, what string, cond func() (string, bool)) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		var ok bool
		if last, ok = cond(); ok {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("waited 90s for %s; last saw %q", what, last)
}

// kubectlPath is the kit's kubectl when built (make bins), else kubectl from PATH.
func kubectlPath() string {
	if kit, err := filepath.Abs("../../bin/kubectl"); err == nil {
		if _, err := os.Stat(kit); err == nil {
			return kit
		}
	}
	return "kubectl"
}

// kubectl runs kubectl against $KUBECONFIG and returns its standard output.
func kubectl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(kubectlPath(), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

// mustKubectl is kubectl that fails the test on an error.
func mustKubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := kubectl(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mustRun runs a command in dir (GOWORK=off: the project is a module of its own)
// and returns its combined output; it fails the test on an error.
func mustRun(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	return mustRunIn(t, "", dir, name, args...)
}

// mustRunIn is mustRun with stdin.
func mustRunIn(t *testing.T, stdin, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s (in %s): %v\n%s", name, strings.Join(args, " "), dir, err, out.String())
	}
	return out.String()
}

// readFile returns a file's content; it fails the test when there is none.
func readFile(t *testing.T, name string) string {
	t.Helper()
	content, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(content)
}

// gitStatus is the kit's `git status --porcelain`, to see that it is untouched.
func gitStatus(t *testing.T, kit string) string {
	t.Helper()
	return mustRun(t, kit, "git", "status", "--porcelain", "--untracked-files=all")
}
