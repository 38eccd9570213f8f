package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// TestDebugEntriesReadByTheScriptsAreTheGradersToo holds the shell's reading
// of the lesson files' debug entries (lib.sh's kit_debug_entries, which
// hack/debug.sh and make help's awk take) to the grader's (kittest.ReadLessons),
// every field of every entry.
func TestDebugEntriesReadByTheScriptsAreTheGradersToo(t *testing.T) {
	root := kittest.RepoRoot()
	lessons, err := kittest.ReadLessons(root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, l := range lessons {
		for _, d := range l.Debug {
			want[d.Name] = strings.Join([]string{d.Name, fmt.Sprint(d.Port), d.Start, l.Tier, d.Args, d.Packages, d.Breakpoint}, "\x1f")
		}
	}
	if len(want) == 0 {
		t.Fatal("no lesson file has a debug entry")
	}
	cmd := exec.Command("bash", "-c", "source hack/lib.sh && kit_debug_entries")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kit_debug_entries: %v", err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, _, _ := strings.Cut(line, "\x1f")
		got[name] = line
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("kit_debug_entries has %s as %q; the lesson file says %q", name, strings.ReplaceAll(got[name], "\x1f", "|"), strings.ReplaceAll(w, "\x1f", "|"))
		}
	}
	if len(got) != len(want) {
		t.Errorf("kit_debug_entries read %d entries, the lesson files have %d", len(got), len(want))
	}
}

// TestDebugEntriesOfTwoLessonsNeverShareANameOrAPort: ReadLessons refuses a
// port or a name two lessons give, and a start script that is not there.
func TestDebugEntriesOfTwoLessonsNeverShareANameOrAPort(t *testing.T) {
	entry := func(name, port, start string) string {
		return "debug:\n- name: " + name + "\n  port: " + port + "\n  start: " + start + "\n"
	}
	for _, tc := range []struct{ name, one, two, want string }{
		{"a port twice", entry("one", "2399", "controller"), entry("two", "2399", "controller"), "take the next free port"},
		{"a name twice", entry("ctl", "2398", "controller"), entry("ctl", "2399", "controller"), "each name and each port is one entry's"},
		{"a missing script", entry("one", "2398", "controller"), entry("two", "2399", "two/hack/debug-two.sh"), "two/hack/debug-two.sh is no file of the kit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := madeUpKit(t, map[string]string{"one": lessonFile("1", "shared", tc.one), "two": lessonFile("2", "shared", tc.two)})
			if _, err := kittest.ReadLessons(root); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadLessons: %v; want an error saying %q", err, tc.want)
			}
		})
	}
	root := madeUpKit(t, map[string]string{"one": lessonFile("1", "shared", entry("one", "2398", "controller")), "two": lessonFile("2", "shared", entry("two", "2399", "two/hack/debug-two.sh"))})
	if err := os.MkdirAll(filepath.Join(root, "two", "hack"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "two", "hack", "debug-two.sh"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := kittest.ReadLessons(root); err != nil {
		t.Errorf("two entries of their own names and ports: %v", err)
	}
}
