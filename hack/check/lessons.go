package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/controller-kit/controller-kit/hack/kittest"
)

// lesson is one row of the table that everything in `make check` and in make
// test's lesson lanes reads: which tier a lesson's suite lives in, which lesson
// file its hints point into, and its exercises.
type lesson struct {
	// number is what LESSON= takes.
	number string
	// tier is the tier's folder at the repository root; its test/e2e holds the suite.
	tier string
	// main is the controller's main package, relative to the tier.
	main string
	// binary names the controller binary, as the suite's kittest.Suite does, so
	// make check's own build and the suite's share one cached binary.
	binary string
	// doc is the lesson file, from the repository root.
	doc string
	// suite is the folder of the lesson's check suite, relative to the tier;
	// empty means the tier's conformance suite, test/e2e.
	suite string
	// exercises go beyond the reference Reconciler; each has a reference solution.
	exercises []exercise
	// onlyExercises marks a lesson whose checks are all exercises, with no
	// Reconciler of its own to check: make check runs every exercise's check
	// unless EXERCISE or SOLUTION names one, its stub step holds them to their
	// StubFails marks, and it has no e2e step (lesson 0 adds flags to lesson
	// 1's tier, whose suite lesson 1 runs).
	onlyExercises bool
}

// suiteDir returns the folder of the lesson's check suite, relative to the tier.
func (l *lesson) suiteDir() string {
	if l.suite == "" {
		return "test/e2e"
	}
	return l.suite
}

// testBinary compiles the lesson's suite (go test -c -tags e2e) into the kit's
// cache of e2e binaries (kittest.CachedTestBinary) and returns its path; tierDir
// is the tier's absolute path. The error carries the compiler's output.
func (l *lesson) testBinary(tierDir string) (string, error) {
	return kittest.CachedTestBinary(filepath.Join(tierDir, l.suiteDir()), "e2e", "lesson"+l.number+".test")
}

// exerciseNames returns the names of the lesson's exercises, comma-separated,
// as EXERCISE= takes them.
func (l *lesson) exerciseNames() string {
	var names []string
	for _, e := range l.exercises {
		names = append(names, e.name)
	}
	return strings.Join(names, ",")
}

// exercise is one exercise of a lesson with a check of its own (skipped unless
// EXERCISE= names it) and a reference solution,
// docs/solutions/<lesson file name>/<name>.patch.
type exercise struct {
	// name is what EXERCISE= and SOLUTION= take.
	name string
	// reconciler is the name under which the solution registers a Reconciler of
	// its own in the tier's reconcilers map, or "" when the solution changes the
	// reference Reconciler itself. `make check SOLUTION=` checks that one.
	reconciler string
}

// lessons is the table. A new lesson or exercise is a new entry here (and its
// suite's check table); nothing else in the checker names one.
var lessons = []lesson{
	{number: "0", tier: "workqueue-example", main: ".", binary: "workqueue-example", suite: "test/lesson0", doc: "docs/lessons/00-reading-kubernetes.md",
		exercises: []exercise{{name: "profile"}, {name: "pprof"}}, onlyExercises: true},
	{number: "1", tier: "workqueue-example", main: ".", binary: "workqueue-example", doc: "docs/lessons/01-workqueue.md",
		exercises: []exercise{{name: "configmaps"}}},
	{number: "2", tier: "sample-controller", main: ".", binary: "sample-controller", doc: "docs/lessons/02-sample-controller.md",
		exercises: []exercise{{name: "service", reconciler: "solution-service"}}},
	{number: "3", tier: "kubebuilder-guestbook", main: "cmd", binary: "manager", doc: "docs/lessons/03-kubebuilder.md",
		exercises: []exercise{{name: "ready"}}},
}

// findLesson returns the lesson whose number is n, or an error listing the lessons.
func findLesson(n string) (*lesson, error) {
	i := slices.IndexFunc(lessons, func(l lesson) bool { return l.number == n })
	if i < 0 {
		var numbers []string
		for _, l := range lessons {
			numbers = append(numbers, l.number)
		}
		return nil, fmt.Errorf("LESSON=%q: want one of %s, e.g. make check LESSON=2 RECONCILER=stub", n, strings.Join(numbers, ", "))
	}
	return &lessons[i], nil
}

// exercise returns the lesson's exercise called name, or an error listing them.
func (l *lesson) exercise(name string) (*exercise, error) {
	i := slices.IndexFunc(l.exercises, func(e exercise) bool { return e.name == name })
	if i < 0 {
		var names []string
		for _, e := range l.exercises {
			names = append(names, e.name)
		}
		return nil, fmt.Errorf("lesson %s has no exercise %q; its exercises: %s", l.number, name, strings.Join(names, ", "))
	}
	return &l.exercises[i], nil
}
