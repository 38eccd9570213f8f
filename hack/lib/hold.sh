# lib/hold.sh: one copy of each foreground command of the kit per thing it holds.
# Part of hack/lib.sh, which sources it; do not source it alone.
#
# A foreground command that cannot share what it holds (a scheduler's profile on
# a cluster, a driver's socket, delve's port, a controller that takes no Lease)
# takes a hold on it first: a lock (flock) on $KIT_HOLDS/KEY.lock, kept open on
# a file descriptor that the command's processes inherit, so the hold lasts as
# long as any of them runs and ends by itself however they end (kill -9
# included); and a note beside it, $KIT_HOLDS/KEY.PID.note, that says who holds
# it (WHAT, PID, CLUSTER, CONTEXT, SERVER, SINCE, STOP, one KEY=value a line).
# A second copy finds the lock taken, names each holder from its note (its pid,
# its command line, its cluster, since when, how to stop it) and exits 3
# (KIT_HOLD_REFUSED) before it has changed anything.
#
# Copies that may run side by side, because they elect a leader (the second waits
# for the first one's Lease as a follower), take the hold shared (-s): any number
# of them at once, but none beside a copy that holds it alone, such as make
# debug's copy of the same controller, which runs with --leader-elect=false.
#
# A key is a name, scoped to one cluster by kit_on_cluster (the tier's folder
# name: scheduler-plugin-example@127.0.0.1-34567) or to the machine (delve's port:
# port-2351). A process the holder leaves running on its own (make debug's replica)
# keeps the hold, and kit_hold_handover gives its note that process's pid; one
# that must not (a cluster's components, which local-up.sh starts) is started after
# kit_hold_close. make local-down and make kind-down end every holder whose note
# names the cluster's context (kit_hold_end). Where there is no flock (util-linux),
# nothing is held.

# KIT_HOLDS is the folder of the holds' locks and notes.
KIT_HOLDS="$KIT_OUT/holds"
# KIT_HOLD_REFUSED is the exit status of a command refused because another holds
# what it needs.
KIT_HOLD_REFUSED=3
# KIT_HELD lists the keys this process or one of its parents holds (a child
# command such as make debug's make run goes on under its parent's hold), and
# KIT_HOLD_FDS the file descriptors the holds are open on.
KIT_HELD=${KIT_HELD:-}
KIT_HOLD_FDS=${KIT_HOLD_FDS:-}

# kit_hold_where prints the current context of the kubeconfig the kit's targets
# use ($KUBECONFIG, else the kit's) and its server, on one line, or nothing when
# it has none; kubectl is asked once per process and kubeconfig.
kit_hold_where() {
	local kc=${KUBECONFIG:-$KIT_KUBECONFIG}
	if [ "${KIT_HOLD_WHERE_OF:-}" != "$$ $kc" ]; then
		KIT_HOLD_WHERE=""
		[ ! -x "$KIT_BIN/kubectl" ] || KIT_HOLD_WHERE=$(KUBECONFIG=$kc "$KIT_BIN/kubectl" config view --minify \
			-o 'jsonpath={.current-context} {.clusters[0].cluster.server}' 2>/dev/null) || true
		KIT_HOLD_WHERE_OF="$$ $kc"
	fi
	echo "$KIT_HOLD_WHERE"
}

