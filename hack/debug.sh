#!/usr/bin/env bash
# debug.sh is the body of make debug and make undebug: a process of a lesson run
# under delve (bin/dlv, pinned in hack/delve) on a loopback port, and back. It
# knows no lesson: the names it takes, their ports and how each starts are the
# lesson files' debug entries (kittest.LessonDebug, read by lib.sh's
# kit_debug_entries).
#
#   hack/debug.sh debug NAME       make debug WHAT=NAME [PORT=...] [PKGS=...]
#   hack/debug.sh undebug NAME     make undebug WHAT=NAME
#   hack/debug.sh delve PORT BIN [ARG...]
#                                  run BIN under delve (what the debug builds
#                                  run as); the component's wrapper, the
#                                  tiers' run targets and the lessons' own
#                                  debug scripts call it
#   hack/debug.sh smoke DIR        make test's smoke (a lesson file's smoke
#                                  command): delve built, then go test of the
#                                  package DIR (a debug build stopped at a
#                                  breakpoint), no cluster
#   hack/debug.sh names            the names debug takes, with their port and
#                                  start, one a line
#
# Exit codes: 0 done; 2 bad input or a failure, said on standard error; 3 (debug)
# NAME is under the debugger already, in this cluster (where to attach is said),
# or another command holds delve's port or, for a process in the foreground,
# what NAME's run holds on the cluster (hack/lib/hold.sh: named, with how to stop
# it; nothing was changed);
# 4 (debug, with KIT_DEBUG_CACHED=1) the debug build is not cached, and
# KIT_DEBUG_CACHED=1 says not to make it (kube-src.sh debug-build).
#
# An entry starts in one of three ways (its start):
#   component   a component of the running local cluster swapped, through
#               `kit-component use` as make kube-restart does, for a debug build
#               of it (bin/'s flags without -s -w, which strip the DWARF a
#               debugger reads, and optimisation off for the packages PKGS, else
#               the entry's packages, name) from the learner's copy of the
#               source (_output/kubernetes) when there is one, else from the
#               pinned module, run by a wrapper script that kwokctl starts in the
#               component's place. The wrapper runs delve with --headless
#               --accept-multiclient --continue, so the component keeps serving
#               while nobody is attached and an editor detaching never stops it,
#               and adds the entry's args (--leader-elect=false: a component
#               paused at a breakpoint would lose its Lease and exit).
#   controller  the lesson's tier's controller in the foreground, the way its
#               make run runs it (its Makefile starts $(CONTROLLER), where delve
#               goes), built with optimisation off everywhere
#               (-gcflags=all=-N -l: the first build recompiles client-go and all
#               else it imports, minutes on 2 cores; later ones come from the
#               build cache), on whatever cluster its run target uses.
#   SCRIPT      a script of the lesson's own folder, which does the rest:
#               `SCRIPT debug NAME`, `SCRIPT undebug NAME`, with PORT, PKGS,
#               DEBUG_ARGS and DEBUG_BREAKPOINT exported; it sources lib.sh and
#               lib/debug.sh and runs its debug build through `debug.sh delve`.
#
# delve does not kill the process it debugs when it dies, and kwokctl stops a
# component with SIGKILL to the pid it started (delve's). So `delve` leaves a
# watchdog beside delve that kills the debugged binary (found by its path,
# which is this cluster's own) as soon as delve has gone, however it went.
#
# State: $KIT_OUT/debug/<cluster>/<name>.env for a component (PORT, BINARY the
# debug build, PREVIOUS the binary the component ran before, SOURCE copy or
# module, WRAPPER), written by debug and removed by undebug; $KIT_OUT/debug/<name>.env
# (PORT, BINARY) for a controller while it runs. Lesson 4's debugger test reads them.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$KIT_ROOT/hack/lib/debug.sh"
KIT_ME=debug
KIT_DIE_STATUS=2

