package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// page is what the checks read in one Markdown page: only the parts of
// Markdown the kit's docs use, read line by line.
type page struct {
	// path is the page's path from the repository root, with slashes.
	path string
	// lines are the page's lines, without their newline.
	lines []string
	// headings are its ATX headings outside code blocks, in order.
	headings []heading
	// blocks are its fenced code blocks, in order.
	blocks []block
	// items are the first lines of its list items outside code blocks, in order.
	items []listItem
	// prose are its lines outside code blocks; a code line is "" here.
	prose []string
	// links are its Markdown links outside code blocks and code spans.
	links []link
	// anchors are the anchors a link may point at in this page: its headings'
	// GitHub anchors and its explicit <a id="..."> (or name) anchors.
	anchors map[string]bool
}

// heading is one ATX heading (a line of 1 to 6 '#', a space and its text).
type heading struct {
	// line is the heading's line, from 1.
	line int
	// level is the number of '#'.
	level int
	// text is the heading's text without the '#', a closing sequence of '#'
	// and a trailing explicit anchor.
	text string
	// id is the id of the explicit <a id="..."></a> the heading ends with, ""
	// when it ends with none.
	id string
	// anchor is the anchor GitHub makes of text, made unique in the page.
	anchor string
}

// block is one fenced code block, its fences included.
type block struct {
	// line is the line of its opening fence, from 1.
	line int
	// lines are its lines, opening and closing fence included, exactly as written.
	lines []string
	// under is the index in the page's headings of the last heading before the
	// block; -1 when there is none.
	under int
}

// link is one Markdown link or image, [text](dest).
type link struct {
	// line is the line of its destination, from 1.
	line int
	// dest is the destination as written, #anchor included.
	dest string
}

var (
	// headingLine matches an ATX heading: up to three spaces, 1 to 6 '#', then
	// nothing or a space and the text.
	headingLine = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$`)
	// closingHashes is the optional closing sequence of an ATX heading.
	closingHashes = regexp.MustCompile(`(?:^|[ \t]+)#+$`)
	// trailingID is the explicit anchor a Japanese heading ends with.
	trailingID = regexp.MustCompile(`^(.*?)[ \t]*<a id="([^"]*)"></a>$`)
	// explicitAnchor is an HTML anchor anywhere in the prose.
	explicitAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	// htmlTag is any inline HTML tag, which GitHub leaves out of a heading's anchor.
	htmlTag = regexp.MustCompile(`<[^>]*>`)
	// inlineLink is a link in a heading, whose text alone counts for the anchor.
	inlineLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	// linkDest is the destination of an inline link or image: "](" up to ")",
	// with an optional title.
	linkDest = regexp.MustCompile(`\]\(\s*<?([^()\s<>]+)>?(?:\s+"[^"]*")?\s*\)`)
)

// readPage reads and parses the page at rel, a path from root with slashes.
// Its error is the os error when the page does not exist.
func readPage(root, rel string) (*page, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	return parsePage(rel, string(data)), nil
}

// parsePage splits text into lines and reads its headings, list items, code
// blocks, links and anchors. Lines inside a fenced code block are code, never
// headings, list items or links; a block left open runs to the end of the
// page, as in CommonMark.
func parsePage(path, text string) *page {
	p := &page{path: path, lines: strings.Split(text, "\n"), anchors: map[string]bool{}}
	prose := make([]string, len(p.lines)) // the lines outside code blocks; code lines stay empty
	var open *block
	var fence string
	for i, line := range p.lines {
		if open != nil {
			open.lines = append(open.lines, line)
			if closesFence(line, fence) {
				p.blocks = append(p.blocks, *open)
				open = nil
			}
			continue
		}
		if f, ok := openingFence(line); ok {
			open, fence = &block{line: i + 1, lines: []string{line}, under: len(p.headings) - 1}, f
			continue
		}
		prose[i] = line
		if h, ok := parseHeading(line, i+1); ok {
			p.headings = append(p.headings, h)
		}
		prev := ""
		if i > 0 {
			prev = prose[i-1]
		}
		if it, ok := parseListItem(line, prev, i+1, len(p.headings)-1); ok {
			p.items = append(p.items, it)
		}
	}
	if open != nil {
		p.blocks = append(p.blocks, *open)
	}
	p.prose = prose
	p.setAnchors(prose)
	p.links = findLinks(prose)
	return p
}

