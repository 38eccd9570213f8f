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
# A command that holds something (make debug's make run, which may start the
# cluster; hack/lib/hold.sh) must not pass its holds to the cluster's components.
kit_hold_close

# Prints what it builds (a cold build takes 10-15 minutes on 2 cores); silent when all is there.
"$KIT_ROOT/hack/build-bins.sh" cluster

# kwokctl's components outlive this script: they must not keep the cluster's lock
# (fd 8) or the lock on creating clusters (fd 9, below).
kwokctl() { "$KIT_BIN/kwokctl" "$@" 8>&- 9>&-; }
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
	-e "s|@PKI@|$KWOK_WORKDIR/clusters/$KIT_CLUSTER/pki|g" \
	"$KIT_ROOT/hack/cluster/kwokctl.yaml" >"$config"

# kwokctl picks each component's port as one that is free when it looks, so two
# clusters created at once (make test starts several; so does a second clone of
# the kit on the same machine) can pick the same one, and the component that
# binds second exits. One creation at a time on the machine, across processes
# and clones: the lock is per user, not per clone, and held until the fake
# nodes are Ready, by when every component has bound its ports. (flock is
# util-linux's; where there is none, creations are not serialised.)
create_lock=${XDG_RUNTIME_DIR:-${TMPDIR:-/tmp}}/controller-kit-$(id -u).kwokctl-create.lock
have_flock=false
if command -v flock >/dev/null && { exec 9>>"$create_lock"; } 2>/dev/null; then
	have_flock=true
elif command -v flock >/dev/null; then
	# Not writable there (another user's file): one creation at a time in this clone.
	exec 9>>"$KIT_OUT/.kwokctl-create.lock"
	have_flock=true
fi

# dead_components prints, one per line, each component of the cluster whose
# process is gone (or a zombie): kwokctl records their pids under pids/.
dead_components() {
	local f pid state
	for f in "$KWOK_WORKDIR/clusters/$KIT_CLUSTER/pids/"*.pid; do
		[ -e "$f" ] || continue
		pid=$(cat "$f" 2>/dev/null) || pid=
		state=$(ps -o stat= -p "${pid:-0}" 2>/dev/null) || state=
		case "$state" in '' | Z*) basename "$f" .pid ;; esac
	done
}

# create_cluster creates the cluster and its fake nodes, and waits for the nodes
# to be Ready. It returns 0 when every component still runs, 2 as soon as one
# has exited (named, with the last lines of its log), and stops the script on
# anything else.
create_cluster() {
	local created=0 kwokctl_pid
	kit_log "creating local cluster '$KIT_CLUSTER' (kwokctl --runtime binary, 127.0.0.1 only)"
	# Ctrl-C would reach kwokctl only in the foreground, and it then fails
	# anyway: it is stopped here, and what it had started removed, so the next
	# local-up starts clean.
	interrupted=false
	trap 'interrupted=true' INT TERM
	if $have_flock; then flock 9; fi
	# kwokctl waits up to 3 minutes for a cluster to answer, even when one of its
	# components exited in its first second (a port taken): it runs in the
	# background while the components are watched, and is stopped at once then.
	kwokctl create cluster --name "$KIT_CLUSTER" --config "$config" \
		--kubeconfig "$KIT_KUBECONFIG" --wait 3m --quiet-pull >"$create_log" 2>&1 &
	kwokctl_pid=$!
	while kill -0 "$kwokctl_pid" 2>/dev/null; do
		if $interrupted || [ -n "$(dead_components)" ]; then
			kill "$kwokctl_pid" 2>/dev/null || true
			break
		fi
		sleep 1
	done
	wait "$kwokctl_pid" || created=$?
	if $interrupted; then
		kit_log "interrupted: deleting the local cluster '$KIT_CLUSTER' that was being created"
		"$KIT_ROOT/hack/cluster/local-down.sh" >/dev/null 2>&1 || true
		exit 130
	fi
	trap - INT TERM
	report_dead && return 2
	[ "$created" -eq 0 ] || {
		cat "$create_log" >&2
		kit_error "kwokctl could not create the cluster; its output is above, component logs under $KWOK_WORKDIR/clusters/$KIT_CLUSTER/logs"
		exit 1
	}
	# (set -e does not reach into a function called as a condition: each step
	# says itself what failed.)
	kit_kubectl config use-context "$ctx" >/dev/null || exit 1

	kit_log "adding $KIT_NODES kwok fake nodes"
	kwokctl scale node --name "$KIT_CLUSTER" --replicas "$KIT_NODES" >>"$create_log" 2>&1 || {
		report_dead && return 2
		kit_error "kwokctl could not add the fake nodes; its output: $create_log"
		exit 1
	}
	# kwok-controller makes the nodes Ready; when it has exited they never are.
	local ready=0
	for _ in $(seq 24); do
		[ -z "$(dead_components)" ] || break
		if kit_kubectl wait --for=condition=Ready node --all --timeout=5s >/dev/null 2>&1; then
			ready=1
			break
		fi
	done
	if $have_flock; then flock -u 9; fi
	report_dead && return 2
	[ "$ready" -eq 1 ] || {
		kit_error "the $KIT_NODES kwok fake nodes were not Ready within 2 minutes, though every component runs; kubectl get nodes shows them, component logs are under $KWOK_WORKDIR/clusters/$KIT_CLUSTER/logs"
		exit 1
	}
}

