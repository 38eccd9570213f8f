// Command check runs one lesson's conformance suite (its tier's e2e tests)
// against the Reconciler you choose and prints one line per behaviour: PASS or
// FAIL, the behaviour in plain words and, for a failure, a hint and the lesson
// section to reread. `make check LESSON=2 RECONCILER=stub` at the repository root
// runs it; see `make help`.
//
//	check -lesson 2 -reconciler stub
//	check -lesson 2 -reconciler mine           # your own, registered in the tier
//	check -lesson 2 -exercise service -solution service
//	check -lesson 2 -reconciler stub -expect-stub   # what `make test-checks` runs
//
// How it works: it runs `go test -tags e2e -json ./test/e2e/...` in the tier
// with RECONCILER set (the suites pass it to the controller's --reconciler
// flag), reads each test's outcome from the JSON stream, and matches it with the
// check table the suite writes (each tier's test/e2e/checks_test.go, written to
// the file named by $KIT_CHECKS_OUT). With -solution it applies the patch
// docs/solutions/<lesson>/<name>.patch to copies of the files it changes and
// builds the tier with those copies laid over it (a `go build -overlay`), so the
// reference solutions never change the tier's own files.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// lessons maps a lesson number to its tier folder and its lesson file.
var lessons = map[string]struct{ tier, doc string }{
	"1": {"workqueue-example", "docs/lessons/01-workqueue.md"},
	"2": {"sample-controller", "docs/lessons/02-sample-controller.md"},
	"3": {"kubebuilder-guestbook", "docs/lessons/03-kubebuilder.md"},
}

// check mirrors kittest.Check, the suites' table entry (decoded from JSON, so
// this command needs nothing but the standard library).
type check struct {
	Test      string `json:"test"`
	Behaviour string `json:"behaviour"`
	Hint      string `json:"hint"`
	Reread    string `json:"reread"`
	StubFails bool   `json:"stubFails"`
	Exercise  string `json:"exercise"`
}

// testEvent is one line of `go test -json` (cmd/test2json's TestEvent).
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

type options struct {
	root, lesson, reconciler, exercise, solution, timeout, run string
	expectStub, verbose                                        bool
}

