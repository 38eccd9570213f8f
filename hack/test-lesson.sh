#!/usr/bin/env bash
# test-lesson.sh N is `make test-lessonN` for a lesson whose lesson.yaml says
# cluster: own (`check -lessons -cluster own` lists them): its checks, all of
# them, on a fresh local cluster of the lesson's own (controller-kit-lessonN),
# since no other lane may share a cluster with them. That is one lane,
# hack/test-lessons.sh --e2e --stub --solution N: the suite with the reference
# (none for a lesson whose checks are all exercises, such as lesson 4), the
# checks against the stub, each exercise's solution. Lesson 4's restart the
# cluster's kube-controller-manager: the stub step holds a fresh, unchanged copy
# of the source and the pinned binary to failing every check, the solution step
# applies docs/solutions/04-changing-kubernetes/kubernetes/scale-to-zero.patch to
# a fresh copy, builds and restarts its kube-controller-manager. Lesson 5's
# service controller answers every Service of type LoadBalancer in the cluster,
# and its cloud-node controller asks about every Node.
#
# make test runs only the lesson's smoke (lesson.yaml's smoke, see
# hack/test-all.sh). The cluster is deleted afterwards, whether the checks pass
# or not. The checks under the debugger build the debug builds they need
# (KIT_DEBUG_CACHED=0; minutes the first time), which make test's smoke and
# make check leave to this target.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$KIT_ROOT"

lesson=${1:-}
mkdir -p "$KIT_OUT/bin"
go build -o "$KIT_OUT/bin/check" ./test/check
export KIT_CHECK_BIN="$KIT_OUT/bin/check" # hack/test-lessons.sh uses it too
if [ -z "$lesson" ] || ! "$KIT_OUT/bin/check" -lessons -cluster own -lesson "$lesson" >/dev/null; then
	echo "test-lesson.sh: want a lesson with a cluster of its own, one of: $("$KIT_OUT/bin/check" -lessons -cluster own | paste -sd' ' -) (their lesson.yaml says cluster: own; the others run in make test: hack/test-lessons.sh)" >&2
	exit 2
fi
export KIT_CLUSTER=controller-kit-lesson$lesson
source hack/lib.sh # the kubeconfig path of that cluster
trap 'hack/cluster/local-down.sh >/dev/null 2>&1 || true' EXIT
hack/build-bins.sh cluster
# What the lesson's checks run (its lane step build: lesson.yaml's bins, its
# controller, its suite) is built while its cluster starts.
kit_log "building what lesson $lesson's checks run, in the background (log: $KIT_OUT/lesson-$lesson-build.log)"
"$KIT_OUT/bin/check" -lesson "$lesson" -lane build >"$KIT_OUT/lesson-$lesson-build.log" 2>&1 &
build_pid=$!
trap 'kit_kill_tree "$build_pid" 2>/dev/null; hack/cluster/local-down.sh >/dev/null 2>&1 || true' EXIT
hack/cluster/local-down.sh >/dev/null
kit_log "starting a fresh local cluster '$KIT_CLUSTER'"
hack/cluster/local-up.sh >"$KIT_OUT/local-up-$KIT_CLUSTER.log" 2>&1 ||
	{ cat "$KIT_OUT/local-up-$KIT_CLUSTER.log"; exit 1; }
if ! wait "$build_pid"; then
	kit_log "lesson $lesson: FAILED building what its checks run; its log ($KIT_OUT/lesson-$lesson-build.log) follows"
	cat "$KIT_OUT/lesson-$lesson-build.log"
	exit 1
fi
kit_log "lesson $lesson: its programs, controller and suite are built"
KUBECONFIG="$KIT_KUBECONFIG" KIT_DEBUG_CACHED=0 hack/test-lessons.sh --e2e --stub --solution "$lesson"
kit_log "lesson $lesson: passed"
