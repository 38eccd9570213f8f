#!/usr/bin/env bash
# run-aggregated.sh is make run-aggregated's body (lesson 6): it runs
# k8s.io/sample-apiserver (bin/sample-apiserver, built on first use from the
# pinned module hack/controlplane) as an aggregated API server beside the local
# cluster, in the foreground, and registers it with the cluster's kube-apiserver,
# so that the group wardle.example.com (Flunders, Fischers) is served through it:
#
#   kubectl get flunders      (kube-apiserver's aggregator proxies it to the server)
#
# The server is a local process on a free port of 127.0.0.1 and stores its
# objects in the cluster's etcd under a prefix of its own,
# /registry/wardle.example.com (kube-apiserver's are under /registry/<resource>).
# It runs as the ServiceAccount wardle/apiserver and delegates the
# authentication and authorization of each request to kube-apiserver; it trusts
# the user that the aggregator's front proxy names in its X-Remote-User headers
# because the cluster's kube-apiserver publishes its --requestheader-* flags
# (hack/cluster/kwokctl.yaml) in kube-system/extension-apiserver-authentication.
# What it applies: config/sample-apiserver.yaml (the server's
# ServiceAccount and RBAC, the Service of type ExternalName localhost) before
# the server starts, config/sample-apiserver-apiservices.yaml (the
# APIServices, with the server's port) once it listens.
#
# Its files are in _output/aggregated/CLUSTER/: the server's log
# (sample-apiserver.log), its audit log (audit.log, every request to the group
# at level Metadata, with the user the server saw), its certificates and state
# (run.env: PID, the server's; SCRIPT, this script's; PORT). Ctrl-C (SIGINT or
# SIGTERM) deletes the APIServices first, so that discovery is never left
# naming a group nobody serves, then stops the server, and exits 0. A run
# killed without that cleanup leaves both; the next run removes them first.
#
# Exit status: 0 stopped by Ctrl-C; 1 the server failed to start or exited (its
# log's last lines shown); 2 no local cluster, or one made without the
# --requestheader-* flags; 3 make run-aggregated already runs for the cluster
# (named, with how to stop it; nothing was changed).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../hack/lib.sh"
KIT_ME="make run-aggregated"
KIT_DIE_STATUS=2

dir="$KIT_OUT/aggregated/$KIT_CLUSTER"
state="$dir/run.env"
log="$dir/sample-apiserver.log"
audit="$dir/audit.log"
manifest="$KIT_ROOT/apiserver-example/config/sample-apiserver.yaml"
registration="$KIT_ROOT/apiserver-example/config/sample-apiserver-apiservices.yaml"
apiservices=(v1beta1.wardle.example.com v1alpha1.wardle.example.com)

# alive PID succeeds when PID runs (and is no zombie).
alive() {
	local st
	[ -n "$1" ] || return 1
	st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ]
}
# state_get NAME prints NAME's value in the state file (run.env).
state_get() { sed -n "s/^$1=//p" "$state" 2>/dev/null | head -n1; }

[ -f "$KIT_CLUSTER_INFO" ] ||
	kit_die "no local cluster called $KIT_CLUSTER is running ($KIT_CLUSTER_INFO is missing); start one with: ${KIT_MAKE_PREFIX}make local-up. The server runs on this machine's loopback, which only the local cluster's kube-apiserver reaches (a kind cluster's runs in a container)"
etcd=$(sed -n 's|^ *"etcdEndpoint": "\(.*\)",\{0,1\}$|\1|p' "$KIT_CLUSTER_INFO")
[ -n "$etcd" ] || kit_die "$KIT_CLUSTER_INFO names no etcdEndpoint: run ${KIT_MAKE_PREFIX}make local-up once more (it rewrites the file and leaves the running cluster as it is)"

# One copy per cluster (hack/lib/hold.sh), held by this script alone: its
# server is started without it, so a run killed -9 leaves the hold free and
# the next run cleans up after it.
kit_hold sample-apiserver@ "${KIT_MAKE_PREFIX}make run-aggregated" \
	"register the same APIServices, each pointing them at its own server, and delete them when either stops" ||
	exit "$KIT_HOLD_REFUSED"
if [ -f "$state" ]; then
	# This script was killed without its cleanup: its APIServices and its
	# server may be left.
	kit_log "removing what a killed make run-aggregated left: its APIServices, its server (pid $(state_get PID))"
	kit_kubectl delete apiservice "${apiservices[@]}" --ignore-not-found >/dev/null || true
	if alive "$(state_get PID)"; then kill -KILL "$(state_get PID)" 2>/dev/null || true; fi
	rm -f "$state"
fi

# A cluster made before kwokctl.yaml had the --requestheader-* flags: the server
# would take every proxied request for the proxy's own user, kwok-admin.
if [ -z "$(kit_kubectl -n kube-system get configmap extension-apiserver-authentication \
	-o 'jsonpath={.data.requestheader-client-ca-file}' 2>/dev/null)" ]; then
	kit_die "the cluster $KIT_CLUSTER's kube-apiserver runs without --requestheader-client-ca-file (kube-system/extension-apiserver-authentication has no requestheader-client-ca-file), so an aggregated server could not trust the user it proxies for; the cluster was made by an older make local-up: ${KIT_MAKE_PREFIX}make local-down local-up"
fi

