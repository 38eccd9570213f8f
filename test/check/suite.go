package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// suiteRun is what one run of a suite said: the exit code for check's own exit,
// and each check's status (pass, fail, skip, or "" when it did not run to the
// end) by test name. status is nil when no check ran at all.
type suiteRun struct {
	code   int
	checks []check
	status map[string]string
}

// testEvent is one line of `go test -json` and `go tool test2json` (cmd/test2json's TestEvent).
type testEvent struct {
	Action string
	Test   string
	Output string
}

// result is what the run said about one test.
type result struct {
	action string   // pass, fail or skip; empty when the test never finished
	output []string // the test's output lines
}

// run runs the suite and prints the report to w. Its code is 0 when every check
// that ran passed (with -expect-stub: when the stub failed exactly the expected
// checks). The error says why the suite could not be run at all. Its steps, in
// order, are the methods of suiteRunner below.
func run(o options, w io.Writer) (*suiteRun, error) {
	r, err := newSuiteRunner(o, w)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(r.tmp)
	for _, step := range []func() error{r.pickSolution, r.freshLogDir, r.chooseWhatRuns} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	r.printChecking()
	start := time.Now()
	if !r.buildController() || !r.buildSuite() {
		return &suiteRun{code: 1}, nil
	}
	tests, err := r.runTests()
	if err != nil {
		return nil, err
	}
	return r.report(tests, start), nil
}

// suiteRunner is one run of a lesson's suite, filled in step by step.
type suiteRunner struct {
	o      options
	w      io.Writer
	lesson *lesson
	// root is the repository root and tierDir the lesson's tier, both absolute;
	// tmp a folder of this run's own, removed at its end.
	root, tierDir, tmp string
	// patchPath and patch are the solution -solution names, when set.
	patchPath, patch string
	// overlay is the `go build -overlay` file laying that solution over the tier.
	overlay string
	// env is the suite's environment and what the first line says is checked.
	env, what []string
	// kindOnly are the exercises skipped on this cluster, with the reason each
	// gives (kindOnlyHere); onKind says whether the cluster is a kind cluster,
	// which keeps some checks from running (kittest.Check.NotHere).
	kindOnly map[string]string
	onKind   bool
	// testBin is the suite's test binary.
	testBin string
}

// newSuiteRunner finds the lesson and makes the run's temporary folder.
func newSuiteRunner(o options, w io.Writer) (*suiteRunner, error) {
	l, err := findLesson(o.root, o.lesson)
	if err != nil {
		return nil, err
	}
	root, err := filepath.Abs(o.root)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "kit-check-")
	if err != nil {
		return nil, err
	}
	return &suiteRunner{o: o, w: w, lesson: l, root: root, tierDir: filepath.Join(root, l.Tier), tmp: tmp}, nil
}

// pickSolution reads the solution -solution names, and checks the Reconciler a
// solution registers of its own unless another was asked for: the reference
// would only show that the reference lacks the exercise.
func (r *suiteRunner) pickSolution() error {
	if r.o.solution == "" {
		return nil
	}
	ex, err := r.lesson.Exercise(r.o.solution)
	if err != nil {
		return fmt.Errorf("-solution=%q: %w", r.o.solution, err)
	}
	if r.patchPath, r.patch, err = readSolution(r.root, r.lesson.Doc, r.lesson.KubeSource, r.o.solution); err != nil {
		return err
	}
	if ex.Reconciler != "" && r.o.reconciler == kittest.DefaultReconciler {
		fmt.Fprintf(r.w, learnerTexts().solutionReconciler+"\n", ex.Reconciler, ex.Reconciler)
		r.o.reconciler = ex.Reconciler
	}
	return nil
}

// freshLogDir empties the folder where the suite keeps what a failing check's
// diagnosis reads: _output/check/lesson-N unless the caller named another. The
// path is made absolute, since the suite runs in its own folder.
func (r *suiteRunner) freshLogDir() error {
	if r.o.logDir == "" {
		r.o.logDir = filepath.Join(r.root, "_output", "check", "lesson-"+r.lesson.Number)
	}
	var err error
	if r.o.logDir, err = filepath.Abs(r.o.logDir); err != nil {
		return err
	}
	return os.RemoveAll(r.o.logDir)
}

