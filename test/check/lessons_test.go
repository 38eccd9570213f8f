package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// lessonFile is a made-up lesson file: lesson n with cluster and what follows.
func lessonFile(n, cluster, more string) string {
	return "lesson: '" + n + "'\nmain: .\nbinary: ctl\ndoc: docs/lessons/0" + n + ".md\ncluster: " + cluster + "\n" + more +
		"checks:\n- test: TestA\n  behaviour: a\n  hint: h\n  reread: '#a'\n"
}

// madeUpKit writes a repository with the lesson files given by tier, and the
// smoke command the own-cluster lessons name.
func madeUpKit(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for tier, content := range files {
		dir := filepath.Join(root, tier, "test", "e2e")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, kittest.LessonFile), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "hack"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "hack", "smoke.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestLessonsListsWhatTheScriptsAsk: check -lessons prints the numbers of the
// lessons that pass its filters, one a line, so a new lesson file reaches every
// runner; with -lesson it answers by its exit code.
func TestLessonsListsWhatTheScriptsAsk(t *testing.T) {
	root := madeUpKit(t, map[string]string{
		"one":   lessonFile("1", "shared", ""),
		"two":   lessonFile("2", "shared", "localClusterOnly: a component swapped\n"),
		"seven": lessonFile("7", "own", "smoke:\n  checks: [TestA]\n"),
		"eight": lessonFile("8", "own", "smoke:\n  commands: [hack/smoke.sh now]\n"),
	})
	for _, tc := range []struct {
		name   string
		filter lessonFilter
		want   string
	}{
		{"every lesson", lessonFilter{}, "1 2 7 8"},
		{"make test's lanes", lessonFilter{cluster: "shared"}, "1 2"},
		{"a cluster of their own", lessonFilter{cluster: "own"}, "7 8"},
		{"on kind", lessonFilter{kind: true}, "1 7 8"},
		{"smoke checks", lessonFilter{smoke: "checks"}, "7"},
		{"smoke commands", lessonFilter{smoke: "commands"}, "8"},
		{"filters combined", lessonFilter{cluster: "own", smoke: "checks", kind: true}, "7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			code, err := listLessons(root, "", tc.filter, &out)
			if got := strings.Join(strings.Fields(out.String()), " "); err != nil || code != 0 || got != tc.want {
				t.Errorf("listLessons = %q, %d, %v; want %q, 0", got, code, err, tc.want)
			}
		})
	}
	var out strings.Builder
	if code, err := listLessons(root, "7", lessonFilter{cluster: "own"}, &out); code != 0 || err != nil || out.String() != "7\n" {
		t.Errorf("-lessons -cluster own -lesson 7 = %q, %d, %v; want 7 and exit 0", out.String(), code, err)
	}
	if code, err := listLessons(root, "1", lessonFilter{cluster: "own"}, &out); code != 1 || err != nil {
		t.Errorf("-lessons -cluster own -lesson 1 = %d, %v; want exit 1: lesson 1 shares make test's clusters", code, err)
	}
	if _, err := listLessons(root, "9", lessonFilter{}, &out); err == nil || !strings.Contains(err.Error(), "1, 2, 7, 8") {
		t.Errorf("-lessons -lesson 9 = %v; want an error listing the lessons", err)
	}
	for _, bad := range []lessonFilter{{cluster: "mine"}, {smoke: "tests"}} {
		if _, err := listLessons(root, "", bad, &out); err == nil || !strings.Contains(err.Error(), "want") {
			t.Errorf("listLessons(%+v) = %v; want an error naming the flag and its values", bad, err)
		}
	}
}

