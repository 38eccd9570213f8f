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
	// it has no controller of the kit to build (Main and Binary stay empty; its
	// file lies in test/<suite>/, as lesson 4's, or in the suite of a room that
	// is no tier, as lesson 6's apiserver-example/test/e2e), and its solutions
	// are patches to that copy, docs/solutions/<Doc's name>/kubernetes/<name>.patch,
	// which the suite applies to a copy of its own (KubeSolutionEnv), never to
	// the kit's tree.
	KubeSource bool `json:"kubeSource,omitempty"`
	// Checks are the suite's checks, one per test, exercises' checks included.
	Checks []Check `json:"checks"`

	// How the lesson runs, which the runners read from here (the grader's
	// `check -lessons` lists the lessons by these for the scripts).

	// Cluster says where the lesson's checks run: ClusterShared ("shared"), on
	// make test's clusters, in one lane per lesson beside the other lessons'
	// (hack/test-lessons.sh); or ClusterOwn ("own"), on a fresh local cluster of
	// the lesson's own (make test-lessonN, hack/test-lesson.sh), for checks that
	// would disturb, or be disturbed by, another lesson's; make test then runs
	// only the lesson's Smoke.
	Cluster string `json:"cluster"`
	// OneAtATime marks a suite whose checks must not run side by side, since its
	// controller answers every object of a kind in the cluster whatever the
	// namespace: the suite (Suite.Run) and make check run its tests one at a
	// time, whatever go test's -parallel says. Unset, independent tests run in
	// parallel (t.Parallel).
	OneAtATime bool `json:"oneAtATime,omitempty"`
	// LocalClusterOnly, when set, says why the lesson's checks need the kit's
	// local cluster (say, they swap one of its components): make test-kind
	// leaves the lesson out. Unset, the lesson runs on kind too, but for the
	// checks that say so themselves (Check.LocalClusterOnly, Check.KindOnly).
	LocalClusterOnly string `json:"localClusterOnly,omitempty"`
	// Smoke is what make test runs of a lesson with a cluster of its own; only
	// such a lesson has one, and it must.
	Smoke *LessonSmoke `json:"smoke,omitempty"`
	// Bins are the pinned programs beside the cluster's that the lesson's smoke
	// runs (and so every run of its checks), as hack/build-bins.sh names them
	// (such as csi-provisioner); a program only one check runs is that check's
	// to build, so make test never builds it. The lane
	// step build (`check -lesson N -lane build`) builds them with the lesson's
	// controller and suite, which make test and make test-lessonN start as soon
	// as bin/'s cluster binaries are there, before the lesson's checks need them.
	Bins []string `json:"bins,omitempty"`

	// Reading is what make verify-docs' reading-path checker
	// (hack/check-reading-paths.sh, through `check -reading-pages`) holds to the
	// pinned modules in the lesson's page, for a lesson that quotes upstream
	// code by path: so a new lesson's tables are checked without an edit of the
	// script.
	Reading *LessonReading `json:"reading,omitempty"`

	// Debug are the processes of the lesson that make debug WHAT=NAME runs
	// under delve (hack/debug.sh), each on a port of its own: the lesson files'
	// entries are the one list of them, which make help, hack/debug.sh and
	// .vscode/launch.json (written by make generate, held to them by make
	// verify-docs) read.
	Debug []LessonDebug `json:"debug,omitempty"`

	// Tier is the tier's folder at the repository root and Suite the suite's
	// folder relative to the tier, e.g. "sample-controller" and "test/e2e": where
	// the lesson file lies says them, so the file does not.
	Tier  string `json:"-"`
	Suite string `json:"-"`
}

// The values of Lesson.Cluster.
const (
	// ClusterShared: the lesson's checks run on make test's clusters beside the
	// other lessons'.
	ClusterShared = "shared"
	// ClusterOwn: the lesson's checks run on a fresh local cluster of their own
	// (make test-lessonN); make test runs the lesson's Smoke.
	ClusterOwn = "own"
)

