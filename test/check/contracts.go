package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// contractsSection is the heading of the lesson section that must list every
// contract of the lesson's checks (see kittest.Check's Contracts).
const contractsSection = "### Your own Reconciler"

// verifyContracts checks, for every lesson of the table, that each contract of
// each of its checks stands as a list item in the lesson's "Your own
// Reconciler" section, and prints what is missing to w. It returns 0 when
// nothing is, 1 otherwise. The error names a lesson file or page it cannot read.
func verifyContracts(root string, w io.Writer) (int, error) {
	lessons, err := kittest.ReadLessons(root)
	if err != nil {
		return 0, err
	}
	missing := 0
	for _, l := range lessons {
		checks := l.Checks
		doc, err := os.ReadFile(filepath.Join(root, l.Doc))
		if err != nil {
			return 0, err
		}
		section := lessonSection(string(doc), contractsSection)
		for _, c := range checks {
			for _, contract := range c.Contracts {
				if !strings.Contains(section, "\n- "+contract+"\n") {
					missing++
					fmt.Fprintf(w, "%s: %q relies on a contract that the lesson's %q section does not state; add this list item there:\n- %s\n",
						l.Doc, c.Test, strings.TrimLeft(contractsSection, "# "), contract)
				}
			}
		}
	}
	if missing > 0 {
		return 1, nil
	}
	fmt.Fprintln(w, ">> contracts: every check's contracts are stated in its lesson's \"Your own Reconciler\"")
	return 0, nil
}

// lessonSection returns the part of a Markdown document from the line heading
// to the next heading of the same or a higher level, with a newline after each
// line; "" when there is no such heading.
func lessonSection(doc, heading string) string {
	level := strings.Index(heading, " ")
	var b strings.Builder
	in := false
	for _, line := range strings.Split(doc, "\n") {
		if in && strings.HasPrefix(line, "#") {
			if hashes := len(line) - len(strings.TrimLeft(line, "#")); hashes <= level {
				break
			}
		}
		if line == heading {
			in = true
		}
		if in {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}
