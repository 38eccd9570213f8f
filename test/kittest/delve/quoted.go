package delve

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// A quoted stack is a call path a lesson page shows as delve's `stack` command
// prints it, marked so that the lesson's checks can take it again from the
// running program: a line
//
//	<!-- stack: NAME -->
//
// right before the fenced block that holds delve's output. The block's frame
// lines, "N  0x... in FUNC" (tab-indented under "Created by Goroutine N:" for
// the ancestors `stack -a` prints), are the quoted frames, innermost first;
// every other line of the block (the delve commands, "at FILE:LINE",
// "(truncated)") is left alone, so that addresses and paths may change freely.
// The frames' numbers must run on as delve prints them (0, 1, 2, ... and from 0
// again under each ancestor), so that a frame line taken out of the quote is
// seen at once.

// QuotedStack is one stack a lesson page quotes.
type QuotedStack struct {
	// Doc is the page, as ReadQuotedStack was given it (a path from the
	// repository root, such as docs/lessons/04-changing-kubernetes.md).
	Doc string
	// Line is the 1-based line of the block's first frame in Doc.
	Line int
	// Name is the marker's NAME.
	Name string
	// Frames are the function names of the block's frame lines, in order
	// (innermost first, as delve prints them).
	Frames []string
}

// Where is the quote's place, Doc:Line, as a message names it.
func (q QuotedStack) Where() string {
	return fmt.Sprintf("%s:%d", q.Doc, q.Line)
}

var (
	// stackMarker is the marker line before a quoted stack's block.
	stackMarker = regexp.MustCompile(`^\s*<!--\s*stack:\s*(\S+)\s*-->\s*$`)
	// frameLine is a frame of delve's stack output: its number, its PC, and the
	// function.
	frameLine = regexp.MustCompile(`^\s*(\d+)\s+0x[0-9a-fA-F]+\s+in\s+(\S+)\s*$`)
	// ancestorLine starts the frames of an ancestor goroutine (stack -a), whose
	// numbers start again at 0.
	ancestorLine = regexp.MustCompile(`^\s*Created by Goroutine \d+:\s*$`)
)

// ReadQuotedStack reads the stack marked NAME from the lesson page doc (a path
// from the repository root, or an absolute one). A page without the marker,
// a marker not followed by a fenced block, or a block with no frame line is an
// error that names doc and NAME.
func ReadQuotedStack(doc, name string) (QuotedStack, error) {
	stacks, err := ReadQuotedStacks(doc)
	if err != nil {
		return QuotedStack{}, err
	}
	for _, q := range stacks {
		if q.Name == name {
			return q, nil
		}
	}
	return QuotedStack{}, fmt.Errorf("%s has no quoted stack %s: put the line <!-- stack: %s --> right before the fenced block of delve's stack output it names", doc, name, name)
}

// ReadQuotedStacks reads every stack doc (as ReadQuotedStack takes it) marks,
// in the page's order. A marker not followed by a fenced block with frames, or
// a name marked twice, is an error that names doc, the line and the name.
func ReadQuotedStacks(doc string) ([]QuotedStack, error) {
	return ReadQuotedStacksIn(kittest.RepoRoot(), doc)
}

// ReadQuotedStacksIn is ReadQuotedStacks with doc relative to root, another
// copy of the repository (make verify-docs' -root).
func ReadQuotedStacksIn(root, doc string) ([]QuotedStack, error) {
	path := doc
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, doc)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the lesson page %s: %w", doc, err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the lesson page %s: %w", doc, err)
	}
	return parseQuotedStacks(doc, lines)
}