# kit_on_cluster NAME prints NAME's key on the cluster the kit's targets use
# (what kit_hold takes as NAME@): NAME@ and the cluster's server (host and port;
# the cluster's name when there is no kubeconfig), so that two runs against one
# cluster meet, whatever KIT_CLUSTER they name it by.
kit_on_cluster() {
	local where server
	kit_hold_where >/dev/null
	where=$KIT_HOLD_WHERE
	server=${where#* }
	[ -n "$where" ] && [ "$server" != "$where" ] || server=$KIT_CLUSTER
	server=${server#*://}
	echo "$1@${server//[^A-Za-z0-9.]/-}"
}

# kit_hold_holds PID LOCK succeeds when the process PID has the file LOCK open.
kit_hold_holds() {
	[ -n "$(find "/proc/$1/fd" -maxdepth 1 -lname "$2" -print -quit 2>/dev/null)" ]
}

# kit_hold_pids LOCK prints the pid of each process that has the file LOCK open.
kit_hold_pids() {
	find /proc/[0-9]*/fd -maxdepth 1 -lname "$1" 2>/dev/null | cut -d/ -f3 | sort -u
}

# kit_hold_notes KEY prints the notes of KEY's holders that still run, one path
# a line, and removes the notes of those that have ended.
kit_hold_notes() {
	local lock="$KIT_HOLDS/$1.lock" note pid
	for note in "$KIT_HOLDS/$1".*.note; do
		[ -f "$note" ] || continue
		pid=${note%.note}
		pid=${pid##*.}
		if kit_hold_holds "$pid" "$lock"; then echo "$note"; else rm -f "$note"; fi
	done
}

# kit_hold_note NOTE FIELD prints FIELD of a holder's note.
kit_hold_note() { sed -n "s/^$2=//p" "$1" | head -n1; }

# kit_hold_describe KEY prints, one holder a paragraph, who holds KEY: the
# command it was started as, its pid and command line, its cluster, since when,
# and how to stop it. A holder without a note (one that is writing it) is
# named by the processes that have the lock open.
kit_hold_describe() {
	local lock="$KIT_HOLDS/$1.lock" note pid cmd found="" p
	for note in $(kit_hold_notes "$1"); do
		found=1
		pid=$(kit_hold_note "$note" PID)
		cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-160) || true
		printf '    %s: pid %s (%s), on the cluster %s (context %s, %s), since %s\n' \
			"$(kit_hold_note "$note" WHAT)" "$pid" "${cmd% }" "$(kit_hold_note "$note" CLUSTER)" \
			"$(kit_hold_note "$note" CONTEXT)" "$(kit_hold_note "$note" SERVER)" "$(kit_hold_note "$note" SINCE)"
		printf '      stop it: %s\n' "$(kit_hold_note "$note" STOP)"
	done
	[ -z "$found" ] || return 0
	for p in $(kit_hold_pids "$lock"); do
		printf '    pid %s (%s); stop it: kill %s\n' "$p" "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-160)" "$p"
	done
}

# kit_hold [-s] KEY WHAT WHY [STOP] takes the hold KEY for this process and the
# ones it starts, until they have all ended; a KEY that ends in @ is one on the
# cluster (kit_on_cluster). WHAT is the command a user knows it
# by (such as "make run-scheduler"), WHY what a second copy would do, STOP how
# to stop this one (default: Ctrl-C in its terminal, or kill PID). When another
# command holds KEY (alone, or shared while this one asks for it alone, or alone
# while this one asks for it shared with -s), it prints who holds it and how to
# stop that, says nothing was changed, and returns KIT_HOLD_REFUSED. A key that a
# parent holds (KIT_HELD) is this command's already.
kit_hold() {
	local mode=-x
	if [ "${1:-}" = -s ]; then
		mode=-s
		shift
	fi
	local key=$1 what=$2 why=$3 stop=${4:-"Ctrl-C in its terminal, or: kill $$"} fd where
	kit_hold_where >/dev/null
	case "$key" in *@) key=$(kit_on_cluster "${key%@}") ;; esac
	case " $KIT_HELD " in *" $key "*) return 0 ;; esac
	command -v flock >/dev/null || return 0
	mkdir -p "$KIT_HOLDS"
	exec {fd}>>"$KIT_HOLDS/$key.lock"
	if ! flock -n "$mode" "$fd"; then
		exec {fd}>&-
		kit_error "refused, and nothing was changed: another command holds what it needs ($key):"
		kit_hold_describe "$key" >&2
		echo "  Two at once would $why. Stop the other first, then run $what again." >&2
		return "$KIT_HOLD_REFUSED"
	fi
	kit_hold_where >/dev/null
	where=$KIT_HOLD_WHERE
	printf 'WHAT=%s\nPID=%s\nCLUSTER=%s\nCONTEXT=%s\nSERVER=%s\nSINCE=%s\nSTOP=%s\n' \
		"$what" "$$" "$KIT_CLUSTER" "${where%% *}" "${where#* }" "$(date '+%Y-%m-%d %H:%M:%S')" "$stop" \
		>"$KIT_HOLDS/$key.$$.note"
	export KIT_HELD="${KIT_HELD:+$KIT_HELD }$key" KIT_HOLD_FDS="${KIT_HOLD_FDS:+$KIT_HOLD_FDS }$fd"
}

