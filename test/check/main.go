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
//	check -lessons -cluster shared             # the lessons of make test's lanes, one a line
//
// The files, in reading order: lessons.go (the lesson table: the suites'
// lesson.yaml files, read through kittest.ReadLessons, and -lessons, which the
// scripts ask), suite.go (runs `go test -json` in the tier and
// reads each test's outcome), report.go (one line per check), diagnosis.go (a
// failing check's cause), solution.go (builds a tier with a solution patch laid
// over it), lane.go (make test's steps per lesson), contracts.go (every
// contract a check relies on is stated in its lesson) and lists.go (the kit's
// lists of lessons held to the lesson files).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// check is a suite's table entry, as the suite writes it for `make check`.
type check = kittest.Check

// options are the command line: which lesson, which Reconciler, what else to run.
type options struct {
	root, lesson, reconciler, exercise, solution, timeout, run, lane string
	// logDir is where the suite keeps each test's controller logs and refused
	// requests (kittest.LogDirEnv); run sets it to _output/check/lesson-N
	// unless the caller set it.
	logDir string
	// parallel, when set, is go test's -parallel for this run, over
	// KIT_E2E_PARALLEL (kittest.ParallelEnv); the lane's stub step sets it.
	parallel                                                         string
	expectStub, verbose, ensureCluster, verifyContracts, verifyLines bool
	// verifyLists, verifyStacks, verifyDiagrams and readingPages are make
	// verify-docs' (lists.go, stacks.go, diagrams.go).
	verifyLists, verifyStacks, verifyDiagrams, readingPages bool
	// launchJSON prints .vscode/launch.json, verifyLaunch compares it (launch.go).
	launchJSON, verifyLaunch bool
	// lessons asks for the lessons' numbers instead of a run, those that pass
	// filter (-cluster, -kind, -smoke).
	lessons bool
	filter  lessonFilter
}

