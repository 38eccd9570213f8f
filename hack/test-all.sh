#!/usr/bin/env bash
# test-all.sh is `make test`, everything CI runs: build the pinned binaries, check
# generated code, vet, unit and envtest suites, then every e2e suite on a fresh local
# cluster named controller-kit-test (apart from the learner's controller-kit), which
# is deleted afterwards whether the suites pass or fail (on failure it prints the
# tail of every control-plane component's log). The lessons' suites run in three
# parallel lanes (hack/test-lessons.sh): each tier's e2e suite, then `make check`
# against the stub and against the exercise solutions. Last, a smoke run of
# `make bench`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$KIT_ROOT"

step() { kit_log "==== $*"; }

step "1/7 pinned binaries (cold: 10-15 min on 2 cores; warm: seconds)"
hack/build-bins.sh cluster codegen
step "2/7 generated code is current (make verify), docs name real upstream paths (make verify-docs)"
make --no-print-directory verify
make --no-print-directory verify-docs
step "3/7 go vet"
make --no-print-directory vet
step "4/7 unit and envtest suites"
make --no-print-directory test-unit

export KIT_CLUSTER=controller-kit-test
source hack/lib.sh # recompute the kubeconfig path for the test cluster
step "5/7 e2e: the cluster itself, on a fresh local cluster '$KIT_CLUSTER'"
hack/local-down.sh >/dev/null
teardown() {
	local rc=$?
	if [ $rc -ne 0 ]; then
		kit_log "tests failed; last lines of each control-plane component's log:"
		for f in "$KWOK_WORKDIR/clusters/$KIT_CLUSTER/logs/"*.log; do
			[ -f "$f" ] || continue
			case "$f" in *audit.log) continue ;; esac
			echo "----- $(basename "$f") -----"
			tail -n 40 "$f"
		done
	fi
	hack/local-down.sh || true
	exit $rc
}
trap teardown EXIT
hack/local-up.sh
KUBECONFIG="$KIT_KUBECONFIG" make --no-print-directory test-e2e-cluster
# Each lesson's e2e suite passes with its reference; make check stays honest: each
# stub fails exactly the checks it should, and each exercise check passes on its
# solution and fails on the reference.
step "6/7 lessons 1-3: e2e suites, checks against the stubs, exercise solutions"
KUBECONFIG="$KIT_KUBECONFIG" hack/test-lessons.sh --e2e --stub --solution
trap - EXIT
hack/local-down.sh

# The benchmark harness is not a test (timings are never pass/fail), but a tiny run
# proves it still builds and drives every scenario, so it cannot rot unnoticed.
step "7/7 bench harness smoke run (N=5, 5 s idle window; timings not checked)"
make --no-print-directory bench N=5 IDLE=5s >"$KIT_OUT/bench-smoke.md"
step "all tests passed"
