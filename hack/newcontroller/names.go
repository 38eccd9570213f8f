package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Request is what the user asked for: the make variables of `make new-controller`.
type Request struct {
	From    string // FROM: the tier's folder name
	Dir     string // DIR: where the project goes
	Module  string // MODULE: the Go module path
	Group   string // GROUP: the API group
	Kind    string // KIND: the kind, in CamelCase
	Version string // VERSION: the API version
	Name    string // NAME: the controller's name (binary, ServiceAccount, Lease, ...)
	// Kit is the kit's root folder (-kit): Validate reads the tier's code there
	// to know which names it already uses.
	Kit string
}

// fromKubebuilder reports whether the project is made by the kubebuilder CLI.
func (r Request) fromKubebuilder() bool { return r.From == "kubebuilder-guestbook" }

// Names are the request's names and every form of them the tier's code spells:
// the kind in its plural and lowercase forms, the group's Go package, and so on.
type Names struct {
	Request
	// Dir is the absolute path of Request.Dir.
	Dir string
	// GroupPkg is the group's first label: the Go package of the group under
	// pkg/apis (sample-controller), or kubebuilder's --group (kubebuilder-guestbook).
	GroupPkg string
	// Domain is the rest of the group after its first label: kubebuilder's --domain.
	Domain string
	// GroupGo is GroupPkg as client-gen names it in Go (Bar in BarV1alpha1()).
	GroupGo string
	// Plural is the kind's plural as code-generator's namer spells it (Policies).
	Plural string
}

// tiers are the FROM values this command knows, in the order errors list them.
var tiers = []string{"sample-controller", "kubebuilder-guestbook"}

// knownTiers is tiers as the fix of an error spells it.
var knownTiers = "FROM=sample-controller (client-go, code-generator) or FROM=kubebuilder-guestbook (kubebuilder, controller-runtime)"

var (
	dnsLabel      = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	goPackageName = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
	kindPattern   = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	// A Kubernetes API version: v1, v2beta3, v1alpha1.
	versionPattern = regexp.MustCompile(`^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$`)
	// One element of a module path, as `go mod init` accepts it.
	modulePathElement = regexp.MustCompile(`^[A-Za-z0-9._~-]+$`)
)

// goKeywords are Go's keywords: no Go name may be one.
var goKeywords = []string{
	"break", "case", "chan", "const", "continue", "default", "defer", "else", "fallthrough",
	"for", "func", "go", "goto", "if", "import", "interface", "map", "package", "range",
	"return", "select", "struct", "switch", "type", "var",
}

// Validate checks every variable before anything is written. Each error names the
// variable, what is wrong with it and how to fix it.
func (r Request) Validate() (Names, error) {
	n, errs := r.names()
	// Each variable is well formed: now the names they make together, against
	// the names the tier's code already has.
	if len(errs) == 0 {
		errs = n.clashes()
	}
	if len(errs) > 0 {
		return Names{}, fmt.Errorf("make new-controller: nothing was written:\n  %s", strings.Join(errs, "\n  "))
	}
	return n, nil
}

