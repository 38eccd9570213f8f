package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// The file:line references a lesson quotes from the kit's own sources, in the
// transcripts it pastes (each regular expression's first two groups are the
// file and the line):
var (
	// klogRef is a klog line's origin and message: `main.go:231] "Cloud ready" ...`.
	klogRef = regexp.MustCompile(`(?:^|[\s|])([\w./-]+\.go):(\d+)\] (.+)$`)
	// testRef is a failed test's report: `foo_test.go:30: timed out after ...`.
	testRef = regexp.MustCompile(`(?:^|[\s|])([\w./-]+_test\.go):(\d+): (.+)$`)
	// frameRef is a frame of delve's stack, whose function is on the line before:
	// `   at ./sample-controller/pkg/controller/controller.go:230`.
	frameRef = regexp.MustCompile(`^\s+at (\S+\.go):(\d+)$`)
	// frameFunc is that line before: `1  0x0000000001b5aa5e in PACKAGE.(*TYPE).FUNC`.
	frameFunc = regexp.MustCompile(`^\s*\d+\s+0x[0-9a-f]+ in (\S+)$`)
	// stopRef is where delve set a breakpoint or stopped:
	// `... for PACKAGE.(*TYPE).FUNC() ./PATH.go:68` and `> [name] PACKAGE.FUNC() ./PATH.go:68 (hits ...`.
	stopRef = regexp.MustCompile(`(?:for|\]) (\S+)\(\) (\S+\.go):(\d+)`)
	// makeRef is make's report of a failed recipe: `make: *** [Makefile:132: check] Error 1`.
	makeRef = regexp.MustCompile(`\[((?:[\w./-]+/)?Makefile):(\d+): ([^\]]+)\]`)
)

// lineRef is one file:line reference a page quotes, with what the page says is
// there.
type lineRef struct {
	page     string // the page, from the repository root
	pageLine int
	file     string // as the page writes it: "main.go", "./sample-controller/pkg/controller/controller.go"
	line     int
	quoted   string // as the page writes the reference, for the message
	// One of these says what line must hold:
	message  string // a log message or a test's report, which a string literal of the line's statement renders
	klog     bool   // message is a klog message: a literal equals it (quoted) or renders its start
	funcName string // a function, whose body holds the line (a frame or a stop of delve)
	callee   string // for a frame below another, the function the line calls
	target   string // a make target, whose recipe (or .DEFAULT's) holds the line
}

// verifyLines checks every file:line reference that a lesson page (and its
// Japanese twin) quotes from the kit's own sources against those sources: a
// klog line's file and line must hold the statement that logs its message, a
// failed test's must hold the statement that reports it, a delve frame's must lie
// in its function, and make's must lie in its target's recipe. A file that is
// not the kit's (client-go's, say, or the learner's copy of Kubernetes) is not
// checked. It prints each reference that no longer matches to w, with the page,
// the reference and what the line is now, and returns 0 when there is none, 1
// otherwise; the error names a file it cannot read.
func verifyLines(root string, w io.Writer) (int, error) {
	lessons, err := kittest.ReadLessons(root)
	if err != nil {
		return 0, err
	}
	sources := newSourceIndex(root)
	stale, checked := 0, 0
	for _, l := range lessons {
		pages := []string{l.Doc}
		if twin := "docs/ja/" + strings.TrimPrefix(l.Doc, "docs/"); fileExists(filepath.Join(root, twin)) {
			pages = append(pages, twin)
		}
		for _, page := range pages {
			data, err := os.ReadFile(filepath.Join(root, page))
			if err != nil {
				return 0, err
			}
			problems, n, err := sources.staleRefs(page, string(data), []string{l.Tier, "."})
			if err != nil {
				return 0, err
			}
			checked += n
			stale += len(problems)
			for _, p := range problems {
				fmt.Fprintln(w, p)
			}
		}
	}
	if stale > 0 {
		fmt.Fprintf(w, "%d quoted file:line references no longer match the kit's sources: run the command again and paste its output, or correct the line number\n", stale)
		return 1, nil
	}
	fmt.Fprintf(w, ">> lessons: the %d file:line references they quote from the kit's sources match them\n", checked)
	return 0, nil
}