// openingFence reports whether line opens a fenced code block (indented or
// not: list items indent theirs) and returns its fence: three or more '`' or
// '~'. A backtick fence's info string may not hold a backtick.
func openingFence(line string) (string, bool) {
	t := strings.TrimLeft(line, " \t")
	if t == "" || (t[0] != '`' && t[0] != '~') {
		return "", false
	}
	n := len(t) - len(strings.TrimLeft(t, t[:1]))
	if n < 3 || (t[0] == '`' && strings.Contains(t[n:], "`")) {
		return "", false
	}
	return t[:n], true
}

// closesFence reports whether line closes the block fence opened: the same
// character, at least as many, and nothing after them but spaces.
func closesFence(line, fence string) bool {
	t := strings.TrimLeft(line, " \t")
	rest := strings.TrimLeft(t, fence[:1])
	return len(t)-len(rest) >= len(fence) && strings.TrimSpace(rest) == ""
}

// parseHeading reads line as an ATX heading, with its explicit trailing
// anchor if it has one; the page's GitHub anchors are set later.
func parseHeading(line string, number int) (heading, bool) {
	m := headingLine.FindStringSubmatch(line)
	if m == nil {
		return heading{}, false
	}
	text := closingHashes.ReplaceAllString(m[2], "")
	h := heading{line: number, level: len(m[1]), text: text}
	if id := trailingID.FindStringSubmatch(text); id != nil {
		h.text, h.id = id[1], id[2]
	}
	return h, true
}

// setAnchors gives each heading its GitHub anchor and records every anchor of
// the page: the headings' and the explicit ones in its prose.
func (p *page) setAnchors(prose []string) {
	s := newSlugger()
	for i := range p.headings {
		p.headings[i].anchor = s.slug(p.headings[i].text)
		p.anchors[p.headings[i].anchor] = true
	}
	for _, m := range explicitAnchor.FindAllStringSubmatch(strings.Join(prose, "\n"), -1) {
		p.anchors[m[1]] = true
	}
}

// findLinks returns the inline links and images of the prose lines, leaving
// out what code spans hold. A link's text may run over several lines.
func findLinks(prose []string) []link {
	text := blankCodeSpans(strings.Join(prose, "\n"))
	var links []link
	for _, m := range linkDest.FindAllStringSubmatchIndex(text, -1) {
		line := strings.Count(text[:m[2]], "\n") + 1
		links = append(links, link{line: line, dest: text[m[2]:m[3]]})
	}
	return links
}

// blankCodeSpans returns text with the inside of every code span (a run of
// backquotes up to the next run of the same length) turned into spaces,
// newlines kept, so that nothing in a span reads as a link.
func blankCodeSpans(text string) string {
	b := []byte(text)
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		n := backquoteRun(b, i)
		end := closingRun(b, i+n, n)
		if end < 0 {
			i += n
			continue
		}
		for j := i + n; j < end; j++ {
			if b[j] != '\n' {
				b[j] = ' '
			}
		}
		i = end + n
	}
	return string(b)
}

// backquoteRun returns how many backquotes follow one another from b[i].
func backquoteRun(b []byte, i int) int {
	n := 0
	for i+n < len(b) && b[i+n] == '`' {
		n++
	}
	return n
}

// closingRun returns where, from b[from], the next run of exactly n
// backquotes starts; -1 when there is none.
func closingRun(b []byte, from, n int) int {
	for j := from; j < len(b); {
		if b[j] != '`' {
			j++
			continue
		}
		m := backquoteRun(b, j)
		if m == n {
			return j
		}
		j += m
	}
	return -1
}

// slugger makes GitHub's anchors for the headings of one page: the second
// heading with the same anchor gets "-1", the third "-2", and so on.
type slugger struct {
	seen map[string]int
}

// newSlugger returns a slugger for a new page.
func newSlugger() *slugger {
	return &slugger{seen: map[string]int{}}
}

// slug returns the anchor of a heading's text, unique in the page so far (as
// GitHub's github-slugger does).
func (s *slugger) slug(text string) string {
	base := anchor(text)
	result := base
	for {
		if _, taken := s.seen[result]; !taken {
			break
		}
		s.seen[base]++
		result = base + "-" + strconv.Itoa(s.seen[base])
	}
	s.seen[result] = 0
	return result
}

// anchor is GitHub's anchor for a heading's text before duplicates are
// counted: the text as rendered (HTML tags out, a link's text only), lower
// case, every character but letters, digits, spaces, '-' and '_' dropped,
// each space turned into '-'. "3. Run it: `make run-sample`" becomes
// "3-run-it-make-run-sample".
func anchor(text string) string {
	text = htmlTag.ReplaceAllString(text, "")
	text = inlineLink.ReplaceAllString(text, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
