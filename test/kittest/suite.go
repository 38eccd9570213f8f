package kittest

import (
	"context"
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
// OneAtATime. It returns the exit code for os.Exit; a suite that cannot start
// prints why, names the fix, and returns 1 before any test runs.
//
//	//go:embed lesson.yaml
//	var lessonFile []byte
//	var suite = &kittest.Suite{File: lessonFile}
//	func TestMain(m *testing.M) { os.Exit(suite.Run(m)) }
func (s *Suite) Run(m *testing.M) int {
	flag.Parse() // the command line first, so the lesson's OneAtATime wins over -test.parallel
	if err := s.start(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}
	return m.Run()
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
// or not within 2 minutes: it answers in a fraction of a second, but make test
// runs its smokes at a lower CPU priority (nice), and on a machine busy with
// other work a niced process can wait tens of seconds for its share.
func Reconcilers(bin string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--list-reconcilers").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list-reconcilers: %w", bin, err)
	}
	return strings.Fields(string(out)), nil
}

// RequireReconciler returns an error naming the Reconcilers bin has when name is
// not one of them, so a misspelt or unregistered RECONCILER stops a suite in
// seconds instead of failing every test after its deadline.
func RequireReconciler(bin, name string) error {
	names, err := Reconcilers(bin)
	if err != nil {
		return err
	}
	if slices.Contains(names, name) {
		return nil
	}
	for _, known := range names {
		if editDistance(name, known) <= 2 {
			return fmt.Errorf("%s=%s: the controller has no Reconciler of that name; did you mean %s? (it has: %s)",
				ReconcilerEnv, name, known, strings.Join(names, ", "))
		}
	}
	return fmt.Errorf("%s=%s: the controller has no Reconciler of that name (it has: %s); register yours in the tier's reconcilers map first (the lesson's \"Your own Reconciler\")",
		ReconcilerEnv, name, strings.Join(names, ", "))
}

// editDistance is the number of single-letter insertions, deletions and
// substitutions that turn a into b (Levenshtein), for spotting a typo.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
