#!/usr/bin/env bash
# docker-build.sh IMG is every tier's `make docker-build`, run in the tier's
# folder: the controller's image, tagged IMG, built one of two ways.
#
#   dockerfile  the tier's Dockerfile: Go's image builds, distroless runs (both
#               pulled). For learners with internet.
#   static      without pulling anything: the binary the Dockerfile builds, built
#               here the same way (CGO_ENABLED=0, GOWORK=off, -trimpath), alone on
#               an empty base (FROM scratch), run as the Dockerfile's USER (uid
#               65532 in the tiers'; root for lesson 7's driver, which mounts), no
#               shell. For machines that cannot pull (the kit's development machines).
#
# KIT_IMAGE_BUILD=dockerfile or static picks one; unset, dockerfile when every
# base image the Dockerfile names is present or can be pulled, else static, and
# it says which. The image's label dev.controller-kit.image-build records it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
KIT_ME=docker-build.sh
KIT_DIE_STATUS=2

img=${1:?usage: docker-build.sh IMG (in a tier folder)}
"$KIT_ROOT/hack/cluster/require-docker.sh" "make docker-build"
[ -f Dockerfile ] || kit_die "no Dockerfile in $PWD; run it in a tier's folder"
tier=$(basename "$PWD")

# The base images the Dockerfile names, with ARG defaults filled in.
bases() {
	awk '
		/^ARG [A-Za-z_]+=/ { split(substr($0, 5), kv, "="); args[kv[1]] = kv[2] }
		/^FROM / {
			img = $2
			for (a in args) gsub("\\$\\{" a "\\}", args[a], img)
			print img
		}' Dockerfile
}
pullable() { docker image inspect "$1" >/dev/null 2>&1 || docker pull -q "$1" >/dev/null 2>&1; }

how=${KIT_IMAGE_BUILD:-}
if [ -z "$how" ]; then
	how=dockerfile
	for b in $(bases); do
		if ! pullable "$b"; then
			how=static
			kit_log "$tier: the base image $b cannot be pulled here: building the static image instead (KIT_IMAGE_BUILD=dockerfile insists)"
			break
		fi
	done
fi

case $how in
dockerfile)
	kit_log "$tier: building $img from its Dockerfile"
	DOCKER_BUILDKIT=${DOCKER_BUILDKIT:-0} docker build --label dev.controller-kit.image-build=dockerfile -t "$img" .
	;;
static)
	# What the Dockerfile builds: the package its go build names, to the path
	# its ENTRYPOINT runs.
	pkg=$(sed -n 's/^RUN .*go build .* \([^ ]*\)$/\1/p' Dockerfile | tail -1)
	entry=$(sed -n 's/^ENTRYPOINT \["\(\/[^"]*\)"\]$/\1/p' Dockerfile | tail -1)
	user=$(sed -n 's/^USER \([^ ]*\)$/\1/p' Dockerfile | tail -1)
	[ -n "$pkg" ] && [ -n "$entry" ] ||
		kit_die "$tier/Dockerfile has no 'RUN ... go build ... PACKAGE' or no 'ENTRYPOINT [\"/BINARY\"]' line to follow"
	ctx=$(mktemp -d)
	trap 'rm -rf "$ctx"' EXIT
	kit_log "$tier: building ${entry#/} (package $pkg) statically, then $img on an empty base"
	kit_static_image "$img" "$ctx" "$PWD" "$pkg" "$entry" "${user:-65532:65532}"
	;;
*)
	kit_die "KIT_IMAGE_BUILD=$how; want dockerfile, static, or nothing (the one that works here)"
	;;
esac
kit_log "$tier: built $img ($how)"