// LessonSmoke is what make test (hack/test-all.sh) runs of a lesson with a
// cluster of its own, a few seconds' proof that it still works: either some of
// its checks or some commands, not both. `check -lesson N -lane smoke` runs it.
type LessonSmoke struct {
	// Checks are tests of the lesson's suite (each one of its Checks, none an
	// exercise's), run with the reference on make test's e2e cluster beside the
	// other lessons' suites: they must make nothing those would see.
	Checks []string `json:"checks,omitempty"`
	// Commands run in make test beside its other jobs, with no cluster, one
	// after another from the repository root: each a program of the kit and its
	// arguments, separated by spaces (no shell), e.g. "hack/kube-src.sh smoke".
	Commands []string `json:"commands,omitempty"`
}

// LessonDebug is one name make debug WHAT= takes: a process of the lesson run
// under delve on 127.0.0.1.
type LessonDebug struct {
	// Name is what WHAT= takes, e.g. "sample-controller" or "kube-apiserver".
	Name string `json:"name"`
	// Port is delve's default port (PORT= chooses another), which no other
	// entry of any lesson has, so that several can be debugged at once; VS
	// Code's "attach: NAME" attaches to it. Once given, a port never moves:
	// learners' editors keep it.
	Port int `json:"port"`
	// Start says how make debug starts the process: DebugComponent
	// ("component"), a component of the local cluster swapped for a debug
	// build of it under delve, as make kube-restart swaps one; DebugController
	// ("controller"), the lesson's tier's controller, run the way its make run
	// runs it with delve in $(CONTROLLER), built with optimisation off
	// everywhere; or the path, from the repository root, of a script in the
	// lesson's own folder that starts it, run as `SCRIPT debug NAME` and
	// `SCRIPT undebug NAME` with PORT, PKGS, DEBUG_ARGS and DEBUG_BREAKPOINT
	// in its environment (it sources hack/lib.sh and hack/lib/debug.sh).
	Start string `json:"start"`
	// Packages, for a build from Kubernetes' own source (the learner's copy,
	// else the pinned module), are the packages compiled with optimisation
	// off unless PKGS= names others, separated by spaces, e.g.
	// "./pkg/controller/...". Such an entry also gets the VS Code
	// configuration "attach: NAME (your copy, _output/kubernetes)". Empty: a
	// build of the kit's code or a pinned module's, optimisation off
	// everywhere.
	Packages string `json:"packages,omitempty"`
	// Args are flags added to the process's own while it is debugged, e.g.
	// "--leader-elect=false": a process paused at a breakpoint would lose its
	// Lease and exit.
	Args string `json:"args,omitempty"`
	// Breakpoint is an example of delve commands that make debug prints with
	// how to attach, e.g. 'break sync PKG.(*T).F; condition sync key == "default/NAME"'.
	Breakpoint string `json:"breakpoint,omitempty"`
}

// The built-in values of LessonDebug.Start (any other is a script's path).
const (
	// DebugComponent swaps a component of the local cluster for a debug build.
	DebugComponent = "component"
	// DebugController runs the lesson's tier's controller under delve.
	DebugController = "controller"
)

// LessonReading names the parts of a lesson's page that quote upstream code by
// path, which hack/check-reading-paths.sh holds to the module cache at the
// kit's pins.
type LessonReading struct {
	// Sections are the headings of the sections whose tables' path rows
	// (| `path` | `name`, `name` | text |) are checked, each written as the page
	// writes it after "## ", up to its anchor (e.g. "2. The request's path"): the
	// path exists at the pinned version and declares each name. "*" checks
	// every table of the page.
	Sections []string `json:"sections,omitempty"`
	// Mentions says which backquoted paths of the page's text, outside code
	// blocks, must exist too: ReadingUpstream ("upstream") those written
	// $K/... (k8s.io/kubernetes) or staging/src/k8s.io/...; ReadingAll ("all")
	// also $M/NAME@VERSION/..., cmd/..., pkg/... and paths in the kit's tiers.
	// Empty: none.
	Mentions string `json:"mentions,omitempty"`
}

