package main

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"go/format"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"text/template"
	"time"
)

//go:embed template
var templates embed.FS

// skipped are the tier's files and folders the project does not take: build
// output, the e2e suite (it needs the kit's test/kittest), generated code (made
// again), and the files the project gets a version of its own of (template/).
var skipped = map[string]bool{
	"bin": true, "test": true, "pkg/generated": true, "config/crd": true,
	"hack": true, "Makefile": true, "README.md": true,
}

// templateData is what the files under template/ are filled in with.
type templateData struct {
	Names
	Lower, LowerPlural, APIDir string
	// VersionGo is the version as client-gen spells it in Go (V1alpha1).
	VersionGo string
	// Alias is the import name of the API package: bar and v1alpha1 give barv1alpha1.
	Alias string
	// Assets is the folder of envtest's kube-apiserver and etcd; KubeMinor, such
	// as 1.37.x, what setup-envtest is asked for.
	Assets, KubeMinor string
	// KubebuilderPlural is the kind's plural as the kubebuilder CLI spelled it in
	// the RBAC markers it scaffolded (Person: people); set once it has run.
	KubebuilderPlural string
	// Year is the year the project is made: the kubebuilder project's Makefile
	// keeps it for the license header of generated files.
	Year int
}

// progress prints numbered steps with the seconds since the start.
type progress struct {
	out   io.Writer
	start time.Time
}

func (p progress) step(format string, args ...any) {
	fmt.Fprintf(p.out, "[%3ds] %s\n", int(time.Since(p.start).Seconds()), fmt.Sprintf(format, args...))
}

