// Command versions is `make verify`'s check that the kit's Go modules agree on
// their dependencies: every module from outside the kit that two of the kit's
// modules compile is compiled at one version, the highest any of them needs.
//
// Go's build cache shares a compiled package only when its source, its flags
// and the compiled form of every package it imports are the same. One
// dependency at another version low in the graph (golang.org/x/net, grpc)
// therefore compiles everything above it again, client-go and the control plane
// included: a cold `make test` did so for much of its first hour
// (docs/performance.md, "Compile actions in a cold make test").
//
// For each go.mod the kit commits (go.work's modules and the build modules kept
// out of it, each read on its own, GOWORK=off), it asks `go list -deps -test`
// which packages that module compiles (its own packages with their tests and the
// e2e build tag, and its tools), notes each package's module and version, and
// compares them across the kit. A dependency compiled at two versions fails the
// check, naming each kit module and the version it compiles, and the command
// that raises the others to the highest. -fix runs those commands.
//
//	go run ./test/versions              # from the repository root: check
//	go run ./test/versions -fix         # raise every module to the highest versions, then check
//
// A module kept apart on purpose is listed once, in apart below, with its reason.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"golang.org/x/mod/semver"
)

// kitModulePrefix is the import path every module of the kit starts with; its
// own modules are never compared (the workspace and replace directives join them).
const kitModulePrefix = "github.com/controller-kit/controller-kit"

// exception is a dependency one kit module compiles at its own version, on
// purpose: the check leaves that module's versions of it out.
type exception struct {
	// module is the kit module's folder, relative to the repository root (hack/etcd).
	module string
	// prefix selects the dependencies: a module path, or a path ending in "/"
	// for every module under it.
	prefix string
	// why is the reason, as the design states it.
	why string
}

// apart is the one list of dependencies a kit module keeps at a version of its
// own (the design's pins section says the same).
var apart = []exception{{
	module: "hack/etcd",
	prefix: "go.etcd.io/etcd/",
	why: "the etcd server is pinned at v3.6.16 and builds with its own release's api, client and pkg " +
		"modules; the control plane and the lessons use the etcd client Kubernetes requires",
}}

// kept reports whether dep, as compiled by the kit module mod, is left out of the comparison.
func kept(mod, dep string) bool {
	for _, e := range apart {
		if e.module != mod {
			continue
		}
		if dep == e.prefix || strings.HasSuffix(e.prefix, "/") && strings.HasPrefix(dep, e.prefix) {
			return true
		}
	}
	return false
}

// build is what one kit module compiles: each dependency module's path, and the
// version it compiles it at.
type build struct {
	module string // the kit module's folder, such as hack/csi
	// versions maps each dependency module's path to the version compiled:
	// "v1.2.3", or "v0.0.0=>v1.2.3" where a replace directive swaps in another.
	versions map[string]string
	err      error
}

func main() {
	root := flag.String("root", ".", "the repository root (holds go.work)")
	fix := flag.Bool("fix", false, "raise every module below the highest version of a dependency to it (go get), then check again")
	flag.Parse()

	modules, err := kitModules(*root)
	if err != nil {
		fail(err)
	}
	for round := 1; ; round++ {
		builds := listAll(*root, modules)
		for _, b := range builds {
			if b.err != nil {
				fail(b.err)
			}
		}
		splits := compare(builds)
		if len(splits) == 0 {
			fmt.Printf(">> versions: the kit's %d Go modules compile every shared dependency at one version\n", len(modules))
			return
		}
		if !*fix || round > 5 {
			report(os.Stderr, splits)
			os.Exit(1)
		}
		fmt.Printf(">> versions: round %d: raising %d dependencies\n", round, len(splits))
		if err := raise(*root, splits); err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "versions:", err)
	os.Exit(2)
}

// kitModules returns the folders of every go.mod of the kit, in order: those git
// knows, committed or new and not ignored (a learner's copy of Kubernetes under
// _output is ignored), but test data, as hack/lib/lists.sh's kit_other_modules
// finds them.
func kitModules(root string) ([]string, error) {
	out, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "--", "go.mod", "*/go.mod").Output()
	if err != nil {
		return nil, fmt.Errorf("listing the kit's go.mod files with git ls-files in %s: %w", root, err)
	}
	var dirs []string
	for _, f := range strings.Fields(string(out)) {
		dir := filepath.Dir(f)
		if dir == "testdata" || strings.HasPrefix(dir, "testdata/") || strings.Contains(dir, "/testdata") {
			continue
		}
		if !slices.Contains(dirs, dir) {
			dirs = append(dirs, dir)
		}
	}
	sort.Strings(dirs)
	return dirs, nil
}

// listAll runs list for every module, two at a time (go list is mostly waiting
// on the disk, and the machines the kit is made on have two cores).
func listAll(root string, modules []string) []build {
	builds := make([]build, len(modules))
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, m := range modules {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			builds[i] = list(root, m)
		}()
	}
	wg.Wait()
	return builds
}

