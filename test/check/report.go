package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// report prints one line per check, in the table's order, then the tests the
// table does not describe, and a summary; it returns the exit code. kindOnly
// are the exercises skipped on this cluster, with the reason each gives;
// onKind says whether the cluster is a kind cluster, where the checks marked
// localClusterOnly skip themselves, as those marked kindOnly do elsewhere
// (kittest.Check.NotHere): neither a pass nor a failure, one line each.
func report(w io.Writer, root string, checks []check, results map[string]*result, o options, kindOnly map[string]string, onKind bool) int {
	passed, failed, problems := 0, 0, []string{}
	t := learnerTexts()
	shown := newShownSoFar()
	described := map[string]bool{}
	skippedExercises := map[string]bool{}
	notHere := "" // the reason of the last check printed as not running here
	for _, c := range checks {
		described[c.Test] = true
		if err := sectionExists(root, c.Reread); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", c.Test, err))
		}
		status := outcome(c.Test, results)
		if reason := c.NotHere(onKind); reason != "" {
			if problem := notHereProblem(c, status); problem != "" {
				problems = append(problems, problem)
			}
			if status != "" || o.run == "" {
				printNotHere(w, c, reason, reason == notHere, onKind)
				notHere = reason
			}
			continue
		}
		switch status {
		case "pass":
			passed++
			fmt.Fprintf(w, "PASS  %s\n", c.Behaviour)
		case "fail":
			failed++
			printFailure(w, root, c, results[c.Test], o, shown)
		case "skip":
			// An exercise not run here is one line, however many checks it has.
			if c.Exercise != "" && skippedExercises[c.Exercise] {
				break
			}
			skippedExercises[c.Exercise] = c.Exercise != ""
			printSkip(w, c, results[c.Test], kindOnly)
		case "":
			if o.run != "" {
				continue // not selected by -run
			}
			failed++
			fmt.Fprintf(w, "FAIL  "+t.didNotFinish+"\n      %s%s\n", c.Behaviour, t.reread, rereadFor(root, c.Reread))
		}
		if problem := stubProblem(c, status, o); problem != "" {
			problems = append(problems, problem)
		}
	}
	for _, name := range sortedKeys(results) {
		if !described[name] && !hasDescribedChild(name, described) && !hasDescribedParent(name, described) {
			problems = append(problems, fmt.Sprintf("%s (%s) has no row in the suite's lesson file (lesson.yaml)", name, results[name].action))
		}
	}
	return summarize(w, passed, failed, problems, o)
}

// printFailure prints a failed check: its behaviour, hint, contracts, the
// section to reread, what the test said, and its cause (printDiagnosis).
func printFailure(w io.Writer, root string, c check, res *result, o options, shown *shownSoFar) {
	t := learnerTexts()
	fmt.Fprintf(w, "FAIL  %s\n      %s%s\n", c.Behaviour, t.hint, c.Hint)
	for _, contract := range c.Contracts {
		fmt.Fprintf(w, "      %s%s\n", t.needs, contract)
	}
	fmt.Fprintf(w, "      %s%s\n", t.reread, rereadFor(root, c.Reread))
	for _, line := range failureLines(res, o.verbose) {
		fmt.Fprintf(w, "      | %s\n", line)
	}
	printDiagnosis(w, root, o.logDir, c.Test, shown)
}

// printSkip prints a skipped check: an exercise's, not asked for or kind-only
// here (report prints that once per exercise); or one that skipped itself, whose own t.Skip line says why (say, a
// cluster without an audit log).
func printSkip(w io.Writer, c check, res *result, kindOnly map[string]string) {
	t := learnerTexts()
	switch reason, ok := kindOnly[c.Exercise]; {
	case c.Exercise != "" && ok:
		fmt.Fprintf(w, "skip  "+t.skipKindOnly+"\n", c.Exercise, reason)
	case c.Exercise != "":
		fmt.Fprintf(w, "skip  "+t.skipExercise+"\n", c.Exercise, c.Exercise)
	default:
		fmt.Fprintf(w, "skip  %s\n", c.Behaviour)
		for _, line := range failureLines(res, false) {
			fmt.Fprintf(w, "      | %s\n", line)
		}
	}
}

