//go:build e2e

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNewControllerFromSampleController runs `make new-controller` as a user
// does, for a Bar kind, into a folder outside the kit's tree; then builds the
// project, runs its unit and envtest tests and its `make verify`; then, when
// $KUBECONFIG reaches a cluster, installs its CRD and RBAC, runs the controller
// as its ServiceAccount and sees a Bar get its Deployment and its status.
func TestNewControllerFromSampleController(t *testing.T) {
	kit, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	kitBefore := gitStatus(t, kit)
	dir := filepath.Join(t.TempDir(), "bar-controller")

	start := time.Now()
	out := mustRun(t, kit, "make", "--no-print-directory", "new-controller", "FROM=sample-controller", "DIR="+dir,
		"MODULE=example.com/bar-controller", "GROUP=bar.example.com", "KIND=Bar")
	t.Logf("make new-controller: %s", time.Since(start).Round(time.Second))
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

	// Its own build, with its own name, and its own reconcilers map.
	mustRun(t, dir, "make", "--no-print-directory", "build")
	if got := mustRun(t, dir, "bin/bar-controller", "--list-reconcilers"); got != "reference\nstub\n" {
		t.Errorf("bar-controller --list-reconcilers printed %q, want reference and stub", got)
	}
	start = time.Now()
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

	// The project's verify must see a stale generated file: it checks itself.
	t.Run("VerifyFailsOnStaleGeneratedCode", func(t *testing.T) {
		types := filepath.Join(dir, "pkg/apis/bar/v1alpha1/types.go")
		content, _ := os.ReadFile(types)
		changed := strings.Replace(string(content), "type BarSpec struct {", "type BarSpec struct {\n\t// Extra is a field the generated code does not know yet.\n\t// +optional\n\tExtra string `json:\"extra,omitempty\"`\n", 1)
		if err := os.WriteFile(types, []byte(changed), 0o644); err != nil {
			t.Fatal(err)
		}
		mustRun(t, dir, "git", "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "--quiet", "-am", "a field, not regenerated")
		defer mustRun(t, dir, "git", "reset", "--quiet", "--hard", "HEAD~1")
		cmd := exec.Command("make", "--no-print-directory", "verify-codegen")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off")
		got, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(got), "config/crd/bar.example.com_bars.yaml") {
			t.Errorf("make verify-codegen passed or did not name the stale CRD after a field was added without make generate (err %v):\n%s", err, got)
		}
	})

	t.Run("ReconcilesABarOnTheCluster", func(t *testing.T) {
		reconcileOnCluster(t, dir)
	})
}

// reconcileOnCluster installs the project's CRD and RBAC on the cluster
// $KUBECONFIG reaches, runs the controller as its ServiceAccount in a namespace of
// its own and waits for a Bar's Deployment and status.
func reconcileOnCluster(t *testing.T, dir string) {
	kubeconfig := os.Getenv("KUBECONFIG")
	if kubeconfig == "" {
		t.Skip("skipped: KUBECONFIG is not set, so there is no cluster to reconcile a Bar on (in the kit: KIT_CLUSTER=NAME make local-up, then eval \"$(KIT_CLUSTER=NAME make env)\")")
	}
	if _, err := kubectl(t, "get", "--raw", "/readyz", "--request-timeout=3s"); err != nil {
		t.Skipf("skipped: KUBECONFIG=%s reaches no cluster (%v)", kubeconfig, err)
	}
	ns := fmt.Sprintf("new-controller-%d", time.Now().UnixNano()%1_000_000)
	mustKubectl(t, "create", "namespace", ns)
	t.Cleanup(func() { kubectl(t, "delete", "namespace", ns, "--wait=false") })

	mustRun(t, dir, "make", "--no-print-directory", "install")
	mustKubectl(t, "apply", "--server-side", "-f", filepath.Join(dir, "config/manager/namespace.yaml"), "-f", filepath.Join(dir, "config/rbac/"))
	t.Cleanup(func() {
		kubectl(t, "delete", "--ignore-not-found", "--wait=false", "-f", filepath.Join(dir, "config/rbac/"), "-f", filepath.Join(dir, "config/manager/namespace.yaml"))
		kubectl(t, "delete", "--ignore-not-found", "--wait=false", "crd/bars.bar.example.com")
	})

	// The controller runs with exactly the RBAC the project ships: a kubeconfig
	// whose user is its ServiceAccount, by a token the API server issues for it.
	asSA := filepath.Join(t.TempDir(), "kubeconfig")
	flat := mustKubectl(t, "config", "view", "--raw", "--minify", "--flatten")
	if err := os.WriteFile(asSA, []byte(flat), 0o600); err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(mustKubectl(t, "-n", "bar-controller-system", "create", "token", "bar-controller", "--duration=1h"))
	mustKubectl(t, "--kubeconfig", asSA, "config", "set-credentials", "bar-controller", "--token="+token)
	mustKubectl(t, "--kubeconfig", asSA, "config", "set-context", "--current", "--user=bar-controller")

	ctx, cancel := context.WithCancel(context.Background())
	var logs bytes.Buffer
	controller := exec.CommandContext(ctx, filepath.Join(dir, "bin/bar-controller"), "--kubeconfig", asSA, "--namespace", ns, "--workers", "2")
	controller.Stdout, controller.Stderr = &logs, &logs
	controller.Cancel = func() error { return controller.Process.Signal(os.Interrupt) }
	if err := controller.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = controller.Wait()
		if t.Failed() {
			t.Logf("bar-controller's log:\n%s", logs.String())
			out, _ := kubectl(t, "-n", ns, "get", "events")
			t.Logf("events in %s:\n%s", ns, out)
		}
	})

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
	if out, _ := kubectl(t, "-n", ns, "get", "lease", "bar-controller"); out != "" {
		t.Logf("(no Lease expected without --leader-elect; found one: %s)", out)
	}
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

// gitStatus is the kit's `git status --porcelain`, to see that it is untouched.
func gitStatus(t *testing.T, kit string) string {
	t.Helper()
	return mustRun(t, kit, "git", "status", "--porcelain", "--untracked-files=all")
}
