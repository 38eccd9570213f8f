# lib/image.sh: a Go program's image built without pulling anything.
# Part of hack/lib.sh, which sources it; do not source it alone.

# kit_static_image IMG CONTEXT MODULE PACKAGE ENTRY [USER] builds PACKAGE (run
# from the Go module folder MODULE, outside the workspace: GOWORK=off) statically
# (CGO_ENABLED=0, -trimpath, -s -w) to the path ENTRY of an image tagged IMG that
# holds that binary alone, on an empty base (FROM scratch, no shell), runs it as
# its entrypoint as USER (root, the image's default, when empty), and is labelled
# dev.controller-kit.image-build=static. CONTEXT is an empty folder the caller
# made and removes, for the build context. A build of minutes prints a
# heartbeat; a docker build that fails shows its output.
kit_static_image() {
	local img=$1 ctx=$2 module=$3 pkg=$4 entry=$5 user=${6:-}
	kit_with_heartbeat "${entry#/}" "" env GOWORK=off CGO_ENABLED=0 \
		go build -C "$module" -trimpath -ldflags="-s -w" -o "$ctx/${entry#/}" "$pkg" || return
	{
		echo "FROM scratch"
		echo "COPY ${entry#/} $entry"
		[ -z "$user" ] || echo "USER $user"
		echo "ENTRYPOINT [\"$entry\"]"
	} >"$ctx/Dockerfile"
	DOCKER_BUILDKIT=0 docker build -q --label dev.controller-kit.image-build=static -t "$img" "$ctx" >/dev/null 2>"$ctx/build.log" ||
		{ cat "$ctx/build.log" >&2; return 1; }
}
