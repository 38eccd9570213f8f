#!/usr/bin/env bash
# require-docker.sh WHAT exits 1 at once, with a message naming WHAT and the
# Docker-free way, when no Docker engine answers; it exits 0 when one does. Every
# Docker-only target (kind-up, docker-build, kind-load, ...) calls it first, so all
# of them fail the same clear way on a machine without Docker.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

what=${1:-this target}
if command -v docker >/dev/null 2>&1 && timeout 2 docker info >/dev/null 2>&1; then
	exit 0
fi
cat >&2 <<MSG
$what needs a running Docker engine, and none answers here ('docker info' failed).
Without Docker, use the kit's local cluster instead: 'make local-up' starts it from real
upstream binaries, and 'make run-workqueue', 'make run-sample' and 'make run-guestbook'
run the controllers on it, outside any container.
On a Debian-like machine with no Docker at all, 'sudo make docker-engine' installs
Debian's docker.io and starts it, ready for kind (hack/cluster/docker-engine.sh).
MSG
exit 1
