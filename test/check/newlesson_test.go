package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// newLessonFile is a ninth lesson in a room of its own, with a cluster of its
// own, a smoke and a name for make debug on the next free port.
const newLessonFile = `lesson: '9'
main: .
binary: newlesson-example
doc: docs/lessons/09-new-lesson.md
cluster: own
smoke:
  checks:
  - TestA
debug:
- name: newlesson-example
  port: 2399
  start: controller
  args: --leader-elect=false
checks:
- test: TestA
  behaviour: a
  hint: h
  reread: '#a'
`

// copyKit copies the files git knows of the repository at root (committed or
// new, not ignored) into a new temporary folder, made a git repository of its
// own, and returns it.
func copyKit(t *testing.T, root string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	dst := t.TempDir()
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(root, rel)
		info, err := os.Lstat(src)
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if !info.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dst, rel, string(data), info.Mode().Perm())
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}} {
		if out, err := exec.Command("git", append([]string{"-C", dst}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dst
}

// writeFile writes text to rel under root, making its folders.
func writeFile(t *testing.T, root, rel, text string, mode os.FileMode) {
	t.Helper()
	path := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
}

// TestANewLessonIsListedEverywhere adds a lesson to a copy of the kit (its
// folder with its lesson file, and its page) and edits nothing else: the
// grader lists it, make help offers it (LESSON, test-lesson9, make debug's
// name and port), the docs checker checks its page and asks for its row in the
// lesson path, and make debug and .vscode/launch.json take its debug entry.
// Every list of lessons the kit has is read from the lesson files; one written
// by hand again makes this fail.
func TestANewLessonIsListedEverywhere(t *testing.T) {
	root := copyKit(t, kittest.RepoRoot())
	writeFile(t, root, "newlesson-example/test/e2e/"+kittest.LessonFile, newLessonFile, 0o644)
	writeFile(t, root, "docs/lessons/09-new-lesson.md", "# Lesson 9: new\n\n[日本語](../ja/lessons/09-new-lesson.md)\n\n## A <a id=\"a\"></a>\n", 0o644)
	if out, err := exec.Command("git", "-C", root, "add", "-A").CombinedOutput(); err != nil {
		t.Fatalf("git add: %v\n%s", err, out)
	}

	// The grader.
	for _, f := range []lessonFilter{{}, {cluster: "own"}, {smoke: "checks"}} {
		var out strings.Builder
		if _, err := listLessons(root, "", f, &out); err != nil {
			t.Fatal(err)
		}
		if !slicesContain(strings.Fields(out.String()), "9") {
			t.Errorf("check -lessons %+v lists %q, without lesson 9", f, out.String())
		}
	}

	// make help.
	cmd := exec.Command("make", "--no-print-directory", "help")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make help: %v", err)
	}
	help := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(string(out), "")
	for _, want := range []string{"the lesson to check: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9\n", "\n  test-lesson9 ", "newlesson-example (lesson 9)", "newlesson-example 2399"} {
		if !strings.Contains(help, want) {
			t.Errorf("make help has no %q", want)
		}
	}

	// The docs checker: the lesson table, and the page's twin.
	var lists strings.Builder
	if code, err := verifyLists(root, &lists); err != nil || code != 1 || !strings.Contains(lists.String(), "docs/README.md:1: the lesson table has no row for lesson 9") {
		t.Errorf("check -verify-lists: %d, %v\n%s\nwant it to ask for lesson 9's row in docs/README.md", code, err, lists.String())
	}
	jadocs := exec.Command("go", "run", "./hack/jadocs", "-root", root)
	jadocs.Dir = kittest.RepoRoot()
	if out, _ := jadocs.CombinedOutput(); !strings.Contains(string(out), "docs/ja/lessons/09-new-lesson.md") {
		t.Errorf("go run ./hack/jadocs -root COPY said:\n%s\nwant it to name the new page's missing twin, docs/ja/lessons/09-new-lesson.md", out)
	}

	// make debug's names and ports, and VS Code's.
	names := exec.Command(filepath.Join(root, "hack", "debug.sh"), "names")
	names.Dir = root
	if out, err := names.Output(); err != nil || !strings.Contains(string(out), "newlesson-example 2399 controller\n") {
		t.Errorf("hack/debug.sh names: %v\n%s\nwant newlesson-example 2399 controller", err, out)
	}
	launch, err := launchJSON(root)
	if err != nil || !strings.Contains(string(launch), `"name": "attach: newlesson-example",`) || !strings.Contains(string(launch), `"port": 2399`) {
		t.Errorf("check -launch-json: %v\n%s\nwant an attach configuration for newlesson-example on 2399", err, launch)
	}
}

// slicesContain reports whether list holds s.
func slicesContain(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