// chooseWhatRuns sets the suite's environment: the Reconciler (except in a
// lesson of exercises only, lesson 0, which checks the tier as it stands), the
// exercises (a solution's own, or all of a lesson of exercises only; none that
// is kind-only on the local cluster), and the solution: for a kubeSource lesson
// a patch to Kubernetes' source, which its suite applies itself, else an
// overlay laid over the kit (the tier, or lesson 6's program).
func (r *suiteRunner) chooseWhatRuns() error {
	l, o := r.lesson, &r.o
	r.env = append(os.Environ(),
		kittest.LogDirEnv+"="+o.logDir,
		kittest.ReconcilerEnv+"="+o.reconciler,
		kittest.TimeoutEnv+"="+o.timeout,
	)
	if o.solution != "" && o.exercise == "" {
		o.exercise = o.solution // a solution is checked with its exercise's checks
	}
	if l.OnlyExercises && o.exercise == "" {
		o.exercise = l.ExerciseNames() // the lesson's checks are its exercises
	}
	r.onKind = onKind()
	r.kindOnly = kindOnlyHere(l, func() bool { return r.onKind })
	o.exercise = withoutKindOnly(o.exercise, r.kindOnly)
	var err error
	switch {
	case l.KubeSource && o.solution != "" && kubeSourcePatch(r.patchPath):
		r.env = append(r.env, kittest.KubeSolutionEnv+"="+r.patchPath)
	case l.KubeSource && o.reconciler == "stub":
		// What the lesson starts from: a fresh copy and the pinned binaries.
		r.env = append(r.env, kittest.KubePristineEnv+"=1")
	case o.solution != "":
		if r.overlay, err = writeOverlay(r.root, r.patchPath, r.patch, r.tmp); err != nil {
			return err
		}
		r.env = append(r.env, kittest.OverlayEnv+"="+r.overlay)
	}
	r.env = append(r.env, kittest.ExerciseEnv+"="+o.exercise)
	reconciler := o.reconciler
	if l.OnlyExercises {
		reconciler = "" // the tier is checked as it stands
	}
	r.what = whatIsChecked(learnerTexts(), reconciler, o.solution, o.exercise)
	return nil
}

// whatIsChecked names, in t's language, what the run's first line says is
// checked: the Reconciler, the solution and the exercises, each when set.
func whatIsChecked(t texts, reconciler, solution, exercise string) []string {
	var what []string
	if reconciler != "" {
		what = append(what, fmt.Sprintf(t.withReconciler, reconciler))
	}
	if solution != "" {
		what = append(what, fmt.Sprintf(t.withSolution, solution))
	}
	if exercise != "" {
		what = append(what, fmt.Sprintf(t.withExercise, exercise))
	}
	return what
}

// withoutKindOnly drops from exercises (comma-separated) the ones skipped here.
func withoutKindOnly(exercises string, skipped map[string]string) string {
	var kept []string
	for _, name := range strings.Split(exercises, ",") {
		if _, skip := skipped[name]; name != "" && !skip {
			kept = append(kept, name)
		}
	}
	return strings.Join(kept, ",")
}

// printChecking prints the run's first line: the lesson, what it checks and how
// long each wait may take.
func (r *suiteRunner) printChecking() {
	t := learnerTexts()
	checked := r.lesson.Tier
	if r.lesson.KubeSource {
		checked = t.kubeSource // the learner's copy, or a fresh one of the suite's
	}
	timeout := cmp.Or(r.o.timeout, t.ownDeadline)
	fmt.Fprintf(r.w, t.checking+"\n", r.o.lesson, checked, strings.Join(r.what, t.listSep), timeout)
}

// buildController builds the controller with the solution's overlay, once per
// run of this program (a lane's steps share it), asks it once for the
// Reconciler under test, and passes it to the suite; it reports whether that
// worked, having printed why not. A kubeSource lesson has no controller of the
// kit.
func (r *suiteRunner) buildController() bool {
	if r.lesson.KubeSource {
		return true
	}
	bin, err := buildController(r.root, r.lesson, r.o.solution, r.overlay)
	if err != nil {
		fmt.Fprintf(r.w, "%s\n%v\n", learnerTexts().controllerDoesNotCompile, err)
		return false
	}
	if err := requireReconciler(bin, r.o.reconciler); err != nil {
		fmt.Fprintf(r.w, "%s\n%v\n", learnerTexts().noCheckRan, err)
		return false
	}
	r.env = append(r.env, kittest.BinaryEnv+"="+bin)
	return true
}

// buildSuite builds the suite's test binary, once per run of this program; it
// reports whether that worked, having printed why not.
func (r *suiteRunner) buildSuite() bool {
	var err error
	r.testBin, err = buildOnce("suite "+r.lesson.Number, func() (string, error) { return testBinary(r.lesson, r.tierDir) })
	if err != nil {
		fmt.Fprintf(r.w, "%s\n%v\n", learnerTexts().suiteDoesNotCompile, err)
		return false
	}
	return true
}

