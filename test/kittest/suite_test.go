package kittest

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeController is a main package that, like every tier's controller, answers
// --list-reconcilers with the names of its Reconcilers, one per line, after
// refusing a --reconciler that names none of them; with FAKE_NO_CHECK=1 it lists
// them without that check.
const fakeController = `package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	list := flag.Bool("list-reconcilers", false, "")
	name := flag.String("reconciler", "reference", "")
	flag.Parse()
	if *name != "reference" && *name != "stub" && os.Getenv("FAKE_NO_CHECK") != "1" {
		fmt.Fprintf(os.Stderr, "--reconciler=%q: want one of reference, stub (the fake's own words)\n", *name)
		os.Exit(1)
	}
	if *list {
		fmt.Println("reference")
		fmt.Println("stub")
	}
}
`

// buildFake builds fakeController and returns the binary's path.
func buildFake(t *testing.T) string {
	t.Helper()
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
	bin := filepath.Join(t.TempDir(), "fake")
	if err := BuildBinary(dir, bin, ""); err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestReconcilersListsWhatTheControllerRegisters(t *testing.T) {
	names, err := Reconcilers(buildFake(t))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"reference", "stub"}; !slices.Equal(names, want) {
		t.Errorf("Reconcilers = %q, want %q", names, want)
	}
}

// TestRequireReconcilerQuotesTheControllersAnswer: a name the controller has
// passes; one it refuses stops the suite with the controller's own words (its
// did-you-mean included), naming RECONCILER; a controller that lists its names
// without checking the one given is caught by the list.
func TestRequireReconcilerQuotesTheControllersAnswer(t *testing.T) {
	bin := buildFake(t)
	if err := RequireReconciler(bin, "stub"); err != nil {
		t.Errorf("RequireReconciler(stub) = %v, want nil", err)
	}
	err := RequireReconciler(bin, "stbu")
	if err == nil || !strings.Contains(err.Error(), "RECONCILER=stbu") || !strings.Contains(err.Error(), `--reconciler="stbu": want one of reference, stub (the fake's own words)`) {
		t.Errorf("RequireReconciler(stbu) = %v; want an error naming RECONCILER=stbu and quoting the controller's answer", err)
	}
	t.Setenv("FAKE_NO_CHECK", "1")
	if err := RequireReconciler(bin, "mine"); err == nil || !strings.Contains(err.Error(), "RECONCILER=mine") || !strings.Contains(err.Error(), "reference, stub") {
		t.Errorf("RequireReconciler(mine) of a controller that does not check it = %v; want an error naming RECONCILER=mine and the Reconcilers it lists", err)
	}
}

func TestReconcilerDefaultsToTheReference(t *testing.T) {
	t.Setenv(ReconcilerEnv, "")
	if got := Reconciler(); got != DefaultReconciler {
		t.Errorf("Reconciler() with RECONCILER unset = %q, want %q", got, DefaultReconciler)
	}
	t.Setenv(ReconcilerEnv, "mine")
	if got := Reconciler(); got != "mine" {
		t.Errorf("Reconciler() with RECONCILER=mine = %q, want mine", got)
	}
}

// TestOneAtATimeLessonRunsItsTestsOneAtATime: a lesson whose checks run one at a
// time sets go test's -parallel to 1 whatever the command line said; another
// leaves it as it was.
func TestOneAtATimeLessonRunsItsTestsOneAtATime(t *testing.T) {
	parallel := flag.Lookup("test.parallel")
	was := parallel.Value.String()
	t.Cleanup(func() { _ = flag.Set("test.parallel", was) })
	if err := flag.Set("test.parallel", "16"); err != nil {
		t.Fatal(err)
	}
	if err := runAsTheLessonSays(&Lesson{Number: "9"}); err != nil || parallel.Value.String() != "16" {
		t.Errorf("a lesson in parallel: -parallel=%s, %v; want it left at 16", parallel.Value, err)
	}
	if err := runAsTheLessonSays(&Lesson{Number: "9", OneAtATime: true}); err != nil || parallel.Value.String() != "1" {
		t.Errorf("a lesson one at a time: -parallel=%s, %v; want 1", parallel.Value, err)
	}
}
