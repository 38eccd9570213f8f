#!/usr/bin/env bash
# verify-codegen-anywhere.sh checks that code generation does not depend on where
# the repository lives: it clones the committed HEAD into a temporary folder whose
# name is not the module path (and is outside GOPATH), runs `make generate` for
# sample-controller there, and fails if that changes any file.
# Uncommitted changes are not part of the clone: commit first.
set -euo pipefail

TIER=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOT=$(cd "$TIER/.." && pwd)
WORK=$(mktemp -d /tmp/codegen-anywhere-XXXXXX)
trap 'rm -rf "$WORK"' EXIT

CLONE="$WORK/any-folder-name"
git clone --quiet "$ROOT" "$CLONE"
echo ">> cloned HEAD into $CLONE (GOPATH is $(go env GOPATH))"
# Reuse the pinned generators already built here, so only generation is tested.
KIT_BIN="$ROOT/bin" make --no-print-directory -C "$CLONE/sample-controller" generate
# Only this tier's files count: go.work.sum at the root is the workspace's
# business (Go records checksums there whenever it loads packages).
changes=$(git -C "$CLONE" status --porcelain -- sample-controller)
if [ -n "$changes" ]; then
	echo "!! make generate in a fresh clone changed files:" >&2
	echo "$changes" >&2
	git -C "$CLONE" diff --stat -- sample-controller >&2
	exit 1
fi
echo ">> generated code is current and does not depend on the clone's location"