// The values of LessonReading.Mentions.
const (
	// ReadingUpstream checks the paths into Kubernetes' module and its staging
	// modules that the text mentions.
	ReadingUpstream = "upstream"
	// ReadingAll checks those and the paths into the kit's tiers.
	ReadingAll = "all"
)

// LessonExercise is one exercise of a lesson.
type LessonExercise struct {
	// Name is what EXERCISE= and SOLUTION= take, e.g. "service".
	Name string `json:"name"`
	// Reconciler is the name under which the solution registers a Reconciler of
	// its own in the tier's reconcilers map, or "" when the solution changes the
	// reference Reconciler itself. `make check SOLUTION=` checks that one.
	Reconciler string `json:"reconciler,omitempty"`
	// KindOnly, when set, says why the exercise's checks need a kind cluster
	// (say, a real kubelet, which the local cluster's kwok nodes are not): the
	// runners skip the exercise on the local cluster and print this reason.
	KindOnly string `json:"kindOnly,omitempty"`
}

// ParseLesson reads a lesson file's content; dir is the suite's folder relative
// to the repository root (slash-separated, e.g. "sample-controller/test/e2e"),
// which gives Tier and Suite. An anchor-only Reread ("#7-events") is made a path
// into Doc. The error names the file and the field at fault, and the fix: an
// unknown field, a missing number, main, binary, doc or cluster, a check without
// a test, behaviour, hint or reread, a test named twice, an exercise mark that
// names no exercise, or a way of running that does not hold together (see
// Cluster, Smoke, LocalClusterOnly and KindOnly, the lesson's, an exercise's
// and a check's).
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
	for _, check := range []func() error{l.checkRequired, l.checkRows, l.checkHowItRuns} {
		if err := check(); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
	}
	return &l, nil
}

