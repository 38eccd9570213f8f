#!/usr/bin/env bash
# kube-src.sh is the body of lesson 4's targets: a writable copy of the pinned
# Kubernetes source, components built from it, swapped into the running local
# cluster, and upstream's own tests run from it.
#
#   hack/kube-src.sh src                make kube-src: make the copy (idempotent)
#   hack/kube-src.sh reset              make kube-src-reset: throw the copy away and make it again
#   hack/kube-src.sh build [NAME...]    make kube-build WHAT=NAME: build from the copy (no NAME: all)
#   hack/kube-src.sh restart NAME       make kube-restart WHAT=NAME: run the copy's build in the local cluster
#                                       (FLAGS: flags set on its command line, kit-component use --flag)
#   hack/kube-src.sh pinned NAME        make kube-restart WHAT=NAME PINNED=1: back to bin/'s build
#   hack/kube-src.sh args NAME          make kube-args WHAT=NAME: the flags the local cluster runs NAME with
#   hack/kube-src.sh running NAME       print the binary the local cluster's NAME runs
#   hack/kube-src.sh use NAME BINARY    run BINARY as the local cluster's NAME (lesson 4's checks, make undebug)
#   hack/kube-src.sh debug-build NAME OUT PKG...
#                                       make debug's build of NAME (hack/debug.sh): from the copy, else the
#                                       pinned module; DWARF kept, optimisation off for the packages PKG...
#   hack/kube-src.sh smoke              make test's smoke: a copy in a temporary folder, one package's tests found there
#   hack/kube-src.sh test PKG...        make kube-test WHAT=PKG: upstream's unit tests
#   hack/kube-src.sh test-integration PKG...  make kube-test-integration WHAT=PKG
#
# The copy is $KUBE_SRC (_output/kubernetes): the k8s.io/kubernetes module at the
# version hack/controlplane/go.mod pins, taken from the Go module cache, with a git
# repository whose first commit is that version, tagged with it, so `git diff
# v1.37.2` there is a patch with upstream's paths. Builds go to $KUBE_BUILD/bin
# (_output/kube-build/bin), never to bin/: bin/ always holds the pinned module's
# binaries, which make test, envtest and the bench use.
#
# How a build reads the copy: `go build -modfile=$KUBE_BUILD/kube.mod`, run in
# hack/controlplane, where kube.mod is hack/controlplane/go.mod plus one line,
# `replace k8s.io/kubernetes => <the copy>`. The staging modules (client-go, ...)
# stay the pinned v0.37.2 from the module cache: the copy has no staging/src, as
# the module zip has none. With the flags bin/ is built with (-trimpath; the
# version's -X flags from lib.sh's kit_version_ldflags, as build-bins.sh's), an
# untouched copy compiles to the packages the Go build cache already holds, so
# after an edit only the changed package and those that import it are compiled.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
KIT_ME=kube-src
KIT_DIE_STATUS=2

KUBE_VERSION=$(kit_kube_version)
# KUBE_SRC is the learner's copy of the Kubernetes source; KUBE_BUILD holds the
# module file its builds use and the binaries they make.
# lesson 4's checks set both to build a solution in a copy of their own.
KUBE_SRC=${KUBE_SRC:-$KIT_OUT/kubernetes}
KUBE_BUILD=${KUBE_BUILD:-$KIT_OUT/kube-build}
CONTROLPLANE="$KIT_ROOT/hack/controlplane"
# COMPONENTS are what kube-build builds; RESTARTABLE those of them that run in
# the local cluster (lib.sh's KIT_COMPONENTS; kubectl is a client: run the copy's
# build from $KUBE_BUILD/bin).
RESTARTABLE=$KIT_COMPONENTS
COMPONENTS="$KIT_COMPONENTS kubectl"

# git_src runs git in the copy, with an identity of its own for the commits the
# kit makes there (the learner's own commits use theirs).
git_src() { git -C "$KUBE_SRC" -c user.name="controller-kit" -c user.email="controller-kit@localhost" "$@"; }

# module_dir prints the module cache folder of the pinned k8s.io/kubernetes.
module_dir() { (cd "$CONTROLPLANE" && GOWORK=off go list -m -f '{{.Dir}}' k8s.io/kubernetes); }

# copy_changed succeeds when the copy differs from the pinned source: an edited,
# added or deleted file, committed or not.
copy_changed() {
	[ -n "$(git_src status --porcelain)" ] || ! git_src diff --quiet "$KUBE_VERSION" HEAD --
}

