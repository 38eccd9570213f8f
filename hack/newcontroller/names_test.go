package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// candidateKinds are kinds a user may reasonably choose: the three of the field
// case (docs/reliability.md), the words of the Kubernetes API and of a
// controller's code, kinds the tiers already handle, Go's keywords and
// predeclared names capitalised, and ordinary ones.
var candidateKinds = []string{
	"Key", "Name", "Status", "Spec", "Object", "List", "Item", "Items", "Kind", "Type",
	"Reconciler", "Controller", "Client", "Clientset", "Informer", "Lister", "Indexer", "Queue",
	"Workqueue", "Cache", "Scheme", "Resource", "GroupVersion", "SchemeBuilder", "AddToScheme",
	"Interface", "Config", "Context", "Ctx", "Err", "Error", "Log", "Logger", "Event", "Recorder",
	"Metrics", "Time", "Fmt", "Obj", "Owner", "Condition", "Deployment", "Lease", "Namespace",
	"Pod", "Service", "Func", "Map", "Range", "Select", "String", "Any", "Nil", "True", "Len",
	"New", "Make", "Bar", "WebApp", "Policy", "X", "Foo", "Sample",
}

// The field case (docs/reliability.md): KIND=Key, Name and Status from
// sample-controller ran for 80-100 s and failed in go build, in code the user
// did not write. They are refused at once, naming KIND, the name it would make,
// the file that has it already, a kind that works, and the tier that takes it.
func TestKindsThatMeetTheTiersNamesAreRefusedAtOnce(t *testing.T) {
	for _, tc := range []struct{ kind, name string }{{"Key", "key"}, {"Name", "name"}, {"Status", "status"}} {
		t.Run(tc.kind, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "keys")
			args := goodArgs(dir)
			args["kind"] = tc.kind
			code, stderr := runWith(t, args)
			if code != 2 {
				t.Errorf("exit code %d, want 2 (bad input)", code)
			}
			for _, want := range []string{
				"nothing was written",
				"KIND=" + tc.kind + " cannot be used with FROM=sample-controller",
				fmt.Sprintf("%q would become %q, which ", "foo", tc.name),
				"such as KIND=My" + tc.kind,
				"(FROM=kubebuilder-guestbook takes KIND=" + tc.kind + ")",
			} {
				if !strings.Contains(stderr, want) {
					t.Errorf("the error does not say %q:\n%s", want, stderr)
				}
			}
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("%s was created although KIND was refused", dir)
			}
		})
	}
}

// Every refusal names KIND and proposes a kind that is taken.
func TestEveryRefusalOffersAKindThatIsTaken(t *testing.T) {
	such := regexp.MustCompile(`such as KIND=([A-Za-z0-9]+)`)
	for _, from := range tiers {
		for _, kind := range candidateKinds {
			r := Request{From: from, Dir: filepath.Join(t.TempDir(), "p"), Module: "example.com/p", Group: "bar.example.com", Kind: kind, Version: "v1alpha1", Kit: "../.."}
			_, err := r.Validate()
			if err == nil {
				continue
			}
			if !strings.Contains(err.Error(), "KIND="+kind) {
				t.Errorf("FROM=%s KIND=%s: the error does not name KIND=%s:\n%v", from, kind, kind, err)
			}
			m := such.FindStringSubmatch(err.Error())
			if m == nil {
				t.Errorf("FROM=%s KIND=%s: the error proposes no kind:\n%v", from, kind, err)
				continue
			}
			r.Kind = m[1]
			if _, err := r.Validate(); err != nil {
				t.Errorf("FROM=%s KIND=%s: the kind proposed, %s, is refused too:\n%v", from, kind, m[1], err)
			}
		}
	}
}

// GROUP and VERSION together name the API's import (bar and v1: barv1): one
// that is already an import of the tier's code is refused, naming both.
func TestGroupAndVersionThatMeetAnImportAreRefused(t *testing.T) {
	for _, tc := range []struct {
		from, group, version string
		want                 string // "" for taken
	}{
		{"sample-controller", "meta.example.com", "v1", `"samplev1alpha1" would become "metav1"`},
		{"sample-controller", "apps.example.com", "v1", `"samplev1alpha1" would become "appsv1"`},
		{"sample-controller", "core.example.com", "v1", `"samplev1alpha1" would become "corev1"`},
		{"sample-controller", "apps.example.com", "v1beta1", ""},
		{"sample-controller", "bar.example.com", "v1", ""},
		{"kubebuilder-guestbook", "meta.example.com", "v1", `"samplev1alpha1" would become "metav1"`},
		{"kubebuilder-guestbook", "apps.example.com", "v1", ""},
	} {
		_, err := Request{From: tc.from, Dir: filepath.Join(t.TempDir(), "p"), Module: "example.com/p", Group: tc.group, Kind: "Bar", Version: tc.version, Kit: "../.."}.Validate()
		given := fmt.Sprintf("GROUP=%s and VERSION=%s", tc.group, tc.version)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("FROM=%s %s refused: %v", tc.from, given, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), given) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("FROM=%s %s: error %v, want one naming both and saying %s", tc.from, given, err, tc.want)
		}
	}
}

// A MODULE that is, holds or lies under a module the project requires could
// not import that module's packages.
func TestModuleOfADependencyIsRefused(t *testing.T) {
	for _, module := range []string{"k8s.io/client-go", "k8s.io", "k8s.io/api/mine"} {
		args := goodArgs(filepath.Join(t.TempDir(), "p"))
		args["module"] = module
		code, stderr := runWith(t, args)
		if code != 2 || !strings.Contains(stderr, "MODULE="+module+": the project requires the module k8s.io/") {
			t.Errorf("MODULE=%s: exit code %d, error:\n%s\nwant 2 and one naming MODULE and the module it meets", module, code, stderr)
		}
	}
}
