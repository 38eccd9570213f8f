#!/usr/bin/env bash
# kind-node-image.sh is `make kind-node-image`: a kind node image for the kit's
# pinned Kubernetes version, assembled offline from Go modules and Debian's
# packages, for machines that cannot pull kind's published image. Its name,
# $KIT_KIND_NODE_IMAGE (lib.sh), is not kindest/node's, so it is never mistaken
# for the published one; `make kind-up KIND_NODE_IMAGE=kit` uses it.
#
# What goes in, step by step (each step skipped when its output is current):
#  1. Kubernetes' binaries from bin/ (build-bins.sh: the control plane, kubelet,
#     kubeadm, kube-proxy, and kit-standin).
#  2. The container runtime and CNI plugins at the versions kind v0.33.0's base
#     image names (read from its images/base/Dockerfile in the kind module):
#     containerd, runc (with seccomp), crictl, the ptp/host-local/portmap/loopback
#     plugins; and CoreDNS at the version kubeadm names. `go install MODULE@VERSION`
#     each, so each builds with its own go.mod; into _output/kind-node/bin.
#  3. A Debian root filesystem (mmdebstrap, from the mirrors in apt's own sources).
#  4. Images for containerd: every image `kubeadm config images list` names (the
#     control plane's on the root filesystem, CoreDNS and pause on nothing), and
#     the stand-ins of kind-node/stand-ins.txt, all under their upstream names.
#  5. The node: kind-node/Dockerfile on the root filesystem, then those images
#     imported into its containerd (as kind's own node image build does: a
#     container, containerd started in it, ctr import, docker commit).
# The image carries a label with a hash of its recipe (see "is the image
# current?" below); when the recipe has not changed, the script says so and
# stops before building anything, in any clone of the kit.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
KIT_ME="make kind-node-image"

"$KIT_ROOT/hack/cluster/require-docker.sh" "make kind-node-image (it builds Docker images)"

here="$KIT_ROOT/hack/cluster"
work="$KIT_OUT/kind-node"
nodebin="$work/bin"
KUBE_VERSION=$(kit_kube_version)
KIT_KIND_NODE_IMAGE=$(kit_kind_node_image)
mkdir -p "$nodebin"

# --- the root filesystem's recipe (made in step 3) ---------------------------
# The packages kind's base image installs, minus what the kit's single-node
# clusters do not use (NFS, iSCSI, fuse-overlayfs), plus busybox-static for the
# busybox stand-in.
packages=systemd,systemd-sysv,dbus,conntrack,iptables,nftables,iproute2,ethtool,util-linux,mount,kmod,libseccomp2,pigz,e2fsprogs,bash,ca-certificates,curl,jq,procps,busybox-static
. /etc/os-release
suite=${VERSION_CODENAME:?/etc/os-release names no VERSION_CODENAME}

