package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// switchLines is how many lines from the top of a page its language switch
// may be in: the title, a blank line, the switch.
const switchLines = 5

// checkLinks checks every relative link of the Japanese page: its file exists,
// it is not an English page that has a Japanese twin, and its #anchor, if
// any, is an anchor of the page it points into (the page itself for a bare
// #anchor); en is the English page, from the repository root. Links with a scheme (http, https, mailto) are not checked, nor
// the language switches, which japaneseSwitch checks. Links to a Japanese
// twin not written yet are one problem per twin, at the first of them.
func checkLinks(root, en string, ja *page, ps []pair) ([]problem, error) {
	var problems []problem
	pages := map[string]*page{ja.path: ja}
	missing := map[string]int{}  // a missing file -> its problem's index
	lastLine := map[string]int{} // a missing file -> the last line its problem names
	for _, l := range ja.links {
		if hasScheme(l.dest) || isSwitch(ja, l) {
			continue
		}
		target, frag, _ := strings.Cut(l.dest, "#")
		if target != "" {
			target = path.Join(path.Dir(ja.path), target)
			if k, seen := missing[target]; seen {
				if lastLine[target] != l.line {
					problems[k].msg += fmt.Sprintf("; also line %d", l.line)
					lastLine[target] = l.line
				}
				continue
			}
			if p, bad := fileProblem(root, en, ja, l, target, ps); bad {
				if p.kind == linkBroken {
					missing[target], lastLine[target] = len(problems), l.line
				}
				problems = append(problems, p)
				continue
			}
		} else {
			target = ja.path
		}
		if frag == "" || !strings.HasSuffix(target, ".md") {
			continue
		}
		into, err := cachedPage(root, target, pages)
		if err != nil {
			return nil, err
		}
		if !into.anchors[frag] {
			advice := "links keep the English anchors: check the English page's heading and the <a id> of the page it points into"
			if dest, ok := meantDest(root, en, ja, l, target, ps); ok {
				advice = fmt.Sprintf("the link copied from the English page meant another page: use %q", dest)
			}
			problems = append(problems, problem{page: ja.path, line: l.line, kind: anchorMissing,
				msg: fmt.Sprintf("link %q: %s has no anchor %q (neither a heading's nor an <a id>); %s", l.dest, target, frag, advice)})
		}
	}
	return problems, nil
}

// isSwitch reports whether l is a language switch, [English](...) or
// [日本語](...), in the first lines of the page.
func isSwitch(pg *page, l link) bool {
	if l.line > switchLines {
		return false
	}
	for _, re := range []*regexp.Regexp{englishLink, japaneseLink} {
		for _, m := range re.FindAllStringSubmatch(pg.lines[l.line-1], -1) {
			if m[1] == l.dest {
				return true
			}
		}
	}
	return false
}

// hasScheme reports whether a link's destination is a URL (http, https,
// mailto), not a path in the repository.
func hasScheme(dest string) bool {
	for _, s := range []string{"http://", "https://", "mailto:"} {
		if strings.HasPrefix(dest, s) {
			return true
		}
	}
	return false
}

// fileProblem checks the file a link points at (target, from the repository
// root): it must exist and, when it is an English page with a Japanese twin,
// be that twin instead. It reports the problem and true, or false when the
// link is good. en is the English page, whose folder tells what a link copied
// from it meant.
func fileProblem(root, en string, ja *page, l link, target string, ps []pair) (problem, bool) {
	if strings.HasPrefix(target, "../") || !exists(root, target) {
		return problem{page: ja.path, line: l.line, kind: linkBroken,
			msg: fmt.Sprintf("link %q points at %s, which does not exist: %s", l.dest, target, missingAdvice(root, en, ja, l, target, ps))}, true
	}
	if twin, ok := twinOf(target, ps); ok {
		return problem{page: ja.path, line: l.line, kind: linkToEnglish,
			msg: fmt.Sprintf("link %q points at the English page %s, which has a Japanese twin: use %q", l.dest, target, withFragment(relative(ja.path, twin), l.dest))}, true
	}
	return problem{}, false
}

