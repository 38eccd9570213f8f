# controller-kit: the learner's entry point. `make help` lists every target.
#
# Each tier (each top-level folder with a lesson file, TIERS below) has a Makefile of
# its own with the same target names (run, test-unit, test-e2e, generate, verify,
# docker-build, kind-load, deploy, undeploy); the targets here prepare the cluster and
# the tools, then call the tier's. Versions are pinned in the go.mod files
# under hack/, in the tiers' go.mod files and in test/bench/go.mod (upstream's
# sample-controller, which the bench runs), nowhere else.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

KIT_ROOT := $(CURDIR)
KIT_BIN := $(KIT_ROOT)/bin
KIT_OUT := $(KIT_ROOT)/_output
# The control-plane version (such as v1.37.2), read once from the go.mod that pins it
# by hack/controlplane/kube-version.sh, and exported: the tiers' Makefiles take it from here.
KUBE_VERSION := $(shell "$(KIT_ROOT)/hack/controlplane/kube-version.sh")
ifeq ($(KUBE_VERSION),)
$(error hack/controlplane/kube-version.sh could not read the Kubernetes version; its error is above)
endif
# The kit kubeconfig (local cluster or kind) of the cluster KIT_CLUSTER names, taken
# from hack/lib.sh, the one place the rule is written (_output/kubeconfig for the
# default name, controller-kit; _output/kubeconfig-NAME for another). A KUBECONFIG
# already set in the environment wins, so a learner's own cluster is used as it is.
##% KIT_CLUSTER which kit cluster every target uses: KIT_CLUSTER=mine make local-up makes one called mine (context kwok-mine, kubeconfig _output/kubeconfig-mine); pass the same to check, run-*, env, local-down (default controller-kit)
KIT_CLUSTER ?= controller-kit
KIT_KUBECONFIG := $(shell KIT_CLUSTER='$(KIT_CLUSTER)' bash -c 'source "$$0/hack/lib.sh" && echo "$$KIT_KUBECONFIG"' "$(KIT_ROOT)")
##% KUBECONFIG a cluster of your own instead of the kit's (the e2e suites and make check refuse it unless KIT_E2E_ANY_CONTEXT=1)
KUBECONFIG ?= $(KIT_KUBECONFIG)
# A relative path in KUBECONFIG (export KUBECONFIG=_output/kubeconfig) would name another
# file, or none, once a tier's Makefile runs in its own folder: kubectl would then quietly
# try localhost:8080. Each relative path of the list is made absolute here, from this folder,
# the one the root's own commands have always read it from.
KUBECONFIG := $(shell kc='$(KUBECONFIG)'; IFS=:; out=; for p in $$kc; do case "$$p" in (/*|'') ;; (*) p="$(KIT_ROOT)/$$p" ;; esac; out="$${out:+$$out:}$$p"; done; printf '%s' "$$out")
# envtest finds kube-apiserver and etcd here (setup-envtest's store layout, no download).
KUBEBUILDER_ASSETS := $(KIT_BIN)/k8s/$(patsubst v%,%,$(KUBE_VERSION))-$(shell go env GOOS)-$(shell go env GOARCH)
# The tiers' and tests' tools (kubectl, controller-gen, ...) come from bin/ first.
PATH := $(KIT_BIN):$(PATH)
# Every go command the kit runs compiles with -trimpath, so bin/'s builds and go test
# share the build cache (hack/lib/lists.sh says why; a GOFLAGS of your own is kept).
GOFLAGS := $(shell bash -c 'source "$$0/hack/lib.sh" && echo "$$GOFLAGS"' "$(KIT_ROOT)")
export KIT_ROOT KIT_BIN KUBECONFIG KUBE_VERSION KUBEBUILDER_ASSETS PATH GOFLAGS

# The tiers in lesson order (lesson 5's cloud-controller-manager among them: it has
# their Makefile targets): the top-level folders with a lesson file, read by
# hack/lib.sh's kit_tiers, so a new tier is a new folder and nothing here.
TIERS := $(shell bash -c 'source "$$0/hack/lib.sh" && kit_tiers' "$(KIT_ROOT)")
ifeq ($(TIERS),)
$(error hack/lib.sh's kit_tiers found no tier (no <tier>/test/<suite>/lesson.yaml); its error is above)
endif
# The workspace's Go modules (go.work, the one list of them) and the lessons' suites
# among them (where a lesson file lies), which make vet and make test-unit read;
# computed when a recipe uses them, not each time make starts.
WORK_MODULES = $(shell bash -c 'source "$$0/hack/lib.sh" && kit_work_modules' "$(KIT_ROOT)")
SUITES = $(shell bash -c 'source "$$0/hack/lib.sh" && kit_suites' "$(KIT_ROOT)")
# The cluster `make test` creates for its e2e suites, apart from the learner's own.
TEST_CLUSTER := controller-kit-test

# A target this Makefile lacks: say which tier's Makefile has it, and the command.
.DEFAULT:
	@hack/no-such-target.sh "$@" root

##@ General

.PHONY: help
# help prints each target's "## text" under its "##@ group", then the variables:
# each "##% NAME text" line (written above the variable it describes) in file order.
# The lesson table is the lesson files (kittest.Lesson), read first: in a text,
# {lessons} stands for their numbers, {debug} and {ports} for make debug's names and
# ports (their debug entries, in port order), and a pattern target such as test-lesson%
# is listed once for each lesson whose file says cluster: own, with % in its text that
# lesson's number. awk reads them itself, not the grader, so that help stays instant;
# test/check's TestMakeHelpReadsTheLessonTable holds the two readings to each other.
LESSON_FILES = $(wildcard */test/*/lesson.yaml test/*/lesson.yaml)
help: ## List every target, grouped, and the variables they take.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make \033[36m<target>\033[0m [VAR=value]\n"} \
		FILENAME ~ /lesson\.yaml$$/ { if (/^lesson: /) { num = $$0; gsub(/[^0-9]/, "", num); num += 0; has[num] = 1; if (num > max) max = num } \
			if (/^cluster: own$$/) own[num] = 1; if (/^[a-zA-Z]+:/) section = $$0; if (section ~ /^debug:/ && /^- name: /) dname = substr($$0, 9); if (section ~ /^debug:/ && /^  port: /) { p = substr($$0, 9) + 0; dbg[p] = dname " (lesson " num ")"; if (!minp || p < minp) minp = p; if (p > maxp) maxp = p } next } \
		!listed { listed = 1; for (i = 0; i <= max; i++) if (i in has) { lessons = lessons (lessons == "" ? "" : ", ") i; if (i in own) owns = owns " " i }; for (p = minp; p <= maxp; p++) if (p in dbg) { n1 = dbg[p]; sub(/ .*/, "", n1); debugs = debugs (debugs == "" ? "" : ", ") dbg[p]; ports = ports (ports == "" ? "" : ", ") n1 " " p } } \
		{ gsub(/\{lessons\}/, lessons); gsub(/\{debug\}/, debugs); gsub(/\{ports\}/, ports) } \
		/^[a-zA-Z0-9_-]+%:.*?##/ { m = split(owns, ns, " "); for (j = 1; j <= m; j++) { t = $$1; d = $$2; sub(/%/, ns[j], t); gsub(/%/, ns[j], d); printf "  \033[36m%-16s\033[0m %s\n", t, d } } \
		/^[a-zA-Z0-9_-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } \
		/^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } \
		/^##% / { v = substr($$0, 5); name = v; sub(/ .*/, "", name); text = v; sub(/^[^ ]+ +/, "", text); vars[++n] = sprintf("  \033[36m%-22s\033[0m %s", name, text) } \
		END { printf "\n\033[1mVariables\033[0m (make <target> NAME=value)\n"; for (i = 1; i <= n; i++) print vars[i] }' $(LESSON_FILES) $(MAKEFILE_LIST)