# --- is the image current? -----------------------------------------------------
# The image's label holds a hash of its recipe: the pinned versions (the go.mod
# and go.sum of the modules its binaries come from: Kubernetes, etcd, and kind,
# whose base image names the runtime's versions), the build scripts and the part
# of lib.sh that stamps the version into the Kubernetes binaries (lib/kube.sh), the
# stand-ins' program, the node's files, and the Debian suite and packages. Not
# the built files: Go records the folder it built in, and mmdebstrap's tarball
# differs from run to run, so those would make every fresh clone rebuild.
recipe=$( (
	echo "$KUBE_VERSION $suite $packages $(uname -m)"
	cd "$KIT_ROOT" && sha256sum hack/controlplane/go.mod hack/controlplane/go.sum hack/etcd/go.mod hack/etcd/go.sum \
		hack/cluster/go.mod hack/cluster/go.sum hack/cluster/cmd/kit-standin/main.go hack/build-bins.sh hack/lib/kube.sh \
		hack/cluster/kind-node/* hack/cluster/runc-wrapper.sh hack/cluster/kind-node-image.sh
) | sha256sum | cut -c1-16)
if [ "$(docker image inspect -f '{{index .Config.Labels "dev.controller-kit.recipe"}}' "$KIT_KIND_NODE_IMAGE" 2>/dev/null)" = "$recipe" ]; then
	kit_log "$KIT_KIND_NODE_IMAGE is current (recipe $recipe): nothing to do (docker rmi $KIT_KIND_NODE_IMAGE, then make kind-node-image, rebuilds it, with Debian's newest packages)"
	exit 0
fi
kit_log "building $KIT_KIND_NODE_IMAGE (recipe $recipe): about 12 minutes on 2 cores the first time, less where bin/ and _output/kind-node/ hold its parts"

# --- host tools -------------------------------------------------------------
# mmdebstrap makes the root filesystem; runc's seccomp support links libseccomp.
need=()
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
command -v gcc >/dev/null || need+=(gcc)
command -v pkg-config >/dev/null || need+=(pkg-config)
pkg-config --exists libseccomp 2>/dev/null || need+=(libseccomp-dev)
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		kit_log "installing Debian's ${need[*]} with apt-get (log: $work/apt.log)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >"$work/apt.log" 2>&1 ||
			kit_die "apt-get install ${need[*]} failed; $work/apt.log says why"
	else
		kit_die "it needs ${need[*]}: sudo apt-get install ${need[*]}"
	fi
fi

# --- 1. Kubernetes' binaries ------------------------------------------------
kit_log "step 1/5: Kubernetes $KUBE_VERSION binaries in bin/"
"$KIT_ROOT/hack/build-bins.sh" cluster kind-node

# --- 2. the runtime, CNI plugins and CoreDNS ---------------------------------
# kind's module is read for its base image's recipe; on a fresh machine nothing has downloaded it
# yet (bin/kind is built on first use), so download it first: go list -m prints no Dir without it.
(cd "$here" && GOWORK=off go mod download sigs.k8s.io/kind) || kit_die "could not download sigs.k8s.io/kind (hack/cluster/go.mod) from the Go module proxy"
kind_dir=$(cd "$here" && GOWORK=off go list -m -f '{{.Dir}}' sigs.k8s.io/kind)
[ -d "$kind_dir/images/base" ] || kit_die "sigs.k8s.io/kind's module has no images/base folder (at '$kind_dir'): the script needs updating for this kind"
# kind_arg NAME prints the default of `ARG NAME="..."` in kind's base image Dockerfile.
kind_arg() {
	local v
	v=$(sed -n "s/^ARG $1=\"\(.*\)\"\$/\1/p" "$kind_dir/images/base/Dockerfile")
	[ -n "$v" ] || kit_die "kind's images/base/Dockerfile has no ARG $1 (kind $(basename "$kind_dir")): the script needs updating for this kind"
	echo "$v"
}
containerd_v=$(kind_arg CONTAINERD_VERSION)
runc_v=$(kind_arg RUNC_VERSION)
crictl_v=$(kind_arg CRICTL_VERSION)
cni_v=$(kind_arg CNI_PLUGINS_VERSION)
# kubeadm names every image its cluster runs; CoreDNS's tag is its version.
mapfile -t kubeadm_images < <("$KIT_BIN/kubeadm" config images list --kubernetes-version "$KUBE_VERSION")
coredns_image=$(printf '%s\n' "${kubeadm_images[@]}" | grep /coredns:) || kit_die "kubeadm config images list names no CoreDNS image"
coredns_v=${coredns_image##*:}

# go_install STAMP CGO TAGS LDFLAGS PACKAGE@VERSION... builds into $nodebin unless
# $nodebin/.STAMP says these were built already.
go_install() {
	local stamp=$1 cgo=$2 tags=$3 ldflags=$4
	shift 4
	if [ "$(cat "$nodebin/.$stamp" 2>/dev/null)" = "$*" ]; then return 0; fi
	local start=$SECONDS
	kit_log "  building $stamp ($*)"
	(cd "$work" && GOWORK=off GOBIN="$nodebin" CGO_ENABLED=$cgo GOFLAGS=-trimpath \
		go install -tags "$tags" -ldflags "-s -w $ldflags" "$@") || kit_die "building $stamp failed; the Go error is above"
	echo "$*" >"$nodebin/.$stamp"
	kit_log "  built $stamp in $((SECONDS - start)) s"
}
kit_log "step 2/5: containerd $containerd_v, runc $runc_v, crictl $crictl_v, CNI plugins $cni_v (kind's base image's versions), CoreDNS $coredns_v (kubeadm's)"
cd_pkg=github.com/containerd/containerd/v2
go_install containerd 1 "no_aufs no_zfs no_btrfs no_devmapper" "-X $cd_pkg/version.Version=$containerd_v" \
	"$cd_pkg/cmd/containerd@$containerd_v" "$cd_pkg/cmd/containerd-shim-runc-v2@$containerd_v" "$cd_pkg/cmd/ctr@$containerd_v"
go_install runc 1 seccomp "-X main.version=${runc_v#v}" "github.com/opencontainers/runc@$runc_v"
go_install crictl 0 "" "-X sigs.k8s.io/cri-tools/pkg/version.Version=$crictl_v" "sigs.k8s.io/cri-tools/cmd/crictl@$crictl_v"
cni_pkg=github.com/containernetworking/plugins/plugins
go_install cni 0 "" "" "$cni_pkg/ipam/host-local@$cni_v" "$cni_pkg/main/loopback@$cni_v" \
	"$cni_pkg/main/ptp@$cni_v" "$cni_pkg/meta/portmap@$cni_v"
go_install coredns 0 "" "" "github.com/coredns/coredns@$coredns_v"

# --- 3. the root filesystem -------------------------------------------------
sources=""
for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list; do
	if [ -s "$f" ]; then
		sources=$f
		break
	fi
done
[ -n "$sources" ] || kit_die "no apt sources found (/etc/apt/sources.list.d/*.sources or /etc/apt/sources.list): mmdebstrap takes its mirror from them"
rootfs="$work/rootfs.tar"
rootfs_key="$suite $packages"
if [ "$(cat "$work/.rootfs" 2>/dev/null)" != "$rootfs_key" ] || [ ! -s "$rootfs" ]; then
	kit_log "step 3/5: a Debian $suite root filesystem with mmdebstrap (mirror from $sources; about 2 minutes; log: $work/mmdebstrap.log)"
	mmdebstrap --variant=minbase --format=tar --include="$packages" \
		--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		"$suite" "$rootfs.tmp" "$sources" >"$work/mmdebstrap.log" 2>&1 ||
		kit_die "mmdebstrap failed; $work/mmdebstrap.log says why"
	mv "$rootfs.tmp" "$rootfs"
	echo "$rootfs_key" >"$work/.rootfs"
else
	kit_log "step 3/5: the Debian $suite root filesystem is current ($rootfs)"
fi

# docker_build ARGS... runs docker build with the legacy builder (docker.io has no
# buildx) and its output in $work/docker-build.log, shown when it fails.
docker_build() {
	DOCKER_BUILDKIT=0 docker build "$@" >"$work/docker-build.log" 2>&1 || {
		cat "$work/docker-build.log" >&2
		return 1
	}
}

# --- 4. images for the node's containerd --------------------------------------
ctx="$work/context"
rm -rf "$ctx"
mkdir -p "$ctx"
rootfs_image="controller-kit.local/kind-node-rootfs:$suite"
kit_log "step 4/5: images for the node's containerd"
docker import "$rootfs" "$rootfs_image" >/dev/null

# The files the images are made of, in one folder: bin/'s binaries (hard links,
# so nothing is copied), CoreDNS, and busybox from the root filesystem.
files="$ctx/files"
mkdir -p "$files"
for b in $KIT_COMPONENTS kube-proxy etcd kit-standin; do
	ln -f "$KIT_BIN/$b" "$files/$b" 2>/dev/null || cp "$KIT_BIN/$b" "$files/$b"
done
cp "$nodebin/coredns" "$files/coredns"
tar -xOf "$rootfs" ./bin/busybox >"$files/busybox" 2>/dev/null || tar -xOf "$rootfs" ./usr/bin/busybox >"$files/busybox"
chmod 0755 "$files/busybox"

# image NAME FILE LINE... builds image NAME from a Dockerfile of the LINEs, in a
# context that holds FILE alone (docker sends the whole context to every build).
image() {
	local name=$1 file=$2 dir
	shift 2
	dir=$(mktemp -d "$ctx/image.XXXX")
	ln "$files/$file" "$dir/$file"
	printf '%s\n' "$@" >"$dir/Dockerfile"
	docker_build -t "$name" "$dir" || kit_die "building the image $name failed"
	rm -rf "$dir"
	built+=("$name")
}
built=()
standin_label() { echo "LABEL dev.controller-kit.stand-in=\"$1\""; }
for name in "${kubeadm_images[@]}"; do
	base=${name##*/}
	base=${base%%:*}
	case $base in
	kube-apiserver | kube-controller-manager | kube-scheduler | kube-proxy)
		image "$name" "$base" "FROM $rootfs_image" "COPY $base /usr/local/bin/$base" \
			"LABEL dev.controller-kit.built-from=\"bin/$base, Kubernetes $KUBE_VERSION\"" ;;
	etcd)
		# kubeadm asks for its own etcd version's tag; the image holds the kit's pinned etcd.
		image "$name" etcd "FROM $rootfs_image" "COPY etcd /usr/local/bin/etcd" \
			"LABEL dev.controller-kit.built-from=\"bin/etcd, etcd $("$KIT_BIN/etcd" --version | sed -n 's/^etcd Version: //p')\"" ;;
	coredns)
		image "$name" coredns "FROM scratch" "COPY coredns /coredns" "ENTRYPOINT [\"/coredns\"]" \
			"LABEL dev.controller-kit.built-from=\"github.com/coredns/coredns $coredns_v\"" ;;
	pause)
		image "$name" kit-standin "FROM scratch" "COPY kit-standin /kit-standin" "ENTRYPOINT [\"/kit-standin\", \"pause\"]" \
			"$(standin_label "$name")" ;;
	*) kit_die "kubeadm names an image the script does not know how to make: $name" ;;
	esac
	kit_log "  $name"
