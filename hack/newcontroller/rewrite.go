package main

import (
	"fmt"
	"regexp"
	"strings"
)

// The tier's names, as sample-controller spells them. Every one is rewritten.
const (
	tierModule  = "github.com/controller-kit/controller-kit/sample-controller"
	tierName    = "sample-controller"
	tierGroup   = "samplecontroller.k8s.io"
	tierPkg     = "samplecontroller"
	tierVersion = "v1alpha1"
)

// nameRE finds every spelling of a tier name, longest and most specific first (Go's
// regexp takes the leftmost alternative that matches). Upstream's paths,
// k8s.io/sample-controller/..., are matched first so that they are left alone:
// the comments that compare with upstream still point at upstream.
var nameRE = regexp.MustCompile(strings.Join([]string{
	`k8s\.io/sample-controller[^\s"'` + "`" + `),]*`, // upstream: kept
	regexp.QuoteMeta(tierModule),                     // the Go module path
	`controller-kit/sample-controller`,               // the image repository
	regexp.QuoteMeta(tierName),                       // binary, ServiceAccount, namespace, Lease, field manager
	regexp.QuoteMeta(tierGroup),                      // the API group
	`sample` + tierVersion,                           // the API package's import alias
	`Samplecontroller`, `samplecontroller`,           // the group's Go name and package
	tierVersion, `V1alpha1`, // the version
	`Foos`, `foos`, `Foo`, `foo`, // the kind
}, "|"))

// Rewrite returns text with every tier name replaced by the project's.
func (n Names) Rewrite(text string) string {
	var b strings.Builder
	last := 0
	for _, m := range nameRE.FindAllStringIndex(text, -1) {
		b.WriteString(text[last:m[0]])
		match := text[m[0]:m[1]]
		// camel: the match starts a camelCase identifier (fooClient, foosDeleted),
		// so a kind of several words keeps its humps there (webAppClient).
		camel := m[1] < len(text) && text[m[1]] >= 'A' && text[m[1]] <= 'Z'
		b.WriteString(n.replacement(match, camel))
		last = m[1]
	}
	b.WriteString(text[last:])
	return b.String()
}

// replacement is the project's spelling of one match of nameRE.
func (n Names) replacement(match string, camel bool) string {
	switch {
	case strings.HasPrefix(match, "k8s.io/sample-controller"):
		return match
	case match == tierModule:
		return n.Module
	case match == "controller-kit/sample-controller":
		return n.Name
	case match == tierName:
		return n.Name
	case match == tierGroup:
		return n.Group
	case match == "sample"+tierVersion:
		return n.GroupPkg + n.Version
	case match == "Samplecontroller":
		return n.GroupGo
	case match == tierPkg:
		return n.GroupPkg
	case match == tierVersion:
		return n.Version
	case match == "V1alpha1":
		return strings.ToUpper(n.Version[:1]) + n.Version[1:]
	case match == "Foos":
		return n.Plural
	case match == "Foo":
		return n.Kind
	case match == "foos" && camel:
		return lowerFirst(n.Plural)
	case match == "foos":
		return strings.ToLower(n.Plural)
	case match == "foo" && camel:
		return lowerFirst(n.Kind)
	case match == "foo":
		return strings.ToLower(n.Kind)
	}
	panic("nameRE matched " + match + ", which replacement does not know")
}

// An edit changes text of the tier that a rename alone would make wrong: a
// pointer into the kit (a make target of the kit, a lesson page) or a note about
// the tier's own group. Old must occur in the file exactly once, or the command
// stops and says the tier changed under it (the test catches that first).
// New is written in the tier's names: Rewrite renames it with the rest.
type edit struct {
	file, old, new string
}

// sampleEdits are sample-controller's edits, keyed by path in the tier.
var sampleEdits = []edit{
	{"main.go",
		"run `make run-sample` from the repository root, or: kubectl apply --server-side -f sample-controller/config/crd/",
		"run `make install` in the project's folder, or: kubectl apply --server-side -f config/crd/"},
	{"main.go",
		"It is lesson 2 of controller-kit: docs/lessons/02-sample-controller.md.",
		"It was made from controller-kit's lesson 2 by make new-controller."},
	{"main.go",
		"reference (the kit's) or stub",
		"reference (the one this project was made with) or stub"},
	// cliflag capitalises only the first letter of a section's name: the kind's
	// own spelling keeps a kind of two words (WebApp) readable.
	{"main.go",
		`sections.FlagSet("foo controller")`,
		`sections.FlagSet("Foo controller")`},
	{"main_test.go",
		`"make run-sample"`,
		`"make install"`},
	{"pkg/controller/envtest_test.go",
		"`make test-unit` (at the kit's root or in\n// sample-controller) sets after building them.",
		"`make test-unit` sets (the Makefile's KUBEBUILDER_ASSETS)."},
	{"pkg/controller/envtest_test.go",
		"run the tests with 'make test-unit' (at the kit's root or in sample-controller), which builds both and sets KUBEBUILDER_ASSETS",
		"run the tests with 'make test-unit', which sets KUBEBUILDER_ASSETS (see the Makefile)"},
	{"pkg/controller/envtest_test.go",
		"run the tests with 'make test-unit' (at the kit's root or in sample-controller), which builds it",
		"point KUBEBUILDER_ASSETS at a folder that has it (see the Makefile)"},
	// The tier's group ends in .k8s.io and so needs the api-approved annotation;
	// the project's group is its own (Validate refuses .k8s.io).
	{"pkg/apis/samplecontroller/v1alpha1/types.go",
		`//
// The group samplecontroller.k8s.io ends in .k8s.io, a suffix the API server
// reserves for APIs reviewed by the Kubernetes project: a CRD in it must carry
// the api-approved.kubernetes.io annotation, here saying it is not approved.
// Your own APIs belong in a group of your own domain instead.
`, ""},
	{"pkg/apis/samplecontroller/v1alpha1/types.go",
		"// +kubebuilder:metadata:annotations=\"api-approved.kubernetes.io=unapproved, experimental-only\"\n",
		// controller-gen's plural (flect) and client-gen's (gengo) differ for some
		// words (Person: people, Persons); the marker makes the CRD use client-gen's.
		"// +kubebuilder:resource:path=foos,singular=foo\n"},
	{"pkg/apis/samplecontroller/register.go",
		`// GroupName is the API group of Foo. It is the same as upstream sample-controller's,
// so upstream documentation and kubectl habits carry over.`,
		`// GroupName is the API group of Foo.`},
	{"config/manager/deployment.yaml",
		"# `make deploy` replaces the image with controller-kit/sample-controller:<git commit>.",
		"# `make deploy` replaces the image with $(IMG), sample-controller:<git commit> by default."},
}

// applyEdits applies the edits of one file and fails when one does not match
// exactly once.
func applyEdits(path, text string, edits []edit) (string, error) {
	for _, e := range edits {
		if e.file != path {
			continue
		}
		if c := strings.Count(text, e.old); c != 1 {
			return "", fmt.Errorf("%s: the text this command changes was found %d times, not once (the tier changed; update hack/newcontroller/rewrite.go): %q", path, c, firstLine(e.old))
		}
		text = strings.Replace(text, e.old, e.new, 1)
	}
	return text, nil
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
