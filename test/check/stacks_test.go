package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stackPage is a lesson page quoting one stack, frames from an outer line.
func stackPage(name string, frames ...string) string {
	var b strings.Builder
	b.WriteString("# Lesson\n\n<!-- stack: " + name + " -->\n```\n(dlv) stack\n")
	for i, f := range frames {
		b.WriteString(fmt.Sprint(i) + "  0x0000000001f58f96 in " + f + "\n   at ./x.go:1\n")
	}
	b.WriteString("```\n")
	return b.String()
}

func TestCompareStacksHoldsTheTwinToTheEnglishQuote(t *testing.T) {
	for _, tc := range []struct {
		name, en, ja string
		want         []string
	}{
		{"alike", stackPage("sync", "a.sync", "a.worker"), stackPage("sync", "a.sync", "a.worker"), nil},
		{"a frame removed in the twin", stackPage("sync", "a.sync", "a.worker"), stackPage("sync", "a.sync"),
			[]string{"docs/ja/lessons/01-x.md:6: the stack sync has the frames", "but docs/lessons/01-x.md:6 quotes", "a.worker"}},
		{"no marker in the twin", stackPage("sync", "a.sync"), strings.Replace(stackPage("sync", "a.sync"), "<!-- stack: sync -->", "", 1),
			[]string{"docs/ja/lessons/01-x.md: no <!-- stack: sync --> marker", "docs/lessons/01-x.md:6"}},
		{"a marker only in the twin", stackPage("sync", "a.sync"), stackPage("sync", "a.sync") + stackPage("other", "b.c"),
			[]string{"the stack other has no marker in docs/lessons/01-x.md"}},
		{"a marker without frames", "<!-- stack: sync -->\n```\n```\n", "",
			[]string{"docs/lessons/01-x.md:1: the block after the marker of the stack sync has no frame line"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for path, text := range map[string]string{"docs/lessons/01-x.md": tc.en, "docs/ja/lessons/01-x.md": tc.ja} {
				if err := os.MkdirAll(filepath.Join(root, filepath.Dir(path)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, path), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			problems, _, err := compareStacks(root, "docs/lessons/01-x.md", "docs/ja/lessons/01-x.md")
			if err != nil {
				t.Fatal(err)
			}
			requireProblems(t, problems, tc.want)
		})
	}
}

func TestVerifyStacksPassesOnTheKitsLessons(t *testing.T) {
	var out strings.Builder
	code, err := verifyStacks(filepath.Join("..", ".."), &out)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Fatalf("check -verify-stacks exits %d:\n%s", code, out.String())
	}
}

// requireProblems fails the test unless problems, joined, say each of want,
// or, with no want, unless there are none.
func requireProblems(t *testing.T, problems, want []string) {
	t.Helper()
	got := strings.Join(problems, "\n")
	if len(want) == 0 && got != "" {
		t.Fatalf("problems %q; want none", got)
	}
	if len(want) > 0 && got == "" {
		t.Fatalf("no problem; want one saying %q", want)
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("problems\n%s\ndo not say %q", got, w)
		}
	}
}
