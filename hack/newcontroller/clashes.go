package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// The names a project's code is made of come from two places: the tier's own
// names (sample-controller's Foo, foo, fooLister, samplev1alpha1, ...), which
// this command rewrites into the user's, and every other name the code has
// (key, name, status, metav1, cache, error, ...), which it keeps. Two names
// that were different in the tier can become the same after the rewrite: KIND=Key
// turns the Foo a Reconcile reads, foo, into key, beside the workqueue key it
// already has. Go refuses that ("no new variables on left side of :=",
// "redeclared in this block"), but only at go build, minutes later, in code the
// user did not write. So the command reads the code it is about to rewrite,
// works out every name each variable would make, and refuses any that would
// meet another before it writes anything.
//
// What counts as meeting is where Go would see one name for two things: in one
// package block, two names the package declares or imports; in one top-level
// declaration (a function with its body, a type, a var block), two names used
// in it, whatever they are (local variables, parameters, the package-level
// names and imported packages it refers to, Go's predeclared names such as
// error and string); in one struct or interface, or among one type's methods,
// two fields or methods. That is a little stricter than Go (two variables in
// different blocks of one function never meet), so the command may refuse a
// name that would have compiled, and lets through none that would not:
// TestKindsValidateTakesBuild (make test-new-controller) holds it to Go's type
// checker for a table of kinds. In generated code the names of imported
// packages are left out: the generator chooses them, and renames one that
// would meet another.

// codeNames are the names one tier's code spells, as the tier spells them,
// gathered once per run (parsing sample-controller's Go files takes
// milliseconds; Validate may be called many times by the tests).
type codeNames struct {
	// scope holds the sets of names in scope position (not after a dot, not a
	// field or method): for each package (its folder and name), its package
	// block, and for each of its top-level declarations, every such name used
	// in it. Each name maps to the first file that has it.
	scope map[string]map[string]string
	// members are the fields and methods of each struct, interface and
	// receiver type, keyed like scope by where they are declared.
	members map[string]map[string]string
	// sets are scope's and members' sets in order, each with the names in it
	// that the rewrite changes (made once all files are read).
	sets []nameSet
}

// A nameSet is one set of names in which no two things may share a name.
type nameSet struct {
	where   string            // the package, type or struct
	names   map[string]string // every name, with the first file that has it
	derived []string          // the names made of the tier's names, sorted
}

// codeCache holds what readTierCode read, by the tier's folder.
var (
	codeCache   = map[string]*codeNames{}
	codeCacheMu sync.Mutex
)

// readTierCode returns the names of the code a project made from the tier at
// kit/from is made of: the tier's Go files (its generated code too: the
// project's is generated with the same names), the files of template/ filled in
// with the tier's own names, and, for kubebuilder-guestbook, what kubebuilder's
// scaffold declares.
func readTierCode(kit, from string) (*codeNames, error) {
	key := filepath.Join(kit, from)
	codeCacheMu.Lock()
	defer codeCacheMu.Unlock()
	if c, ok := codeCache[key]; ok {
		return c, nil
	}
	c := &codeNames{scope: map[string]map[string]string{}, members: map[string]map[string]string{}}
	fset := token.NewFileSet()
	add := func(rel string, src []byte) error {
		f, err := parser.ParseFile(fset, rel, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("reading the names of %s: %w", rel, err)
		}
		c.addFile(rel, f)
		return nil
	}

	if from == "sample-controller" {
		if err := eachTierGoFile(filepath.Join(kit, from), add); err != nil {
			return nil, err
		}
	} else {
		// kubebuilder's create api writes the kind's types beside the group's
		// version file; its names are these (the tier's own groupversion_info.go
		// was written by the same CLI, and is read for the rest).
		if err := add("api/v1alpha1/foo_types.go", []byte(kubebuilderTypes)); err != nil {
			return nil, err
		}
		src, err := os.ReadFile(filepath.Join(kit, from, "api", "v1", "groupversion_info.go"))
		if err != nil {
			return nil, err
		}
		src = bytes.Replace(src, []byte("package v1\n"), []byte("package v1alpha1\n"), 1)
		if err := add("api/v1alpha1/groupversion_info.go", src); err != nil {
			return nil, err
		}
	}

	// template/'s Go files, filled in with the tier's own names.
	err := eachTemplate(tierTemplateData(from), func(name, rel string, filled []byte) error {
		if !strings.HasSuffix(name, ".go.tmpl") {
			return nil
		}
		return add(rel, filled)
	})
	if err != nil {
		return nil, err
	}
	for _, all := range []map[string]map[string]string{c.scope, c.members} {
		for _, where := range sortedKeys(all) {
			set := nameSet{where: where, names: all[where]}
			for _, name := range sortedKeys(set.names) {
				if nameRE.MatchString(name) {
					set.derived = append(set.derived, name)
				}
			}
			c.sets = append(c.sets, set)
		}
	}
	codeCache[key] = c
	return c, nil
}