// staleRefs checks the file:line references of a page's text against the
// files they name in the folders of scope (the lesson's tier, then the root),
// and returns a line for each that no longer matches, and how many it checked.
func (s *sourceIndex) staleRefs(page, text string, scope []string) (problems []string, checked int, err error) {
	for _, ref := range quotedLineRefs(page, text) {
		files, err := s.resolve(ref.file, scope)
		if err != nil {
			return nil, 0, err
		}
		if len(files) == 0 {
			continue // not a file of the kit
		}
		checked++
		if problem := s.check(ref, files); problem != "" {
			problems = append(problems, fmt.Sprintf("%s:%d: %s %s", ref.page, ref.pageLine, ref.quoted, problem))
		}
	}
	return problems, checked, nil
}

// quotedLineRefs returns the file:line references of the page's text, in order.
func quotedLineRefs(page, text string) []lineRef {
	var refs []lineRef
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		at := func(file, n string) lineRef {
			number, _ := strconv.Atoi(n)
			return lineRef{page: page, pageLine: i + 1, file: file, line: number, quoted: file + ":" + n}
		}
		if m := testRef.FindStringSubmatch(line); m != nil {
			r := at(m[1], m[2])
			r.message = m[3]
			refs = append(refs, r)
		} else if m := klogRef.FindStringSubmatch(line); m != nil {
			r := at(m[1], m[2])
			r.message, r.klog = m[3], true
			refs = append(refs, r)
		}
		if m := frameRef.FindStringSubmatch(line); m != nil && i > 0 {
			if f := frameFunc.FindStringSubmatch(lines[i-1]); f != nil {
				r := at(m[1], m[2])
				r.funcName = f[1]
				// The frame above (two lines up) is the function this line calls.
				if i >= 3 {
					if above := frameFunc.FindStringSubmatch(lines[i-3]); above != nil {
						_, r.callee = splitFunc(above[1])
					}
				}
				refs = append(refs, r)
			}
		}
		if m := stopRef.FindStringSubmatch(line); m != nil {
			r := at(m[2], m[3])
			r.funcName = m[1]
			refs = append(refs, r)
		}
		for _, m := range makeRef.FindAllStringSubmatch(line, -1) {
			r := at(m[1], m[2])
			r.target = m[3]
			refs = append(refs, r)
		}
	}
	return refs
}

// sourceIndex finds and reads the kit's source files, each once.
type sourceIndex struct {
	root   string
	byName map[string][]string // base name -> paths from root, sorted
	files  map[string]*sourceFile
}

// sourceFile is one source file: its lines and, for Go, its syntax tree.
type sourceFile struct {
	path  string
	lines []string
	fset  *token.FileSet
	ast   *ast.File
}

func newSourceIndex(root string) *sourceIndex {
	return &sourceIndex{root: root, files: map[string]*sourceFile{}}
}

// resolve returns the kit's files a reference names: the file at the path it
// gives from the repository root ("./sample-controller/..."), or the files of
// that base name in the folders of scope ("." is the root alone). None for a file
// outside the kit: in the module cache, in the learner's copy of Kubernetes
// (_output/), or a base name the kit has no file of.
func (s *sourceIndex) resolve(file string, scope []string) ([]string, error) {
	if strings.Contains(file, "/") {
		rel := filepath.Clean(file)
		if filepath.IsAbs(rel) || strings.HasPrefix(rel, "..") || strings.HasPrefix(rel, "_output") {
			return nil, nil
		}
		if !fileExists(filepath.Join(s.root, rel)) {
			return nil, nil
		}
		return []string{rel}, nil
	}
	if s.byName == nil {
		if err := s.index(); err != nil {
			return nil, err
		}
	}
	var found []string
	for _, dir := range scope {
		for _, path := range s.byName[file] {
			if dir == "." && filepath.Dir(path) == "." || dir != "." && strings.HasPrefix(path, dir+"/") {
				found = append(found, path)
			}
		}
	}
	return found, nil
}

