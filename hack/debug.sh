#!/usr/bin/env bash
# debug.sh is the body of lesson 4's debugger targets: a component of the local
# cluster, or one of the kit's own controllers, run under delve (bin/dlv, pinned
# in hack/delve) on a loopback port, and back; and of lesson 6's, a replica of
# the cluster's kube-apiserver under delve beside it.
#
#   hack/debug.sh debug NAME       make debug WHAT=NAME [PORT=...] [PKGS=...]
#   hack/debug.sh undebug NAME     make undebug WHAT=NAME
#   hack/debug.sh delve PORT BIN [ARG...]
#                                  run BIN under delve (what the debug builds
#                                  run as); the component's wrapper and the
#                                  tiers' run targets call it
#   hack/debug.sh smoke            make test's smoke: delve built, a debug build
#                                  of a small program stopped at a breakpoint
#   hack/debug.sh names            the names debug takes, their kind and port
#
# Exit codes: 0 done; 2 bad input or a failure, said on standard error; 3 (debug)
# NAME is under the debugger already, in this cluster (where to attach is said);
# 4 (debug, with KIT_DEBUG_CACHED=1) the debug build is not cached, and
# KIT_DEBUG_CACHED=1 says not to make it (kube-src.sh debug-build).
#
# A component (kube-controller-manager, kube-scheduler) is swapped in the
# running local cluster, through `kit-component use` as make kube-restart does:
# a debug build of it (bin/'s flags without -s -w, which strip the DWARF a
# debugger reads, and optimisation off for the packages PKGS names) from the
# learner's copy of the source (_output/kubernetes) when there is one, else
# from the pinned module, run by a wrapper script that kwokctl starts in the
# component's place. The wrapper runs delve with --headless --accept-multiclient
# --continue, so the component keeps serving while nobody is attached and an
# editor detaching never stops it, and adds --leader-elect=false: a component
# paused at a breakpoint would lose its Lease and exit.
#
# kube-apiserver (lesson 6) is not swapped: every client of the cluster, its
# controllers, scheduler and kwok included, would stop with it at a breakpoint.
# make debug runs a replica beside it instead: a debug build of it (optimisation
# off in the packages lesson 6 stops in) under delve, on the same etcd, with
# the cluster's own flags (kit-component args) but for its port (a free one on
# loopback), its own audit log and --endpoint-reconciler-type=none (so it never
# writes itself into the kubernetes Service's endpoints), started in the
# background, with a kubeconfig that points at it. Only the requests sent to
# that kubeconfig stop at its breakpoints. undebug stops delve, the replica and
# the watchdog, and removes what debug wrote.
#
# A tier's controller (workqueue-example, sample-controller,
# kubebuilder-guestbook) runs in the foreground, the way its make run runs it,
# built with optimisation off everywhere (-gcflags=all=-N -l: the first build
# recompiles client-go and all else it imports, minutes on 2 cores; later ones
# come from the build cache), on whatever cluster its run target uses (lesson
# 7's driver with the sidecars calling it: its make run is make run-csi).
#
# A CSI sidecar (csi-provisioner, lesson 7) runs in make run-csi's place, in the
# foreground: the driver and csi-attacher as make run-csi runs them, and a debug
# build of the sidecar (optimisation off everywhere, from hack/csi's pinned
# module) under delve in its place.
#
# delve does not kill the process it debugs when it dies, and kwokctl stops a
# component with SIGKILL to the pid it started (delve's). So `delve` leaves a
# watchdog beside delve that kills the debugged binary (found by its path,
# which is this cluster's own) as soon as delve has gone, however it went.
#
# The replica's debug build from the pinned module (no copy) is one for every
# cluster, $KIT_OUT/debug/pinned/kube-apiserver, copied to the cluster's own
# path when make debug starts it: make test's smoke of lesson 6 runs it when it
# is cached (KIT_DEBUG_CACHED=1), and never builds it.
#
# State: $KIT_OUT/debug/<cluster>/<name>.env (PORT, BINARY the debug build,
# PREVIOUS the binary the component ran before, SOURCE copy or module, WRAPPER;
# for a replica PID delve's pid, SERVE its API port, KUBECONFIG, LOG),
# written by debug and removed by undebug; $KIT_OUT/debug/<tier>.env (PORT,
# BINARY) for a tier's controller or a sidecar while it runs. Lesson 4's debugger test reads them.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
KIT_ME=debug
KIT_DIE_STATUS=2

