package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// frontDoor is a page a newcomer reads first, with the most it may hold: the
// repository README and its Japanese twin stay short enough that the map of
// the kit comes before any log of runs (the history of runs belongs in
// docs/performance.md).
type frontDoor struct {
	// page is the page's path from the repository root, with slashes.
	page string
	// maxBytes is the most bytes the page may hold; 0 means no bound.
	maxBytes int
	// maxChars is the most characters (Unicode code points) the page may
	// hold; 0 means no bound. Japanese text is counted in characters, as a
	// reader counts it, since each takes three bytes in UTF-8.
	maxChars int
}

// frontDoors are the pages held to a size, and maxCell is the most characters
// a cell of one of their tables may hold: one current figure per row, with
// older runs in docs/performance.md.
var frontDoors = []frontDoor{
	{page: "README.md", maxBytes: 12288},
	{page: "docs/ja/README.md", maxChars: 11000},
}

const maxCell = 200

// frontDoorPages names the front doors, for the line that says they passed.
func frontDoorPages() string {
	names := make([]string, len(frontDoors))
	for i, d := range frontDoors {
		names[i] = d.page
	}
	return strings.Join(names, ", ")
}

// checkFrontDoors checks each page of doors under root: its size, and the
// length of every cell of its tables. A page that does not exist is left to
// the other checks (a pair's missing page is reported there).
func checkFrontDoors(root string, doors []frontDoor) ([]problem, error) {
	var problems []problem
	for _, d := range doors {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(d.page)))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading a front door: %w", err)
		}
		problems = append(problems, checkSize(d, data)...)
		problems = append(problems, checkCells(parsePage(d.page, string(data)))...)
	}
	return problems, nil
}

// checkSize reports a page larger than its bounds.
func checkSize(d frontDoor, data []byte) []problem {
	const advice = "keep one current figure per row of its tables (older runs go to docs/performance.md), " +
		"and link to where a command's workings are told (its script's header, test/README.md) instead of retelling them"
	var problems []problem
	if d.maxBytes > 0 && len(data) > d.maxBytes {
		problems = append(problems, problem{page: d.page, kind: pageTooLarge,
			msg: fmt.Sprintf("%d bytes, more than the %d a front door may hold: %s", len(data), d.maxBytes, advice)})
	}
	if n := utf8.RuneCount(data); d.maxChars > 0 && n > d.maxChars {
		problems = append(problems, problem{page: d.page, kind: pageTooLarge,
			msg: fmt.Sprintf("%d characters, more than the %d a front door may hold: %s", n, d.maxChars, advice)})
	}
	return problems
}

// checkCells reports every table cell of p, outside code blocks, longer than
// maxCell characters.
func checkCells(p *page) []problem {
	var problems []problem
	for i, line := range p.prose {
		for col, cell := range tableCells(line) {
			if n := utf8.RuneCountInString(cell); n > maxCell {
				problems = append(problems, problem{page: p.path, line: i + 1, kind: cellTooLong,
					msg: fmt.Sprintf("the table cell %.40q... (column %d) holds %d characters, more than %d: give the "+
						"current figure and its condition only, and move older or loaded-machine runs to docs/performance.md",
						cell, col+1, n, maxCell)})
			}
		}
	}
	return problems
}

// tableCells returns the cells of a Markdown table row, trimmed, or nil when
// line is no table row (it does not start with '|'). A pipe escaped as "\|"
// belongs to its cell.
func tableCells(line string) []string {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "|") {
		return nil
	}
	t = t[1:]
	if strings.HasSuffix(t, "|") && !strings.HasSuffix(t, `\|`) {
		t = t[:len(t)-1]
	}
	var cells []string
	start := 0
	for i := 0; i < len(t); i++ {
		switch {
		case t[i] == '\\':
			i++ // an escaped character, "\|" included, stays in its cell
		case t[i] == '|':
			cells = append(cells, strings.TrimSpace(t[start:i]))
			start = i + 1
		}
	}
	return append(cells, strings.TrimSpace(t[start:]))
}
