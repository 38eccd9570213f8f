package main

import (
	"fmt"
	"strings"
)

// copyAdvice is what to do about a code block that differs from the English one.
const copyAdvice = "copy the English block into the Japanese page unchanged (code blocks are never translated)"

// compareBlocks checks that the Japanese page has the English page's fenced
// code blocks byte for byte, fences included, as many and in the same order.
// Blocks are matched by content; what is left in a gap is paired in order (a
// changed block), and the rest is missing or extra.
func compareBlocks(en, ja *page) []problem {
	var problems []problem
	for _, g := range align(len(en.blocks), len(ja.blocks), func(i, j int) bool {
		return blockText(en.blocks[i]) == blockText(ja.blocks[j])
	}) {
		paired := min(len(g.en), len(g.ja))
		for k := 0; k < paired; k++ {
			problems = append(problems, changedBlock(en, ja, en.blocks[g.en[k]], ja.blocks[g.ja[k]]))
		}
		for _, i := range g.en[paired:] {
			problems = append(problems, missingBlock(en, ja, en.blocks[i]))
		}
		for _, j := range g.ja[paired:] {
			problems = append(problems, problem{page: ja.path, line: ja.blocks[j].line, kind: blockExtra,
				msg: fmt.Sprintf("the code block starting here has no English block at its place in %s: remove it (code blocks are copied from the English page, never added)", en.path)})
		}
	}
	return problems
}

// blockText is a block as written, for comparing.
func blockText(b block) string {
	return strings.Join(b.lines, "\n")
}

// changedBlock is the problem of a Japanese block that differs from the
// English block at its place; it shows the first line that differs in each.
func changedBlock(en, ja *page, e, j block) problem {
	k := 0
	for k < len(e.lines) && k < len(j.lines) && e.lines[k] == j.lines[k] {
		k++
	}
	return problem{page: ja.path, line: j.line + k, kind: blockChanged,
		msg: fmt.Sprintf("the code block starting at %s:%d differs from the English one starting at %s:%d; first difference: %s vs %s: %s",
			ja.path, j.line, en.path, e.line, blockLine(en, e, k), blockLine(ja, j, k), copyAdvice)}
}

// blockLine shows line k of a block with its line number in the page, or says
// that the block ends before it.
func blockLine(p *page, b block, k int) string {
	if k >= len(b.lines) {
		return fmt.Sprintf("%s: (the block ends at line %d)", p.path, b.line+len(b.lines)-1)
	}
	return fmt.Sprintf("%s:%d %q", p.path, b.line+k, b.lines[k])
}

// missingBlock is the problem of an English block with no Japanese copy; it
// names the Japanese heading of the section to add it to.
func missingBlock(en, ja *page, e block) problem {
	where, line := "at the top of the page, before the first heading", 1
	if e.under >= 0 {
		h := en.headings[e.under]
		where = fmt.Sprintf("the section of %q (no Japanese heading has its anchor yet)", headingLineText(en, h))
		for _, jh := range ja.headings {
			if jh.id == h.anchor {
				where, line = fmt.Sprintf("%q (line %d)", headingLineText(ja, jh), jh.line), jh.line
				break
			}
		}
	}
	return problem{page: ja.path, line: line, kind: blockMissing,
		msg: fmt.Sprintf("the English page has a code block the Japanese one lacks (%s:%d, first line %q): add it under %s, in the same order as in the English page",
			en.path, e.line, e.lines[0], where)}
}
