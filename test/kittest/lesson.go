package kittest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// LessonFile is the name of a lesson's file in its check suite's folder
// (<tier>/test/<suite>/lesson.yaml): the lesson table is these files and nothing
// else. The suite embeds its own (Suite.Lesson) and `make check` reads them all
// (ReadLessons), so both read the same rows and no program runs a test binary to
// learn what a suite checks. A new check is one row in the file plus its test; a
// new lesson is a new file beside its suite.
const LessonFile = "lesson.yaml"

// Lesson is one lesson of the table, as its lesson file states it.
type Lesson struct {
	// Number is what `make check LESSON=` takes, e.g. "2".
	Number string `json:"lesson"`
	// Main is the controller's main package, relative to the tier, e.g. "." or "cmd".
	Main string `json:"main"`
	// Binary names the controller binary, e.g. "sample-controller": make check's
	// build and the suite's share one cached binary of that name (CachedBinary).
	Binary string `json:"binary"`
	// Doc is the lesson's page, from the repository root, e.g.
	// "docs/lessons/02-sample-controller.md".
	Doc string `json:"doc"`
	// Exercises go beyond the reference Reconciler; each has a check of its own
	// and a reference solution, docs/solutions/<Doc's name>/<name>.patch.
	Exercises []LessonExercise `json:"exercises,omitempty"`
	// OnlyExercises marks a lesson whose checks are all exercises, with no
	// Reconciler of its own to check: make check runs every exercise's check
	// unless EXERCISE or SOLUTION names one, its stub step holds them to their
	// StubFails marks, and it has no e2e step (lesson 0 adds flags to lesson 1's
	// tier, whose suite lesson 1 runs).
	OnlyExercises bool `json:"onlyExercises,omitempty"`
	// KubeSource marks a lesson whose exercises change the learner's copy of
	// Kubernetes' own source (make kube-src, hack/kube-src.sh) instead of a tier:
	// its file lies in test/<suite>/, it has no controller of the kit to build
	// (Main and Binary stay empty), and its solutions are patches to that copy,
	// docs/solutions/<Doc's name>/kubernetes/<name>.patch, which the suite applies
	// to a copy of its own (KubeSolutionEnv), never to the kit's tree.
	KubeSource bool `json:"kubeSource,omitempty"`
	// Checks are the suite's checks, one per test, exercises' checks included.
	Checks []Check `json:"checks"`

	// Tier is the tier's folder at the repository root and Suite the suite's
	// folder relative to the tier, e.g. "sample-controller" and "test/e2e": where
	// the lesson file lies says them, so the file does not.
	Tier  string `json:"-"`
	Suite string `json:"-"`
}

// LessonExercise is one exercise of a lesson.
type LessonExercise struct {
	// Name is what EXERCISE= and SOLUTION= take, e.g. "service".
	Name string `json:"name"`
	// Reconciler is the name under which the solution registers a Reconciler of
	// its own in the tier's reconcilers map, or "" when the solution changes the
	// reference Reconciler itself. `make check SOLUTION=` checks that one.
	Reconciler string `json:"reconciler,omitempty"`
}

