package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goodArgs are a request that passes Validate; each bad-input case changes one.
func goodArgs(dir string) map[string]string {
	return map[string]string{
		"from": "sample-controller", "dir": dir, "module": "example.com/bar-controller",
		"group": "bar.example.com", "kind": "Bar", "version": "v1alpha1", "kit": "../..",
	}
}

func TestBadInputNamesTheVariableAndTheFixAndWritesNothing(t *testing.T) {
	for _, tc := range []struct {
		name, flag, value string
		// want are parts of the error: the variable with its value, and the fix.
		want []string
	}{
		{"missing FROM", "from", "", []string{"FROM is missing", "FROM=sample-controller", "FROM=kubebuilder-guestbook"}},
		{"unknown FROM", "from", "workqueue", []string{"FROM=workqueue is not a tier", "FROM=sample-controller", "FROM=kubebuilder-guestbook"}},
		{"missing DIR", "dir", "", []string{"DIR is missing", "DIR=../bar-controller"}},
		{"missing MODULE", "module", "", []string{"MODULE is missing", "MODULE=example.com/bar-controller"}},
		{"MODULE with a space", "module", "example.com/bar controller", []string{`MODULE=example.com/bar controller is not a Go module path`, `"bar controller"`}},
		{"MODULE ending in a slash", "module", "example.com/bar/", []string{"MODULE=example.com/bar/", "ends with '/'"}},
		{"missing GROUP", "group", "", []string{"GROUP is missing", "GROUP=bar.example.com"}},
		{"GROUP without a dot", "group", "bar", []string{"GROUP=bar has no dot", "GROUP=bar.example.com"}},
		{"GROUP in uppercase", "group", "Bar.example.com", []string{"GROUP=Bar.example.com is not a DNS subdomain"}},
		{"GROUP of Kubernetes", "group", "bar.k8s.io", []string{"GROUP=bar.k8s.io ends in k8s.io", "a domain of your own"}},
		{"GROUP whose package would have a dash", "group", "my-bar.example.com", []string{"GROUP=my-bar.example.com", `"my-bar"`, "GROUP=mybar.example.com"}},
		{"missing KIND", "kind", "", []string{"KIND is missing", "KIND=Bar"}},
		{"KIND in lowercase", "kind", "bar", []string{"KIND=bar is not a kind", "CamelCase"}},
		{"KIND the code already uses", "kind", "Deployment", []string{"KIND=Deployment", `"deployment"`, "KIND=MyDeployment"}},
		{"KIND a Go keyword", "kind", "Type", []string{"KIND=Type", "KIND=MyType"}},
		{"malformed VERSION", "version", "1.0", []string{"VERSION=1.0 is not a Kubernetes API version", "VERSION=v1alpha1"}},
		{"NAME not a DNS label", "name", "Bar_Controller", []string{"NAME=Bar_Controller is not a usable controller name", "NAME=bar-controller"}},
		{"empty VERSION", "version", "", []string{"VERSION is empty", "v1alpha1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "bar-controller")
			args := goodArgs(dir)
			args[tc.flag] = tc.value
			code, stderr := runWith(t, args)
			if code != 2 {
				t.Errorf("exit code %d, want 2 (bad input)", code)
			}
			for _, want := range append([]string{"nothing was written"}, tc.want...) {
				if !strings.Contains(stderr, want) {
					t.Errorf("the error does not say %q:\n%s", want, stderr)
				}
			}
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("%s was created although the input was bad", dir)
			}
		})
	}
}

