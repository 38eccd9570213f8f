package kittest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadLessonsReadsTheKitsTable reads the real lesson files: every
// lesson.yaml git knows is one lesson, whose tier and suite are where the file
// lies (no list of lessons here: a new lesson is a new file), every row naming a
// test function of its suite and a lesson page that exists, so a row whose test
// was renamed or removed fails here and not in a learner's make check.
func TestReadLessonsReadsTheKitsTable(t *testing.T) {
	root := RepoRoot()
	lessons, err := ReadLessons(root)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "--", LessonFile, "*/"+LessonFile).Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Fields(string(out))
	read := map[string]bool{}
	for _, l := range lessons {
		read[l.Tier+"/"+l.Suite+"/"+LessonFile] = true
	}
	for _, f := range files {
		if !read[f] {
			t.Errorf("%s is a lesson file ReadLessons does not read: put it in its suite's folder, <tier>/test/<suite>/%s", f, LessonFile)
		}
	}
	if len(lessons) != len(files) {
		t.Errorf("ReadLessons read %d lessons from %d lesson files (%v)", len(lessons), len(files), files)
	}
	for _, l := range lessons {
		if _, err := os.Stat(filepath.Join(root, l.Doc)); err != nil {
			t.Errorf("lesson %s: doc: %v", l.Number, err)
		}
		tests := testFunctions(t, filepath.Join(root, l.Tier, l.Suite))
		if len(l.Checks) == 0 {
			t.Errorf("lesson %s has no checks", l.Number)
		}
		for _, c := range l.Checks {
			top, _, _ := strings.Cut(c.Test, "/")
			if !tests[top] {
				t.Errorf("lesson %s: the row of %s names no test function of %s/%s", l.Number, c.Test, l.Tier, l.Suite)
			}
			if !strings.HasPrefix(c.Reread, "docs/") || !strings.Contains(c.Reread, "#") {
				t.Errorf("lesson %s: %s: reread %q is not a docs/ page with an anchor", l.Number, c.Test, c.Reread)
			}
		}
	}
}

// testFunctions returns the names of the Test functions declared in the _test.go
// files of dir.
func testFunctions(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range files {
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range parsed.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
				names[fn.Name.Name] = true
			}
		}
	}
	return names
}