##@ Cluster

.PHONY: bins
bins: ## Build every pinned binary missing from bin/ (control plane, kwok, kind, generators).
	@hack/build-bins.sh all

.PHONY: local-up
local-up: ## Start the Docker-free local cluster (real etcd/kube-apiserver/controller-manager/scheduler + kwok nodes).
	@hack/cluster/local-up.sh

.PHONY: local-down
local-down: ## Stop and delete the local cluster, first ending (and naming) what the kit still runs against it: make run-*, make debug.
	@hack/cluster/local-down.sh

##% KIND_NODE_IMAGE kind-up, test-kind: the node image: empty for kind's published one (else the kit's, when that cannot be pulled), kit for the kit's own (make kind-node-image), or an image name
.PHONY: kind-up
kind-up: ## Create the kind cluster 'controller-kit' (needs a Docker engine; KIND_NODE_IMAGE= chooses the node image).
	@KIND_NODE_IMAGE='$(KIND_NODE_IMAGE)' hack/cluster/kind-up.sh

.PHONY: kind-node-image
kind-node-image: ## Assemble the kit's own kind node image offline, from Go modules and Debian's packages (for machines that cannot pull kind's).
	@hack/cluster/kind-node-image.sh

.PHONY: docker-engine
docker-engine: ## Root, Debian-like machines without Docker only: install Debian's docker.io and start it, able to run kind's privileged nodes.
	@hack/cluster/docker-engine.sh

.PHONY: kind-down
kind-down: ## Delete the kind cluster, first ending (and naming) what the kit still runs against it.
	@hack/cluster/kind-down.sh

