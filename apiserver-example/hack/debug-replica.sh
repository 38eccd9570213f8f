#!/usr/bin/env bash
# debug-replica.sh is make debug WHAT=kube-apiserver and make undebug WHAT=kube-apiserver
# (lesson 6), the start its lesson file's debug entry names; hack/debug.sh runs it
# with PORT (delve's, checked), PKGS (the packages built with optimisation off: the
# entry's, the three lesson 6 stops in), DEBUG_ARGS and DEBUG_BREAKPOINT exported.
#
#   debug-replica.sh debug kube-apiserver
#   debug-replica.sh undebug kube-apiserver
#
# kube-apiserver is not swapped as the cluster's other components are: every client
# of the cluster, its controllers, scheduler and kwok included, would stop with it at
# a breakpoint. A replica runs beside it instead: a debug build of it under delve
# (hack/debug.sh delve), on the same etcd, with the cluster's own flags (kit-component
# args) but for its port (a free one on loopback), its own audit log and
# --endpoint-reconciler-type=none (so it never writes itself into the kubernetes
# Service's endpoints), started in the background, with a kubeconfig that points at
# it. Only the requests sent to that kubeconfig stop at its breakpoints. undebug stops
# delve, the replica and the watchdog, and removes what debug wrote.
#
# The replica's debug build from the pinned module (no copy) is one for every
# cluster, $KIT_OUT/debug/pinned/kube-apiserver, copied to the cluster's own path
# when make debug starts it: make test's smoke of lesson 6 runs it when it is cached
# (KIT_DEBUG_CACHED=1, exit 4 when it is not), and never builds it.
#
# State: $KIT_OUT/debug/<cluster>/kube-apiserver.env (PORT, BINARY, PID delve's pid,
# SERVE its API port, KUBECONFIG, LOG, SOURCE copy or module), which lesson 6's
# replica test reads. Exit codes as hack/debug.sh's.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../hack/lib.sh"
source "$KIT_ROOT/hack/lib/debug.sh"
KIT_ME=debug
KIT_DIE_STATUS=2

# stop_replica STATE stops the replica STATE describes: delve (its pid), then
# what it debugged, which the watchdog would kill too; and waits until the
# watchdog, the one other process whose command line names the debug build, has
# ended as well, so that nothing of the replica is left when it returns.
stop_replica() {
	local state=$1 pid binary i
	pid=$(state_get "$state" PID)
	binary=$(state_get "$state" BINARY)
	if [ -n "$pid" ] && alive "$pid"; then
		kill -TERM "$pid" 2>/dev/null || true
		for i in $(seq 25); do alive "$pid" || break; sleep 0.2; done
		if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
	fi
	[ -n "$binary" ] || return 0
	kill_debuggee "$binary"
	for i in $(seq 50); do
		pgrep -f -- "$binary" >/dev/null || return 0
		sleep 0.2
	done
	kit_error "warning: processes naming $binary still run: $(pgrep -af -- "$binary" | cut -c1-120)"
}