// TestParseLessonNamesTheFieldAtFault feeds lesson files that are wrong in one
// way each and expects an error naming what to fix, and a right one that parses
// with its anchor-only reread made a path into its doc.
func TestParseLessonNamesTheFieldAtFault(t *testing.T) {
	const good = "lesson: \"9\"\nmain: .\nbinary: ctl\ndoc: docs/lessons/09.md\ncluster: shared\nexercises:\n- name: extra\nchecks:\n" +
		"- test: TestA\n  behaviour: a\n  hint: h\n  reread: '#run-it'\n" +
		"- test: TestExerciseB\n  behaviour: b\n  hint: h\n  reread: docs/other.md#x\n  exercise: extra\n"
	l, err := ParseLesson([]byte(good), "tier/test/e2e")
	if err != nil {
		t.Fatal(err)
	}
	if l.Tier != "tier" || l.Suite != "test/e2e" || l.Checks[0].Reread != "docs/lessons/09.md#run-it" || l.Checks[1].Reread != "docs/other.md#x" {
		t.Errorf("parsed %+v", l)
	}
	marked := strings.Replace(good, "  reread: '#run-it'\n", "  reread: '#run-it'\n  kindOnly: a real kubelet\n", 1)
	marked = strings.Replace(marked, "  reread: docs/other.md#x\n", "  reread: docs/other.md#x\n  localClusterOnly: a kwok node\n", 1)
	if l, err := ParseLesson([]byte(marked), "tier/test/e2e"); err != nil || l.Checks[0].KindOnly != "a real kubelet" || l.Checks[1].LocalClusterOnly != "a kwok node" {
		t.Errorf("checks marked kindOnly and localClusterOnly: parsed %+v, %v", l, err)
	} else {
		for _, tc := range []struct {
			check  int
			onKind bool
			want   string
		}{{0, false, "a real kubelet"}, {0, true, ""}, {1, false, ""}, {1, true, "a kwok node"}} {
			if got := l.Checks[tc.check].NotHere(tc.onKind); got != tc.want {
				t.Errorf("%s.NotHere(onKind %v) = %q, want %q", l.Checks[tc.check].Test, tc.onKind, got, tc.want)
			}
		}
	}
	own := strings.Replace(good, "cluster: shared", "cluster: own", 1) + "oneAtATime: true\nsmoke:\n  checks: [TestA]\nbins: [csi-provisioner]\n"
	if l, err := ParseLesson([]byte(own), "tier/test/e2e"); err != nil || l.Cluster != ClusterOwn || !l.OneAtATime || l.Smoke.Checks[0] != "TestA" || l.Bins[0] != "csi-provisioner" {
		t.Errorf("a lesson with a cluster of its own: parsed %+v, %v", l, err)
	}
	for _, tc := range []struct{ name, data, dir, want string }{
		{"unknown field", good + "extra: 1\n", "tier/test/e2e", "extra"},
		{"missing binary", strings.Replace(good, "binary: ctl\n", "", 1), "tier/test/e2e", "binary missing"},
		{"a check without a hint", strings.Replace(good, "  hint: h\n", "", 1), "tier/test/e2e", "hint"},
		{"a test twice", strings.Replace(good, "TestExerciseB", "TestA", 1), "tier/test/e2e", "one row per test"},
		{"an exercise's check not named TestExercise...", strings.Replace(good, "TestExerciseB", "TestB", 1), "tier/test/e2e", "a test named TestExercise..."},
		{"an unknown exercise", strings.Replace(good, "exercise: extra", "exercise: other", 1), "tier/test/e2e", `exercise "other"`},
		{"not in a tier", good, "lonely", "<tier>/test/<suite>"},
		{"no cluster", strings.Replace(good, "cluster: shared\n", "", 1), "tier/test/e2e", "cluster missing"},
		{"an unknown cluster", strings.Replace(good, "cluster: shared", "cluster: mine", 1), "tier/test/e2e", `cluster: "mine": want shared`},
		{"a smoke on a shared cluster", good + "smoke:\n  checks: [TestA]\n", "tier/test/e2e", "leave smoke out"},
		{"its own cluster without a smoke", strings.Replace(good, "cluster: shared", "cluster: own", 1), "tier/test/e2e", "smoke.checks"},
		{"a smoke of checks and commands", strings.Replace(good, "cluster: shared", "cluster: own", 1) + "smoke:\n  checks: [TestA]\n  commands: [hack/x.sh]\n", "tier/test/e2e", "one of the two"},
		{"a smoke check that is no row", strings.Replace(good, "cluster: shared", "cluster: own", 1) + "smoke:\n  checks: [TestC]\n", "tier/test/e2e", `smoke.checks[0]: "TestC" is no test`},
		{"a smoke check of an exercise", strings.Replace(good, "cluster: shared", "cluster: own", 1) + "smoke:\n  checks: [TestExerciseB]\n", "tier/test/e2e", "a smoke runs the reference"},
		{"an empty smoke command", strings.Replace(good, "cluster: shared", "cluster: own", 1) + "smoke:\n  commands: ['  ']\n", "tier/test/e2e", "smoke.commands[0] is empty"},
		{"a check kind only and local cluster only", strings.Replace(good, "  reread: '#run-it'\n", "  reread: '#run-it'\n  kindOnly: a real kubelet\n  localClusterOnly: a kwok node\n", 1), "tier/test/e2e", "TestA): kindOnly (a real kubelet) and localClusterOnly (a kwok node): no cluster could run it"},
		{"a check kind only in a lesson on the local cluster only", strings.Replace(good, "  reread: '#run-it'\n", "  reread: '#run-it'\n  kindOnly: a real kubelet\n", 1) + "localClusterOnly: a component swapped\n", "tier/test/e2e", "TestA): kindOnly, but the lesson says localClusterOnly"},
		{"a check local cluster only in a lesson that says so", strings.Replace(good, "  reread: '#run-it'\n", "  reread: '#run-it'\n  localClusterOnly: a kwok node\n", 1) + "localClusterOnly: a component swapped\n", "tier/test/e2e", "drop the check's"},
		{"a smoke check kind only", strings.Replace(strings.Replace(good, "cluster: shared", "cluster: own", 1), "  reread: '#run-it'\n", "  reread: '#run-it'\n  kindOnly: a real kubelet\n", 1) + "smoke:\n  checks: [TestA]\n", "tier/test/e2e", "smoke.checks[0]: TestA runs on kind only"},
		{"a debug entry without a start", good + "debug:\n- name: ctl\n  port: 2399\n", "tier/test/e2e", "every debug entry states name, port and start"},
		{"a debug port out of range", good + "debug:\n- name: ctl\n  port: 80\n  start: controller\n", "tier/test/e2e", "port 80 is outside 1024-65535"},
		{"a debug port twice", good + "debug:\n- name: ctl\n  port: 2399\n  start: controller\n- name: other\n  port: 2399\n  start: component\n", "tier/test/e2e", "debug[0] has its name or its port (2399) already"},
		{"a debug script outside the lesson's folder", good + "debug:\n- name: ctl\n  port: 2399\n  start: hack/debug-ctl.sh\n", "tier/test/e2e", "a script in the lesson's own folder, tier/..."},
		{"a reading of nothing", good + "reading: {}\n", "tier/test/e2e", "reading: names neither sections nor mentions"},
		{"an unknown mentions", good + "reading:\n  mentions: some\n", "tier/test/e2e", `reading.mentions: "some"`},
		{"a bin given as a path", good + "bins: [bin/csi-provisioner]\n", "tier/test/e2e", `bins[0]: "bin/csi-provisioner": want a program's name as hack/build-bins.sh takes it`},
		{"kind only on the local cluster only", strings.Replace(good, "- name: extra\n", "- name: extra\n  kindOnly: a real kubelet\n", 1) + "localClusterOnly: a component swapped\n", "tier/test/e2e", "drop one of the two"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseLesson([]byte(tc.data), tc.dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error naming %q", err, tc.want)
			}
		})
	}
}

