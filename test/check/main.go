// Command check runs one lesson's conformance suite (its tier's e2e tests)
// against the Reconciler you choose and prints one line per behaviour: PASS or
// FAIL, the behaviour in plain words and, for a failure, a hint, what the check
// relies on, the lesson section to reread, and its cause: the controller's log
// and the requests the API server refused. `make check LESSON=2 RECONCILER=stub` at the repository root
// runs it; see `make help`.
//
//	check -lesson 2 -reconciler stub
//	check -lesson 2 -reconciler mine           # your own, registered in the tier
//	check -lesson 2 -solution service          # a reference solution, with its exercise's checks
//	check -lesson 2 -lane e2e,stub,solution    # what make test runs for each lesson
//
// The files, in reading order: lessons.go (the lesson table: the suites'
// lesson.yaml files, read through kittest.ReadLessons), suite.go (runs `go test -json` in the tier and
// reads each test's outcome), report.go (one line per check), diagnosis.go (a
// failing check's cause), solution.go (builds a tier with a solution patch laid
// over it), lane.go (make test's steps per lesson) and contracts.go (every
// contract a check relies on is stated in its lesson).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// check is a suite's table entry, as the suite writes it for `make check`.
type check = kittest.Check

// options are the command line: which lesson, which Reconciler, what else to run.
type options struct {
	root, lesson, reconciler, exercise, solution, timeout, run, lane, binary string
	// logDir is where the suite keeps each test's controller logs and refused
	// requests (kittest.LogDirEnv); run sets it.
	logDir string
	// parallel, when set, is go test's -parallel for this run, over
	// KIT_E2E_PARALLEL (kittest.ParallelEnv); the lane's stub step sets it.
	parallel                                       string
	expectStub, verbose, validate, verifyContracts bool
}

func main() {
	var o options
	flag.StringVar(&o.root, "root", ".", "the repository root (holds go.work)")
	flag.StringVar(&o.lesson, "lesson", "", "the lesson to check: 0, 1, 2 or 3")
	flag.StringVar(&o.reconciler, "reconciler", kittest.DefaultReconciler, "the Reconciler to check: stub, reference, or a name you registered in the tier")
	flag.StringVar(&o.exercise, "exercise", "", "also run the checks of this exercise beyond the reference (see the lesson's Exercises)")
	flag.StringVar(&o.solution, "solution", "", "build the tier with the reference solution docs/solutions/<lesson>/<name>.patch applied (to copies; the tier is not changed)")
	flag.StringVar(&o.timeout, "timeout", "30s", "how long each wait of a check may take (the suites' own default is 90-120 s)")
	flag.StringVar(&o.run, "run", "", "run only the checks whose test names match this regular expression (go test -run)")
	flag.BoolVar(&o.expectStub, "expect-stub", false, "for make test-checks: succeed only when exactly the checks marked StubFails fail")
	flag.BoolVar(&o.verbose, "v", false, "print the full output of failed checks")
	flag.StringVar(&o.lane, "lane", "", "make test's steps for the lesson, comma-separated, in this order: e2e (the suite with the reference), stub (-expect-stub), solution (every exercise's solution passes, the reference fails it)")
	flag.BoolVar(&o.validate, "validate", false, "only check that -lesson, -exercise and -solution name a lesson and its exercises and that the controller has -reconciler, and exit")
	flag.StringVar(&o.binary, "binary", "", "with -validate: the controller built already (a tier's make run builds bin/<name>), asked for -reconciler instead of building the lesson's; -lesson may then be left out")
	flag.BoolVar(&o.verifyContracts, "verify-contracts", false, "for make verify-docs: check that every lesson states each contract its checks rely on, and exit")
	flag.Parse()
	if o.verifyContracts {
		code, err := verifyContracts(o.root, os.Stdout)
		if err != nil {
			fmt.Fprintln(os.Stderr, "check:", err)
			os.Exit(2)
		}
		os.Exit(code)
	}
	if o.reconciler == "" {
		o.reconciler = kittest.DefaultReconciler // make check passes RECONCILER as it is, set or not
	}
	if o.validate {
		if err := validate(o); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		return
	}
	var code int
	var err error
	if o.lane != "" {
		code, err = runLane(o, os.Stdout)
	} else {
		var res *suiteRun
		res, err = run(o, os.Stdout)
		if res != nil {
			code = res.code
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "check:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

// validate checks that the options name a lesson of the table and, when set,
// one of its exercises as -exercise and -solution, and that the controller has
// the Reconciler -reconciler names: the one -binary names (then -lesson may be
// empty), else the lesson's, built into the kit's cache (make check's run then
// reuses that build). A solution's own Reconciler is checked by the suite, with
// the solution laid over the tier. It is what make check and the tiers' make run
// do before any cluster work.
func validate(o options) error {
	if o.binary != "" && o.lesson == "" {
		return kittest.RequireReconciler(o.binary, o.reconciler)
	}
	l, err := findLesson(o.root, o.lesson)
	if err != nil {
		return err
	}
	if o.solution == "" && o.reconciler != kittest.DefaultReconciler && !l.KubeSource {
		bin := o.binary
		if bin == "" {
			if bin, err = kittest.CachedBinary(filepath.Join(o.root, l.Tier, l.Main), l.Binary, ""); err != nil {
				return err
			}
		}
		if err := kittest.RequireReconciler(bin, o.reconciler); err != nil {
			return err
		}
	}
	for flagName, name := range map[string]string{"EXERCISE": o.exercise, "SOLUTION": o.solution} {
		if name == "" {
			continue
		}
		if _, err := l.Exercise(name); err != nil {
			return fmt.Errorf("%s=%s: %w", flagName, name, err)
		}
	}
	return nil
}
