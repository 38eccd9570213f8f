package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fixture: a lesson and the lesson path, each with its Japanese twin, and
// a file of a tier the lesson links to. The Japanese lesson matches the
// English one in every rule.
const (
	englishLesson  = "docs/lessons/01-loop.md"
	japaneseLesson = "docs/ja/lessons/01-loop.md"
)

// fixturePairs is the pair table of the fixture.
var fixturePairs = []pair{
	{"docs/README.md", "docs/ja/lesson-path.md"},
	{englishLesson, japaneseLesson},
}

// fixtureFiles are the fixture's files, from the repository root.
var fixtureFiles = map[string]string{
	"app/main.go": "package main\n",
	"docs/README.md": "# The lesson path\n\n[日本語](ja/lesson-path.md)\n\n" +
		"Start with [lesson 1](lessons/01-loop.md).\n\n## One vocabulary\n\nWords.\n",
	"docs/ja/lesson-path.md": "# 学習の道筋 <a id=\"the-lesson-path\"></a>\n\n[English](../README.md)\n\n" +
		"[レッスン1](lessons/01-loop.md)から始めます。\n\n## 用語 <a id=\"one-vocabulary\"></a>\n\n言葉。\n",
	englishLesson: "# Lesson 1: the loop\n" +
		"\n" +
		"[日本語](../ja/lessons/01-loop.md)\n" +
		"\n" +
		"Read [main.go](../../app/main.go) and the words of\n" +
		"[the lesson path](../README.md#one-vocabulary).\n" +
		"\n" +
		"## 1. Run it: `make run`\n" +
		"\n" +
		"```sh\n" +
		"make run\n" +
		"kubectl get pods\n" +
		"```\n" +
		"\n" +
		"## Exercises\n" +
		"\n" +
		"1. Delete a Pod ([back to the top](#1-run-it-make-run)):\n" +
		"   ```sh\n" +
		"   kubectl delete pod web-1\n" +
		"   ```\n" +
		"\n" +
		"## Exercises\n" +
		"\n" +
		"The same, twice.\n",
	japaneseLesson: "# レッスン1: ループ <a id=\"lesson-1-the-loop\"></a>\n" +
		"\n" +
		"[English](../../lessons/01-loop.md)\n" +
		"\n" +
		"[main.go](../../../app/main.go)と\n" +
		"[学習の道筋](../lesson-path.md#one-vocabulary)の用語を読みます。\n" +
		"\n" +
		"## 1. 動かす: `make run` <a id=\"1-run-it-make-run\"></a>\n" +
		"\n" +
		"```sh\n" +
		"make run\n" +
		"kubectl get pods\n" +
		"```\n" +
		"\n" +
		"## 演習 <a id=\"exercises\"></a>\n" +
		"\n" +
		"1. Podを削除します（[先頭へ](#1-run-it-make-run)）:\n" +
		"   ```sh\n" +
		"   kubectl delete pod web-1\n" +
		"   ```\n" +
		"\n" +
		"## 演習 <a id=\"exercises-1\"></a>\n" +
		"\n" +
		"同じものを、もう一度。\n",
}