// missingAdvice says what to do about a link to a missing file: use the path
// the link meant when it was copied from the English page, if that differs;
// else translate the page when it is a Japanese twin not written yet; else
// rewrite the path for the Japanese page's folder.
func missingAdvice(root, en string, ja *page, l link, target string, ps []pair) string {
	if dest, ok := meantDest(root, en, ja, l, target, ps); ok {
		return fmt.Sprintf("write the path from the Japanese page's folder: use %q", dest)
	}
	for _, p := range ps {
		if p.japanese == target {
			return fmt.Sprintf("it is the Japanese twin of %s, not translated yet (translate it; see docs/ja/README.md)", p.english)
		}
	}
	return "write the path from the Japanese page's folder (docs/ja/ is one level deeper than docs/, docs/ja/lessons/ than docs/lessons/)"
}

// meantDest returns the destination a link of the Japanese page should have
// when, read from the English page's folder (as if copied from en unchanged),
// it reaches an existing file other than target: that file, or its Japanese
// twin, from the Japanese page's folder, with the link's #anchor.
func meantDest(root, en string, ja *page, l link, target string, ps []pair) (string, bool) {
	dest, _, _ := strings.Cut(l.dest, "#")
	meant := path.Join(path.Dir(en), dest)
	if strings.HasPrefix(meant, "../") || !exists(root, meant) {
		return "", false
	}
	if twin, ok := twinOf(meant, ps); ok {
		meant = twin
	}
	if meant == target {
		return "", false
	}
	return withFragment(relative(ja.path, meant), l.dest), true
}

// exists reports whether the file or folder at rel (from root) exists.
func exists(root, rel string) bool {
	_, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
	return err == nil
}

// relative returns the path to target (from the repository root) as a link
// in the page at from writes it.
func relative(from, target string) string {
	rel, err := filepath.Rel(filepath.Dir(filepath.FromSlash(from)), filepath.FromSlash(target))
	if err != nil {
		return target
	}
	return filepath.ToSlash(rel)
}

// withFragment appends dest's #anchor, if it has one, to p.
func withFragment(p, dest string) string {
	if _, frag, ok := strings.Cut(dest, "#"); ok {
		return p + "#" + frag
	}
	return p
}

// cachedPage returns the page at rel, read once per run of checkLinks.
func cachedPage(root, rel string, pages map[string]*page) (*page, error) {
	if p, ok := pages[rel]; ok {
		return p, nil
	}
	p, err := readPage(root, rel)
	if err != nil {
		return nil, err
	}
	pages[rel] = p
	return p, nil
}

var (
	// englishLink is the Japanese page's switch to its English page.
	englishLink = regexp.MustCompile(`\[English\]\(([^)\s]+)\)`)
	// japaneseLink is the English page's switch to its Japanese twin.
	japaneseLink = regexp.MustCompile(`\[日本語\]\(([^)\s]+)\)`)
)

// japaneseSwitch checks that the Japanese page links to its English page in
// its first lines, as [English](path).
func japaneseSwitch(ja *page, p pair) []problem {
	problems := languageSwitch(ja, englishLink, "[English]", p.english)
	for i, line := range ja.lines[:min(switchLines, len(ja.lines))] {
		if japaneseLink.MatchString(line) {
			problems = append(problems, problem{page: ja.path, line: i + 1, kind: switchMissing,
				msg: "a [日本語](...) switch, copied with the English page: the Japanese page has only [English](...); remove it"})
		}
	}
	return problems
}

// englishSwitch checks that the English page links to its Japanese twin in
// its first lines, as [日本語](path).
func englishSwitch(en *page, p pair) []problem {
	return languageSwitch(en, japaneseLink, "[日本語]", p.japanese)
}

// languageSwitch checks that one of the first lines of pg holds a link
// matching re (text label) that points at other, from the repository root.
func languageSwitch(pg *page, re *regexp.Regexp, label, other string) []problem {
	want := relative(pg.path, other)
	for i, line := range pg.lines[:min(switchLines, len(pg.lines))] {
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if path.Join(path.Dir(pg.path), m[1]) != other {
			return []problem{{page: pg.path, line: i + 1, kind: switchMissing,
				msg: fmt.Sprintf("the language switch %s(%s) points elsewhere than %s: write %s(%s)", label, m[1], other, label, want)}}
		}
		return nil
	}
	return []problem{{page: pg.path, line: 1, kind: switchMissing,
		msg: fmt.Sprintf("no language switch in the first %d lines: add the line %s(%s), and a blank line, right under the title", switchLines, label, want)}}
}
