#!/usr/bin/env bash
# test-lessons.sh runs, on the cluster $KUBECONFIG reaches, what keeps each lesson
# honest: one lane per lesson, the lanes in parallel. A lane is
# `check -lesson N -lane STEPS` (test/check/lane.go), which runs its
# steps one after another, so a lesson never has two controllers at once:
#
#   --e2e       the lesson's e2e suite with its reference Reconciler, each wait with the
#               suite's own deadline; lesson 0 has none (its checks are exercises on
#               lesson 1's tier)
#   --stub      make check against the stub: exactly the checks marked StubFails fail
#               (lesson 0: the tier as shipped fails both of its exercises)
#   --solution  each exercise's reference solution (docs/solutions) passes every check,
#               and the tier's reference fails the exercise's checks
#   --exercises the same with only the exercise's own checks run against its
#               solution: what make test runs, beside --e2e, which runs every
#               other check with the reference
#
#   hack/test-lessons.sh --e2e --stub --solution [N ...]   # make test-lessonN, make test-kind
#   hack/test-lessons.sh --stub --exercises                # make test, on one cluster
#   hack/test-lessons.sh --e2e                             # make test, on another
#
# Without lesson numbers it runs the lessons whose lesson.yaml says cluster:
# shared (`check -lessons -cluster shared`); a lesson with a cluster of its own
# runs here only on that cluster (hack/test-lesson.sh).
# Each lane writes its output to _output/lesson-N-STEPS.log (such as
# lesson-3-stub-solution.log) and prints a line per finished step; a lane that
# fails prints its log. Exit code 0 when every lane passed. make test runs the
# e2e steps on one cluster and the stub and solution steps on another at the same
# time (two controllers of one lesson must not share a cluster).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$KIT_ROOT"

steps=() lessons=()
for arg in "$@"; do
	case "$arg" in
	--e2e | --stub | --solution | --exercises) steps+=("${arg#--}") ;;
	[0-9]*) lessons+=("$arg") ;;
	*)
		echo "test-lessons.sh: unknown argument $arg; want --e2e, --stub, --solution, --exercises and lesson numbers" >&2
		exit 2
		;;
	esac
done
if [ ${#steps[@]} -eq 0 ]; then
	echo "test-lessons.sh: nothing to run; pass --e2e, --stub, --solution and/or --exercises" >&2
	exit 2
fi
lane=$(IFS=,; echo "${steps[*]}")
log_suffix=$(IFS=-; echo "${steps[*]}")

hack/build-bins.sh kubectl
mkdir -p "$KIT_OUT"
# make test builds the runner once for all its jobs and names it in KIT_CHECK_BIN.
check=${KIT_CHECK_BIN:-}
if [ -z "$check" ]; then
	check="$KIT_OUT/bin/check"
	go build -o "$check" ./test/check
fi
if [ ${#lessons[@]} -eq 0 ]; then
	shared=$("$check" -lessons -cluster shared) # on its own line, so that set -e sees it fail
	mapfile -t lessons <<<"$shared"
fi

kit_log "lessons ${lessons[*]}, one lane each, in parallel: ${lane//,/, then } (logs: $KIT_OUT/lesson-N-$log_suffix.log)"
pids=()
# On Ctrl-C or SIGTERM, stop every lane with the controllers its tests started.
trap 'kit_log "interrupted: stopping the lanes"; for p in "${pids[@]}"; do kit_kill_tree "$p"; done; wait; exit 130' INT TERM
for l in "${lessons[@]}"; do
	# The lane's progress lines go to standard error, everything else to its log.
	"$check" -lesson "$l" -lane "$lane" >"$KIT_OUT/lesson-$l-$log_suffix.log" &
	pids+=($!)
done
failed=()
for i in "${!lessons[@]}"; do
	wait "${pids[$i]}" || failed+=("${lessons[$i]}")
done
# The logs of failed lanes come last, one after another, once every lane is done.
for l in "${failed[@]+"${failed[@]}"}"; do
	kit_log "lesson $l: FAILED; its log ($KIT_OUT/lesson-$l-$log_suffix.log) follows"
	cat "$KIT_OUT/lesson-$l-$log_suffix.log"
done
[ ${#failed[@]} -eq 0 ]
