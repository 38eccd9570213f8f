package main

import (
	"errors"
	"fmt"
	"go/format"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// pinnedByTier are the modules a kubebuilder project requires at the versions
// kubebuilder-guestbook's go.mod has: kubebuilder's scaffold asks for its own
// (controller-runtime v0.25.0 and k8s.io v0.37.0 in CLI v4.16.0), the kit's
// tiers build with the kit's.
var pinnedByTier = []string{
	"sigs.k8s.io/controller-runtime",
	"k8s.io/api",
	"k8s.io/apimachinery",
	"k8s.io/client-go",
}

// makeFromKubebuilder makes the project in proj with the kubebuilder CLI at the
// kit's pin (kubebuilder init, then create api for the kind), then gives what it
// scaffolded the kit's conventions (kubebuilderEdits and template/): the kit's
// module versions, controller-gen and kustomize from a tools module of its own,
// envtest's binaries from the kit, a Lease named after the project, an e2e
// suite for any cluster, a Reconcile that records what it saw. It ends with the
// generated code written, the project built and vetted.
func makeFromKubebuilder(p progress, d templateData, kit, proj string) error {
	n := d.Names
	toolsMod, err := os.ReadFile(filepath.Join(kit, "hack", "tools", "go.mod"))
	if err != nil {
		return err
	}
	cliVersion, ok := requiredVersion(string(toolsMod), "sigs.k8s.io/kubebuilder/v4")
	if !ok {
		return errors.New("the kit's hack/tools/go.mod does not pin sigs.k8s.io/kubebuilder/v4, the kubebuilder CLI")
	}
	p.step("the kubebuilder CLI at the kit's pin, %s (hack/tools/go.mod), built into the kit's bin/ if missing", cliVersion)
	if err := run(p.out, kit, filepath.Join(kit, "hack", "build-bins.sh"), "kubebuilder"); err != nil {
		return err
	}
	cli := filepath.Join(kit, "bin", "kubebuilder")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		return err
	}
	initArgs, createArgs := kubebuilderArgs(n)
	for _, args := range [][]string{initArgs, createArgs} {
		p.step("kubebuilder %s", strings.Join(args, " "))
		if err := run(p.out, proj, cli, args...); err != nil {
			return err
		}
	}

	p.step("the kit's conventions: its versions, tools module, envtest binaries, Lease %s, e2e suite, a Reconcile that records what it saw", n.Name)
	plural, err := scaffoldedPlural(proj, d.Lower)
	if err != nil {
		return err
	}
	d.KubebuilderPlural = plural
	// kubebuilder's e2e suite needs kind, Docker and cert-manager from the
	// internet: the project's own suite (template/) replaces it and its helpers.
	if err := os.RemoveAll(filepath.Join(proj, "test")); err != nil {
		return err
	}
	if err := writeTemplates(d, proj); err != nil {
		return err
	}
	clusterMod, err := os.ReadFile(filepath.Join(kit, "hack", "cluster", "go.mod"))
	if err != nil {
		return err
	}
	kindVersion, ok := requiredVersion(string(clusterMod), "sigs.k8s.io/kind")
	if !ok {
		return errors.New("the kit's hack/cluster/go.mod does not pin sigs.k8s.io/kind")
	}
	for _, e := range kubebuilderEdits(d, kindVersion) {
		if err := applyToFile(proj, e); err != nil {
			return err
		}
	}
	if err := writeToolsModule(n, kit, proj); err != nil {
		return err
	}
	if err := run(p.out, filepath.Join(proj, "hack", "tools"), "go", "mod", "tidy"); err != nil {
		return err
	}

	tierMod, err := os.ReadFile(filepath.Join(kit, n.From, "go.mod"))
	if err != nil {
		return err
	}
	get := []string{"get"}
	for _, module := range pinnedByTier {
		version, ok := requiredVersion(string(tierMod), module)
		if !ok {
			return fmt.Errorf("%s/go.mod does not require %s", n.From, module)
		}
		get = append(get, module+"@"+version)
	}
	p.step("go %s (%s's versions), go mod tidy", strings.Join(get, " "), n.From)
	if err := run(p.out, proj, "go", get...); err != nil {
		return err
	}
	if err := run(p.out, proj, "go", "mod", "tidy"); err != nil {
		return err
	}

	p.step("make generate manifests: deepcopy, the CRD and RBAC with controller-gen from hack/tools/go.mod (the first time builds it)")
	if err := run(p.out, proj, "make", "--no-print-directory", "generate", "manifests"); err != nil {
		return err
	}
	p.step("go build ./..., go vet ./... and go vet -tags e2e ./test/e2e/")
	for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}, {"vet", "-tags", "e2e", "./test/e2e/"}} {
		if err := run(p.out, proj, "go", args...); err != nil {
			return err
		}
	}
	return nil
}