# COMPONENTS are the local cluster's components make debug swaps: those that
# elect a leader (lib.sh's KIT_LEADER_COMPONENTS), which it runs with leader
# election off. TIERS are the kit's tiers (lib.sh's kit_tiers, in lesson order)
# whose controller it runs in the foreground: those whose Makefile starts it
# through $(CONTROLLER), as the tier contract has it (hack/README.md), so that
# make debug can put delve there; NO_CONTROLLER_TIERS the others.
COMPONENTS=$KIT_LEADER_COMPONENTS
# REPLICAS are the components make debug runs a second copy of, beside the
# cluster's own, instead of swapping them.
REPLICAS="kube-apiserver"
# SIDECARS are the CSI sidecars (hack/csi's tools) make debug runs in make
# run-csi's place, under delve beside the driver.
SIDECARS="csi-provisioner"
TIERS="" NO_CONTROLLER_TIERS=""
for tier in $(kit_tiers); do
	if grep -q '^CONTROLLER ?=' "$KIT_ROOT/$tier/Makefile"; then
		TIERS+="${TIERS:+ }$tier"
	else
		NO_CONTROLLER_TIERS+=" $tier"
	fi
done
# PORT is delve's port on 127.0.0.1; each name has its own default (default_port),
# so that several can be debugged at once and .vscode/launch.json knows each one's.
PORT=${PORT:-}
# PORT_ORDER is every name make debug takes, in the order each came to take it:
# a name's default port is 2345 plus its place here (default_port). A new name
# joins at the end, so that no name's port ever moves.
PORT_ORDER="kube-controller-manager kube-scheduler workqueue-example sample-controller kubebuilder-guestbook scheduler-plugin-example kube-apiserver csi-provisioner csi-driver-example"
KUBE_SRC=${KUBE_SRC:-$KIT_OUT/kubernetes}
DEBUG_DIR="$KIT_OUT/debug/$KIT_CLUSTER"
# MODULE_ROOTS are the first elements of the module paths the components are
# built from: -trimpath names their files ROOT/...@version/..., which the
# substitute-path rules map to the module cache (.vscode/launch.json has the same).
MODULE_ROOTS="k8s.io sigs.k8s.io github.com go.etcd.io go.opentelemetry.io golang.org google.golang.org gopkg.in cel.dev"
DLV="$KIT_BIN/dlv"

# check_name NAME fails unless NAME is a component or a tier make debug knows.
check_name() {
	[ -n "${1:-}" ] || kit_die "name what to debug: WHAT=kube-controller-manager (one of: $COMPONENTS $REPLICAS $TIERS $SIDECARS)"
	if [[ " $NO_CONTROLLER_TIERS " == *" $1 "* ]]; then
		kit_die "WHAT=$1: $1/Makefile starts its controller without \$(CONTROLLER), where make debug puts delve, so it cannot run it under the debugger; make debug takes: $COMPONENTS $REPLICAS $TIERS $SIDECARS"
	fi
	kit_check_names "$COMPONENTS $REPLICAS $TIERS $SIDECARS" "$1"
}

# default_port NAME prints delve's port for NAME when PORT is not set: 2345 for
# the first name of PORT_ORDER and one more for each next one
# (kube-controller-manager 2345, kube-scheduler 2346, workqueue-example 2347,
# sample-controller 2348, kubebuilder-guestbook 2349, scheduler-plugin-example
# 2350, kube-apiserver 2351, csi-provisioner 2352, csi-driver-example 2353), and
# fails for a name PORT_ORDER lacks. These are the ports .vscode/launch.json
# attaches to; test/lesson4/debugger's launch test holds it to `debug.sh names`.
default_port() {
	local port=2345 name
	for name in $PORT_ORDER; do
		if [ "$name" = "$1" ]; then
			echo "$port"
			return
		fi
		port=$((port + 1))
	done
	return 1
}

