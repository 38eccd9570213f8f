#!/usr/bin/env bash
# docker-engine.sh is `make docker-engine`: a Docker engine that runs privileged
# containers (what kind's nodes are), on a Debian-like machine that has none. A
# learner who already has Docker never needs it; it does nothing where an engine
# answers and runs privileged containers.
#
# Root only. Step by step, saying what it does, and only what is missing:
#  1. Debian's docker.io package, when no dockerd is installed (apt-get).
#  2. dockerd, when none answers: through systemd where systemd runs the machine,
#     else started in the background (log: /var/log/kit-dockerd.log).
#  3. A privileged test container (an image of one static binary, tini, made
#     locally: nothing is pulled). When the engine refuses it and the machine's
#     capability bounding set lacks a capability (the kit's development machines
#     lack CAP_SYS_RESOURCE), it installs runc-wrapper.sh as
#     /usr/local/sbin/kit-runc, makes it dockerd's default runtime in
#     /etc/docker/daemon.json (merged into what is there) and reloads dockerd
#     with SIGHUP (running containers keep running), then tries again.
# Exit 0: the engine runs privileged containers. Exit 1: it does not, and why.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

wrapper=/usr/local/sbin/kit-runc
daemon_json=/etc/docker/daemon.json
probe_image=controller-kit.local/privileged-probe:tini
KIT_ME="make docker-engine"

if [ "$(id -u)" != 0 ]; then
	kit_die "it installs packages and starts dockerd, so it runs as root only (sudo make docker-engine). With Docker already installed and running you do not need it."
fi
if ! command -v apt-get >/dev/null || [ ! -f /etc/debian_version ]; then
	kit_die "it knows only Debian-like systems (apt-get and Debian's docker.io package). Install Docker the way your system does (https://docs.docker.com/engine/install/), then run 'make kind-up'."
fi

engine_answers() { command -v docker >/dev/null && timeout 5 docker info >/dev/null 2>&1; }

# apt_install PACKAGE... installs Debian packages, its output in /var/log/kit-apt.log;
# when the package lists are too old to know them, it refreshes them once.
apt_install() {
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q "$@" >>/var/log/kit-apt.log 2>&1 && return 0
	kit_log "apt-get install failed; refreshing the package lists (apt-get update) and trying once more"
	apt-get update -q >>/var/log/kit-apt.log 2>&1 && apt-get install -y -q "$@" >>/var/log/kit-apt.log 2>&1 ||
		kit_die "apt-get install $* failed; /var/log/kit-apt.log says why"
}

# 1. The package.
if ! command -v dockerd >/dev/null; then
	kit_log "installing Debian's docker.io (dockerd, containerd, runc, tini) and jq with apt-get (log: /var/log/kit-apt.log)"
	apt_install docker.io jq
	kit_log "installed: $(dockerd --version)"
elif ! command -v jq >/dev/null; then
	kit_log "installing jq with apt-get (the runtime wrapper edits OCI bundles with it)"
	apt_install jq
fi

# 2. The daemon.
if engine_answers; then
	kit_log "a Docker engine answers: $(docker version --format 'server {{.Server.Version}}')"
else
	if [ "$(ps -p 1 -o comm= 2>/dev/null)" = systemd ]; then
		kit_log "starting dockerd through systemd (systemctl start docker)"
		systemctl start docker
	else
		kit_log "starting dockerd in the background (no systemd here); log: /var/log/kit-dockerd.log"
		setsid dockerd >>/var/log/kit-dockerd.log 2>&1 </dev/null &
	fi
	for _ in $(seq 60); do
		engine_answers && break
		sleep 1
	done
	engine_answers || kit_die "dockerd did not answer within 60 s; its log says why (/var/log/kit-dockerd.log, or journalctl -u docker)."
	kit_log "dockerd answers: $(docker version --format 'server {{.Server.Version}}')"
fi

# 3. Privileged containers.
probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"; docker rmi -f "$probe_image" >/dev/null 2>&1 || true' EXIT
tini=$(command -v tini-static || command -v docker-init || true)
[ -n "$tini" ] || kit_die "no static tini found (Debian's tini package, a dependency of docker.io, brings /usr/bin/tini-static): apt-get install tini"
cp "$(readlink -f "$tini")" "$probe_dir/tini"
tar -C "$probe_dir" -cf "$probe_dir/probe.tar" tini
docker import "$probe_dir/probe.tar" "$probe_image" >/dev/null

# privileged_runs runs the probe privileged; its error goes to $probe_dir/err.
privileged_runs() { docker run --rm --privileged "$probe_image" /tini --version >/dev/null 2>"$probe_dir/err"; }

if privileged_runs; then
	kit_log "the engine runs privileged containers: ready for kind (make kind-up)"
	exit 0
fi
missing=$("$KIT_ROOT/hack/cluster/runc-wrapper.sh" --kit-missing-capabilities | paste -sd' ')
if [ -z "$missing" ]; then
	kit_die "the engine refuses a privileged container although this machine's capability bounding set is complete, so the kit's runtime wrapper would not help:
$(cat "$probe_dir/err")"
fi
kit_log "the engine refuses privileged containers: this machine's capability bounding set lacks $missing"
kit_log "installing the kit's runtime wrapper as $wrapper (it drops only those capabilities, then runs runc)"
install -m 0755 "$KIT_ROOT/hack/cluster/runc-wrapper.sh" "$wrapper"

mkdir -p "$(dirname "$daemon_json")"
[ -s "$daemon_json" ] || echo '{}' >"$daemon_json"
cp "$daemon_json" "$daemon_json.kit-backup"
jq --arg path "$wrapper" '.runtimes["kit-runc"] = {path: $path} | ."default-runtime" = "kit-runc"' \
	"$daemon_json.kit-backup" >"$daemon_json"
kit_log "made kit-runc dockerd's default runtime in $daemon_json (the file before: $daemon_json.kit-backup); reloading dockerd (SIGHUP: running containers keep running)"
pkill -HUP -x dockerd
for _ in $(seq 20); do
	docker info --format '{{.DefaultRuntime}}' 2>/dev/null | grep -qx kit-runc && break
	sleep 1
done
if privileged_runs; then
	kit_log "the engine runs privileged containers through kit-runc: ready for kind (make kind-up)"
	exit 0
fi
kit_die "the engine still refuses a privileged container with kit-runc as its default runtime:
$(cat "$probe_dir/err")"
