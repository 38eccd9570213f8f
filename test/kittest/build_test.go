package kittest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeKit writes a kit root (a go.work file, which rootAbove looks for) with
// fakeController as a module of its own in it, and returns the module's folder.
func fakeKit(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "tier")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		filepath.Join(root, "go.work"): "go 1.26\n\nuse ./tier\n",
		filepath.Join(dir, "go.mod"):   "module example.com/fake\n\ngo 1.26\n",
		filepath.Join(dir, "main.go"):  fakeController,
	} {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GOWORK", filepath.Join(root, "go.work"))
	return dir
}

// The cache must never hand out a stale binary: the same path again, rebuilt
// when a source file changed. (That an up-to-date binary is not linked again is
// go build's own behaviour, and a matter of time, not of what is built.)
func TestCachedBinaryIsRebuiltWhenTheSourceChanges(t *testing.T) {
	dir := fakeKit(t)
	bin, err := CachedBinary(dir, "fake", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(filepath.Dir(dir), BinDir, "fake"); bin != want {
		t.Errorf("CachedBinary built %s, want %s (the kit root's %s)", bin, want, BinDir)
	}
	src := strings.Replace(fakeController, `fmt.Println("stub")`, `fmt.Println("stub")`+"\n\t\tfmt.Println(\"mine\")", 1)
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := CachedBinary(dir, "fake", "")
	if err != nil {
		t.Fatal(err)
	}
	if again != bin {
		t.Errorf("the second build went to %s, want the same path %s", again, bin)
	}
	if names, err := Reconcilers(again); err != nil || !slices.Equal(names, []string{"reference", "stub", "mine"}) {
		t.Errorf("after main.go changed, the cached binary lists Reconcilers %q (%v); want reference, stub and mine", names, err)
	}
}

func TestCachedBinaryBuildsAnOverlayApart(t *testing.T) {
	dir := fakeKit(t)
	plain, err := CachedBinary(dir, "fake", "")
	if err != nil {
		t.Fatal(err)
	}
	// An overlay, as make check SOLUTION= writes one: main.go replaced by a
	// version with a third Reconciler.
	changed := filepath.Join(t.TempDir(), "main.go")
	src := strings.Replace(fakeController, `fmt.Println("stub")`, `fmt.Println("stub")`+"\n\t\tfmt.Println(\"solution\")", 1)
	if err := os.WriteFile(changed, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(dir, "main.go"): changed}})
	if err != nil {
		t.Fatal(err)
	}
	overlayPath := filepath.Join(t.TempDir(), "overlay.json")
	if err := os.WriteFile(overlayPath, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	solution, err := CachedBinary(dir, "fake", overlayPath)
	if err != nil {
		t.Fatal(err)
	}
	if solution == plain {
		t.Fatalf("the overlay's build went to %s, the same path as the plain build", solution)
	}
	if names, err := Reconcilers(solution); err != nil || !slices.Contains(names, "solution") {
		t.Errorf("the overlay's binary lists Reconcilers %q (%v), want the overlay's solution among them", names, err)
	}
	if names, err := Reconcilers(plain); err != nil || slices.Contains(names, "solution") {
		t.Errorf("the plain binary lists Reconcilers %q (%v) after the overlay's build; want it untouched", names, err)
	}
}

func TestCachedBinaryNeedsTheKitRoot(t *testing.T) {
	dir := t.TempDir()
	if _, err := CachedBinary(dir, "fake", ""); err == nil || !strings.Contains(err.Error(), "go.work") {
		t.Errorf("CachedBinary outside a kit = %v; want an error saying no go.work was found", err)
	}
}

// A binary built from the very same files is handed out as it is: no go build
// runs (here a go command on PATH that only answers go env would say so), and
// one removed by hand is built again.
func TestCachedBinaryFromTheSameFilesRunsNoBuild(t *testing.T) {
	dir := fakeKit(t)
	bin, err := CachedBinary(dir, "fake", "")
	if err != nil {
		t.Fatal(err)
	}
	realGo, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	onlyEnv := t.TempDir()
	script := "#!/bin/sh\nif [ \"$1\" = env ]; then exec " + realGo + " \"$@\"; fi\necho \"go $1 was run\" >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(onlyEnv, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	goPath := os.Getenv("PATH")
	t.Setenv("PATH", onlyEnv+string(os.PathListSeparator)+goPath)
	if again, err := CachedBinary(dir, "fake", ""); err != nil || again != bin {
		t.Errorf("from unchanged files CachedBinary gave %s, %v; want %s, with no go build", again, err, bin)
	}
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	if _, err := CachedBinary(dir, "fake", ""); err == nil || !strings.Contains(err.Error(), "go build was run") {
		t.Errorf("with the binary removed by hand, CachedBinary gave %v; want it to run go build", err)
	}
	t.Setenv("PATH", goPath)
	if _, err := CachedBinary(dir, "fake", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Errorf("a cached binary removed by hand was not built again: %v", err)
	}
}

func TestWorkspaceUsesReadsBothForms(t *testing.T) {
	work := "// a comment\ngo 1.26.0\n\nuse ./single\n\nuse (\n\t./sample-controller\n\t./sample-controller/test/e2e // its suite\n\t\"./quoted\"\n)\n"
	got := workspaceUses(work)
	want := []string{"single", "sample-controller", "sample-controller/test/e2e", "quoted"}
	if !slices.Equal(got, want) {
		t.Errorf("workspaceUses: %q, want %q", got, want)
	}
}

func TestWorkspaceEnvTurnsTheWorkspaceOffOutsideIt(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"go.work", "in/go.mod", "in/cmd/x.go", "out/go.mod", "out/pkg/y.go"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		content := ""
		if f == "go.work" {
			content = "go 1.26.0\n\nuse ./in\n"
		}
		if err := os.WriteFile(filepath.Join(root, f), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GOWORK", "") // restored after the test ...
	os.Unsetenv("GOWORK")  // ... and unset for it: workspaceEnv leaves a GOWORK that is set alone
	if env, err := workspaceEnv(filepath.Join(root, "in/cmd")); err != nil || env != nil {
		t.Errorf("a module go.work uses: %v, %v; want the process's own environment (nil)", env, err)
	}
	env, err := workspaceEnv(filepath.Join(root, "out/pkg"))
	if err != nil || !slices.Contains(env, "GOWORK=off") {
		t.Errorf("a module go.work does not use: %v; want GOWORK=off in the environment", err)
	}
}
