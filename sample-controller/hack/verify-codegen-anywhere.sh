#!/usr/bin/env bash
# verify-codegen-anywhere.sh checks that code generation does not depend on where
# the repository lives: it clones the committed HEAD into a temporary folder whose
# name is not the module path (and is outside GOPATH), runs `make generate` for
# this tier there, and fails if that changes any file. The tier is the folder
# above this script's, named by where the script is, so a copy of the tier checks
# itself. Uncommitted changes are not part of the clone: commit first.
set -euo pipefail

TIER=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOT=$(git -C "$TIER" rev-parse --show-toplevel)
# The tier's path inside its repository, such as sample-controller.
REL=${TIER#"$ROOT"/}
if [ "$REL" = "$TIER" ] || [ "$REL" = "$ROOT" ]; then
	echo "verify-codegen: $TIER is not a folder inside the git repository $ROOT" >&2
	exit 1
fi
WORK=$(mktemp -d /tmp/codegen-anywhere-XXXXXX)
trap 'rm -rf "$WORK"' EXIT

CLONE="$WORK/any-folder-name"
git clone --quiet "$ROOT" "$CLONE"
echo ">> cloned HEAD into $CLONE (GOPATH is $(go env GOPATH)); checking $REL"
# Reuse the pinned generators already built here, so only generation is tested.
KIT_BIN="${KIT_BIN:-$ROOT/bin}" make --no-print-directory -C "$CLONE/$REL" generate
# Only this tier's files count: go.work.sum at the root is the workspace's
# business (Go records checksums there whenever it loads packages).
changes=$(git -C "$CLONE" status --porcelain -- "$REL")
if [ -n "$changes" ]; then
	echo "!! make generate in a fresh clone changed files:" >&2
	echo "$changes" >&2
	git -C "$CLONE" diff --stat -- "$REL" >&2
	exit 1
fi
echo ">> generated code is current and does not depend on the clone's location"
