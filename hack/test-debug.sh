#!/usr/bin/env bash
# test-debug.sh is `make test-debug`: lesson 4's debugger test (test/lesson4/debugger,
# build tag e2e) on a fresh local cluster of its own, controller-kit-debug, since
# it swaps that cluster's kube-controller-manager for a debug build under delve:
# make debug, a breakpoint at the Deployment controller's syncDeployment and one
# at lesson 2's FooReconciler.Reconcile, each with a condition on the key, set
# and read over delve's JSON-RPC API; then make undebug, and nothing of delve
# left. make test runs only its smoke (hack/debug.sh smoke). The cluster is
# deleted afterwards, whether the test passes or not.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$KIT_ROOT"

export KIT_CLUSTER=controller-kit-debug
source hack/lib.sh # the kubeconfig path of that cluster
trap '"$KIT_ROOT/hack/cluster/local-down.sh" >/dev/null 2>&1 || true' EXIT
hack/build-bins.sh cluster dlv
hack/cluster/local-down.sh >/dev/null
kit_log "starting a fresh local cluster '$KIT_CLUSTER'"
hack/cluster/local-up.sh >"$KIT_OUT/local-up-$KIT_CLUSTER.log" 2>&1 ||
	{ cat "$KIT_OUT/local-up-$KIT_CLUSTER.log"; exit 1; }
kit_log "lesson 4's debugger test (the first debug builds take minutes; go test -v shows each step)"
(cd test/lesson4 && KUBECONFIG="$KIT_KUBECONFIG" go test -tags e2e -count=1 -timeout 30m -v ./debugger/)
kit_log "lesson 4's debugger test: passed"
