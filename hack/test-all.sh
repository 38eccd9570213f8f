#!/usr/bin/env bash
# test-all.sh is `make test`, everything CI runs. First the pinned binaries, then
# make verify (it regenerates code in place, so nothing of the tiers it generates
# compiles while it runs; with no file changed since it last passed, it remembers
# that and takes a second), with the two test clusters starting meanwhile (and
# the e2e one's own checks), and the programs of the lessons with a cluster of
# their own being built (their lane step build; none of them is generated code). Then every job at once, each as soon as its cluster is up, because each mostly waits (on a deadline, a
# Lease, a cluster starting) and two cores are enough for all:
#
#   - the lessons (hack/test-lessons.sh) on two fresh local clusters, apart from
#     the learner's controller-kit: on controller-kit-test, once its own e2e checks
#     pass, each tier's e2e suite (every check with the reference); at the same
#     time on controller-kit-test-checks, `make check` against the stub, then each
#     exercise's checks against its solution (the longest job: its cluster is
#     made first and it starts first; make test-lessonN runs every check against
#     each solution, which would take a third run of each suite here). A lesson's
#     controllers watch every namespace, so two of one lesson never share a
#     cluster; on one cluster, lesson 3 alone took three minutes. They are the
#     longest job, so the others run at a lower CPU priority (nice) and the e2e
#     suites' waits keep their margins;
#   - make verify-docs and make vet;
#   - the unit and envtest suites (make test-unit; they start API servers of their
#     own; the fuzz targets' seed inputs run among them). These two jobs and make
#     verify check the kit's files and nothing else, so each remembers its last
#     pass (hack/once.sh, hack/lib/passes.sh) and is not run again while no file
#     has changed, as go test's cache would skip each of their packages;
#   - a smoke run of `make bench`, every scenario on one cluster of its own
#     (controller-kit-bench; timings are never checked);
#   - the smokes made of checks of the lessons with a cluster of their own
#     (`check -lessons -smoke checks`, `check -lesson N -lane smoke`), on
#     controller-kit-test beside the lessons' e2e suites: each lesson's
#     lesson.yaml names its smoke checks and says why they disturb no other
#     lesson; its whole suite, stub and solutions are its make test-lessonN.
#     They run with KIT_DEBUG_CACHED=1: a check under the debugger uses a
#     debug build that is there already and otherwise skips, in one line
#     naming its make test-lessonN, which builds it;
#   - the reliability scenarios (make test-reliability), smaller: the crash
#     scenarios with 60 Foos and 5 Guestbooks, the leader take-over and the
#     bad-input table, on a cluster of their own (controller-kit-reliability); the
#     API server outage and the shipped manifests run in make test-reliability only,
#     to keep make test within its time.
#
#   - the smokes made of commands (`check -lessons -smoke commands`), with no
#     cluster: each lesson's lesson.yaml names its programs (seconds each; its
#     make test-lessonN runs its checks).
#
# The controllers and test suites are built once into _output/e2e-bin and reused
# while no file of the kit changes (kittest.CachedBinary: a key over the kit's
# files beside each binary), so a second make test starts no build at all. The test clusters are deleted afterwards whether the suites pass
# or fail; on failure the tail of their control-plane components' logs is printed,
# and so is the log of any job that failed. Ctrl-C or SIGTERM stops every job and
# its controllers, and deletes the clusters.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$KIT_ROOT"

step() { kit_log "==== $*"; }

step "1/3 pinned binaries (cold: about 20 min on 2 cores; warm: seconds, about a minute in a fresh clone)"
hack/build-bins.sh cluster codegen