.PHONY: env
env: ## Print the exports that point your shell at the kit cluster: eval "$(make env)" (KIT_CLUSTER=NAME for another): KUBECONFIG, KIT_CLUSTER (so the lessons' paths and later make commands in that shell name the same cluster) and PATH.
	@hack/build-bins.sh kubectl >&2
	@# On standard error, so eval "$$(make env)" still gets only the exports.
	@[ -f '$(KIT_KUBECONFIG)' ] || echo "make env: warning: $(KIT_KUBECONFIG) does not exist: no kit cluster called '$(KIT_CLUSTER)' is running. Start it with '$(if $(filter controller-kit,$(KIT_CLUSTER)),,KIT_CLUSTER=$(KIT_CLUSTER) )make local-up' (or check the name: ls _output/kubeconfig*)" >&2
	@echo 'export KUBECONFIG=$(KIT_KUBECONFIG) KIT_CLUSTER=$(KIT_CLUSTER) PATH=$(KIT_BIN):$$PATH'

.PHONY: ensure-cluster
ensure-cluster: ## Use the cluster KUBECONFIG reaches, else start the local one.
	@hack/cluster/ensure-cluster.sh

##@ Lessons

##% ARGS run-*: extra flags for the controller, such as ARGS="-v=6 --workers=1"; kube-test*: more go test flags, such as ARGS="-v -count=1"
##% NAMESPACE run-workqueue: the namespace whose Pods it watches (default workqueue-example; NAMESPACE= watches every namespace)
.PHONY: run-workqueue
run-workqueue: ## Lesson 1: run the workqueue example against the cluster (one per cluster: a second is refused, naming the first).
	@$(MAKE) --no-print-directory -C workqueue-example run

.PHONY: run-sample
run-sample: ## Lesson 2: install the Foo CRD, apply an example Foo, run sample-controller.
	@$(MAKE) --no-print-directory -C sample-controller run

.PHONY: run-guestbook
run-guestbook: ## Lesson 3: install the Guestbook CRD, apply a sample, run the manager.
	@$(MAKE) --no-print-directory -C kubebuilder-guestbook run

.PHONY: run-cloud
run-cloud: ## Lesson 5: apply the RBAC and a Service of type LoadBalancer, run the cloud-controller-manager (toy cloud, service controller only) as its ServiceAccount.
	@$(MAKE) --no-print-directory -C cloud-provider-example run

# make check's knobs (make help prints these ##% lines).
##% LESSON check: the lesson to check: {lessons}
LESSON ?=
##% RECONCILER check, run-*: stub, reference (the default) or a name you registered in the tier's reconcilers map (run-cloud: the toy cloud's load balancer)
RECONCILER ?=
##% EXERCISE check: an exercise's checks to run too, such as configmaps (docs/solutions/README.md lists them)
EXERCISE ?=
##% SOLUTION check: build with an exercise's reference solution (docs/solutions/), such as service
SOLUTION ?=
##% RUN check: only the checks whose test names match (go test -run); kube-test*: only the tests whose names match
RUN ?=
##% CHECK_TIMEOUT check: how long each wait of a check may take (default 30s)
CHECK_TIMEOUT ?= 30s
##% V check: V=1 prints the whole output of a failed check; run-scheduler: the scheduler's log verbosity (-v, default 2), V=10 for every plugin's score per node; run-csi: the driver's and the sidecars' (default 5, where the sidecars log each gRPC call)
V ?=
##% KIT_LANG check: ja prints make check's own texts in Japanese and points each failed check's "reread:" at the Japanese lesson (docs/ja/); en: English (default: ja when LANG is ja_*)
# The checker (test/check), built here on each use (the Go build cache
# makes that instant after the first time).
CHECK := $(KIT_OUT)/bin/check

.PHONY: check
check: ## Lesson N's checks against your Reconciler: make check LESSON=2 RECONCILER=stub|reference|<yours> (LESSON=0: its exercises).
	@go build -o "$(CHECK)" ./test/check
	@# -ensure-cluster: the arguments first, so a typo never waits for a cluster to
	@# start, then the cluster (hack/cluster/ensure-cluster.sh), then the checks.
	@"$(CHECK)" -ensure-cluster -timeout $(CHECK_TIMEOUT) -lesson "$(LESSON)" -reconciler "$(RECONCILER)" -exercise "$(EXERCISE)" -solution "$(SOLUTION)" -run "$(RUN)" $(if $(V),-v)

.PHONY: run-csi
run-csi: ## Lesson 7: run the CSI driver csi-driver-example with csi-provisioner and csi-attacher (built on first use) as their ServiceAccounts, logs side by side; apply the example claim and see it Bound (one per cluster).
	@$(MAKE) --no-print-directory -C csi-driver-example run

