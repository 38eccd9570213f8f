package main

import (
	"fmt"
	"strings"
)

// compareHeadings checks that the Japanese page has the English page's
// headings, as many, at the same levels and in the same order, each ending
// with <a id="ANCHOR"></a> where ANCHOR is the English heading's GitHub
// anchor, so that a link page.md#ANCHOR works in both languages. Headings are
// matched by level and anchor; what is left in a gap is paired in order (a
// wrong anchor or level), and the rest is missing or extra.
func compareHeadings(en, ja *page) []problem {
	var problems []problem
	byAnchor := map[string]heading{}
	for _, e := range en.headings {
		byAnchor[e.anchor] = e
	}
	for _, j := range ja.headings {
		if e, ok := byAnchor[j.id]; ok {
			if p, ok := numberAdvice(en, ja, e, j); ok {
				problems = append(problems, p)
			}
		}
	}
	for _, g := range align(len(en.headings), len(ja.headings), func(i, j int) bool {
		return en.headings[i].level == ja.headings[j].level && en.headings[i].anchor == ja.headings[j].id
	}) {
		paired := min(len(g.en), len(g.ja))
		for k := 0; k < paired; k++ {
			problems = append(problems, wrongHeading(en, ja, en.headings[g.en[k]], ja.headings[g.ja[k]]))
		}
		for _, i := range g.en[paired:] {
			problems = append(problems, missingHeading(en, ja, en.headings[i], g.prevJa))
		}
		for _, j := range g.ja[paired:] {
			problems = append(problems, extraHeading(ja, ja.headings[j]))
		}
	}
	return problems
}

// wrongHeading is the problem of a Japanese heading at an English heading's
// place whose anchor or level differs from it.
func wrongHeading(en, ja *page, e, j heading) problem {
	both := fmt.Sprintf("heading %q, at the place of the English heading %s:%d %q", headingLineText(ja, j), en.path, e.line, headingLineText(en, e))
	if j.id != e.anchor {
		have := "ends without an explicit anchor"
		if j.id != "" {
			have = fmt.Sprintf(`ends with <a id="%s"></a>`, j.id)
		}
		return problem{page: ja.path, line: j.line, kind: headingAnchor,
			msg: fmt.Sprintf(`%s, %s: end the line with <a id="%s"></a> (the English heading's GitHub anchor)%s`, both, have, e.anchor, levelAdvice(e, j))}
	}
	return problem{page: ja.path, line: j.line, kind: headingLevel,
		msg: fmt.Sprintf("%s, has level %d where the English one has %d%s", both, j.level, e.level, levelAdvice(e, j))}
}

// levelAdvice tells how to fix a heading's level when it differs from the
// English one; "" when it is the same.
func levelAdvice(e, j heading) string {
	if e.level == j.level {
		return ""
	}
	return fmt.Sprintf("; start it with %q like the English heading", strings.Repeat("#", e.level))
}

// missingHeading is the problem of an English heading that has no Japanese
// heading at its place; prevJa is the last Japanese heading before the gap
// (-1 when none), after which it goes.
func missingHeading(en, ja *page, e heading, prevJa int) problem {
	where, line := "at the top of the page", 1
	if prevJa >= 0 {
		line = ja.headings[prevJa].line
		where = fmt.Sprintf("after the section of heading %q (line %d)", headingLineText(ja, ja.headings[prevJa]), line)
	}
	return problem{page: ja.path, line: line, kind: headingMissing,
		msg: fmt.Sprintf(`the English heading %s:%d %q has no Japanese heading: add the line %q, with the heading translated, %s`,
			en.path, e.line, headingLineText(en, e), fmt.Sprintf(`%s (translation) <a id="%s"></a>`, strings.Repeat("#", e.level), e.anchor), where)}
}

// extraHeading is the problem of a Japanese heading with no English heading
// at its place.
func extraHeading(ja *page, j heading) problem {
	return problem{page: ja.path, line: j.line, kind: headingExtra,
		msg: fmt.Sprintf("heading %q has no English heading at its place (both pages have the same headings, in the same order): remove it, or make it plain text", headingLineText(ja, j))}
}

// headingLineText returns a heading's line as written, without surrounding spaces.
func headingLineText(p *page, h heading) string {
	return strings.TrimSpace(p.lines[h.line-1])
}