debug_replica() {
	local name=$1 state="$DEBUG_DIR/$1.env" binary="$DEBUG_DIR/$1-replica"
	local kubeconfig="$DEBUG_DIR/$1-replica.kubeconfig" log="$DEBUG_DIR/$1-replica.log"
	require_cluster
	if [ -f "$state" ] && alive "$(state_get "$state" PID)"; then
		echo "debug: a replica of $name of the cluster $KIT_CLUSTER runs under the debugger already: delve listening at 127.0.0.1:$(state_get "$state" PORT)" >&2
		echo "    kubeconfig: $(state_get "$state" KUBECONFIG); leave it: ${KIT_MAKE_PREFIX}make undebug WHAT=$name" >&2
		exit 3
	fi
	hold_port
	local start=$SECONDS
	local pkgs=${PKGS:-} src serve
	src=$(source_dir)
	mkdir -p "$DEBUG_DIR"
	if [ "$src" = "$KUBE_SRC" ]; then
		# shellcheck disable=SC2086 # one package pattern per word
		"$KIT_ROOT/hack/kube-src.sh" debug-build "$name" "$binary" $pkgs
	else
		# From the pinned module: one build for every cluster, which go build
		# keeps up to date, copied to this cluster's own path (kill_debuggee
		# finds a replica by it; a copy never runs twice in two clusters).
		local pinned="$KIT_OUT/debug/pinned/$name"
		mkdir -p "$(dirname "$pinned")"
		# shellcheck disable=SC2086 # one package pattern per word
		"$KIT_ROOT/hack/kube-src.sh" debug-build "$name" "$pinned" $pkgs
		cp "$pinned" "$binary.new"
		mv "$binary.new" "$binary"
	fi
	# The debugger after the debug build, which KIT_DEBUG_CACHED=1 stops at
	# once when it is not cached: such a run builds nothing, delve included.
	"$KIT_ROOT/hack/build-bins.sh" dlv
	serve=$(kit_free_port)
	# The cluster's own flags, but for where it listens and where it audits.
	local args=() arg
	while IFS= read -r arg; do
		case "$arg" in
		--secure-port=*) arg="--secure-port=$serve" ;;
		--audit-log-path=*) arg="--audit-log-path=$DEBUG_DIR/$name-replica-audit.log" ;;
		esac
		args+=("$arg")
	done < <(kit_component args "$name")
	[ ${#args[@]} -gt 0 ] || kit_die "kit-component printed no flags of $name for the cluster $KIT_CLUSTER"
	args+=(--endpoint-reconciler-type=none)
	# shellcheck disable=SC2206 # the entry's args, one flag a word
	args+=(${DEBUG_ARGS:-})
	# The cluster's kubeconfig, pointed at the replica.
	local cluster
	cluster=$(kit_kubectl config view --minify -o 'jsonpath={.clusters[0].name}')
	cp "$KIT_KUBECONFIG" "$kubeconfig"
	"$KIT_BIN/kubectl" --kubeconfig "$kubeconfig" config set-cluster "$cluster" --server="https://127.0.0.1:$serve" >/dev/null
	kit_log "starting a replica of $name under delve on the cluster's etcd (API on 127.0.0.1:$serve, log ${log#"$KIT_ROOT"/})"
	# In a session of its own, so it outlives make and the terminal's Ctrl-C;
	# without the cluster's lock (fd 8), but with the hold on delve's port, which
	# it keeps while it runs (kit_hold_handover, below).
	setsid "$KIT_ROOT/hack/debug.sh" delve "$PORT" "$binary" "${args[@]}" >"$log" 2>&1 </dev/null 8>&- &
	local pid=$!
	{
		echo "PORT=$PORT"
		echo "BINARY=$binary"
		echo "PID=$pid"
		echo "SERVE=$serve"
		echo "KUBECONFIG=$kubeconfig"
		echo "LOG=$log"
		if [ "$src" = "$KUBE_SRC" ]; then echo "SOURCE=copy"; else echo "SOURCE=module"; fi
	} >"$state"
	local i seen=""
	for i in $(seq 180); do
		if ! alive "$pid"; then break; fi
		# delve outlives the replica it runs (it waits for a client): a replica
		# that has exited is seen by its binary's process being gone.
		if [ -n "$(pids_of "$binary")" ]; then
			seen=1
		elif [ -n "$seen" ]; then
			break
		fi
		if listening "$PORT" && "$KIT_BIN/kubectl" --kubeconfig "$kubeconfig" --request-timeout=3s get --raw /readyz >/dev/null 2>&1; then
			kit_hold_handover "port-$PORT" "$pid"
			kit_log "the replica answers /readyz under delve, $((SECONDS - start)) s after make debug started"
			echo "delve listening at 127.0.0.1:$PORT"
			echo "kubeconfig: $kubeconfig"
			attach_help "$name" "$src" "${DEBUG_BREAKPOINT:-}"
			return
		fi
		sleep 1
	done
	stop_replica "$state"
	rm -f "$state" "$kubeconfig"
	kit_die "the replica of $name exited, or did not answer /readyz within 3 minutes; nothing of it runs now; read why in $log"
}

undebug_replica() {
	local name=$1 state="$DEBUG_DIR/$1.env"
	if [ ! -f "$state" ]; then
		kill_debuggee "$DEBUG_DIR/$name-replica"
		kit_log "no replica of $name runs under the debugger; nothing to do"
		return
	fi
	local kubeconfig
	kubeconfig=$(state_get "$state" KUBECONFIG)
	stop_replica "$state"
	rm -f "$state" ${kubeconfig:+"$kubeconfig"}
	kit_log "the replica of $name and its delve are stopped; the cluster's own $name runs on"
}

NAME=${2:-}
[ -n "$NAME" ] || kit_die "usage: $0 debug|undebug NAME (hack/debug.sh runs it)"
case "${1:-}" in
debug) check_port && debug_replica "$NAME" ;;
undebug) undebug_replica "$NAME" ;;
*) kit_die "unknown command '${1:-}' (debug, undebug)" ;;
esac