// parseQuotedStacks finds the marked stacks in a page's lines.
func parseQuotedStacks(doc string, lines []string) ([]QuotedStack, error) {
	var stacks []QuotedStack
	seen := map[string]int{}
	for i := 0; i < len(lines); i++ {
		m := stackMarker.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		name, markerLine := m[1], i+1
		if prev, ok := seen[name]; ok {
			return nil, fmt.Errorf("%s:%d: the stack %s is marked a second time (first at line %d): give each quoted stack a name of its own", doc, markerLine, name, prev)
		}
		seen[name] = markerLine
		j := i + 1
		if j >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[j]), "```") {
			return nil, fmt.Errorf("%s:%d: the marker of the stack %s is not followed by a fenced block: put <!-- stack: %s --> on the line right before the ``` that opens delve's stack output", doc, markerLine, name, name)
		}
		fence := strings.TrimSpace(lines[j])
		fence = fence[:len(fence)-len(strings.TrimLeft(fence, "`"))]
		q := QuotedStack{Doc: doc, Name: name}
		closed := false
		next := 0 // the number delve gives the next frame
		for j++; j < len(lines); j++ {
			if strings.HasPrefix(strings.TrimSpace(lines[j]), fence) {
				closed = true
				break
			}
			if ancestorLine.MatchString(lines[j]) {
				next = 0
				continue
			}
			fm := frameLine.FindStringSubmatch(lines[j])
			if fm == nil {
				continue
			}
			// A frame line taken out of the quote by hand leaves a gap in
			// delve's numbers: the quote no longer says what delve prints.
			if n, _ := strconv.Atoi(fm[1]); n != next {
				return nil, fmt.Errorf("%s:%d: the stack %s numbers this frame %d where delve's next frame is %d: a frame line is missing or out of place; quote delve's stack output whole (a shorter stack N cuts it at the end)", doc, j+1, name, n, next)
			}
			next++
			if q.Line == 0 {
				q.Line = j + 1
			}
			q.Frames = append(q.Frames, fm[2])
		}
		if !closed {
			return nil, fmt.Errorf("%s:%d: the block after the marker of the stack %s is never closed", doc, markerLine, name)
		}
		if len(q.Frames) == 0 {
			return nil, fmt.Errorf("%s:%d: the block after the marker of the stack %s has no frame line (\"0  0x... in FUNCTION\", as delve's stack prints it)", doc, markerLine, name)
		}
		stacks = append(stacks, q)
		i = j
	}
	return stacks, nil
}

// RequireQuotedStack fails the test unless every frame q quotes appears in
// seen (function names, innermost first, as Stack returns them) in the same
// order; seen may hold more frames in between and around. The failure names
// the first quoted frame not found (or found out of order), the frames seen,
// and the lesson line to update.
func RequireQuotedStack(t testing.TB, q QuotedStack, seen []string) {
	t.Helper()
	if msg := compareQuoted(q, seen); msg != "" {
		t.Fatal(msg)
	}
	t.Logf("the stack %s quoted at %s is what the program shows: %s", q.Name, q.Where(), strings.Join(q.Frames, " <- "))
}

// compareQuoted returns why seen does not show q's frames in order, or "".
func compareQuoted(q QuotedStack, seen []string) string {
	at := 0 // the first frame of seen the next quoted frame may match
	for k, want := range q.Frames {
		found := -1
		for i := at; i < len(seen); i++ {
			if seen[i] == want {
				found = i
				break
			}
		}
		if found >= 0 {
			at = found + 1
			continue
		}
		why := "which the running program's stack does not show"
		for i := 0; i < at && i < len(seen); i++ {
			if seen[i] == want {
				why = fmt.Sprintf("which the running program's stack shows out of order (at frame %d, before %s)", i, q.Frames[k-1])
				break
			}
		}
		return fmt.Sprintf("the stack %s quoted at %s expects frame %d of %d, %s, %s. The program stopped with these frames, innermost first:\n  %s\nupdate the quote at %s (take the stack again as the lesson does, and copy delve's output).",
			q.Name, q.Where(), k, len(q.Frames), want, why, numbered(seen), q.Where())
	}
	return ""
}

// numbered lists frames one a line with their numbers, as delve does.
func numbered(frames []string) string {
	if len(frames) == 0 {
		return "(none)"
	}
	lines := make([]string, len(frames))
	for i, f := range frames {
		lines[i] = fmt.Sprintf("%d  %s", i, f)
	}
	return strings.Join(lines, "\n  ")
}
