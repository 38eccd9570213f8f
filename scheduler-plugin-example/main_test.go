package main

import (
	"bytes"
	"strings"
	"testing"
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

func TestEveryReconcilerMakesThePluginOfTheRegisteredName(t *testing.T) {
	t.Cleanup(func() { reconciler = "reference" })
	for _, name := range reconcilerNames() {
		reconciler = name
		pl, err := newPlugin(t.Context(), nil, nil)
		if err != nil || pl.Name() != "ZoneSpread" {
			t.Errorf("--reconciler=%s: %v, %v; want a plugin named ZoneSpread, the name the configuration enables", name, pl, err)
		}
	}
}
