#!/usr/bin/env bash
# docker-build-csi-sidecars.sh IMG... is the sidecars' half of csi-driver-example's
# `make docker-build` (lesson 7 on kind): one image for each IMG, of the CSI sidecar
# its name says (controller-kit/csi-provisioner:TAG holds csi-provisioner), built from
# the kit's own build module hack/csi, so the sidecars on kind are the versions make
# run-csi runs (on the kit's Kubernetes v0.37.2), not registry.k8s.io's images, which
# the kit's machines could not pull anyway. The static way of docker-build.sh: the
# binary built statically (CGO_ENABLED=0, GOWORK=off, -trimpath), alone on an empty
# base (FROM scratch), no shell. They run as root, as the CSI project's own images do
# (distroless/static): the driver, root too, makes the socket they connect to.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../hack/lib.sh"
KIT_ME=docker-build-csi-sidecars.sh
KIT_DIE_STATUS=2

[ $# -gt 0 ] || kit_die "usage: docker-build-csi-sidecars.sh IMG... (controller-kit/csi-provisioner:TAG, ...)"
"$KIT_ROOT/hack/cluster/require-docker.sh" "make docker-build"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for img in "$@"; do
	name=${img%:*}
	name=${name##*/}
	# The package: hack/csi/go.mod's tool line that ends in /cmd/NAME (the
	# module lists its programs there, once).
	pkg=$(awk -v want="/cmd/$name" 'substr($1, length($1) - length(want) + 1) == want { print $1 }' "$KIT_ROOT/hack/csi/go.mod")
	[ -n "$pkg" ] || kit_die "$img: hack/csi/go.mod has no tool ending in /cmd/$name (it pins csi-provisioner, csi-attacher and csi-sanity)"
	ctx="$work/$name"
	mkdir -p "$ctx"
	kit_log "$name: building $pkg statically (module hack/csi), then $img on an empty base"
	kit_with_heartbeat "$name" "" env GOWORK=off CGO_ENABLED=0 \
		go build -C "$KIT_ROOT/hack/csi" -trimpath -ldflags="-s -w" -o "$ctx/$name" "$pkg"
	cat >"$ctx/Dockerfile" <<EOF
FROM scratch
COPY $name /$name
ENTRYPOINT ["/$name"]
EOF
	DOCKER_BUILDKIT=0 docker build -q --label dev.controller-kit.image-build=static -t "$img" "$ctx" >/dev/null 2>"$work/$name.log" ||
		{ cat "$work/$name.log" >&2; exit 1; }
	kit_log "$name: built $img (static)"
done
