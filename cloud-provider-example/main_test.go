package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/cloud-provider/app"
	"k8s.io/cloud-provider/names"
	"k8s.io/component-base/cli"
)

// runCommand runs the command as main does (through component-base's cli) with
// args, and returns what it printed to standard output.
func runCommand(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd, err := newCommand()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs(args)
	err = cli.RunNoErrOutput(cmd)
	return out.String(), err
}

func TestListReconcilersPrintsTheNames(t *testing.T) {
	for _, flag := range []string{"--list-reconcilers", "--list_reconcilers"} {
		out, err := runCommand(t, flag)
		if err != nil {
			t.Fatalf("%s: %v", flag, err)
		}
		if out != "reference\nstub\n" {
			t.Errorf("%s printed %q, want the load balancers' names one per line", flag, out)
		}
	}
}

func TestTheServiceAndCloudNodeControllersAreKnownTheSecondOffByDefault(t *testing.T) {
	got := slices.Sorted(func(yield func(string) bool) {
		for name := range controllerInitializers() {
			if !yield(name) {
				return
			}
		}
	})
	if want := []string{names.CloudNodeController, names.ServiceLBController}; !slices.Equal(got, want) {
		t.Errorf("the manager knows the controllers %v, want %v (never %s: it deletes kwok's nodes)", got, want, names.CloudNodeLifecycleController)
	}
	// --controllers=* (the default) runs the service controller alone.
	if !app.ControllersDisabledByDefault.Has(names.CloudNodeController) || app.ControllersDisabledByDefault.Has(names.ServiceLBController) {
		t.Errorf("controllers off by default: %v, want %s alone", app.ControllersDisabledByDefault.List(), names.CloudNodeController)
	}
}

// TestMissingInstancesFallBackToTheStub checks that a --reconciler value with a
// load balancer but no entry in instances (a learner's first exercise) gets the
// stub's answers about machines.
func TestMissingInstancesFallBackToTheStub(t *testing.T) {
	reconcilers["only-a-load-balancer"] = reconcilers["stub"]
	defer delete(reconcilers, "only-a-load-balancer")
	for name, want := range map[string]string{"only-a-load-balancer": "*toycloud.StubInstances", "stub": "*toycloud.StubInstances", "reference": "*toycloud.StubInstances"} {
		reconciler = name
		cloud, err := newCloud(nil)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := cloud.InstancesV2()
		if !ok || fmt.Sprintf("%T", got) != want {
			t.Errorf("--reconciler=%s: InstancesV2() = %T, %v; want %s, true", name, got, ok, want)
		}
	}
	reconciler = "reference"
}

func TestBadFlagsFailNamingTheFlag(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badPool := filepath.Join(dir, "cloud.yaml")
	if err := os.WriteFile(badPool, []byte("pool: 10.0.0.0/28\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  string // $KUBECONFIG
		args []string
		want []string
	}{
		{name: "unknown reconciler", args: []string{"--kubeconfig=" + kubeconfig, "--reconciler=refrence"}, want: []string{`--reconciler="refrence"`, "want one of reference"}},
		{name: "unknown provider", args: []string{"--kubeconfig=" + kubeconfig, "--cloud-provider=aws"}, want: []string{`--cloud-provider="aws"`, "toycloud"}},
		{name: "missing cloud config", args: []string{"--kubeconfig=" + kubeconfig, "--cloud-config=" + filepath.Join(dir, "none.yaml")}, want: []string{"--cloud-config", "none.yaml"}},
		{name: "pool outside TEST-NET-1", args: []string{"--kubeconfig=" + kubeconfig, "--cloud-config=" + badPool}, want: []string{"--cloud-config=", "pool", "192.0.2.0/24"}},
		{name: "no kubeconfig at all", want: []string{"--kubeconfig", "$KUBECONFIG"}},
		{name: "kubeconfig flag names a missing file", args: []string{"--kubeconfig=" + filepath.Join(dir, "missing")}, want: []string{"--kubeconfig=", "missing"}},
		{name: "KUBECONFIG names a missing file", env: filepath.Join(dir, "gone"), want: []string{"--kubeconfig=", "gone"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tc.env)
			t.Setenv("KUBERNETES_SERVICE_HOST", "")
			reconciler = "reference"
			t.Cleanup(func() { reconciler = "reference" })
			_, err := runCommand(t, tc.args...)
			if err == nil {
				t.Fatal("the command started; want an error")
			}
			for _, text := range tc.want {
				if !strings.Contains(err.Error(), text) {
					t.Errorf("error %q does not say %q", err, text)
				}
			}
		})
	}
}

func TestHelpListsTheToyCloudSection(t *testing.T) {
	out, err := runCommand(t, "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Toy cloud flags:", "--reconciler", "--list-reconcilers", "--cloud-provider", "--leader-elect-resource-name"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help does not mention %q", want)
		}
	}
}

func TestCloudNodeLifecycleControllerCannotBeEnabled(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := runCommand(t, "--kubeconfig="+kubeconfig, "--controllers="+names.CloudNodeLifecycleController)
	if err == nil || !strings.Contains(err.Error(), names.CloudNodeLifecycleController) {
		t.Errorf("--controllers=%s gave the error %v, want one naming the controller as unknown", names.CloudNodeLifecycleController, err)
	}
}

// TestListReconcilersRefusesAnUnknownReconcilerNamingTheOneMeant: with a
// --reconciler that is no key of reconcilers, --list-reconcilers fails naming
// the flag, the names and, for a typo, the one meant: that is how make run asks
// before any cluster work.
func TestListReconcilersRefusesAnUnknownReconcilerNamingTheOneMeant(t *testing.T) {
	defer func(was string) { reconciler = was }(reconciler) // the flag sets the package's variable
	_, err := runCommand(t, "--reconciler=stbu", "--list-reconcilers")
	if err == nil || !strings.Contains(err.Error(), `--reconciler="stbu"`) || !strings.Contains(err.Error(), "reference, stub") || !strings.Contains(err.Error(), "did you mean stub?") {
		t.Errorf("--reconciler=stbu --list-reconcilers: %v, want an error naming the flag, the load balancers and \"did you mean stub?\"", err)
	}
	if err := reconcilerKnown("mine"); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("reconcilerKnown(mine) = %v, want an error that suggests nothing: mine is near no name", err)
	}
}