is_tier() { case " $TIERS " in *" $1 "*) return 0 ;; esac; return 1; }
is_sidecar() { case " $SIDECARS " in *" $1 "*) return 0 ;; esac; return 1; }
is_replica() { case " $REPLICAS " in *" $1 "*) return 0 ;; esac; return 1; }

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

# watchdog DLV_PID BINARY PORT prints the listening line once delve answers,
# then waits for delve to end and kills what it debugged. It ignores the
# terminal's signals: Ctrl-C ends delve, which is when it has work to do.
watchdog() {
	local dlv=$1 binary=$2 port=$3
	trap '' INT HUP TERM
	exec </dev/null
	while alive "$dlv" && ! listening "$port"; do sleep 0.2; done
	if alive "$dlv"; then echo "delve listening at 127.0.0.1:$port"; fi
	while alive "$dlv"; do sleep 1; done
	kill_debuggee "$binary" 2>/dev/null || true
}

# cmd_delve PORT BINARY ARG... becomes delve running BINARY ARG... (the
# process keeps its pid, the one kwokctl's pid file records). BINARY --version
# runs BINARY itself: kit-component use checks a binary with it.
cmd_delve() {
	[ $# -ge 2 ] || kit_die "delve PORT BINARY [ARG...]"
	local port=$1 binary=$2
	shift 2
	if [ "${1:-}" = --version ]; then exec "$binary" "$@"; fi
	watchdog $$ "$binary" "$port" &
	# Standard input is not a terminal, so delve leaves the debugged process in
	# the background: Ctrl-C reaches delve, which kills it, rather than the
	# process alone, which would leave delve waiting with nothing to debug.
	exec "$DLV" exec --headless --listen="127.0.0.1:$port" --accept-multiclient --continue \
		--api-version=2 "$binary" -- "$@" </dev/null
}

# require_cluster fails unless the local cluster KIT_CLUSTER names is running
# (lib.sh's kit_require_local_cluster), and builds kit-component.
require_cluster() {
	kit_require_local_cluster "on kind or a cluster of your own, debug the kit's controllers instead, which run on any cluster: make debug WHAT=sample-controller (or $(echo "$TIERS" | sed 's/ sample-controller//; s/ / or /g'))"
}

# default_pkgs NAME prints the packages whose optimisation a debug build of
# NAME turns off unless PKGS says otherwise: the controllers it runs.
default_pkgs() {
	case "$1" in
	kube-controller-manager) echo ./pkg/controller/... ;;
	kube-scheduler) echo ./pkg/scheduler/... ;;
	# Lesson 6's three stops: the create handler, the registry's Store, the etcd3 store.
	kube-apiserver) echo k8s.io/apiserver/pkg/endpoints/handlers k8s.io/apiserver/pkg/registry/generic/registry k8s.io/apiserver/pkg/storage/etcd3 ;;
	esac
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