# ENTRIES are the lesson files' debug entries (kit_debug_entries), NAMES their
# names in the order of their ports.
ENTRIES=$(kit_debug_entries | sort -t $'\x1f' -k2,2n)
NAMES=$(cut -d $'\x1f' -f1 <<<"$ENTRIES" | paste -sd' ' -)

# entry NAME sets D_PORT, D_START, D_TIER, D_ARGS, D_PACKAGES and D_BREAKPOINT
# from NAME's debug entry, or fails naming the names there are.
entry() {
	[ -n "${1:-}" ] || kit_die "name what to debug: WHAT=NAME, one of: $NAMES"
	kit_check_names "$NAMES" "$1"
	local line
	line=$(grep -m1 "^$1"$'\x1f' <<<"$ENTRIES")
	IFS=$'\x1f' read -r _ D_PORT D_START D_TIER D_ARGS D_PACKAGES D_BREAKPOINT <<<"$line"
}

# watchdog DLV_PID BINARY PORT prints the listening line once delve answers,
# then waits for delve to end and kills what it debugged. It ignores the
# terminal's signals: Ctrl-C ends delve, which is when it has work to do.
watchdog() {
	local dlv=$1 binary=$2 port=$3
	trap '' INT HUP TERM
	exec </dev/null
	while alive "$dlv" && ! listening "$port"; do sleep 0.2; done
	if alive "$dlv"; then echo "delve listening at 127.0.0.1:$port"; fi
	while alive "$dlv"; do sleep 1; done
	kill_debuggee "$binary" 2>/dev/null || true
}

