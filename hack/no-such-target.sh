#!/usr/bin/env bash
# no-such-target.sh TARGET WHERE is what `make TARGET` runs (the Makefiles'
# .DEFAULT rule) when the Makefile in WHERE ("root", or a tier's folder name) has
# no such target: it says which other Makefile has it and the command to run
# there, so a target typed in the wrong folder costs one line to fix. Exit code 2,
# as make's own "No rule to make target".
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

target=$1 where=$2
here="the repository root" up=""
# The Makefiles run this from their own folder: the root, or a tier one level down.
[ "$where" = root ] || { here="$where/"; up="../"; }

# has_target MAKEFILE succeeds when MAKEFILE defines TARGET as a rule of its own.
has_target() { grep -qE "^${target//./\\.}:([^=]|$)" "$1"; }

found=()
[ "$where" != root ] && has_target "$KIT_ROOT/Makefile" && found+=("at the repository root:  cd .. && make $target")
for tier in $(kit_tiers); do
	[ "$tier" != "$where" ] && has_target "$KIT_ROOT/$tier/Makefile" && found+=("in $tier/:  make -C $up$tier $target")
done
if [ ${#found[@]} -eq 0 ]; then
	echo "make: $here has no target '$target'; 'make help' lists the targets here." >&2
else
	echo "make: $here has no target '$target'. It is a target" >&2
	printf '  %s\n' "${found[@]}" >&2
fi
exit 2
