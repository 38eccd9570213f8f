#!/usr/bin/env bash
# local-up.sh starts the kit's Docker-free local cluster: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler and kwok fake nodes, all built from pinned
# Go modules and run by kwokctl on 127.0.0.1. Idempotent: on a healthy running
# cluster it says so and exits 0. The kubeconfig goes to _output/kubeconfig.
#
# Programs learn what it did from a file and its exit status, never from its output:
#   - each time it succeeds, for a new cluster or one already running, it writes
#     _output/cluster-<KIT_CLUSTER>.json (KIT_CLUSTER_INFO in lib.sh), a JSON object
#     with "name", "context", "kubeconfig", "auditLog", "kubeVersion", and the
#     "etcdEndpoint" and "etcdPrefix" its kube-apiserver stores objects under;
#   - with KIT_FRESH=1 it creates a new cluster or nothing: when the cluster already
#     exists, running or not, it leaves it as it is and exits 3.
# Exit status: 0 the cluster is up; 3 KIT_FRESH=1 and the cluster exists; 1 any failure.
set -Eeuo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# exit_cluster_exists is the exit status under KIT_FRESH=1 when the cluster exists.
readonly exit_cluster_exists=3
# Any failure exits 1, so that exit status 3 keeps its one meaning (-E above makes
# the trap fire inside functions too).
trap 'exit 1' ERR

# One local-up of a cluster at a time: a second one says which command is at it
# and exits 1 at once, changing nothing.
kit_cluster_lock "${KIT_MAKE_PREFIX}make local-up" || exit 1

# Prints what it builds (a cold build takes 10-15 minutes on 2 cores); silent when all is there.
"$KIT_ROOT/hack/build-bins.sh" cluster

# kwokctl's components outlive this script: they must not keep the cluster's lock (fd 8).
kwokctl() { "$KIT_BIN/kwokctl" "$@" 8>&-; }
ctx="kwok-$KIT_CLUSTER"
kube_version=$(kit_kube_version)