# attach_help NAME SOURCE prints how to attach to delve on PORT and writes the
# substitute-path rules for `dlv connect --init` (the build's paths, which
# -trimpath makes module@version/..., to this machine's folders).
attach_help() {
	local name=$1 src=$2 modcache init="$DEBUG_DIR/$1.dlv-init" KUBE_VERSION
	modcache=$(go env GOMODCACHE)
	KUBE_VERSION=$(kit_kube_version)
	mkdir -p "$DEBUG_DIR"
	{
		echo "# Written by hack/debug.sh: dlv connect 127.0.0.1:$PORT --init $init"
		echo "config substitute-path k8s.io/kubernetes@$KUBE_VERSION $src"
		local root
		for root in $MODULE_ROOTS; do echo "config substitute-path $root/ $modcache/$root/"; done
	} >"$init"
	local example='break sync k8s.io/kubernetes/pkg/controller/deployment.(*DeploymentController).syncDeployment; condition sync key == "default/NAME"'
	if is_replica "$name"; then
		example='break put k8s.io/apiserver/pkg/storage/etcd3.(*store).Create; condition put key == "/samplecontroller.k8s.io/foos/default/NAME"'
	fi
	cat <<EOF
    attach with the debugger's own client:  $DLV connect 127.0.0.1:$PORT --init ${init#"$KIT_ROOT"/}
      (then e.g.: $example; continue;
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

cmd_debug_component() {
	local name=$1 state="$DEBUG_DIR/$1.env" wrapper="$DEBUG_DIR/$1-under-dlv" binary="$DEBUG_DIR/$1"
	require_cluster
	local running
	running=$(kit_component binary "$name")
	if [ "$running" = "$wrapper" ]; then
		local port="?"
		[ -f "$state" ] && port=$(state_get "$state" PORT)
		echo "debug: $name of the cluster $KIT_CLUSTER is already under the debugger: delve listening at 127.0.0.1:$port" >&2
		echo "    attach: $DLV connect 127.0.0.1:$port --init ${DEBUG_DIR#"$KIT_ROOT"/}/$name.dlv-init (or your editor's attach configuration); leave it: ${KIT_MAKE_PREFIX}make undebug WHAT=$name" >&2
		exit 3
	fi
	require_port_free
	local start=$SECONDS
	"$KIT_ROOT/hack/build-bins.sh" dlv
	local pkgs=${PKGS:-$(default_pkgs "$name")} src
	src=$(source_dir)
	mkdir -p "$DEBUG_DIR"
	# shellcheck disable=SC2086 # one package pattern per word
	"$KIT_ROOT/hack/kube-src.sh" debug-build "$name" "$binary" $pkgs
	# The wrapper kwokctl starts in the component's place, with the flags it
	# gives the component and the one a paused component needs.
	cat >"$wrapper.new" <<EOF
#!/usr/bin/env bash
# Written by hack/debug.sh (make debug WHAT=$name): the local cluster $KIT_CLUSTER
# runs this in $name's place; make undebug WHAT=$name puts $running back.
exec "$KIT_ROOT/hack/debug.sh" delve $PORT "$binary" "\$@" --leader-elect=false
EOF
	chmod +x "$wrapper.new"
	mv "$wrapper.new" "$wrapper"
	{
		echo "PORT=$PORT"
		echo "BINARY=$binary"
		echo "PREVIOUS=$running"
		echo "WRAPPER=$wrapper"
		if [ "$src" = "$KUBE_SRC" ]; then echo "SOURCE=copy"; else echo "SOURCE=module"; fi
	} >"$state"
	kit_log "running $name under delve in the cluster $KIT_CLUSTER (leader election off while debugged)"
	if ! kit_component use "$name" "$wrapper"; then
		# kit-component has put the old binary back; no debuggee may outlive it.
		kill_debuggee "$binary"
		rm -f "$state"
		kit_die "$name did not become healthy under delve, so it runs $running again; read why in $KWOK_WORKDIR/clusters/$KIT_CLUSTER/logs/$name.log"
	fi
	kit_log "$name answers its health checks under delve, $((SECONDS - start)) s after make debug started"
	echo "delve listening at 127.0.0.1:$PORT"
	attach_help "$name" "$src"
}

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

cmd_debug_replica() {
	local name=$1 state="$DEBUG_DIR/$1.env" binary="$DEBUG_DIR/$1-replica"
	local kubeconfig="$DEBUG_DIR/$1-replica.kubeconfig" log="$DEBUG_DIR/$1-replica.log"
	require_cluster
	if [ -f "$state" ] && alive "$(state_get "$state" PID)"; then
		echo "debug: a replica of $name of the cluster $KIT_CLUSTER runs under the debugger already: delve listening at 127.0.0.1:$(state_get "$state" PORT)" >&2
		echo "    kubeconfig: $(state_get "$state" KUBECONFIG); leave it: ${KIT_MAKE_PREFIX}make undebug WHAT=$name" >&2
		exit 3
	fi
	require_port_free
	local start=$SECONDS
	"$KIT_ROOT/hack/build-bins.sh" dlv
	local pkgs=${PKGS:-$(default_pkgs "$name")} src serve
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
	# The cluster's kubeconfig, pointed at the replica.
	local cluster
	cluster=$(kit_kubectl config view --minify -o 'jsonpath={.clusters[0].name}')
	cp "$KIT_KUBECONFIG" "$kubeconfig"
	"$KIT_BIN/kubectl" --kubeconfig "$kubeconfig" config set-cluster "$cluster" --server="https://127.0.0.1:$serve" >/dev/null
	kit_log "starting a replica of $name under delve on the cluster's etcd (API on 127.0.0.1:$serve, log ${log#"$KIT_ROOT"/})"
	# In a session of its own, so it outlives make and the terminal's Ctrl-C;
	# without the cluster's lock (fd 8).
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
			kit_log "the replica answers /readyz under delve, $((SECONDS - start)) s after make debug started"
			echo "delve listening at 127.0.0.1:$PORT"
			echo "kubeconfig: $kubeconfig"
			attach_help "$name" "$src"
			return
		fi
		sleep 1
	done
	stop_replica "$state"
	rm -f "$state" "$kubeconfig"
	kit_die "the replica of $name exited, or did not answer /readyz within 3 minutes; nothing of it runs now; read why in $log"
}

cmd_debug_tier() {
	local tier=$1 pkg bin binary state="$KIT_OUT/debug/$1.env"
	read -r pkg bin < <(kit_tier_main "$tier")
	binary="$KIT_OUT/debug/bin/$bin"
	if [ -f "$state" ] && [ -n "$(pids_of "$binary")" ]; then
		kit_die "$tier is already under the debugger: delve listening at 127.0.0.1:$(state_get "$state" PORT) (in the terminal that ran make debug WHAT=$tier; Ctrl-C there ends it)"
	fi
	require_port_free
	"$KIT_ROOT/hack/build-bins.sh" dlv
	mkdir -p "$KIT_OUT/debug/bin"
	local start=$SECONDS
	kit_log "building $tier with optimisation off everywhere (-gcflags=all=-N -l) into ${binary#"$KIT_ROOT"/}"
	# A tier go.work leaves out (lesson 8's) is built as its Makefile builds it.
	local gowork=${GOWORK:-}
	kit_work_modules | grep -qxF -- "$tier" || gowork=off
	kit_with_heartbeat "$tier" "the first time recompiles client-go and every other package it imports" \
		env GOWORK="$gowork" GOFLAGS="$(kit_goflags_untrimmed)" go build -C "$KIT_ROOT/$tier" -gcflags='all=-N -l' -o "$binary" "$pkg" ||
		kit_die "the debug build of $tier failed (the Go error is above)"
	kit_log "built $tier for the debugger in $((SECONDS - start)) s"
	{
		echo "PORT=$PORT"
		echo "BINARY=$binary"
	} >"$state"
	local args=${ARGS:-}
	# A controller paused at a breakpoint cannot renew its Lease. (workqueue-example
	# takes none; lesson 8's scheduler takes none either: its configuration says
	# leaderElect: false, and its --leader-elect is ignored beside --config;
	# lesson 7's driver is no controller of the API and takes none.)
	case $tier in
	workqueue-example | scheduler-plugin-example | csi-driver-example) ;;
	*) args="$args --leader-elect=false" ;;
	esac
	cat <<EOF
>> $tier runs under delve on 127.0.0.1:$PORT, the way make run runs it; attach once delve says it listens:
    attach with the debugger's own client:  $DLV connect 127.0.0.1:$PORT  (leave with quit -c: the controller runs on)
    VS Code: Run and Debug, "attach: $tier" (.vscode/launch.json; port $PORT)
    GoLand: Run | Edit Configurations | + | Go Remote, host 127.0.0.1, port $PORT
    Ctrl-C here ends the controller and delve
EOF
	local rc=0
	make --no-print-directory -C "$KIT_ROOT/$tier" run \
		CONTROLLER="$KIT_ROOT/hack/debug.sh delve $PORT $binary" ARGS="$args" || rc=$?
	kill_debuggee "$binary"
	rm -f "$state"
	return $rc
}

