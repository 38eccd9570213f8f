package main

import "fmt"

// kind says which rule a problem breaks; the tests check problems by kind.
type kind string

// The kinds of problem, one per rule of the checks.
const (
	// pageMissing: the Japanese page does not exist.
	pageMissing kind = "page missing"
	// headingMissing: an English heading has no Japanese heading at its place.
	headingMissing kind = "heading missing"
	// headingExtra: a Japanese heading has no English heading at its place.
	headingExtra kind = "heading extra"
	// headingAnchor: the Japanese heading at an English one's place does not
	// end with that heading's anchor.
	headingAnchor kind = "heading anchor"
	// headingLevel: the Japanese heading has another level than the English one.
	headingLevel kind = "heading level"
	// headingNumber: a Japanese heading's section number runs into its text.
	headingNumber kind = "heading number"
	// listMissing: an English list item has no Japanese list item at its place.
	listMissing kind = "list item missing"
	// listExtra: a Japanese list item has no English list item at its place.
	listExtra kind = "list item extra"
	// blockChanged: a code block differs from the English one at its place.
	blockChanged kind = "code block changed"
	// blockMissing: an English code block has no Japanese copy.
	blockMissing kind = "code block missing"
	// blockExtra: a Japanese code block has no English original.
	blockExtra kind = "code block extra"
	// linkBroken: a relative link points at no file.
	linkBroken kind = "link broken"
	// linkToEnglish: a link points at an English page that has a Japanese twin.
	linkToEnglish kind = "link to English page"
	// anchorMissing: a link's #anchor is not an anchor of the page it points into.
	anchorMissing kind = "anchor missing"
	// switchMissing: a page lacks the link to the other language in its first lines.
	switchMissing kind = "language switch missing"
	// pageTooLarge: a front door (README.md, docs/ja/README.md) is over its size.
	pageTooLarge kind = "page too large"
	// cellTooLong: a table cell of a front door is over maxCell characters.
	cellTooLong kind = "table cell too long"
)

// problem is one thing a check found wrong, in the page to fix.
type problem struct {
	// page is the page to edit, from the repository root.
	page string
	// line is where in the page, from 1; 0 means the page as a whole.
	line int
	kind kind
	// msg says what is wrong and what to do, in a sentence or two.
	msg string
}

// String prints a problem as page:line: message, the form editors jump to.
func (p problem) String() string {
	if p.line == 0 {
		return fmt.Sprintf("%s: %s", p.page, p.msg)
	}
	return fmt.Sprintf("%s:%d: %s", p.page, p.line, p.msg)
}

// missingPage is the problem of a pair whose Japanese page does not exist.
func missingPage(p pair) problem {
	return problem{page: p.japanese, kind: pageMissing,
		msg: fmt.Sprintf("does not exist: translate %s into %s; see docs/ja/README.md", p.english, p.japanese)}
}
