package kittest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// DefaultReconciler is the Reconciler the suites run when $RECONCILER is unset: the
// reference Reconciler every tier registers under this name.
const DefaultReconciler = "reference"

// Reconciler returns the name of the Reconciler under test: $RECONCILER, else
// DefaultReconciler.
func Reconciler() string {
	if r := os.Getenv(ReconcilerEnv); r != "" {
		return r
	}
	return DefaultReconciler
}

// Suite is a tier's e2e suite as its TestMain describes it to Run: its lesson
// file, and what to do before the tests. Run fills in the rest for the tests.
type Suite struct {
	// File is the suite's lesson file (LessonFile, in the suite's folder), embedded
	// with //go:embed: which lesson, which controller to build, the check table.
	File []byte
	// Setup, when not nil, runs once after the build and before any test, for what
	// every test needs (a CRD installed); its error stops the suite.
	Setup func() error
	// Teardown, when not nil, runs once after the tests, or after a start that
	// failed, for what Setup changed outside the test binary (a component of
	// the cluster swapped, KubeCopy.Close); its error fails the suite.
	Teardown func() error

	// Lesson is File parsed (ParseLesson), set by Run.
	Lesson *Lesson
	// TierDir is the absolute path of the tier, set by Run.
	TierDir string
	// Bin is the absolute path of the controller built for this run (under the
	// kit's BinDir, see CachedBinary), set by Run.
	Bin string
}

// Run is the body of every tier's e2e TestMain: it reads the suite's lesson file,
// builds the controller as a learner's `go build` would (with $KIT_E2E_OVERLAY's
// overlay when set; CachedBinary) and makes sure the binary knows the Reconciler
// under test, or takes the one $KIT_E2E_BINARY names (its builder asked it
// already), runs Setup, then the tests, one at a time when the lesson says
// OneAtATime, then Teardown. It returns the exit code for os.Exit; a suite that
// cannot start prints why, names the fix, and returns 1 before any test runs.
//
//	//go:embed lesson.yaml
//	var lessonFile []byte
//	var suite = &kittest.Suite{File: lessonFile}
//	func TestMain(m *testing.M) { os.Exit(suite.Run(m)) }
func (s *Suite) Run(m *testing.M) int {
	flag.Parse() // the command line first, so the lesson's OneAtATime wins over -test.parallel
	code := 1
	if err := s.start(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
	} else {
		code = m.Run()
	}
	if s.Teardown != nil {
		if err := s.Teardown(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			code = 1
		}
	}
	return code
}

// suiteLesson is the lesson number of the suite running in this test binary, for
// messages that name a make check command (see Exercise), and suiteChecks its
// rows (see SkipElsewhere); both set by Suite.Run.
var (
	suiteLesson = "N"
	suiteChecks []Check
)

// start is everything Run does before the tests.
func (s *Suite) start() error {
	l, root, err := lessonHere(s.File)
	if err != nil {
		return fmt.Errorf("reading the suite's lesson file: %w (embed it: //go:embed %s, Suite{File: ...})", err, LessonFile)
	}
	s.Lesson, suiteLesson, suiteChecks = l, l.Number, l.Checks
	s.TierDir = filepath.Join(root, l.Tier)
	if err := runAsTheLessonSays(l); err != nil {
		return err
	}
	if l.KubeSource {
		// Nothing of the kit to build: the suite checks the learner's copy of
		// Kubernetes and the cluster's own components.
		if s.Setup != nil {
			return s.Setup()
		}
		return nil
	}
	if s.Bin = os.Getenv(BinaryEnv); s.Bin != "" {
		// Whoever built it (make check) asked it for the Reconciler already.
		if _, err := os.Stat(s.Bin); err != nil {
			return fmt.Errorf("%s=%s: %w; unset it to build the controller", BinaryEnv, s.Bin, err)
		}
	} else if s.Bin, err = CachedBinary(filepath.Join(s.TierDir, l.Main), l.Binary, os.Getenv(OverlayEnv)); err != nil {
		return err
	} else if err := RequireReconciler(s.Bin, Reconciler()); err != nil {
		return err
	}
	if s.Setup != nil {
		return s.Setup()
	}
	return nil
}

// runAsTheLessonSays sets go test's -parallel to 1 for a lesson whose checks
// run one at a time (Lesson.OneAtATime), whatever the command line said.
func runAsTheLessonSays(l *Lesson) error {
	if !l.OneAtATime {
		return nil
	}
	if err := flag.Set("test.parallel", "1"); err != nil {
		return fmt.Errorf("lesson %s runs its checks one at a time (oneAtATime), but go test's -parallel cannot be set: %w", l.Number, err)
	}
	return nil
}

// Reconcilers runs bin --list-reconcilers, which every tier's controller answers
// with the names its --reconciler flag accepts (the keys of its reconcilers map),
// one per line, and returns them. The error says when bin does not answer so,
// or not within 2 minutes (see listReconcilers).
func Reconcilers(bin string) ([]string, error) {
	return listReconcilers(bin)
}

// RequireReconciler asks the controller bin whether it has a Reconciler called
// name, the way the tiers' make run does (their reconciler-known target): bin
// --reconciler=NAME --list-reconcilers, which refuses a name that is no key of
// its reconcilers map with an error naming the flag, the names it knows and, for
// a typo, the one meant. The error quotes that answer, so a misspelt or
// unregistered RECONCILER stops a suite in seconds instead of failing every test
// after its deadline.
func RequireReconciler(bin, name string) error {
	names, err := listReconcilers(bin, "--reconciler="+name)
	var refused *refusal
	switch {
	case errors.As(err, &refused):
		return fmt.Errorf("%s=%s: the controller has no Reconciler of that name; %s answers:\n%s",
			ReconcilerEnv, name, refused.command, refused.answer)
	case err != nil:
		return err
	case !slices.Contains(names, name):
		// A controller that lists its names without checking the one given (a
		// learner's edit that lost the check) is stopped here all the same.
		return fmt.Errorf("%s=%s: the controller has no Reconciler of that name (it has: %s); register yours in the tier's reconcilers map first (the lesson's \"Your own Reconciler\")",
			ReconcilerEnv, name, strings.Join(names, ", "))
	}
	return nil
}

// refusal is a controller's non-zero exit: the command, and what it wrote to
// its standard error.
type refusal struct {
	command, answer string
}

func (r *refusal) Error() string { return r.command + ": " + r.answer }

// listReconcilers runs bin args... --list-reconcilers and returns the names it
// prints, one per line. When bin exits non-zero the error is a *refusal. The
// controller answers in a fraction of a second, but make test runs its smokes
// at a lower CPU priority (nice), and on a machine busy with other work a
// niced process can wait tens of seconds for its share: the error says when it
// does not answer within 2 minutes.
func listReconcilers(bin string, args ...string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args = append(args, "--list-reconcilers")
	command := filepath.Base(bin) + " " + strings.Join(args, " ")
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%s: no answer within 2 minutes (%w)", command, err)
	case errors.As(err, &exit):
		return nil, &refusal{command: command, answer: strings.TrimSpace(stderr.String())}
	case err != nil:
		return nil, fmt.Errorf("%s: %w", command, err)
	}
	return strings.Fields(string(out)), nil
}
