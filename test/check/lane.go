package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// runLane runs make test's steps for one lesson, in the order given by -lane,
// and stops at the first that fails. Everything the steps print goes to w (make
// test keeps it in _output/lesson-N-STEPS.log); one progress line per finished step
// goes to standard error. It returns 0 when every step passed, else 1.
//
//   - e2e: the lesson's suite passes with the reference Reconciler, each wait
//     with the suite's own deadline; a lesson whose checks are all exercises
//     has none.
//   - stub: the stub fails exactly the checks its table marks StubFails (for a
//     lesson whose checks are all exercises: the tier as shipped fails them).
//   - solution: each exercise's reference solution passes every check, and the
//     reference Reconciler fails the exercise's own checks (so they can fail).
//   - exercises: the same with only the exercises' own checks run against each
//     solution (make test's, beside the e2e step, which runs the others with
//     the reference; make test-lessonN and make test-solutions run solution).
//   - smoke: what make test runs of a lesson with a cluster of its own
//     (Lesson.Smoke): its smoke checks with the reference, or its commands.
//   - build: nothing is checked; what the lesson's checks will run is built
//     (buildsPass): make test and make test-lessonN start it while the
//     cluster starts, so a long first build is done by the time the checks
//     need it.
//
// Steps run one after another: lessons 1 and 3 watch every namespace, and two
// controllers of one lesson at once would do each other's work.
func runLane(o options, w io.Writer) (int, error) {
	l, err := findLesson(o.root, o.lesson)
	if err != nil {
		return 0, err
	}
	steps := strings.Split(o.lane, ",")
	for _, step := range steps {
		if laneSteps[step].run == nil {
			return 0, fmt.Errorf("-lane=%q: unknown step %q; want e2e, stub, solution, exercises, smoke and/or build", o.lane, step)
		}
	}
	for _, step := range steps {
		start := time.Now()
		fmt.Fprintf(w, ">> lane step %s\n", step)
		ok, err := laneSteps[step].run(o.root, l, w)
		if errors.Is(err, errNothingToRun) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if !ok {
			progress("lesson %s: FAILED at step %s (%s)", l.Number, step, laneSteps[step].what)
			return 1, nil
		}
		progress("lesson %s: %s (%d s)", l.Number, laneSteps[step].what, int(time.Since(start).Seconds()))
	}
	return 0, nil
}

// laneStep is one step of a lane: what its progress line says it checked, and
// how it runs, reporting whether it passed.
type laneStep struct {
	what string
	run  func(root string, l *lesson, w io.Writer) (bool, error)
}

// laneSteps are the steps -lane takes, by name.
var laneSteps = map[string]laneStep{
	"e2e":       {"the e2e suite passes with the reference", e2ePasses},
	"stub":      {"the stub fails exactly the checks it should", stubFailsAsMarked},
	"solution":  {"every exercise's solution passes, the reference fails the exercise", solutionsHold},
	"exercises": {"every exercise's solution passes its checks, the reference fails them", exercisesHold},
	"smoke":     {"the smoke passes", smokePasses},
	"build":     {"its programs, controller and suite are built", buildsPass},
}

// errNothingToRun is what a step returns, having said why, when the lesson has
// nothing for it: the lane goes on to the next step.
var errNothingToRun = errors.New("nothing to run")

// e2ePasses runs the lesson's suite with the reference Reconciler, as its tier's
// make test-e2e would: each wait with the suite's own deadline, the logs kept
// apart from the stub and solution steps' (which make test runs at the same
// time, on its other cluster).
func e2ePasses(root string, l *lesson, w io.Writer) (bool, error) {
	if l.OnlyExercises {
		fmt.Fprintf(w, "lesson %s has no e2e suite of its own: its checks are exercises (steps stub and solution)\n", l.Number)
		return false, errNothingToRun
	}
	return passes(options{root: root, lesson: l.Number, reconciler: kittest.DefaultReconciler, logDir: laneLogDir(root, l, "e2e")}, w)
}

