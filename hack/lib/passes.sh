# lib/passes.sh: a command that checks the kit's files and nothing else (make
# verify, make vet, make verify-docs, the unit tests) remembers its last pass,
# as go test's cache does for one package: a key over everything it can read,
# kept in _output/NAME.key. When the key is the same, no input has changed, the
# result cannot differ, and make test says so instead of running it again. Any
# edit, even to a doc, runs it in full; so does removing the key file.

# kit_tree_key [env] prints that key: every file of the kit (but the .git,
# _output, bin and node_modules folders), the listing of bin/ (the pinned tools'
# sizes and times), the go version and, with the argument env, for a command
# that runs tests, the environment variables that steer Go, envtest and the
# kit's tests (GO*, CGO_*, KUBEBUILDER_*, KIT_*; not KIT_T0, which is when the
# outermost script started). Where a tool it needs is missing (sha256sum is
# shasum -a 256 on macOS) it fails, and the caller runs its command in full.
kit_tree_key() {
	local with_env=${1:-}
	local sum=sha256sum
	command -v sha256sum >/dev/null || sum="shasum -a 256"
	(
		cd "$KIT_ROOT"
		go env GOVERSION
		LC_ALL=C ls -l "$KIT_BIN"
		if [ "$with_env" = env ]; then
			env | { grep -E '^(GO|CGO_|KUBEBUILDER_|KIT_)' || true; } | { grep -v '^KIT_T0=' || true; } | LC_ALL=C sort
		fi
		find . \( -name .git -o -name _output -o -name bin -o -name node_modules \) -prune -o -type f -print0 |
			LC_ALL=C sort -z | xargs -0 $sum
	) | $sum | cut -d' ' -f1
}

# kit_files_key PATHSPEC... prints the same kind of key over fewer inputs: the
# go version and the files git knows (committed, or new and not ignored) that
# the pathspecs match, for a check that reads only those (make verify's
# versions check: the go.mod and go.sum files). It fails like kit_tree_key.
kit_files_key() {
	local sum=sha256sum
	command -v sha256sum >/dev/null || sum="shasum -a 256"
	(
		cd "$KIT_ROOT"
		go env GOVERSION
		git ls-files -z --cached --others --exclude-standard -- "$@" | LC_ALL=C sort -z | xargs -0 $sum
	) | $sum | cut -d' ' -f1
}

# kit_passed_before NAME KEY succeeds when the command NAME last passed with the
# key KEY (an empty KEY never matches).
kit_passed_before() {
	[ -n "$2" ] && [ -f "$KIT_OUT/$1.key" ] && [ "$(cat "$KIT_OUT/$1.key")" = "$2" ]
}

# kit_forget_pass NAME forgets the last pass of NAME, before running it again:
# a run that fails or is interrupted must not leave an old pass behind.
kit_forget_pass() { rm -f "$KIT_OUT/$1.key"; }

# kit_remember_pass NAME KEY records that NAME passed with the key KEY, taken
# before it ran (a file changed while it ran then makes the next key differ).
kit_remember_pass() {
	[ -n "$2" ] || return 0
	mkdir -p "$KIT_OUT"
	echo "$2" >"$KIT_OUT/$1.key"
}