// kubebuilderArgs are the arguments of kubebuilder init and create api for n.
// GROUP splits at its first dot: the first label is the CLI's --group, the rest
// its --domain, and the CRD's group is the two joined again. NAME is the
// project's name (namespace NAME-system, NAME- before every object config/default
// makes). create api does not run make: the Makefile it would run is rewritten first.
func kubebuilderArgs(n Names) (initArgs, createArgs []string) {
	initArgs = []string{"init", "--domain", n.Domain, "--repo", n.Module, "--project-name", n.Name}
	createArgs = []string{"create", "api", "--group", n.GroupPkg, "--version", n.Version, "--kind", n.Kind,
		"--resource", "--controller", "--make=false"}
	return initArgs, createArgs
}

// requireLine finds a requirement in a go.mod: module path, then version.
var requireLine = regexp.MustCompile(`(?m)^(?:require\s+|\s+)(\S+)\s+(v\S+)`)

// requiredVersion returns the version at which a go.mod's text requires module.
func requiredVersion(gomod, module string) (string, bool) {
	for _, m := range requireLine.FindAllStringSubmatch(gomod, -1) {
		if m[1] == module {
			return m[2], true
		}
	}
	return "", false
}

// rbacResource finds the resource of a +kubebuilder:rbac marker.
var rbacResource = regexp.MustCompile(`\+kubebuilder:rbac:groups=[^,]+,resources=([a-z0-9]+),verbs=`)

// scaffoldedPlural reads the kind's plural from the RBAC marker kubebuilder
// wrote into the controller it scaffolded: controller-gen's plural (flect), which
// is not always code-generator's (Person: people), and the one the CRD gets.
func scaffoldedPlural(proj, lower string) (string, error) {
	file := path.Join("internal", "controller", lower+"_controller.go")
	content, err := os.ReadFile(filepath.Join(proj, filepath.FromSlash(file)))
	if err != nil {
		return "", fmt.Errorf("kubebuilder create api did not write %s: %w", file, err)
	}
	m := rbacResource.FindStringSubmatch(string(content))
	if m == nil {
		return "", fmt.Errorf("%s, as kubebuilder wrote it, has no +kubebuilder:rbac marker to read the plural from (the CLI changed; update hack/newcontroller/kubebuilder.go)", file)
	}
	return m[1], nil
}

// A patternEdit changes text kubebuilder scaffolded that the kit's conventions
// change: old must match exactly once, or the command stops and says the
// scaffold changed under it. new is written as it is ($ is not special).
type patternEdit struct {
	file string
	old  *regexp.Regexp
	new  string
}

// literal is a patternEdit of a fixed text.
func literal(file, old, new string) patternEdit {
	return patternEdit{file, regexp.MustCompile(regexp.QuoteMeta(old)), new}
}

// applyEdit applies one edit to text.
func applyEdit(e patternEdit, text string) (string, error) {
	found := e.old.FindAllStringIndex(text, -1)
	if len(found) != 1 {
		return "", fmt.Errorf("%s: the text this command changes was found %d times, not once (kubebuilder's scaffold changed; update hack/newcontroller/kubebuilder.go): %s", e.file, len(found), firstLine(e.old.String()))
	}
	return text[:found[0][0]] + e.new + text[found[0][1]:], nil
}

// applyToFile applies an edit to its file in proj, formatting a Go file after.
func applyToFile(proj string, e patternEdit) error {
	name := filepath.Join(proj, filepath.FromSlash(e.file))
	content, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("kubebuilder's scaffold has no %s (the CLI changed; update hack/newcontroller/kubebuilder.go): %w", e.file, err)
	}
	text, err := applyEdit(e, string(content))
	if err != nil {
		return err
	}
	if path.Ext(e.file) == ".go" {
		formatted, err := format.Source([]byte(text))
		if err != nil {
			return fmt.Errorf("%s after the kit's edit: %w", e.file, err)
		}
		text = string(formatted)
	}
	return os.WriteFile(name, []byte(text), 0o644)
}

