package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/controller-kit/controller-kit/hack/kittest"
)

// contractsSection is the heading of the lesson section that must list every
// contract of the lesson's checks (see kittest.Check's Contracts).
const contractsSection = "### Your own Reconciler"

// verifyContracts checks, for every lesson of the table, that each contract of
// each of its checks stands as a list item in the lesson's "Your own
// Reconciler" section, and prints what is missing to w. It returns 0 when
// nothing is, 1 otherwise. It reads each suite's table without a cluster
// (kittest.ChecksOnlyEnv).
func verifyContracts(root string, w io.Writer) (int, error) {
	missing := 0
	for _, l := range lessons {
		checks, err := checkTable(root, &l)
		if err != nil {
			return 0, err
		}
		doc, err := os.ReadFile(filepath.Join(root, l.doc))
		if err != nil {
			return 0, err
		}
		section := lessonSection(string(doc), contractsSection)
		for _, c := range checks {
			for _, contract := range c.Contracts {
				if !strings.Contains(section, "\n- "+contract+"\n") {
					missing++
					fmt.Fprintf(w, "%s: %q relies on a contract that the lesson's %q section does not state; add this list item there:\n- %s\n",
						l.doc, c.Test, strings.TrimLeft(contractsSection, "# "), contract)
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

// checkTable returns the check table of a lesson's suite, written by its
// TestMain with kittest.ChecksOnlyEnv set, so no controller is built or started
// (the suite itself is compiled, into the same cache make check uses).
func checkTable(root string, l *lesson) ([]check, error) {
	tmp, err := os.MkdirTemp("", "kit-checks-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "checks.json")
	tierDir, err := filepath.Abs(filepath.Join(root, l.tier))
	if err != nil {
		return nil, err
	}
	bin, err := l.testBinary(tierDir)
	if err != nil {
		return nil, fmt.Errorf("reading the check table of %s: %w", l.tier, err)
	}
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Dir = filepath.Join(tierDir, l.suiteDir())
	cmd.Env = append(os.Environ(), kittest.ChecksOutEnv+"="+out, kittest.ChecksOnlyEnv+"=1")
	if output, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("reading the check table of %s: %w\n%s", l.tier, err, output)
	}
	return readChecks(out)
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