// kubebuilderTypes is what kubebuilder's create api declares for a kind, in the
// tier's names: the kind, its spec, status and list.
const kubebuilderTypes = `package v1alpha1
type FooSpec struct{}
type FooStatus struct{}
type Foo struct{ Spec FooSpec; Status FooStatus }
type FooList struct{ Items []Foo }
func init() { SchemeBuilder.Register(&Foo{}, &FooList{}) }
`

// tierTemplateData is the data template/ is filled in with to read its names:
// the tier's own names, so that Rewrite turns them into the user's.
func tierTemplateData(from string) templateData {
	n := Names{
		Request:  Request{From: from, Module: tierModule, Group: tierGroup, Kind: "Foo", Version: tierVersion, Name: tierName},
		GroupPkg: tierPkg, Domain: "k8s.io", GroupGo: "Samplecontroller", Plural: "Foos",
	}
	return templateData{
		Names: n, Lower: "foo", LowerPlural: "foos", APIDir: path.Join("pkg/apis", n.GroupPkg, tierVersion),
		VersionGo: "V1alpha1", Alias: "sample" + tierVersion, Assets: "/assets", KubeMinor: "1.0.x",
		KubebuilderPlural: "foos", Year: 2000,
	}
}

// addFile records the names of one parsed file.
func (c *codeNames) addFile(rel string, f *ast.File) {
	pkg := path.Dir(rel) + " (package " + f.Name.Name + ")"
	// The package block: what the package declares at its top level, and the
	// packages its files import (Go lets no name be both).
	block := c.scope[pkg]
	if block == nil {
		block = map[string]string{}
		c.scope[pkg] = block
	}
	// Generated code names the packages it imports as its generator likes, and
	// renames one where names meet: those names are the generator's, not ours.
	generated := map[string]bool{}
	if ast.IsGenerated(f) {
		for _, imp := range f.Imports {
			generated[importName(imp)] = true
		}
	}
	use := func(set map[string]string, name string) {
		if _, ok := set[name]; !ok && name != "_" && !generated[name] {
			set[name] = rel
		}
	}
	member := func(where, name string) {
		set := c.members[where]
		if set == nil {
			set = map[string]string{}
			c.members[where] = set
		}
		use(set, name)
	}
	// scope is the set of the top-level declaration being read.
	var scope map[string]string
	// Fields and methods of a named type are one set; an unnamed struct's own.
	anonymous := 0
	var fields func(where string, list *ast.FieldList)
	var walk func(n ast.Node) bool
	fields = func(where string, list *ast.FieldList) {
		if list == nil {
			return
		}
		for _, field := range list.List {
			for _, name := range field.Names {
				member(where, name.Name)
			}
			if len(field.Names) == 0 { // embedded: its type's name is the field's
				t := field.Type
				if star, ok := t.(*ast.StarExpr); ok {
					t = star.X
				}
				switch t := t.(type) {
				case *ast.Ident:
					member(where, t.Name)
				case *ast.SelectorExpr:
					member(where, t.Sel.Name)
				}
			}
			ast.Inspect(field.Type, walk)
		}
	}
	walk = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			use(scope, n.Name)
		case *ast.SelectorExpr:
			// What follows the dot is a member of X's package or type,
			// declared (and so read) where that package or type is.
			ast.Inspect(n.X, walk)
			return false
		case *ast.KeyValueExpr:
			// A field's name in a composite literal is no name in scope.
			if _, ok := n.Key.(*ast.Ident); !ok {
				ast.Inspect(n.Key, walk)
			}
			ast.Inspect(n.Value, walk)
			return false
		case *ast.TypeSpec:
			use(scope, n.Name.Name)
			if n.TypeParams != nil {
				ast.Inspect(n.TypeParams, walk)
			}
			switch t := n.Type.(type) {
			case *ast.StructType:
				fields(pkg+" type "+n.Name.Name, t.Fields)
			case *ast.InterfaceType:
				fields(pkg+" type "+n.Name.Name, t.Methods)
			default:
				ast.Inspect(n.Type, walk)
			}
			return false
		case *ast.StructType:
			anonymous++
			fields(fmt.Sprintf("%s struct #%d", pkg, anonymous), n.Fields)
			return false
		case *ast.InterfaceType:
			anonymous++
			fields(fmt.Sprintf("%s interface #%d", pkg, anonymous), n.Methods)
			return false
		case *ast.FuncDecl:
			if n.Recv != nil && len(n.Recv.List) == 1 {
				member(pkg+" type "+receiverType(n.Recv.List[0].Type), n.Name.Name)
				ast.Inspect(n.Recv, walk)
			} else {
				use(scope, n.Name.Name)
			}
			ast.Inspect(n.Type, walk)
			if n.Body != nil {
				ast.Inspect(n.Body, walk)
			}
			return false
		case *ast.LabeledStmt:
			ast.Inspect(n.Stmt, walk)
			return false
		case *ast.BranchStmt:
			return false
		case *ast.ImportSpec:
			return false // in the package block, above
		}
		return true
	}
	// Each top-level declaration (a function with its body, a type, a var
	// block) is a set of its own: a name used in it (a local variable, a
	// parameter, or a package-level name it refers to) meets only the names
	// used in the same declaration. What the package declares goes into the
	// package block as well.
	for i, decl := range f.Decls {
		scope = map[string]string{}
		c.scope[fmt.Sprintf("%s %s #%d", pkg, rel, i)] = scope
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				use(block, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch spec := spec.(type) {
				case *ast.ImportSpec:
					use(block, importName(spec))
				case *ast.TypeSpec:
					use(block, spec.Name.Name)
				case *ast.ValueSpec:
					for _, name := range spec.Names {
						use(block, name.Name)
					}
				}
			}
		}
		ast.Inspect(decl, walk)
	}
}

