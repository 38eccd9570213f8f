package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// lesson is one row of the lesson table: a suite's lesson file
// (<tier>/test/<suite>/lesson.yaml, see kittest.Lesson), which the suite embeds
// and this program reads. Nothing in the checker names a lesson or an exercise:
// a new lesson is a new file, a new check a new row in one.
type lesson = kittest.Lesson

// findLesson reads the lesson table of the repository at root and returns the
// lesson numbered n; the error names a lesson file that does not parse, or
// lists the numbers there are.
func findLesson(root, n string) (*lesson, error) {
	lessons, err := kittest.ReadLessons(root)
	if err != nil {
		return nil, err
	}
	return kittest.FindLesson(lessons, n)
}

// testBinary compiles the lesson's suite (go test -c -tags e2e) into the kit's
// cache of e2e binaries (kittest.CachedTestBinary) and returns its path; tierDir
// is the tier's absolute path. The error carries the compiler's output.
func testBinary(l *lesson, tierDir string) (string, error) {
	return kittest.CachedTestBinary(filepath.Join(tierDir, l.Suite), "e2e", "lesson"+l.Number+".test")
}

// lessonFilter is what `check -lessons` lists the lessons by, as the scripts
// ask: hack/test-lessons.sh the lessons of make test's lanes (-cluster shared),
// hack/test-lesson.sh whether a lesson has a cluster of its own (-cluster own
// -lesson N), hack/test-kind.sh those that run on kind (-kind), hack/test-all.sh
// the smokes (-smoke checks, -smoke commands).
type lessonFilter struct {
	// cluster, when set, is the Lesson.Cluster a lesson must have.
	cluster string
	// kind keeps only the lessons that run on kind (no LocalClusterOnly).
	kind bool
	// smoke, when set, keeps only the lessons whose smoke is made of "checks"
	// or of "commands".
	smoke string
}

// check says what is wrong with the filter's values, naming the flag.
func (f lessonFilter) check() error {
	if f.cluster != "" && f.cluster != kittest.ClusterShared && f.cluster != kittest.ClusterOwn {
		return fmt.Errorf("-cluster=%q: want %s or %s, as a lesson.yaml's cluster says", f.cluster, kittest.ClusterShared, kittest.ClusterOwn)
	}
	if f.smoke != "" && f.smoke != "checks" && f.smoke != "commands" {
		return fmt.Errorf("-smoke=%q: want checks or commands, what a lesson.yaml's smoke is made of", f.smoke)
	}
	return nil
}

// keeps reports whether the lesson passes the filter.
func (f lessonFilter) keeps(l *lesson) bool {
	switch {
	case f.cluster != "" && l.Cluster != f.cluster:
		return false
	case f.kind && l.LocalClusterOnly != "":
		return false
	case f.smoke == "checks":
		return l.Smoke != nil && len(l.Smoke.Checks) > 0
	case f.smoke == "commands":
		return l.Smoke != nil && len(l.Smoke.Commands) > 0
	}
	return true
}

// listLessons prints, one a line, the numbers of the lessons that pass the
// filter, for the scripts to read: a new lesson is a new lesson file, and no
// script lists the lessons. With only (a lesson's number) it prints that one
// and returns 0 when it passes, else 1. The error names a bad filter value, a
// lesson file that does not parse, or an only that is no lesson.
func listLessons(root, only string, f lessonFilter, w io.Writer) (int, error) {
	if err := f.check(); err != nil {
		return 0, err
	}
	lessons, err := kittest.ReadLessons(root)
	if err != nil {
		return 0, err
	}
	if only != "" {
		l, err := kittest.FindLesson(lessons, only)
		if err != nil {
			return 0, err
		}
		lessons = []*lesson{l}
	}
	code := 1
	for _, l := range lessons {
		if f.keeps(l) {
			fmt.Fprintln(w, l.Number)
			code = 0
		}
	}
	if only == "" {
		code = 0 // an empty list is an answer too
	}
	return code, nil
}

// kindOnlyHere returns the lesson's exercises that cannot run on the cluster
// the checks use, with the reason each gives (LessonExercise.KindOnly): those
// marked kind-only, unless onKind says the cluster is a kind cluster.
func kindOnlyHere(l *lesson, onKind func() bool) map[string]string {
	skipped := map[string]string{}
	for _, e := range l.Exercises {
		if e.KindOnly != "" {
			skipped[e.Name] = e.KindOnly
		}
	}
	if len(skipped) > 0 && onKind() {
		return map[string]string{}
	}
	return skipped
}

// onKind reports whether the cluster the suites use is a kind cluster
// (kittest.OnKind): there the kind-only exercises and checks run, and the
// checks marked localClusterOnly do not.
func onKind() bool {
	return kittest.OnKind()
}