# cmd_delve PORT BINARY ARG... becomes delve running BINARY ARG... (the
# process keeps its pid, the one kwokctl's pid file records). BINARY --version
# runs BINARY itself: kit-component use checks a binary with it.
cmd_delve() {
	[ $# -ge 2 ] || kit_die "delve PORT BINARY [ARG...]"
	local port=$1 binary=$2
	shift 2
	if [ "${1:-}" = --version ]; then exec "$binary" "$@"; fi
	watchdog $$ "$binary" "$port" &
	# Standard input is not a terminal, so delve leaves the debugged process in
	# the background: Ctrl-C reaches delve, which kills it, rather than the
	# process alone, which would leave delve waiting with nothing to debug.
	exec "$DLV" exec --headless --listen="127.0.0.1:$port" --accept-multiclient --continue \
		--api-version=2 "$binary" -- "$@" </dev/null
}

cmd_debug_component() {
	local name=$1 state="$DEBUG_DIR/$1.env" wrapper="$DEBUG_DIR/$1-under-dlv" binary="$DEBUG_DIR/$1"
	require_cluster
	local running
	running=$(kit_component binary "$name")
	if [ "$running" = "$wrapper" ]; then
		local port="?"
		[ -f "$state" ] && port=$(state_get "$state" PORT)
		echo "debug: $name of the cluster $KIT_CLUSTER is already under the debugger: delve listening at 127.0.0.1:$port" >&2
		echo "    attach: $DLV connect 127.0.0.1:$port --init ${DEBUG_DIR#"$KIT_ROOT"/}/$name.dlv-init (or your editor's attach configuration); leave it: ${KIT_MAKE_PREFIX}make undebug WHAT=$name" >&2
		exit 3
	fi
	hold_port
	local start=$SECONDS
	"$KIT_ROOT/hack/build-bins.sh" dlv
	local pkgs=${PKGS:-$D_PACKAGES} src
	src=$(source_dir)
	mkdir -p "$DEBUG_DIR"
	# shellcheck disable=SC2086 # one package pattern per word
	"$KIT_ROOT/hack/kube-src.sh" debug-build "$name" "$binary" $pkgs
	# The wrapper kwokctl starts in the component's place, with the flags it
	# gives the component and the one a paused component needs.
	cat >"$wrapper.new" <<EOF
#!/usr/bin/env bash
# Written by hack/debug.sh (make debug WHAT=$name): the local cluster $KIT_CLUSTER
# runs this in $name's place; make undebug WHAT=$name puts $running back.
exec "$KIT_ROOT/hack/debug.sh" delve $PORT "$binary" "\$@" $D_ARGS
EOF
	chmod +x "$wrapper.new"
	mv "$wrapper.new" "$wrapper"
	{
		echo "PORT=$PORT"
		echo "BINARY=$binary"
		echo "PREVIOUS=$running"
		echo "WRAPPER=$wrapper"
		if [ "$src" = "$KUBE_SRC" ]; then echo "SOURCE=copy"; else echo "SOURCE=module"; fi
	} >"$state"
	kit_log "running $name under delve in the cluster $KIT_CLUSTER${D_ARGS:+ (with $D_ARGS while debugged)}"
	# The component does not keep the port's hold: once it runs, delve listening
	# on the port is what refuses another make debug (require_port_free).
	if ! (kit_hold_close && kit_component use "$name" "$wrapper"); then
		# kit-component has put the old binary back; no debuggee may outlive it.
		kill_debuggee "$binary"
		rm -f "$state"
		kit_die "$name did not become healthy under delve, so it runs $running again; read why in $KWOK_WORKDIR/clusters/$KIT_CLUSTER/logs/$name.log"
	fi
	kit_log "$name answers its health checks under delve, $((SECONDS - start)) s after make debug started"
	echo "delve listening at 127.0.0.1:$PORT"
	attach_help "$name" "$src" "$D_BREAKPOINT"
}

cmd_debug_controller() {
	local name=$1 tier=$D_TIER pkg bin binary state="$KIT_OUT/debug/$1.env"
	read -r pkg bin < <(kit_tier_main "$tier")
	binary="$KIT_OUT/debug/bin/$bin"
	if [ -f "$state" ] && [ -n "$(pids_of "$binary")" ]; then
		kit_die "$name is already under the debugger: delve listening at 127.0.0.1:$(state_get "$state" PORT) (in the terminal that ran make debug WHAT=$name; Ctrl-C there ends it)"
	fi
	hold_port
	hold_run "$tier"
	"$KIT_ROOT/hack/build-bins.sh" dlv
	mkdir -p "$KIT_OUT/debug/bin"
	local start=$SECONDS
	kit_log "building $tier with optimisation off everywhere (-gcflags=all=-N -l) into ${binary#"$KIT_ROOT"/}"
	# A tier go.work leaves out (lesson 8's) is built as its Makefile builds it.
	local gowork=${GOWORK:-}
	kit_work_modules | grep -qxF -- "$tier" || gowork=off
	kit_with_heartbeat "$tier" "the first time recompiles client-go and every other package it imports" \
		env GOWORK="$gowork" GOFLAGS="$(kit_goflags_untrimmed)" go build -C "$KIT_ROOT/$tier" -gcflags='all=-N -l' -o "$binary" "$pkg" ||
		kit_die "the debug build of $tier failed (the Go error is above)"
	kit_log "built $tier for the debugger in $((SECONDS - start)) s"
	{
		echo "PORT=$PORT"
		echo "BINARY=$binary"
	} >"$state"
	# The entry's args, such as --leader-elect=false: a controller paused at a
	# breakpoint cannot renew its Lease.
	local args="${ARGS:-}${D_ARGS:+ $D_ARGS}"
	cat <<EOF
>> $tier runs under delve on 127.0.0.1:$PORT, the way make run runs it; attach once delve says it listens:
    attach with the debugger's own client:  $DLV connect 127.0.0.1:$PORT  (leave with quit -c: the controller runs on)
    VS Code: Run and Debug, "attach: $name" (.vscode/launch.json; port $PORT)
    GoLand: Run | Edit Configurations | + | Go Remote, host 127.0.0.1, port $PORT
    Ctrl-C here ends the controller and delve
EOF
	local rc=0
	make --no-print-directory -C "$KIT_ROOT/$tier" run \
		CONTROLLER="$KIT_ROOT/hack/debug.sh delve $PORT $binary" ARGS="$args" || rc=$?
	kill_debuggee "$binary"
	rm -f "$state"
	return $rc
}

cmd_debug() {
	NAME=${1:-}
	entry "$NAME"
	PORT=${PORT:-$D_PORT}
	check_port
	case "$D_START" in
	component) cmd_debug_component "$NAME" ;;
	controller) cmd_debug_controller "$NAME" ;;
	*)
		PKGS=${PKGS:-$D_PACKAGES} DEBUG_ARGS=$D_ARGS DEBUG_BREAKPOINT=$D_BREAKPOINT
		export PORT PKGS DEBUG_ARGS DEBUG_BREAKPOINT
		exec "$KIT_ROOT/$D_START" debug "$NAME"
		;;
	esac
}

