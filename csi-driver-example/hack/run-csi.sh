#!/usr/bin/env bash
# run-csi.sh is make run-csi's body (lesson 7): the learner's CSI driver
# (csi-driver-example) and the two sidecars that call it, csi-provisioner and
# csi-attacher, run as local processes against the kit's cluster, in the
# foreground, their logs side by side, each line prefixed with who wrote it
# (driver|, provisioner|, attacher|). Once they run it applies the example
# claim and says when it is Bound. Ctrl-C stops all three; so does any one of
# them exiting (a sidecar exits when it loses the driver's socket).
#
# Before that it builds the sidecars on first use (hack/build-bins.sh, minutes
# the first time), applies csi-driver-example/config (the sidecars'
# ServiceAccounts and RBAC, the CSIDriver, the two StorageClasses: Immediate and
# WaitForFirstConsumer) and writes a
# kubeconfig for each sidecar that impersonates its ServiceAccount (the
# kubeconfig's "as:", what kubectl --as sets), so each runs with exactly the
# RBAC the kit ships for it. Each sidecar gets that file both ways a program
# may read a kubeconfig, its --kubeconfig flag and the KUBECONFIG variable of
# its environment: csi-provisioner v6.4.0 takes the variable over the flag
# (cmd/csi-provisioner/csi-provisioner.go:171), and with the caller's KUBECONFIG
# it would act as the cluster's admin.
#
# The driver listens on a unix socket, the sidecars dial it (--csi-address),
# as they would share it in a Pod on a node. A socket file left by a driver
# that was killed (nothing listens on it) is removed before the driver starts;
# one a running driver listens on stops this script, naming its process.
#
# State: $KIT_OUT/csi/<cluster>/: csi.sock (the socket), state/ (the driver's
# --state-dir: a volume is the folder state/volumes/<volume-id>/),
# provisioner.kubeconfig, attacher.kubeconfig.
#
# csi-driver-example's make run calls it (make run-csi from the root), after
# the driver is built and the cluster is there (ensure-cluster).
#
# Environment: CONTROLLER (the command that runs the driver: its binary, or
# hack/debug.sh's delve and its debug build), PROVISIONER (the same for
# csi-provisioner: bin/csi-provisioner, or make debug WHAT=csi-provisioner's),
# RECONCILER (the driver's Controller and Node services: reference or stub; empty: the
# driver's default, reference), V (the log verbosity of all three, -v; default
# 5, where the sidecars log each gRPC call with its request and response), ARGS
# (more flags for the driver: --zones=zone-a=150Mi,zone-b=1Gi gives it zones,
# lesson 7's section on topology), KUBECONFIG.
#
# Exit status: the first of the three to exit's; 3 make run-csi (or make debug
# of the driver or of csi-provisioner) already runs against the cluster, which it
# names, and nothing was changed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../hack/lib.sh"

module="$KIT_ROOT/csi-driver-example"
config="$module/config"
bin="$module/bin/csi-driver-example"
controller=${CONTROLLER:-$bin}
provisioner=${PROVISIONER:-$KIT_BIN/csi-provisioner}
kubeconfig=${KUBECONFIG:-$KIT_KUBECONFIG}
verbosity=${V:-5}
out="$KIT_OUT/csi/$KIT_CLUSTER"
socket="$out/csi.sock"
claim="default/example-claim"
[ -x "$bin" ] || kit_die "$bin is not built; run make run-csi from the repository root (it builds it first)"
# One copy per cluster, before anything is built or written (hack/lib/hold.sh).
kit_hold csi-driver-example@ "${KIT_MAKE_PREFIX}make run-csi" \
	"serve one socket and answer the same claims, each provisioner creating a volume for the same claim" ||
	exit "$KIT_HOLD_REFUSED"
