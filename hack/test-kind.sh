#!/usr/bin/env bash
# test-kind.sh is `make test-kind`: what make test checks on the local cluster,
# on a kind cluster instead, with real containers: a fresh kind cluster of its
# own, controller-kit-kind-test (its node image chosen as make kind-up chooses:
# KIND_NODE_IMAGE), deleted afterwards whether the checks pass or not.
#
#   1. every controller's image built (hack/test-deploy.sh build), and the
#      images lesson 7's kind checks deploy (its driver and sidecars), while kind
#      makes the cluster, then loaded (load): first, before any Pod of the
#      lessons runs: on a 2-CPU machine with cgroup v1, compiling beside the
#      lessons' Pods made runc fail to freeze a Pod's cgroup ("unable to
#      freeze", kubernetes/kubernetes#131087), and the kubelet's retries
#      outlasted the checks' waits;
#   2. every lesson that runs on kind (`check -lessons -kind`: all but those
#      whose lesson.yaml says localClusterOnly), one lane each, in parallel: the
#      tier's e2e suite, the checks against the stub, the exercise solutions
#      (hack/test-lessons.sh),
#      with KIT_E2E_PARALLEL=2, since each guestbook Pod asks for CPU, and
#      KIT_STUB_TIMEOUT=60s, since a kubelet starts and stops real Pods
#      (test/kittest/env.go);
#   3. the in-cluster path (hack/test-deploy.sh deploy): every controller
#      deployed, reconciling, leadership handed over, undeployed, the four at
#      once. After the
#      lessons, since the in-cluster workqueue-example labels Pods in every
#      namespace and the in-cluster cloud-provider-example answers every Service
#      of type LoadBalancer, as lessons 1 and 5's own controllers do.
# A lesson whose lesson.yaml says localClusterOnly is not run (lesson
# 4's checks swap a component of the kit's local cluster, which a kind cluster
# does not have). Lesson 7 runs with its kind checks (kindOnly: the driver
# deployed, a real kubelet mounting its volumes), but for its attach check (its
# localClusterOnly: it plays the kubelet by hand). The checks that read the local cluster's
# audit log skip themselves on kind and say why, as on any cluster but the
# local one. Needs a Docker engine (hack/cluster/require-docker.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$KIT_ROOT"

hack/cluster/require-docker.sh "make test-kind (kind runs its nodes as Docker containers)"
export KIT_CLUSTER=controller-kit-kind-test
source hack/lib.sh # the kubeconfig path of that cluster
export KUBECONFIG=$KIT_KUBECONFIG KIT_E2E_PARALLEL=2 KIT_STUB_TIMEOUT=60s
trap 'hack/cluster/kind-down.sh >/dev/null 2>&1 || true' EXIT
hack/cluster/kind-down.sh >/dev/null 2>&1 || true
# The tools both halves of step 1 use, built once before they run side by side.
hack/build-bins.sh kind kubectl kustomize >/dev/null
kit_log "step 1/3: a fresh kind cluster '$KIT_CLUSTER' (log: $KIT_OUT/kind-up-$KIT_CLUSTER.log) while every controller's image is built"
hack/cluster/kind-up.sh >"$KIT_OUT/kind-up-$KIT_CLUSTER.log" 2>&1 &
kind_up=$!
built=0
hack/test-deploy.sh build || built=$?
if ! wait "$kind_up"; then
	cat "$KIT_OUT/kind-up-$KIT_CLUSTER.log"
	kit_log "make test-kind: FAILED: no kind cluster (above)"
	exit 1
fi
# Which node image kind-up took, as it said in its log (for the reader only).
node_image=$(sed -n 's/^\[ *[0-9]*s\] node image: //p' "$KIT_OUT/kind-up-$KIT_CLUSTER.log" | head -n 1)
kit_log "kind cluster '$KIT_CLUSTER' ready; node image: ${node_image:-as its log says}"
if [ $built -ne 0 ] || ! hack/test-deploy.sh load; then
	kit_log "make test-kind: FAILED: the images could not be built or loaded (above)"
	exit 1
fi

failed=0
go build -o "$KIT_OUT/bin/check" ./test/check
on_kind=$("$KIT_OUT/bin/check" -lessons -kind) # on its own line, so that set -e sees it fail
mapfile -t lessons <<<"$on_kind"
kit_log "step 2/3: lessons ${lessons[*]} on kind (the others are the local cluster's only: their lesson.yaml says localClusterOnly, and why)"
hack/test-lessons.sh --e2e --stub --solution "${lessons[@]}" || failed=1
kit_log "step 3/3: every controller deployed in the cluster"
hack/test-deploy.sh deploy || failed=1

[ $failed -eq 0 ] && kit_log "make test-kind: passed" || { kit_log "make test-kind: FAILED (above)"; exit 1; }
