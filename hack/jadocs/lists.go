package main

import (
	"fmt"
	"regexp"
	"strings"
)

// listItem is the first line of one Markdown list item outside code blocks.
type listItem struct {
	// line is the item's line, from 1.
	line int
	// numbered is true for an ordered item ("1. "), false for a bullet ("- ").
	numbered bool
	// indent is how many columns of white space come before the marker: a
	// nested item is indented under its parent.
	indent int
	// under is the index in the page's headings of the last heading before the
	// item; -1 when there is none.
	under int
}

var (
	// listMarker matches the first line of a list item: its indent, then a bullet
	// (-, * or +) or a number with '.' or ')', then at least one space.
	listMarker = regexp.MustCompile(`^([ \t]*)(?:([-*+])|(\d{1,9})[.)])[ \t]+\S`)
	// unspacedMarker matches a line meant as a list item whose marker lacks the
	// space after it ("1.生の...", "-その..."): Markdown reads it as plain text.
	// (A '*' is left out: "*word*" starting a line is emphasis.)
	unspacedMarker = regexp.MustCompile(`^[ \t]*(\d{1,9}\.|-)([^ \t\d.\-])`)
	// sectionNumber is the number a heading starts with ("2.4 ", "3. "), which
	// must be followed by a space to read as a number.
	sectionNumber = regexp.MustCompile(`^(\d+(?:\.\d+)*\.?)(.?)`)
)

// parseListItem reads line, which follows prev, as the first line of a list
// item. As in CommonMark, a number other than 1 does not interrupt a paragraph:
// "5000. items" wrapped to the start of a line is text, unless the line before
// is blank, indented (inside a list item) or itself a list item.
func parseListItem(line, prev string, number, under int) (listItem, bool) {
	m := listMarker.FindStringSubmatch(line)
	if m == nil {
		return listItem{}, false
	}
	if m[3] != "" && strings.TrimLeft(m[3], "0") != "1" && strings.TrimSpace(prev) != "" &&
		prev[0] != ' ' && prev[0] != '\t' && !listMarker.MatchString(prev) {
		return listItem{}, false
	}
	indent := len(strings.ReplaceAll(m[1], "\t", "    "))
	return listItem{line: number, numbered: m[3] != "", indent: indent, under: under}, true
}

// kindName is what a list item is, for messages.
func (it listItem) kindName() string {
	if it.numbered {
		return "a numbered list item"
	}
	return "a bullet list item"
}

// compareLists checks that the Japanese page has the English page's lists:
// under each heading, the same list items, numbered where the English ones are
// numbered and bullets where they are bullets, nested alike (a nested item is
// indented under its parent in both). A translation may reword an item, never
// turn a list into a paragraph: "1.生の..." without a space after "1." is
// text, not a list item, and the rendered page loses its steps. Items are
// matched by heading, kind and nesting; what is left is missing or extra.
func compareLists(en, ja *page) []problem {
	var problems []problem
	nested := func(it listItem) bool { return it.indent > 0 }
	used := map[int]bool{} // the Japanese lines a missing item was paired with
	for _, g := range align(len(en.items), len(ja.items), func(i, j int) bool {
		e, k := en.items[i], ja.items[j]
		return e.under == k.under && e.numbered == k.numbered && nested(e) == nested(k)
	}) {
		for _, i := range g.en {
			problems = append(problems, missingItem(en, ja, en.items[i], used))
		}
		for _, j := range g.ja {
			it := ja.items[j]
			problems = append(problems, problem{page: ja.path, line: it.line, kind: listExtra,
				msg: fmt.Sprintf("%s here has no English list item of its kind at its place in %s (the same lists, numbered or bulleted and nested alike, under the same headings): make it match the English page", it.kindName(), en.path)})
		}
	}
	return problems
}

// missingItem is the problem of an English list item with no Japanese item at
// its place. When a line of the Japanese section not yet in used looks like a
// list item without the space after its marker, it pairs the item with that
// line, adds it to used, and says to add the space.
func missingItem(en, ja *page, e listItem, used map[int]bool) problem {
	from, to := sectionLines(ja, e.under)
	for n := from; n < to; n++ {
		m := unspacedMarker.FindStringSubmatch(ja.prose[n-1])
		if m == nil || used[n] {
			continue
		}
		used[n] = true
		return problem{page: ja.path, line: n, kind: listMissing,
			msg: fmt.Sprintf("%q has no space after %q, so Markdown shows it as plain text, not as %s like %s:%d: write %q",
				truncate(strings.TrimSpace(ja.lines[n-1]), 40), m[1], e.kindName(), en.path, e.line, m[1]+" "+m[2]+"...")}
	}
	line := 1
	if e.under >= 0 && e.under < len(ja.headings) {
		line = ja.headings[e.under].line
	}
	return problem{page: ja.path, line: line, kind: listMissing,
		msg: fmt.Sprintf("the English page has %s at %s:%d that this section lacks: translate it as %s, in the same place", e.kindName(), en.path, e.line, e.kindName())}
}

// sectionLines returns the lines, from 1 and end excluded, of the section under
// heading h of p (h = -1: the lines before the first heading).
func sectionLines(p *page, h int) (from, to int) {
	from, to = 1, len(p.lines)+1
	if h >= 0 && h < len(p.headings) {
		from = p.headings[h].line + 1
	}
	if h+1 < len(p.headings) {
		to = p.headings[h+1].line
	}
	return from, to
}

// numberAdvice is the problem of a Japanese heading whose section number, like
// the English heading's, is not followed by a space ("### 2.4実行する"): the
// number runs into the text.
func numberAdvice(en, ja *page, e, j heading) (problem, bool) {
	em := sectionNumber.FindStringSubmatch(e.text)
	jm := sectionNumber.FindStringSubmatch(j.text)
	if em == nil || em[2] != " " || jm == nil || jm[1] != em[1] || jm[2] == " " {
		return problem{}, false
	}
	return problem{page: ja.path, line: j.line, kind: headingNumber,
		msg: fmt.Sprintf("heading %q: its number %q runs into the text; write a space after it, as the English heading %s:%d does", headingLineText(ja, j), jm[1], en.path, e.line)}, true
}

// truncate returns s cut to at most n characters, with "..." when it was cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}