mkdir -p "$out/state"
# A unix socket's path has at most 107 bytes (sun_path); a clone deep in the
# file system would pass that, so the socket then lives in the temporary folder,
# under a name that is this clone's and cluster's.
if [ ${#socket} -gt 107 ]; then
	socket="${TMPDIR:-/tmp}/controller-kit-csi-$(id -u)-$(printf '%s' "$out" | cksum | cut -d' ' -f1).sock"
fi

# The sidecars: built on first use (build-bins.sh prints progress), in seconds after.
sidecars="csi-attacher"
[ -n "${PROVISIONER:-}" ] || sidecars="csi-provisioner $sidecars"
# shellcheck disable=SC2086 # one binary name per word
"$KIT_ROOT/hack/build-bins.sh" $sidecars

kit_log "applying the sidecars' RBAC, the CSIDriver and the StorageClasses (csi-driver-example/config)"
# --force-conflicts: the files are the kit's word on these objects, taken back
# from whoever changed a field since (lesson 7 section 10's kubectl patch of the
# CSIDriver's storageCapacity, say), which would otherwise refuse the apply.
"$KIT_BIN/kubectl" --kubeconfig "$kubeconfig" apply --server-side --force-conflicts \
	-f "$config/rbac/" -f "$config/csidriver.yaml" -f "$config/storageclass.yaml" -f "$config/storageclass-wffc.yaml"

# Each sidecar's kubeconfig acts as its ServiceAccount (csi-driver-example/csi-provisioner, csi-attacher).
for sidecar in provisioner attacher; do
	kit_impersonating_kubeconfig "$kubeconfig" "system:serviceaccount:csi-driver-example:csi-$sidecar" "$out/$sidecar.kubeconfig"
done

# listening succeeds when a process listens on the socket (ss lists the unix
# sockets that listen, their path in the fifth column).
listening() { ss -xlH 2>/dev/null | awk -v p="$socket" '$5 == p {found = 1} END {exit !found}'; }

# A socket file nothing listens on is a killed driver's; one something listens
# on is a driver that runs (another make run-csi on this cluster, say).
if [ -e "$socket" ]; then
	if listening; then
		holder=$(ss -xlpH 2>/dev/null | awk -v p="$socket" '$5 == p' | grep -o 'pid=[0-9]*' | head -n1) || true
		holder=${holder#pid=}
		[ -z "$holder" ] || holder="$(readlink "/proc/$holder/exe" 2>/dev/null || echo process), pid $holder"
		kit_die "a driver already listens on $socket${holder:+ ($holder)}: another make run-csi on the cluster $KIT_CLUSTER? Stop it (Ctrl-C in its terminal) first"
	fi
	kit_log "removing $socket, a socket file left by a driver that was killed (nothing listens on it)"
	rm -f "$socket"
fi

# The three processes, each writing through a filter that prefixes its lines.
# pids holds the processes themselves (not the filters), names who each is.
pids=() names=()
# start NAME COMMAND... runs COMMAND in the background, its output and errors
# prefixed with "NAME| ", the names' bars in one column.
start() {
	local name=$1 label
	shift
	printf -v label '%11s| ' "$name"
	"$@" </dev/null > >(sed -u "s/^/$label/") 2>&1 &
	pids+=($!)
	names+=("$name")
}

# stop_all sends SIGTERM to each process still running, waits up to 10 s for
# them, then kills what is left, so that nothing of this run outlives it.
stop_all() {
	local pid i left
	trap - INT TERM
	for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for i in $(seq 50); do
		left=""
		for pid in "${pids[@]}"; do if kill -0 "$pid" 2>/dev/null; then left+=" $pid"; fi; done
		[ -n "$left" ] || break
		sleep 0.2
	done
	for pid in $left; do kill -KILL "$pid" 2>/dev/null || true; done
	[ -z "${watcher:-}" ] || kill "$watcher" 2>/dev/null || true
	wait 2>/dev/null || true
	# A driver that died without closing its listener leaves its socket file.
	listening || rm -f "$socket"
}
# Ctrl-C: the background processes ignore the terminal's SIGINT (a script's
# background jobs do), so this trap stops them.
trap 'kit_cleanup_outlives_output; echo; kit_log "stopping the driver, csi-provisioner and csi-attacher"; stop_all; exit 130' INT
trap 'kit_cleanup_outlives_output; stop_all; exit 143' TERM

cat <<MSG
>> running csi-driver-example${RECONCILER:+ (--reconciler=$RECONCILER)}, csi-provisioner and csi-attacher (Ctrl-C stops all three; make then says "Interrupt", as it does for any command stopped so). In a second terminal:
     export KUBECONFIG=$kubeconfig PATH=$KIT_BIN:\$PATH
     kubectl get pvc example-claim; kubectl get pv    # Bound, to a PersistentVolume of the driver toy.csi.controller-kit.dev
     kubectl delete pvc example-claim                 # DeleteVolume: the PersistentVolume and the volume's folder go
     ls ${out#"$KIT_ROOT"/}/state/volumes/  # from the repository root: one folder per volume
MSG
kit_log "starting csi-driver-example${RECONCILER:+ (--reconciler=$RECONCILER)} on unix://$socket (state: ${out#"$KIT_ROOT"/}/state)"
# shellcheck disable=SC2086 # CONTROLLER is a command and its arguments, ARGS are flags: split on purpose
start driver $controller --endpoint="unix://$socket" --state-dir="$out/state" \
	${RECONCILER:+--reconciler="$RECONCILER"} -v="$verbosity" ${ARGS:-}
# The sidecars would wait for the socket too, but start them once it is there.
for i in $(seq 300); do
	[ -S "$socket" ] && break
	kill -0 "${pids[0]}" 2>/dev/null || break
	sleep 0.2
done
if [ ! -S "$socket" ]; then
	if kill -0 "${pids[0]}" 2>/dev/null; then why="did not listen on $socket within 60 s"; else why="exited before it listened on $socket"; fi
	stop_all
	kit_die "the driver $why (its log, prefixed driver|, is above)"
fi

# Leader election off: one copy of each runs, and one paused under delve
# would lose its Lease and exit (so the RBAC has no Lease rules either).
# -v=5 is where csi-lib-utils logs each gRPC call, its request and response.
sidecar_flags=(--csi-address="$socket" --leader-election=false --v="$verbosity")
# Each sidecar's environment names its own kubeconfig too (KUBECONFIG, which
# csi-provisioner reads before its flag), so it acts as its ServiceAccount
# whichever of the two it reads.
# csi-provisioner also tracks capacity: for each WaitForFirstConsumer class and
# zone it asks GetCapacity and writes the answer as a CSIStorageCapacity in the
# namespace NAMESPACE names, owned by nothing (-1: no Pod of its own to own
# them). --strict-topology asks CreateVolume for the selected node's zone only,
# so a volume is made where the Pod is or not at all (RESOURCE_EXHAUSTED, and
# the Pod goes back to the scheduler). Both matter only to a driver with zones
# (--zones in ARGS); without, it offers no topology and no class has a zone.
# shellcheck disable=SC2086 # PROVISIONER is a command and its arguments: split on purpose
start provisioner env KUBECONFIG="$out/provisioner.kubeconfig" NAMESPACE=csi-driver-example \
	$provisioner --kubeconfig="$out/provisioner.kubeconfig" "${sidecar_flags[@]}" \
	--enable-capacity --capacity-ownerref-level=-1 --strict-topology
start attacher env KUBECONFIG="$out/attacher.kubeconfig" \
	"$KIT_BIN/csi-attacher" --kubeconfig="$out/attacher.kubeconfig" "${sidecar_flags[@]}"

kit_log "applying the example claim $claim (csi-driver-example/config/examples/pvc.yaml)"
"$KIT_BIN/kubectl" --kubeconfig "$kubeconfig" apply --server-side -f "$config/examples/pvc.yaml" | sed 's/^/    /'
# The watcher says when the claim is Bound, or after two minutes that it is not.
(
	trap - INT TERM
	SECONDS=0
	while [ "$SECONDS" -lt 120 ]; do
		volume=$("$KIT_BIN/kubectl" --kubeconfig "$kubeconfig" get pvc -n "${claim%/*}" "${claim#*/}" \
			-o 'jsonpath={.status.phase} {.spec.volumeName}' 2>/dev/null) || true
		if [ "${volume%% *}" = Bound ]; then
			volume=${volume#* }
			# The volume ID the driver returned, the name of the volume's folder.
			handle=$("$KIT_BIN/kubectl" --kubeconfig "$kubeconfig" get pv "$volume" -o 'jsonpath={.spec.csi.volumeHandle}' 2>/dev/null) || true
			kit_log "claim $claim is Bound to the PersistentVolume $volume (the driver's volume ${handle:-?}: ${out#"$KIT_ROOT"/}/state/volumes/${handle:-?}/)"
			exit 0
		fi
		sleep 1
	done
	kit_log "claim $claim is not Bound after 2 minutes; its events say why: kubectl describe pvc -n ${claim%/*} ${claim#*/}"
) </dev/null &
watcher=$!

# Wait until one of the three exits (or Ctrl-C), then stop the others.
rc=0
wait -n "${pids[@]}" || rc=$?
for i in "${!pids[@]}"; do
	if ! kill -0 "${pids[$i]}" 2>/dev/null; then
		kit_error "${names[$i]} exited (status $rc); stopping the others"
		break
	fi
done
stop_all
exit "$rc"
