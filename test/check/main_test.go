package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/controller-kit/controller-kit/test/kittest"
)

func TestSlugMatchesGitHubAnchors(t *testing.T) {
	for heading, want := range map[string]string{
		"Run it":                     "run-it",
		"Read main.go in this order": "read-maingo-in-this-order",
		"5. For and Owns: which events reach the Reconciler": "5-for-and-owns-which-events-reach-the-reconciler",
		"13. Exercises": "13-exercises",
		"Where the same pieces live in kubernetes/kubernetes v1.37.2": "where-the-same-pieces-live-in-kuberneteskubernetes-v1372",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

func TestSectionExistsRejectsAMissingAnchorOrFile(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "lesson.md"), []byte("# Title\n\n## 1. Run it\n\ntext\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := sectionExists(root, "lesson.md#1-run-it"); err != nil {
		t.Errorf("an existing section was refused: %v", err)
	}
	if err := sectionExists(root, "lesson.md#2-run-it"); err == nil {
		t.Error("a missing anchor was accepted")
	}
	if err := sectionExists(root, "other.md#1-run-it"); err == nil {
		t.Error("a missing file was accepted")
	}
}

// results builds what readEvents returns, from test name to action.
func results(actions map[string]string) map[string]*result {
	out := map[string]*result{}
	for name, action := range actions {
		out[name] = &result{action: action, output: []string{"    x_test.go:12: timed out waiting for " + name}}
	}
	return out
}

func TestReportExpectStubHoldsTheTableToTheRun(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "l.md"), []byte("## A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	checks := []check{
		{Test: "TestMissing", Behaviour: "missing", Reread: "l.md#a", StubFails: true},
		{Test: "TestPresent", Behaviour: "present", Reread: "l.md#a"},
		{Test: "TestExtra", Behaviour: "exercise", Reread: "l.md#a", Exercise: "extra"},
	}
	for _, tc := range []struct {
		name     string
		actions  map[string]string
		wantCode int
		wantText string
	}{
		{"as expected", map[string]string{"TestMissing": "fail", "TestPresent": "pass", "TestExtra": "skip"}, 0, "exactly the checks"},
		{"a check that cannot fail", map[string]string{"TestMissing": "pass", "TestPresent": "pass", "TestExtra": "skip"}, 1, "should fail"},
		{"an unexpected failure", map[string]string{"TestMissing": "fail", "TestPresent": "fail", "TestExtra": "skip"}, 1, "should pass"},
		{"a test without a table entry", map[string]string{"TestMissing": "fail", "TestPresent": "pass", "TestExtra": "skip", "TestNew": "pass"}, 1, "TestNew (pass) has no row"},
		{"a table entry without a test", map[string]string{"TestMissing": "fail", "TestExtra": "skip"}, 1, "TestPresent: no such test ran"},
		// On kind the checks that read the local cluster's audit log skip
		// themselves: they show nothing of the stub, which is no table error.
		{"a check that skipped itself", map[string]string{"TestMissing": "skip", "TestPresent": "pass", "TestExtra": "skip"}, 0, "skip  missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			code := report(&out, root, checks, results(tc.actions), options{expectStub: true}, nil, false)
			if code != tc.wantCode || !strings.Contains(out.String(), tc.wantText) {
				t.Errorf("exit code %d, want %d; output does not contain %q?\n%s", code, tc.wantCode, tc.wantText, out.String())
			}
		})
	}
}