func TestNonEmptyDIRIsRefusedAndLeftAsItWas(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(mine, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr := runWith(t, goodArgs(dir))
	if code != 2 || !strings.Contains(stderr, "DIR="+dir+" exists and is not empty (it holds notes.txt)") {
		t.Errorf("exit code %d, error:\n%s\nwant 2 and one naming DIR and what it holds", code, stderr)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("DIR holds %d entries after the refusal, want only notes.txt", len(entries))
	}
}

func TestAllBadVariablesAreReportedAtOnce(t *testing.T) {
	args := goodArgs(filepath.Join(t.TempDir(), "x"))
	args["group"], args["kind"] = "bar", "bar"
	_, stderr := runWith(t, args)
	if !strings.Contains(stderr, "GROUP=bar") || !strings.Contains(stderr, "KIND=bar") {
		t.Errorf("two bad variables, but the error does not name both:\n%s", stderr)
	}
}

func TestDIRBelowAKitFolderIsRefused(t *testing.T) {
	kit, _ := filepath.Abs("../..")
	args := goodArgs(filepath.Join(kit, "hack", "bar-controller"))
	code, stderr := runWith(t, args)
	if code != 1 || !strings.Contains(stderr, "is inside the kit's folder hack/") || !strings.Contains(stderr, "DIR=bar-controller") {
		t.Errorf("exit code %d, error:\n%s\nwant 1 and one saying a project in the kit goes at its top level", code, stderr)
	}
	if _, err := os.Stat(args["dir"]); err == nil {
		t.Errorf("%s was created", args["dir"])
	}
}

// The plural must be code-generator's: the clientset, listers and informers are
// named with it, and the hand-written code calls them by it.
func TestPluralIsCodeGeneratorsPlural(t *testing.T) {
	for kind, want := range map[string]string{
		"Bar": "Bars", "Policy": "Policies", "Day": "Days", "Class": "Classes", "Box": "Boxes",
		"Match": "Matches", "Wish": "Wishes", "Moth": "Moths", "Leaf": "Leaves", "Knife": "Knives",
		// code-generator's rule, not English: fe after f is ves.
		"Cafe": "Caves",
	} {
		if got := pluralOf(kind); got != want {
			t.Errorf("pluralOf(%s) = %s, want %s", kind, got, want)
		}
	}
}

// leftover finds a name of the tier that should have been rewritten.
// kept are the mentions left on purpose: upstream's paths (the comments that
// compare with upstream) and where the project says what it was made from.
var kept = regexp.MustCompile(`k8s\.io/sample-controller[^\s,]*|controller-kit's sample-controller|sample-controller's own suite`)

var leftover = regexp.MustCompile(`(?i)foo|samplecontroller|controller-kit/controller-kit|(^|[^/])sample-controller|v1alpha1`)

// TestEveryTierNameIsRewritten copies sample-controller as the command does
// (without the generators, so in well under a second) for a kind of two words
// and another version, and looks for any name of the tier left behind.
func TestEveryTierNameIsRewritten(t *testing.T) {
	n, err := Request{From: "sample-controller", Dir: t.TempDir(), Module: "example.com/web-app-controller",
		Group: "web.example.com", Kind: "WebApp", Version: "v1beta1", Kit: "../.."}.Validate()
	if err != nil {
		t.Fatal(err)
	}
	kit, _ := filepath.Abs("../..")
	data, err := newTemplateData(n, kit)
	if err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(t.TempDir(), "p")
	if err := copyTier(n, filepath.Join(kit, "sample-controller"), proj); err != nil {
		t.Fatalf("copying the tier: %v", err)
	}
	if err := writeTemplates(data, proj); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pkg/apis/web/v1beta1/types.go", "config/examples/webapp.yaml", "hack/update-codegen.sh", "hack/verify-codegen.sh", ".gitignore", "test/e2e/e2e_test.go", "test/e2e/cluster_test.go"} {
		if _, err := os.Stat(filepath.Join(proj, want)); err != nil {
			t.Errorf("the project has no %s", want)
		}
	}
	if out, err := exec.Command("gofmt", "-l", proj).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("gofmt -l lists files of the project (the rename moved their alignment): %v\n%s", err, out)
	}
	err = filepath.WalkDir(proj, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "go.sum" {
			return err
		}
		rel, _ := filepath.Rel(proj, path)
		if leftover.MatchString(rel) {
			t.Errorf("path %s keeps a name of the tier", rel)
		}
		content, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(content), "\n") {
			if m := leftover.FindString(kept.ReplaceAllString(line, "")); m != "" {
				t.Errorf("%s:%d keeps %q: %s", rel, i+1, m, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		"main.go":                       `sections.FlagSet("WebApp controller")`,
		"pkg/apis/web/v1beta1/types.go": "+kubebuilder:resource:path=webapps,singular=webapp",
		"pkg/controller/controller.go":  `const ControllerName = "web-app-controller"`,
		"config/rbac/role.yaml":         `resources: ["webapps/status"]`,
		"config/manager/namespace.yaml": "name: web-app-controller-system",
		"config/examples/webapp.yaml":   "apiVersion: web.example.com/v1beta1",
		"Makefile":                      "CRD := config/crd/web.example.com_webapps.yaml",
		"test/e2e/e2e_test.go":          "clientset.WebV1beta1().WebApps(ns)",
		"test/e2e/cluster_test.go":      `GenerateName: "web-app-controller-e2e-"`,
	} {
		content, _ := os.ReadFile(filepath.Join(proj, file))
		if !strings.Contains(string(content), want) {
			t.Errorf("%s does not have %q", file, want)
		}
	}
}

// runWith runs the command with the flags in args and returns its exit code and
// standard error.
func runWith(t *testing.T, args map[string]string) (int, string) {
	t.Helper()
	var list []string
	for flag, value := range args {
		list = append(list, "-"+flag+"="+value)
	}
	var out, errOut bytes.Buffer
	code := runCommand(list, &out, &errOut)
	return code, errOut.String()
}