# require_copy fails unless the copy exists and is of the pinned version.
require_copy() {
	[ -d "$KUBE_SRC/.git" ] || kit_die "there is no copy of the Kubernetes source yet; make one with: make kube-src"
	if ! git_src rev-parse -q --verify "refs/tags/$KUBE_VERSION" >/dev/null; then
		local have
		have=$(git_src tag --list 'v*' | head -n1)
		kit_die "the copy in $KUBE_SRC is Kubernetes ${have:-of an unknown version}, but the kit now pins $KUBE_VERSION (hack/controlplane/go.mod). Save your change (cd $KUBE_SRC && git diff ${have:-HEAD} > /tmp/my.patch), then start over with: make kube-src-reset FORCE=1"
	fi
}

cmd_src() {
	if [ -d "$KUBE_SRC/.git" ]; then
		require_copy
		if copy_changed; then
			kit_log "the copy is there, with your changes: $KUBE_SRC (git -C $KUBE_SRC status; make kube-src-reset starts over)"
		else
			kit_log "the copy is there, unchanged: $KUBE_SRC"
		fi
		return
	fi
	[ ! -e "$KUBE_SRC" ] || kit_die "$KUBE_SRC exists but is not a git repository the kit made; move it away (or delete it) and run make kube-src again"
	local mod
	mod=$(module_dir) || kit_die "could not find k8s.io/kubernetes $KUBE_VERSION in the module cache (cd hack/controlplane && GOWORK=off go mod download k8s.io/kubernetes)"
	[ -n "$mod" ] && [ -d "$mod" ] || kit_die "k8s.io/kubernetes $KUBE_VERSION is not in the module cache yet; make bins (or make local-up) downloads it"
	kit_log "copying k8s.io/kubernetes $KUBE_VERSION from $mod"
	local tmp="$KUBE_SRC.tmp"
	rm -rf "$tmp"
	mkdir -p "$KIT_OUT"
	cp -R "$mod" "$tmp"
	# The module cache is read-only; the copy is for editing.
	chmod -R u+w "$tmp"
	kit_log "making a git repository there (the first commit is $KUBE_VERSION as published)"
	git -C "$tmp" init -q -b master
	git -C "$tmp" add -A
	git -C "$tmp" -c user.name="controller-kit" -c user.email="controller-kit@localhost" \
		commit -q -m "k8s.io/kubernetes $KUBE_VERSION, from the Go module cache"
	git -C "$tmp" tag "$KUBE_VERSION"
	# Only a complete copy gets the name: an interrupted run leaves .tmp, which the next run replaces.
	mv "$tmp" "$KUBE_SRC"
	kit_log "the copy is ready: $KUBE_SRC"
	echo "    edit it, then: make kube-build WHAT=<the component you changed, such as kube-controller-manager>; git -C $KUBE_SRC diff shows your change"
}

cmd_reset() {
	if [ -d "$KUBE_SRC/.git" ] && [ "${FORCE:-}" != 1 ]; then
		if ! git_src rev-parse -q --verify "refs/tags/$KUBE_VERSION" >/dev/null || copy_changed; then
			git_src status --short | head -20 >&2 || true
			# The copy's own version: after a bump of the pin it is not KUBE_VERSION.
			local base
			base=$(git_src tag --list 'v*' | head -n1)
			local keep="keep them with: git -C $KUBE_SRC add -A && git -C $KUBE_SRC diff --cached ${base:-HEAD} > /tmp/my.patch"
			if [ ! -t 0 ]; then
				kit_die "the copy in $KUBE_SRC has changes (above, or it is of another version) that starting over would lose; $keep. Then: make kube-src-reset FORCE=1"
			fi
			echo "The copy in $KUBE_SRC has changes (above, or it is of another version); $keep." >&2
			local answer
			read -r -p "Delete them and start over from $KUBE_VERSION? [y/N] " answer
			case "$answer" in y | Y | yes) ;; *) kit_die "nothing deleted" ;; esac
		fi
	elif [ -e "$KUBE_SRC" ] && [ ! -d "$KUBE_SRC/.git" ] && [ "${FORCE:-}" != 1 ]; then
		kit_die "$KUBE_SRC is not a copy the kit made; remove it yourself, or: make kube-src-reset FORCE=1"
	fi
	kit_log "removing $KUBE_SRC"
	rm -rf "$KUBE_SRC" "$KUBE_SRC.tmp"
	cmd_src
}