.PHONY: run-scheduler
run-scheduler: ## Lesson 8: apply kwok nodes in two zones and an example Deployment, run kube-scheduler with the ZoneSpread plugin as a second scheduler (V=10: every plugin's score per node); a second copy on the cluster is refused, naming the first.
	@$(MAKE) --no-print-directory -C scheduler-plugin-example run

##@ Kubernetes itself (lesson 4)

##% WHAT kube-build, kube-restart: a control-plane binary (kube-apiserver, kube-controller-manager, kube-scheduler; kube-build also kubectl; unset: all four); kube-test, kube-test-integration: packages of the Kubernetes source, written from its root (./pkg/controller/deployment/...); debug, undebug: {debug}
WHAT ?=
##% PORT debug: delve's port on 127.0.0.1 (default: each name's own, which .vscode/launch.json attaches to: {ports})
PORT ?=
##% PKGS debug: the packages a debug build from Kubernetes' source compiles with optimisation off, from the source's root or as import paths (default: its lesson file's debug entry's packages, such as ./pkg/controller/...)
PKGS ?=
##% PINNED kube-restart: PINNED=1 runs the pinned binary (bin/) again instead of the copy's build
PINNED ?=
##% FORCE kube-src-reset: FORCE=1 throws away the copy's changes without asking
FORCE ?=
##% FLAGS kube-restart: flags set on the component's command line, kept across its restarts, each --name=value replacing the one it has or added (FLAGS=--enable-admission-plugins=OwnerReferencesPermissionEnforcement,AlwaysPullImages; see them with make kube-args WHAT=...)
FLAGS ?=
# kube-src.sh reads these (and RUN, ARGS) from its environment.
export RUN ARGS FORCE FLAGS

.PHONY: kube-src
kube-src: ## A writable copy of the pinned Kubernetes source, with its own git repository, in _output/kubernetes (never overwrites your changes).
	@hack/kube-src.sh src

.PHONY: kube-src-reset
kube-src-reset: ## Start the copy over from the pinned source (asks first when it has changes; FORCE=1 does not ask).
	@hack/kube-src.sh reset

.PHONY: kube-build
kube-build: ## Build WHAT=kube-controller-manager (or another control-plane binary; unset: all) from the copy into _output/kube-build/bin; only what changed is compiled.
	@hack/kube-src.sh build $(WHAT)

.PHONY: kube-restart
kube-restart: ## Run the copy's build of WHAT in the local cluster (PINNED=1: bin/'s again; FLAGS=: with these flags set), and wait until it is healthy and leads.
	@hack/kube-src.sh $(if $(filter 1,$(PINNED)),pinned,restart) $(WHAT)

.PHONY: kube-args
kube-args: ## Print the flags the local cluster runs WHAT=kube-apiserver (or another control-plane component) with, one a line.
	@hack/kube-src.sh args $(WHAT)

.PHONY: kube-test
kube-test: ## Upstream's own unit tests of WHAT=./pkg/... from the copy (or the pinned module with no copy); RUN= picks tests.
	@hack/kube-src.sh test $(WHAT)

.PHONY: kube-test-integration
kube-test-integration: ## Upstream's integration tests of WHAT=./test/integration/... with the kit's etcd (not in make test).
	@hack/kube-src.sh test-integration $(WHAT)

.PHONY: debug
debug: ## Run WHAT=kube-controller-manager or kube-scheduler of the local cluster under delve on 127.0.0.1 (PORT=), or a replica of WHAT=kube-apiserver on the same etcd (lesson 6; prints its kubeconfig), or WHAT=sample-controller (or another tier's controller) or csi-provisioner (lesson 7, in make run-csi) under delve in the foreground; prints how to attach. A port or controller another session holds is refused at once, naming it.
	@PORT='$(PORT)' PKGS='$(PKGS)' hack/debug.sh debug $(WHAT)

.PHONY: undebug
undebug: ## Put WHAT back on the binary it ran before make debug (pinned or your kube-build), leader election on, no delve left.
	@hack/debug.sh undebug $(WHAT)

.PHONY: test-debug
test-debug: ## Lesson 4's debugger test on a fresh local cluster of its own: breakpoints in the Deployment controller and in lesson 2's FooReconciler, driven over delve's JSON-RPC API.
	@hack/test-debug.sh

##@ The API server (lesson 6)

.PHONY: etcdctl
etcdctl: ## Build bin/etcdctl (etcd's client, the cluster's etcd release) and print the export that points it at the local cluster's etcd: eval "$(make etcdctl)".
	@apiserver-example/hack/etcdctl.sh

