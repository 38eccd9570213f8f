#!/usr/bin/env bash
# build-bins.sh builds the kit's pinned binaries into bin/ from the Go modules under
# hack/ (the versions are the ones in those go.mod files; nothing else is downloaded).
# Only binaries that are missing, or older than the go.mod that pins them, are built,
# so a second run with everything present returns at once.
#
# Usage: hack/build-bins.sh [all | cluster | envtest | codegen | NAME...]
#   cluster  etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kwok, kwokctl,
#            kit-component (stops or starts one component of a local cluster, for
#            make test-reliability's API server outage; hack/cluster/cmd/kit-component)
#   envtest  etcd, kube-apiserver, kubectl (also laid out as setup-envtest's store, see below)
#   codegen  controller-gen, the code-generator generators, kustomize
#   all      every binary below, plus kind
#   dlv      delve, the debugger (lesson 4): not in all, built on first use
#   etcdctl  etcd's client, from the same module and release as etcd (lesson 6 reads the
#            local cluster's etcd with it): not in all, built on first use
#   sample-apiserver  k8s.io/sample-apiserver, an aggregated API server (lesson 6's make
#            run-aggregated), from the control plane's module: not in all, built on first use
#   kubebuilder  the kubebuilder CLI (make new-controller FROM=kubebuilder-guestbook):
#            not in all, built on first use
#   csi      lesson 7's CSI programs, from their own build module (hack/csi): the sidecars
#            csi-provisioner and csi-attacher, and csi-sanity (the CSI conformance tests):
#            not in all, built on first use
#   kind-node  what make kind-node-image puts in the kit's kind node image beside the
#            cluster binaries: kubelet, kubeadm, kube-proxy, and kit-standin (the stand-in
#            images' one program, hack/cluster/cmd/kit-standin, static): not in all
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BIN=$KIT_BIN
# An unknown binary's name is bad input: exit 2, as make does for an unknown target.
KIT_DIE_STATUS=2
# KUBE_VERSION is the control-plane version (such as v1.37.2), read from the go.mod
# that pins it (lib.sh's kit_kube_version, the one place that reads it).
KUBE_VERSION=$(kit_kube_version)

# module_of NAME prints "module-dir package-path" for a binary the kit builds.
module_of() {
	# The pinned Kubernetes module's binaries (lib.sh's lists of them).
	case " $KIT_COMPONENTS kubectl $KIT_NODE_BINARIES " in *" $1 "*)
		echo "controlplane k8s.io/kubernetes/cmd/$1"
		return ;;
	esac
	case "$1" in
	etcd) echo "etcd go.etcd.io/etcd/server/v3" ;;
	etcdctl) echo "etcd go.etcd.io/etcd/etcdctl/v3" ;;
	sample-apiserver) echo "controlplane k8s.io/sample-apiserver" ;;
	kwok | kwokctl) echo "cluster sigs.k8s.io/kwok/cmd/$1" ;;
	kind) echo "cluster sigs.k8s.io/kind" ;;
	kit-component | kit-standin) echo "cluster github.com/controller-kit/controller-kit/hack/cluster/cmd/$1" ;;
	controller-gen) echo "tools sigs.k8s.io/controller-tools/cmd/controller-gen" ;;
	deepcopy-gen | client-gen | lister-gen | informer-gen | applyconfiguration-gen)
		echo "tools k8s.io/code-generator/cmd/$1" ;;
	kustomize) echo "tools sigs.k8s.io/kustomize/kustomize/v5" ;;
	kubebuilder) echo "tools sigs.k8s.io/kubebuilder/v4" ;;
	dlv) echo "delve github.com/go-delve/delve/cmd/dlv" ;;
	csi-provisioner) echo "csi github.com/kubernetes-csi/external-provisioner/v6/cmd/$1" ;;
	csi-attacher) echo "csi github.com/kubernetes-csi/external-attacher/v4/cmd/$1" ;;
	csi-sanity) echo "csi github.com/kubernetes-csi/csi-test/v5/cmd/$1" ;;
	*) return 1 ;;
	esac
}

expand() {
	case "$1" in
	envtest) echo etcd kube-apiserver kubectl ;;
	cluster) echo etcd $KIT_COMPONENTS kubectl kwok kwokctl kit-component ;;
	codegen) echo controller-gen deepcopy-gen client-gen lister-gen informer-gen applyconfiguration-gen kustomize ;;
	all) echo "$(expand cluster) $(expand codegen) kind" ;;
	kind-node) echo $KIT_NODE_BINARIES kit-standin ;;
	csi) echo csi-provisioner csi-attacher csi-sanity ;;
	*) echo "$1" ;;
	esac
}