func TestReportPrintsHintAndSectionForAFailure(t *testing.T) {
	t.Setenv(kittest.LangEnv, "en")
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "l.md"), []byte("## A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	checks := []check{{Test: "TestX", Behaviour: "x happens", Hint: "do x", Reread: "l.md#a"}}
	var out strings.Builder
	code := report(&out, root, checks, results(map[string]string{"TestX": "fail"}), options{}, nil, false)
	for _, want := range []string{"FAIL  x happens", "hint:   do x", "reread: l.md#a", "| x_test.go:12: timed out waiting for TestX", "0 of 1 checks pass"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
}

func TestSubtestFailureIsNotReportedAgainOnItsParent(t *testing.T) {
	got := outcome("TestParent", results(map[string]string{"TestParent": "fail", "TestParent/Child": "fail"}))
	if got != "pass" {
		t.Errorf("outcome of a parent failing only through its subtest = %q, want pass", got)
	}
	got = outcome("TestParent", results(map[string]string{"TestParent": "fail", "TestParent/Child": "pass"}))
	if got != "fail" {
		t.Errorf("outcome of a parent failing on its own = %q, want fail", got)
	}
}

// writeSolution lays out a repository root with one tier file and one
// solution patch for lesson 2, and returns the root.
func writeSolution(t *testing.T, patch string) string {
	t.Helper()
	root := t.TempDir()
	for path, content := range map[string]string{
		"tier/main.go": "package main\n\nfunc main() {}\n",
		"docs/solutions/02-sample-controller/service.patch": patch,
	} {
		path = filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"init", "--quiet"},
		{"add", "."},
		{"-c", "user.name=kit", "-c", "user.email=kit@example.com", "commit", "--quiet", "-m", "tier"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return root
}

func TestSolutionPatchIsAppliedToCopiesAndLaidOverTheTier(t *testing.T) {
	root := writeSolution(t, `diff --git a/tier/main.go b/tier/main.go
--- a/tier/main.go
+++ b/tier/main.go
@@ -1,3 +1,3 @@
 package main
 
-func main() {}
+func main() { println("solution") }
diff --git a/tier/service.go b/tier/service.go
new file mode 100644
--- /dev/null
+++ b/tier/service.go
@@ -0,0 +1 @@
+package main
`)
	// The learner's own uncommitted edit (the lessons ask for some) must not
	// stop the solution from applying: it applies to the committed file.
	learners := "package main\n\nfunc main() {}\n\nfunc mine() {}\n"
	if err := os.WriteFile(filepath.Join(root, "tier/main.go"), []byte(learners), 0o644); err != nil {
		t.Fatal(err)
	}
	overlayPath, err := applySolution(t, root, "service")
	if err != nil {
		t.Fatal(err)
	}
	var overlay struct{ Replace map[string]string }
	data, err := os.ReadFile(overlayPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &overlay); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"main.go": `println("solution")`, "service.go": "package main"}
	if len(overlay.Replace) != len(want) {
		t.Errorf("overlay replaces %v, want main.go and service.go", overlay.Replace)
	}
	for name, content := range want {
		copyPath, ok := overlay.Replace[filepath.Join(root, "tier", name)]
		if !ok {
			t.Errorf("overlay does not replace tier/%s: %v", name, overlay.Replace)
			continue
		}
		got, err := os.ReadFile(copyPath)
		if err != nil || !strings.Contains(string(got), content) {
			t.Errorf("patched tier/%s = %q (%v), want it to contain %q", name, got, err, content)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(root, "tier/main.go")); string(got) != learners {
		t.Errorf("the tier's own main.go changed: %q", got)
	}
}

func TestStaleSolutionPatchSaysHowToUpdateIt(t *testing.T) {
	root := writeSolution(t, `diff --git a/tier/main.go b/tier/main.go
--- a/tier/main.go
+++ b/tier/main.go
@@ -1,3 +1,3 @@
 package main
 
-func main() { println("an older tier") }
+func main() { println("solution") }
`)
	_, err := applySolution(t, root, "service")
	if err == nil || !strings.Contains(err.Error(), "does not apply") || !strings.Contains(err.Error(), "docs/solutions/README.md") {
		t.Errorf("writeOverlay = %v, want an error saying the patch does not apply and where to read how to fix it", err)
	}
}

func TestUnknownSolutionListsTheLessonsSolutions(t *testing.T) {
	root := writeSolution(t, "")
	_, err := applySolution(t, root, "nope")
	if err == nil || !strings.Contains(err.Error(), `-solution="nope"`) || !strings.Contains(err.Error(), "service") {
		t.Errorf("writeOverlay = %v, want an error naming -solution and the lesson's solutions (service)", err)
	}
}

// applySolution reads lesson 2's solution from root and writes its overlay, as
// run does for -solution.
func applySolution(t *testing.T, root, solution string) (string, error) {
	t.Helper()
	path, patch, err := readSolution(root, "docs/lessons/02-sample-controller.md", false, solution)
	if err != nil {
		return "", err
	}
	return writeOverlay(root, path, patch, t.TempDir())
}

func TestRereadNamesTheJapaneseTwinForAJapaneseReader(t *testing.T) {
	root := t.TempDir()
	for _, rel := range []string{"docs/lessons/01-loop.md", "docs/ja/lessons/01-loop.md", "docs/lessons/09-untranslated.md"} {
		path := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("## A\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		kitLang, lang, reread, want string
	}{
		{"", "ja_JP.UTF-8", "docs/lessons/01-loop.md#a", "docs/ja/lessons/01-loop.md#a"},
		{"ja", "C.UTF-8", "docs/lessons/01-loop.md#a", "docs/ja/lessons/01-loop.md#a"},
		{"en", "ja_JP.UTF-8", "docs/lessons/01-loop.md#a", "docs/lessons/01-loop.md#a"},
		{"", "en_US.UTF-8", "docs/lessons/01-loop.md#a", "docs/lessons/01-loop.md#a"},
		{"ja", "", "docs/lessons/09-untranslated.md#a", "docs/lessons/09-untranslated.md#a"}, // no twin: the English page
	} {
		t.Setenv(kittest.LangEnv, tc.kitLang)
		t.Setenv("LC_ALL", "")
		t.Setenv("LC_MESSAGES", "")
		t.Setenv("LANG", tc.lang)
		if got := rereadFor(root, tc.reread); got != tc.want {
			t.Errorf("KIT_LANG=%q LANG=%q: rereadFor(%q) = %q, want %q", tc.kitLang, tc.lang, tc.reread, got, tc.want)
		}
	}
}

// A learner who reads Japanese (KIT_LANG=ja, or a ja locale) gets make check's
// fixed texts in Japanese: the section to reread and the summary. What the
// lesson table says (behaviour, hint) is printed as written, in English, behind
// an English label (language_test.go holds the report to one language a line).
func TestReportSpeaksJapaneseToAJapaneseReader(t *testing.T) {
	t.Setenv(kittest.LangEnv, "ja")
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "l.md"), []byte("## A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	checks := []check{{Test: "TestX", Behaviour: "x happens", Hint: "do x", Reread: "l.md#a"}}
	var out strings.Builder
	report(&out, root, checks, results(map[string]string{"TestX": "fail"}), options{}, nil, false)
	for _, want := range []string{"FAIL  x happens", japanese.hint + "do x", japanese.reread + "l.md#a", "1個のチェックのうち0個に合格しました", japanese.fixFirst} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "checks pass") {
		t.Errorf("the summary is in English:\n%s", out.String())
	}
}

// Every text has its Japanese version, with the same verbs (%s, %d, %q, and
// their explicit indexes) as the English one, so that no sentence prints a
// %!(EXTRA ...) or a missing value in either language.
func TestJapaneseTextsMatchTheEnglishOnes(t *testing.T) {
	en, ja := reflect.ValueOf(english), reflect.ValueOf(japanese)
	verbs := regexp.MustCompile(`%(\[\d+\])?[a-z]`)
	count := func(s string) map[string]int {
		n := map[string]int{}
		for _, v := range verbs.FindAllString(s, -1) {
			n[v[len(v)-1:]]++
		}
		return n
	}
	for i := range en.NumField() {
		name := en.Type().Field(i).Name
		e, j := en.Field(i).String(), ja.Field(i).String()
		if j == "" && e != "" {
			t.Errorf("japanese.%s is empty", name)
		}
		if !reflect.DeepEqual(count(e), count(j)) {
			t.Errorf("japanese.%s has the verbs %v, english.%s %v", name, count(j), name, count(e))
		}
	}
}

func TestReportPrintsASkippedExerciseOnce(t *testing.T) {
	t.Setenv(kittest.LangEnv, "en")
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "l.md"), []byte("## A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	checks := []check{
		{Test: "TestA1", Behaviour: "exercise a: one", Reread: "l.md#a", Exercise: "a"},
		{Test: "TestA2", Behaviour: "exercise a: two", Reread: "l.md#a", Exercise: "a"},
		{Test: "TestB1", Behaviour: "exercise b: one", Reread: "l.md#a", Exercise: "b"},
		{Test: "TestB2", Behaviour: "exercise b: two", Reread: "l.md#a", Exercise: "b"},
	}
	var out strings.Builder
	report(&out, root, checks, results(map[string]string{"TestA1": "skip", "TestA2": "skip", "TestB1": "pass", "TestB2": "pass"}), options{}, nil, false)
	if got := strings.Count(out.String(), "skip  exercise a (EXERCISE=a runs it)"); got != 1 {
		t.Errorf("the skipped exercise a is %d lines, want one:\n%s", got, out.String())
	}
}

func TestReadSolutionOfAKubeSourceLessonTellsAPatchToTheKitFromOneToKubernetes(t *testing.T) {
	root := t.TempDir()
	lesson := filepath.Join(root, "docs", "solutions", "06-kube-apiserver")
	for path, patch := range map[string]string{
		filepath.Join(lesson, "kubernetes", "plugin.patch"): "to Kubernetes' source\n",
		filepath.Join(lesson, "etcd-read.patch"):            "to the kit\n",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(patch), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for solution, want := range map[string]struct {
		patch string
		kube  bool
	}{
		"plugin":    {"to Kubernetes' source\n", true},
		"etcd-read": {"to the kit\n", false},
	} {
		path, patch, err := readSolution(root, "docs/lessons/06-kube-apiserver.md", true, solution)
		if err != nil || patch != want.patch || kubeSourcePatch(path) != want.kube {
			t.Errorf("readSolution(%s) = %s, %q, %v (kubeSourcePatch %v); want %q, kubeSourcePatch %v",
				solution, path, patch, err, kubeSourcePatch(path), want.patch, want.kube)
		}
	}
}