.PHONY: encryption-config
encryption-config: ## Write an aescbc key (kept once written) and the two EncryptionConfigurations of lesson 6's encryption at rest, encrypt.yaml and decrypt.yaml, under _output/encryption/CLUSTER/, and print their paths.
	@apiserver-example/hack/encryption-config.sh

.PHONY: run-aggregated
run-aggregated: ## Run k8s.io/sample-apiserver (built on first use) beside the local cluster on its etcd, registered with APIServices, so that kubectl get flunders goes through the aggregator; Ctrl-C stops it and removes the APIServices (one per cluster).
	@apiserver-example/hack/run-aggregated.sh

##@ CSI (lesson 7)

.PHONY: csi-sanity
csi-sanity: ## The CSI project's conformance tests (csi-sanity, built on first use) against the toy driver (RECONCILER=stub|reference|<yours>), then what was skipped and why; no cluster needed.
	@RECONCILER='$(RECONCILER)' csi-driver-example/hack/csi-sanity.sh

##@ Your own controller

##% FROM new-controller: the tier to start from: sample-controller (its code, every name rewritten) or kubebuilder-guestbook (a new project from the pinned kubebuilder CLI, with the kit's conventions)
FROM ?=
##% DIR new-controller: the new project's folder, new or empty: outside the kit (DIR=../bar-controller), or at its top level (then added to go.work)
DIR ?=
##% MODULE new-controller: the new project's Go module path, such as example.com/bar-controller
MODULE ?=
##% GROUP new-controller: the API group of the new kind, a domain of your own, such as bar.example.com (kubebuilder-guestbook: --group bar, --domain example.com)
GROUP ?=
##% KIND new-controller: the new kind, CamelCase, such as Bar
KIND ?=
##% VERSION new-controller: the API version (default v1alpha1)
VERSION ?= v1alpha1
##% NAME new-controller: the controller's name: binary, ServiceAccount, namespace NAME-system, Lease, field manager (kubebuilder-guestbook: --project-name, so namespace NAME-system, NAME- before each object of config/default, Lease, image) (default: the kind in lowercase words joined by -, then -controller: KIND=WebApp gives web-app-controller)
NAME ?=

.PHONY: new-controller
new-controller: ## A controller project of your own from a tier: make new-controller FROM=sample-controller DIR=../bar-controller MODULE=example.com/bar-controller GROUP=bar.example.com KIND=Bar (docs/new-controller.md).
	@FROM='$(FROM)' DIR='$(DIR)' MODULE='$(MODULE)' GROUP='$(GROUP)' KIND='$(KIND)' VERSION='$(VERSION)' NAME='$(NAME)' hack/new-controller.sh

.PHONY: test-new-controller
test-new-controller: ## make new-controller's test: a Bar controller from each tier outside the tree, built, its unit tests and make verify; on the cluster KUBECONFIG reaches (skipped when none), its own e2e suite, and a Bar reconciled as its ServiceAccount; every kind of a table that make new-controller takes type-checks once the tier is rewritten for it.
	@hack/build-bins.sh envtest kubectl
	@cd hack/newcontroller && go test -tags e2e -count=1 -timeout 40m -v .

##@ Development

.PHONY: generate
generate: ## Regenerate code and manifests of every tier, and .vscode/launch.json from the lesson files' debug entries.
	@hack/build-bins.sh codegen
	@for t in $(TIERS); do $(MAKE) --no-print-directory -C $$t generate; done
	@go run ./test/check -launch-json >.vscode/launch.json.new && mv .vscode/launch.json.new .vscode/launch.json

.PHONY: verify
verify: ## Fail if a Go module of the kit compiles a shared dependency at another version than the others (go run ./test/versions names it and the fix), or generated code or manifests are not what is committed (runs make generate and compares).
	@hack/verify-clean.sh