// TestKindOnlyExerciseIsSkippedOnTheLocalClusterWithItsReason reads a made-up
// lesson with an exercise marked kindOnly: on the local cluster the runners
// leave it out of the exercises they run and print its reason; on kind it runs.
func TestKindOnlyExerciseIsSkippedOnTheLocalClusterWithItsReason(t *testing.T) {
	const reason = "the node half needs a real kubelet"
	l, err := kittest.ParseLesson([]byte(lessonFile("7", "shared", "exercises:\n- name: controller\n- name: node\n  kindOnly: "+reason+"\n")+
		"- test: TestExerciseNode\n  behaviour: n\n  hint: h\n  reread: '#n'\n  exercise: node\n"), "seven/test/e2e")
	if err != nil {
		t.Fatal(err)
	}
	local := kindOnlyHere(l, func() bool { return false })
	if local["node"] != reason || len(local) != 1 {
		t.Errorf("on the local cluster: kindOnlyHere = %v; want node skipped for %q", local, reason)
	}
	if got := withoutKindOnly(l.ExerciseNames(), local); got != "controller" {
		t.Errorf("exercises run on the local cluster: %q, want controller", got)
	}
	if onKind := kindOnlyHere(l, func() bool { return true }); len(onKind) != 0 {
		t.Errorf("on kind: kindOnlyHere = %v; want nothing skipped", onKind)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs", "lessons"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "docs", "lessons", "07.md"), []byte("## A\n## N\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(kittest.LangEnv, "en")
	var out strings.Builder
	report(&out, root, l.Checks, results(map[string]string{"TestA": "pass", "TestExerciseNode": "skip"}), options{}, local, false)
	if !strings.Contains(out.String(), "skip  exercise node runs on kind only: "+reason) {
		t.Errorf("the report of a kind-only exercise on the local cluster:\n%s\nwant a skip line with its reason", out.String())
	}
}

// TestCheckOfAnotherClusterIsOneSkipLineNeitherPassNorFail reads a made-up
// lesson with a check marked kindOnly and one marked localClusterOnly: on
// each cluster the one that does not run there is one skip line with its
// reason, counted neither as passed nor as failed, and the stub step holds it
// to nothing; a marked check whose test ran anyway is a problem of the table
// that names kittest.SkipElsewhere.
func TestCheckOfAnotherClusterIsOneSkipLineNeitherPassNorFail(t *testing.T) {
	l, err := kittest.ParseLesson([]byte(lessonFile("7", "shared", "")+
		"- test: TestK\n  behaviour: k\n  hint: h\n  reread: '#a'\n  stubFails: true\n  kindOnly: a real kubelet\n"+
		"- test: TestL\n  behaviour: l\n  hint: h\n  reread: '#a'\n  stubFails: true\n  localClusterOnly: a kwok node played by hand\n"+
		"- test: TestM\n  behaviour: m\n  hint: h\n  reread: '#a'\n  kindOnly: a real kubelet\n"), "seven/test/e2e")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs", "lessons"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "docs", "lessons", "07.md"), []byte("## A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(kittest.LangEnv, "en")
	for _, tc := range []struct {
		name    string
		onKind  bool
		actions map[string]string
		o       options
		code    int
		want    []string
	}{
		{"local cluster", false, map[string]string{"TestA": "pass", "TestK": "skip", "TestL": "fail", "TestM": "skip"}, options{}, 1,
			[]string{"skip  k (runs on kind only: a real kubelet; make kind-up", "skip  m (as above)\n", "1 of 2 checks pass"}},
		{"kind", true, map[string]string{"TestA": "pass", "TestK": "pass", "TestL": "skip", "TestM": "pass"}, options{}, 0,
			[]string{"skip  l (runs on the local cluster only: a kwok node played by hand)", "3 of 3 checks pass"}},
		{"the stub on kind", true, map[string]string{"TestA": "pass", "TestK": "fail", "TestL": "skip", "TestM": "pass"}, options{expectStub: true}, 0,
			[]string{"skip  l (runs on the local cluster only", "exactly the checks its table expects"}},
		{"a marked check that ran", false, map[string]string{"TestA": "pass", "TestK": "pass", "TestL": "pass", "TestM": "skip"}, options{}, 1,
			[]string{"TestK: its row keeps it to another cluster", "kittest.SkipElsewhere(t)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			code := report(&out, root, l.Checks, results(tc.actions), tc.o, nil, tc.onKind)
			for _, want := range tc.want {
				if !strings.Contains(out.String(), want) {
					t.Errorf("report:\n%s\nwant %q in it", out.String(), want)
				}
			}
			if code != tc.code {
				t.Errorf("report's code %d, want %d\n%s", code, tc.code, out.String())
			}
		})
	}
}

// TestLaneRefusesAnUnknownStepBeforeRunningAny names the steps there are.
func TestLaneRefusesAnUnknownStepBeforeRunningAny(t *testing.T) {
	root := madeUpKit(t, map[string]string{"one": lessonFile("1", "shared", "")})
	_, err := runLane(options{root: root, lesson: "1", lane: "stub,smoek"}, &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), `unknown step "smoek"`) || !strings.Contains(err.Error(), "smoke") {
		t.Errorf("-lane stub,smoek = %v; want an error naming the step and the steps there are", err)
	}
}

