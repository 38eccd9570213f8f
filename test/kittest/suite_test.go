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
// --list-reconcilers with the names of its Reconcilers, one per line.
const fakeController = `package main

import (
	"flag"
	"fmt"
)

func main() {
	list := flag.Bool("list-reconcilers", false, "")
	flag.Parse()
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

func TestRequireReconcilerStopsAtAnUnknownName(t *testing.T) {
	bin := buildFake(t)
	if err := RequireReconciler(bin, "stub"); err != nil {
		t.Errorf("RequireReconciler(stub) = %v, want nil", err)
	}
	err := RequireReconciler(bin, "mine")
	if err == nil || !strings.Contains(err.Error(), "RECONCILER=mine") || !strings.Contains(err.Error(), "reference, stub") {
		t.Errorf("RequireReconciler(mine) = %v; want an error naming RECONCILER=mine and the Reconcilers the controller has", err)
	}
	if err := RequireReconciler(bin, "stbu"); err == nil || !strings.Contains(err.Error(), "did you mean stub?") {
		t.Errorf("RequireReconciler(stbu) = %v; want an error asking \"did you mean stub?\"", err)
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