// index lists the kit's Go files and Makefiles by base name, leaving out what
// the kit builds or copies (_output/, bin/) and what git ignores there.
func (s *sourceIndex) index() error {
	s.byName = map[string][]string{}
	return filepath.WalkDir(s.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != s.root && (strings.HasPrefix(name, ".") || name == "_output" || name == "bin" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") || name == "Makefile" {
			rel, err := filepath.Rel(s.root, path)
			if err != nil {
				return err
			}
			s.byName[name] = append(s.byName[name], filepath.ToSlash(rel))
		}
		return nil
	})
}

// read returns the file at path (from the repository root), parsed when it is Go.
func (s *sourceIndex) read(path string) (*sourceFile, error) {
	if f, ok := s.files[path]; ok {
		return f, nil
	}
	data, err := os.ReadFile(filepath.Join(s.root, path))
	if err != nil {
		return nil, err
	}
	f := &sourceFile{path: path, lines: strings.Split(string(data), "\n")}
	if strings.HasSuffix(path, ".go") {
		f.fset = token.NewFileSet()
		if f.ast, err = parser.ParseFile(f.fset, path, data, 0); err != nil {
			return nil, err
		}
	}
	s.files[path] = f
	return f, nil
}

// check returns "" when one of files holds at ref.line what ref says is there;
// else what each file's line is now, and where the message is, when it is
// elsewhere in the file.
func (s *sourceIndex) check(ref lineRef, files []string) string {
	var problems []string
	for _, path := range files {
		f, err := s.read(path)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if f.holds(ref, ref.line) {
			return ""
		}
		now := "past its end"
		if ref.line >= 1 && ref.line <= len(f.lines) {
			now = fmt.Sprintf("%q", strings.TrimSpace(f.lines[ref.line-1]))
		}
		problem := fmt.Sprintf("%s:%d is now %s", path, ref.line, now)
		if moved := f.find(ref); len(moved) > 0 {
			problem += fmt.Sprintf("; the line it means is %s:%s", path, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(moved)), ", "), "[]"))
		}
		problems = append(problems, problem)
	}
	return "no longer matches: " + strings.Join(problems, "; ") + " (" + ref.what() + ")"
}

// what says what the reference must point at, for the message.
func (ref lineRef) what() string {
	switch {
	case ref.callee != "":
		return "want the line of " + shortFunc(ref.funcName) + " that calls " + ref.callee
	case ref.funcName != "":
		return "want a line of " + shortFunc(ref.funcName)
	case ref.target != "":
		return "want a line of the recipe of " + ref.target
	case ref.klog:
		return "want the statement that logs " + ref.message
	}
	return "want the statement that reports " + ref.message
}

// find returns the lines of f that hold what ref says, for a reference whose
// line has moved.
func (f *sourceFile) find(ref lineRef) []int {
	var found []int
	previous := false
	for n := 1; n <= len(f.lines) && len(found) < 3; n++ {
		// A statement over several lines matches on each: its first is enough.
		match := f.matches(ref, n, false)
		if match && !previous {
			found = append(found, n)
			if ref.funcName != "" && ref.callee == "" || ref.target != "" {
				break // the first line of the function or recipe is enough
			}
		}
		previous = match
	}
	return found
}

// holds reports whether line n of f is what ref says it is.
func (f *sourceFile) holds(ref lineRef, n int) bool {
	return f.matches(ref, n, true)
}

// matches reports whether line n of f is what ref says it is. A failed test
// reports the line of the test that called t's method, or the helper (which
// calls t.Helper()) that reported it, and that report is often made from a
// format elsewhere (t.Error(err), waitForFooStatus(t, ...)): with anyReport, a
// line with no phrase of its own that calls a method of t or passes t to a
// function counts too, since that is all a reader can check there; find,
// looking for the line that moved, leaves it out.
func (f *sourceFile) matches(ref lineRef, n int, anyReport bool) bool {
	if n < 1 || n > len(f.lines) {
		return false
	}
	switch {
	case ref.target != "":
		return f.inRecipe(n, ref.target)
	case f.ast == nil:
		return false
	case ref.funcName != "":
		return f.inFunc(n, ref.funcName) && (ref.callee == "" || strings.Contains(f.lines[n-1], ref.callee+"("))
	}
	// The statements that span line n, from the outermost in: a call of a
	// helper, say, and a callback's return on the same line.
	for _, stmt := range f.statementsAt(n) {
		literals := stringLiterals(stmt)
		switch {
		case ref.klog && logs(literals, ref.message):
			return true
		case !ref.klog && slices.ContainsFunc(literals, func(lit string) bool { return rendersPart(lit, ref.message) }):
			return true
		case !ref.klog && anyReport && !slices.ContainsFunc(literals, isPhrase) && reportsThroughT(stmt):
			return true
		}
	}
	return false
}