func main() {
	var o options
	flag.StringVar(&o.root, "root", ".", "the repository root (holds go.work)")
	flag.StringVar(&o.lesson, "lesson", "", "the lesson to check: 1, 2 or 3")
	flag.StringVar(&o.reconciler, "reconciler", "reference", "the Reconciler to check: stub, reference, or a name you registered in the tier")
	flag.StringVar(&o.exercise, "exercise", "", "also run the checks of this exercise beyond the reference (see the lesson's Exercises)")
	flag.StringVar(&o.solution, "solution", "", "build the tier with the reference solution docs/solutions/<lesson>/<name>.patch applied (to copies; the tier is not changed)")
	flag.StringVar(&o.timeout, "timeout", "30s", "how long each wait of a check may take (the suites' own default is 90-120 s)")
	flag.StringVar(&o.run, "run", "", "run only the checks whose test names match this regular expression (go test -run)")
	flag.BoolVar(&o.expectStub, "expect-stub", false, "for make test-checks: succeed only when exactly the checks marked StubFails fail")
	flag.BoolVar(&o.verbose, "v", false, "print the full output of failed checks")
	flag.Parse()
	code, err := run(o, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "check:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

// run runs the suite and prints the report to w. It returns the exit code (0 when
// every check that ran passed, or with -expect-stub when the stub failed exactly
// the expected checks) and an error when the suite could not be run at all.
func run(o options, w io.Writer) (int, error) {
	lesson, ok := lessons[o.lesson]
	if !ok {
		return 0, fmt.Errorf("-lesson=%q: want 1, 2 or 3 (make check LESSON=2)", o.lesson)
	}
	root, err := filepath.Abs(o.root)
	if err != nil {
		return 0, err
	}
	tierDir := filepath.Join(root, lesson.tier)
	tmp, err := os.MkdirTemp("", "kit-check-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)

	var patch, patchPath string
	if o.solution != "" {
		if patchPath, patch, err = readSolution(root, lesson.doc, o.solution); err != nil {
			return 0, err
		}
		// A solution that registers a Reconciler of its own ("solution-<name>")
		// is checked with that one unless another was asked for: the reference
		// would only show that the reference lacks the exercise.
		if own := "solution-" + o.solution; o.reconciler == "reference" && strings.Contains(patch, `+	"`+own+`"`) {
			fmt.Fprintf(w, "The solution registers its own Reconciler, %s: checking that one (RECONCILER=%s).\n", own, own)
			o.reconciler = own
		}
	}
	env := append(os.Environ(),
		"RECONCILER="+o.reconciler,
		"KIT_E2E_TIMEOUT="+o.timeout,
		"KIT_CHECKS_OUT="+filepath.Join(tmp, "checks.json"),
	)
	what := "Reconciler " + o.reconciler
	if o.solution != "" && o.exercise == "" {
		o.exercise = o.solution // a solution is checked with its exercise's checks
	}
	if o.solution != "" {
		overlay, err := writeOverlay(root, patchPath, patch, tmp)
		if err != nil {
			return 0, err
		}
		env = append(env, "KIT_E2E_OVERLAY="+overlay)
		what += ", solution " + o.solution
	}
	if o.exercise != "" {
		what += ", exercise " + o.exercise
	}
	env = append(env, "EXERCISE="+o.exercise)
	fmt.Fprintf(w, "Checking lesson %s (%s) with %s; each wait gives up after %s.\n", o.lesson, lesson.tier, what, o.timeout)

	start := time.Now()
	// -parallel: the suites run their independent tests in parallel (t.Parallel),
	// and go test would otherwise run only as many at once as there are CPUs.
	args := []string{"test", "-tags", "e2e", "-count=1", "-json", "-timeout", "30m", "-parallel", "16"}
	if o.run != "" {
		args = append(args, "-run", o.run)
	}
	cmd := exec.Command("go", append(args, "./test/e2e/...")...)
	cmd.Dir, cmd.Env = tierDir, env
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting go test in %s: %w", tierDir, err)
	}
	results, pkgOutput := readEvents(stdout, w)
	waitErr := cmd.Wait()

	checks, err := readChecks(filepath.Join(tmp, "checks.json"))
	if err != nil {
		fmt.Fprintf(w, "\nThe suite did not start:\n%s\n", tail(pkgOutput, 30))
		return 1, nil
	}
	fmt.Fprintln(w)
	if len(results) == 0 && waitErr != nil {
		// TestMain stopped before any test: a build error, an unknown
		// RECONCILER, a cluster that refused the CRD. Its own words say which.
		fmt.Fprintf(w, "No check ran. The suite's output ends with:\n%s\n", tail(pkgOutput, 30))
		fmt.Fprintf(w, "(%s)\n", time.Since(start).Round(time.Second))
		return 1, nil
	}
	code := report(w, root, checks, results, o)
	fmt.Fprintf(w, "(%s)\n", time.Since(start).Round(time.Second))
	return code, nil
}

// readEvents reads the `go test -json` stream, printing a dot per finished test
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

// report prints one line per check, in the table's order, then the tests the
// table does not describe, and a summary; it returns the exit code.
func report(w io.Writer, root string, checks []check, results map[string]*result, o options) int {
	passed, failed, problems := 0, 0, []string{}
	described := map[string]bool{}
	for _, c := range checks {
		described[c.Test] = true
		if err := sectionExists(root, c.Reread); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", c.Test, err))
		}
		status := outcome(c.Test, results)
		switch status {
		case "pass":
			passed++
			fmt.Fprintf(w, "PASS  %s\n", c.Behaviour)
		case "fail":
			failed++
			fmt.Fprintf(w, "FAIL  %s\n      hint:   %s\n      reread: %s\n", c.Behaviour, c.Hint, c.Reread)
			for _, line := range failureLines(results[c.Test], o.verbose) {
				fmt.Fprintf(w, "      | %s\n", line)
			}
		case "skip":
			if c.Exercise != "" {
				fmt.Fprintf(w, "skip  exercise %s (EXERCISE=%s runs it)\n", c.Exercise, c.Exercise)
			} else {
				fmt.Fprintf(w, "skip  %s\n", c.Behaviour)
			}
		case "":
			if o.run != "" {
				continue // not selected by -run
			}
			failed++
			fmt.Fprintf(w, "FAIL  %s (did not run to the end)\n      reread: %s\n", c.Behaviour, c.Reread)
		}
		if o.expectStub && status == "" {
			problems = append(problems, fmt.Sprintf("%s: no such test ran (is the table entry's name right?)", c.Test))
		} else if o.expectStub && c.Exercise == "" && (status == "fail") != c.StubFails {
			want := "pass"
			if c.StubFails {
				want = "fail"
			}
			problems = append(problems, fmt.Sprintf("%s: %s against the stub, but its table entry says it should %s", c.Test, status, want))
		}
	}
	for _, name := range sortedKeys(results) {
		if !described[name] && !hasDescribedChild(name, described) && !hasDescribedParent(name, described) {
			problems = append(problems, fmt.Sprintf("%s (%s) has no entry in the suite's check table", name, results[name].action))
		}
	}
	fmt.Fprintf(w, "\n%d of %d checks pass", passed, passed+failed)
	if failed > 0 {
		fmt.Fprint(w, ": fix the first FAIL above, then run the same command again")
	}
	fmt.Fprintln(w, ".")
	if len(problems) > 0 {
		fmt.Fprintf(w, "\nThe check table itself needs fixing:\n  %s\n", strings.Join(problems, "\n  "))
		if o.expectStub && strings.Contains(strings.Join(problems, "\n"), "pass against the stub") {
			fmt.Fprintln(w, "(Or another controller on this cluster did the stub's work: one watching every namespace, such as make run-sample, must be stopped first.)")
		}
		return 1
	}
	if o.expectStub {
		fmt.Fprintln(w, "The stub fails exactly the checks its table expects it to fail.")
		return 0
	}
	if failed > 0 {
		return 1
	}
	return 0
}

// outcome is a check's status. A test with subtests fails when any subtest
// fails; its own entry counts as failed only when none of them did, so one
// missing behaviour is reported once.
func outcome(test string, results map[string]*result) string {
	res := results[test]
	if res == nil {
		return ""
	}
	if res.action == "fail" {
		for name, r := range results {
			if strings.HasPrefix(name, test+"/") && r.action == "fail" {
				return "pass"
			}
		}
	}
	return res.action
}

// failureLines picks what the test said when it failed: the lines of its
// t.Fatal/t.Error calls (they start with "file_test.go:NN:"), or with verbose
// all of its output.
func failureLines(res *result, verbose bool) []string {
	if res == nil {
		return nil
	}
	if verbose {
		return res.output
	}
	var lines []string
	testLine := regexp.MustCompile(`^\s+\w+_test\.go:\d+: `)
	for i, line := range res.output {
		if !testLine.MatchString(line) || strings.Contains(line, "started ") || strings.Contains(line, "events in namespace") ||
			strings.Contains(line, "last lines of") {
			continue
		}
		lines = append(lines, strings.TrimSpace(line))
		// A multi-line message goes on with indented lines that have no file prefix.
		for _, next := range res.output[i+1:] {
			if testLine.MatchString(next) || !strings.HasPrefix(next, "        ") || len(lines) > 6 {
				break
			}
			lines = append(lines, strings.TrimSpace(next))
		}
		if len(lines) > 6 {
			break
		}
	}
	return lines
}

// sectionExists checks that reread ("docs/lessons/x.md#anchor") names a file
// of the kit and a heading in it, with GitHub's anchors.
func sectionExists(root, reread string) error {
	path, anchor, _ := strings.Cut(reread, "#")
	data, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		return fmt.Errorf("reread %q: %w", reread, err)
	}
	if anchor == "" {
		return nil
	}
	var anchors []string
	for _, line := range strings.Split(string(data), "\n") {
		if heading, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") {
			anchors = append(anchors, slug(heading))
		}
	}
	if !slices.Contains(anchors, anchor) {
		return fmt.Errorf("reread %q: %s has no heading with that anchor", reread, path)
	}
	return nil
}

