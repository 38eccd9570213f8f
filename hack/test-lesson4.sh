#!/usr/bin/env bash
# test-lesson4.sh is `make test-lesson4`: lesson 4's checks both ways, on a
# fresh local cluster of its own (controller-kit-lesson4), since they restart
# its kube-controller-manager and no other lane may share that:
#
#   stub      a fresh, unchanged copy of the source and the pinned
#             kube-controller-manager fail every check of the exercise;
#   solution  a fresh copy with docs/solutions/04-changing-kubernetes/kubernetes/
#             scale-to-zero.patch applied, its kube-controller-manager built and
#             restarted in the cluster, passes every check.
#
# make test runs only a smoke of it (hack/kube-src.sh smoke). The cluster is
# deleted afterwards, whether the checks pass or not.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$KIT_ROOT"

export KIT_CLUSTER=controller-kit-lesson4
source hack/lib.sh # the kubeconfig path of that cluster
trap 'hack/cluster/local-down.sh >/dev/null 2>&1 || true' EXIT
hack/build-bins.sh cluster
hack/cluster/local-down.sh >/dev/null
kit_log "starting a fresh local cluster '$KIT_CLUSTER'"
hack/cluster/local-up.sh >"$KIT_OUT/local-up-$KIT_CLUSTER.log" 2>&1 ||
	{ cat "$KIT_OUT/local-up-$KIT_CLUSTER.log"; exit 1; }
mkdir -p "$KIT_OUT/bin"
go build -o "$KIT_OUT/bin/check" ./hack/check
kit_log "lesson 4: the unchanged source fails the exercise, its solution passes it (log: $KIT_OUT/lesson-4-stub-solution.log)"
if ! KUBECONFIG="$KIT_KUBECONFIG" "$KIT_OUT/bin/check" -lesson 4 -lane stub,solution >"$KIT_OUT/lesson-4-stub-solution.log"; then
	kit_log "lesson 4: FAILED; its log follows"
	cat "$KIT_OUT/lesson-4-stub-solution.log"
	exit 1
fi
kit_log "lesson 4: passed"