// stubFailsAsMarked runs the checks against the stub (-expect-stub). Each wait
// gets 20 s unless KIT_STUB_TIMEOUT says otherwise: the stub never converges,
// and the waits it must pass (a Lease handover after a release) take a second
// or two on the local cluster. The stub makes nothing, so its checks ask no CPU
// of a node: they run 16 at a time whatever KIT_E2E_PARALLEL says (it is there
// for the reference's Pods), and mostly wait out their timeouts.
func stubFailsAsMarked(root string, l *lesson, w io.Writer) (bool, error) {
	timeout := cmp.Or(os.Getenv(kittest.StubTimeoutEnv), "20s")
	if _, err := time.ParseDuration(timeout); err != nil {
		return false, fmt.Errorf("%s=%q: %v; want a Go duration such as 60s", kittest.StubTimeoutEnv, timeout, err)
	}
	return passes(options{root: root, lesson: l.Number, reconciler: "stub", timeout: timeout, expectStub: true, parallel: "16"}, w)
}

// smokePasses runs the lesson's smoke: its smoke checks with the reference on
// the cluster KUBECONFIG reaches (a subtest's whole top-level test runs), or its
// commands from the repository root, one after another.
func smokePasses(root string, l *lesson, w io.Writer) (bool, error) {
	if l.Smoke == nil {
		return false, fmt.Errorf("lesson %s has no smoke: its lesson.yaml says cluster: %s, so make test runs all of its checks (-lane e2e,stub,solution)", l.Number, l.Cluster)
	}
	if len(l.Smoke.Checks) > 0 {
		var tests []string
		for _, name := range l.Smoke.Checks {
			top, _, _ := strings.Cut(name, "/")
			tests = append(tests, regexp.QuoteMeta(top))
		}
		run := "^(" + strings.Join(tests, "|") + ")$"
		return passes(options{root: root, lesson: l.Number, reconciler: kittest.DefaultReconciler, run: run, logDir: laneLogDir(root, l, "smoke")}, w)
	}
	for _, command := range l.Smoke.Commands {
		fmt.Fprintf(w, ">> %s\n", command)
		args := strings.Fields(command)
		cmd := exec.Command(filepath.Join(root, args[0]), args[1:]...)
		cmd.Dir, cmd.Stdout, cmd.Stderr = root, w, w
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(w, "%s: %v\n", command, err)
			return false, nil
		}
	}
	return true, nil
}

// buildsPass builds what the lesson's checks run, printing the builds' output
// to w: the pinned programs of its lesson.yaml's bins (hack/build-bins.sh, which
// has its own progress lines and waits for another build of bin/ rather than
// compiling beside it), its reference controller (unless a kubeSource lesson,
// which has none) and its suite's test binary, all into the caches the other
// steps read (kittest.CachedBinary and CachedTestBinary wait for each other
// too). It reports false, having said why, when a build fails.
func buildsPass(root string, l *lesson, w io.Writer) (bool, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return false, err
	}
	if len(l.Bins) > 0 {
		fmt.Fprintf(w, ">> hack/build-bins.sh %s\n", strings.Join(l.Bins, " "))
		cmd := exec.Command(filepath.Join(root, "hack", "build-bins.sh"), l.Bins...)
		cmd.Dir, cmd.Stdout, cmd.Stderr = root, w, w
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(w, "hack/build-bins.sh %s (lesson.yaml's bins): %v\n", strings.Join(l.Bins, " "), err)
			return false, nil
		}
	}
	if !l.KubeSource {
		fmt.Fprintf(w, ">> building %s (the lesson's controller)\n", l.Binary)
		if _, err := buildController(root, l, "", ""); err != nil {
			fmt.Fprintf(w, "%s\n%v\n", learnerTexts().controllerDoesNotCompile, err)
			return false, nil
		}
	}
	fmt.Fprintf(w, ">> building lesson %s's suite (%s/%s)\n", l.Number, l.Tier, l.Suite)
	if _, err := testBinary(l, filepath.Join(root, l.Tier)); err != nil {
		fmt.Fprintf(w, "%s\n%v\n", learnerTexts().suiteDoesNotCompile, err)
		return false, nil
	}
	return true, nil
}