# report_dead succeeds, having named each component of the cluster that has
# exited with the last lines of its log, when there is one.
report_dead() {
	local dead c
	dead=$(dead_components)
	[ -n "$dead" ] || return 1
	for c in $dead; do
		kit_log "$c exited while the cluster started; the last lines of its log ($KWOK_WORKDIR/clusters/$KIT_CLUSTER/logs/$c.log):"
		tail -n 3 "$KWOK_WORKDIR/clusters/$KIT_CLUSTER/logs/$c.log" 2>/dev/null | cut -c1-400 >&2 || true
	done
}

attempt=1
until create_cluster; do
	# Most often a port that another process took between kwokctl's pick and
	# the component's start ("address already in use" above): new ports fix it.
	if [ "$attempt" -ge 2 ]; then
		kit_error "a component of local cluster '$KIT_CLUSTER' exited twice while the cluster started (see above); the cluster is left for you to read its logs. ${KIT_MAKE_PREFIX}make local-down deletes it"
		exit 1
	fi
	kit_log "deleting the cluster and creating it once more, with ports picked again"
	"$KIT_ROOT/hack/cluster/local-down.sh" >/dev/null
	attempt=2
done

# kube-controller-manager gives up at start when the API server does not answer
# its health check in time (seen on a 2-core machine under heavy load), and
# kwokctl does not start it again: such a cluster makes no ServiceAccount, no
# ReplicaSet and no Pod, and every suite times out. The proof that its
# controllers run is the default namespace's ServiceAccount, which its
# serviceaccount controller makes; when that does not come and the process has
# exited, it is started once more (kit-component, as make kube-restart does).
kcm_log="$KWOK_WORKDIR/clusters/$KIT_CLUSTER/logs/kube-controller-manager.log"
# controllers_run waits up to 60 s for the ServiceAccount: 0 when it is there,
# 2 as soon as kube-controller-manager's process is gone (dead_components), 1
# after 60 s.
controllers_run() {
	local i
	for i in $(seq 60); do
		kit_kubectl -n default get serviceaccount default >/dev/null 2>&1 && return 0
		[[ " $(dead_components | tr '\n' ' ') " != *" kube-controller-manager "* ]] || return 2
		sleep 1
	done
	return 1
}
ran=0
controllers_run || ran=$?
if [ "$ran" -eq 2 ]; then
	report_dead
	kit_log "starting kube-controller-manager again"
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
