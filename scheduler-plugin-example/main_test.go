package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// runCommand runs the scheduler's command with args and returns what it wrote
// to stdout and its error.
func runCommand(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestListReconcilersPrintsTheNames(t *testing.T) {
	out, err := runCommand(t, "--list-reconcilers")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(out); strings.Join(got, ",") != "reference,stub" {
		t.Errorf("--list-reconcilers: %q, want reference and stub, one per line", out)
	}
}

func TestMisspeltReconcilerNamesTheFlagAndTheOneMeant(t *testing.T) {
	t.Cleanup(func() { reconciler = "reference" })
	_, err := runCommand(t, "--reconciler=stbu", "--list-reconcilers")
	if err == nil || !strings.Contains(err.Error(), "--reconciler") || !strings.Contains(err.Error(), "did you mean stub?") {
		t.Errorf("--reconciler=stbu: %v, want an error naming the flag and \"did you mean stub?\"", err)
	}
	_, err = runCommand(t, "--reconciler=mine", "--list-reconcilers")
	if err == nil || !strings.Contains(err.Error(), "reconcilers map") {
		t.Errorf("--reconciler=mine: %v, want an error saying to add it to the reconcilers map", err)
	}
}

// handle is the part of the framework's Handle the plugins' factories use: the
// informer factory (Gang's Pod lister).
type handle struct {
	fwk.Handle
}

func (handle) SharedInformerFactory() informers.SharedInformerFactory {
	return informers.NewSharedInformerFactory(fake.NewClientset(), 0)
}

func TestEveryReconcilerMakesThePluginsOfTheRegisteredNames(t *testing.T) {
	t.Cleanup(func() { reconciler = "reference" })
	for _, name := range reconcilerNames() {
		reconciler = name
		for want, factory := range map[string]frameworkruntime.PluginFactory{"ZoneSpread": newZoneSpread, "Gang": newGang} {
			pl, err := factory(t.Context(), nil, handle{})
			if err != nil || pl.Name() != want {
				t.Errorf("--reconciler=%s: %v, %v; want a plugin named %s, the name the configuration enables", name, pl, err, want)
			}
		}
	}
}

// writeConfig writes a scheduler configuration with profiles (YAML lines under
// profiles:) and a kubeconfig of a server nobody answers, and returns its path.
func writeConfig(t *testing.T, profiles string) string {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\nusers:\n- name: u\n  user: {}\ncurrent-context: c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nleaderElection:\n  leaderElect: false\nclientConnection:\n  kubeconfig: " + kubeconfig + "\n" + profiles
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestBadConfigurationExitsNamingTheField(t *testing.T) {
	for _, tc := range []struct {
		name, profiles string
		want           []string
	}{
		{"no profiles", "", []string{"profiles: none"}},
		{"a profile without a scheduler name", "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: ZoneSpread\n", []string{"profiles[0].schedulerName: not set"}},
		{"the cluster's scheduler's name", "profiles:\n- schedulerName: toy\n- schedulerName: default-scheduler\n", []string{"profiles[1].schedulerName: default-scheduler"}},
		{"a plugin not registered", "profiles:\n- schedulerName: toy\n  plugins:\n    filter:\n      enabled:\n      - name: ZoneSprad\n", []string{"toy", `"ZoneSprad" does not exist`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runCommand(t, "--config="+writeConfig(t, tc.profiles), "--secure-port=0")
			if err == nil {
				t.Fatal("the scheduler started; want an error naming the field")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q, want it to name %q", err, want)
				}
			}
		})
	}
}

func TestHelpListsTheKitsFlags(t *testing.T) {
	out, err := runCommand(t, "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--reconciler", "--list-reconcilers", "--config"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help does not mention %s", want)
		}
	}
}
