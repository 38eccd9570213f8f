#!/usr/bin/env bash
# test-lessons.sh runs, on the cluster $KUBECONFIG reaches, what keeps each lesson
# honest, one lane per lesson, the lanes in parallel. A lane runs its steps in
# order, so a lesson never has two controllers at once (lessons 1 and 3 watch
# every namespace, and a second reference controller would do a stub's work):
#
#   --e2e       the tier's e2e suite with its reference Reconciler (make -C <tier> test-e2e)
#   --stub      make check against the stub: exactly the checks marked StubFails fail
#   --solution  the exercise's reference solution (docs/solutions) passes every check,
#               and the tier's reference fails the exercise's check
#
#   hack/test-lessons.sh --e2e --stub --solution [1 2 3]   # what make test runs
#
# Each lane writes its output to _output/lesson-N.log and prints a line per finished
# step; a lane that fails prints its log. Exit code 0 when every lane passed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$KIT_ROOT"

e2e=false stub=false solution=false lessons=()
for arg in "$@"; do
	case "$arg" in
	--e2e) e2e=true ;;
	--stub) stub=true ;;
	--solution) solution=true ;;
	1 | 2 | 3) lessons+=("$arg") ;;
	*)
		echo "test-lessons.sh: unknown argument $arg; want --e2e, --stub, --solution and lesson numbers 1, 2, 3" >&2
		exit 2
		;;
	esac
done
[ ${#lessons[@]} -gt 0 ] || lessons=(1 2 3)
if ! $e2e && ! $stub && ! $solution; then
	echo "test-lessons.sh: nothing to run; pass --e2e, --stub and/or --solution" >&2
	exit 2
fi

# Per lesson: its tier, and its exercise beyond the reference (the name of its
# solution in docs/solutions; make check picks the Reconciler a solution
# registers, if it has one of its own).
tier_of() { case "$1" in 1) echo workqueue-example ;; 2) echo sample-controller ;; 3) echo kubebuilder-guestbook ;; esac; }
exercise_of() { case "$1" in 1) echo configmaps ;; 2) echo service ;; 3) echo ready ;; esac; }

hack/build-bins.sh kubectl
mkdir -p "$KIT_OUT"
check="$KIT_OUT/check"
go build -o "$check" ./hack/kittest/cmd/check

# lane runs lesson $1's steps, logging to $2; it stops at the first failed step.
lane() {
	local l=$1 log=$2 tier name start code
	tier=$(tier_of "$l")
	name=$(exercise_of "$l")
	if $e2e; then
		start=$SECONDS
		echo ">> e2e: $tier" >>"$log"
		make --no-print-directory -C "$tier" test-e2e >>"$log" 2>&1 || return 1
		kit_log "lesson $l: the e2e suite passes with the reference ($((SECONDS - start)) s)"
	fi
	if $stub; then
		# Each wait gets 20 s: the stub never converges, and the waits it must
		# pass (a log line, a Lease handover after a release) take a second or two.
		start=$SECONDS
		echo ">> check: the stub" >>"$log"
		"$check" -timeout 20s -lesson "$l" -reconciler stub -expect-stub >>"$log" 2>&1 || return 1
		kit_log "lesson $l: the stub fails exactly the checks it should ($((SECONDS - start)) s)"
	fi
	if $solution; then
		start=$SECONDS
		echo ">> check: solution $name" >>"$log"
		"$check" -lesson "$l" -solution "$name" >>"$log" 2>&1 || return 1
		# The reference lacks the exercise, so its check must fail; 10 s is plenty
		# for a wait that is meant to time out.
		echo ">> check: exercise $name against the reference (must fail)" >>"$log"
		local out="$log.exercise"
		code=0
		"$check" -timeout 10s -lesson "$l" -exercise "$name" -run TestExercise >"$out" 2>&1 || code=$?
		cat "$out" >>"$log"
		if [ $code -ne 1 ] || ! grep -q "^FAIL  exercise $name" "$out"; then
			echo "the reference was expected to fail the exercise's check (exit code 1), got exit code $code" >>"$log"
			return 1
		fi
		kit_log "lesson $l: solution $name passes every check, the reference fails its exercise ($((SECONDS - start)) s)"
	fi
}

steps=()
$e2e && steps+=("e2e suite")
$stub && steps+=("stub checks")
$solution && steps+=("exercise solutions")
what=$(IFS=,; echo "${steps[*]}" | sed 's/,/, then /g')
if [ ${#lessons[@]} -eq 1 ]; then
	kit_log "lesson ${lessons[0]}: $what (log: $KIT_OUT/lesson-${lessons[0]}.log)"
else
	kit_log "lessons ${lessons[*]} in parallel, one lane each: $what (logs: $KIT_OUT/lesson-N.log)"
fi
pids=()
# On Ctrl-C or SIGTERM, stop every lane with the controllers its tests started.
trap 'kit_log "interrupted: stopping the lanes"; for p in "${pids[@]}"; do kit_kill_tree "$p"; done; wait; exit 130' INT TERM
for l in "${lessons[@]}"; do
	: >"$KIT_OUT/lesson-$l.log"
	lane "$l" "$KIT_OUT/lesson-$l.log" &
	pids+=($!)
done
failed=()
for i in "${!lessons[@]}"; do
	wait "${pids[$i]}" || failed+=("${lessons[$i]}")
done
# The logs of failed lanes come last, one after another, once every lane is done.
for l in "${failed[@]+"${failed[@]}"}"; do
	kit_log "lesson $l: FAILED; its log ($KIT_OUT/lesson-$l.log) follows"
	cat "$KIT_OUT/lesson-$l.log"
done
[ ${#failed[@]} -eq 0 ]
