//go:build e2e

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// TestKindsValidateTakesBuild holds Validate's reading of the names
// (clashes.go) to Go's type checker: for each of candidateKinds it rewrites
// sample-controller's Go files, its tests and generated code too (the names
// code-generator writes for the kind), and type-checks them as the compiler
// would, against the export data of the tier's dependencies (go list -export,
// once; each kind then takes milliseconds). Every kind Validate takes must
// type-check; every kind it refuses for a reason other than a Go keyword is
// logged when it would have type-checked all the same (the reading is stricter
// than Go by design), and the test fails when none of the refused ones fails to
// type-check, since it would then check nothing.
func TestKindsValidateTakesBuild(t *testing.T) {
	kit, _ := filepath.Abs("../..")
	tier := filepath.Join(kit, "sample-controller")
	exports := exportData(t, tier)
	fset := token.NewFileSet()
	gc := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	}).(types.ImporterFrom)

	refusedAndBroken := 0
	for _, kind := range candidateKinds {
		n, errs := Request{From: "sample-controller", Dir: filepath.Join(t.TempDir(), "p"), Module: "example.com/" + strings.ToLower(kind),
			Group: "bar.example.com", Kind: kind, Version: "v1alpha1", Kit: kit}.names()
		if len(errs) > 0 {
			t.Fatalf("KIND=%s: %v", kind, errs)
		}
		code, err := readTierCode(kit, n.From)
		if err != nil {
			t.Fatal(err)
		}
		taken := len(code.clashes(n)) == 0
		broken := typeCheckRewritten(t, fset, gc, tier, n)
		switch {
		case taken && broken != "":
			t.Errorf("KIND=%s: Validate takes it, but the project would not build: %s", kind, broken)
		case !taken && broken == "":
			t.Logf("KIND=%s: Validate refuses it, though the project would have built", kind)
		case !taken:
			refusedAndBroken++
		}
	}
	if refusedAndBroken == 0 {
		t.Error("no kind Validate refuses failed to type-check: the type check checks nothing")
	}
}

// exportData returns the export data file of every package the tier's
// packages and tests import, by import path.
func exportData(t *testing.T, tier string) map[string]string {
	cmd := exec.Command("go", "list", "-export", "-deps", "-test", "-f", "{{.ImportPath}}={{.Export}}", "./...")
	cmd.Dir = tier
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export in %s: %v", tier, err)
	}
	exports := map[string]string{}
	for s := bufio.NewScanner(bytes.NewReader(out)); s.Scan(); {
		if path, file, ok := strings.Cut(s.Text(), "="); ok && file != "" {
			exports[path] = file
		}
	}
	return exports
}

// typeCheckRewritten rewrites the tier's Go files for n and type-checks every
// package, its in-package tests included; it returns the first error, or "".
func typeCheckRewritten(t *testing.T, fset *token.FileSet, gc types.ImporterFrom, tier string, n Names) string {
	files := map[string][]*ast.File{} // by the package's import path in the project
	err := eachTierGoFile(tier, func(rel string, content []byte) error {
		rel = n.Rewrite(rel)
		f, err := parser.ParseFile(fset, n.Module+"/"+rel, n.Rewrite(string(content)), 0)
		if err != nil {
			return err
		}
		pkg := n.Module
		if dir := path.Dir(rel); dir != "." {
			pkg += "/" + dir
		}
		files[pkg] = append(files[pkg], f)
		return nil
	})
	if err != nil {
		return err.Error()
	}
	checked := map[string]*types.Package{}
	var firstErr string
	var check func(pkg string, withTests bool) *types.Package
	imp := importerFunc(func(path, dir string, mode types.ImportMode) (*types.Package, error) {
		if files[path] != nil {
			return check(path, false), nil
		}
		return gc.ImportFrom(path, dir, mode)
	})
	check = func(pkg string, withTests bool) *types.Package {
		key := fmt.Sprint(pkg, withTests)
		if p := checked[key]; p != nil {
			return p
		}
		var these []*ast.File
		for _, f := range files[pkg] {
			if withTests || !strings.HasSuffix(fset.Position(f.Package).Filename, "_test.go") {
				these = append(these, f)
			}
		}
		conf := types.Config{Importer: imp, Error: func(err error) {
			if firstErr == "" {
				firstErr = err.Error()
			}
		}}
		p, _ := conf.Check(pkg, fset, these, nil)
		checked[key] = p
		return p
	}
	for pkg := range files {
		check(pkg, true)
	}
	return firstErr
}

// importerFunc is a types.ImporterFrom made of a function.
type importerFunc func(path, dir string, mode types.ImportMode) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path, "", 0) }
func (f importerFunc) ImportFrom(path, dir string, mode types.ImportMode) (*types.Package, error) {
	return f(path, dir, mode)
}
