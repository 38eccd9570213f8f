#!/usr/bin/env bash
# local-down.sh deletes the kit's local cluster: every component process is stopped
# and its state under _output/kwok removed, with the cluster's file that local-up.sh
# wrote ($KIT_CLUSTER_INFO). Idempotent. First it ends what the kit still runs
# against the cluster (make run-*, make debug's foreground copies and replica:
# hack/lib/hold.sh's kit_hold_end), naming each, so that none is left failing
# against a cluster that is gone, and each cleans up while the cluster is still there.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

kit_hold_end "kwok-$KIT_CLUSTER"

# The file goes first: from here on, no program may take the cluster for running.
rm -f "$KIT_CLUSTER_INFO"
if [ ! -x "$KIT_BIN/kwokctl" ] || ! kit_listed "$KIT_CLUSTER" "$KIT_BIN/kwokctl" get clusters; then
	kit_log "no local cluster '$KIT_CLUSTER' is running; nothing to do"
	exit 0
fi
kit_log "deleting local cluster '$KIT_CLUSTER'"
mkdir -p "$KIT_OUT"
"$KIT_BIN/kwokctl" delete cluster --name "$KIT_CLUSTER" --kubeconfig "$KIT_KUBECONFIG" >"$KIT_OUT/kwokctl-delete.log" 2>&1 || {
	cat "$KIT_OUT/kwokctl-delete.log" >&2
	exit 1
}
# kwokctl removed the cluster's context; a kubeconfig left with none is only confusing.
if [ -f "$KIT_KUBECONFIG" ] && [ -z "$("$KIT_BIN/kubectl" --kubeconfig "$KIT_KUBECONFIG" config get-contexts -o name 2>/dev/null)" ]; then
	rm -f "$KIT_KUBECONFIG"
fi
kit_log "local cluster deleted"