# sidecar_pkg NAME prints the main package of the sidecar NAME, as hack/csi's
# go.mod lists it among its tools.
sidecar_pkg() {
	GOWORK=off go list -C "$KIT_ROOT/hack/csi" tool | grep "/$1\$"
}

cmd_debug_sidecar() {
	local name=$1 pkg binary="$KIT_OUT/debug/bin/$1" state="$KIT_OUT/debug/$1.env"
	if [ -f "$state" ] && [ -n "$(pids_of "$binary")" ]; then
		kit_die "$name is already under the debugger: delve listening at 127.0.0.1:$(state_get "$state" PORT) (in the terminal that ran make debug WHAT=$name; Ctrl-C there ends it)"
	fi
	require_port_free
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
      (then e.g.: break github.com/kubernetes-csi/external-provisioner/v6/pkg/controller.(*csiProvisioner).Provision; continue;
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

cmd_debug() {
	NAME=${1:-}
	check_name "$NAME"
	if [ -z "$PORT" ]; then
		PORT=$(default_port "$NAME") ||
			kit_die "$NAME has no default port: add it at the end of PORT_ORDER in hack/debug.sh (and its attach configuration to .vscode/launch.json), or choose one with PORT="
	fi
	check_port
	if is_tier "$NAME"; then
		cmd_debug_tier "$NAME"
	elif is_sidecar "$NAME"; then
		cmd_debug_sidecar "$NAME"
	elif is_replica "$NAME"; then
		cmd_debug_replica "$NAME"
	else
		cmd_debug_component "$NAME"
	fi
}

cmd_undebug() {
	local name=${1:-}
	check_name "$name"
	if is_tier "$name" || is_sidecar "$name"; then
		local bin=$name
		is_sidecar "$name" || read -r _ bin < <(kit_tier_main "$name")
		kill_debuggee "$KIT_OUT/debug/bin/$bin"
		stop_delve_of "$KIT_OUT/debug/bin/$bin"
		rm -f "$KIT_OUT/debug/$name.env"
		kit_log "$name: no debug build of it runs any more"
		return
	fi
	if is_replica "$name"; then
		local state="$DEBUG_DIR/$name.env"
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
		return
	fi
	require_cluster
	local state="$DEBUG_DIR/$name.env" wrapper="$DEBUG_DIR/$name-under-dlv" binary="$DEBUG_DIR/$name" running previous=""
	running=$(kit_component binary "$name")
	if [ "$running" != "$wrapper" ]; then
		kill_debuggee "$binary"
		rm -f "$state"
		kit_log "$name is not under the debugger (it runs $running); nothing to do"
		return
	fi
	[ -f "$state" ] && previous=$(state_get "$state" PREVIOUS)
	if [ -z "$previous" ] || [ ! -x "$previous" ] || [ "$previous" = "$wrapper" ]; then previous="$KIT_BIN/$name"; fi
	local start=$SECONDS
	kit_log "stopping delve and the debugged $name"
	kit_component stop "$name" >/dev/null
	kill_debuggee "$binary"
	"$KIT_ROOT/hack/kube-src.sh" use "$name" "$previous"
	rm -f "$state"
	kit_log "$name runs $previous again, with leader election ($((SECONDS - start)) s)"
}

# cmd_smoke is make test's part of the debugger: delve built, and lesson 4's
# debugger test's smoke (a small program built for debugging, run through
# `delve` here, stopped at a breakpoint over delve's JSON-RPC API, its delve
# killed and the program found gone). Seconds, no cluster.
cmd_smoke() {
	"$KIT_ROOT/hack/build-bins.sh" dlv
	cd "$KIT_ROOT/test/lesson4"
	go test -count=1 ./debugger/
	echo "debug smoke: delve built; a debug build stopped at a breakpoint and ended with its delve; .vscode/launch.json attaches to every make debug target"
}

# cmd_names prints each name make debug takes, its kind (component, tier or
# sidecar) and its default port, one a line, for the check of .vscode/launch.json
# (a name without a default port gets none, which that check reports).
cmd_names() {
	local name
	for name in $COMPONENTS; do echo "$name component $(default_port "$name" || true)"; done
	for name in $TIERS; do echo "$name tier $(default_port "$name" || true)"; done
	for name in $REPLICAS; do echo "$name component $(default_port "$name" || true)"; done
	for name in $SIDECARS; do echo "$name sidecar $(default_port "$name" || true)"; done
}

main() {
	local cmd=${1:-}
	shift || true
	case "$cmd" in
	debug) cmd_debug "$@" ;;
	undebug) cmd_undebug "$@" ;;
	delve) cmd_delve "$@" ;;
	smoke) cmd_smoke ;;
	names) cmd_names ;;
	*) kit_die "unknown command '$cmd' (debug, undebug, delve, smoke, names)" ;;
	esac
}

main "$@"
