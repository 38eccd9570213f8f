#!/usr/bin/env bash
# debug-provisioner.sh is make debug WHAT=csi-provisioner and make undebug
# WHAT=csi-provisioner (lesson 7), the start its lesson file's debug entry names;
# hack/debug.sh runs it with PORT (delve's, checked) and DEBUG_BREAKPOINT exported.
#
#   debug-provisioner.sh debug csi-provisioner
#   debug-provisioner.sh undebug csi-provisioner
#
# The sidecar runs in make run-csi's place, in the foreground: the driver and
# csi-attacher as make run-csi runs them, and a debug build of the sidecar
# (optimisation off everywhere, from hack/csi's pinned module, which lists it among
# its tools) under delve (hack/debug.sh delve) in its place, through run-csi.sh's
# PROVISIONER. State: $KIT_OUT/debug/csi-provisioner.env (PORT, BINARY) while it runs.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../hack/lib.sh"
source "$KIT_ROOT/hack/lib/debug.sh"
KIT_ME=debug
KIT_DIE_STATUS=2

# sidecar_pkg NAME prints the main package of the sidecar NAME, as hack/csi's
# go.mod lists it among its tools.
sidecar_pkg() {
	GOWORK=off go list -C "$KIT_ROOT/hack/csi" tool | grep "/$1\$"
}

debug_sidecar() {
	local name=$1 pkg binary="$KIT_OUT/debug/bin/$1" state="$KIT_OUT/debug/$1.env"
	if [ -f "$state" ] && [ -n "$(pids_of "$binary")" ]; then
		kit_die "$name is already under the debugger: delve listening at 127.0.0.1:$(state_get "$state" PORT) (in the terminal that ran make debug WHAT=$name; Ctrl-C there ends it)"
	fi
	hold_port
	hold_run csi-driver-example
	pkg=$(sidecar_pkg "$name") || kit_die "hack/csi/go.mod lists no tool whose package ends in /$name"
	"$KIT_ROOT/hack/build-bins.sh" dlv
	mkdir -p "$KIT_OUT/debug/bin"
	local start=$SECONDS
	kit_log "building $name with optimisation off everywhere (-gcflags=all=-N -l) from hack/csi into ${binary#"$KIT_ROOT"/}"
	# The build module is outside go.work, as build-bins.sh builds it.
	kit_with_heartbeat "$name" "the first time recompiles client-go and every other package it imports" \
		env GOWORK=off GOFLAGS="$(kit_goflags_untrimmed)" go build -C "$KIT_ROOT/hack/csi" -gcflags='all=-N -l' -o "$binary" "$pkg" ||
		kit_die "the debug build of $name failed (the Go error is above)"
	kit_log "built $name for the debugger in $((SECONDS - start)) s"
	{
		echo "PORT=$PORT"
		echo "BINARY=$binary"
	} >"$state"
	cat <<EOF
>> make run-csi with $name under delve on 127.0.0.1:$PORT; attach once delve says it listens (a line prefixed provisioner|):
    attach with the debugger's own client:  $DLV connect 127.0.0.1:$PORT
      (then e.g.: ${DEBUG_BREAKPOINT:+$DEBUG_BREAKPOINT; }continue;
       a claim created then stops there: kubectl delete pvc example-claim; kubectl apply -f csi-driver-example/config/examples/pvc.yaml;
       leave with quit -c: $name runs on)
    VS Code: Run and Debug, "attach: $name" (.vscode/launch.json; port $PORT)
    GoLand: Run | Edit Configurations | + | Go Remote, host 127.0.0.1, port $PORT
    Ctrl-C here ends the driver, the sidecars and delve
EOF
	local rc=0
	make --no-print-directory -C "$KIT_ROOT" run-csi PROVISIONER="$KIT_ROOT/hack/debug.sh delve $PORT $binary" || rc=$?
	kill_debuggee "$binary"
	rm -f "$state"
	return $rc
}

undebug_sidecar() {
	local name=$1
	kill_debuggee "$KIT_OUT/debug/bin/$name"
	stop_delve_of "$KIT_OUT/debug/bin/$name"
	rm -f "$KIT_OUT/debug/$name.env"
	kit_log "$name: no debug build of it runs any more"
}

NAME=${2:-}
[ -n "$NAME" ] || kit_die "usage: $0 debug|undebug NAME (hack/debug.sh runs it)"
case "${1:-}" in
debug) check_port && debug_sidecar "$NAME" ;;
undebug) undebug_sidecar "$NAME" ;;
*) kit_die "unknown command '${1:-}' (debug, undebug)" ;;
esac