# kit_hold_exec [-s] NAME WHAT WHY [-- COMMAND...] is kit_hold of NAME on the
# cluster (kit_on_cluster), for a Makefile's recipe (WHAT a make command, which
# it writes with KIT_MAKE_PREFIX): then it becomes COMMAND,
# which keeps the hold; without COMMAND it only checks that the hold could be
# taken (so that a recipe refuses before the lines that change the cluster), and
# exits KIT_HOLD_REFUSED when not.
kit_hold_exec() {
	local shared=""
	if [ "${1:-}" = -s ]; then
		shared=-s
		shift
	fi
	local name=$1 what=$KIT_MAKE_PREFIX$2 why=$3
	KIT_ME=${KIT_ME:-$2}
	shift 3
	[ "${1:-}" != -- ] || shift
	kit_hold $shared "$name@" "$what" "$why" || exit "$KIT_HOLD_REFUSED"
	[ $# -gt 0 ] || { rm -f "$KIT_HOLDS/$(kit_on_cluster "$name").$$.note"; return 0; }
	exec "$@"
}

# kit_hold_handover KEY PID gives the note of this process's hold KEY to PID, a
# process it has started that keeps the hold once this one has exited.
kit_hold_handover() {
	local note="$KIT_HOLDS/$1.$$.note"
	[ -f "$note" ] || return 0
	sed "s/^PID=.*/PID=$2/; s/kill $$\$/kill $2/" "$note" >"$KIT_HOLDS/$1.$2.note"
	rm -f "$note"
}

# kit_hold_close closes every hold this shell has open and inherited, so that
# what it starts next (a process that outlives it) does not keep them.
kit_hold_close() {
	local fd
	for fd in $KIT_HOLD_FDS; do exec {fd}>&-; done
	KIT_HOLD_FDS="" KIT_HELD=""
}

# kit_hold_end CONTEXT ends every command whose hold names the kubectl context
# CONTEXT (what the kit still runs against a cluster that is going away): SIGTERM
# to each holder, as Ctrl-C would end it, then, after 20 s, SIGKILL to whatever
# still has one of their holds open. It names each one it ends. It leaves alone
# the commands it runs under (make debug's make run may start the cluster).
kit_hold_end() {
	local note key pid locks=() lock p left mine=" " self=$BASHPID
	while [ "${self:-0}" -gt 1 ]; do
		mine+="$self "
		self=$(awk '{print $4}' "/proc/$self/stat" 2>/dev/null) || break
	done
	for note in "$KIT_HOLDS"/*.note; do
		[ -f "$note" ] || continue
		[ "$(kit_hold_note "$note" CONTEXT)" = "$1" ] || continue
		case "$mine" in *" $(kit_hold_note "$note" PID) "*) continue ;; esac
		key=${note%.*.note}
		lock="$KIT_HOLDS/${key##*/}.lock"
		pid=$(kit_hold_note "$note" PID)
		if kit_hold_holds "$pid" "$lock"; then
			kit_log "ending $(kit_hold_note "$note" WHAT) (pid $pid, since $(kit_hold_note "$note" SINCE)), which runs against $1"
			kill -TERM "$pid" 2>/dev/null || true
			locks+=("$lock")
		fi
		rm -f "$note"
	done
	[ ${#locks[@]} -gt 0 ] || return 0
	for _ in $(seq 100); do
		left=""
		for lock in "${locks[@]}"; do
			for p in $(kit_hold_pids "$lock"); do
				case "$mine" in *" $p "*) ;; *) left+=" $p" ;; esac
			done
		done
		[ -n "${left// /}" ] || return 0
		sleep 0.2
	done
	kit_log "still running after 20 s, so killed:$left"
	for p in $left; do kill -KILL "$p" 2>/dev/null || true; done
}