// reportsThroughT reports whether stmt, leaving out the blocks, function
// literals and cases inside it, calls a method of t (t.Errorf) or passes t to a function
// (a helper such as waitForFooStatus(t, ...)).
func reportsThroughT(stmt ast.Stmt) bool {
	isT := func(e ast.Expr) bool {
		id, ok := e.(*ast.Ident)
		return ok && id.Name == "t"
	}
	found := false
	ast.Inspect(stmt, func(node ast.Node) bool {
		switch node := node.(type) {
		case *ast.BlockStmt, *ast.FuncLit, *ast.CaseClause, *ast.CommClause:
			return false
		case *ast.CallExpr:
			if sel, ok := node.Fun.(*ast.SelectorExpr); ok && isT(sel.X) || len(node.Args) > 0 && isT(node.Args[0]) {
				found = true
			}
		}
		return !found
	})
	return found
}

// statementsAt returns the statements of f whose own lines hold line n, from the
// outermost to the innermost, blocks left out. An if or a for holds the lines
// of its header, not those of its body, down to the closing brace: line n in a
// block drops the statements around the block.
func (f *sourceFile) statementsAt(n int) []ast.Stmt {
	var found []ast.Stmt
	ast.Inspect(f.ast, func(node ast.Node) bool {
		if node == nil {
			return false
		}
		start, end := f.fset.Position(node.Pos()).Line, f.fset.Position(node.End()).Line
		if n < start || n > end {
			return false
		}
		switch node := node.(type) {
		case *ast.BlockStmt:
			if start < n {
				found = nil
			}
		case *ast.CaseClause, *ast.CommClause:
			// A case holds its "case ...:" line; its statements are its body's.
			if f.fset.Position(clauseColon(node)).Line < n {
				found = nil
			} else {
				found = append(found, node.(ast.Stmt))
			}
		case ast.Stmt:
			found = append(found, node)
		}
		return true
	})
	return found
}

// clauseColon returns the position of the colon that ends a case's header.
func clauseColon(clause ast.Node) token.Pos {
	if c, ok := clause.(*ast.CaseClause); ok {
		return c.Colon
	}
	return clause.(*ast.CommClause).Colon
}

// stringLiterals returns the values of the string literals of stmt, leaving out
// the blocks, function literals and cases' bodies inside it (an if's body, a
// callback's).
func stringLiterals(stmt ast.Stmt) []string {
	var literals []string
	ast.Inspect(stmt, func(node ast.Node) bool {
		switch node := node.(type) {
		case *ast.BlockStmt, *ast.FuncLit:
			return false
		case *ast.CaseClause:
			for _, e := range node.List {
				literals = append(literals, stringLiterals(&ast.ExprStmt{X: e})...)
			}
			return false
		case *ast.CommClause:
			return false
		case *ast.BasicLit:
			if node.Kind == token.STRING {
				if s, err := strconv.Unquote(node.Value); err == nil {
					literals = append(literals, s)
				}
			}
		}
		return true
	})
	return literals
}

// logs reports whether a klog line's message comes from one of literals: a
// structured message (`"Cloud ready" provider=...`) is a literal itself, a
// formatted one (`Started "x"`) begins with what a literal renders (of 5
// characters of its own at least).
func logs(literals []string, message string) bool {
	if quoted, err := strconv.QuotedPrefix(message); err == nil {
		unquoted, _ := strconv.Unquote(quoted)
		if slices.Contains(literals, unquoted) {
			return true
		}
	}
	return slices.ContainsFunc(literals, func(lit string) bool {
		re, ok := formatPattern(lit, 5, false)
		return ok && re.FindStringIndex(message) != nil && re.FindStringIndex(message)[0] == 0
	})
}