// names checks each variable on its own and works out the names made of them;
// it returns an error line for each variable that is wrong.
func (r Request) names() (Names, []string) {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	n := Names{Request: r}

	switch {
	case r.From == "":
		bad("FROM is missing: name the tier to start from, %s", knownTiers)
	case !slices.Contains(tiers, r.From):
		bad("FROM=%s is not a tier this command knows: use %s", r.From, knownTiers)
	}

	if r.Dir == "" {
		bad("DIR is missing: name the folder for the new project, such as DIR=../bar-controller (outside the kit) or DIR=$HOME/src/bar-controller")
	} else if abs, err := filepath.Abs(r.Dir); err != nil {
		bad("DIR=%s: %v", r.Dir, err)
	} else {
		n.Dir = abs
		if info, err := os.Stat(abs); err == nil {
			if !info.IsDir() {
				bad("DIR=%s is a file: name a folder that does not exist yet (or an empty one)", r.Dir)
			} else if entries, err := os.ReadDir(abs); err != nil {
				bad("DIR=%s: %v", r.Dir, err)
			} else if len(entries) > 0 {
				bad("DIR=%s exists and is not empty (it holds %s): name a new folder, or empty this one first", r.Dir, entries[0].Name())
			}
		}
	}

	if r.Module == "" {
		bad("MODULE is missing: give the Go module path of the new project, such as MODULE=example.com/bar-controller (usually where its repository will live)")
	} else if why := checkModulePath(r.Module); why != "" {
		bad("MODULE=%s is not a Go module path: %s; for example MODULE=example.com/bar-controller", r.Module, why)
	} else if slices.Contains(tiers, r.From) {
		if other := requiredModuleOverlap(r.kit(), r.From, r.Module); other != "" {
			bad("MODULE=%s: the project requires the module %s, and Go could not tell which of the two holds a package under both paths: choose a path of your own, such as MODULE=example.com/bar-controller", r.Module, other)
		}
	}

	switch {
	case r.Group == "":
		bad("GROUP is missing: give the API group of the new kind, a domain you own, such as GROUP=bar.example.com")
	case len(r.Group) > 253 || !isDNSSubdomain(r.Group):
		bad("GROUP=%s is not a DNS subdomain (lowercase labels of letters, digits and '-', joined by dots): for example GROUP=bar.example.com", r.Group)
	case !strings.Contains(r.Group, "."):
		bad("GROUP=%s has no dot: a CustomResourceDefinition's group must be a domain, such as GROUP=%s.example.com", r.Group, r.Group)
	case hasSuffix(r.Group, "k8s.io") || hasSuffix(r.Group, "kubernetes.io"):
		bad("GROUP=%s ends in k8s.io or kubernetes.io, which the API server keeps for APIs the Kubernetes project approved: use a domain of your own, such as GROUP=bar.example.com", r.Group)
	default:
		n.GroupPkg, n.Domain, _ = strings.Cut(r.Group, ".")
		// Where the first label becomes a Go name, in the tier's words.
		goName := fmt.Sprintf("the Go package of the API (pkg/apis/%s)", n.GroupPkg)
		if r.fromKubebuilder() {
			goName = fmt.Sprintf("kubebuilder's --group, which names the API's import (%s%s in cmd/main.go)", n.GroupPkg, r.Version)
		}
		if !goPackageName.MatchString(n.GroupPkg) {
			bad("GROUP=%s: its first label, %q, is %s and so must be lowercase letters and digits, starting with a letter: for example GROUP=%s.example.com",
				r.Group, n.GroupPkg, goName, strings.ReplaceAll(n.GroupPkg, "-", ""))
		}
		n.GroupGo = strings.ToUpper(n.GroupPkg[:1]) + n.GroupPkg[1:]
	}

	switch {
	case r.Kind == "":
		bad("KIND is missing: give the kind in CamelCase, such as KIND=Bar")
	case !kindPattern.MatchString(r.Kind):
		bad("KIND=%s is not a kind: a kind is CamelCase, letters and digits starting with an uppercase letter, such as KIND=Bar or KIND=WebApp", r.Kind)
	case r.fromKubebuilder() && slices.Contains(goKeywords, strings.ToLower(r.Kind)):
		bad("KIND=%s: its lowercase form %q is a Go keyword, and kubebuilder's scaffold names a variable so (its create api would fail): choose another, such as KIND=My%s", r.Kind, strings.ToLower(r.Kind), r.Kind)
	default:
		n.Plural = pluralOf(r.Kind)
		if len(n.Plural) > 63 {
			bad("KIND=%s is too long: its plural resource name %q must fit in 63 characters", r.Kind, strings.ToLower(n.Plural))
		}
	}

	if r.Version == "" {
		bad("VERSION is empty: leave it out for v1alpha1, or give an API version such as VERSION=v1beta1")
	} else if !versionPattern.MatchString(r.Version) {
		bad("VERSION=%s is not a Kubernetes API version: use v<N>, v<N>alpha<M> or v<N>beta<M>, such as VERSION=v1alpha1", r.Version)
	}

	if r.Name == "" && r.Kind != "" && kindPattern.MatchString(r.Kind) {
		n.Name = kebab(r.Kind) + "-controller"
	}
	// The longest derived name is the leader-election Role's, NAME-leader-election.
	if n.Name != "" && (!dnsLabel.MatchString(n.Name) || len(n.Name) > 63-len("-leader-election")) {
		bad("NAME=%s is not a usable controller name: it names the binary, ServiceAccount, namespace (NAME-system) and Lease, so it must be a DNS label (lowercase letters, digits and '-') of at most %d characters, such as NAME=bar-controller",
			n.Name, 63-len("-leader-election"))
	}

	return n, errs
}

// clashes returns an error line for each variable (or pair of variables) that
// would make a name the tier's code already has for something else (clashes.go):
// each name it would make, what else has it, and a value that works.
func (n Names) clashes() []string {
	code, err := readTierCode(n.kit(), n.From)
	if err != nil {
		return []string{fmt.Sprintf("FROM=%s: reading the tier's code to check the names against it: %v (is -kit=%s the kit's root folder?)", n.From, err, n.kit())}
	}
	var order []string
	whys := map[string][]string{}
	vars := map[string][]string{}
	said := map[string]bool{}
	for _, k := range code.clashes(n) {
		given := n.given(k.vars)
		if said[given+k.from+k.name] {
			continue
		}
		said[given+k.from+k.name] = true
		if whys[given] == nil {
			order = append(order, given)
			vars[given] = k.vars
		}
		whys[given] = append(whys[given], k.why())
	}
	var lines []string
	for _, given := range order {
		lines = append(lines, fmt.Sprintf("%s cannot be used with FROM=%s: in its code, %s; %s",
			given, n.From, strings.Join(whys[given], "; "), n.fix(vars[given])))
	}
	return lines
}

// kit is the kit's root folder, "." when not given (as the -kit flag's default).
func (r Request) kit() string {
	if r.Kit == "" {
		return "."
	}
	return r.Kit
}

