#!/usr/bin/env bash
# test-lesson.sh N is `make test-lesson4` and `make test-lesson5`: a lesson's
# checks, all of them and both ways, on a fresh local cluster of the lesson's
# own (controller-kit-lessonN), for the lessons whose checks no other lane may
# share a cluster with:
#
#   4  stub,solution      (they restart the cluster's kube-controller-manager)
#      stub      a fresh, unchanged copy of the source and the pinned
#                kube-controller-manager fail every check of the exercise;
#      solution  a fresh copy with docs/solutions/04-changing-kubernetes/kubernetes/
#                scale-to-zero.patch applied, its kube-controller-manager built and
#                restarted in the cluster, passes every check.
#   5  e2e,stub,solution  (the service controller answers every Service of type
#                LoadBalancer in the cluster, and the cloud-node controller asks
#                about every Node): the suite passes with the reference, the stub
#                fails exactly its checks, the nodes exercise's solution passes.
#
# make test runs only a smoke of each (lesson 4: hack/kube-src.sh smoke; lesson
# 5: its first check, see hack/test-all.sh). The cluster is deleted afterwards,
# whether the checks pass or not.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$KIT_ROOT"

lesson=${1:-}
case "$lesson" in
4) lane=stub,solution ;;
5) lane=e2e,stub,solution ;;
*)
	echo "test-lesson.sh: want a lesson number, 4 or 5 (lessons 0-3 run in make test: hack/test-lessons.sh)" >&2
	exit 2
	;;
esac
export KIT_CLUSTER=controller-kit-lesson$lesson
source hack/lib.sh # the kubeconfig path of that cluster
trap 'hack/cluster/local-down.sh >/dev/null 2>&1 || true' EXIT
hack/build-bins.sh cluster
hack/cluster/local-down.sh >/dev/null
kit_log "starting a fresh local cluster '$KIT_CLUSTER'"
hack/cluster/local-up.sh >"$KIT_OUT/local-up-$KIT_CLUSTER.log" 2>&1 ||
	{ cat "$KIT_OUT/local-up-$KIT_CLUSTER.log"; exit 1; }
mkdir -p "$KIT_OUT/bin"
go build -o "$KIT_OUT/bin/check" ./test/check
log="$KIT_OUT/lesson-$lesson-${lane//,/-}.log"
kit_log "lesson $lesson: steps ${lane//,/, then } (log: $log)"
if ! KUBECONFIG="$KIT_KUBECONFIG" "$KIT_OUT/bin/check" -lesson "$lesson" -lane "$lane" >"$log"; then
	kit_log "lesson $lesson: FAILED; its log follows"
	cat "$log"
	exit 1
fi
kit_log "lesson $lesson: passed"
