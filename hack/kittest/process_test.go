package kittest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeController is a main package that refuses every --reconciler but
// "reference" the way the tiers do, and fails on the kubeconfig otherwise.
const fakeController = `package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	reconciler := flag.String("reconciler", "reference", "")
	kubeconfig := flag.String("kubeconfig", "", "")
	flag.Parse()
	if *reconciler != "reference" {
		fmt.Fprintf(os.Stderr, "--reconciler=%q: want one of reference\n", *reconciler)
		os.Exit(1)
	}
	if _, err := os.Stat(*kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, "loading the kubeconfig:", err)
		os.Exit(1)
	}
}
`

func TestBuildForSuiteStopsAtAnUnknownReconciler(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":  "module example.com/fake\n\ngo 1.26\n",
		"main.go": fakeController,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GOWORK", "off")

	t.Setenv(ReconcilerEnv, "reference")
	_, cleanup, err := BuildForSuite(dir, "fake")
	if err != nil {
		t.Fatalf("RECONCILER=reference: %v; want the binary built", err)
	}
	cleanup()

	t.Setenv(ReconcilerEnv, "mine")
	_, cleanup, err = BuildForSuite(dir, "fake")
	cleanup()
	if err == nil || !strings.Contains(err.Error(), "RECONCILER=mine") || !strings.Contains(err.Error(), "want one of reference") {
		t.Errorf("RECONCILER=mine: %v; want an error naming RECONCILER=mine with the controller's own message", err)
	}
}
