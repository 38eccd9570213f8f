package main

import (
	"strings"
	"testing"
)

// madeUpLessons are lessons 0 to 3: 0 and 3 with a cluster of their own, 3 on
// the local cluster only, 0 with exercises only.
func madeUpLessons() []*lesson {
	return []*lesson{
		{Number: "0", Cluster: "own", OnlyExercises: true, Doc: "docs/lessons/00-a.md"},
		{Number: "1", Cluster: "shared", Doc: "docs/lessons/01-b.md"},
		{Number: "2", Cluster: "shared", Doc: "docs/lessons/02-c.md"},
		{Number: "3", Cluster: "own", LocalClusterOnly: "a component swapped", Doc: "docs/lessons/03-d.md"},
	}
}

// TestWrittenListsOfLessonsAreMarkedAndHold: a list of three lessons or more is
// refused unless marked, and a marked list must be its set; two lessons, a range
// alone and code blocks are left alone.
func TestWrittenListsOfLessonsAreMarkedAndHold(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"two lessons", "as in lessons 2 and 3.\n", ""},
		{"a range", "lessons 1 to 3 each build a controller.\n", ""},
		{"in a code block", "```\nmake check LESSON=1|2|3\n```\n", ""},
		{"unmarked", "Lessons 1, 2 and 3 run on kind.\n", `"Lessons 1, 2 and 3" lists lessons by hand`},
		{"unmarked Japanese", "レッスン1、2、3はkindで動きます。\n", `"レッスン1、2、3" lists lessons by hand`},
		{"unmarked LESSON=", "`make check LESSON=1|2|3`\n", `"LESSON=1|2|3" lists lessons by hand`},
		{"a range and one more", "lessons 0-2 and 3\n", "lists lessons by hand"},
		{"marked and right", "Lessons 0, 1 and 2<!-- lessons: kind --> run on kind.\n", ""},
		{"marked Japanese and right", "レッスン0から2<!-- lessons: kind -->。レッスン1、2<!-- lessons: shared -->\n", ""},
		{"LESSON=1 (2, 3)", "`make check LESSON=1` (2, 3)<!-- lessons: reconciler --> tells you\n", ""},
		{"marked and stale", "Lessons 0, 1 and 2<!-- lessons: all --> are all.\n", "lists lessons [0 1 2], but the lessons of the set all are [0 1 2 3]"},
		{"marked with no set", "Lessons 0, 1 and 2<!-- lessons: some --> are some.\n", "which is no set of lessons"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problems := checkWrittenLists("page.md", []byte(tc.text), madeUpLessons())
			var got []string
			for _, p := range problems {
				got = append(got, p.String())
			}
			switch {
			case tc.want == "" && len(problems) > 0:
				t.Errorf("got %v, want no problem", got)
			case tc.want != "" && (len(problems) != 1 || !strings.Contains(got[0], tc.want)):
				t.Errorf("got %v, want one problem naming %q", got, tc.want)
			}
		})
	}
}

// TestLessonTableHasARowPerLessonFile: the lesson path's table names each lesson
// once, in order, linking its page; a missing, extra or misplaced row is named.
func TestLessonTableHasARowPerLessonFile(t *testing.T) {
	row := func(n, link string) string { return "| " + n + " | [title](" + link + ") | what | 1 h | `make x` |\n" }
	good := "| | lesson |\n|---|---|\n" + row("0", "lessons/00-a.md") + row("1", "lessons/01-b.md") + row("2", "lessons/02-c.md") + row("3", "lessons/03-d.md")
	if p := checkLessonTable("docs/README.md", []byte(good), madeUpLessons()); len(p) > 0 {
		t.Errorf("the right table: %v", p)
	}
	for _, tc := range []struct{ name, text, want string }{
		{"a missing row", strings.Replace(good, row("3", "lessons/03-d.md"), "", 1), "no row for lesson 3"},
		{"a row of no lesson", good + row("4", "lessons/04-e.md"), "a row for lesson 4, which no lesson.yaml is"},
		{"a wrong link", strings.Replace(good, "lessons/02-c.md", "lessons/02-x.md", 1), "its page is docs/lessons/02-c.md"},
		{"out of order", strings.Replace(strings.Replace(good, row("1", "lessons/01-b.md"), "", 1), row("3", "lessons/03-d.md"), row("3", "lessons/03-d.md")+row("1", "lessons/01-b.md"), 1), "in lesson order"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := checkLessonTable("docs/README.md", []byte(tc.text), madeUpLessons())
			if len(p) == 0 || !strings.Contains(p[0].String(), tc.want) {
				t.Errorf("got %v, want a problem naming %q", p, tc.want)
			}
		})
	}
}
