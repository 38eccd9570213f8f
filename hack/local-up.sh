#!/usr/bin/env bash
# local-up.sh starts the kit's Docker-free local cluster: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler and kwok fake nodes, all built from pinned
# Go modules and run by kwokctl on 127.0.0.1. Idempotent: on a healthy running
# cluster it says so and exits 0. The kubeconfig goes to _output/kubeconfig.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Prints what it builds (a cold build takes 10-15 minutes on 2 cores); silent when all is there.
"$KIT_ROOT/hack/build-bins.sh" cluster

kwokctl() { "$KIT_BIN/kwokctl" "$@"; }
ctx="kwok-$KIT_CLUSTER"

if kit_listed "$KIT_CLUSTER" kwokctl get clusters; then
	if kit_kubectl --context "$ctx" --request-timeout=3s get --raw /readyz >/dev/null 2>&1; then
		kit_log "local cluster '$KIT_CLUSTER' is already running; nothing to do"
		kit_kubectl config use-context "$ctx" >/dev/null
		exit 0
	fi
	# kwokctl stop+start leaves kwok's node leases stuck for minutes; recreate instead.
	kit_log "local cluster '$KIT_CLUSTER' exists but does not answer; deleting it to recreate"
	"$KIT_ROOT/hack/local-down.sh"
fi

mkdir -p "$KIT_OUT"
config="$KIT_OUT/kwokctl.yaml"
sed -e "s|@BIN@|$KIT_BIN|g" -e "s|@HACK@|$KIT_ROOT/hack|g" "$KIT_ROOT/hack/kwokctl.yaml" >"$config"

kit_log "creating local cluster '$KIT_CLUSTER' (kwokctl --runtime binary, 127.0.0.1 only)"
kwokctl create cluster --name "$KIT_CLUSTER" --config "$config" \
	--kubeconfig "$KIT_KUBECONFIG" --wait 3m --quiet-pull >"$KIT_OUT/kwokctl-create.log" 2>&1 || {
	cat "$KIT_OUT/kwokctl-create.log" >&2
	echo "local-up: kwokctl could not create the cluster; its output is above, component logs under $KWOK_WORKDIR/clusters/$KIT_CLUSTER/logs" >&2
	exit 1
}
kit_kubectl config use-context "$ctx" >/dev/null

kit_log "adding $KIT_NODES kwok fake nodes"
kwokctl scale node --name "$KIT_CLUSTER" --replicas "$KIT_NODES" >>"$KIT_OUT/kwokctl-create.log" 2>&1
kit_kubectl wait --for=condition=Ready node --all --timeout=2m >/dev/null

kit_log "local cluster ready: $(kit_kubectl version -o json | sed -n 's/.*"gitVersion": "\(v[^"]*\)".*/\1/p' | tail -1), $KIT_NODES Ready nodes"
if [ "$KIT_CLUSTER" = controller-kit ]; then
	cat <<MSG

  kubeconfig: $KIT_KUBECONFIG
  use it from your shell:   eval "\$(make env)"   then   kubectl get nodes
  stop it:                  make local-down
MSG
fi
