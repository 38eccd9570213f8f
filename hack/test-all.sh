#!/usr/bin/env bash
# test-all.sh is `make test`, everything CI runs. First, one after another: build
# the pinned binaries, check generated code and docs, vet. Then three jobs at once,
# because each mostly waits (on a deadline, a Lease, a cluster starting) and two
# cores are enough for all:
#
#   - the unit and envtest suites (make test-unit; they start API servers of their
#     own; the fuzz targets' seed inputs run among them), from the moment vet has
#     passed;
#   - the lessons, one lane each (hack/test-lessons.sh), on a fresh local cluster
#     named controller-kit-test (apart from the learner's controller-kit) once its
#     own e2e checks pass: each tier's e2e suite, then `make check` against the stub
#     and against the exercise solution;
#   - a smoke run of `make bench` (its own clusters; timings are never checked).
#   - the reliability scenarios (make test-reliability), smaller: the crash
#     scenarios with 60 Foos and 5 Guestbooks, the leader take-over and the
#     bad-input table, on a cluster of their own (controller-kit-reliability); the
#     API server outage and the shipped manifests run in make test-reliability only,
#     to keep make test within its time.
#
# The test cluster is deleted afterwards whether the suites pass or fail; on failure
# the tail of every control-plane component's log is printed, and so is the log of
# any job that failed. Ctrl-C or SIGTERM stops every job and its controllers, and
# deletes the clusters.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$KIT_ROOT"

step() { kit_log "==== $*"; }

step "1/5 pinned binaries (cold: about 10 min on 2 cores; warm: seconds)"
hack/build-bins.sh cluster codegen
# make verify regenerates code in place, so it runs before anything compiles.
step "2/5 generated code is current (make verify), docs name real upstream paths (make verify-docs)"
make --no-print-directory verify
make --no-print-directory verify-docs
step "3/5 go vet"
make --no-print-directory vet

export KIT_CLUSTER=controller-kit-test
source hack/lib.sh # recompute the kubeconfig path for the test cluster
step "4/5 a fresh local cluster '$KIT_CLUSTER' and its own e2e checks; the unit and envtest suites start meanwhile"
jobs_pids=()
teardown() {
	local rc=$?
	# Let the background jobs finish: each cleans up after itself, which a kill
	# would cut short (after an interrupt they are gone already).
	for pid in "${jobs_pids[@]+"${jobs_pids[@]}"}"; do wait "$pid" 2>/dev/null || true; done
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
	# The bench deletes its own cluster when it ends, but not when it is killed.
	KIT_CLUSTER=controller-kit-bench hack/local-down.sh >/dev/null 2>&1 || true
	KIT_CLUSTER=controller-kit-reliability hack/local-down.sh >/dev/null 2>&1 || true
	exit $rc
}
interrupted() {
	kit_log "interrupted: stopping the test jobs and their controllers"
	for pid in "${jobs_pids[@]+"${jobs_pids[@]}"}"; do kit_kill_tree "$pid"; done
	exit 130
}
trap teardown EXIT
trap interrupted INT TERM

# background runs "$@" with its output in log $1 and prints a line when it ends,
# with the log when it failed. Jobs other than the lessons run at a lower CPU
# priority (nice), so the e2e suites' waits keep their margins on 2 cores.
background() {
	local log=$1 what=$2 start=$SECONDS
	shift 2
	if "$@" >"$log" 2>&1; then
		kit_log "$what: passed ($((SECONDS - start)) s)"
	else
		kit_log "$what: FAILED ($((SECONDS - start)) s); its log ($log) follows"
		cat "$log"
		return 1
	fi
}
# envtest gives its API server 20 s to start by default: too little while the
# e2e suites run beside it.
mkdir -p "$KIT_OUT"
kit_log "unit and envtest suites in the background (log: $KIT_OUT/test-unit.log)"
# The fuzz targets' seeds run as plain tests there; make fuzz fuzzes.
background "$KIT_OUT/test-unit.log" "unit and envtest suites" \
	env KUBEBUILDER_CONTROLPLANE_START_TIMEOUT=2m nice -n 10 make --no-print-directory test-unit &
jobs_pids+=($!)

hack/local-down.sh >/dev/null
hack/local-up.sh
KUBECONFIG="$KIT_KUBECONFIG" make --no-print-directory test-e2e-cluster

step "5/5 lessons 0-3 (e2e suites, checks against the stubs, exercise solutions), with the bench smoke run beside them"
# The smoke run proves the bench harness still builds and drives every scenario,
# so it cannot rot unnoticed (N=5, a 5 s idle window; the table is not checked).
# It starts after local-up: clusters are created one at a time.
kit_log "bench smoke run in the background (N=5; log and table: $KIT_OUT/bench-smoke.log)"
background "$KIT_OUT/bench-smoke.log" "bench smoke run" nice -n 10 make --no-print-directory bench N=5 IDLE=5s &
jobs_pids+=($!)
# The reliability scenarios with a smaller burst; the full one is make test-reliability.
kit_log "reliability scenarios in the background (60 Foos; log and table: $KIT_OUT/reliability.log)"
background "$KIT_OUT/reliability.log" "reliability scenarios" \
	nice -n 10 make --no-print-directory test-reliability RELIABILITY_FOOS=60 RELIABILITY_GUESTBOOKS=5 \
	RELIABILITY_RUN='TestFooBurst|TestGuestbookBurst|TestBadInput|TestLeaderTakeOver' &
jobs_pids+=($!)
# The lessons run in the background too, so that an interrupt reaches the trap
# at once instead of after they end.
KUBECONFIG="$KIT_KUBECONFIG" hack/test-lessons.sh --e2e --stub --solution &
jobs_pids+=($!)

rc=0
for pid in "${jobs_pids[@]}"; do wait "$pid" || rc=1; done
jobs_pids=()
[ $rc -eq 0 ] || exit $rc
trap - EXIT
hack/local-down.sh
step "all tests passed"