.PHONY: verify-docs
verify-docs: ## Fail if docs/reading-kubernetes.md names a path or symbol missing at the pinned versions, a solution patch no longer applies, a lesson leaves out a contract its checks rely on or quotes a file:line of the kit's sources that no longer holds what it quotes, a Japanese twin (docs/ja/) is missing or differs from its English page in headings, anchors, code blocks, links or language switch, README.md or its twin outgrows its size or holds a table cell over 200 characters (hack/jadocs/frontdoor.go), a list of lessons (the lesson path's table, a list a text writes out) is not what the lesson files say, a stack a lesson quotes (<!-- stack: NAME -->) is not quoted alike in its Japanese twin, or a lesson page draws no diagram (mermaid) of the path it reads or one naming a function its text does not.
	@hack/check-reading-paths.sh
	@go run ./hack/jadocs
	@go run ./test/check -verify-contracts
	@go run ./test/check -verify-lines
	@go run ./test/check -verify-lists
	@go run ./test/check -verify-stacks
	@go run ./test/check -verify-diagrams
	@go run ./test/check -verify-launch-json
	@# Against the committed tiers (a scratch index), so a learner's own edits do not count.
	@idx=$$(mktemp) && trap 'rm -f "$$idx"' EXIT && GIT_INDEX_FILE=$$idx git read-tree HEAD && \
		for p in docs/solutions/*/*.patch; do GIT_INDEX_FILE=$$idx git apply --cached --check "$$p" || \
		{ echo "$$p does not apply to the committed tier: see docs/solutions/README.md" >&2; exit 1; }; done
	@echo ">> docs/solutions: every patch applies to its tier"
	@# Patches to Kubernetes' own source (lesson 4) apply to the pinned module, add
	@# lines only and carry no context: they quote no upstream line.
	@K=$$(cd hack/controlplane && GOWORK=off go list -m -f '{{.Dir}}' k8s.io/kubernetes) && \
		for p in docs/solutions/*/kubernetes/*.patch; do \
		if grep -nE '^( |-([^-]|$$)|-[-][^-])' "$$p" >&2; then echo "$$p: the lines above are context or removals; a patch to Kubernetes' source adds lines only (git diff -U0)" >&2; exit 1; fi; \
		(cd "$$K" && GIT_CEILING_DIRECTORIES="$$(dirname "$$K")" git apply --check --unidiff-zero "$(CURDIR)/$$p") || \
		{ echo "$$p does not apply to k8s.io/kubernetes at the pinned version: see docs/solutions/README.md" >&2; exit 1; }; done
	@echo ">> docs/solutions: every patch to Kubernetes' source applies to the pinned module and only adds lines"

.PHONY: vet
vet: ## gofmt and go vet every Go module of the kit: the workspace's (go.work; e2e suites included), then each one outside it (GOWORK=off).
	@echo ">> gofmt -l"
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$out" ]; then echo "gofmt would change these files; run gofmt -w on them:" >&2; echo "$$out" >&2; exit 1; fi
	@# ./<module>/... stops at a module's edge (each tier's test/e2e is a module of
	@# its own), so every module of go.work is named by its own pattern.
	@echo ">> go vet -tags e2e: the workspace's modules (go.work): $(WORK_MODULES)"
	@go vet -tags e2e $(addprefix ./,$(addsuffix /...,$(WORK_MODULES)))
	@echo ">> go vet -tags e2e_kind (kubebuilder-guestbook/test/e2e: kubebuilder's kind suite)"
	@go vet -tags e2e_kind ./kubebuilder-guestbook/test/e2e/...
	@bash -c 'source hack/lib.sh && kit_each_other_module "go vet" go vet ./...'

##@ Test

.PHONY: test
test: ## Everything CI runs: verify, then at once: verify-docs and vet, unit + envtest (fuzz seeds included), every e2e suite and check (fresh local cluster), the smaller reliability scenarios and a bench smoke run.
	@hack/test-all.sh

.PHONY: test-unit
test-unit: ## Unit and envtest suites of every tier and every other Go module of the kit but the lessons' suites, which run on a cluster (no cluster needed). A package that passed and did not change shows (cached), go test's cache; go clean -testcache runs everything again.
	@hack/build-bins.sh envtest
	@for t in $(TIERS); do echo ">> unit tests: $$t"; $(MAKE) --no-print-directory -C $$t test-unit; done
	@echo ">> unit tests: the workspace's other modules (go.work; not the tiers, above, nor the lessons' suites): $(filter-out $(TIERS) $(SUITES),$(WORK_MODULES))"
	@go test $(addprefix ./,$(addsuffix /...,$(filter-out $(TIERS) $(SUITES),$(WORK_MODULES))))
	@bash -c 'source hack/lib.sh && kit_each_other_module "unit tests" go test ./...'

.PHONY: test-e2e
test-e2e: test-e2e-cluster ## The e2e suites (cluster checks + every tier, one after another) against the cluster KUBECONFIG reaches.
	@for t in $(TIERS); do echo ">> e2e: $$t"; $(MAKE) --no-print-directory -C $$t test-e2e; done

.PHONY: test-e2e-cluster
# The cluster's own e2e checks are the tests of test/kittest's *_e2e_test.go files
# (its unit tests run in test-unit). Their test binary, like the reliability
# scenarios', is kept in _output/e2e-bin, so a warm run links nothing (go test
# would link it again each time, 4 to 5 CPU seconds).
KITTEST_E2E := $(shell sed -n 's/^func \(Test[A-Za-z0-9_]*\).*/\1/p' test/kittest/*_e2e_test.go | paste -sd'|' -)
test-e2e-cluster: ## The cluster's own e2e checks (test/kittest): nodes, a Deployment, garbage collection, versions, listeners.
	@hack/build-bins.sh kubectl
	@echo ">> e2e: the cluster itself (test/kittest)"
	@[ -n '$(KITTEST_E2E)' ] || { echo "test-e2e-cluster: no Test function in test/kittest/*_e2e_test.go" >&2; exit 1; }
	@go test -c -tags e2e -o '$(KIT_OUT)/e2e-bin/kittest-e2e.test' ./test/kittest
	@cd test/kittest && '$(KIT_OUT)/e2e-bin/kittest-e2e.test' -test.count=1 -test.timeout=10m -test.run '^($(KITTEST_E2E))$$'