# json_string S prints S as a JSON string: quotes and backslashes escaped (the
# kit's names and paths hold no control characters).
json_string() {
	local s=${1//\\/\\\\}
	s=${s//\"/\\\"}
	printf '"%s"' "$s"
}

# apiserver_flag NAME prints the value of the kube-apiserver's --NAME= in the
# configuration kwokctl ran the cluster with (kwok.yaml), such as etcd-servers.
apiserver_flag() {
	sed -n "s|^ *- --$1=||p" "$KWOK_WORKDIR/clusters/$KIT_CLUSTER/kwok.yaml" | head -n 1
}

# write_cluster_info writes $KIT_CLUSTER_INFO for the running cluster. It writes a
# temporary file first and renames it, so a reader never sees half of one.
write_cluster_info() {
	cat >"$KIT_CLUSTER_INFO.tmp" <<JSON
{
  "name": $(json_string "$KIT_CLUSTER"),
  "context": $(json_string "$ctx"),
  "kubeconfig": $(json_string "$KIT_KUBECONFIG"),
  "auditLog": $(json_string "$KIT_AUDIT_LOG"),
  "kubeVersion": $(json_string "$kube_version"),
  "etcdEndpoint": $(json_string "$(apiserver_flag etcd-servers)"),
  "etcdPrefix": $(json_string "$(apiserver_flag etcd-prefix)")
}
JSON
	mv "$KIT_CLUSTER_INFO.tmp" "$KIT_CLUSTER_INFO"
}

if kit_listed "$KIT_CLUSTER" kwokctl get clusters; then
	if [ "${KIT_FRESH:-}" = 1 ]; then
		kit_error "KIT_FRESH=1, and local cluster '$KIT_CLUSTER' already exists; it is left as it is (delete it with hack/cluster/local-down.sh first)"
		exit "$exit_cluster_exists"
	fi
	if kit_kubectl --context "$ctx" --request-timeout=3s get --raw /readyz >/dev/null 2>&1; then
		kit_log "local cluster '$KIT_CLUSTER' is already running; nothing to do"
		kit_kubectl config use-context "$ctx" >/dev/null
		mkdir -p "$KIT_OUT"
		write_cluster_info
		exit 0
	fi
	# kwokctl stop+start leaves kwok's node leases stuck for minutes; recreate instead.
	kit_log "local cluster '$KIT_CLUSTER' exists but does not answer; deleting it to recreate"
	"$KIT_ROOT/hack/cluster/local-down.sh"
fi

mkdir -p "$KIT_OUT"
config="$KIT_OUT/kwokctl-$KIT_CLUSTER.yaml"
create_log="$KIT_OUT/kwokctl-create-$KIT_CLUSTER.log"
sed -e "s|@BIN@|$KIT_BIN|g" -e "s|@HACK@|$KIT_ROOT/hack/cluster|g" -e "s|@KUBE_VERSION@|$kube_version|g" \
	"$KIT_ROOT/hack/cluster/kwokctl.yaml" >"$config"

kit_log "creating local cluster '$KIT_CLUSTER' (kwokctl --runtime binary, 127.0.0.1 only)"
# Ctrl-C reaches kwokctl too, which then fails: say so plainly (not kwokctl's
# log) and remove what it had started, so the next local-up starts clean.
interrupted=false
trap 'interrupted=true' INT TERM
created=0
# kwokctl picks each component's port as one that is free when it looks, so two
# clusters created at once (make test starts several) can pick the same one and
# one of them never gets ready. One creation at a time, across processes: the
# lock is released when this script exits, or below once the ports are bound.
# (flock is util-linux's; where there is none, creations are not serialised.)
have_flock=false
if command -v flock >/dev/null; then
	have_flock=true
	exec 9>"$KIT_OUT/.kwokctl-create.lock"
	flock 9
fi
kwokctl create cluster --name "$KIT_CLUSTER" --config "$config" \
	--kubeconfig "$KIT_KUBECONFIG" --wait 3m --quiet-pull >"$create_log" 2>&1 || created=$?
if $have_flock; then flock -u 9; fi
if $interrupted; then
	kit_log "interrupted: deleting the local cluster '$KIT_CLUSTER' that was being created"
	"$KIT_ROOT/hack/cluster/local-down.sh" >/dev/null 2>&1 || true
	exit 130
fi
[ "$created" -eq 0 ] || {
	cat "$create_log" >&2
	kit_error "kwokctl could not create the cluster; its output is above, component logs under $KWOK_WORKDIR/clusters/$KIT_CLUSTER/logs"
	exit 1
}
trap - INT TERM
kit_kubectl config use-context "$ctx" >/dev/null

kit_log "adding $KIT_NODES kwok fake nodes"
kwokctl scale node --name "$KIT_CLUSTER" --replicas "$KIT_NODES" >>"$create_log" 2>&1
kit_kubectl wait --for=condition=Ready node --all --timeout=2m >/dev/null

# kube-controller-manager gives up at start when the API server does not answer
# its health check in time (seen on a 2-core machine under heavy load), and
# kwokctl does not start it again: such a cluster makes no ServiceAccount, no
# ReplicaSet and no Pod, and every suite times out. The proof that its
# controllers run is the default namespace's ServiceAccount, which its
# serviceaccount controller makes; when that does not come and the process has
# exited, it is started once more (kit-component, as make kube-restart does).
kcm_log="$KWOK_WORKDIR/clusters/$KIT_CLUSTER/logs/kube-controller-manager.log"
# controllers_run waits up to 60 s for the ServiceAccount: 0 when it is there,
# 2 as soon as kube-controller-manager's process is gone, 1 after 60 s.
controllers_run() {
	local i
	for i in $(seq 60); do
		kit_kubectl -n default get serviceaccount default >/dev/null 2>&1 && return 0
		pgrep -f "$KWOK_WORKDIR/clusters/$KIT_CLUSTER/bin/kube-controller-manager " >/dev/null || return 2
		sleep 1
	done
	return 1
}
ran=0
controllers_run || ran=$?
if [ "$ran" -eq 2 ]; then
	kit_log "kube-controller-manager exited while the cluster started (its last lines below; log: $kcm_log); starting it again"
	tail -n 3 "$kcm_log" >&2 || true
	# Stopped first: its exited process may linger as a zombie, which kwokctl
	# takes for a running one.
	"$KIT_BIN/kit-component" --name "$KIT_CLUSTER" stop kube-controller-manager >>"$create_log" 2>&1
	"$KIT_BIN/kit-component" --name "$KIT_CLUSTER" start kube-controller-manager >>"$create_log" 2>&1
	ran=0
	controllers_run || ran=$?
fi
if [ "$ran" -ne 0 ]; then
	kit_error "kube-controller-manager made no ServiceAccount in the default namespace within 60 s, so no Pod could be made either; its log: $kcm_log"
	exit 1
fi

write_cluster_info
kit_log "local cluster ready: $(kit_kubectl version -o json | sed -n 's/.*"gitVersion": "\(v[^"]*\)".*/\1/p' | tail -1), $KIT_NODES Ready nodes"
# Every later command needs the same cluster name: say it with it.
cat <<MSG

  kubeconfig: $KIT_KUBECONFIG
  use it from your shell:   eval "\$(${KIT_MAKE_PREFIX}make env)"   then   kubectl get nodes
  stop it:                  ${KIT_MAKE_PREFIX}make local-down
MSG
