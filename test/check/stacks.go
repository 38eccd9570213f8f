package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/controller-kit/controller-kit/test/kittest"
	"github.com/controller-kit/controller-kit/test/kittest/delve"
)

// verifyStacks is make verify-docs' check of the lessons' quoted stacks
// (test/kittest/delve: a <!-- stack: NAME --> marker before a block of delve's
// stack output, which the lesson's make test-lessonN takes again from the
// running program): every stack a lesson page marks is well formed, and its
// Japanese twin marks the same stacks, under the same names, with the same
// frames, so that the check of the English quote holds the twin too.
func verifyStacks(root string, w io.Writer) (int, error) {
	lessons, err := kittest.ReadLessons(root)
	if err != nil {
		return 0, err
	}
	var problems []string
	checked := 0
	for _, l := range lessons {
		twin := "docs/ja/" + strings.TrimPrefix(l.Doc, "docs/")
		ps, n, err := compareStacks(root, l.Doc, twin)
		if err != nil {
			return 0, err
		}
		problems = append(problems, ps...)
		checked += n
	}
	for _, p := range problems {
		fmt.Fprintln(w, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(w, "%d problem(s) with the lessons' quoted stacks: a marker <!-- stack: NAME --> goes right before the block of delve's stack output, and the Japanese twin carries the same marker before the same block\n", len(problems))
		return 1, nil
	}
	fmt.Fprintf(w, ">> lessons: the %d stacks they quote are marked alike in their Japanese twins\n", checked)
	return 0, nil
}

// compareStacks returns the problems of the quoted stacks of the page en and
// its twin ja (a missing twin page is jadocs' to report), and how many en
// quotes.
func compareStacks(root, en, ja string) ([]string, int, error) {
	var problems []string
	ens, err := delve.ReadQuotedStacksIn(root, en)
	if err != nil {
		return []string{err.Error()}, 0, nil
	}
	if !fileExists(filepath.Join(root, ja)) {
		return nil, len(ens), nil
	}
	jas, err := delve.ReadQuotedStacksIn(root, ja)
	if err != nil {
		return []string{err.Error()}, len(ens), nil
	}
	byName := map[string]delve.QuotedStack{}
	for _, q := range jas {
		byName[q.Name] = q
	}
	for _, q := range ens {
		j, ok := byName[q.Name]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: no <!-- stack: %s --> marker: %s quotes it at %s; put the marker before the same block in the twin", ja, q.Name, en, q.Where()))
			continue
		}
		delete(byName, q.Name)
		if !slices.Equal(q.Frames, j.Frames) {
			problems = append(problems, fmt.Sprintf("%s: the stack %s has the frames\n  %s\nbut %s quotes\n  %s\ncopy the English block into the twin unchanged",
				j.Where(), q.Name, strings.Join(j.Frames, "\n  "), q.Where(), strings.Join(q.Frames, "\n  ")))
		}
	}
	for _, j := range jas {
		if _, ok := byName[j.Name]; ok {
			problems = append(problems, fmt.Sprintf("%s: the stack %s has no marker in %s: mark it there too, or remove it here", j.Where(), j.Name, en))
		}
	}
	return problems, len(ens), nil
}
