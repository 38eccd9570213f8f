// Command jadocs checks the Japanese docs (docs/ja/) against the English pages
// they translate, so that a page and its twin cannot drift apart: for every
// English page with a twin (pairs.go: docs/X.md's is docs/ja/X.md, with two
// exceptions said there) it checks that the Japanese page exists, that both
// have the same headings and each Japanese heading carries the English one's
// anchor (and its section number, followed by a space), that the Japanese page
// has the English page's lists, numbered or bulleted and nested alike under the
// same headings (so no step list renders as a paragraph), that their fenced code
// blocks are byte for byte the same, that the Japanese page's relative links
// resolve (to the Japanese twins where there are some) and that both pages link
// to each other in their first lines. It also holds the front doors, README.md
// and its twin, to the size and the table cells frontdoor.go allows. It prints
// one line per problem, with the page, the line and what to do, and exits 1
// when there is any.
// `make verify-docs` at the repository root runs it:
//
//	go run ./hack/jadocs            # from the repository root
//	go run ./hack/jadocs -root DIR  # another copy of the docs
//
// The files, in reading order: pairs.go (which page is whose twin: the rule and
// its exceptions; no table names the pages), markdown.go (what the checks read in a
// page: headings, list items, code blocks, links, anchors), headings.go,
// lists.go, blocks.go and links.go (one check each), frontdoor.go (the front
// doors' sizes and table cells), align.go (matches two pages' headings, list
// items or blocks so that one missing does not shift the rest) and problem.go
// (what a check reports). docs/ja/README.md gives
// translators the rules and the glossary.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	root := flag.String("root", ".", "the repository root (holds docs/ and README.md)")
	flag.Parse()
	ps, err := findPairs(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "jadocs: finding the pages under docs/:", err)
		os.Exit(2)
	}
	code, err := run(*root, ps, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "jadocs:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

// run checks every pair of ps under root, prints each problem to w and
// returns the exit code: 0 when there is none, 1 otherwise. An error is a page
// it could not read for another reason than its absence.
func run(root string, ps []pair, w io.Writer) (int, error) {
	problems, err := checkAll(root, ps)
	if err != nil {
		return 0, err
	}
	doors, err := checkFrontDoors(root, frontDoors)
	if err != nil {
		return 0, err
	}
	problems = append(problems, doors...)
	for _, p := range problems {
		fmt.Fprintln(w, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(w, "jadocs: %d problem(s) between the English pages and their Japanese twins (docs/ja/) or in the front doors; the rules are in docs/ja/README.md and hack/jadocs/frontdoor.go\n", len(problems))
		return 1, nil
	}
	fmt.Fprintf(w, ">> docs/ja: %d Japanese pages match their English pages (headings, anchors, lists, code blocks, links)\n", len(ps))
	fmt.Fprintf(w, ">> front doors (%s): within their sizes, every table cell at most %d characters\n", frontDoorPages(), maxCell)
	return 0, nil
}

// checkAll checks each pair in turn and returns every problem found, in the
// order of the table.
func checkAll(root string, ps []pair) ([]problem, error) {
	var all []problem
	for _, p := range ps {
		found, err := checkPair(root, p, ps)
		if err != nil {
			return nil, err
		}
		all = append(all, found...)
	}
	return all, nil
}

// checkPair runs every check on one pair: when the Japanese page is missing,
// only that and the English page's language switch are reported. ps is the
// whole table, which the link check needs to know which pages have twins.
func checkPair(root string, p pair, ps []pair) ([]problem, error) {
	en, err := readPage(root, p.english)
	if err != nil {
		return nil, fmt.Errorf("reading the English page: %w", err)
	}
	problems := englishSwitch(en, p)
	ja, err := readPage(root, p.japanese)
	if os.IsNotExist(err) {
		return append([]problem{missingPage(p)}, problems...), nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the Japanese page: %w", err)
	}
	problems = append(problems, japaneseSwitch(ja, p)...)
	problems = append(problems, compareHeadings(en, ja)...)
	problems = append(problems, compareLists(en, ja)...)
	problems = append(problems, compareBlocks(en, ja)...)
	links, err := checkLinks(root, p.english, ja, ps)
	if err != nil {
		return nil, err
	}
	return append(problems, links...), nil
}