// TestKitKubeconfigIsLibShsRule holds the Go copy of the kubeconfig rule to the
// one hack/lib.sh states for the scripts and Makefiles.
func TestKitKubeconfigIsLibShsRule(t *testing.T) {
	root := RepoRoot()
	for _, name := range []string{"", DefaultCluster, "newcomer"} {
		cmd := exec.Command("bash", "-c", `source hack/lib.sh && echo "$KIT_KUBECONFIG"`)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), ClusterEnv+"="+name)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := KitKubeconfig(root, name), strings.TrimSpace(string(out)); got != want {
			t.Errorf("KitKubeconfig(%q) = %s, hack/lib.sh says %s", name, got, want)
		}
	}
}

// TestSkipElsewhereSkipsACheckKeptToAnotherCluster: a check whose row says
// kindOnly skips itself where the kubeconfig's context is no kind cluster's,
// one whose row says localClusterOnly skips itself on kind, and a check
// without a mark runs on both.
func TestSkipElsewhereSkipsACheckKeptToAnotherCluster(t *testing.T) {
	saved := suiteChecks
	t.Cleanup(func() { suiteChecks = saved })
	for _, tc := range []struct {
		context string
		skipped string
	}{
		{"kind-x", "local-only"},
		{"kwok-x", "kind-only"},
	} {
		kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
		config := "apiVersion: v1\nkind: Config\ncurrent-context: " + tc.context + "\ncontexts:\n- name: " + tc.context + "\n  context: {cluster: c, user: u}\n" +
			"clusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:1'}\nusers:\n- name: u\n  user: {}\n"
		if err := os.WriteFile(kubeconfig, []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("KUBECONFIG", kubeconfig)
		t.Setenv(AnyContextEnv, "1")
		t.Run(tc.context, func(t *testing.T) {
			suiteChecks = []Check{
				{Test: t.Name() + "/kind-only", KindOnly: "a real kubelet"},
				{Test: t.Name() + "/local-only", LocalClusterOnly: "a kwok node"},
				{Test: t.Name() + "/anywhere"},
			}
			for _, name := range []string{"kind-only", "local-only", "anywhere"} {
				ran := false
				skipped := false
				t.Run(name, func(t *testing.T) {
					defer func() { skipped = t.Skipped() }()
					SkipElsewhere(t)
					ran = true
				})
				if want := name == tc.skipped; skipped != want || ran == want {
					t.Errorf("on context %s, %s: skipped %v and ran %v; want it skipped: %v", tc.context, name, skipped, ran, want)
				}
			}
		})
	}
}
