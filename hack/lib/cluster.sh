# lib/cluster.sh: the kit cluster's names and paths, and the helpers that reach it.
# Part of hack/lib.sh, which sources it; do not source it alone.

# KIT_CLUSTER is the cluster name; kwokctl names its context kwok-$KIT_CLUSTER, kind
# kind-$KIT_CLUSTER. `make test` uses a second one, controller-kit-test, so it never
# touches the cluster a learner is working with.
KIT_CLUSTER=${KIT_CLUSTER:-controller-kit}
# KIT_KUBECONFIG is the kit's own kubeconfig, written by local-up and kind-up alike.
# The run and test targets use $KUBECONFIG instead when a learner has set it.
if [ "$KIT_CLUSTER" = controller-kit ]; then
	KIT_KUBECONFIG="$KIT_OUT/kubeconfig"
else
	KIT_KUBECONFIG="$KIT_OUT/kubeconfig-$KIT_CLUSTER"
fi
# KWOK_WORKDIR is where kwokctl keeps cluster state, PKI, logs and pid files.
export KWOK_WORKDIR="$KIT_OUT/kwok"
# KIT_AUDIT_LOG is the local cluster's kube-apiserver audit log (hack/cluster/audit-policy.yaml
# says what it records), kept by kwokctl beside the components' other logs.
KIT_AUDIT_LOG="$KWOK_WORKDIR/clusters/$KIT_CLUSTER/logs/audit.log"
# KIT_CLUSTER_INFO is the file that tells programs about the local cluster: local-up.sh
# writes it each time it succeeds and local-down.sh removes it. It is a JSON object
# with the cluster's name, its kubectl context, the absolute paths of its kubeconfig
# and audit log, and its Kubernetes version (test/kittest's ClusterInfo reads it), so
# no program rebuilds these paths on its own.
KIT_CLUSTER_INFO="$KIT_OUT/cluster-$KIT_CLUSTER.json"
# KIT_MAKE_PREFIX is what a script puts before a make command it suggests, so
# that the command acts on the same cluster: KIT_CLUSTER=NAME and a space for a
# cluster not of the default name, else nothing.
KIT_MAKE_PREFIX=""
[ "$KIT_CLUSTER" = controller-kit ] || KIT_MAKE_PREFIX="KIT_CLUSTER=$KIT_CLUSTER "
# KIT_NODES is how many kwok fake nodes the local cluster gets (each takes 110 pods).
KIT_NODES=${KIT_NODES:-3}

# kit_kill_tree PID sends SIGTERM to PID and to every process below it, the
# deepest first, so that a test binary's controllers get their own SIGTERM (and
# shut down cleanly) even when the test binary dies before its cleanups run.
kit_kill_tree() {
	local child
	for child in $(pgrep -P "$1" 2>/dev/null); do kit_kill_tree "$child"; done
	kill -TERM "$1" 2>/dev/null || true
}

# kit_listening PORT succeeds when something accepts connections on 127.0.0.1:PORT.
kit_listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# kit_free_port prints a port on 127.0.0.1 that nothing listens on (for a process
# the kit starts beside the cluster: make debug's replica, make run-aggregated's
# server).
kit_free_port() {
	local p
	for p in $(shuf -i 20000-32000 -n 100); do
		if ! kit_listening "$p"; then
			echo "$p"
			return
		fi
	done
	kit_die "found no free port on 127.0.0.1 in 20000-32000"
}

# kit_listed NAME COMMAND... succeeds when COMMAND (such as `kwokctl get clusters`)
# prints NAME as a line of its own. It reads all of the output before searching
# it: under pipefail, `COMMAND | grep -q` fails now and then even on a match,
# when grep stops reading early and COMMAND dies of SIGPIPE.
kit_listed() {
	local name=$1 out
	shift
	out=$("$@" 2>/dev/null) || true
	grep -qx -- "$name" <<<"$out"
}

# kit_kind_node_image prints the name of the kit's own kind node image (make
# kind-node-image): not kindest/node, so it is never taken for kind's published
# image, and tagged with the kit's pinned Kubernetes version.
kit_kind_node_image() {
	local version
	version=$(kit_kube_version) || return 1
	echo "controller-kit.local/kind-node:$version"
}

# kit_kubectl runs the kit's own kubectl against the kit kubeconfig.
kit_kubectl() { "$KIT_BIN/kubectl" --kubeconfig "$KIT_KUBECONFIG" "$@"; }