// importName is the name an import gives its package in the file: its own
// name, else the last element of its path (the one before a /vN suffix).
func importName(spec *ast.ImportSpec) string {
	if spec.Name != nil {
		return spec.Name.Name
	}
	p, _ := strconv.Unquote(spec.Path.Value)
	base := path.Base(p)
	if len(base) > 1 && base[0] == 'v' && strings.Trim(base[1:], "0123456789") == "" {
		base = path.Base(path.Dir(p))
	}
	return base
}

// receiverType is the name of a method's receiver type: T of t *T or t T[P].
func receiverType(t ast.Expr) string {
	for {
		switch e := t.(type) {
		case *ast.StarExpr:
			t = e.X
		case *ast.IndexExpr:
			t = e.X
		case *ast.IndexListExpr:
			t = e.X
		case *ast.Ident:
			return e.Name
		default:
			return ""
		}
	}
}

// A clash is one name of the project that two things would have.
type clash struct {
	vars    []string // the variables whose values make the name: KIND, GROUP, VERSION
	name    string   // the name in the project
	from    string   // the tier's name it is rewritten from
	other   string   // what else has it: another of the tier's names, or ""
	file    string   // where, in the tier's paths
	keyword bool     // name is a Go keyword
}

// why says what is wrong with the name, for an error message.
func (k clash) why() string {
	switch {
	case k.keyword:
		return fmt.Sprintf("%q would become %q, a Go keyword", k.from, k.name)
	case k.other != "":
		return fmt.Sprintf("%q and %q would both become %q (%s)", k.from, k.other, k.name, k.file)
	case types.Universe.Lookup(k.name) != nil:
		return fmt.Sprintf("%q would become %q, Go's predeclared %s, which %s uses", k.from, k.name, k.name, k.file)
	}
	return fmt.Sprintf("%q would become %q, which %s already uses for something else", k.from, k.name, k.file)
}

// clashes returns the names the project n asks for would give two things, one
// per name, in a stable order.
func (c *codeNames) clashes(n Names) []clash {
	var found []clash
	seen := map[string]bool{}
	for _, set := range c.sets {
		// made maps each name the rewrite gives to the tier's name it came from.
		made := map[string]string{}
		for _, name := range set.derived {
			to := n.Rewrite(name)
			k := clash{name: to, from: name, file: set.names[name]}
			switch {
			case slices.Contains(goKeywords, to):
				k.keyword = true
			case made[to] != "":
				k.other = made[to]
			default:
				if file, kept := set.names[to]; kept && !nameRE.MatchString(to) {
					k.file = file
				} else {
					made[to] = name
					continue
				}
			}
			if id := set.where + "\x00" + to; !seen[id] {
				seen[id] = true
				k.vars, k.file = variablesOf(name), n.Rewrite(k.file)
				found = append(found, k)
			}
		}
	}
	return found
}

// variablesOf names the make variables whose values a tier name is rewritten
// into: samplev1alpha1 is made of GROUP and VERSION, fooLister of KIND.
func variablesOf(name string) []string {
	var vars []string
	for _, m := range nameRE.FindAllString(name, -1) {
		v := "KIND"
		switch {
		case m == "sample"+tierVersion:
			vars = append(vars, "GROUP", "VERSION")
			continue
		case strings.EqualFold(m, tierPkg):
			v = "GROUP"
		case strings.EqualFold(m, tierVersion):
			v = "VERSION"
		}
		vars = append(vars, v)
	}
	slices.Sort(vars)
	return slices.Compact(vars)
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// eachTierGoFile calls fn with the slash-separated path under tier and the
// content of each Go file of sample-controller's tier that a project made from
// it starts from: the files copyTier copies and the generated ones beside them
// (bin/, test/ and hack/ left out), stopping at the first error.
func eachTierGoFile(tier string, fn func(rel string, src []byte) error) error {
	return filepath.WalkDir(tier, func(p string, entry fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(tier, p)
		rel = filepath.ToSlash(rel)
		if entry.IsDir() && (rel == "bin" || rel == "test" || rel == "hack") {
			return filepath.SkipDir
		}
		if entry.IsDir() || path.Ext(rel) != ".go" {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return fn(rel, src)
	})
}