// kubebuilderEdits are the changes to what kubebuilder scaffolds, file by file:
// what the kit does differently, each said in a comment where it is made.
func kubebuilderEdits(d templateData, kindVersion string) []patternEdit {
	sample := path.Join("config", "samples", d.GroupPkg+"_"+d.Version+"_"+d.Lower+".yaml")
	return []patternEdit{
		// A Lease of its own, named as the project is, and a namespace for it
		// outside a cluster (in a Pod, controller-runtime takes the Pod's).
		literal("cmd/main.go", "\tvar enableLeaderElection bool\n",
			"\tvar enableLeaderElection bool\n\tvar leaderElectionNamespace string\n"),
		literal("cmd/main.go", "\tflag.BoolVar(&secureMetrics, \"metrics-secure\", true,",
			"\tflag.StringVar(&leaderElectionNamespace, \"leader-elect-resource-namespace\", \"\",\n"+
				"\t\t\"The namespace of the leader-election Lease "+d.Name+". Empty: the Pod's own, which works only in a cluster \"+\n"+
				"\t\t\t\"(make run passes LEASE_NAMESPACE, default unless set).\")\n"+
				"\tflag.BoolVar(&secureMetrics, \"metrics-secure\", true,"),
		{"cmd/main.go", regexp.MustCompile(`LeaderElectionID:\s*"[0-9a-f]+\.` + regexp.QuoteMeta(d.Domain) + `",`),
			"// The Lease is named as the project is (kubebuilder's scaffold names it\n" +
				"\t\t// <hash>.<domain>): kubectl get leases shows whose it is.\n" +
				"\t\tLeaderElectionID: \"" + d.Name + "\",\n" +
				"\t\tLeaderElectionNamespace: leaderElectionNamespace,"},

		// The sample must be valid: spec is required, and a comment alone is no spec.
		literal(sample, "  # TODO(user): Add fields here\n",
			"  # foo is the scaffold's example field (api/"+d.Version+"/"+d.Lower+"_types.go): put yours here.\n  foo: example\n"),

		// The image is never latest: a cluster runs the image it was given.
		literal("Makefile", "IMG ?= controller:latest\n",
			"# (controller-kit: tagged with the short git commit, never latest.)\n"+
				"IMG ?= "+d.Name+":$(shell git rev-parse --short HEAD 2>/dev/null || echo dev)\n"),
		literal("Makefile", "YEAR ?= $(shell date +%Y)\n", fmt.Sprintf(`# (controller-kit: the year the project was made, so make verify regenerates the
# same headers in a later year.)
YEAR ?= %d

# controller-kit's conventions (make new-controller; the README says what changed).
# This project is a Go module of its own: a go.work in a folder above it (the
# kit's, when the project lives inside the kit) takes no part in its builds.
export GOWORK := off
# envtest's kube-apiserver and etcd: controller-kit's, where make new-controller
# found them, while that folder has them; else make test downloads them with
# setup-envtest, as kubebuilder's Makefile does (that needs internet access).
KUBEBUILDER_ASSETS ?= $(if $(wildcard %s/kube-apiserver),%s)
export KUBEBUILDER_ASSETS
# make run: the namespace of the leader-election Lease %s.
LEASE_NAMESPACE ?= default
# make run: more manager flags, such as ARGS="--zap-log-level=debug".
ARGS ?=
`, d.Year, d.Assets, d.Assets, d.Name)),

		// vet reaches the e2e suite, which has a build tag.
		literal("Makefile", "vet: ## Run go vet against code.\n\tgo vet ./...\n",
			"vet: ## Run go vet against code (the e2e suite too).\n\tgo vet ./...\n\tgo vet -tags e2e ./test/e2e/\n"),

		// test: envtest's binaries from KUBEBUILDER_ASSETS when set; verify: new.
		{"Makefile", regexp.MustCompile(`(?m)^test: manifests generate fmt vet setup-envtest ## Run tests\.\n\tKUBEBUILDER_ASSETS=.*\n`),
			`test: manifests generate fmt vet $(if $(KUBEBUILDER_ASSETS),,setup-envtest) ## Run the unit and envtest tests (envtest's binaries: KUBEBUILDER_ASSETS, else setup-envtest's).
	KUBEBUILDER_ASSETS="$(or $(KUBEBUILDER_ASSETS),$(shell "$(ENVTEST)" use $(ENVTEST_K8S_VERSION) --bin-dir "$(LOCALBIN)" -p path))" go test $$(go list ./... | grep -v /e2e) -coverprofile cover.out

# What make generate and make manifests write.
GENERATED := ':(glob)**/zz_generated.*.go' config/crd/bases config/rbac/role.yaml config/webhook/manifests.yaml

.PHONY: verify
verify: manifests generate ## Fail if generated code, manifests or go.mod differ from what is committed and what go mod tidy writes.
	@changed="$$(git status --porcelain --untracked-files=all -- $(GENERATED))"; if [ -n "$$changed" ]; then \
		echo "generated files differ from what is committed; run make generate manifests and commit the result:" >&2; \
		echo "$$changed" >&2; exit 1; fi
	go mod tidy -diff
	@echo ">> verify passed: generated code, manifests and go.mod are what make generate manifests and go mod tidy write"
`},

		// test-e2e: the project's own suite on the cluster $KUBECONFIG reaches,
		// instead of kubebuilder's on a kind cluster it makes.
		{"Makefile", regexp.MustCompile(`(?s)# TODO\(user\): To use a different vendor for e2e tests.*?\t@\$\(KIND\) delete cluster --name \$\(KIND_CLUSTER\)\n`),
			`# (controller-kit: the e2e suite in test/e2e runs against the cluster KUBECONFIG
# reaches, a kind-* or kwok-* context unless E2E_ANY_CONTEXT=1: it installs the
# CRDs, runs the manager from this folder and sees a ` + d.Kind + ` reconciled.)
.PHONY: test-e2e
test-e2e: manifests generate fmt vet ## Run the e2e suite against the cluster KUBECONFIG reaches.
	go test -tags e2e -count=1 -timeout 10m -v ./test/e2e/
`},

		// run: the CRDs installed and the sample applied first, with leader election.
		literal("Makefile", "run: manifests generate fmt vet ## Run a controller from your host.\n\tgo run ./cmd/main.go\n",
			`run: manifests generate fmt vet install ## Install the CRDs, apply config/samples, run the manager here (Lease `+d.Name+` in LEASE_NAMESPACE).
	"$(KUBECTL)" apply -k config/samples
	go run ./cmd/main.go --leader-elect --leader-elect-resource-namespace=$(LEASE_NAMESPACE) --health-probe-bind-address=0 $(ARGS)
`),

		// controller-gen and kustomize from hack/tools/go.mod, not go install.
		{"Makefile", regexp.MustCompile(`(?m)^KUSTOMIZE_VERSION \?= .*\nCONTROLLER_TOOLS_VERSION \?= .*\n`),
			"# (controller-kit: kustomize and controller-gen are pinned in hack/tools/go.mod.)\n"},
		literal("Makefile", "$(KUSTOMIZE): $(LOCALBIN)\n\t$(call go-install-tool,$(KUSTOMIZE),sigs.k8s.io/kustomize/kustomize/v5,$(KUSTOMIZE_VERSION))\n",
			"$(KUSTOMIZE): hack/tools/go.mod | $(LOCALBIN)\n\t$(call go-build-tool,$(KUSTOMIZE),sigs.k8s.io/kustomize/kustomize/v5)\n"),
		literal("Makefile", "$(CONTROLLER_GEN): $(LOCALBIN)\n\t$(call go-install-tool,$(CONTROLLER_GEN),sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_TOOLS_VERSION))\n",
			"$(CONTROLLER_GEN): hack/tools/go.mod | $(LOCALBIN)\n\t$(call go-build-tool,$(CONTROLLER_GEN),sigs.k8s.io/controller-tools/cmd/controller-gen)\n"),
		literal("Makefile", "define gomodver\n", `# go-build-tool builds a tool pinned in hack/tools/go.mod into bin/, again
# whenever that go.mod changes.
# $1 - target path with name of binary
# $2 - the tool's package
define go-build-tool
go build -modfile=hack/tools/go.mod -o "$(1)" $(2)
endef

define gomodver
`),

		// setup-envtest has its own tags: none matches controller-runtime v0.25.2.
		{"Makefile", regexp.MustCompile(`(?s)#ENVTEST_VERSION is the controller-runtime version.*?\nENVTEST_VERSION \?= .*?printf '%s\\n' "\$\$v"\)\n`),
			"# (controller-kit: setup-envtest, the module, is tagged apart from controller-runtime;\n" +
				"# v0.25.1 is its newest tag of controller-runtime v0.25.)\nENVTEST_VERSION ?= v0.25.1\n"},

		// The CI job makes the cluster the suite now expects, with kind at the kit's pin.
		{".github/workflows/test-e2e.yml", regexp.MustCompile(`(?s)      - name: Install the latest version of kind\n.*`),
			"      - name: A kind cluster (kind " + kindVersion + ", controller-kit's pin)\n" +
				"        run: |\n" +
				"          go install sigs.k8s.io/kind@" + kindVersion + "\n" +
				"          kind create cluster\n\n" +
				"      - name: Running Test e2e\n" +
				"        run: make test-e2e\n"},
	}
}