// testRun is what the suite's test binary said: each test's result, the output
// that belongs to no test (build errors, TestMain's messages), and its exit.
type testRun struct {
	results   map[string]*result
	pkgOutput []string
	exit      error
}

// runTests runs the suite's test binary under test2json, which turns its
// -test.v output into the event stream `go test -json` prints.
// The suites run their independent tests in parallel (t.Parallel), and go test
// would otherwise run only as many at once as there are CPUs; a lesson whose
// checks run one at a time gets -parallel 1.
func (r *suiteRunner) runTests() (*testRun, error) {
	parallel := cmp.Or(r.o.parallel, os.Getenv(kittest.ParallelEnv), "16")
	if r.lesson.OneAtATime {
		parallel = "1"
	}
	args := []string{"tool", "test2json", r.testBin, "-test.v=test2json", "-test.timeout=30m", "-test.parallel=" + parallel}
	if r.o.run != "" {
		args = append(args, "-test.run="+r.o.run)
	}
	suiteDir := filepath.Join(r.tierDir, r.lesson.Suite)
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Env = suiteDir, r.env
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the suite in %s: %w", suiteDir, err)
	}
	var tests testRun
	tests.results, tests.pkgOutput = readEvents(stdout, r.w)
	tests.exit = cmd.Wait()
	return &tests, nil
}

// report prints one line per check (the function report) and what the run took, and returns
// what the run said. When no test ran, TestMain stopped before any (a build
// error, a cluster that refused the CRD): its own words say why.
func (r *suiteRunner) report(tests *testRun, start time.Time) *suiteRun {
	fmt.Fprintln(r.w)
	results := tests.results
	if len(results) == 0 && tests.exit != nil {
		fmt.Fprintf(r.w, "%s\n%s\n", learnerTexts().noCheckRan, tail(tests.pkgOutput, 30))
		fmt.Fprintf(r.w, "(%s)\n", time.Since(start).Round(time.Second))
		return &suiteRun{code: 1}
	}
	checks := r.lesson.Checks
	code := report(r.w, r.root, checks, results, r.o, r.kindOnly, r.onKind)
	fmt.Fprintf(r.w, "(%s)\n", time.Since(start).Round(time.Second))
	status := map[string]string{}
	for _, c := range checks {
		status[c.Test] = outcome(c.Test, results)
	}
	return &suiteRun{code: code, checks: checks, status: status}
}

// buildController builds the lesson's controller, with the overlay of solution
// when set, into the kit's cache, once per run of this program for each
// solution (validate and the run, or a lane's steps, share it).
func buildController(root string, l *lesson, solution, overlay string) (string, error) {
	return buildOnce("controller "+l.Number+" "+solution, func() (string, error) {
		return kittest.CachedBinary(filepath.Join(root, l.Tier, l.Main), l.Binary, overlay)
	})
}

// asked holds the controllers requireReconciler asked already, with the name.
var asked = map[string]bool{}

// requireReconciler asks the controller bin whether it has the Reconciler name
// (kittest.RequireReconciler), once per run of this program for each name,
// however many steps need the answer: make check's arguments, then its run.
func requireReconciler(bin, name string) error {
	key := bin + "\x00" + name
	if asked[key] {
		return nil
	}
	if err := kittest.RequireReconciler(bin, name); err != nil {
		return err
	}
	asked[key] = true
	return nil
}

// built holds what buildOnce built in this process, by key.
var built = map[string]string{}

// buildOnce returns the path build returned the first time this process asked
// for key, and calls build only then; a failed build is tried again next time.
func buildOnce(key string, build func() (string, error)) (string, error) {
	if path, ok := built[key]; ok {
		return path, nil
	}
	path, err := build()
	if err != nil {
		return "", err
	}
	built[key] = path
	return path, nil
}

// readEvents reads the test2json event stream, printing a dot per finished test
// so a learner sees progress, and returns each test's result and the output
// that belongs to no test (build errors, TestMain's messages).
func readEvents(r io.Reader, w io.Writer) (map[string]*result, []string) {
	results := map[string]*result{}
	var pkgOutput []string
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for scanner.Scan() {
		var e testEvent
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			pkgOutput = append(pkgOutput, scanner.Text())
			continue
		}
		if e.Test == "" {
			if e.Action == "output" {
				pkgOutput = append(pkgOutput, strings.TrimRight(e.Output, "\n"))
			}
			continue
		}
		res := results[e.Test]
		if res == nil {
			res = &result{}
			results[e.Test] = res
		}
		switch e.Action {
		case "output":
			res.output = append(res.output, strings.TrimRight(e.Output, "\n"))
		case "pass", "fail", "skip":
			res.action = e.Action
			fmt.Fprint(w, ".")
		}
	}
	return results, pkgOutput
}