# The cluster of the e2e suites, and the one of make check's stub and solution steps.
export KIT_CLUSTER=controller-kit-test
CHECKS_CLUSTER=controller-kit-test-checks
CHECKS_KUBECONFIG=$(KIT_CLUSTER=$CHECKS_CLUSTER bash -c 'source hack/lib.sh && echo "$KIT_KUBECONFIG"')
source hack/lib.sh # recompute the kubeconfig path for the test cluster
jobs_pids=() cluster_pids=()
teardown() {
	local rc=$?
	# Let the background jobs finish: each cleans up after itself, which a kill
	# would cut short (after an interrupt they are gone already).
	for pid in "${cluster_pids[@]+"${cluster_pids[@]}"}" "${jobs_pids[@]+"${jobs_pids[@]}"}"; do wait "$pid" 2>/dev/null || true; done
	if [ $rc -ne 0 ]; then
		kit_log "tests failed; last lines of each control-plane component's log:"
		for f in "$KWOK_WORKDIR/clusters/$KIT_CLUSTER/logs/"*.log "$KWOK_WORKDIR/clusters/$CHECKS_CLUSTER/logs/"*.log; do
			[ -f "$f" ] || continue
			case "$f" in *audit.log) continue ;; esac
			echo "----- $(basename "$(dirname "$(dirname "$f")")")/$(basename "$f") -----"
			tail -n 40 "$f"
		done
	fi
	hack/cluster/local-down.sh || true
	KIT_CLUSTER=$CHECKS_CLUSTER hack/cluster/local-down.sh || true
	# The bench deletes its own cluster when it ends, but not when it is killed.
	KIT_CLUSTER=controller-kit-bench hack/cluster/local-down.sh >/dev/null 2>&1 || true
	KIT_CLUSTER=controller-kit-reliability hack/cluster/local-down.sh >/dev/null 2>&1 || true
	exit $rc
}
interrupted() {
	kit_log "interrupted: stopping the test jobs and their controllers"
	for pid in "${cluster_pids[@]+"${cluster_pids[@]}"}" "${jobs_pids[@]+"${jobs_pids[@]}"}"; do kit_kill_tree "$pid"; done
	exit 130
}
trap teardown EXIT
trap interrupted INT TERM

# background runs "$@" with its output in log $1 and prints a line when it ends,
# with the log when it failed.
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
mkdir -p "$KIT_OUT"

# The clusters need nothing but bin/, and the cluster's own e2e checks
# (test/kittest) nothing of the tiers, so they run while make verify does. The
# stub and solution lane is the longest job, so its cluster is asked for first
# (local-up.sh creates one cluster at a time, and the other local-up starts a
# second later, by which time the first holds the lock) and the lane starts as
# soon as that cluster is up.
for name in "$KIT_CLUSTER" "$CHECKS_CLUSTER"; do
	KIT_CLUSTER=$name hack/cluster/local-down.sh >/dev/null
done
kit_log "starting a fresh local cluster '$CHECKS_CLUSTER' in the background (log: $KIT_OUT/local-up-$CHECKS_CLUSTER.log)"
background "$KIT_OUT/local-up-$CHECKS_CLUSTER.log" "local cluster '$CHECKS_CLUSTER'" env KIT_CLUSTER="$CHECKS_CLUSTER" hack/cluster/local-up.sh &
checks_cluster_pid=$!
cluster_pids+=($!)
kit_log "starting a fresh local cluster '$KIT_CLUSTER' and running its own e2e checks in the background (log: $KIT_OUT/local-up-$KIT_CLUSTER.log)"
background "$KIT_OUT/local-up-$KIT_CLUSTER.log" "local cluster '$KIT_CLUSTER' and its own e2e checks" \
	bash -c 'sleep 1 && hack/cluster/local-up.sh && KUBECONFIG="$0" make --no-print-directory test-e2e-cluster' "$KIT_KUBECONFIG" &
test_cluster_pid=$!
cluster_pids+=($!)
# make check's runner, built once: it names the smokes, runs them and both
# lesson jobs (test-lessons.sh uses it: KIT_CHECK_BIN).
go build -o "$KIT_OUT/bin/check" ./test/check
export KIT_CHECK_BIN="$KIT_OUT/bin/check"
# The lessons with a cluster of their own run their smokes last, once the e2e
# cluster's own checks pass, and some have long first builds (lesson 8's
# scheduler, lesson 7's CSI sidecars): their lane step build starts now, so that
# those builds are done, or nearly, when the smokes need them. It builds only the
# programs the lessons' checks run; a smoke that needs one being built waits for
# it (kittest.CachedBinary, hack/build-bins.sh). One lesson after another, the
# last lesson first (lesson 8's scheduler, then lesson 7's sidecars, are the
# longest): two go commands at once would compile their shared packages twice.
own=$("$KIT_CHECK_BIN" -lessons -cluster own | sort -rn)
kit_log "building what lessons $(echo $own) run, in the background (log: $KIT_OUT/lessons-build.log)"
background "$KIT_OUT/lessons-build.log" "lessons $(echo $own): their programs built" \
	nice -n 5 bash -c 'for l in $1; do "$0" -lesson "$l" -lane build || exit 1; done' "$KIT_CHECK_BIN" "$own" &
jobs_pids+=($!)
step "2/3 generated code is current (make verify)"
make --no-print-directory verify