// writeFixture writes the fixture into a new temporary folder and returns it.
func writeFixture(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for rel, text := range fixtureFiles {
		path := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// edit replaces old, which must occur once, by new in the fixture file rel.
func edit(t *testing.T, root, rel, old, new string) {
	t.Helper()
	path := filepath.Join(root, filepath.FromSlash(rel))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), old); n != 1 {
		t.Fatalf("%s holds %q %d times, want once", rel, old, n)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// check runs every check on the fixture at root.
func check(t *testing.T, root string) []problem {
	t.Helper()
	problems, err := checkAll(root, fixturePairs)
	if err != nil {
		t.Fatal(err)
	}
	return problems
}

// wantOne fails unless problems is exactly one problem of kind k at page:line.
func wantOne(t *testing.T, problems []problem, page string, line int, k kind) problem {
	t.Helper()
	if len(problems) != 1 {
		t.Fatalf("got %d problems, want one %q at %s:%d:\n%v", len(problems), k, page, line, problems)
	}
	p := problems[0]
	if p.page != page || p.line != line || p.kind != k {
		t.Errorf("got %q at %s:%d (%s), want %q at %s:%d", p.kind, p.page, p.line, p.msg, k, page, line)
	}
	return p
}

func TestMatchingPairsPass(t *testing.T) {
	if problems := check(t, writeFixture(t)); len(problems) > 0 {
		t.Errorf("the matching fixture has problems:\n%v", problems)
	}
}

func TestAMissingJapanesePageIsNamed(t *testing.T) {
	root := writeFixture(t)
	if err := os.Remove(filepath.Join(root, japaneseLesson)); err != nil {
		t.Fatal(err)
	}
	// The lesson path's link to the missing page is a problem too.
	problems := check(t, root)
	if len(problems) != 2 || problems[0].kind != linkBroken || problems[0].page != "docs/ja/lesson-path.md" {
		t.Fatalf("got %v, want the lesson path's broken link and the missing page", problems)
	}
	p := wantOne(t, problems[1:], japaneseLesson, 0, pageMissing)
	if !strings.Contains(p.msg, "translate "+englishLesson+" into "+japaneseLesson) {
		t.Errorf("the message does not say what to translate: %s", p.msg)
	}
}

func TestACommandChangedInTheEnglishBlockOnlyFails(t *testing.T) {
	root := writeFixture(t)
	edit(t, root, englishLesson, "kubectl get pods\n", "kubectl get pods -A\n")
	p := wantOne(t, check(t, root), japaneseLesson, 12, blockChanged)
	for _, want := range []string{japaneseLesson + ":10", englishLesson + ":10", englishLesson + `:12 "kubectl get pods -A"`} {
		if !strings.Contains(p.msg, want) {
			t.Errorf("the message does not name %s: %s", want, p.msg)
		}
	}
}

func TestABlockOnlyInTheEnglishPageIsMissingUnderItsHeading(t *testing.T) {
	root := writeFixture(t)
	edit(t, root, englishLesson, "```\n\n## Exercises\n\n1.", "```\n\n```sh\nmake stop\n```\n\n## Exercises\n\n1.")
	p := wantOne(t, check(t, root), japaneseLesson, 8, blockMissing)
	if !strings.Contains(p.msg, "add it under \"## 1. 動かす: `make run`") {
		t.Errorf("the message does not name the Japanese heading to add it under: %s", p.msg)
	}
}

func TestAMissingHeadingFails(t *testing.T) {
	root := writeFixture(t)
	edit(t, root, japaneseLesson, "## 演習 <a id=\"exercises-1\"></a>\n", "")
	wantOne(t, check(t, root), japaneseLesson, 15, headingMissing)
}

func TestAHeadingWithTheWrongAnchorFails(t *testing.T) {
	root := writeFixture(t)
	edit(t, root, japaneseLesson, `<a id="exercises"></a>`, `<a id="exercise"></a>`)
	edit(t, root, japaneseLesson, `<a id="exercises-1"></a>`, `<a id="exercises-2"></a>`)
	problems := check(t, root)
	if len(problems) != 2 {
		t.Fatalf("got %d problems, want the two headings with a wrong anchor:\n%v", len(problems), problems)
	}
	for i, line := range []int{15, 22} {
		if p := problems[i]; p.kind != headingAnchor || p.page != japaneseLesson || p.line != line {
			t.Errorf("problem %d = %q at %s:%d, want %q at %s:%d", i, p.kind, p.page, p.line, headingAnchor, japaneseLesson, line)
		}
	}
}

func TestAHeadingOfAnotherLevelFails(t *testing.T) {
	root := writeFixture(t)
	edit(t, root, japaneseLesson, "## 演習 <a id=\"exercises\"></a>", "### 演習 <a id=\"exercises\"></a>")
	wantOne(t, check(t, root), japaneseLesson, 15, headingLevel)
}

func TestBadLinksFail(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
		line           int
		kind           kind
		advice         string
	}{
		{"a path not rewritten for the deeper folder", "(../../../app/main.go)", "(../../app/main.go)", 5, linkBroken, `use "../../../app/main.go"`},
		{"a link to an English page with a twin", "(../lesson-path.md#one-vocabulary)", "(../../README.md#one-vocabulary)", 6, linkToEnglish, `use "../lesson-path.md#one-vocabulary"`},
		{"an anchor the page lacks", "(#1-run-it-make-run)", "(#run-it)", 17, anchorMissing, `no anchor "run-it"`},
		{"an anchor the linked page lacks", "lesson-path.md#one-vocabulary", "lesson-path.md#vocabulary", 6, anchorMissing, `no anchor "vocabulary"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := writeFixture(t)
			edit(t, root, japaneseLesson, tc.old, tc.new)
			p := wantOne(t, check(t, root), japaneseLesson, tc.line, tc.kind)
			if !strings.Contains(p.msg, tc.advice) {
				t.Errorf("the message does not say %s: %s", tc.advice, p.msg)
			}
		})
	}
}

func TestTheLanguageSwitchesAreRequired(t *testing.T) {
	root := writeFixture(t)
	edit(t, root, japaneseLesson, "[English](../../lessons/01-loop.md)\n", "\n")
	wantOne(t, check(t, root), japaneseLesson, 1, switchMissing)

	root = writeFixture(t)
	edit(t, root, englishLesson, "[日本語](../ja/lessons/01-loop.md)", "[日本語](../ja/lessons/02-loop.md)")
	wantOne(t, check(t, root), englishLesson, 3, switchMissing)
}

func TestRunPrintsThePageAndWhatToDo(t *testing.T) {
	root := writeFixture(t)
	edit(t, root, englishLesson, "make run\n", "make run-sample\n")
	var out bytes.Buffer
	code, err := run(root, fixturePairs, &out)
	if err != nil {
		t.Fatal(err)
	}
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	if !strings.HasPrefix(first, japaneseLesson+":11: ") || !strings.Contains(first, "copy the English block into the Japanese page unchanged (code blocks are never translated)") {
		t.Errorf("the first line does not name the page and say what to do:\n%s", out.String())
	}
}

func TestANumberedItemWithoutTheSpaceAfterItsNumberFails(t *testing.T) {
	root := writeFixture(t)
	edit(t, root, japaneseLesson, "1. Podを削除します", "1.Podを削除します")
	p := wantOne(t, check(t, root), japaneseLesson, 17, listMissing)
	for _, want := range []string{`no space after "1."`, englishLesson + ":17", `write "1. P..."`} {
		if !strings.Contains(p.msg, want) {
			t.Errorf("the message does not say %s: %s", want, p.msg)
		}
	}
}

func TestABulletWhereTheEnglishPageNumbersFails(t *testing.T) {
	root := writeFixture(t)
	edit(t, root, japaneseLesson, "1. Podを削除します", "- Podを削除します")
	problems := check(t, root)
	if len(problems) != 2 || problems[0].kind != listMissing || problems[1].kind != listExtra || problems[1].line != 17 {
		t.Fatalf("got %v, want the English numbered item missing and the Japanese bullet extra, at line 17", problems)
	}
}

func TestAListTurnedIntoAParagraphFails(t *testing.T) {
	root := writeFixture(t)
	edit(t, root, japaneseLesson, "1. Podを削除します", "Podを削除します")
	p := wantOne(t, check(t, root), japaneseLesson, 15, listMissing)
	if !strings.Contains(p.msg, "translate it as a numbered list item") {
		t.Errorf("the message does not say what to write: %s", p.msg)
	}
}

func TestAHeadingNumberRunningIntoItsTextFails(t *testing.T) {
	root := writeFixture(t)
	edit(t, root, japaneseLesson, "## 1. 動かす", "## 1.動かす")
	p := wantOne(t, check(t, root), japaneseLesson, 8, headingNumber)
	if !strings.Contains(p.msg, `its number "1." runs into the text`) {
		t.Errorf("the message does not name the number: %s", p.msg)
	}
}

// TestPairsFollowTheRuleWithoutATable: the pages are paired by where they lie,
// docs/X.md with docs/ja/X.md, and the lesson path with its exception; a page
// added under docs/ is checked with no edit of the checker, and a missing twin is
// reported for it.
func TestPairsFollowTheRuleWithoutATable(t *testing.T) {
	root := writeFixture(t)
	ps, err := findPairs(root)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ps) != fmt.Sprint(fixturePairs) {
		t.Errorf("findPairs = %v, want %v", ps, fixturePairs)
	}
	if err := os.WriteFile(filepath.Join(root, "docs", "lessons", "09-new.md"), []byte("# Lesson 9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ps, err = findPairs(root)
	if err != nil {
		t.Fatal(err)
	}
	if twin, ok := twinOf("docs/lessons/09-new.md", ps); !ok || twin != "docs/ja/lessons/09-new.md" {
		t.Errorf("a new page's twin: %q, %v; want docs/ja/lessons/09-new.md", twin, ok)
	}
	problems, err := checkAll(root, ps)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fmt.Sprint(problems), "docs/ja/lessons/09-new.md") {
		t.Errorf("a new page without its twin: problems %v, want one naming docs/ja/lessons/09-new.md", problems)
	}
}
