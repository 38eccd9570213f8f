#!/usr/bin/env bash
# verify-codegen.sh checks that the committed generated code is what
# hack/update-codegen.sh writes, and that writing it does not depend on where the
# project lives: it clones this project's own repository (the folder above hack/,
# HEAD only: commit first) into a temporary folder whose name is not the module
# path, runs `make generate` there, and fails if that changes any file.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOP=$(git -C "$ROOT" rev-parse --show-toplevel)
if [ "$TOP" != "$ROOT" ]; then
	echo "verify-codegen: $ROOT is not the top of its own git repository (git says $TOP): run git init there and commit, then try again" >&2
	exit 1
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/codegen-anywhere-XXXXXX")
trap 'rm -rf "$WORK"' EXIT

CLONE="$WORK/any-folder-name"
git clone --quiet "$ROOT" "$CLONE"
echo ">> cloned $(git -C "$ROOT" rev-parse --short HEAD) of $ROOT into $CLONE"
if [ -n "$(git -C "$ROOT" status --porcelain)" ]; then
	echo "   (uncommitted changes in $ROOT are not part of the clone: commit them to check them)"
fi
make --no-print-directory -C "$CLONE" generate
changes=$(git -C "$CLONE" status --porcelain)
if [ -n "$changes" ]; then
	echo "!! make generate in a fresh clone changed files; run make generate and commit the result:" >&2
	echo "$changes" >&2
	exit 1
fi
echo ">> generated code is current and does not depend on the project's location"
