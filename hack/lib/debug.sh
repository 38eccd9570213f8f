# lib/debug.sh: what make debug's scripts share: hack/debug.sh and the scripts of a
# lesson's own folder that a debug entry of its lesson file names as its start
# (kittest.LessonDebug), such as a replica run beside the cluster. Not part of
# hack/lib.sh: source it after lib.sh, in those scripts only. It defines names and
# functions and starts no program.
#
# State: $KIT_OUT/debug/<cluster>/<name>.env for what runs in a cluster,
# $KIT_OUT/debug/<name>.env for a process run in the foreground (PORT, BINARY, and
# what each start adds), written by debug and removed by undebug; lesson 4's
# debugger test reads them.

# PORT is delve's port on 127.0.0.1 (make debug's PORT=, else the entry's own).
PORT=${PORT:-}
KUBE_SRC=${KUBE_SRC:-$KIT_OUT/kubernetes}
DEBUG_DIR="$KIT_OUT/debug/$KIT_CLUSTER"
# MODULE_ROOTS are the first elements of the module paths the components are
# built from: -trimpath names their files ROOT/...@version/..., which the
# substitute-path rules map to the module cache (check -launch-json writes the
# same into .vscode/launch.json, reading them here).
MODULE_ROOTS="k8s.io sigs.k8s.io github.com go.etcd.io go.opentelemetry.io golang.org google.golang.org gopkg.in cel.dev"
DLV="$KIT_BIN/dlv"

check_port() {
	case "$PORT" in '' | *[!0-9]*) kit_die "PORT=$PORT is not a port number; choose one such as PORT=2346" ;; esac
	[ "$PORT" -ge 1024 ] && [ "$PORT" -le 65535 ] || kit_die "PORT=$PORT is outside 1024-65535; choose one such as PORT=2346"
}

# listening PORT succeeds when something accepts connections on 127.0.0.1:PORT
# (lib.sh's kit_listening).
listening() { kit_listening "$1"; }

