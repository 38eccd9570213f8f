package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// The lessons' diagrams are mermaid blocks (```mermaid ... ```): a picture of
// the path the lesson reads, which GitHub and most Markdown viewers draw. A
// diagram names a function the way the lesson's text does, followed by its
// parentheses inside a quoted label ("ScheduleOne()", "Reconcile(key)").
var (
	// diagramCall is a function a diagram's quoted label names: the identifier
	// right before "(" (the last part of a qualified name such as store.Create).
	diagramCall = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\(`)
	// quotedLabel is one double-quoted label or edge text of a mermaid block.
	quotedLabel = regexp.MustCompile(`"[^"]*"`)
	// codeSpan is one inline code span of a page's text, single backquotes.
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	// identifier is a Go identifier inside a code span.
	identifier = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
)

// diagramName is one function a diagram names, and where.
type diagramName struct {
	name string
	line int
}

// pageDiagrams is what verifyDiagrams reads of a lesson page: how many mermaid
// blocks it has, the functions they name, and every identifier the page's text
// writes in a code span (its tables' cells among them), outside fenced blocks.
type pageDiagrams struct {
	diagrams int
	names    []diagramName
	text     map[string]bool
}

// readPageDiagrams reads the lesson page path. A fence opens with ``` and
// closes with the next line that is ``` alone (indented fences included, as a
// list item's block is).
func readPageDiagrams(path string) (pageDiagrams, error) {
	p := pageDiagrams{text: map[string]bool{}}
	f, err := os.Open(path)
	if err != nil {
		return p, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	inFence, inMermaid := false, false
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			if !inFence {
				inFence = true
				inMermaid = strings.TrimSpace(strings.TrimPrefix(trimmed, "```")) == "mermaid"
				if inMermaid {
					p.diagrams++
				}
			} else if trimmed == "```" {
				inFence, inMermaid = false, false
			}
			continue
		}
		switch {
		case inMermaid:
			for _, label := range quotedLabel.FindAllString(line, -1) {
				for _, m := range diagramCall.FindAllStringSubmatch(label, -1) {
					p.names = append(p.names, diagramName{name: m[1], line: n})
				}
			}
		case !inFence:
			for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
				for _, id := range identifier.FindAllString(m[1], -1) {
					p.text[id] = true
				}
			}
		}
	}
	return p, s.Err()
}

// diagramProblems returns what is wrong with the diagrams of the lesson page
// doc (from root): it has none, or one names a function that the page's text
// and tables never write as code, so the picture and the reading differ.
func diagramProblems(root, doc string) ([]string, int, error) {
	p, err := readPageDiagrams(filepath.Join(root, doc))
	if err != nil {
		return nil, 0, err
	}
	if p.diagrams == 0 {
		return []string{fmt.Sprintf("%s: no diagram: draw the path the lesson reads as a mermaid block (```mermaid), as docs/lessons/01-workqueue.md does, and copy it unchanged into the Japanese twin", doc)}, 0, nil
	}
	var problems []string
	for _, n := range p.names {
		if !p.text[n.name] {
			problems = append(problems, fmt.Sprintf("%s:%d: the diagram names %s(), which the lesson's text and tables never write as code (`%s`): name it where the lesson reads it, or draw what the lesson reads", doc, n.line, n.name, n.name))
		}
	}
	return problems, p.diagrams, nil
}

// verifyDiagrams is make verify-docs' check of the lessons' diagrams: every
// lesson page (the lesson files' doc) draws the path it reads in at least one
// mermaid block, and every function a diagram names is one the page's text or
// tables name as code. The Japanese twin carries the same blocks, which
// hack/jadocs holds equal to the English ones, so it is checked with them.
func verifyDiagrams(root string, w io.Writer) (int, error) {
	lessons, err := kittest.ReadLessons(root)
	if err != nil {
		return 0, err
	}
	var problems []string
	diagrams := 0
	for _, l := range lessons {
		ps, n, err := diagramProblems(root, l.Doc)
		if err != nil {
			return 0, err
		}
		problems = append(problems, ps...)
		diagrams += n
	}
	for _, p := range problems {
		fmt.Fprintln(w, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(w, "%d problem(s) with the lessons' diagrams\n", len(problems))
		return 1, nil
	}
	fmt.Fprintf(w, ">> lessons: %d pages draw %d diagrams, naming only functions their text reads\n", len(lessons), diagrams)
	return 0, nil
}
