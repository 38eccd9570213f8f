#!/usr/bin/env bash
# kind-up.sh creates (or reuses) the kind cluster $KIT_CLUSTER (controller-kit by
# default) for learners with Docker, writing its kubeconfig to the same kit path
# as the local cluster. Without a Docker engine it fails at once and points at
# the Docker-free local cluster and at the engine script.
#
# The node image: KIND_NODE_IMAGE empty takes the one kind-config.yaml pins
# (kind v0.33.0's published image) when it is present or can be pulled, else the
# kit's own (make kind-node-image) when that is present, and says which it took;
# KIND_NODE_IMAGE=kit takes the kit's; any other value is an image name. An
# existing cluster of another Kubernetes version than the image's is refused, and
# so is an engine that does not run privileged containers (kind's nodes are).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
KIT_ME="make kind-up"

"$KIT_ROOT/hack/cluster/require-docker.sh" "make kind-up (kind runs its nodes as Docker containers)"
"$KIT_ROOT/hack/build-bins.sh" kind kubectl
mkdir -p "$KIT_OUT"

config="$KIT_ROOT/hack/cluster/kind-config.yaml"
pinned=$(sed -n 's/^ *image: *//p' "$config" | head -1)
kit_image=$(kit_kind_node_image)
present() { docker image inspect "$1" >/dev/null 2>&1; }

case ${KIND_NODE_IMAGE:-} in
"")
	if present "$pinned"; then
		image=$pinned
		kit_log "node image: kind's published image $pinned (present)"
	elif kit_log "pulling kind's published node image $pinned" && docker pull -q "$pinned" >/dev/null 2>"$KIT_OUT/kind-pull.log"; then
		image=$pinned
		kit_log "node image: kind's published image $pinned (pulled)"
	elif present "$kit_image"; then
		image=$kit_image
		kit_log "node image: the kit's own $kit_image, since kind's published image cannot be pulled here ($(tail -1 "$KIT_OUT/kind-pull.log"))"
	else
		kit_die "kind's published node image $pinned cannot be pulled here ($(tail -1 "$KIT_OUT/kind-pull.log")), and the kit's own node image $kit_image is not built. Build it offline with 'make kind-node-image' (about 12 minutes on 2 cores the first time), then run make kind-up again."
	fi
	;;
kit)
	image=$kit_image
	present "$image" || kit_die "KIND_NODE_IMAGE=kit asks for the kit's node image $image, which is not built: run 'make kind-node-image' first."
	kit_log "node image: the kit's own $image (KIND_NODE_IMAGE=kit)"
	;;
*)
	image=$KIND_NODE_IMAGE
	present "$image" || docker pull -q "$image" >/dev/null ||
		kit_die "KIND_NODE_IMAGE=$image is neither present nor pullable. Leave KIND_NODE_IMAGE empty for kind's published image, or set KIND_NODE_IMAGE=kit for the kit's (make kind-node-image)."
	kit_log "node image: $image (KIND_NODE_IMAGE)"
	;;
esac
# The Kubernetes version a node image holds, as kind reads it: /kind/version.
want=$(docker run --rm --entrypoint cat "$image" /kind/version) || kit_die "the image $image has no /kind/version: it is not a kind node image"

if kit_listed "$KIT_CLUSTER" "$KIT_BIN/kind" get clusters; then
	have=$(docker exec "$KIT_CLUSTER-control-plane" cat /kind/version 2>/dev/null || echo unknown)
	if [ "$have" != "$want" ]; then
		kit_die "the kind cluster '$KIT_CLUSTER' runs Kubernetes $have, the node image asked for ($image) holds $want. Delete the cluster first: ${KIT_MAKE_PREFIX}make kind-down, then ${KIT_MAKE_PREFIX}make kind-up."
	fi
	kit_log "kind cluster '$KIT_CLUSTER' already exists (Kubernetes $have); refreshing its kubeconfig"
	"$KIT_BIN/kind" export kubeconfig --name "$KIT_CLUSTER" --kubeconfig "$KIT_KUBECONFIG"
	exit 0
fi
# kind's nodes are privileged containers: an engine that refuses them fails kind
# late and obscurely, so ask first, with the node image itself.
if ! docker run --rm --privileged --entrypoint /bin/true "$image" >/dev/null 2>"$KIT_OUT/kind-privileged.log"; then
	kit_die "the Docker engine refuses privileged containers, and kind's nodes are privileged containers:
  $(tail -1 "$KIT_OUT/kind-privileged.log")
Where the machine's capability bounding set lacks a capability (grep CapBnd /proc/self/status), 'sudo make docker-engine' makes the kit's runtime wrapper kit-runc dockerd's default runtime, which drops that capability (hack/cluster/runc-wrapper.sh). Without Docker, 'make local-up' runs the kit's Docker-free cluster."
fi
# On a cgroup v1 engine the nodes use the cgroupfs driver (kind-config-cgroupv1.yaml).
if [ "$(docker info --format '{{.CgroupVersion}}' 2>/dev/null)" = 1 ]; then
	cat "$config" "$KIT_ROOT/hack/cluster/kind-config-cgroupv1.yaml" >"$KIT_OUT/kind-config-cgroupv1.yaml"
	config="$KIT_OUT/kind-config-cgroupv1.yaml"
	kit_log "the Docker engine runs cgroup v1: kubelet and containerd use the cgroupfs driver ($config)"
fi
kit_log "creating kind cluster '$KIT_CLUSTER' (Kubernetes $want)"
if ! "$KIT_BIN/kind" create cluster --config "$config" --name "$KIT_CLUSTER" --image "$image" \
	--kubeconfig "$KIT_KUBECONFIG" --wait 3m; then
	# kind deletes the node of a cluster it could not create, so a second try
	# starts clean. Its kubeadm steps wait minutes at most for the control
	# plane, which a busy 2-core machine can miss.
	load=""
	[ -r /proc/loadavg ] && load=" Load average now: $(cut -d' ' -f1-3 /proc/loadavg) on $(getconf _NPROCESSORS_ONLN) cores."
	kit_die "kind could not create the cluster '$KIT_CLUSTER'; kind's own lines name the step that failed.$load
When that step is kubeadm's ('failed to init node with kubeadm', or a control plane not healthy in time), the usual cause is a busy machine: run make kind-up again once other builds and clusters are done. kind removed the node it could not bootstrap, so nothing needs cleaning up first."
fi
kit_log "kind cluster ready; kubeconfig: $KIT_KUBECONFIG"
