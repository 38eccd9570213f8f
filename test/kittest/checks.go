package kittest

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// Deadline returns how long a suite's waits may take: def, or the duration in
// $KIT_E2E_TIMEOUT when that is set. A working Reconciler converges in a few
// seconds on the local cluster; def is the generous bound for a loaded machine,
// and the variable lets `make check` give up sooner on a Reconciler that never
// converges. Suites call it once, for their package-level deadline. A value that
// is not a positive duration stops the test binary with a message naming the
// variable and an example, before any test runs.
func Deadline(def time.Duration) time.Duration {
	v := os.Getenv(TimeoutEnv)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		fmt.Fprintf(os.Stderr, "%s=%q: want a positive duration such as 30s (or unset it for the default %s)\n", TimeoutEnv, v, def)
		os.Exit(2)
	}
	return d
}

// GarbageCollectionDeadline is how long a suite waits for kube-controller-manager's
// garbage collector to delete what a deleted owner owned: the longer of
// deadline and 90 s. It does not depend on the Reconciler under test, so a
// short $KIT_E2E_TIMEOUT must not cut it: on a fresh cluster the collector
// learns a newly installed CRD only at its next resync of the API's resources
// (every 30 s), and retries the owners it could not look up with a growing
// backoff, so the first deletions can take most of a minute.
func GarbageCollectionDeadline(deadline time.Duration) time.Duration {
	return max(deadline, 90*time.Second)
}

// NamespaceDeletionDeadline is how long a suite waits for a deleted namespace to
// be gone: the longer of deadline and 3 minutes. Like GarbageCollectionDeadline it
// does not depend on the Reconciler. kube-controller-manager's namespace
// controller deletes the namespace's content in rounds: while Pods remain in their
// grace period it looks again only after half of their estimated time
// (pkg/controller/namespace/namespace_controller.go, ResourcesRemainingError), and
// after any other failed round it backs off up to 60 s, so with many namespaces
// going at once on a busy machine one namespace took over 90 s.
func NamespaceDeletionDeadline(deadline time.Duration) time.Duration {
	return max(deadline, 3*time.Minute)
}

// Check describes one behaviour of a conformance suite for a learner: what it
// means in plain words, what to try when it fails, and where the lesson
// explains it. Each check suite's lesson file (see Lesson) lists them, one row
// per test; `make check` prints one line per Check.
type Check struct {
	// Test is the name `go test` gives the test, e.g. "TestScalingFooScalesDeployment"
	// or "TestGuestbookOperator/DeletedChildIsRecreated" for a subtest.
	Test string `json:"test"`
	// Behaviour says what a user sees when the check passes, in plain words.
	Behaviour string `json:"behaviour"`
	// Hint is one line on what the Reconciler must do for the check to pass.
	Hint string `json:"hint"`
	// Reread is the lesson section that explains the behaviour, as a path from
	// the repository root with an anchor, e.g.
	// "docs/lessons/02-sample-controller.md#7-events". In a lesson file an anchor
	// alone ("#7-events") means a section of the lesson's own doc.
	Reread string `json:"reread"`
	// StubFails is true when the stub Reconciler lacks the behaviour, so the
	// check must fail against it; `make test-checks` holds the suite to that.
	StubFails bool `json:"stubFails,omitempty"`
	// Exercise, when set, marks a check beyond the reference Reconciler: it runs
	// only when $EXERCISE selects this name (see the Exercise function). Its
	// test's name starts with ExerciseTestPrefix.
	Exercise string `json:"exercise,omitempty"`
	// Contracts are what the check relies on beyond its behaviour in plain words,
	// one sentence each: a label it selects Pods by, a status field it reads, an
	// event reason or log line it waits for, a verb the shipped role allows. A
	// learner's Reconciler that does the behaviour but breaks a contract fails the
	// check, so each must stand, word for word, as a list item ("- " and the
	// sentence) in the lesson's "Your own Reconciler" section: `make verify-docs`
	// fails otherwise, and `make check` prints them under a failing check.
	Contracts []string `json:"contracts,omitempty"`
	// KindOnly, when set, says why the check needs a kind cluster (say, a real
	// kubelet, which the local cluster's kwok nodes are not): on any other
	// cluster its test skips itself (SkipElsewhere) and make check prints one
	// line with this reason, neither a pass nor a failure.
	KindOnly string `json:"kindOnly,omitempty"`
	// LocalClusterOnly, when set, says why the check needs the kit's local
	// cluster (say, it plays by hand the part of a kubelet that a kind node
	// runs for real): on kind its test skips itself and make check prints one
	// line with this reason. A lesson whose checks all need it says so once,
	// Lesson.LocalClusterOnly, and make test-kind leaves it out.
	LocalClusterOnly string `json:"localClusterOnly,omitempty"`
}