// Generate makes the project n describes from the kit at kitRoot. It builds it in
// a temporary folder and moves it to n.Dir only when everything worked.
func Generate(n Names, kitRoot string, out io.Writer) error {
	p := progress{out: out, start: time.Now()}
	kit, err := filepath.Abs(kitRoot)
	if err != nil {
		return err
	}
	inKit, err := placeInKit(kit, n)
	if err != nil {
		return err
	}
	data, err := newTemplateData(n, kit)
	if err != nil {
		return err
	}

	stage, err := os.MkdirTemp("", "new-controller-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	proj := filepath.Join(stage, n.Name)

	makeProject := makeFromSample
	if n.fromKubebuilder() {
		makeProject = makeFromKubebuilder
	}
	if err := makeProject(p, data, kit, proj); err != nil {
		return err
	}
	p.step("git init and a first commit (so make verify has a HEAD to check)")
	if err := gitInit(out, proj); err != nil {
		return err
	}

	p.step("moving the project to %s", n.Dir)
	if err := move(proj, n.Dir); err != nil {
		return err
	}
	if inKit != "" {
		if err := run(out, kit, "go", "work", "use", "./"+inKit); err != nil {
			return fmt.Errorf("the project is in %s, but adding it to the kit's go.work failed (run `go work use ./%s` at the kit's root): %w", n.Dir, inKit, err)
		}
		p.step("added ./%s to the kit's go.work: the one change to the kit (go commands run from the kit's root see the project)", inKit)
	} else {
		p.step("the project is outside the kit's tree: the kit is untouched")
	}
	unit := "make test-unit"
	if n.fromKubebuilder() {
		unit = "make test     "
	}
	fmt.Fprintf(out, "\nDone: %s (%s, %s %s/%s). Next:\n  cd %s\n  make help\n  %s  # unit and envtest tests\n  make verify\n  make run        # against $KUBECONFIG (in the kit: eval \"$(make env)\" first)\n  make test-e2e   # the project's e2e suite, against $KUBECONFIG too\n",
		n.Dir, n.Module, n.Kind, n.Group, n.Version, n.Dir, unit)
	return nil
}

// makeFromSample makes the project in proj from sample-controller: the tier
// copied with every name rewritten, the project's own files from template/,
// its code regenerated, built and vetted.
func makeFromSample(p progress, d templateData, kit, proj string) error {
	n := d.Names
	p.step("copying %s into a temporary folder with every name rewritten (%s, %s, %s/%s, %s)", n.From, n.Module, n.Kind, n.Group, n.Version, n.Name)
	if err := copyTier(n, filepath.Join(kit, n.From), proj); err != nil {
		return err
	}
	if err := writeTemplates(d, proj); err != nil {
		return err
	}
	p.step("hack/tools/go.mod: the generators at the kit's pins (hack/tools/go.mod of the kit)")
	if err := writeToolsModule(n, kit, proj); err != nil {
		return err
	}
	if err := run(p.out, filepath.Join(proj, "hack", "tools"), "go", "mod", "tidy"); err != nil {
		return err
	}
	p.step("generating deepcopy, clientset, listers, informers and the CRD (the first time builds the generators: a minute or two)")
	if err := run(p.out, proj, "hack/update-codegen.sh"); err != nil {
		return err
	}
	p.step("go mod tidy, go build ./..., go vet ./... and go vet -tags e2e ./test/e2e/")
	for _, args := range [][]string{{"mod", "tidy"}, {"build", "./..."}, {"vet", "./..."}, {"vet", "-tags", "e2e", "./test/e2e/"}} {
		if err := run(p.out, proj, "go", args...); err != nil {
			return err
		}
	}
	return nil
}

// placeInKit returns DIR's path relative to the kit when DIR is inside the kit's
// tree ("" when it is outside), and refuses a DIR below one of the kit's folders:
// a project inside the kit sits at its top level, beside the tiers.
func placeInKit(kit string, n Names) (string, error) {
	rel, err := filepath.Rel(kit, n.Dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", nil
	}
	if rel == "." || strings.Contains(rel, string(filepath.Separator)) {
		first, _, _ := strings.Cut(rel, string(filepath.Separator))
		return "", fmt.Errorf("DIR=%s is inside the kit's folder %s/: a project inside the kit goes at its top level (such as DIR=%s), or anywhere outside the kit (such as DIR=../%s)",
			n.Request.Dir, first, n.Name, n.Name)
	}
	return rel, nil
}

// newTemplateData works out the names the templates use, and where envtest's
// binaries are: $KUBEBUILDER_ASSETS (the kit's Makefile exports it), else the
// kit's bin/k8s folder for the pinned Kubernetes version.
func newTemplateData(n Names, kit string) (templateData, error) {
	d := templateData{
		Names:       n,
		Lower:       strings.ToLower(n.Kind),
		LowerPlural: strings.ToLower(n.Plural),
		APIDir:      path.Join("pkg/apis", n.GroupPkg, n.Version),
		VersionGo:   strings.ToUpper(n.Version[:1]) + n.Version[1:],
		Alias:       n.GroupPkg + n.Version,
		Assets:      os.Getenv("KUBEBUILDER_ASSETS"),
		Year:        time.Now().Year(),
	}
	if n.fromKubebuilder() {
		d.APIDir = path.Join("api", n.Version)
	}
	version, err := exec.Command(filepath.Join(kit, "hack", "controlplane", "kube-version.sh")).Output()
	if err != nil {
		return d, fmt.Errorf("reading the kit's Kubernetes version (hack/controlplane/kube-version.sh): %w", err)
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(version)), "v")
	if d.Assets == "" {
		d.Assets = filepath.Join(kit, "bin", "k8s", v+"-"+runtime.GOOS+"-"+runtime.GOARCH)
	}
	if i := strings.LastIndex(v, "."); i > 0 {
		d.KubeMinor = v[:i] + ".x"
	}
	return d, nil
}