# write_modfile writes the module file the builds and tests use (see the top).
write_modfile() {
	mkdir -p "$KUBE_BUILD/bin"
	{
		cat "$CONTROLPLANE/go.mod"
		echo
		echo "// Added by hack/kube-src.sh: build k8s.io/kubernetes from the learner's copy."
		echo "replace k8s.io/kubernetes => $KUBE_SRC"
	} >"$KUBE_BUILD/kube.mod.new"
	mv "$KUBE_BUILD/kube.mod.new" "$KUBE_BUILD/kube.mod"
	cp "$CONTROLPLANE/go.sum" "$KUBE_BUILD/kube.sum"
}

# copy_ldflags prints the -X flags (lib.sh's kit_version_ldflags) that make a
# copy build report the pinned version with "+kube-src" after it,
# "+kube-src-dirty" when the copy differs from the pinned source, and the copy's
# commit (build metadata after "+" keeps the version's order, so nothing
# compares it as another release).
copy_ldflags() {
	local commit
	commit=$(git_src rev-parse HEAD)
	if copy_changed; then
		kit_version_ldflags "$KUBE_VERSION+kube-src-dirty" dirty "$commit"
	else
		kit_version_ldflags "$KUBE_VERSION+kube-src" clean "$commit"
	fi
}

cmd_build() {
	[ $# -gt 0 ] || set -- $COMPONENTS
	kit_check_names "$COMPONENTS" "$@"
	require_copy
	write_modfile
	local pkgs=() name
	for name in "$@"; do pkgs+=("k8s.io/kubernetes/cmd/$name"); done
	local start=$SECONDS out="$KUBE_BUILD/bin/"
	[ $# -gt 1 ] || out="$KUBE_BUILD/bin/$1"
	kit_log "building $* from $KUBE_SRC (go build: only what changed is compiled)"
	if ! kit_with_heartbeat "$*" "" env GOWORK=off go build -C "$CONTROLPLANE" -modfile="$KUBE_BUILD/kube.mod" \
		-trimpath -ldflags "-s -w $(copy_ldflags)" -o "$out" "${pkgs[@]}"; then
		kit_error "the build failed (the Go error is above); $KUBE_BUILD/bin and the running cluster keep what they had"
		exit 1
	fi
	kit_log "built $* in $((SECONDS - start)) s into $KUBE_BUILD/bin ($("$KUBE_BUILD/bin/$1" --version 2>/dev/null || echo "?"))"
	for name in "$@"; do
		case " $RESTARTABLE " in *" $name "*) echo "    run it in the local cluster: ${KIT_MAKE_PREFIX}make kube-restart WHAT=$name" ;; esac
	done
}

# require_cluster fails unless the local cluster KIT_CLUSTER names is there
# (lib.sh's kit_require_local_cluster), and builds kit-component, which swaps
# its components.
require_cluster() { kit_require_local_cluster "on kind, see lesson 4"; }

# swap NAME BINARY has kit-component restart the local cluster's NAME on BINARY
# and wait until it is healthy (it goes back to the old binary when not).
swap() {
	local name=$1 binary=$2
	require_cluster
	# kube-controller-manager and kube-scheduler work only while they hold their
	# Lease; the new process takes it over once the killed one's has expired.
	local lease="" holder=""
	case " $KIT_LEADER_COMPONENTS " in *" $name "*) lease=$name ;; esac
	if [ -n "$lease" ]; then holder=$(lease_holder "$lease"); fi
	# FLAGS (make kube-restart FLAGS=...): each word is a flag kit-component
	# sets on the component's command line before it starts it.
	local flags=() flag rc=0
	for flag in ${FLAGS:-}; do flags+=("--flag=$flag"); done
	# On failure kit-component has put the old binary back (its error says why).
	kit_component use "$name" "$binary" "${flags[@]}" || rc=$?
	if [ "$name" = kube-apiserver ]; then
		# kube-controller-manager and kube-scheduler exit once they cannot renew
		# their Lease for 10 s, which a restart of the API server can take on a
		# busy machine, and kwokctl does not start them again: restart both,
		# whichever way it went (a failed swap restarts kube-apiserver twice),
		# and wait until each leads again.
		local c old
		for c in $KIT_LEADER_COMPONENTS; do
			old=$(lease_holder "$c")
			kit_log "restarting $c, which loses its Lease when kube-apiserver is away for 10 s"
			kit_component stop "$c" >/dev/null
			kit_component start "$c" >/dev/null
			wait_lease "$c" "$old"
		done
		return $rc
	fi
	[ $rc -eq 0 ] || return $rc
	[ -n "$lease" ] || return 0
	wait_lease "$name" "$holder"
}