// slug is the anchor GitHub gives a Markdown heading: lower case, punctuation
// dropped, spaces turned into hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// readSolution reads the reference solution docs/solutions/<lesson>/<solution>.patch
// of the lesson whose file is doc, and returns its path and content. A solution
// that does not exist is an error listing the lesson's solutions.
func readSolution(root, doc, solution string) (path, patch string, err error) {
	lessonName := strings.TrimSuffix(filepath.Base(doc), ".md")
	path = filepath.Join(root, "docs", "solutions", lessonName, solution+".patch")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		have, _ := filepath.Glob(filepath.Join(root, "docs", "solutions", lessonName, "*.patch"))
		for i, h := range have {
			have[i] = strings.TrimSuffix(filepath.Base(h), ".patch")
		}
		return "", "", fmt.Errorf("-solution=%q: no file %s (lesson %s's solutions: %s)", solution, path, lessonName, strings.Join(have, ", "))
	}
	return path, string(data), err
}

// writeOverlay applies patch (the solution file at patchPath, a `git diff` of
// the repository) to copies of the files it touches as they are committed
// (HEAD), under tmp, and writes a `go build -overlay` file that lays each
// patched copy over its path in the repository. It returns the overlay file's
// path. The tier's own files never change, and the learner's uncommitted edits
// to them (the lessons ask for some) do not get in the way. A patch that does
// not apply to HEAD is an error that says how to fix it.
func writeOverlay(root, patchPath, patch, tmp string) (string, error) {
	paths := patchedPaths(patch)
	if len(paths) == 0 {
		return "", fmt.Errorf("%s names no file to change; it should be the output of git diff", patchPath)
	}
	// Copy the committed version of each file the patch changes (new files have
	// none), then let git apply the patch there, outside any repository, as
	// patch(1) would.
	tree := filepath.Join(tmp, "solution")
	for _, rel := range paths {
		dst := filepath.Join(tree, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", err
		}
		src, ok, err := committedFile(root, rel)
		if err != nil {
			return "", err
		}
		if !ok {
			continue
		}
		if err := os.WriteFile(dst, src, 0o644); err != nil {
			return "", err
		}
	}
	apply := exec.Command("git", "apply", "--whitespace=nowarn", patchPath)
	apply.Dir = tree
	// Inside a repository git apply would skip paths outside the current
	// folder; the ceiling keeps it from finding one above the copies.
	apply.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+tmp)
	if out, err := apply.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s does not apply to the tier's files as committed (%v):\n%s"+
			"If you committed changes to those files, check the solution on a fresh clone, or read the patch instead; "+
			"if the tier itself changed, bring the patch up to date as docs/solutions/README.md says",
			patchPath, err, out)
	}
	replace := map[string]string{}
	for _, rel := range paths {
		replace[filepath.Join(root, rel)] = filepath.Join(tree, rel)
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		return "", err
	}
	path := filepath.Join(tmp, "overlay.json")
	return path, os.WriteFile(path, overlay, 0o644)
}