// copyTier copies the tier's files into proj, every name rewritten in their
// paths and contents, the tier's edits applied.
func copyTier(n Names, tier, proj string) error {
	return filepath.WalkDir(tier, func(src string, entry fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(tier, src)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if skipped[rel] || strings.HasPrefix(entry.Name(), "zz_generated.") {
			if entry.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if entry.IsDir() {
			return nil
		}
		// A binary `go build` left in the tier's folder is no source.
		if rel == n.From {
			return nil
		}
		content, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		text, err := applyEdits(rel, string(content), sampleEdits)
		if err != nil {
			return err
		}
		info, err := entry.Info()
		if err != nil {
			return err
		}
		switch {
		case rel == "go.sum":
			// Checksums are no names: a hash may hold "foo" by chance.
		case rel == "go.mod":
			// Only the module's own path; a requirement's path is someone else's.
			text = strings.Replace(text, "module "+tierModule+"\n", "module "+n.Module+"\n", 1)
		case path.Ext(rel) == ".go":
			// A renamed identifier of another length moves gofmt's alignment.
			formatted, err := format.Source([]byte(n.Rewrite(text)))
			if err != nil {
				return fmt.Errorf("%s after the rename: %w", rel, err)
			}
			text = string(formatted)
		default:
			text = n.Rewrite(text)
		}
		return writeFile(filepath.Join(proj, filepath.FromSlash(n.Rewrite(rel))), text, info.Mode().Perm())
	})
}

// writeTemplates fills in the files under template/common/ and then
// template/<tier>/ and writes them into proj, replacing what is there. Names in
// a template's path change as the project's files are named: "gitignore" and
// "github/" become .gitignore and .github/ (embed leaves out dot files), a
// trailing ".tmpl" goes (it keeps Go from reading a template as source), and
// KIND, GROUP and VERSION become the kind in lowercase, the group's first label
// and the version. A Go file is formatted once filled in.
func writeTemplates(d templateData, proj string) error {
	return eachTemplate(d, func(name, rel string, filled []byte) error {
		text := string(filled)
		if path.Ext(rel) == ".go" {
			formatted, err := format.Source(filled)
			if err != nil {
				return fmt.Errorf("%s filled in: %w", name, err)
			}
			text = string(formatted)
		}
		mode := fs.FileMode(0o644)
		if strings.HasSuffix(rel, ".sh") {
			mode = 0o755
		}
		return writeFile(filepath.Join(proj, filepath.FromSlash(rel)), text, mode)
	})
}

// eachTemplate fills in each file under template/common/ and then
// template/<d.From>/ with d and calls fn with the template's name, its path in
// the project (templatePath) and its filled-in content, stopping at the first
// error.
func eachTemplate(d templateData, fn func(name, rel string, filled []byte) error) error {
	for _, root := range []string{"template/common", "template/" + d.From} {
		err := fs.WalkDir(templates, root, func(name string, entry fs.DirEntry, err error) error {
			if err != nil || entry.IsDir() {
				return err
			}
			content, err := templates.ReadFile(name)
			if err != nil {
				return err
			}
			tmpl, err := template.New(name).Option("missingkey=error").Parse(string(content))
			if err != nil {
				return err
			}
			var b bytes.Buffer
			if err := tmpl.Execute(&b, d); err != nil {
				return err
			}
			return fn(name, templatePath(d, strings.TrimPrefix(name, root+"/")), b.Bytes())
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// templatePath is the path in the project of the template at rel.
func templatePath(d templateData, rel string) string {
	switch {
	case rel == "gitignore":
		rel = ".gitignore"
	case strings.HasPrefix(rel, "github/"):
		rel = "." + rel
	}
	rel = strings.TrimSuffix(rel, ".tmpl")
	return strings.NewReplacer("KIND", d.Lower, "GROUP", d.GroupPkg, "VERSION", d.Version).Replace(rel)
}

// unusedTools are, for each tier, the kit's tools its projects do not run:
// sample-controller's no kustomize (it has no kustomization), applyconfiguration-gen
// (it uses no apply configurations) or kubebuilder; kubebuilder's no code-generator.
var unusedTools = map[string]*regexp.Regexp{
	"sample-controller":     regexp.MustCompile(`(?m)^\s*(sigs\.k8s\.io/kustomize/kustomize/v5|k8s\.io/code-generator/cmd/applyconfiguration-gen|sigs\.k8s\.io/kubebuilder/v4)\s*\n`),
	"kubebuilder-guestbook": regexp.MustCompile(`(?m)^\s*k8s\.io/code-generator/cmd/[a-z-]+\s*\n`),
}

// toolsHeaders are the first lines of a project's hack/tools/go.mod.
var toolsHeaders = map[string]string{
	"sample-controller": "// Module tools pins the code generators hack/update-codegen.sh runs through\n" +
		"// 'go tool -modfile=hack/tools/go.mod', at controller-kit's versions when this project\n" +
		"// was made. A module of its own, so a tool's dependencies never move the controller's.\n",
	"kubebuilder-guestbook": "// Module tools pins controller-gen and kustomize, which the Makefile builds into\n" +
		"// bin/ from it, and the kubebuilder CLI ('go tool -modfile=hack/tools/go.mod kubebuilder'),\n" +
		"// at controller-kit's versions when this project was made. A module of its own, so a\n" +
		"// tool's dependencies never move the controller's.\n",
}

// writeToolsModule writes hack/tools/go.mod and go.sum from the kit's: the same
// requirements, hence the same tool versions, under the project's module path,
// without the tools the tier does not run (go mod tidy then drops what only they needed).
func writeToolsModule(n Names, kit, proj string) error {
	mod, err := os.ReadFile(filepath.Join(kit, "hack", "tools", "go.mod"))
	if err != nil {
		return err
	}
	sum, err := os.ReadFile(filepath.Join(kit, "hack", "tools", "go.sum"))
	if err != nil {
		return err
	}
	text := string(mod)
	i := strings.Index(text, "\nmodule ")
	if i < 0 {
		return errors.New("the kit's hack/tools/go.mod has no module line")
	}
	_, rest, _ := strings.Cut(text[i+1:], "\n")
	text = toolsHeaders[n.From] + "module " + n.Module + "/hack/tools\n" + unusedTools[n.From].ReplaceAllString(rest, "")
	if err := writeFile(filepath.Join(proj, "hack", "tools", "go.mod"), text, 0o644); err != nil {
		return err
	}
	return writeFile(filepath.Join(proj, "hack", "tools", "go.sum"), string(sum), 0o644)
}

// gitInit makes proj a git repository with everything in a first commit. Where
// git has no identity configured, the commit is made as "new-controller".
func gitInit(out io.Writer, proj string) error {
	if err := run(out, proj, "git", "init", "--quiet", "--initial-branch=main"); err != nil {
		return err
	}
	if err := run(out, proj, "git", "add", "--all"); err != nil {
		return err
	}
	commit := []string{"commit", "--quiet", "--message", "Made by controller-kit's make new-controller"}
	if id, _ := exec.Command("git", "-C", proj, "config", "user.email").Output(); len(bytes.TrimSpace(id)) == 0 {
		fmt.Fprintln(out, "       (git has no user.email: the first commit is made as new-controller <new-controller@localhost>)")
		commit = append([]string{"-c", "user.name=new-controller", "-c", "user.email=new-controller@localhost"}, commit...)
	}
	return run(out, proj, "git", commit...)
}

// move puts the finished project at dir: a rename where it can (an empty dir is
// replaced), else a copy (the temporary folder is on another file system).
func move(proj, dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	// An empty folder at dir is allowed (Validate checked); rename replaces it.
	err := os.Rename(proj, dir)
	if err == nil || !errors.Is(err, syscall.EXDEV) {
		return err
	}
	if err := copyTree(proj, dir); err != nil {
		os.RemoveAll(dir)
		return err
	}
	return nil
}

// copyTree copies the folder src to dst, file modes kept.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(from string, entry fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, from)
		to := filepath.Join(dst, rel)
		info, err := entry.Info()
		if err != nil {
			return err
		}
		if entry.IsDir() {
			return os.MkdirAll(to, info.Mode().Perm())
		}
		content, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		return os.WriteFile(to, content, info.Mode().Perm())
	})
}

// writeFile writes content to name, making its folder first.
func writeFile(name, content string, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return os.WriteFile(name, []byte(content), mode)
}

// run runs a command in dir, its output shown indented under the step, with
// GOWORK=off: the project is a module of its own wherever it is made.
func run(out io.Writer, dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if name == "go" && len(args) > 0 && args[0] == "work" {
		cmd.Env = os.Environ()
	}
	w := &indent{w: out, atStart: true}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s (in %s): %w", name, strings.Join(args, " "), dir, err)
	}
	return nil
}

// indent writes everything it is given with each line indented.
type indent struct {
	w       io.Writer
	atStart bool
}

func (i *indent) Write(b []byte) (int, error) {
	var buf bytes.Buffer
	for _, c := range b {
		if i.atStart {
			buf.WriteString("       ")
		}
		buf.WriteByte(c)
		i.atStart = c == '\n'
	}
	_, err := i.w.Write(buf.Bytes())
	return len(b), err
}
