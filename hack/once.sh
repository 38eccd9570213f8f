#!/usr/bin/env bash
# once.sh NAME COMMAND... runs COMMAND unless it passed before with every input
# as it is now (hack/lib/passes.sh: the kit's files, bin/'s listing, the go
# version and the variables that steer Go and the tests, kept in
# _output/NAME.key), as go test's cache does for one package. make test runs
# its checks of the kit's files through it (make vet, make verify-docs, the
# unit and envtest suites), whose results depend on those inputs alone; run the
# command itself (make vet, ...) to run it whatever the key says.
# Exit status: COMMAND's, or 0 when it is not run again.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$KIT_ROOT"

[ $# -ge 2 ] || kit_die "usage: hack/once.sh NAME COMMAND..."
name=$1
shift
key=$(kit_tree_key env 2>/dev/null) || key=""
if kit_passed_before "$name" "$key"; then
	echo ">> $name: no file has changed since it last passed ($KIT_OUT/$name.key); not run again (run '$*' to run it anyway)"
	exit 0
fi
kit_forget_pass "$name"
"$@"
kit_remember_pass "$name" "$key"
