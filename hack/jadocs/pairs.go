package main

import (
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// pair is one English page and its Japanese twin, both relative to the
// repository root, with a slash between folders.
type pair struct {
	english, japanese string
}

// japaneseDir is where the twins live: docs/X.md's twin is docs/ja/X.md.
const japaneseDir = "docs/ja/"

// exceptions are the pages whose twin the rule docs/X.md <-> docs/ja/X.md does
// not give, the one place that says so: the repository's README, which is no
// page of docs/, and the lesson path, docs/README.md, whose twin cannot be
// docs/ja/README.md since that is the repository README's.
var exceptions = []pair{
	{"README.md", "docs/ja/README.md"},
	{"docs/README.md", "docs/ja/lesson-path.md"},
}

// findPairs returns every English page under root that has a Japanese twin:
// the exceptions whose English page exists, then every other Markdown page
// under docs/ but docs/ja/, each paired by the rule docs/X.md <-> docs/ja/X.md,
// in path order. A new page is paired by being written; no table names it.
func findPairs(root string) ([]pair, error) {
	var ps []pair
	for _, e := range exceptions {
		if exists(root, e.english) {
			ps = append(ps, e)
		}
	}
	var pages []string
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel+"/" == japaneseDir {
				return filepath.SkipDir
			}
			return nil
		}
		if path.Ext(rel) == ".md" && !slices.ContainsFunc(exceptions, func(e pair) bool { return e.english == rel }) {
			pages = append(pages, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(pages)
	for _, p := range pages {
		ps = append(ps, pair{p, japaneseDir + strings.TrimPrefix(p, "docs/")})
	}
	return ps, nil
}

// twinOf returns the Japanese twin of the English page at path (relative to
// the repository root) and whether it has one.
func twinOf(path string, ps []pair) (string, bool) {
	for _, p := range ps {
		if p.english == path {
			return p.japanese, true
		}
	}
	return "", false
}
