#!/usr/bin/env bash
# kind-down.sh deletes the kind cluster 'controller-kit' (KIT_CLUSTER). Idempotent.
# First it ends what the kit still runs against it (make run-*, make debug of a
# controller: hack/lib/hold.sh's kit_hold_end), naming each.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

kit_hold_end "kind-$KIT_CLUSTER"

if ! command -v docker >/dev/null 2>&1 || ! timeout 2 docker info >/dev/null 2>&1; then
	kit_log "no Docker engine, so no kind cluster to delete; nothing to do"
	exit 0
fi
"$KIT_ROOT/hack/build-bins.sh" kind
"$KIT_BIN/kind" delete cluster --name "$KIT_CLUSTER" --kubeconfig "$KIT_KUBECONFIG"
