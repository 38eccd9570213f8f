package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
//   - e2e: the tier's e2e suite passes with the reference Reconciler (make test-e2e);
//     a lesson whose checks are all exercises has none.
//   - stub: the stub fails exactly the checks its table marks StubFails (for a
//     lesson whose checks are all exercises: the tier as shipped fails them).
//   - solution: each exercise's reference solution passes every check, and the
//     reference Reconciler fails the exercise's own checks (so they can fail).
//
// Steps run one after another: lessons 1 and 3 watch every namespace, and two
// controllers of one lesson at once would do each other's work.
func runLane(o options, w io.Writer) (int, error) {
	lesson, err := findLesson(o.root, o.lesson)
	if err != nil {
		return 0, err
	}
	for _, step := range strings.Split(o.lane, ",") {
		start := time.Now()
		fmt.Fprintf(w, ">> lane step %s\n", step)
		var ok bool
		var what string
		switch step {
		case "e2e":
			if lesson.OnlyExercises {
				fmt.Fprintf(w, "lesson %s has no e2e suite of its own: its checks are exercises (steps stub and solution)\n", lesson.Number)
				continue
			}
			what = "the e2e suite passes with the reference"
			ok = runE2E(o.root, lesson, w)
		case "stub":
			// Each wait gets 20 s unless KIT_STUB_TIMEOUT says otherwise: the
			// stub never converges, and the waits it must pass (a Lease handover
			// after a release) take a second or two on the local cluster.
			what = "the stub fails exactly the checks it should"
			timeout := cmp.Or(os.Getenv(kittest.StubTimeoutEnv), "20s")
			if _, perr := time.ParseDuration(timeout); perr != nil {
				return 0, fmt.Errorf("%s=%q: %v; want a Go duration such as 60s", kittest.StubTimeoutEnv, timeout, perr)
			}
			// The stub makes nothing, so its checks ask no CPU of a node: they
			// run 16 at a time whatever KIT_E2E_PARALLEL says (it is there for
			// the reference's Pods), and mostly wait out their timeouts.
			ok, err = passes(options{root: o.root, lesson: lesson.Number, reconciler: "stub", timeout: timeout, expectStub: true, parallel: "16"}, w)
		case "solution":
			what = "every exercise's solution passes, the reference fails the exercise"
			ok, err = solutionsHold(o.root, lesson, w)
		default:
			return 0, fmt.Errorf("-lane=%q: unknown step %q; want e2e, stub and/or solution", o.lane, step)
		}
		if err != nil {
			return 0, err
		}
		if !ok {
			progress("lesson %s: FAILED at step %s (%s)", lesson.Number, step, what)
			return 1, nil
		}
		progress("lesson %s: %s (%d s)", lesson.Number, what, int(time.Since(start).Seconds()))
	}
	return 0, nil
}

// runE2E runs `make test-e2e` in the lesson's tier and reports whether it passed.
func runE2E(root string, l *lesson, w io.Writer) bool {
	cmd := exec.Command("make", "--no-print-directory", "-C", filepath.Join(root, l.Tier), "test-e2e")
	cmd.Stdout, cmd.Stderr = w, w
	return cmd.Run() == nil
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
// checks. A wait that must succeed gets 2 minutes, since make test's other jobs
// hold the CPU meanwhile (a Deployment reaching Available took over 30 s there)
// and a deadline met early costs nothing; 10 s is plenty for a wait that is
// meant to time out.
func solutionsHold(root string, l *lesson, w io.Writer) (bool, error) {
	for _, ex := range l.Exercises {
		if ok, err := passes(options{root: root, lesson: l.Number, reconciler: "reference", solution: ex.Name, timeout: "2m"}, w); err != nil || !ok {
			return false, err
		}
		if l.KubeSource {
			// Nothing of the kit to check against: the stub step holds the
			// unchanged source to failing every exercise's checks.
			continue
		}
		fmt.Fprintf(w, ">> exercise %s against the reference (its checks must fail)\n", ex.Name)
		res, err := run(options{root: root, lesson: l.Number, reconciler: "reference", exercise: ex.Name, timeout: "10s", run: "TestExercise"}, w)
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