done
while read -r name role; do
	case $role in
	pause | http | redis)
		image "$name" kit-standin "FROM scratch" "COPY kit-standin /kit-standin" "ENV KIT_STANDIN_FOR=$name" \
			"ENTRYPOINT [\"/kit-standin\", \"$role\"]" "$(standin_label "$name")" ;;
	busybox)
		image "$name" busybox "FROM scratch" "COPY busybox /bin/busybox" "RUN [\"/bin/busybox\", \"--install\", \"-s\", \"/bin\"]" \
			"CMD [\"sh\"]" "$(standin_label "$name")" ;;
	*) kit_die "hack/cluster/kind-node/stand-ins.txt: $name has role '$role'; the roles are pause, http, redis and busybox" ;;
	esac
	kit_log "  $name (stand-in: $role)"
done < <(grep -v '^\s*\(#\|$\)' "$here/kind-node/stand-ins.txt")
kit_log "  saving ${#built[@]} images"
docker save -o "$work/images.tar" "${built[@]}"

# --- 5. the node --------------------------------------------------------------
kit_log "step 5/5: the node image $KIT_KIND_NODE_IMAGE"
nodectx="$ctx/node"
mkdir -p "$nodectx/bin" "$nodectx/kit"
cp -r "$kind_dir/images/base/files" "$nodectx/kind-base"
chmod -R u+w "$nodectx/kind-base"
for b in containerd containerd-shim-runc-v2 ctr crictl runc host-local loopback ptp portmap; do
	cp "$nodebin/$b" "$nodectx/bin/$b"
