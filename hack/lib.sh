# lib.sh: the kit's one shell library. Every script of the kit sources it: the make
# targets' bodies in hack/ and in a lesson's own hack/ (csi-driver-example/hack/,
# ...), hack/cluster's scripts, build-bins.sh and controlplane/kube-version.sh. Not
# sample-controller/hack/'s codegen scripts (which a copy of the tier takes along),
# nor the files that run outside the kit: the templates
# make new-controller copies into a learner's project, the kind node image's files,
# the runtime wrapper. Source it; do not run it.
#
# It is split by subject into hack/lib/*.sh, as Kubernetes' own hack/lib is, and
# this file sources every part, so a script sources this file alone. A reader finds
# a helper by its subject, and the kind node image's recipe (cluster/kind-node-image.sh)
# hashes only the part that shapes the binaries it holds, lib/kube.sh, so a change to
# another part does not make that image stale.
#   lib/log.sh      progress lines, the heartbeat of a long build, errors
#   lib/cluster.sh  the kit cluster's names and paths, kubectl and kit-component on it,
#                   a kubeconfig that impersonates a user
#   lib/hold.sh     one copy of a foreground command per thing it holds (a scheduler's
#                   profile on a cluster, delve's port), refusing a second, naming the first
#   lib/kube.sh     the pinned Kubernetes: its version, its components, the version ldflags
#   lib/lists.sh    the tiers (read from the lesson files), the Go modules (go.work and
#                   the go.mod files outside it), a name checked against a list
#   lib/passes.sh   a check of the kit's files that remembers its last pass (make
#                   verify; make test's vet, docs and unit-test jobs)
#   lib/image.sh    a Go program's image without pulling anything: the binary alone,
#                   built statically, on an empty base (make docker-build's static way)
# One part it does not source: lib/debug.sh, what make debug's scripts share
# (hack/debug.sh and the start scripts of a lesson's folder source it themselves).
# Sourcing it defines names and functions and starts no program (bash's builtins
# only), so that kube-version.sh, which the root Makefile runs each time it starts,
# stays fast.
#
# Every path the kit writes lives under the repo: bin/ for binaries, _output/ for
# cluster state and the kit kubeconfig (never ~/.kwok or ~/.kube/config).

# The folder above this file's, found without running dirname: every script
# sources it by a path with a / in it.
KIT_ROOT=$(cd "${BASH_SOURCE[0]%/*}/.." && pwd)
KIT_BIN="$KIT_ROOT/bin"
KIT_OUT="$KIT_ROOT/_output"

source "$KIT_ROOT/hack/lib/log.sh"
source "$KIT_ROOT/hack/lib/cluster.sh"
source "$KIT_ROOT/hack/lib/hold.sh"
source "$KIT_ROOT/hack/lib/kube.sh"
source "$KIT_ROOT/hack/lib/lists.sh"
source "$KIT_ROOT/hack/lib/passes.sh"
source "$KIT_ROOT/hack/lib/image.sh"
