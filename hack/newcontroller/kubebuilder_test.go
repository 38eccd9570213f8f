package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// kubebuilderArgs maps GROUP, KIND, VERSION, MODULE and NAME onto the CLI's flags.
func kubebuilderRequest(t *testing.T, kind string) Names {
	t.Helper()
	n, err := Request{From: "kubebuilder-guestbook", Dir: t.TempDir(), Module: "example.org/people-operator",
		Group: "crew.ops.example.org", Kind: kind, Version: "v1beta1", Name: "people-operator", Kit: "../.."}.Validate()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestKubebuilderGetsGroupSplitAtTheFirstDot(t *testing.T) {
	n := kubebuilderRequest(t, "Person")
	initArgs, createArgs := kubebuilderArgs(n)
	wantInit := []string{"init", "--domain", "ops.example.org", "--repo", "example.org/people-operator", "--project-name", "people-operator"}
	wantCreate := []string{"create", "api", "--group", "crew", "--version", "v1beta1", "--kind", "Person", "--resource", "--controller", "--make=false"}
	if !slices.Equal(initArgs, wantInit) {
		t.Errorf("kubebuilder %v, want %v", initArgs, wantInit)
	}
	if !slices.Equal(createArgs, wantCreate) {
		t.Errorf("kubebuilder %v, want %v", createArgs, wantCreate)
	}
}

// The kubebuilder tier's own rules: a Go keyword breaks kubebuilder's scaffold,
// but a kind sample-controller's code would clash with is fine. (Validate alone:
// an accepted request would go on to make the project.)
func TestKubebuilderKindRules(t *testing.T) {
	for _, tc := range []struct {
		kind string
		want string // "" for accepted
	}{
		{"Type", "kubebuilder's scaffold names a variable so"},
		{"Func", "kubebuilder's scaffold names a variable so"},
		{"Deployment", ""},
		{"Lease", ""},
		{"WebApp", ""},
	} {
		_, err := Request{From: "kubebuilder-guestbook", Dir: filepath.Join(t.TempDir(), "x"), Module: "example.org/p",
			Group: "bar.example.org", Kind: tc.kind, Version: "v1alpha1", Kit: "../.."}.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("KIND=%s refused for kubebuilder-guestbook: %v", tc.kind, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), "KIND="+tc.kind) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("KIND=%s: error %v, want one naming it and saying %q", tc.kind, err, tc.want)
		}
	}
}

func TestKubebuilderGroupErrorNamesTheCLIFlag(t *testing.T) {
	args := goodArgs(filepath.Join(t.TempDir(), "x"))
	args["from"], args["group"] = "kubebuilder-guestbook", "my-bar.example.com"
	code, stderr := runWith(t, args)
	if code != 2 || !strings.Contains(stderr, "kubebuilder's --group") || !strings.Contains(stderr, "GROUP=mybar.example.com") {
		t.Errorf("exit code %d, error:\n%s\nwant 2, naming kubebuilder's --group and the fix", code, stderr)
	}
}

// The project builds with the versions kubebuilder-guestbook builds with.
func TestKubebuilderProjectTakesTheTiersVersions(t *testing.T) {
	mod, err := os.ReadFile("../../kubebuilder-guestbook/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, module := range pinnedByTier {
		version, ok := requiredVersion(string(mod), module)
		if !ok || !strings.HasPrefix(version, "v0.") {
			t.Errorf("kubebuilder-guestbook/go.mod: %s at %q (found %v), want a v0 version", module, version, ok)
		}
	}
	single := "module m\n\nrequire example.com/one v1.2.3\n\nrequire (\n\texample.com/two v0.4.0 // indirect\n)\n"
	for module, want := range map[string]string{"example.com/one": "v1.2.3", "example.com/two": "v0.4.0"} {
		if got, _ := requiredVersion(single, module); got != want {
			t.Errorf("requiredVersion(%s) = %q, want %q", module, got, want)
		}
	}
	if _, ok := requiredVersion(single, "example.com"); ok {
		t.Error("requiredVersion found a module the go.mod does not require")
	}
}