# build MODULE_DIR NAME... compiles the named binaries of one module in a single
# 'go build' (so they share compilation), printing a heartbeat while it runs.
build() {
	local mod=$1
	shift
	local pkgs=() name pkg ldflags=""
	for name in "$@"; do
		read -r _ pkg < <(module_of "$name")
		pkgs+=("$pkg")
	done
	# The control plane reports the pinned version (lib.sh's kit_version_ldflags).
	if [ "$mod" = controlplane ]; then ldflags=$(kit_version_ldflags "$KUBE_VERSION"); fi
	local start=$SECONDS out="$BIN/"
	# A package path ending in a major version (etcd's .../v3, kustomize's .../v5) would
	# name the binary "v3"; build such a binary alone with an explicit output file.
	if [ $# -eq 1 ]; then out="$BIN/$1"; fi
	echo ">> building $* (module hack/$mod)"
	local rc=0
	# kit-standin runs alone in an image with no C library: link it statically.
	local cgo=${CGO_ENABLED:-}
	if [ "$*" = kit-standin ]; then cgo=0; fi
	kit_with_heartbeat "$*" "" env CGO_ENABLED="$cgo" GOWORK=off \
		go build -C "$KIT_ROOT/hack/$mod" -trimpath -ldflags "-s -w $ldflags" -o "$out" "${pkgs[@]}" || rc=$?
	if [ $rc -ne 0 ]; then
		echo "!! building $* failed (exit $rc); the Go error is above" >&2
		exit $rc
	fi
	echo "   built $* in $(kit_elapsed $((SECONDS - start)))"
}

# envtest_layout links the envtest binaries into setup-envtest's store layout, so
# KUBEBUILDER_ASSETS=bin/k8s/<version>-<os>-<arch> works with no download.
envtest_layout() {
	local dir
	dir="$BIN/k8s/${KUBE_VERSION#v}-$(go env GOOS)-$(go env GOARCH)"
	mkdir -p "$dir"
	for name in etcd kube-apiserver kubectl; do
		if [ -x "$BIN/$name" ] && [ ! -e "$dir/$name" ]; then ln -sf "../../$name" "$dir/$name"; fi
	done
}

# stale NAME... adds to todo (module -> names) each binary that is missing from
# bin/ or older than the go.mod that pins it, grouped by module, one go build each.
stale() {
	local name mod
	for name in "$@"; do
		read -r mod _ < <(module_of "$name")
		# The kit's own tool is also stale when any of its source files is newer.
		local src="$KIT_ROOT/hack/$mod/cmd/$name"
		if [ -x "$BIN/$name" ] && [ "$BIN/$name" -nt "$KIT_ROOT/hack/$mod/go.mod" ] &&
			{ [ ! -d "$src" ] || [ -z "$(find "$src" -name '*.go' -newer "$BIN/$name")" ]; }; then continue; fi
		case " ${todo[$mod]:-} " in *" $name "*) ;; *) todo[$mod]="${todo[$mod]:-} $name" ;; esac
	done
}

main() {
	local want=() arg name mod
	[ $# -gt 0 ] || set -- all
	for arg in "$@"; do
		for name in $(expand "$arg"); do
			if ! module_of "$name" >/dev/null; then
				kit_die "unknown binary '$name'; known: $(expand all) dlv etcdctl sample-apiserver kubebuilder $(expand kind-node) $(expand csi)"
			fi
			want+=("$name")
		done
	done
	mkdir -p "$BIN"
	local -A todo=()
	stale "${want[@]}"
	if [ ${#todo[@]} -eq 0 ]; then
		envtest_layout
		return 0
	fi
	# Builds wait for each other (make test starts a lesson's long build early, and
	# the lesson's own checks ask for the same binaries later): the second finds
	# them built once the first is done, instead of compiling them again beside it.
	# The lock is fd 7 on bin/.build.lock; where there is no flock (util-linux),
	# nothing waits.
	if command -v flock >/dev/null && exec 7>"$BIN/.build.lock"; then
		if ! flock -n 7; then
			echo ">> waiting for another build of bin/ to end (hack/build-bins.sh $(cat "$BIN/.build.holder" 2>/dev/null || echo '...'))"
			flock 7
			todo=()
			stale "${want[@]}"
		fi
		printf '%s (pid %s, since %s)\n' "$*" "$$" "$(date '+%H:%M:%S')" >"$BIN/.build.holder"
	fi
	local total=$SECONDS
	# Largest first, so the long kube-apiserver build warms the cache for the rest.
	for mod in controlplane etcd cluster tools delve csi; do
		[ -n "${todo[$mod]:-}" ] || continue
		local names=(${todo[$mod]})
		if [ "$mod" = controlplane ]; then
			build "$mod" "${names[@]}"
		else
			for name in "${names[@]}"; do build "$mod" "$name"; done
		fi
	done
	envtest_layout
	if [ ${#todo[@]} -gt 0 ]; then
		echo ">> binaries ready in bin/ ($(kit_elapsed $((SECONDS - total))))"
	fi
}

main "$@"