cmd_undebug() {
	local name=${1:-}
	entry "$name"
	case "$D_START" in
	component) ;;
	controller)
		local bin
		read -r _ bin < <(kit_tier_main "$D_TIER")
		kill_debuggee "$KIT_OUT/debug/bin/$bin"
		stop_delve_of "$KIT_OUT/debug/bin/$bin"
		rm -f "$KIT_OUT/debug/$name.env"
		kit_log "$name: no debug build of it runs any more"
		return
		;;
	*) exec "$KIT_ROOT/$D_START" undebug "$name" ;;
	esac
	require_cluster
	local state="$DEBUG_DIR/$name.env" wrapper="$DEBUG_DIR/$name-under-dlv" binary="$DEBUG_DIR/$name" running previous=""
	running=$(kit_component binary "$name")
	if [ "$running" != "$wrapper" ]; then
		kill_debuggee "$binary"
		rm -f "$state"
		kit_log "$name is not under the debugger (it runs $running); nothing to do"
		return
	fi
	[ -f "$state" ] && previous=$(state_get "$state" PREVIOUS)
	if [ -z "$previous" ] || [ ! -x "$previous" ] || [ "$previous" = "$wrapper" ]; then previous="$KIT_BIN/$name"; fi
	local start=$SECONDS
	kit_log "stopping delve and the debugged $name"
	kit_component stop "$name" >/dev/null
	kill_debuggee "$binary"
	"$KIT_ROOT/hack/kube-src.sh" use "$name" "$previous"
	rm -f "$state"
	kit_log "$name runs $previous again, with its own flags ($((SECONDS - start)) s)"
}

# cmd_smoke DIR is make test's part of the debugger, named as a smoke command
# by the lesson file whose debugger test lies in DIR: delve built, and that
# package's tests without build tags (a small program built for debugging, run
# through `delve` here, stopped at a breakpoint over delve's JSON-RPC API, its
# delve killed and the program found gone). Seconds, no cluster.
cmd_smoke() {
	[ -n "${1:-}" ] || kit_die "smoke DIR: the package of a debugger test, from the repository root"
	"$KIT_ROOT/hack/build-bins.sh" dlv
	go test -C "$KIT_ROOT" -count=1 "./$1"
	echo "debug smoke: delve built; a debug build stopped at a breakpoint and ended with its delve ($1)"
}

# cmd_names prints each name make debug takes, its default port and its start,
# one a line, in the order of their ports.
cmd_names() {
	tr '\037' ' ' <<<"$ENTRIES" | cut -d' ' -f1-3
}

main() {
	local cmd=${1:-}
	shift || true
	case "$cmd" in
	debug) cmd_debug "$@" ;;
	undebug) cmd_undebug "$@" ;;
	delve) cmd_delve "$@" ;;
	smoke) cmd_smoke "$@" ;;
	names) cmd_names ;;
	*) kit_die "unknown command '$cmd' (debug, undebug, delve, smoke, names)" ;;
	esac
}

main "$@"