// NotHere returns why the check does not run on the cluster the suites use,
// a kind cluster when onKind is true, else the local cluster (or any other):
// its LocalClusterOnly on kind, its KindOnly elsewhere; "" when it runs there.
func (c Check) NotHere(onKind bool) string {
	if onKind {
		return c.LocalClusterOnly
	}
	return c.KindOnly
}

// SkipElsewhere skips the test, with the reason its row of the suite's lesson
// file gives, when that row keeps it to a cluster other than the one the suite
// runs on (Check.KindOnly, Check.LocalClusterOnly; see OnKind). A check with
// either mark calls it first; make check holds it to that.
func SkipElsewhere(t testing.TB) {
	t.Helper()
	if suiteChecks == nil {
		t.Fatal("kittest.SkipElsewhere reads the suite's lesson file, which kittest.Suite.Run reads before the tests: call it from a suite's test")
	}
	top, _, _ := strings.Cut(t.Name(), "/")
	for _, c := range suiteChecks {
		if c.Test != t.Name() && c.Test != top {
			continue
		}
		onKind := OnKind()
		switch reason := c.NotHere(onKind); {
		case reason != "" && onKind:
			t.Skipf("runs on the local cluster only (lesson.yaml's localClusterOnly): %s", reason)
		case reason != "":
			t.Skipf("runs on kind only (lesson.yaml's kindOnly): %s; make kind-up, then the same command", reason)
		}
		return
	}
}

// Exercise skips the test unless $EXERCISE names exercise (alone or in a comma
// separated list). Checks of exercises that go beyond the reference Reconciler
// call it first, so they fail only for a learner who asked for them.
func Exercise(t testing.TB, exercise string) {
	t.Helper()
	for _, selected := range splitList(os.Getenv(ExerciseEnv)) {
		if selected == exercise {
			return
		}
	}
	t.Skipf("exercise check: run it with EXERCISE=%s (make check LESSON=%s EXERCISE=%s)", exercise, suiteLesson, exercise)
}

// File returns the path to read for the file at path: its replacement when the
// overlay named by $KIT_E2E_OVERLAY replaces it (a reference solution's RBAC
// or CRD), else path itself. path must be absolute, as overlay keys are. The
// error says why the overlay file cannot be read.
func File(path string) (string, error) {
	overlay, err := readOverlay()
	if err != nil {
		return "", err
	}
	if replacement, ok := overlay[path]; ok {
		return replacement, nil
	}
	return path, nil
}

// readOverlay reads the Replace map of the overlay file named by OverlayEnv;
// it is empty when the variable is unset.
func readOverlay() (map[string]string, error) {
	return readOverlayFile(os.Getenv(OverlayEnv))
}

// readOverlayFile reads the Replace map of the overlay file at path; it is
// empty when path is "".
func readOverlayFile(path string) (map[string]string, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the overlay %s (%s): %w", path, OverlayEnv, err)
	}
	var overlay struct{ Replace map[string]string }
	if err := json.Unmarshal(data, &overlay); err != nil {
		return nil, fmt.Errorf("%s=%s is not a go build overlay file: %w", OverlayEnv, path, err)
	}
	return overlay.Replace, nil
}

// splitList splits a comma-separated list, dropping empty entries.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' })
}
