# lib/log.sh: what the kit's scripts print while they work, and how they fail.
# Part of hack/lib.sh, which sources it; do not source it alone.

# KIT_T0 is when the outermost kit script started (seconds since the epoch, read
# by printf's %(%s)T, as date +%s prints it); the scripts it runs inherit it, so
# progress lines count from one start.
[ -n "${KIT_T0:-}" ] || printf -v KIT_T0 '%(%s)T' -1
export KIT_T0

# kit_cleanup_outlives_output is the first step of a foreground command's
# clean-up (after Ctrl-C or SIGTERM): from here on a closed terminal or pipe,
# such as the tee of `make run-aggregated 2>&1 | tee log` that the same Ctrl-C
# ended, neither kills the script (SIGPIPE ignored) nor stops it at the first
# failed write (set +e), so what it started is stopped and what it registered
# removed all the same; only its last lines are lost.
kit_cleanup_outlives_output() {
	trap '' PIPE
	set +e
}

# kit_log prints a progress line with the seconds since KIT_T0.
kit_log() {
	local now
	printf -v now '%(%s)T' -1
	printf '[%3ds] %s\n' "$((now - KIT_T0))" "$*"
}

# kit_elapsed SECONDS prints a duration such as 4m52s.
kit_elapsed() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# KIT_ME is the name a script's errors start with: the name a user knows it by. A
# script sets it when that is not its file's name without .sh (kind-up.sh: "make
# kind-up"). KIT_DIE_STATUS is the exit status of kit_die: 1 unless the script sets
# another (debug.sh and kube-src.sh exit 2 on bad input, as make does on a bad target).
KIT_ME=${KIT_ME:-}
KIT_DIE_STATUS=${KIT_DIE_STATUS:-1}

# kit_error MESSAGE... prints "KIT_ME: MESSAGE" on standard error.
kit_error() {
	local me=${KIT_ME:-$(basename "$0" .sh)}
	echo "$me: $*" >&2
}

# kit_die MESSAGE... prints the error (kit_error) and exits with KIT_DIE_STATUS.
# MESSAGE says what is wrong and the command that fixes it.
kit_die() {
	kit_error "$@"
	exit "$KIT_DIE_STATUS"
}

# kit_with_heartbeat WHAT NOTE COMMAND... runs COMMAND, a build of WHAT, and
# returns its exit status. While it runs it prints, every 30 seconds,
#    ... still building WHAT (1m30s so far; NOTE)
# so that a build of minutes is never silent; NOTE (may be empty) says why it can
# take long. The line is indented under the line that announced the build.
kit_with_heartbeat() {
	local what=$1 note=$2 start=$SECONDS ticker rc=0
	shift 2
	(
		# sleep's output goes nowhere: when the ticker is killed, a sleep it left
		# behind must not hold a pipe the script's output goes into open.
		while sleep 30 >/dev/null 2>&1; do
			echo "   ... still building $what ($(kit_elapsed $((SECONDS - start))) so far${note:+; $note})"
		done
	) &
	ticker=$!
	"$@" || rc=$?
	kill "$ticker" 2>/dev/null || true
	wait "$ticker" 2>/dev/null || true
	return "$rc"
}
