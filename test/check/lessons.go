package main

import (
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