// Each tier's project pins only the tools it runs, at the kit's versions.
func TestToolsModuleOfEachTier(t *testing.T) {
	kit, _ := filepath.Abs("../..")
	for from, want := range map[string]struct{ has, hasNot []string }{
		"sample-controller": {
			has:    []string{"k8s.io/code-generator/cmd/client-gen", "sigs.k8s.io/controller-tools/cmd/controller-gen"},
			hasNot: []string{"sigs.k8s.io/kubebuilder/v4\n", "sigs.k8s.io/kustomize/kustomize/v5\n", "applyconfiguration-gen"},
		},
		"kubebuilder-guestbook": {
			has:    []string{"sigs.k8s.io/controller-tools/cmd/controller-gen", "sigs.k8s.io/kustomize/kustomize/v5\n", "sigs.k8s.io/kubebuilder/v4\n"},
			hasNot: []string{"k8s.io/code-generator/cmd/"},
		},
	} {
		proj := t.TempDir()
		if err := writeToolsModule(Names{Request: Request{From: from, Module: "example.org/p"}}, kit, proj); err != nil {
			t.Fatal(err)
		}
		content, _ := os.ReadFile(filepath.Join(proj, "hack", "tools", "go.mod"))
		text := string(content)
		tools := text[strings.Index(text, "tool ("):]
		tools = tools[:strings.Index(tools, ")")]
		if !strings.Contains(text, "\nmodule example.org/p/hack/tools\n") {
			t.Errorf("%s: the tools module is not under the project's path:\n%s", from, text)
		}
		for _, tool := range want.has {
			if !strings.Contains(tools, tool) {
				t.Errorf("%s: the tools module does not have %s:\n%s", from, tool, tools)
			}
		}
		for _, tool := range want.hasNot {
			if strings.Contains(tools, tool) {
				t.Errorf("%s: the tools module has %s, which the tier does not run:\n%s", from, tool, tools)
			}
		}
	}
}

// An edit whose text kubebuilder no longer scaffolds (or scaffolds twice) stops
// the command, naming the file; a replacement is written as it is.
func TestKubebuilderEditMatchesExactlyOnce(t *testing.T) {
	e := literal("Makefile", "IMG ?= controller:latest\n", "IMG ?= $(NAME):dev\n")
	if got, err := applyEdit(e, "a\nIMG ?= controller:latest\nb\n"); err != nil || got != "a\nIMG ?= $(NAME):dev\nb\n" {
		t.Errorf("applyEdit = %q, %v; want the line replaced, $ kept", got, err)
	}
	for name, text := range map[string]string{"missing": "a\n", "twice": "IMG ?= controller:latest\nIMG ?= controller:latest\n"} {
		_, err := applyEdit(e, text)
		if err == nil || !strings.Contains(err.Error(), "Makefile: ") || !strings.Contains(err.Error(), "kubebuilder's scaffold changed") {
			t.Errorf("%s: applyEdit error %v, want one naming Makefile and saying the scaffold changed", name, err)
		}
	}
}

func TestScaffoldedPluralIsReadFromTheRBACMarker(t *testing.T) {
	proj := t.TempDir()
	file := filepath.Join(proj, "internal", "controller", "person_controller.go")
	marker := "// +kubebuilder:rbac:groups=crew.ops.example.org,resources=people,verbs=get;list\n"
	if err := writeFile(file, "package controller\n\n"+marker, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := scaffoldedPlural(proj, "person"); err != nil || got != "people" {
		t.Errorf("scaffoldedPlural = %q, %v; want people", got, err)
	}
	if err := writeFile(file, "package controller\n", 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := scaffoldedPlural(proj, "person"); err == nil || !strings.Contains(err.Error(), "no +kubebuilder:rbac marker") {
		t.Errorf("scaffoldedPlural without a marker: %v, want an error saying so", err)
	}
}

// The kit's files of a kubebuilder project: filled in for a kind whose plural
// is irregular, named as kubebuilder names its files, valid Go, every marker
// and name the project's.
func TestKubebuilderTemplatesFillIn(t *testing.T) {
	n := kubebuilderRequest(t, "Person")
	kit, _ := filepath.Abs("../..")
	d, err := newTemplateData(n, kit)
	if err != nil {
		t.Fatal(err)
	}
	d.KubebuilderPlural = "people"
	proj := t.TempDir()
	if err := writeTemplates(d, proj); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		"internal/controller/person_controller.go":      "+kubebuilder:rbac:groups=crew.ops.example.org,resources=people/status,verbs=get;update;patch",
		"internal/controller/person_controller_test.go": `crewv1beta1 "example.org/people-operator/api/v1beta1"`,
		"test/e2e/e2e_test.go":                          "func TestPersonBecomesAvailable(t *testing.T)",
		"test/e2e/cluster_test.go":                      `GenerateName: "people-operator-e2e-"`,
		"README.md":                                     "kubebuilder create api --group crew --version v1beta1 --kind Person",
	} {
		content, err := os.ReadFile(filepath.Join(proj, filepath.FromSlash(file)))
		if err != nil {
			t.Errorf("the project has no %s", file)
			continue
		}
		if !strings.Contains(string(content), want) {
			t.Errorf("%s does not have %q", file, want)
		}
		if strings.Contains(string(content), "{{") {
			t.Errorf("%s keeps a template action", file)
		}
		if filepath.Ext(file) == ".go" {
			if _, err := parser.ParseFile(token.NewFileSet(), file, content, parser.AllErrors); err != nil {
				t.Errorf("%s is not valid Go: %v", file, err)
			}
		}
	}
	if leftover := regexp.MustCompile(`(?i)\bfoo|guestbook|webapp`); leftover.MatchString(readAll(t, proj)) {
		t.Errorf("the kit's files keep a name of another project: %q", leftover.FindString(readAll(t, proj)))
	}
}

// readAll is every file under dir, joined.
func readAll(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		content, err := os.ReadFile(path)
		b.Write(content)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