# kit_impersonating_kubeconfig KUBECONFIG USER FILE writes FILE: the current
# context of KUBECONFIG acting as USER (the kubeconfig's "as:", what kubectl --as
# sets), so a program started with it has exactly the RBAC bound to USER, as in
# the e2e suites (kittest.ImpersonatingKubeconfig). For a ServiceAccount's user
# (system:serviceaccount:NAMESPACE:NAME) the API server adds its groups itself.
# --minify keeps the current context's one user, whom "as:" then impersonates;
# --flatten inlines its files. It fails when that context has no user.
# Start the program with FILE both as its --kubeconfig (or its configuration's
# kubeconfig) and as the KUBECONFIG of its environment: some programs read the
# variable before their flag (csi-provisioner v6.4.0 does), and the caller's
# KUBECONFIG would have them act as the caller.
kit_impersonating_kubeconfig() {
	local from=$1 user=$2 file=$3
	"$KIT_BIN/kubectl" --kubeconfig "$from" config view --raw --minify --flatten |
		sed "/^  user:\$/a\\    as: $user" >"$file"
	grep -q "^    as: $user\$" "$file" ||
		kit_die "could not write $file (no user in the current context of $from?)"
}

# kit_cluster_reachable KUBECONFIG succeeds when that kubeconfig's current context
# reaches an API server that answers /readyz within a few seconds.
kit_cluster_reachable() {
	[ -n "$1" ] && [ -x "$KIT_BIN/kubectl" ] &&
		"$KIT_BIN/kubectl" --kubeconfig "$1" --request-timeout=3s get --raw /readyz >/dev/null 2>&1
}

# kit_require_local_cluster ELSEWHERE fails unless the local cluster KIT_CLUSTER
# names is running (its KIT_CLUSTER_INFO is there), saying how to start it;
# ELSEWHERE ends the message: what to do on kind or a cluster of the learner's own,
# where no component can be swapped. Then it builds kit-component, the program
# that swaps the local cluster's components (kit_component).
kit_require_local_cluster() {
	if [ ! -f "$KIT_CLUSTER_INFO" ]; then
		kit_die "no local cluster called $KIT_CLUSTER is running ($KIT_CLUSTER_INFO is missing); start one with: ${KIT_MAKE_PREFIX}make local-up. Only the kit's local cluster runs components the kit can swap; $1"
	fi
	"$KIT_ROOT/hack/build-bins.sh" kit-component >/dev/null
}

# kit_component ARG... runs kit-component (hack/cluster/cmd/kit-component) on the
# local cluster KIT_CLUSTER names: `binary NAME` prints the binary the component
# runs, `use NAME BINARY` runs it on another and waits until it is healthy,
# `stop NAME` stops it.
kit_component() { "$KIT_BIN/kit-component" --name "$KIT_CLUSTER" "$@"; }

# kit_cluster_lock COMMAND takes the lock on the local cluster $KIT_CLUSTER that
# local-up.sh holds while it works, until the calling script exits; COMMAND (such
# as "make local-up") is what the lock's note says holds it. When another command
# holds it, it names that command (its pid, command line and start) and returns 1
# at once, having changed nothing: two creations of one cluster at once would
# both fail (the second one ends in "no context exists with the name ..."). A
# script that a holder runs (local-up.sh runs local-down.sh) sees the lock is its
# parent's and goes on. The lock is fd 8 on $KIT_OUT/.cluster-NAME.lock: a
# process the holder leaves running must not keep it (kwokctl's components), so
# the holder runs them with 8>&-. Where there is no flock (util-linux), nothing is
# locked.
kit_cluster_lock() {
	[ "${KIT_CLUSTER_LOCKED:-}" != "$KIT_CLUSTER" ] || return 0
	command -v flock >/dev/null || return 0
	mkdir -p "$KIT_OUT"
	local note="$KIT_OUT/.cluster-$KIT_CLUSTER.holder"
	exec 8>"$KIT_OUT/.cluster-$KIT_CLUSTER.lock"
	if ! flock -n 8; then
		exec 8>&-
		kit_error "local cluster '$KIT_CLUSTER' is being started by another command: $(cat "$note" 2>/dev/null || echo 'its note is missing')." \
			"Nothing was changed. Wait for it to end (or stop it), then run ${KIT_MAKE_PREFIX}make local-up again: it says so when the cluster is already running"
		return 1
	fi
	printf '%s (pid %s, since %s)\n' "$1" "$$" "$(date '+%H:%M:%S')" >"$note"
	export KIT_CLUSTER_LOCKED=$KIT_CLUSTER
}
