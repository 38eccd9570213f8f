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
// checks). The error says why the suite could not be run at all.
func run(o options, w io.Writer) (*suiteRun, error) {
	lesson, err := findLesson(o.root, o.lesson)
	if err != nil {
		return nil, err
	}
	root, err := filepath.Abs(o.root)
	if err != nil {
		return nil, err
	}
	tierDir := filepath.Join(root, lesson.Tier)
	tmp, err := os.MkdirTemp("", "kit-check-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	var patch, patchPath string
	if o.solution != "" {
		ex, err := lesson.Exercise(o.solution)
		if err != nil {
			return nil, fmt.Errorf("-solution=%q: %w", o.solution, err)
		}
		if patchPath, patch, err = readSolution(root, lesson.Doc, lesson.KubeSource, o.solution); err != nil {
			return nil, err
		}
		// A solution that registers a Reconciler of its own is checked with that
		// one unless another was asked for: the reference would only show that
		// the reference lacks the exercise.
		if ex.Reconciler != "" && o.reconciler == kittest.DefaultReconciler {
			fmt.Fprintf(w, learnerTexts().solutionReconciler+"\n", ex.Reconciler, ex.Reconciler)
			o.reconciler = ex.Reconciler
		}
	}
	// What the suite keeps for a failing check's diagnosis, afresh each run.
	o.logDir = filepath.Join(root, "_output", "check", "lesson-"+lesson.Number)
	if err := os.RemoveAll(o.logDir); err != nil {
		return nil, err
	}
	env := append(os.Environ(),
		kittest.LogDirEnv+"="+o.logDir,
		kittest.ReconcilerEnv+"="+o.reconciler,
		kittest.TimeoutEnv+"="+o.timeout,
	)
	// What runs: the Reconciler, except in a lesson of exercises only (lesson 0),
	// which checks the tier as it stands and has no Reconciler to choose.
	var what []string
	if !lesson.OnlyExercises {
		what = append(what, "Reconciler "+o.reconciler)
	}
	if o.solution != "" && o.exercise == "" {
		o.exercise = o.solution // a solution is checked with its exercise's checks
	}
	if lesson.OnlyExercises && o.exercise == "" {
		o.exercise = lesson.ExerciseNames() // the lesson's checks are its exercises
	}
	var overlay string
	switch {
	case lesson.KubeSource && o.solution != "":
		// A patch to Kubernetes' source: the suite applies it to a copy of its own.
		env = append(env, kittest.KubeSolutionEnv+"="+patchPath)
		what = append(what, "solution "+o.solution)
	case lesson.KubeSource && o.reconciler == "stub":
		// What the lesson starts from: a fresh copy and the pinned binaries.
		env = append(env, kittest.KubePristineEnv+"=1")
	case o.solution != "":
		if overlay, err = writeOverlay(root, patchPath, patch, tmp); err != nil {
			return nil, err
		}
		env = append(env, kittest.OverlayEnv+"="+overlay)
		what = append(what, "solution "+o.solution)
	}
	if o.exercise != "" {
		what = append(what, "exercise "+o.exercise)
	}
	env = append(env, kittest.ExerciseEnv+"="+o.exercise)
	t := learnerTexts()
	checked := lesson.Tier
	if lesson.KubeSource {
		checked = "Kubernetes' source" // the learner's copy, or a fresh one of the suite's
	}
	fmt.Fprintf(w, t.checking+"\n", o.lesson, checked, strings.Join(what, ", "), o.timeout)

	start := time.Now()
	// The controller and the suite are built once per run of this program (a
	// lane's steps share them) into the kit's cache, where a build with nothing
	// changed links nothing; test2json turns the suite's -test.v output into
	// the event stream `go test -json` prints.
	if !lesson.KubeSource { // a kubeSource lesson has no controller of the kit
		bin, err := buildOnce("controller "+lesson.Number+" "+o.solution, func() (string, error) {
			return kittest.CachedBinary(filepath.Join(tierDir, lesson.Main), lesson.Binary, overlay)
		})
		if err != nil {
			fmt.Fprintf(w, "%s\n%v\n", t.controllerDoesNotCompile, err)
			return &suiteRun{code: 1}, nil
		}
		env = append(env, kittest.BinaryEnv+"="+bin)
	}
	suiteDir := filepath.Join(tierDir, lesson.Suite)
	testBin, err := buildOnce("suite "+lesson.Number, func() (string, error) { return testBinary(lesson, tierDir) })
	if err != nil {
		fmt.Fprintf(w, "%s\n%v\n", t.suiteDoesNotCompile, err)
		return &suiteRun{code: 1}, nil
	}
	// -parallel: the suites run their independent tests in parallel (t.Parallel),
	// and go test would otherwise run only as many at once as there are CPUs.
	parallel := cmp.Or(o.parallel, os.Getenv(kittest.ParallelEnv), "16")
	args := []string{"tool", "test2json", testBin, "-test.v=test2json", "-test.timeout=30m", "-test.parallel=" + parallel}
	if o.run != "" {
		args = append(args, "-test.run="+o.run)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Env = suiteDir, env
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the suite in %s: %w", suiteDir, err)
	}
	results, pkgOutput := readEvents(stdout, w)
	waitErr := cmd.Wait()

	checks := lesson.Checks
	fmt.Fprintln(w)
	if len(results) == 0 && waitErr != nil {
		// TestMain stopped before any test: a build error, an unknown
		// RECONCILER, a cluster that refused the CRD. Its own words say which.
		fmt.Fprintf(w, "%s\n%s\n", t.noCheckRan, tail(pkgOutput, 30))
		fmt.Fprintf(w, "(%s)\n", time.Since(start).Round(time.Second))
		return &suiteRun{code: 1}, nil
	}
	code := report(w, root, checks, results, o)
	fmt.Fprintf(w, "(%s)\n", time.Since(start).Round(time.Second))
	status := map[string]string{}
	for _, c := range checks {
		status[c.Test] = outcome(c.Test, results)
	}
	return &suiteRun{code: code, checks: checks, status: status}, nil
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