// checkRequired says which of the fields every lesson file states is missing
// (a kubeSource lesson builds no controller: it states neither main nor binary).
func (l *Lesson) checkRequired() error {
	required := map[string]string{"lesson": l.Number, "main": l.Main, "binary": l.Binary, "doc": l.Doc, "cluster": l.Cluster}
	if l.KubeSource {
		if l.Main != "" || l.Binary != "" {
			return errors.New("a kubeSource lesson builds no controller of the kit; leave out main and binary")
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
		return fmt.Errorf("%s missing; every lesson file states lesson, main, binary, doc and cluster (a kubeSource lesson: lesson, doc and cluster)", strings.Join(missing, ", "))
	}
	return nil
}

// checkRows checks the rows of Checks (each complete, one per test, an exercise
// mark naming an exercise, at most one cluster mark, none that the lesson's own
// localClusterOnly contradicts or repeats) and makes an anchor-only Reread a
// path into Doc.
// ExerciseTestPrefix begins the name of every exercise's check (Check.Exercise),
// so that `-run ExerciseTestPrefix` selects the exercises' checks and no other.
const ExerciseTestPrefix = "TestExercise"

func (l *Lesson) checkRows() error {
	seen := map[string]bool{}
	for i := range l.Checks {
		c := &l.Checks[i]
		where := fmt.Sprintf("checks[%d] (%s)", i, c.Test)
		switch {
		case c.Test == "" || c.Behaviour == "" || c.Hint == "" || c.Reread == "":
			return fmt.Errorf("%s: every check states test, behaviour, hint and reread", where)
		case seen[c.Test]:
			return fmt.Errorf("%s: test %s has a row already; one row per test", where, c.Test)
		case c.Exercise != "" && l.exercise(c.Exercise) == nil:
			return fmt.Errorf("%s: exercise %q is not one of the lesson's exercises (%s)", where, c.Exercise, l.ExerciseNames())
		case c.Exercise != "" && !strings.HasPrefix(c.Test, ExerciseTestPrefix):
			return fmt.Errorf("%s: a check of exercise %s is a test named %s...; rename the test (make test runs the exercises' checks by that prefix)", where, c.Exercise, ExerciseTestPrefix)
		case c.KindOnly != "" && c.LocalClusterOnly != "":
			return fmt.Errorf("%s: kindOnly (%s) and localClusterOnly (%s): no cluster could run it; drop one of the two", where, c.KindOnly, c.LocalClusterOnly)
		case c.KindOnly != "" && l.LocalClusterOnly != "":
			return fmt.Errorf("%s: kindOnly, but the lesson says localClusterOnly (%s), so make test-kind never runs it: drop the lesson's localClusterOnly and mark the checks that need the local cluster one by one", where, l.LocalClusterOnly)
		case c.LocalClusterOnly != "" && l.LocalClusterOnly != "":
			return fmt.Errorf("%s: localClusterOnly, which the lesson says of every check already (%s); drop the check's", where, l.LocalClusterOnly)
		}
		seen[c.Test] = true
		if strings.HasPrefix(c.Reread, "#") {
			c.Reread = l.Doc + c.Reread
		}
	}
	return nil
}

// checkHowItRuns checks the fields that say how the lesson runs: a known
// Cluster, a Smoke exactly when the lesson has a cluster of its own, its checks
// rows of the table, Debug entries complete, each with a name and a port of its
// own and a known start (a script's lies in the lesson's folder), a Reading
// that names something and no exercise marked kind-only in a lesson that runs on
// the local cluster only.
func (l *Lesson) checkHowItRuns() error {
	switch l.Cluster {
	case ClusterShared:
		if l.Smoke != nil {
			return fmt.Errorf("smoke: a lesson with cluster: %s runs in full in make test, so it has no smoke; leave smoke out, or say cluster: %s", ClusterShared, ClusterOwn)
		}
	case ClusterOwn:
		if err := l.checkSmoke(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("cluster: %q: want %s (its checks run on make test's clusters beside the other lessons') or %s (on a fresh local cluster of their own, make test-lesson%s; make test runs its smoke)",
			l.Cluster, ClusterShared, ClusterOwn, l.Number)
	}
	for i, d := range l.Debug {
		where := fmt.Sprintf("debug[%d] (%s)", i, d.Name)
		twin := slices.IndexFunc(l.Debug[:i], func(o LessonDebug) bool { return o.Name == d.Name || o.Port == d.Port })
		switch {
		case twin >= 0:
			return fmt.Errorf("%s: debug[%d] has its name or its port (%d) already; each name and each port is one entry's", where, twin, d.Port)
		case d.Name == "" || d.Start == "":
			return fmt.Errorf("%s: every debug entry states name, port and start", where)
		case d.Port < 1024 || d.Port > 65535:
			return fmt.Errorf("%s: port %d is outside 1024-65535; give it the next port no lesson has", where, d.Port)
		case d.Start == DebugController && l.KubeSource:
			return fmt.Errorf("%s: start: %s runs the lesson's tier's controller, and a kubeSource lesson has none; say %s or name a script of the lesson's folder", where, DebugController, DebugComponent)
		case d.Start != DebugComponent && d.Start != DebugController && !strings.HasPrefix(d.Start, l.Tier+"/"):
			return fmt.Errorf("%s: start: %q: want %s, %s, or the path of a script in the lesson's own folder, %s/...", where, d.Start, DebugComponent, DebugController, l.Tier)
		}
	}
	if r := l.Reading; r != nil {
		if len(r.Sections) == 0 && r.Mentions == "" {
			return errors.New("reading: names neither sections nor mentions; leave it out, or name the sections whose tables quote upstream paths")
		}
		if r.Mentions != "" && r.Mentions != ReadingUpstream && r.Mentions != ReadingAll {
			return fmt.Errorf("reading.mentions: %q: want %s (the $K/... and staging/src/k8s.io/... paths of the text) or %s (also $M/..., cmd/, pkg/ and the kit's tiers' paths)", r.Mentions, ReadingUpstream, ReadingAll)
		}
		for i, s := range r.Sections {
			if strings.TrimSpace(s) == "" {
				return fmt.Errorf("reading.sections[%d] is empty; write a heading of %s as it reads after \"## \", or \"*\" for every table", i, l.Doc)
			}
		}
	}
	for i, b := range l.Bins {
		if b == "" || strings.ContainsAny(b, " \t/") {
			return fmt.Errorf("bins[%d]: %q: want a program's name as hack/build-bins.sh takes it, such as csi-provisioner", i, b)
		}
	}
	for _, e := range l.Exercises {
		if e.KindOnly != "" && l.LocalClusterOnly != "" {
			return fmt.Errorf("exercises: %s: kindOnly, but the lesson says localClusterOnly (%s): no cluster could run it; drop one of the two", e.Name, l.LocalClusterOnly)
		}
	}
	return nil
}

// checkSmoke checks the smoke of a lesson with a cluster of its own: checks or
// commands, not both nor neither, each check a row of the table that is no
// exercise's (a smoke runs the reference) nor kind-only (make test runs it on
// the local cluster), each command not empty.
func (l *Lesson) checkSmoke() error {
	s := l.Smoke
	if s == nil || (len(s.Checks) == 0) == (len(s.Commands) == 0) {
		return fmt.Errorf("smoke: a lesson with cluster: %s states what make test runs of it: smoke.checks (tests of its suite, run on make test's e2e cluster) or smoke.commands (programs run with no cluster), one of the two", ClusterOwn)
	}
	for i, name := range s.Checks {
		j := slices.IndexFunc(l.Checks, func(c Check) bool { return c.Test == name })
		switch {
		case j < 0:
			return fmt.Errorf("smoke.checks[%d]: %q is no test of the lesson's checks; name one of its rows' tests", i, name)
		case l.Checks[j].Exercise != "":
			return fmt.Errorf("smoke.checks[%d]: %s is a check of exercise %s, which the reference lacks; a smoke runs the reference, so name another", i, name, l.Checks[j].Exercise)
		case l.Checks[j].KindOnly != "":
			return fmt.Errorf("smoke.checks[%d]: %s runs on kind only (its kindOnly), and make test runs the smoke on the local cluster; name another", i, name)
		}
	}
	for i, command := range s.Commands {
		if strings.TrimSpace(command) == "" {
			return fmt.Errorf("smoke.commands[%d] is empty; write a program of the kit and its arguments, such as hack/kube-src.sh smoke", i)
		}
	}
	return nil
}

// ReadLessons reads every lesson file of the repository at root
// (<tier>/test/*/lesson.yaml, and test/*/lesson.yaml for the lessons that change
// Kubernetes' own source) and returns the lessons by number. The error names
// a file that does not parse (ParseLesson), a smoke command whose program is
// not in the repository, or two files with one number.
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
		if err := l.smokeCommandsExist(root); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for _, d := range l.Debug {
			if d.Start != DebugComponent && d.Start != DebugController {
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(d.Start))); err != nil {
					return nil, fmt.Errorf("%s: debug: %s: start: %s is no file of the kit; name the script by its path from the repository root", path, d.Name, d.Start)
				}
			}
			for _, other := range lessons {
				for _, o := range other.Debug {
					if o.Name == d.Name || o.Port == d.Port {
						return nil, fmt.Errorf("%s: debug: %s on port %d, and lesson %s's lesson file has %s on port %d: each name and each port is one entry's; take the next free port", path, d.Name, d.Port, other.Number, o.Name, o.Port)
					}
				}
			}
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

// smokeCommandsExist checks that each smoke command's program is a file of the
// repository at root.
func (l *Lesson) smokeCommandsExist(root string) error {
	if l.Smoke == nil {
		return nil
	}
	for i, command := range l.Smoke.Commands {
		program := strings.Fields(command)[0]
		if _, err := os.Stat(filepath.Join(root, program)); err != nil {
			return fmt.Errorf("smoke.commands[%d]: %s is no file of the kit; name a program by its path from the repository root, such as hack/kube-src.sh", i, program)
		}
	}
	return nil
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