# require_port_free fails when 127.0.0.1:PORT is taken, naming what holds it.
require_port_free() {
	listening "$PORT" || return 0
	local who="" f
	who=$(ss -ltnpH "sport = :$PORT" 2>/dev/null | grep -o 'users:(("[^"]*",pid=[0-9]*' | head -n1 | sed 's/users:(("\([^"]*\)",pid=\([0-9]*\)/\1, pid \2/') || true
	for f in "$KIT_OUT"/debug/*/*.env; do
		[ -f "$f" ] || continue
		if [ "$(state_get "$f" PORT)" = "$PORT" ]; then
			who="delve of $(basename "$f" .env) in the cluster $(basename "$(dirname "$f")")"
		fi
	done
	kit_die "port 127.0.0.1:$PORT is in use${who:+ (by $who)}; choose another, such as: ${KIT_MAKE_PREFIX}make debug WHAT=$NAME PORT=$((PORT + 10)) (and attach to that port)"
}

# hold_port holds delve's port for make debug WHAT=$NAME (hack/lib/hold.sh; the
# port is the machine's, whichever cluster NAME runs in) from before its build
# until delve listens, or for as long as what it starts keeps the hold; a second
# make debug on the port, for this cluster or another, is refused at once
# (exit 3), naming the first. Then the port must be free (require_port_free).
hold_port() {
	kit_hold "port-$PORT" "${KIT_MAKE_PREFIX}make debug WHAT=$NAME" \
		"both start delve on 127.0.0.1:$PORT, and the second's would fail to listen" \
		"${KIT_MAKE_PREFIX}make undebug WHAT=$NAME (or Ctrl-C in its terminal, for one in the foreground)" ||
		exit "$KIT_HOLD_REFUSED"
	require_port_free
}

# hold_run TIER WHAT holds what TIER's make run holds on the cluster (its key,
# TIER, alone: the debug copy runs without leader election), so that a make run
# of TIER, or another make debug of it, refuses while this one runs, and this one
# refuses at once, before its build, while one of those runs. WHAT is the make
# command that runs TIER, as a user knows it.
hold_run() {
	kit_hold "$1@" "${KIT_MAKE_PREFIX}make debug WHAT=$NAME" \
		"run $1 twice on one cluster (the copy under delve takes no Lease), each acting on what the other acts on" ||
		exit "$KIT_HOLD_REFUSED"
}

# state_get FILE KEY prints KEY's value from a state file.
state_get() { sed -n "s/^$2=//p" "$1" | head -n1; }

# pids_of BINARY prints the pids of every process running BINARY (its path as
# /proc/PID/exe shows it, "(deleted)" when it was rebuilt meanwhile).
pids_of() {
	local exe p
	for p in /proc/[0-9]*; do
		exe=$(readlink "$p/exe" 2>/dev/null) || continue
		[ "$exe" = "$1" ] || [ "$exe" = "$1 (deleted)" ] || continue
		echo "${p#/proc/}"
	done
}

# alive PID succeeds while PID runs (a zombie, dead but not yet reaped, does not).
alive() {
	local state
	state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$state" ] && [ "$state" != Z ]
}

# kill_debuggee BINARY kills every process running BINARY and waits until they
# are gone (delve's death does not end the process it debugged).
kill_debuggee() {
	local pids p i
	pids=$(pids_of "$1")
	[ -n "$pids" ] || return 0
	for p in $pids; do kill -KILL "$p" 2>/dev/null || true; done
	for i in $(seq 50); do
		pids=""
		for p in $(pids_of "$1"); do if alive "$p"; then pids+=" $p"; fi; done
		[ -n "$pids" ] || return 0
		sleep 0.2
	done
	kit_die "could not kill$pids ($1)"
}

# stop_delve_of BINARY ends each delve of this checkout that debugs BINARY (its
# command line names it), so that what runs it in the foreground (make debug's
# make run or make run-csi) sees it exit and ends too.
stop_delve_of() {
	local p
	for p in $(pids_of "$DLV"); do
		tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | grep -qxF -- "$1" || continue
		kill -TERM "$p" 2>/dev/null || true
	done
}

# require_cluster fails unless the local cluster KIT_CLUSTER names is running
# (lib.sh's kit_require_local_cluster), and builds kit-component.
require_cluster() {
	kit_require_local_cluster "on kind or a cluster of your own, debug one of the kit's controllers instead, which run on any cluster (make help lists what make debug takes)"
}

# source_dir prints where the debug build's Kubernetes sources are on this
# machine: the learner's copy when there is one, else the module cache.
source_dir() {
	if [ -d "$KUBE_SRC/.git" ]; then
		echo "$KUBE_SRC"
	else
		(cd "$KIT_ROOT/hack/controlplane" && GOWORK=off go list -m -f '{{.Dir}}' k8s.io/kubernetes)
	fi
}

# attach_help NAME SOURCE BREAKPOINT prints how to attach to delve on PORT, with
# BREAKPOINT as an example of delve commands, and writes the substitute-path rules
# for `dlv connect --init` (the build's paths, which -trimpath makes
# module@version/..., to this machine's folders).
attach_help() {
	local name=$1 src=$2 example=${3:-} modcache init="$DEBUG_DIR/$1.dlv-init" KUBE_VERSION
	modcache=$(go env GOMODCACHE)
	KUBE_VERSION=$(kit_kube_version)
	mkdir -p "$DEBUG_DIR"
	{
		echo "# Written by hack/debug.sh: dlv connect 127.0.0.1:$PORT --init $init"
		echo "config substitute-path k8s.io/kubernetes@$KUBE_VERSION $src"
		local root
		for root in $MODULE_ROOTS; do echo "config substitute-path $root/ $modcache/$root/"; done
	} >"$init"
	cat <<EOF
    attach with the debugger's own client:  $DLV connect 127.0.0.1:$PORT --init ${init#"$KIT_ROOT"/}
      (then e.g.: ${example:+$example; }continue;
       leave with quit -c, which lets $name run on: a plain quit asks to kill delve, and answered n leaves $name halted)
    VS Code: Run and Debug, "attach: $name" (.vscode/launch.json; port $PORT)
    GoLand: Run | Edit Configurations | + | Go Remote, host 127.0.0.1, port $PORT
    sources: the binary names them k8s.io/kubernetes@$KUBE_VERSION/...; on this machine they are
      k8s.io/kubernetes@$KUBE_VERSION -> $src
      k8s.io/                 -> $modcache/k8s.io/ (client-go and the other staging modules)
    leave the debugger: ${KIT_MAKE_PREFIX}make undebug WHAT=$name
EOF
	if [ "$modcache" != "$HOME/go/pkg/mod" ]; then
		echo "    note: your module cache is not \$HOME/go/pkg/mod, which .vscode/launch.json assumes: change its substitutePath \"from\" to $modcache"
	fi
	if [ "$src" = "$KUBE_SRC" ]; then
		echo "    note: built from your copy: in VS Code pick \"attach: $name (your copy, _output/kubernetes)\""
	fi
}