step "3/3 every suite at once: the lessons that share a cluster (checks against the stubs and exercise solutions; e2e suites, on a second cluster); docs and vet, unit and envtest suites, the smokes of the lessons with a cluster of their own, bench smoke run, reliability scenarios beside them; and the smokes that need no cluster"
kit_log "make verify-docs and make vet in the background (log: $KIT_OUT/verify-docs-vet.log)"
background "$KIT_OUT/verify-docs-vet.log" "make verify-docs and make vet" \
	nice -n 10 hack/once.sh verify-docs-vet bash -c 'make --no-print-directory verify-docs && make --no-print-directory vet' &
jobs_pids+=($!)
# envtest gives its API server 20 s to start by default: too little while the
# e2e suites run beside it. The fuzz targets' seeds run as plain tests there;
# make fuzz fuzzes. KIT_T0 (when this run started) is left out: go test's cache
# keys a package's result on the environment variables its tests read, and the
# grader's tests read that one, so it would run them again every time.
kit_log "unit and envtest suites in the background (log: $KIT_OUT/test-unit.log)"
background "$KIT_OUT/test-unit.log" "unit and envtest suites" \
	env -u KIT_T0 KUBEBUILDER_CONTROLPLANE_START_TIMEOUT=2m nice -n 10 hack/once.sh test-unit make --no-print-directory test-unit &
jobs_pids+=($!)
# The smokes made of commands need no cluster (see the top of this file).
smokes=$("$KIT_CHECK_BIN" -lessons -smoke commands)
for l in $smokes; do
	kit_log "lesson $l smoke in the background (its lesson.yaml's smoke commands; log: $KIT_OUT/lesson-$l-smoke.log)"
	background "$KIT_OUT/lesson-$l-smoke.log" "lesson $l smoke" nice -n 10 "$KIT_CHECK_BIN" -lesson "$l" -lane smoke &
	jobs_pids+=($!)
done
# The lessons run in the background too, so that an interrupt reaches the trap
# at once instead of after they end.
wait "$checks_cluster_pid"
KUBECONFIG="$CHECKS_KUBECONFIG" hack/test-lessons.sh --stub --exercises &
jobs_pids+=($!)
wait "$test_cluster_pid"
cluster_pids=()
KUBECONFIG="$KIT_KUBECONFIG" hack/test-lessons.sh --e2e &
jobs_pids+=($!)
# The smokes made of checks, on the e2e suites' cluster (see the top of this file).
smokes=$("$KIT_CHECK_BIN" -lessons -smoke checks)
for l in $smokes; do
	kit_log "lesson $l smoke in the background (its lesson.yaml's smoke checks; log: $KIT_OUT/lesson-$l-smoke.log)"
	background "$KIT_OUT/lesson-$l-smoke.log" "lesson $l smoke" \
		env KUBECONFIG="$KIT_KUBECONFIG" KIT_DEBUG_CACHED=1 nice -n 10 "$KIT_CHECK_BIN" -lesson "$l" -lane smoke &
	jobs_pids+=($!)
done
# The other clusters are created once the test clusters are up (creating them
# all at once would make each start slower).
# The smoke run proves the bench harness still builds and drives every scenario,
# so it cannot rot unnoticed (N=5, a 1 s idle window, every scenario on one
# cluster: -one-cluster; the table is not checked).
kit_log "bench smoke run in the background (N=5, one cluster; log and table: $KIT_OUT/bench-smoke.log)"
background "$KIT_OUT/bench-smoke.log" "bench smoke run" \
	nice -n 10 make --no-print-directory bench N=5 IDLE=1s BENCH_FLAGS=-one-cluster &
jobs_pids+=($!)
# The reliability scenarios with a smaller burst; the full one is make test-reliability.
kit_log "reliability scenarios in the background (60 Foos; log and table: $KIT_OUT/reliability.log)"
background "$KIT_OUT/reliability.log" "reliability scenarios" \
	nice -n 10 make --no-print-directory test-reliability RELIABILITY_FOOS=60 RELIABILITY_GUESTBOOKS=5 \
	RELIABILITY_RUN='TestFooBurst|TestGuestbookBurst|TestBadInput|TestLeaderTakeOver' &
jobs_pids+=($!)

rc=0
for pid in "${jobs_pids[@]}"; do wait "$pid" || rc=1; done
jobs_pids=()
[ $rc -eq 0 ] || exit $rc
trap - EXIT
hack/cluster/local-down.sh
KIT_CLUSTER=$CHECKS_CLUSTER hack/cluster/local-down.sh
step "all tests passed"