# One rule for every lesson whose lesson.yaml says cluster: own (make help lists
# them; hack/test-lesson.sh refuses the others).
# Lesson 4's debugger test (make test-debug, a cluster of its own) re-takes the
# stack its page quotes, so make test-lesson4 runs it first.
test-lesson4: test-debug
test-lesson%: ## Lesson %'s checks, all of them (every step its lesson.yaml has: its suite with the reference, the stub, each exercise's solution), on a fresh local cluster of its own; make test runs its smoke.
	@hack/test-lesson.sh $*

.PHONY: test-checks
test-checks: ## The checks stay honest, for each lesson whose lesson.yaml says cluster: shared (make test-lessonN for the others): its stub fails exactly the checks marked StubFails (lesson 0: the tier as shipped fails its exercises; lessons in parallel).
	@hack/test-lessons.sh --stub

.PHONY: test-solutions
test-solutions: ## For each lesson whose lesson.yaml says cluster: shared (make test-lessonN for the others): each exercise check passes against its solution (docs/solutions) and fails against the reference (lessons in parallel).
	@hack/test-lessons.sh --solution

##% RELIABILITY_FOOS test-reliability: Foos created at once in the crash scenarios (default 500; make test runs 60)
RELIABILITY_FOOS ?= 500
##% RELIABILITY_GUESTBOOKS test-reliability: Guestbooks created at once (default 50; make test runs 5)
RELIABILITY_GUESTBOOKS ?= 50
##% RELIABILITY_RUN test-reliability: only the scenarios whose test names match (go test -run); empty: all of them
RELIABILITY_RUN ?=

.PHONY: test-reliability
test-reliability: ## Reliability scenarios (controllers killed mid-burst, the API server stopped, a lost leader, bad input, the shipped manifests under restricted PSS) on a fresh local cluster of their own; table + _output/reliability.json.
	@hack/build-bins.sh cluster
	@go test -c -tags e2e -o '$(KIT_OUT)/e2e-bin/reliability.test' ./test/reliability
	@cd test/reliability && '$(KIT_OUT)/e2e-bin/reliability.test' -test.count=1 -test.timeout=60m -test.v $(if $(RELIABILITY_RUN),-test.run '$(RELIABILITY_RUN)') -foos=$(RELIABILITY_FOOS) -guestbooks=$(RELIABILITY_GUESTBOOKS)

##% KIT_E2E_PARALLEL check, test-*: how many tests of one e2e suite run at once (go test -parallel; default 16; make test-kind uses 2, since each guestbook Pod asks for CPU on a real node)
.PHONY: test-kind
test-kind: ## On a fresh kind cluster of its own (needs Docker): every lesson but those its lesson.yaml keeps to the local cluster (localClusterOnly) (their suites, stubs, solutions), then every controller built, loaded, deployed under restricted PSS, handed over, undeployed.
	@hack/build-bins.sh cluster codegen kind
	@KIND_NODE_IMAGE='$(KIND_NODE_IMAGE)' hack/test-kind.sh

##% FUZZTIME fuzz: how long each fuzz target runs (default 10s)
FUZZTIME ?= 10s

.PHONY: fuzz
fuzz: ## Fuzz each tier's pure parts: FUZZTIME per target (default 10s)
	@# -fuzz takes one target at a time: every func FuzzX in a tier's _test.go files, one run each.
	@for file in $$(grep -rl --include='*_test.go' '^func Fuzz' $(TIERS) | sort); do \
		pkg=$$(dirname "$$file"); \
		for target in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$$file"); do \
			echo ">> fuzz: $$pkg $$target"; \
			(cd "$$pkg" && go test -run='^$$' -fuzz="^$$target\$$" -fuzztime=$(FUZZTIME) .) || exit 1; \
		done; \
	done

##% N bench: Foos per burst (default 200)
N ?= 200
##% IDLE bench: how long each controller is watched once converged, its writes and Events counted (default 60s)
IDLE ?= 60s
##% REPEAT bench: runs of each scenario (default 1)
REPEAT ?= 1
##% SCENARIOS bench: which scenarios (default ours,upstream,ours-upstream-settings,floor,guestbook)
SCENARIOS ?= ours,upstream,ours-upstream-settings,floor,guestbook
##% BENCH_FLAGS bench: any other flag of the harness (cd test/bench && GOWORK=off go run . -h), such as -one-cluster (make test's smoke run: every scenario on one cluster)
BENCH_FLAGS ?=