// printNotHere prints, on one line, a check that does not run on this cluster
// and why (a kind cluster when onKind, else the local one); asAbove says the
// check printed before it gave the same reason, which is then not repeated.
func printNotHere(w io.Writer, c check, reason string, asAbove, onKind bool) {
	t := learnerTexts()
	switch {
	case asAbove:
		fmt.Fprintf(w, "skip  "+t.skipAsAbove+"\n", c.Behaviour)
	case onKind:
		fmt.Fprintf(w, "skip  "+t.skipLocalOnlyCheck+"\n", c.Behaviour, reason)
	default:
		fmt.Fprintf(w, "skip  "+t.skipKindOnlyCheck+"\n", c.Behaviour, reason)
	}
}

// notHereProblem says what is wrong with a check that does not run on this
// cluster when its test did not skip itself: it ran, and what it found means
// nothing here, so its test must call kittest.SkipElsewhere first.
func notHereProblem(c check, status string) string {
	if status == "skip" || status == "" {
		return ""
	}
	return fmt.Sprintf("%s: its row keeps it to another cluster (kindOnly or localClusterOnly), but it ran here (%s): call kittest.SkipElsewhere(t) first in the test", c.Test, status)
}

// stubProblem says, with -expect-stub, what is wrong with the table when the
// check's status against the stub is not the one its row expects. A check that
// skipped itself (an exercise not asked for; on kind, a check that reads the
// local cluster's audit log) shows nothing of the stub either way.
func stubProblem(c check, status string, o options) string {
	switch {
	case !o.expectStub || status == "skip":
		return ""
	case status == "":
		return fmt.Sprintf("%s: no such test ran (is the table entry's name right?)", c.Test)
	case (status == "fail") != c.StubFails:
		want := "pass"
		if c.StubFails {
			want = "fail"
		}
		return fmt.Sprintf("%s: %s against the stub, but its table entry says it should %s", c.Test, status, want)
	}
	return ""
}

// summarize prints the summary line and the table's problems, and returns the
// exit code: 1 when the table needs fixing or a check failed (with
// -expect-stub: only when the table needs fixing).
func summarize(w io.Writer, passed, failed int, problems []string, o options) int {
	t := learnerTexts()
	fmt.Fprintf(w, "\n"+t.summary, passed, passed+failed)
	if failed > 0 {
		fmt.Fprint(w, t.fixFirst)
	}
	fmt.Fprintln(w, t.period)
	if len(problems) > 0 {
		fmt.Fprintf(w, "\nThe lesson file (lesson.yaml) itself needs fixing:\n  %s\n", strings.Join(problems, "\n  "))
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
	// kittest's own lines (a controller started, the namespace's events, a log's
	// tail) carry no verdict; the diagnosis below shows the logs.
	bookkeeping := regexp.MustCompile(`^\s+\w+_test\.go:\d+: (started \S+: |events in namespace |last lines of )`)
	for i, line := range res.output {
		if !testLine.MatchString(line) || bookkeeping.MatchString(line) {
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

// rereadFor returns the section a learner should reread, in the language they
// read (readsJapanese): reread itself ("docs/lessons/x.md#anchor"), or its
// Japanese twin "docs/ja/lessons/x.md#anchor" when that page exists (the twins
// carry the English anchors, which make verify-docs checks).
func rereadFor(root, reread string) string {
	rest, ok := strings.CutPrefix(reread, "docs/")
	if !ok || !readsJapanese() {
		return reread
	}
	twin := "docs/ja/" + rest
	path, _, _ := strings.Cut(twin, "#")
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(path))); err != nil {
		return reread
	}
	return twin
}

// readsJapanese reports whether the learner reads the Japanese lessons:
// $KIT_LANG says so (ja or en); unset, the locale does (the first of LC_ALL,
// LC_MESSAGES and LANG that is set starts with ja).
func readsJapanese() bool {
	if lang := os.Getenv(kittest.LangEnv); lang != "" {
		return strings.HasPrefix(lang, "ja")
	}
	for _, name := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if v := os.Getenv(name); v != "" {
			return strings.HasPrefix(v, "ja")
		}
	}
	return false
}