// ParseLesson reads a lesson file's content; dir is the suite's folder relative
// to the repository root (slash-separated, e.g. "sample-controller/test/e2e"),
// which gives Tier and Suite. An anchor-only Reread ("#7-events") is made a path
// into Doc. The error names the file and the field at fault: an unknown field, a
// missing number, main, binary or doc, a check without a test, behaviour, hint or
// reread, a test named twice, or an exercise mark that names no exercise.
func ParseLesson(data []byte, dir string) (*Lesson, error) {
	source := dir + "/" + LessonFile
	var l Lesson
	if err := yaml.UnmarshalStrict(data, &l); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	tier, suite, ok := strings.Cut(filepath.ToSlash(dir), "/")
	if !ok || tier == "" || suite == "" {
		return nil, fmt.Errorf("%s: a lesson file lies in its suite's folder inside a tier, <tier>/test/<suite>/%s", source, LessonFile)
	}
	l.Tier, l.Suite = tier, suite
	required := map[string]string{"lesson": l.Number, "main": l.Main, "binary": l.Binary, "doc": l.Doc}
	if l.KubeSource {
		if tier != "test" {
			return nil, fmt.Errorf("%s: a kubeSource lesson checks no tier; its file lies in test/<suite>/%s", source, LessonFile)
		}
		if l.Main != "" || l.Binary != "" {
			return nil, fmt.Errorf("%s: a kubeSource lesson builds no controller of the kit; leave out main and binary", source)
		}
		delete(required, "main")
		delete(required, "binary")
	}
	var missing []string
	for field, value := range required {
		if value == "" {
			missing = append(missing, field)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("%s: %s missing; every lesson file states lesson, main, binary and doc (a kubeSource lesson: lesson and doc)", source, strings.Join(missing, ", "))
	}
	seen := map[string]bool{}
	for i := range l.Checks {
		c := &l.Checks[i]
		where := fmt.Sprintf("%s: checks[%d] (%s)", source, i, c.Test)
		switch {
		case c.Test == "" || c.Behaviour == "" || c.Hint == "" || c.Reread == "":
			return nil, fmt.Errorf("%s: every check states test, behaviour, hint and reread", where)
		case seen[c.Test]:
			return nil, fmt.Errorf("%s: test %s has a row already; one row per test", where, c.Test)
		case c.Exercise != "" && l.exercise(c.Exercise) == nil:
			return nil, fmt.Errorf("%s: exercise %q is not one of the lesson's exercises (%s)", where, c.Exercise, l.ExerciseNames())
		}
		seen[c.Test] = true
		if strings.HasPrefix(c.Reread, "#") {
			c.Reread = l.Doc + c.Reread
		}
	}
	return &l, nil
}

// ReadLessons reads every lesson file of the repository at root
// (<tier>/test/*/lesson.yaml, and test/*/lesson.yaml for the lessons that change
// Kubernetes' own source) and returns the lessons by number. The error names
// a file that does not parse (ParseLesson) or two files with one number.
func ReadLessons(root string) ([]*Lesson, error) {
	paths, err := filepath.Glob(filepath.Join(root, "*", "test", "*", LessonFile))
	if err != nil {
		return nil, err
	}
	kubeSource, err := filepath.Glob(filepath.Join(root, "test", "*", LessonFile))
	if err != nil {
		return nil, err
	}
	paths = append(paths, kubeSource...)
	if len(paths) == 0 {
		return nil, fmt.Errorf("no lesson file (<tier>/test/<suite>/%s) under %s: -root must be the repository root", LessonFile, root)
	}
	var lessons []*Lesson
	byNumber := map[string]string{}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		dir, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return nil, err
		}
		l, err := ParseLesson(data, filepath.ToSlash(dir))
		if err != nil {
			return nil, err
		}
		if other, ok := byNumber[l.Number]; ok {
			return nil, fmt.Errorf("%s and %s both say lesson: %q; each lesson has one file", other, path, l.Number)
		}
		byNumber[l.Number] = path
		lessons = append(lessons, l)
	}
	slices.SortFunc(lessons, func(a, b *Lesson) int { return strings.Compare(a.Number, b.Number) })
	return lessons, nil
}

// FindLesson returns the lesson numbered n, or an error listing the numbers there are.
func FindLesson(lessons []*Lesson, n string) (*Lesson, error) {
	for _, l := range lessons {
		if l.Number == n {
			return l, nil
		}
	}
	var numbers []string
	for _, l := range lessons {
		numbers = append(numbers, l.Number)
	}
	return nil, fmt.Errorf("LESSON=%q: want one of %s, e.g. make check LESSON=2 RECONCILER=stub", n, strings.Join(numbers, ", "))
}

// Exercise returns the lesson's exercise called name, or an error listing them.
func (l *Lesson) Exercise(name string) (*LessonExercise, error) {
	if e := l.exercise(name); e != nil {
		return e, nil
	}
	return nil, fmt.Errorf("lesson %s has no exercise %q; its exercises: %s", l.Number, name, l.ExerciseNames())
}

// exercise returns the exercise called name, or nil.
func (l *Lesson) exercise(name string) *LessonExercise {
	i := slices.IndexFunc(l.Exercises, func(e LessonExercise) bool { return e.Name == name })
	if i < 0 {
		return nil
	}
	return &l.Exercises[i]
}

// ExerciseNames returns the names of the lesson's exercises, comma-separated, as
// EXERCISE= takes them.
func (l *Lesson) ExerciseNames() string {
	var names []string
	for _, e := range l.Exercises {
		names = append(names, e.Name)
	}
	return strings.Join(names, ",")
}

// errNoLessonFile is what lessonHere returns when the working directory is not a
// suite's folder with a lesson file.
var errNoLessonFile = errors.New("no " + LessonFile + " in the suite's folder")

// lessonHere parses data as the lesson file of the suite whose folder is the
// working directory (go test runs a test binary there), under the repository
// root.
func lessonHere(data []byte) (*Lesson, string, error) {
	if len(data) == 0 {
		return nil, "", errNoLessonFile
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, "", err
	}
	root, err := rootAbove(wd)
	if err != nil {
		return nil, "", err
	}
	dir, err := filepath.Rel(root, wd)
	if err != nil {
		return nil, "", err
	}
	l, err := ParseLesson(data, filepath.ToSlash(dir))
	return l, root, err
}