pid=
# stop [STATUS] deletes the APIServices, then stops the server and exits.
stop() {
	local status=${1:-0}
	trap - INT TERM
	kit_cleanup_outlives_output
	kit_log "deleting the APIServices ${apiservices[*]}"
	kit_kubectl delete apiservice "${apiservices[@]}" --ignore-not-found --wait=false >/dev/null || true
	if alive "$pid"; then
		kit_log "stopping sample-apiserver (pid $pid)"
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 25); do alive "$pid" || break; sleep 0.2; done
		# It waits up to a minute for the watches proxied to it to end
		# (kube-controller-manager's garbage collector and quota controllers
		# watch every resource); a second signal makes it exit at once.
		if alive "$pid"; then
			kit_log "sample-apiserver still waits for the watches proxied to it to end; stopping it at once"
			kill -TERM "$pid" 2>/dev/null || true
			for _ in $(seq 25); do alive "$pid" || break; sleep 0.2; done
		fi
		if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
		wait "$pid" 2>/dev/null || true
	fi
	rm -f "$state"
	kit_log "stopped; discovery no longer lists wardle.example.com"
	exit "$status"
}
# failed SAYS names why the server is not serving, shows its log's last lines,
# and stops (exit 1).
failed() {
	kit_error "$1; the last lines of its log ($log):"
	tail -n 5 "$log" | cut -c1-400 >&2
	stop 1
}
# From here on, Ctrl-C (or SIGTERM) stops what has been started, and nothing else.
trap 'stop 0' INT TERM

"$KIT_ROOT/hack/build-bins.sh" sample-apiserver kubectl
mkdir -p "$dir"

# The server's kubeconfig: the cluster's, impersonating its ServiceAccount (as
# run-scheduler.sh does), for its three clients: the core API (--kubeconfig),
# TokenReviews (--authentication-kubeconfig), SubjectAccessReviews
# (--authorization-kubeconfig). Its environment's KUBECONFIG names the same
# file, so that no client of it that reads the variable instead of its flag
# acts as the cluster's admin.
kit_impersonating_kubeconfig "$KIT_KUBECONFIG" system:serviceaccount:wardle:apiserver "$dir/kubeconfig"
cat >"$dir/audit-policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  resources:
  - group: wardle.example.com
EOF

port=$(kit_free_port)
kit_log "applying the server's ServiceAccount, RBAC and Service (${manifest#"$KIT_ROOT"/})"
kit_kubectl apply -f "$manifest" >/dev/null

kit_log "starting sample-apiserver on 127.0.0.1:$port (etcd $etcd, prefix /registry/wardle.example.com; log ${log#"$KIT_ROOT"/})"
# In a session of its own: Ctrl-C reaches this script alone, which removes the
# APIServices before it stops the server. Without the cluster's lock (fd 8) or
# this script's hold; its environment's KUBECONFIG is its own kubeconfig too, so
# it acts as its identity whichever of flag and variable it reads.
(kit_hold_close && KUBECONFIG="$dir/kubeconfig" exec setsid "$KIT_BIN/sample-apiserver" \
	--etcd-servers="$etcd" --etcd-prefix=/registry/wardle.example.com \
	--bind-address=127.0.0.1 --secure-port="$port" --cert-dir="$dir/certs" \
	--kubeconfig="$dir/kubeconfig" \
	--authentication-kubeconfig="$dir/kubeconfig" --authorization-kubeconfig="$dir/kubeconfig" \
	--audit-policy-file="$dir/audit-policy.yaml" --audit-log-path="$audit") \
	>"$log" 2>&1 </dev/null 8>&- &
pid=$!
printf 'PID=%s\nSCRIPT=%s\nPORT=%s\n' "$pid" "$$" "$port" >"$state"

# Registered once it listens on its port; the APIServices' Available condition,
# below, is the proof that it serves.
for _ in $(seq 120); do
	alive "$pid" || failed "sample-apiserver exited while it started"
	if kit_listening "$port"; then break; fi
	sleep 0.5
done
kit_listening "$port" || failed "sample-apiserver did not listen on 127.0.0.1:$port within 60 s"

kit_log "registering APIServices ${apiservices[*]} (Service wardle/api: ExternalName localhost, port $port)"
sed "s/@PORT@/$port/" "$registration" | kit_kubectl apply -f - >/dev/null
# The aggregator's availability controller marks an APIService Available once
# the server answers its discovery document through the Service.
if ! kit_kubectl wait --for=condition=Available --timeout=60s "${apiservices[@]/#/apiservice/}" >/dev/null 2>&1; then
	failed "the APIServices did not become Available within 60 s ($(kit_kubectl get apiservice "${apiservices[0]}" -o 'jsonpath={.status.conditions[0].message}' 2>/dev/null))"
fi
kit_log "wardle.example.com is served through the cluster's kube-apiserver"

cat <<MSG
>> sample-apiserver runs as an aggregated API server (Ctrl-C stops it and removes its APIServices). In a second terminal:
     eval "\$(${KIT_MAKE_PREFIX}make env)"
     kubectl get apiservices | grep wardle
     kubectl get flunders -A
     tail -f ${audit#"$KIT_ROOT"/}    # each request it serves, with the user it saw
MSG
while alive "$pid"; do
	# wait returns early when a trapped signal arrives; the trap then stops.
	wait "$pid" 2>/dev/null || true
done
failed "sample-apiserver exited"
