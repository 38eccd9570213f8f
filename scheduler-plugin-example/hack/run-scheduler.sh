#!/usr/bin/env bash
# run-scheduler.sh is make run-scheduler's body (lesson 8): it runs
# scheduler-plugin-example, kube-scheduler with the ZoneSpread plugin, as a second
# scheduler on the kit's cluster, in the foreground, after it has applied lesson
# 8's kwok nodes (three in zone-a, one in zone-b) and the example Deployment,
# whose Pods name that scheduler in spec.schedulerName. The cluster's own
# kube-scheduler keeps running and keeps every other Pod.
#
# The scheduler (built by the module's make build, which the caller's
# reconciler-known ran) reads scheduler-plugin-example/config/scheduler-config.yaml
# plus one line, clientConnection.kubeconfig: a kubeconfig that impersonates
# system:kube-scheduler, the user the cluster's own scheduler is, so it runs
# with exactly that scheduler's RBAC. Its environment's KUBECONFIG names the
# same file, so that nothing in it that reads the variable instead (as
# csi-provisioner does) acts as the caller. --secure-port=0: no HTTPS endpoint
# (its health and metrics), which would need delegated authentication.
#
# Environment: CONTROLLER (the command that runs the scheduler: the module's
# binary, or hack/debug.sh's delve and its debug build), RECONCILER (reference
# or stub; empty: the binary's default, reference), V (the log verbosity, -v;
# default 2, the Pods bound; 10 adds each plugin's score for each node), ARGS
# (more flags), KUBECONFIG.
#
# Exit status: the scheduler's; 3 make run-scheduler (or make debug
# WHAT=scheduler-plugin-example) already runs against the cluster, which it
# names, and nothing was changed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../hack/lib.sh"

module="$KIT_ROOT/scheduler-plugin-example"
bin="$module/bin/scheduler-plugin-example"
controller=${CONTROLLER:-$bin}
kubeconfig=${KUBECONFIG:-$KIT_KUBECONFIG}
out="$KIT_OUT/scheduler-plugin-example"
[ -x "$bin" ] || kit_die "$bin is not built; run make run-scheduler from the repository root (it builds it first)"
# One copy per cluster, before anything is written (hack/lib/hold.sh): a second
# scheduler of the same profile takes the same Pods.
kit_hold scheduler-plugin-example@ "${KIT_MAKE_PREFIX}make run-scheduler" \
	"schedule the same Pods (profile scheduler-plugin-example), each with a cache that holds only the Pods it placed itself: bindings refused and a spread neither chose" ||
	exit "$KIT_HOLD_REFUSED"
mkdir -p "$out"

kit_impersonating_kubeconfig "$kubeconfig" system:kube-scheduler "$out/kubeconfig"
{
	cat "$module/config/scheduler-config.yaml"
	printf 'clientConnection:\n  kubeconfig: %s\n' "$out/kubeconfig"
} >"$out/scheduler-config.yaml"

kit_log "applying lesson 8's nodes and example Deployment (scheduler-plugin-example/config/examples)"
"$KIT_BIN/kubectl" --kubeconfig "$kubeconfig" apply --server-side \
	-f "$module/config/examples/nodes.yaml" -f "$module/config/examples/deployment.yaml"

cat <<MSG
>> running scheduler-plugin-example (profile scheduler-plugin-example, plugin ZoneSpread${RECONCILER:+, --reconciler=$RECONCILER}) as a second scheduler (Ctrl-C stops it; make then says "Interrupt", as it does for any command stopped so). In a second terminal:
     export KUBECONFIG=$kubeconfig PATH=$KIT_BIN:\$PATH
     kubectl get pods -l app=zonespread-example -o wide     # two on each of zonespread-a-1, -a-2, -a-3 (reference)
     kubectl get nodes -L topology.kubernetes.io/zone
     kubectl delete -f scheduler-plugin-example/config/examples/deployment.yaml   # from the repository root, when done
MSG
# shellcheck disable=SC2086 # CONTROLLER is a command and its arguments, ARGS are flags: split on purpose
KUBECONFIG="$out/kubeconfig" exec $controller --config="$out/scheduler-config.yaml" --secure-port=0 \
	${RECONCILER:+--reconciler="$RECONCILER"} -v="${V:-2}" ${ARGS:-}
