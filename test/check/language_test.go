package main

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// englishSentence finds three English words in a row, the smallest thing this
// test calls a sentence: "makes the copy", not an identifier such as
// "scale-to-zero", a verb and resource such as "update pods", or a label.
var englishSentence = regexp.MustCompile(`[A-Za-z][A-Za-z']* [A-Za-z][A-Za-z']* [A-Za-z][A-Za-z']*`)

// japaneseScript finds one character of Japanese script.
var japaneseScript = regexp.MustCompile(`[\p{Hiragana}\p{Katakana}\p{Han}]`)

// mixesLanguages reports whether line holds Japanese and an English sentence.
func mixesLanguages(line string) bool {
	return japaneseScript.MatchString(line) && englishSentence.MatchString(line)
}

// Each of make check's Japanese texts is Japanese throughout: with its verbs
// (%s, %d, ...) taken out, none holds an English sentence. The labels in front
// of what a lesson table says in English (hint, needs, why) are single English
// words on purpose, so that such a line is English throughout.
func TestJapaneseTextsHoldNoEnglishSentence(t *testing.T) {
	verbs := regexp.MustCompile(`%(\[\d+\])?[a-z]`)
	ja := reflect.ValueOf(japanese)
	for i := range ja.NumField() {
		text := verbs.ReplaceAllString(ja.Field(i).String(), "X")
		if m := englishSentence.FindString(text); m != "" {
			t.Errorf("japanese.%s holds English (%q): %q", ja.Type().Field(i).Name, m, text)
		}
	}
}

// A Japanese reader's make check report keeps one language to a line: what a
// lesson table or a suite wrote in English (behaviour, hint, contract, why an
// exercise is kind-only, the API server's message) never shares a line with
// the grader's Japanese, and a failed check's section to reread is the Japanese
// page.
func TestJapaneseReportKeepsOneLanguageToALine(t *testing.T) {
	t.Setenv(kittest.LangEnv, "ja")
	root := t.TempDir()
	for _, rel := range []string{"docs/lessons/01-loop.md", "docs/ja/lessons/01-loop.md"} {
		path := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("## A\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	logDir := filepath.Join(root, "_output", "check")
	writeLog := func(test, name, text string) {
		dir := filepath.Join(logDir, kittest.TestDirName(test))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeLog("TestFails", "controller.log", "E1203 15:52:32.267984 1 loop.go:9] \"the update was refused\"\n")
	writeLog("TestFails", kittest.APIErrorsFile, `[
		{"code": 403, "verb": "update", "resource": "pods", "namespace": "ns", "name": "web", "authorization": "allow", "message": "pods \"web\" is forbidden: the admission webhook said no"},
		{"code": 409, "verb": "update", "resource": "pods", "namespace": "ns", "name": "web"}
	]`)
	writeLog("TestQuiet", "controller.log", "I1203 15:52:32.267984 1 loop.go:9] \"started the workers\"\n")
	writeLog("TestEmpty", "controller.log", "")
	checks := []check{
		{Test: "TestFails", Behaviour: "a Pod gets its label", Hint: "write the label in Reconcile and then update the Pod", Contracts: []string{"the controller only updates Pods it has read"}, Reread: "docs/lessons/01-loop.md#a"},
		{Test: "TestQuiet", Behaviour: "a deleted Pod gets no write", Hint: "return when the Pod is being deleted", Reread: "docs/lessons/01-loop.md#a"},
		{Test: "TestEmpty", Behaviour: "the controller starts at all", Hint: "look at what main does first", Reread: "docs/lessons/01-loop.md#a"},
		{Test: "TestUnfinished", Behaviour: "a Pod that stays gets no second write", Hint: "compare before you write", Reread: "docs/lessons/01-loop.md#a"},
		{Test: "TestOnKind", Behaviour: "the Pod really runs", Exercise: "run", Reread: "docs/lessons/01-loop.md#a"},
		{Test: "TestExercise", Behaviour: "an exercise nobody asked for", Exercise: "extra", Reread: "docs/lessons/01-loop.md#a"},
	}
	res := results(map[string]string{"TestFails": "fail", "TestQuiet": "fail", "TestEmpty": "fail", "TestOnKind": "skip", "TestExercise": "skip"})
	var out strings.Builder
	report(&out, root, checks, res, options{logDir: logDir}, map[string]string{"run": "its Pods need a node that runs containers"}, false)
	runner := &suiteRunner{w: &out, lesson: &kittest.Lesson{Number: "4", KubeSource: true}, o: options{lesson: "4", timeout: "30s"}}
	runner.what = whatIsChecked(learnerTexts(), "stub", "scale-to-zero", "scale-to-zero")
	runner.printChecking()
	for _, line := range strings.Split(out.String(), "\n") {
		if mixesLanguages(line) {
			t.Errorf("a line mixes Japanese and English: %q\nthe whole report:\n%s", line, out.String())
		}
	}
	for _, want := range []string{"docs/ja/lessons/01-loop.md#a", "write the label in Reconcile", "its Pods need a node", "the admission webhook said no", "Kubernetesのソース"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
}