// TestLessonWithoutSolutionsHasNoSolutionStep: a lesson whose exercises are
// written in its stub (no exercises: in its lesson.yaml) has nothing for the
// solution and exercises steps: the lane says why in its log and prints no
// progress line claiming that solutions passed.
func TestLessonWithoutSolutionsHasNoSolutionStep(t *testing.T) {
	root := madeUpKit(t, map[string]string{"seven": lessonFile("7", "shared", "")})
	for _, step := range []string{"solution", "exercises"} {
		var out strings.Builder
		code, err := runLane(options{root: root, lesson: "7", lane: step}, &out)
		if err != nil || code != 0 {
			t.Errorf("-lane %s = %d, %v; want 0 and no error", step, code, err)
		}
		if !strings.Contains(out.String(), "no exercise solutions in docs/solutions") {
			t.Errorf("-lane %s wrote %q; want it to say the lesson has no exercise solutions", step, out.String())
		}
	}
}

// TestLessonFiltersWithoutLessonsAreRefused: -cluster, -kind and -smoke only
// filter what -lessons prints; given alone they would be ignored in silence.
func TestLessonFiltersWithoutLessonsAreRefused(t *testing.T) {
	for _, f := range []lessonFilter{{cluster: "own"}, {kind: true}, {smoke: "checks"}} {
		_, err := dispatch(options{filter: f})
		if err == nil || !strings.Contains(err.Error(), "add -lessons") {
			t.Errorf("dispatch with filter %+v and no -lessons = %v; want an error saying to add -lessons", f, err)
		}
	}
}

// TestMakeHelpReadsTheLessonTable holds make help, which reads the lesson files
// with awk to stay instant, to the table as the grader reads it: the LESSON line
// names every lesson, test-lessonN is listed for exactly the lessons with a
// cluster of their own, and the WHAT and PORT lines name each debug entry with
// its lesson and its port.
func TestMakeHelpReadsTheLessonTable(t *testing.T) {
	root := kittest.RepoRoot()
	lessons, err := kittest.ReadLessons(root)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", "--no-print-directory", "help")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make help: %v", err)
	}
	help := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(string(out), "")
	var numbers []string
	for _, l := range lessons {
		numbers = append(numbers, l.Number)
		listed := regexp.MustCompile(`(?m)^  test-lesson` + l.Number + ` `).MatchString(help)
		if own := l.Cluster == kittest.ClusterOwn; listed != own {
			t.Errorf("lesson %s (cluster: %s): make help lists test-lesson%s: %v, want %v", l.Number, l.Cluster, l.Number, listed, own)
		}
	}
	if want := "LESSON                 check: the lesson to check: " + strings.Join(numbers, ", ") + "\n"; !strings.Contains(help, want) {
		t.Errorf("make help has no line %q", want)
	}
	for _, l := range lessons {
		for _, d := range l.Debug {
			for _, want := range []string{d.Name + " (lesson " + l.Number + ")", d.Name + " " + strconv.Itoa(d.Port)} {
				if !strings.Contains(help, want) {
					t.Errorf("make help's WHAT and PORT lines have no %q (lesson %s's debug entry)", want, l.Number)
				}
			}
		}
	}
}

// TestSmokeCommandsRunFromTheRootAndTheirFailureFailsTheLane runs a made-up
// lesson's smoke commands: each from the repository root, with its arguments;
// the lane passes when each exits 0 and fails at the first that does not.
func TestSmokeCommandsRunFromTheRootAndTheirFailureFailsTheLane(t *testing.T) {
	root := madeUpKit(t, map[string]string{"eight": lessonFile("8", "own", "smoke:\n  commands: [hack/smoke.sh now, hack/smoke.sh again]\n")})
	script := "#!/bin/sh\necho \"$1\" >> ran.txt\n[ ! -f fail ]\n"
	if err := os.WriteFile(filepath.Join(root, "hack", "smoke.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if code, err := runLane(options{root: root, lesson: "8", lane: "smoke"}, &out); code != 0 || err != nil {
		t.Fatalf("the smoke: %d, %v; want 0\n%s", code, err, out.String())
	}
	if ran, err := os.ReadFile(filepath.Join(root, "ran.txt")); err != nil || string(ran) != "now\nagain\n" {
		t.Errorf("the commands ran from the root as %q, %v; want now, then again", ran, err)
	}
	if err := os.WriteFile(filepath.Join(root, "fail"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, err := runLane(options{root: root, lesson: "8", lane: "smoke"}, &out); code != 1 || err != nil {
		t.Errorf("a failing smoke command: %d, %v; want 1", code, err)
	}
}