// list asks the go command which modules the kit module in dir compiles, and at
// which versions: the modules of its packages, their tests (with the e2e tag)
// and its tools, as `go build`, `go test` and `go tool` in it would resolve them.
func list(root, dir string) build {
	b := build{module: dir, versions: map[string]string{}}
	patterns := []string{"./..."}
	if hasTools(filepath.Join(root, dir, "go.mod")) {
		patterns = append(patterns, "tool")
	}
	args := append([]string{"list", "-e", "-deps", "-test", "-tags", "e2e",
		"-f", "{{with .Module}}{{.Path}} {{.Version}}{{with .Replace}} {{.Version}}{{end}}{{end}}"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = filepath.Join(root, dir)
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.err = fmt.Errorf("%s: go list -deps -test failed (%w); with GOWORK=off its go.mod must list all it needs: run 'GOWORK=off go mod tidy' in %s\n%s",
			dir, err, dir, strings.TrimSpace(stderr.String()))
		return b
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || strings.HasPrefix(f[0], kitModulePrefix) || kept(dir, f[0]) {
			continue
		}
		// A module replaced by another version compiles that version's source,
		// and -trimpath names it by the version required: both count.
		v := f[1]
		if len(f) == 3 && f[2] != f[1] {
			v = f[1] + "=>" + f[2]
		}
		b.versions[f[0]] = v
	}
	return b
}

// hasTools reports whether the go.mod at path has a tool directive.
func hasTools(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line == "tool (" || strings.HasPrefix(line, "tool ") {
			return true
		}
	}
	return false
}

// split is a dependency the kit compiles at more than one version.
type split struct {
	dep     string
	highest string
	// at maps each version to the kit modules that compile it.
	at map[string][]string
}

// compare returns the dependencies compiled at more than one version, by path.
func compare(builds []build) []split {
	at := map[string]map[string][]string{}
	for _, b := range builds {
		for dep, v := range b.versions {
			if at[dep] == nil {
				at[dep] = map[string][]string{}
			}
			at[dep][v] = append(at[dep][v], b.module)
		}
	}
	var splits []split
	for dep, byVersion := range at {
		if len(byVersion) < 2 {
			continue
		}
		s := split{dep: dep, at: byVersion}
		for v := range byVersion {
			// Of two with the same source, the one not swapped in by a replace.
			if s.highest == "" || semver.Compare(effective(v), effective(s.highest)) > 0 ||
				semver.Compare(effective(v), effective(s.highest)) == 0 && !strings.Contains(v, "=>") {
				s.highest = v
			}
		}
		splits = append(splits, s)
	}
	sort.Slice(splits, func(i, j int) bool { return splits[i].dep < splits[j].dep })
	return splits
}

// effective returns the version whose source a module compiles: the
// replacement's, for a version swapped by a replace directive.
func effective(v string) string {
	if _, rep, ok := strings.Cut(v, "=>"); ok {
		return rep
	}
	return v
}

// report writes one paragraph per split: the versions, the modules at each, and
// the fix for those below the highest.
func report(w *os.File, splits []split) {
	fmt.Fprintf(w, "versions: %d dependencies are compiled at more than one version across the kit's modules, "+
		"so the build cache compiles them (and all above them) once per version.\n", len(splits))
	for _, s := range splits {
		fmt.Fprintf(w, "\n%s: the highest, %s, wins; require it in each module below it:\n", s.dep, effective(s.highest))
		versions := make([]string, 0, len(s.at))
		for v := range s.at {
			versions = append(versions, v)
		}
		sort.Slice(versions, func(i, j int) bool { return semver.Compare(effective(versions[i]), effective(versions[j])) > 0 })
		for _, v := range versions {
			mods := s.at[v]
			sort.Strings(mods)
			if v == s.highest {
				fmt.Fprintf(w, "  at %s already: %s\n", v, strings.Join(mods, ", "))
				continue
			}
			for _, m := range mods {
				fmt.Fprintf(w, "  %-36s %s   fix: (cd %s && GOWORK=off go get %s@%s)\n", m, v, m, s.dep, effective(s.highest))
			}
		}
	}
	fmt.Fprintf(w, "\nOr run 'go run ./test/versions -fix', which does the same for every line above. "+
		"A module that cannot take the highest version is kept apart in test/versions' apart list, with its reason.\n")
}

// raise runs, in each module below the highest version of a split dependency,
// one go get for all of them.
func raise(root string, splits []split) error {
	wants := map[string][]string{}
	for _, s := range splits {
		for v, mods := range s.at {
			if v == s.highest {
				continue
			}
			for _, m := range mods {
				wants[m] = append(wants[m], s.dep+"@"+effective(s.highest))
			}
		}
	}
	mods := make([]string, 0, len(wants))
	for m := range wants {
		mods = append(mods, m)
	}
	sort.Strings(mods)
	var errs []error
	for _, m := range mods {
		sort.Strings(wants[m])
		fmt.Printf("   %s: go get %s\n", m, strings.Join(wants[m], " "))
		if err := goGet(filepath.Join(root, m), wants[m]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m, err))
		}
	}
	return errors.Join(errs...)
}

// needs matches go get's refusal of a version below what another requested
// version requires: "golang.org/x/net@v0.61.0 requires golang.org/x/term@v0.47.0,
// not golang.org/x/term@v0.46.0".
var needs = regexp.MustCompile(`requires (\S+)@(\S+), not (\S+)@(\S+)`)

// goGet runs go get with the wanted module@version arguments in dir (and no go
// mod tidy, which would drop a requirement a module keeps on purpose, such as
// apiserver-example's client-go for its exercise's solution). Where go get refuses a version because another wanted version
// requires a higher one, it asks for that one instead and tries again (the next
// check raises the other modules to it).
func goGet(dir string, wants []string) error {
	args := append([]string(nil), wants...)
	for try := 0; ; try++ {
		cmd := exec.Command("go", append([]string{"get"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if err == nil {
			break
		}
		raised := false
		for _, m := range needs.FindAllStringSubmatch(string(out), -1) {
			for i, a := range args {
				if a == m[3]+"@"+m[4] && semver.Compare(m[2], m[4]) > 0 {
					args[i] = m[3] + "@" + m[2]
					raised = true
				}
			}
		}
		if !raised || try == 10 {
			return fmt.Errorf("go get %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}
