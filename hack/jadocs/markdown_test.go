package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestAnchorMatchesGitHubOnTheLessonsHeadings checks the anchor of headings
// as the lessons write them (docs/lessons/*.md) against the anchors GitHub
// gives them.
func TestAnchorMatchesGitHubOnTheLessonsHeadings(t *testing.T) {
	for text, want := range map[string]string{
		"Lesson 1: the reconciliation loop in one file":                "lesson-1-the-reconciliation-loop-in-one-file",
		"3. Run it: `make run-sample`":                                 "3-run-it-make-run-sample",
		"2.4 Run it: `_` is `-`":                                       "24-run-it-_-is--",
		"Read main.go in this order":                                   "read-maingo-in-this-order",
		"14. Where to read controller-runtime's internals (v0.25.2)":   "14-where-to-read-controller-runtimes-internals-v0252",
		"Where the same pieces live in kubernetes/kubernetes v1.37.2":  "where-the-same-pieces-live-in-kuberneteskubernetes-v1372",
		"Objects that are going away, and children that are not yours": "objects-that-are-going-away-and-children-that-are-not-yours",
		"4. The picture: informers, listers, workqueue, workers":       "4-the-picture-informers-listers-workqueue-workers",
		"ループを観察する":                                                     "ループを観察する",
		"See [the lesson path](docs/README.md)":                        "see-the-lesson-path",
	} {
		if got := anchor(text); got != want {
			t.Errorf("anchor(%q) = %q, want %q", text, got, want)
		}
	}
}

// TestSluggerNumbersDuplicateAnchors checks GitHub's rule for a heading whose
// anchor a heading before it already has: -1, then -2.
func TestSluggerNumbersDuplicateAnchors(t *testing.T) {
	s := newSlugger()
	var got []string
	for _, text := range []string{"Exercises", "Run it", "Exercises", "Exercises", "Exercises-1"} {
		got = append(got, s.slug(text))
	}
	want := []string{"exercises", "run-it", "exercises-1", "exercises-2", "exercises-1-1"}
	if !slices.Equal(got, want) {
		t.Errorf("slugs = %q, want %q", got, want)
	}
}

// TestParsePageReadsHeadingsOutsideFencesOnly checks that '#' lines inside a
// code block (a shell comment) are not headings, that a fence closes only with
// its own character and at least its length, that indented fences (in list
// items) count, and that a Japanese heading's trailing anchor is read.
func TestParsePageReadsHeadingsOutsideFencesOnly(t *testing.T) {
	text := "# Title <a id=\"title\"></a>\n" +
		"\n" +
		"````md\n" +
		"# not a heading\n" +
		"```\n" +
		"````\n" +
		"1. A step:\n" +
		"   ```sh\n" +
		"   # a comment\n" +
		"   ~~~\n" +
		"   ```\n" +
		"## Two\n" +
		"~~~\n" +
		"```\n" +
		"~~~\n" +
		"see [it](other.md#two) and `[not](a-link.md)`\n"
	p := parsePage("p.md", text)
	if len(p.headings) != 2 || p.headings[0].id != "title" || p.headings[0].text != "Title" || p.headings[1].line != 12 {
		t.Errorf("headings = %+v, want Title (id title) at line 1 and Two at line 12", p.headings)
	}
	var starts []int
	for _, b := range p.blocks {
		starts = append(starts, b.line)
	}
	if !slices.Equal(starts, []int{3, 8, 13}) {
		t.Errorf("blocks start at lines %v, want [3 8 13]", starts)
	}
	if len(p.links) != 1 || p.links[0] != (link{line: 16, dest: "other.md#two"}) {
		t.Errorf("links = %+v, want only other.md#two at line 16", p.links)
	}
}

func TestListItemsAreReadAsMarkdownRendersThem(t *testing.T) {
	p := parsePage("x.md", "Intro\n\n1. one\n2. two\n   - nested\n\nA sentence that wraps at a number like\n5000. This line is text.\n- a bullet interrupts\n1.no space is text\n")
	var got []string
	for _, it := range p.items {
		got = append(got, fmt.Sprintf("%d:%v:%d", it.line, it.numbered, it.indent))
	}
	want := []string{"3:true:0", "4:true:0", "5:false:3", "9:false:0"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("items (line:numbered:indent) = %v, want %v", got, want)
	}
}