# The harness, built with go build -o rather than go run, so that a run with
# no source changed links nothing.
BENCH_BIN := $(KIT_OUT)/bench/bin/bench

.PHONY: bench
bench: ## Performance scenarios on fresh local clusters, ours beside upstream and the floor (N=200).
	@hack/build-bins.sh cluster
	@cd test/bench && GOWORK=off go build -o $(BENCH_BIN) . && GOWORK=off $(BENCH_BIN) -n $(N) -idle $(IDLE) -repeat $(REPEAT) -scenarios $(SCENARIOS) $(BENCH_FLAGS)

##% SIZES bench-scale: the Ns (default 100,1000,5000; 10,000 is opt-in, about 50 min on 2 cores: SIZES=100,1000,5000,10000)
SIZES ?= 100,1000,5000
##% SCALE_SCENARIOS bench-scale: which scenarios (default ours,floor,guestbook,upstream)
SCALE_SCENARIOS ?= ours,floor,guestbook,upstream
##% SCALE_IDLE bench-scale: the idle window of each run (default 15s)
SCALE_IDLE ?= 15s

.PHONY: bench-scale
bench-scale: ## Growth from N=100 up (SIZES=...,10000 for the largest): ours, floor, upstream (N<=1000), guestbook (N/10); table, fits, log-log plot.
	@hack/build-bins.sh cluster
	@cd test/bench && GOWORK=off go build -o $(BENCH_BIN) . && GOWORK=off $(BENCH_BIN) -scale $(SIZES) -idle $(SCALE_IDLE) -scenarios $(SCALE_SCENARIOS)

##@ Deploy

.PHONY: docker-build
docker-build: ## Build every tier's controller image (tag: the git commit, never latest).
	@for t in $(TIERS); do $(MAKE) --no-print-directory -C $$t docker-build; done

.PHONY: kind-load
kind-load: ## Load every tier's image into the kind cluster.
	@hack/build-bins.sh kind
	@for t in $(TIERS); do $(MAKE) --no-print-directory -C $$t kind-load; done

.PHONY: deploy-workqueue
deploy-workqueue: ## Deploy lesson 1's controller in-cluster with its RBAC.
	@$(MAKE) --no-print-directory -C workqueue-example deploy

.PHONY: deploy-sample
deploy-sample: ## Deploy sample-controller in-cluster with its CRD and RBAC.
	@$(MAKE) --no-print-directory -C sample-controller deploy

.PHONY: deploy-guestbook
deploy-guestbook: ## Deploy the guestbook operator in-cluster with its CRD and RBAC.
	@$(MAKE) --no-print-directory -C kubebuilder-guestbook deploy

.PHONY: undeploy-workqueue
undeploy-workqueue: ## Remove what deploy-workqueue made: the controller, its RBAC and namespace.
	@$(MAKE) --no-print-directory -C workqueue-example undeploy

.PHONY: undeploy-sample
undeploy-sample: ## Remove what deploy-sample made but the CRD (delete your Foos first).
	@$(MAKE) --no-print-directory -C sample-controller undeploy

.PHONY: undeploy-guestbook
undeploy-guestbook: ## Remove what deploy-guestbook made, its CRD too (delete your Guestbooks first, while the manager can remove their finalizers).
	@$(MAKE) --no-print-directory -C kubebuilder-guestbook undeploy

.PHONY: deploy-csi
# make deploy-csi runs several scripts (three builds, then the deploy): they count their
# progress lines ([ 12s], hack/lib/log.sh) from one start, KIT_T0, the second this make
# started unless a kit script set it before. Not every target: the grader's unit tests
# read KIT_T0, and go test's cache keys on it.
deploy-csi: export KIT_T0 := $(or $(KIT_T0),$(shell date +%s))
deploy-csi: ## Lesson 7 part 2, on kind: the CSI driver's three images built and loaded, its controller half (Deployment csi-controller, with the sidecars) and node half (privileged DaemonSet csi-node) deployed in namespace csi-driver-example; waits until the kubelet registered it (RECONCILER=stub: the node exercises' start).
	@csi-driver-example/hack/deploy-csi.sh check
	@$(MAKE) --no-print-directory -C csi-driver-example docker-build kind-load deploy

.PHONY: undeploy-csi
undeploy-csi: ## Remove what deploy-csi made: the claims of its StorageClass and their volumes first, then the driver and its RBAC, then its mounts and folders on the nodes; says if anything is left.
	@$(MAKE) --no-print-directory -C csi-driver-example undeploy