func main() {
	var o options
	flag.StringVar(&o.root, "root", ".", "the repository root (holds go.work)")
	flag.StringVar(&o.lesson, "lesson", "", "the lesson to check, such as 2 (check -lessons lists them)")
	flag.StringVar(&o.reconciler, "reconciler", kittest.DefaultReconciler, "the Reconciler to check: stub, reference, or a name you registered in the tier")
	flag.StringVar(&o.exercise, "exercise", "", "also run the checks of this exercise beyond the reference (see the lesson's Exercises)")
	flag.StringVar(&o.solution, "solution", "", "build the tier with the reference solution docs/solutions/<lesson>/<name>.patch applied (to copies; the tier is not changed)")
	flag.StringVar(&o.timeout, "timeout", "30s", "how long each wait of a check may take (the suites' own default is 90-120 s)")
	flag.StringVar(&o.run, "run", "", "run only the checks whose test names match this regular expression (go test -run)")
	flag.BoolVar(&o.expectStub, "expect-stub", false, "for make test-checks: succeed only when exactly the checks marked StubFails fail")
	flag.BoolVar(&o.verbose, "v", false, "print the full output of failed checks")
	flag.StringVar(&o.lane, "lane", "", "make test's steps for the lesson, comma-separated, in this order: e2e (the suite with the reference), stub (-expect-stub), solution (every exercise's solution passes, the reference fails it), exercises (the same with only the exercises' checks run against the solutions), smoke (what make test runs of a lesson with a cluster of its own), build (what its checks run, built ahead)")
	flag.BoolVar(&o.ensureCluster, "ensure-cluster", false, "what make check does: check the arguments and that the controller has -reconciler, before any cluster work; then make sure there is a cluster (hack/cluster/ensure-cluster.sh: the one KUBECONFIG reaches, else a local one started); then run the checks")
	flag.BoolVar(&o.verifyContracts, "verify-contracts", false, "for make verify-docs: check that every lesson states each contract its checks rely on, and exit")
	flag.BoolVar(&o.verifyLines, "verify-lines", false, "for make verify-docs: check that every file:line a lesson quotes from the kit's sources (main.go:231, foo_test.go:30, Makefile:45) still points at what it quotes, and exit")
	flag.BoolVar(&o.verifyStacks, "verify-stacks", false, "for make verify-docs: check that every stack a lesson quotes (<!-- stack: NAME --> before a block of delve's stack output) is well formed and that its Japanese twin quotes it alike, and exit")
	flag.BoolVar(&o.verifyDiagrams, "verify-diagrams", false, "for make verify-docs: check that every lesson page draws the path it reads in a mermaid block and that each function a diagram names (Name() in a quoted label) is one the page's text or tables write as code, and exit")
	flag.BoolVar(&o.verifyLists, "verify-lists", false, "for make verify-docs: check that the lesson-path pages' lesson tables have one row per lesson file, and that every list of lessons a text of the kit writes out is marked with the set it lists and holds it, and exit")
	flag.BoolVar(&o.readingPages, "reading-pages", false, "for hack/check-reading-paths.sh: print the lesson pages' sections whose tables quote upstream paths, and the pages whose text it checks, as the lesson files' reading fields say, and exit")
	flag.BoolVar(&o.launchJSON, "launch-json", false, "for make generate: print .vscode/launch.json as the lesson files' debug entries make it, and exit")
	flag.BoolVar(&o.verifyLaunch, "verify-launch-json", false, "for make verify-docs: check that .vscode/launch.json is what the lesson files' debug entries make of it, and exit")
	flag.BoolVar(&o.lessons, "lessons", false, "print the numbers of the lessons, one a line, that pass the filters -cluster, -kind and -smoke, and exit (with -lesson: exit 1 when that lesson does not pass them)")
	flag.StringVar(&o.filter.cluster, "cluster", "", "with -lessons: only the lessons whose lesson.yaml says this cluster: shared (they run in make test's lanes) or own (make test-lessonN)")
	flag.BoolVar(&o.filter.kind, "kind", false, "with -lessons: only the lessons that run on kind (no localClusterOnly)")
	flag.StringVar(&o.filter.smoke, "smoke", "", "with -lessons: only the lessons whose smoke is made of checks (run on make test's e2e cluster) or commands (run with no cluster)")
	flag.Parse()
	if o.reconciler == "" {
		o.reconciler = kittest.DefaultReconciler // make check passes RECONCILER as it is, set or not
	}
	code, err := dispatch(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "check:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

// dispatch does what the options ask, and returns the exit code; its error
// stops the program with code 2.
func dispatch(o options) (int, error) {
	if !o.lessons && o.filter != (lessonFilter{}) {
		return 0, fmt.Errorf("-cluster, -kind and -smoke filter the lessons -lessons prints; add -lessons, e.g. check -lessons -cluster own")
	}
	switch {
	case o.verifyContracts:
		return verifyContracts(o.root, os.Stdout)
	case o.verifyLines:
		return verifyLines(o.root, os.Stdout)
	case o.verifyLists:
		return verifyLists(o.root, os.Stdout)
	case o.verifyStacks:
		return verifyStacks(o.root, os.Stdout)
	case o.verifyDiagrams:
		return verifyDiagrams(o.root, os.Stdout)
	case o.readingPages:
		return readingPages(o.root, os.Stdout)
	case o.launchJSON, o.verifyLaunch:
		return writeLaunch(o.root, o.verifyLaunch, os.Stdout)
	case o.lessons:
		return listLessons(o.root, o.lesson, o.filter, os.Stdout)
	case o.lane != "":
		return runLane(o, os.Stdout)
	}
	if o.ensureCluster {
		if err := validate(o); err != nil {
			fmt.Fprintln(os.Stderr, err) // a typo: its own words, without "check:"
			return 2, nil
		}
		if err := ensureCluster(o.root); err != nil {
			return 0, err
		}
	}
	res, err := run(o, os.Stdout)
	if err != nil {
		return 0, err
	}
	return res.code, nil
}

// validate checks that the options name a lesson of the table and, when set,
// one of its exercises as -exercise and -solution, and that the controller has
// the Reconciler -reconciler names (building it into the kit's cache, which
// the run then reuses, and asking it once: requireReconciler). A solution's
// own Reconciler is asked by the run, once the solution is laid over the tier.
// It is what make check does before any cluster work.
func validate(o options) error {
	l, err := findLesson(o.root, o.lesson)
	if err != nil {
		return err
	}
	for flagName, name := range map[string]string{"EXERCISE": o.exercise, "SOLUTION": o.solution} {
		if name == "" {
			continue
		}
		if _, err := l.Exercise(name); err != nil {
			return fmt.Errorf("%s=%s: %w", flagName, name, err)
		}
	}
	if o.solution != "" || o.reconciler == kittest.DefaultReconciler || l.KubeSource {
		return nil
	}
	root, err := filepath.Abs(o.root)
	if err != nil {
		return err
	}
	bin, err := buildController(root, l, "", "")
	if err != nil {
		return err
	}
	return requireReconciler(bin, o.reconciler)
}

// ensureCluster runs hack/cluster/ensure-cluster.sh, as the tiers' run targets
// do: the cluster KUBECONFIG reaches, else the kit's local one, started.
func ensureCluster(root string) error {
	cmd := exec.Command(filepath.Join(root, "hack", "cluster", "ensure-cluster.sh"))
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("no cluster to check against (hack/cluster/ensure-cluster.sh: %w, its message is above)", err)
	}
	return nil
}
