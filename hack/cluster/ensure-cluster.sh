#!/usr/bin/env bash
# ensure-cluster.sh makes sure the run targets have a cluster. With KUBECONFIG set to
# a kubeconfig of the learner's own, that cluster must answer (it is never replaced).
# Otherwise the kit kubeconfig is used: the cluster it points at now (local or kind)
# if that answers, else a freshly started local cluster.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

"$KIT_ROOT/hack/build-bins.sh" kubectl
target=${KUBECONFIG:-$KIT_KUBECONFIG}
if kit_cluster_reachable "$target"; then
	context=$("$KIT_BIN/kubectl" --kubeconfig "$target" config current-context)
	kit_log "using cluster '$context' from $target"
	# A local cluster started before local-up.sh wrote its cluster file (the checks
	# read the audit log's path there): local-up.sh on a running cluster only writes it.
	if [ "$target" = "$KIT_KUBECONFIG" ] && [ "$context" = "kwok-$KIT_CLUSTER" ] && [ ! -f "$KIT_CLUSTER_INFO" ]; then
		"$KIT_ROOT/hack/cluster/local-up.sh" >/dev/null
	fi
	exit 0
fi
if [ "$target" != "$KIT_KUBECONFIG" ]; then
	cat >&2 <<MSG
ensure-cluster: KUBECONFIG=$target does not reach a cluster (its /readyz did not answer).
Fix that cluster, or unset KUBECONFIG to let the kit start its own local cluster.
MSG
	exit 1
fi
kit_log "no kit cluster answers at $KIT_KUBECONFIG; starting the local cluster"
exec "$KIT_ROOT/hack/cluster/local-up.sh"
