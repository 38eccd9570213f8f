package main

import "testing"

func TestLessonSectionEndsAtTheNextHeadingOfItsLevel(t *testing.T) {
	doc := "# Lesson\n### Your own Reconciler\nsteps\n#### What the checks rely on\n- a contract\n### Exercises\n- not in it\n"
	got := lessonSection(doc, contractsSection)
	want := "### Your own Reconciler\nsteps\n#### What the checks rely on\n- a contract\n"
	if got != want {
		t.Errorf("lessonSection = %q, want %q", got, want)
	}
	if got := lessonSection(doc, "### Missing"); got != "" {
		t.Errorf("lessonSection of a missing heading = %q, want empty", got)
	}
}