// committedFile returns the content of the file at rel (a path from the
// repository root) in the commit HEAD, and false when HEAD has no such file.
// Outside a git checkout (a downloaded archive) it reads the file as it is.
func committedFile(root, rel string) ([]byte, bool, error) {
	if exec.Command("git", "-C", root, "rev-parse", "--verify", "--quiet", "HEAD").Run() != nil {
		data, err := os.ReadFile(filepath.Join(root, rel))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		return data, err == nil, err
	}
	object := "HEAD:" + filepath.ToSlash(rel)
	if exec.Command("git", "-C", root, "cat-file", "-e", object).Run() != nil {
		return nil, false, nil
	}
	out, err := exec.Command("git", "-C", root, "show", object).Output()
	if err != nil {
		return nil, false, fmt.Errorf("reading %s from git: %w", object, err)
	}
	return out, true, nil
}

// patchedPaths returns the repository paths a git diff changes or creates, in
// the order it names them ("+++ b/<path>" lines; deletions are not supported).
func patchedPaths(patch string) []string {
	var paths []string
	for _, line := range strings.Split(patch, "\n") {
		if rel, ok := strings.CutPrefix(line, "+++ b/"); ok {
			paths = append(paths, filepath.FromSlash(strings.TrimSpace(rel)))
		}
	}
	return paths
}

// readChecks reads the check table the suite wrote.
func readChecks(path string) ([]check, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var checks []check
	return checks, json.Unmarshal(data, &checks)
}

// hasDescribedChild reports whether some subtest of test has a table entry:
// then the parent test is only their container.
func hasDescribedChild(test string, described map[string]bool) bool {
	for name := range described {
		if strings.HasPrefix(name, test+"/") {
			return true
		}
	}
	return false
}

// hasDescribedParent reports whether test is a subtest of a test with a table
// entry (a table-driven test's cases are one check).
func hasDescribedParent(test string, described map[string]bool) bool {
	for i := strings.LastIndex(test, "/"); i > 0; i = strings.LastIndex(test[:i], "/") {
		if described[test[:i]] {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]*result) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// tail returns the last n lines.
func tail(lines []string, n int) string {
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