done
for b in kubelet kubeadm kubectl; do cp "$KIT_BIN/$b" "$nodectx/bin/$b"; done
cp "$here/runc-wrapper.sh" "$nodectx/bin/kit-runc"
cp "$here/kind-node/10-kit-ptp.conflist" "$here/kind-node/default-cni.yaml" "$here/kind-node/default-storage.yaml" "$nodectx/kit/"
echo "$KUBE_VERSION" >"$nodectx/kit/version"
cp "$here/kind-node/Dockerfile" "$nodectx/Dockerfile"
docker_build --build-arg ROOTFS_IMAGE="$rootfs_image" -t "$KIT_KIND_NODE_IMAGE-base" "$nodectx" ||
	kit_die "building the node's file system failed (docker build of hack/cluster/kind-node/Dockerfile)"

# Import the images into the node's containerd: start the node image's own
# containerd in a container of it, import, stop it, commit the container.
# --init: an init that reaps containerd when it stops (sleep would leave a zombie).
container=$(docker run -d --privileged --init --entrypoint sleep "$KIT_KIND_NODE_IMAGE-base" infinity)
trap 'docker rm -f "$container" >/dev/null 2>&1 || true' EXIT
docker cp "$work/images.tar" "$container:/kind/images.tar"
docker exec "$container" bash -c 'nohup containerd >/var/log/containerd-build.log 2>&1 &'
for _ in $(seq 30); do
	docker exec "$container" ctr version >/dev/null 2>&1 && break
	sleep 1
done
docker exec "$container" ctr version >/dev/null 2>&1 || kit_die "containerd did not start in the node image: $(docker exec "$container" tail -5 /var/log/containerd-build.log)"
docker exec "$container" ctr --namespace=k8s.io images import --label=io.cri-containerd.pinned=pinned \
	--no-unpack --digests /kind/images.tar >/dev/null || kit_die "ctr could not import the images into the node's containerd"
docker exec "$container" bash -c 'pkill containerd; while pgrep -x containerd >/dev/null; do sleep 0.2; done; rm -f /kind/images.tar /var/log/containerd-build.log'
docker commit \
	--change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' \
	--change "LABEL dev.controller-kit.recipe=$recipe dev.controller-kit.kubernetes-version=$KUBE_VERSION" \
	"$container" "$KIT_KIND_NODE_IMAGE" >/dev/null
docker rmi "$KIT_KIND_NODE_IMAGE-base" >/dev/null 2>&1 || true
kit_log "built $KIT_KIND_NODE_IMAGE ($(docker image inspect -f '{{.Size}}' "$KIT_KIND_NODE_IMAGE" | awk '{printf "%d MB", $1/1e6}')): make kind-up KIND_NODE_IMAGE=kit"