// isPhrase reports whether a literal is a phrase that a report could render
// (formatPattern takes it), not a name or a path.
func isPhrase(literal string) bool {
	_, ok := formatPattern(literal, 10, true)
	return ok
}

// rendersPart reports whether text, one line of a report, holds what the
// format literal renders up to its first newline, its verbs standing for
// anything.
func rendersPart(literal, text string) bool {
	literal, _, _ = strings.Cut(literal, "\n")
	re, ok := formatPattern(literal, 10, true)
	return ok && re.MatchString(text)
}

// verb is a printf verb, with its flags, width and precision.
var verb = regexp.MustCompile(`%[-+# 0]*[0-9*]*(?:\.[0-9*]+)?[a-zA-Z%]`)

// formatPattern turns a format string into a regular expression that matches
// what it renders, each verb standing for anything. It refuses (false) a literal
// with fewer than min characters of its own, or, with phrase, one that is no
// phrase (a path, a flag, a name such as "kubernetes"), which too many reports
// would hold.
func formatPattern(format string, min int, phrase bool) (*regexp.Regexp, bool) {
	parts := verb.Split(format, -1)
	own := strings.TrimSpace(strings.Join(parts, ""))
	if len(own) < min || phrase && !strings.Contains(own, " ") {
		return nil, false
	}
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(strings.Join(parts, `.*?`)), true
}

// inFunc reports whether line n lies in the declaration of the function or
// method name, as delve writes it: "PACKAGE.FUNC", "PACKAGE.(*TYPE).METHOD" or
// "PACKAGE.TYPE.METHOD".
func (f *sourceFile) inFunc(n int, name string) bool {
	receiver, fn := splitFunc(name)
	for _, decl := range f.ast.Decls {
		d, ok := decl.(*ast.FuncDecl)
		if !ok || d.Name.Name != fn || receiverName(d) != receiver {
			continue
		}
		if f.fset.Position(d.Pos()).Line <= n && n <= f.fset.Position(d.End()).Line {
			return true
		}
	}
	return false
}

// splitFunc splits delve's name of a function into its receiver type ("" for
// none) and its name.
func splitFunc(name string) (receiver, fn string) {
	short := shortFunc(name)
	if i := strings.LastIndex(short, "."); i >= 0 {
		return strings.Trim(short[:i], "(*)"), short[i+1:]
	}
	return "", short
}

// shortFunc drops the package path from delve's name of a function:
// "(*Controller).processNextWorkItem".
func shortFunc(name string) string {
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.Index(name, "."); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// receiverName returns the name of the type of d's receiver, "" for a function.
func receiverName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return ""
	}
	t := d.Recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	switch t := t.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr: // a generic type
		if id, ok := t.X.(*ast.Ident); ok {
			return id.Name
		}
	}
	return ""
}

// makeRule is a Makefile line that starts a rule: its targets before the colon.
var makeRule = regexp.MustCompile(`^([^\t#=][^:=]*?):(?:[^=]|$)`)

// inRecipe reports whether line n of a Makefile is a line of the recipe of
// target, or, when the Makefile has no rule for target, of .DEFAULT's.
func (f *sourceFile) inRecipe(n int, target string) bool {
	if !strings.HasPrefix(f.lines[n-1], "\t") {
		return false
	}
	for i := n - 2; i >= 0; i-- {
		line := f.lines[i]
		if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		targets := f.ruleTargets(i)
		return slices.Contains(targets, target) || slices.Contains(targets, ".DEFAULT") && !f.hasRule(target)
	}
	return false
}

// ruleTargets returns the targets of the rule that line i (from 0) of a Makefile
// starts; none when it starts no rule.
func (f *sourceFile) ruleTargets(i int) []string {
	if m := makeRule.FindStringSubmatch(f.lines[i]); m != nil {
		return strings.Fields(m[1])
	}
	return nil
}

// hasRule reports whether the Makefile has a rule for target.
func (f *sourceFile) hasRule(target string) bool {
	for i := range f.lines {
		if slices.Contains(f.ruleTargets(i), target) {
			return true
		}
	}
	return false
}

// fileExists reports whether path is a regular file.
func fileExists(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}
