#!/usr/bin/env bash
# kind-up.sh creates (or reuses) the kind cluster 'controller-kit' for learners with
# Docker, writing its kubeconfig to the same kit path as the local cluster. Without a
# Docker engine it fails at once and points at the Docker-free local cluster.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

"$KIT_ROOT/hack/cluster/require-docker.sh" "make kind-up (kind runs its nodes as Docker containers)"
"$KIT_ROOT/hack/build-bins.sh" kind kubectl
if kit_listed "$KIT_CLUSTER" "$KIT_BIN/kind" get clusters; then
	kit_log "kind cluster '$KIT_CLUSTER' already exists; refreshing its kubeconfig"
	"$KIT_BIN/kind" export kubeconfig --name "$KIT_CLUSTER" --kubeconfig "$KIT_KUBECONFIG"
	exit 0
fi
kit_log "creating kind cluster '$KIT_CLUSTER' (pulls the pinned node image the first time)"
"$KIT_BIN/kind" create cluster --config "$KIT_ROOT/hack/cluster/kind-config.yaml" \
	--kubeconfig "$KIT_KUBECONFIG" --wait 3m
kit_log "kind cluster ready; kubeconfig: $KIT_KUBECONFIG"