// laneLogDir is where a lane step that may run beside another step of the same
// lesson (on make test's other cluster) keeps its suite's logs.
func laneLogDir(root string, l *lesson, step string) string {
	return filepath.Join(root, "_output", "check", "lesson-"+l.Number+"-"+step)
}

// passes runs the suite with o and reports whether its code is 0.
func passes(o options, w io.Writer) (bool, error) {
	res, err := run(o, w)
	if err != nil {
		return false, err
	}
	return res.code == 0, nil
}

// solutionsHold checks every exercise of the lesson both ways: its solution
// passes every check, and the reference Reconciler fails each of the exercise's
// checks (checkSolutions).
func solutionsHold(root string, l *lesson, w io.Writer) (bool, error) {
	return checkSolutions(root, l, w, "")
}

// exercisesHold is solutionsHold with only the exercises' own checks run
// against each solution: a solution that breaks another check is left to
// solutionsHold, and the other checks' run with the reference to the e2e step.
// It is what make test runs, on the cluster of the stub step, at a fraction of
// the cost of every check once more per exercise.
func exercisesHold(root string, l *lesson, w io.Writer) (bool, error) {
	return checkSolutions(root, l, w, kittest.ExerciseTestPrefix)
}

// checkSolutions checks every exercise of the lesson both ways: its solution
// passes the checks only selects (a -run pattern; every check when empty), and
// the reference Reconciler fails each of the exercise's checks. A wait that
// must succeed gets 2 minutes, since make test's other jobs
// hold the CPU meanwhile (a Deployment reaching Available took over 30 s there)
// and a deadline met early costs nothing; 10 s is plenty for a wait that is
// meant to time out. An exercise that runs on kind only is skipped on the local
// cluster, with its reason. A lesson whose exercises are written in its stub
// (lessons 7 and 8: the reference is their solution) has nothing here.
func checkSolutions(root string, l *lesson, w io.Writer, only string) (bool, error) {
	if len(l.Exercises) == 0 {
		fmt.Fprintf(w, "lesson %s has no exercise solutions in docs/solutions: its exercises are written in the stub, and the reference is their solution (step e2e)\n", l.Number)
		return false, errNothingToRun
	}
	kindOnly := kindOnlyHere(l, onKind)
	for _, ex := range l.Exercises {
		if reason, ok := kindOnly[ex.Name]; ok {
			fmt.Fprintf(w, "skip  "+learnerTexts().skipKindOnly+"\n", ex.Name, reason)
			continue
		}
		if ok, err := passes(options{root: root, lesson: l.Number, reconciler: "reference", solution: ex.Name, timeout: "2m", run: only}, w); err != nil || !ok {
			return false, err
		}
		if l.KubeSource {
			// Nothing of the kit to check against: the stub step holds the
			// unchanged source to failing every exercise's checks.
			continue
		}
		fmt.Fprintf(w, ">> exercise %s against the reference (its checks must fail)\n", ex.Name)
		res, err := run(options{root: root, lesson: l.Number, reconciler: "reference", exercise: ex.Name, timeout: "10s", run: kittest.ExerciseTestPrefix}, w)
		if err != nil {
			return false, err
		}
		failed := 0
		for _, c := range res.checks {
			if c.Exercise != ex.Name {
				continue
			}
			if res.status[c.Test] != "fail" {
				fmt.Fprintf(w, "%s: %q against the reference, want fail: the reference lacks the exercise, so its check must be able to fail\n", c.Test, res.status[c.Test])
				return false, nil
			}
			failed++
		}
		if failed == 0 {
			fmt.Fprintf(w, "exercise %s: no check of the suite's table belongs to it\n", ex.Name)
			return false, nil
		}
	}
	return true, nil
}

// progress prints a line to standard error in hack/lib.sh's kit_log format: the
// seconds since $KIT_T0 (when the outermost kit script started), then the text.
func progress(format string, args ...any) {
	elapsed := 0
	if t0, err := strconv.ParseInt(os.Getenv("KIT_T0"), 10, 64); err == nil {
		elapsed = int(time.Now().Unix() - t0)
	}
	fmt.Fprintf(os.Stderr, "[%3ds] %s\n", elapsed, fmt.Sprintf(format, args...))
}