# wait_lease NAME OLD waits until the Lease kube-system/NAME has a holder that
# is not OLD (the process stopped), up to 90 s, and fails naming NAME's log.
wait_lease() {
	local name=$1 holder=$2 start=$SECONDS now
	kit_log "waiting for the new $name to take its Lease (kube-system/$name) from the stopped one (up to its 15 s lease duration)"
	while now=$(lease_holder "$name"); [ -z "$now" ] || [ "$now" = "$holder" ]; do
		if [ $((SECONDS - start)) -ge 90 ]; then
			kit_die "the new $name did not take its Lease within 90 s (holder: ${now:-none}); read $KWOK_WORKDIR/clusters/$KIT_CLUSTER/logs/$name.log"
		fi
		sleep 1
	done
	kit_log "$name leads again ($now), $((SECONDS - start)) s after it was healthy"
}

# lease_holder NAME prints the holder of the Lease kube-system/NAME, or nothing.
lease_holder() {
	kit_kubectl -n kube-system get lease "$1" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null || true
}

cmd_restart() {
	[ $# -eq 1 ] || kit_die "name one component: WHAT=kube-controller-manager (one of: $RESTARTABLE)"
	[ "$1" != kubectl ] || kit_die "kubectl is a client, not a component of the cluster: run the copy's build as $KUBE_BUILD/bin/kubectl"
	kit_check_names "$RESTARTABLE" "$1"
	local binary="$KUBE_BUILD/bin/$1"
	[ -x "$binary" ] || kit_die "there is no build of $1 from the copy yet; make one with: ${KIT_MAKE_PREFIX}make kube-build WHAT=$1"
	swap "$1" "$binary"
}

cmd_pinned() {
	[ $# -eq 1 ] || kit_die "name one component: WHAT=kube-controller-manager (one of: $RESTARTABLE)"
	kit_check_names "$RESTARTABLE" "$1"
	swap "$1" "$KIT_BIN/$1"
}

cmd_args() {
	[ $# -eq 1 ] || kit_die "name one component: WHAT=kube-apiserver (one of: $RESTARTABLE)"
	kit_check_names "$RESTARTABLE" "$1"
	require_cluster
	kit_component args "$1"
}

cmd_running() {
	[ $# -eq 1 ] || kit_die "name one component (one of: $RESTARTABLE)"
	kit_check_names "$RESTARTABLE" "$1"
	require_cluster
	kit_component binary "$1"
}

cmd_use() {
	[ $# -eq 2 ] || kit_die "use NAME BINARY"
	kit_check_names "$RESTARTABLE" "$1"
	swap "$1" "$2"
}

# debug_patterns PATTERN... prints each package pattern as an import path: from
# the source's root (./pkg/controller/deployment/...) or an import path of any
# module the component is built from (k8s.io/client-go/tools/cache).
debug_patterns() {
	local p
	for p in "$@"; do
		case "$p" in
		./*) echo "k8s.io/kubernetes/${p#./}" ;;
		pkg/* | cmd/* | plugin/* | staging/*) echo "k8s.io/kubernetes/$p" ;;
		*.*/*) echo "$p" ;;
		*) kit_die "PKGS=$p is not a package pattern; write it as from the Kubernetes source's root (./pkg/controller/deployment/...) or as an import path (k8s.io/client-go/tools/cache)" ;;
		esac
	done
}

# cmd_debug_build NAME OUT PATTERN... builds NAME for a debugger into OUT: bin/'s
# flags without -s -w (they strip the DWARF a debugger reads), -trimpath kept
# (so every package it leaves optimised comes from the build cache), and
# optimisation and inlining off (-N -l) for the packages PATTERN... match, so
# their variables and lines are all there. From the copy when there is one
# (its version says +kube-src), else from the pinned module. With
# KIT_DEBUG_CACHED=1 it builds nothing: it exits 4 unless OUT is a build from
# the pinned module that is cached (its key, below, is current), as make test's
# smoke of lesson 6 asks, which must never spend minutes on a build.
cmd_debug_build() {
	[ $# -ge 3 ] || kit_die "debug-build NAME OUT PKG..."
	local name=$1 out=$2
	shift 2
	kit_check_names "$RESTARTABLE" "$name"
	local patterns gcflags=() p modflag=() ldflags from
	patterns=$(debug_patterns "$@") || exit 2
	for p in $patterns; do gcflags+=("-gcflags=$p=-N -l"); done
	if [ -d "$KUBE_SRC/.git" ]; then
		require_copy
		write_modfile
		modflag=(-modfile="$KUBE_BUILD/kube.mod")
		ldflags=$(copy_ldflags)
		from="your copy $KUBE_SRC"
	else
		ldflags=$(kit_version_ldflags "$KUBE_VERSION")
		from="the pinned module (no copy: make kube-src makes one)"
	fi
	local flags=("${modflag[@]}" -trimpath "${gcflags[@]}" -ldflags "$ldflags" -o "$out")
	# A build from the pinned module is cached when OUT.key holds the key of
	# what it was built from: Go's version, the pins (go.mod, go.sum) and the
	# flags. (The module cache never changes a version's files; a copy's build
	# has no key, as the copy changes.) Reading it takes no go command, where
	# go build finding OUT up to date takes seconds.
	local key=""
	if [ ${#modflag[@]} -eq 0 ]; then
		key=$({ go env GOVERSION GOFLAGS; cat "$CONTROLPLANE/go.mod" "$CONTROLPLANE/go.sum"; printf '%s\n' "${flags[@]}"; } | sha256sum | cut -d' ' -f1)
	fi
	if [ "${KIT_DEBUG_CACHED:-}" = 1 ]; then
		if [ -z "$key" ] || [ ! -x "$out" ] || [ "$(cat "$out.key" 2>/dev/null)" != "$key" ]; then
			echo "kube-src: no cached debug build of $name from the pinned module at $out (KIT_DEBUG_CACHED=1: not building it; make debug WHAT=$name without a copy builds it, minutes the first time)" >&2
			exit 4
		fi
		kit_log "the debug build of $name from the pinned module is cached: $out"
		return
	fi
	rm -f "$out.key"
	local start=$SECONDS
	kit_log "building $name for the debugger from $from, optimisation off in:" $patterns
	if ! kit_with_heartbeat "$name" "the first debug build recompiles those packages and links without -s -w" \
		env GOWORK=off go build -C "$CONTROLPLANE" "${flags[@]}" "k8s.io/kubernetes/cmd/$name"; then
		kit_error "the debug build of $name failed (the Go error is above); the cluster keeps what it runs"
		exit 1
	fi
	[ -z "$key" ] || echo "$key" >"$out.key"
	kit_log "built $name for the debugger in $((SECONDS - start)) s"
}

# packages PATTERN... prints the import paths of package patterns given relative
# to the copy (./pkg/controller/deployment/...) or as import paths.
packages() {
	local p
	[ $# -gt 0 ] || kit_die "name the packages: WHAT=./pkg/controller/deployment/... (a path in the Kubernetes source, as from its root, or k8s.io/kubernetes/...)"
	for p in "$@"; do
		case "$p" in
		./*) echo "k8s.io/kubernetes/${p#./}" ;;
		k8s.io/kubernetes/*) echo "$p" ;;
		pkg/* | cmd/* | plugin/* | test/*) echo "k8s.io/kubernetes/$p" ;;
		*) kit_die "WHAT=$p is not a package of k8s.io/kubernetes; write it as from the source's root (./pkg/controller/deployment/...) or as an import path (k8s.io/kubernetes/pkg/...)" ;;
		esac
	done
}

# go_test runs go test in hack/controlplane on the copy, or on the pinned module
# when there is no copy, with the build's flags (so one build cache serves both;
# TRIMPATH=0 leaves -trimpath out).
go_test() {
	local modflag=()
	if [ -d "$KUBE_SRC/.git" ]; then
		require_copy
		write_modfile
		modflag=(-modfile="$KUBE_BUILD/kube.mod")
		kit_log "testing from the copy $KUBE_SRC"
	else
		kit_log "no copy (make kube-src makes one): testing the pinned module as published"
	fi
	local run=() args=()
	[ -z "${RUN:-}" ] || run=(-run "$RUN")
	# ARGS: more go test flags, such as -v or -count=1.
	[ -z "${ARGS:-}" ] || read -r -a args <<<"$ARGS"
	cd "$CONTROLPLANE"
	# TRIMPATH=0 takes -trimpath out of GOFLAGS too, where the kit puts it for
	# every build (hack/lib/lists.sh).
	local trim=(-trimpath) goflags=${GOFLAGS:-}
	[ "${TRIMPATH:-1}" = 1 ] || { trim=(); goflags=$(kit_goflags_untrimmed); }
	GOWORK=off GOFLAGS="$goflags" go test "${modflag[@]}" "${trim[@]}" "${run[@]}" "${args[@]}" "$@"
}

# require_dirs IMPORTPATH... fails on a package pattern whose folder is in
# neither the copy nor the pinned module, naming it (go's own error would
# suggest go get, which is not the fix here).
require_dirs() {
	local root p dir
	if [ -d "$KUBE_SRC/.git" ]; then root=$KUBE_SRC; else root=$(module_dir); fi
	for p in "$@"; do
		dir=${p#k8s.io/kubernetes/}
		dir=${dir%/...}
		[ -d "$root/$dir" ] || kit_die "WHAT: there is no folder $dir in $root; write a package as from the source's root, such as ./pkg/controller/deployment/..."
	done
}

cmd_test() {
	local pkgs
	pkgs=$(packages "$@") || exit 2
	# shellcheck disable=SC2086 # one import path per word
	require_dirs $pkgs
	# shellcheck disable=SC2086 # one import path per word
	go_test $pkgs
}

cmd_test_integration() {
	local pkgs p
	pkgs=$(packages "$@") || exit 2
	for p in $pkgs; do
		case "$p" in k8s.io/kubernetes/test/integration/*) ;; *) kit_die "WHAT=$p is not under ./test/integration/; unit tests run with make kube-test" ;; esac
	done
	# shellcheck disable=SC2086
	require_dirs $pkgs
	"$KIT_ROOT/hack/build-bins.sh" etcd >/dev/null
	# Upstream's integration framework starts the etcd it finds on PATH.
	export PATH="$KIT_BIN:$PATH"
	# Its test API server finds its fixtures by the path its source was compiled
	# from, which -trimpath hides; without it every package compiles anew once
	# (the build cache keeps both).
	kit_log "integration tests are built without -trimpath (upstream's test server reads files next to its source): the first run compiles every package once more"
	export TRIMPATH=0
	# shellcheck disable=SC2086
	go_test $pkgs
}

# cmd_smoke makes a copy in a temporary folder and has go find a package's
# tests in it through the build's module file: the parts of lesson 4 that need
# neither a cluster nor a compiler, in seconds (make test-lesson4 runs the rest).
cmd_smoke() {
	local tmp
	# In memory where there is a tmpfs: 9,000 files written and hashed on the disk
	# slow down the fsyncs of the etcds that make test's clusters run beside it.
	tmp=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
	# shellcheck disable=SC2064 # the folder's name now: tmp is local
	trap "rm -rf '$tmp'" EXIT
	KUBE_SRC="$tmp/kubernetes" KUBE_BUILD="$tmp/kube-build"
	cmd_src >/dev/null
	write_modfile
	local pkg=k8s.io/kubernetes/pkg/controller/deployment dir tests
	read -r dir tests < <(cd "$CONTROLPLANE" && GOWORK=off go list -modfile="$KUBE_BUILD/kube.mod" \
		-f '{{.Dir}} {{len .TestGoFiles}}' "$pkg")
	[ "$dir" = "$KUBE_SRC/pkg/controller/deployment" ] || kit_die "smoke: go found $pkg in $dir, not in the copy $KUBE_SRC"
	[ "$tests" -gt 0 ] || kit_die "smoke: go found no test files of $pkg in the copy"
	copy_changed && kit_die "smoke: a fresh copy counts as changed"
	echo "kube-src smoke: a fresh copy made, $pkg read from it with $tests test files"
}

main() {
	local cmd=${1:-}
	shift || true
	case "$cmd" in
	src) cmd_src ;;
	reset) cmd_reset ;;
	build) cmd_build "$@" ;;
	restart) cmd_restart "$@" ;;
	args) cmd_args "$@" ;;
	pinned) cmd_pinned "$@" ;;
	running) cmd_running "$@" ;;
	use) cmd_use "$@" ;;
	debug-build) cmd_debug_build "$@" ;;
	smoke) cmd_smoke ;;
	test) cmd_test "$@" ;;
	test-integration) cmd_test_integration "$@" ;;
	*) kit_die "unknown command '$cmd' (src, reset, build, restart, pinned, args, running, use, debug-build, smoke, test, test-integration)" ;;
	esac
}

main "$@"
