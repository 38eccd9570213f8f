#!/usr/bin/env bash
# verify-clean.sh is `make verify`: it fails when a Go module of the kit compiles a
# dependency at another version than the others do (test/versions), then runs
# `make generate` and fails when that changes the tree, i.e. when committed
# generated code or manifests are stale.
# It compares the tree before and after, so unrelated edits in progress do not count.
#
# The generators write every file again even when its content does not change.
# When nothing changed, the files get their modification times back: go test's
# cache and make judge a file by its time, and would otherwise run again every
# envtest suite that reads a CRD (the cache's "(cached)" in make test-unit).
#
# Like go test's cache, it remembers its last pass (hack/lib/passes.sh: a key
# over every file of the kit, bin/'s listing and the go version, kept in
# _output/verify.key). When the key is the same, no file
# the generators read or write has changed since then, the result cannot differ,
# and it says so instead of generating again (about 20 s and 25 CPU seconds of
# make test). Any edit, even to a doc, runs it in full; so does removing
# _output/verify.key.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$KIT_ROOT"

# The kit's Go modules compile each shared dependency at one version
# (test/versions). It reads only the go.mod and go.sum files, so it remembers its
# own pass, keyed over those: a change elsewhere does not run it again.
versions_key=$(kit_files_key 'go.mod' '*/go.mod' 'go.sum' '*/go.sum' 'go.work' 2>/dev/null) || versions_key=""
if kit_passed_before versions "$versions_key"; then
	echo ">> verify: no go.mod or go.sum has changed since the versions check last passed ($KIT_OUT/versions.key)"
else
	kit_forget_pass versions
	go run ./test/versions
	kit_remember_pass versions "$versions_key"
fi

key=$(kit_tree_key 2>/dev/null) || key=""
if kit_passed_before verify "$key"; then
	echo ">> verify: no file has changed since make verify last passed ($KIT_OUT/verify.key); generated code and manifests are up to date"
	exit 0
fi
kit_forget_pass verify

snapshot() { git status --porcelain --untracked-files=all && git diff; }
# Each file git knows of (and each new one it does not ignore), as
# "seconds.nanoseconds<TAB>path".
mtimes() { git ls-files -z --cached --others --exclude-standard | xargs -0 stat -c '%.9Y	%n' 2>/dev/null || true; }
before=$(snapshot)
times=$(mtimes)
# The generators delete their output folders before they write them again: a
# Ctrl-C in between leaves generated code missing. Say so, and how to mend it.
trap 'echo "verify: interrupted while make generate was rewriting the generated code; run make generate (or git checkout the files git status shows deleted) before you build" >&2; exit 130' INT TERM
make --no-print-directory generate
trap - INT TERM
after=$(snapshot)
if [ "$before" != "$after" ]; then
	echo "verify: 'make generate' changed these files; run it and commit the result:" >&2
	git status --porcelain --untracked-files=all >&2
	exit 1
fi
# Nothing changed: put back the times of the files the generators rewrote.
{ diff <(echo "$times") <(mtimes) || true; } | sed -n 's/^< //p' | while IFS=$'\t' read -r t path; do
	touch -m -d "@$t" -- "$path"
done
kit_remember_pass verify "$key"
echo ">> verify: generated code and manifests are up to date"
