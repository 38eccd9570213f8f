# lib/kube.sh: the Kubernetes the kit pins: its version, its components, and the
# flags that stamp the version into a build of it. Part of hack/lib.sh, which sources
# it; do not source it alone. The kind node image's recipe hashes this file
# (cluster/kind-node-image.sh): what is here shapes the binaries in that image.

# KIT_COMPONENTS are the control-plane components the local cluster runs, built
# from the pinned module into bin/, in the order the cluster starts them. Lesson 4
# rebuilds any of them from the learner's copy and swaps it into the running
# cluster (kube-src.sh).
KIT_COMPONENTS="kube-apiserver kube-controller-manager kube-scheduler"
# KIT_LEADER_COMPONENTS are those of them that elect a leader: each works only
# while it holds the Lease kube-system/<its name>, so a new process of one works
# once it has taken the Lease over (kube-src.sh waits for that), and one paused
# in a debugger must not hold it (make debug runs these with leader election off).
KIT_LEADER_COMPONENTS="kube-controller-manager kube-scheduler"
# KIT_NODE_BINARIES are the binaries of the pinned module a kind node runs beside
# the control plane (make kind-node-image).
KIT_NODE_BINARIES="kubelet kubeadm kube-proxy"

# kit_kube_version prints the Kubernetes version the kit pins, such as v1.37.2: the
# version of k8s.io/kubernetes that hack/controlplane/go.mod requires, the one place
# it is written (hack/controlplane/kube-version.sh prints it for the Makefiles).
#
# `go list -m` reads the go.mod and the module cache; it takes about 10 ms. On a cold
# module cache it first fetches k8s.io/kubernetes's .info and .mod files (a few KB)
# from the Go module proxy, as any build of the kit would; offline with a cold
# cache it fails, and says why.
kit_kube_version() {
	local version
	if ! version=$(cd "$KIT_ROOT/hack/controlplane" && GOWORK=off go list -m -f '{{.Version}}' k8s.io/kubernetes) ||
		[ -z "$version" ]; then
		kit_error "cannot read the version of k8s.io/kubernetes from hack/controlplane/go.mod (go list -m failed; its error is above)"
		return 1
	fi
	echo "$version"
}

# kit_version_ldflags VERSION [TREE_STATE [COMMIT]] prints the -X flags that make a
# build of Kubernetes report VERSION (v1.37.2, or v1.37.2+kube-src-dirty for a
# build of the learner's copy), TREE_STATE (clean, the default, or dirty) and,
# when given, COMMIT: in component-base's version package, which --version and
# /version report, and in client-go's, which its requests' user agent reports.
# Without them the binaries report v0.0.0-master, which kubectl warns it cannot
# parse. Every build of Kubernetes the kit makes stamps its version with these:
# bin/'s (build-bins.sh) and lesson 4's builds of the copy (kube-src.sh).
#
# Those builds share Go's build cache with bin/'s: a build of an untouched copy
# compiles nothing and only links. The -X flags do not get in the way: the linker
# applies them, and under -trimpath, which every one of those builds uses, go does
# not record -ldflags in the binary's build information either, so no compiled
# package depends on them. What must match bin/'s build is -trimpath itself, and
# no -gcflags but those a debug build asks for, on the packages it names.
kit_version_ldflags() {
	local version=$1 state=${2:-clean} commit=${3:-} minor v flags=""
	# The minor version of v1.37.2+kube-src is 37.
	minor=${version#v*.}
	minor=${minor%%.*}
	for v in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		flags+=" -X $v.gitVersion=$version -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=$state"
		[ -z "$commit" ] || flags+=" -X $v.gitCommit=$commit"
	done
	echo "${flags# }"
}