// given spells the variables as the user gave them: GROUP=meta.example.com and VERSION=v1.
func (r Request) given(vars []string) string {
	var given []string
	for _, v := range vars {
		given = append(given, v+"="+r.value(v))
	}
	return strings.Join(given, " and ")
}

// value is the value the request gives a make variable.
func (r Request) value(variable string) string {
	switch variable {
	case "GROUP":
		return r.Group
	case "VERSION":
		return r.Version
	}
	return r.Kind
}

// fix proposes another value for the first of vars whose names clash, one that
// does not clash, and says where the other tier takes the value as it is.
func (n Names) fix(vars []string) string {
	code, err := readTierCode(n.kit(), n.From)
	if err != nil {
		return "choose another"
	}
	try := n.Request
	var say string
	switch vars[0] {
	case "GROUP":
		try.Group = "my" + n.Group
		say = "choose another group, such as GROUP=" + try.Group
	case "VERSION":
		try.Version = "v1alpha1"
		if n.Version == try.Version {
			try.Version = "v1beta1"
		}
		say = "choose another version, such as VERSION=" + try.Version
	default:
		try.Kind = "My" + n.Kind
		say = "choose another kind, such as KIND=" + try.Kind
	}
	if tried, errs := try.names(); len(errs) > 0 || len(code.clashes(tried)) > 0 {
		say, _, _ = strings.Cut(say, ", such as")
	}
	for _, other := range tiers {
		if other == n.From {
			continue
		}
		elsewhere := n.Request
		elsewhere.From = other
		if there, errs := elsewhere.names(); len(errs) == 0 {
			if code, err := readTierCode(n.kit(), other); err == nil && len(code.clashes(there)) == 0 {
				say += fmt.Sprintf(" (FROM=%s takes %s)", other, n.given(vars))
			}
		}
	}
	return say
}

// requiredModuleOverlap returns a module the tier's go.mod requires that is
// module, lies under it or holds it ("" when none): a project by that path could
// not import that module's packages.
func requiredModuleOverlap(kit, from, module string) string {
	mod, err := os.ReadFile(filepath.Join(kit, from, "go.mod"))
	if err != nil {
		return ""
	}
	for _, m := range requireLine.FindAllStringSubmatch(string(mod), -1) {
		if m[1] == module || strings.HasPrefix(m[1], module+"/") || strings.HasPrefix(module, m[1]+"/") {
			return m[1]
		}
	}
	return ""
}

// checkModulePath returns why path is not a module path `go mod init` would take,
// or "" when it is one.
func checkModulePath(path string) string {
	if strings.HasPrefix(path, "/") || strings.HasSuffix(path, "/") {
		return "it starts or ends with '/'"
	}
	for _, elem := range strings.Split(path, "/") {
		switch {
		case elem == "":
			return "it has an empty element ('//')"
		case elem == "." || elem == "..":
			return "it has a '.' or '..' element"
		case !modulePathElement.MatchString(elem):
			return fmt.Sprintf("its element %q has characters other than letters, digits and '.', '_', '~', '-'", elem)
		case strings.HasPrefix(elem, ".") || strings.HasSuffix(elem, "."):
			return fmt.Sprintf("its element %q starts or ends with a dot", elem)
		}
	}
	return ""
}

// isDNSSubdomain reports whether s is lowercase DNS labels joined by dots.
func isDNSSubdomain(s string) bool {
	for _, label := range strings.Split(s, ".") {
		if len(label) > 63 || !dnsLabel.MatchString(label) {
			return false
		}
	}
	return true
}

// hasSuffix reports whether group is domain or a subdomain of it.
func hasSuffix(group, domain string) bool {
	return group == domain || strings.HasSuffix(group, "."+domain)
}

// kebab spells a CamelCase kind in lowercase words joined by '-': WebApp -> web-app.
func kebab(kind string) string {
	var b strings.Builder
	for i, c := range kind {
		if i > 0 && c >= 'A' && c <= 'Z' {
			if prev := kind[i-1]; prev >= 'a' && prev <= 'z' || prev >= '0' && prev <= '9' {
				b.WriteByte('-')
			}
		}
		b.WriteRune(c)
	}
	return strings.ToLower(b.String())
}

// lowerFirst lowercases the first letter: WebApp -> webApp (gengo's IL namer).
func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// pluralOf spells the plural of a kind as code-generator's plural namer
// (k8s.io/gengo/v2/namer) does, since the clientset, listers and informers are
// named with it; the CRD gets the same plural through a +kubebuilder:resource marker.
func pluralOf(kind string) string {
	if len(kind) < 2 {
		return kind
	}
	last, before := kind[len(kind)-1], kind[len(kind)-2]
	consonant := strings.IndexByte("bcdfghjklmnpqrstvwxyz", before) >= 0
	switch {
	case last == 's' || last == 'x' || last == 'z':
		return kind + "es"
	case last == 'y' && consonant:
		return kind[:len(kind)-1] + "ies"
	case last == 'h' && (before == 'c' || before == 's'):
		return kind + "es"
	case last == 'e' && before == 'f':
		return kind[:len(kind)-2] + "ves"
	case last == 'f':
		return kind[:len(kind)-1] + "ves"
	}
	return kind + "s"
}
