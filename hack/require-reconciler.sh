#!/usr/bin/env bash
# require-reconciler.sh BIN NAME stops a run target before any cluster work when
# NAME (make's RECONCILER) is set and is not one of the Reconcilers the built
# controller BIN has: it asks BIN itself (--list-reconcilers, one name a line) and
# lists them. An empty NAME is the controller's own default. Exit code 2.
set -euo pipefail
bin=$1 name=${2:-}
[ -n "$name" ] || exit 0
names=$("$bin" --list-reconcilers)
if ! grep -qxF -- "$name" <<<"$names"; then
	echo "RECONCILER=$name: $(basename "$bin") has no Reconciler of that name (it has: $(echo $names | sed 's/ /, /g'))." >&2
	echo "Register yours in the tier's reconcilers map first (the lesson's \"Your own Reconciler\"), or fix the name." >&2
	exit 2
fi
