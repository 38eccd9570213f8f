#!/usr/bin/env bash
# verify-clean.sh is `make verify`: it runs `make generate` and fails when that
# changes the tree, i.e. when committed generated code or manifests are stale.
# It compares the tree before and after, so unrelated edits in progress do not count.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$KIT_ROOT"

snapshot() { git status --porcelain --untracked-files=all && git diff; }
before=$(snapshot)
make --no-print-directory generate
after=$(snapshot)
if [ "$before" != "$after" ]; then
	echo "verify: 'make generate' changed these files; run it and commit the result:" >&2
	git status --porcelain --untracked-files=all >&2
	exit 1
fi
echo ">> verify: generated code and manifests are up to date"
