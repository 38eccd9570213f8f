#!/usr/bin/env bash
# new-controller.sh is `make new-controller`: it builds hack/newcontroller (the
# generator) and runs it with the make variables, FROM, DIR, MODULE, GROUP, KIND,
# VERSION and NAME. The generator checks them all before it writes anything.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

mkdir -p "$KIT_OUT/bin"
(cd "$KIT_ROOT" && go build -o "$KIT_OUT/bin/newcontroller" ./hack/newcontroller)
# DIR is taken as the user typed it, relative to where make was started.
exec "$KIT_OUT/bin/newcontroller" -kit "$KIT_ROOT" \
	-from "${FROM:-}" -dir "${DIR:-}" -module "${MODULE:-}" -group "${GROUP:-}" \
	-kind "${KIND:-}" -version "${VERSION:-v1alpha1}" -name "${NAME:-}"
