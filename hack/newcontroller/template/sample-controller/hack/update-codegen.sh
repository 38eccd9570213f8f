#!/usr/bin/env bash
# update-codegen.sh regenerates everything in {{.Name}} that a tool writes, with
# the generators pinned in hack/tools/go.mod (run through `go tool -modfile`, so
# their dependencies never move the controller's):
#   deepcopy-gen   {{.APIDir}}/zz_generated.deepcopy.go
#   client-gen     pkg/generated/clientset/versioned (typed client, and a fake one for tests)
#   lister-gen     pkg/generated/listers (read {{.Plural}} from an informer's cache)
#   informer-gen   pkg/generated/informers (shared informers that fill that cache)
#   controller-gen config/crd/{{.Group}}_{{.LowerPlural}}.yaml (the CRD, from the +kubebuilder markers)
# They run in module mode with import paths and output folders given, so this
# works from any folder: no GOPATH, and the folder need not match the module path.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export GOWORK=off
gen() { go tool -modfile=hack/tools/go.mod "$@"; }

MODULE=$(go list -m)
APIS="$MODULE/pkg/apis"
# The group's package and its versions. A new version: add it here, as {{.GroupPkg}}/v1.
GROUP_VERSIONS=({{.GroupPkg}}/{{.Version}})
OUT=pkg/generated
OUT_PKG="$MODULE/$OUT"
HEADER=hack/boilerplate.go.txt

# Start from an empty output so a type that was removed leaves nothing behind.
rm -rf "$OUT"
for gv in "${GROUP_VERSIONS[@]}"; do rm -f "pkg/apis/$gv/zz_generated.deepcopy.go"; done
API_PKGS=("${GROUP_VERSIONS[@]/#/$APIS/}")
INPUTS=$(IFS=,; echo "${GROUP_VERSIONS[*]}")

echo ">> deepcopy-gen"
gen deepcopy-gen --go-header-file "$HEADER" --output-file zz_generated.deepcopy.go "${API_PKGS[@]}"

echo ">> client-gen"
gen client-gen --go-header-file "$HEADER" \
	--input-base "$APIS" --input "$INPUTS" \
	--clientset-name versioned \
	--output-dir "$OUT/clientset" --output-pkg "$OUT_PKG/clientset"

echo ">> lister-gen"
gen lister-gen --go-header-file "$HEADER" \
	--output-dir "$OUT/listers" --output-pkg "$OUT_PKG/listers" "${API_PKGS[@]}"

echo ">> informer-gen"
gen informer-gen --go-header-file "$HEADER" \
	--versioned-clientset-package "$OUT_PKG/clientset/versioned" \
	--listers-package "$OUT_PKG/listers" \
	--output-dir "$OUT/informers" --output-pkg "$OUT_PKG/informers" "${API_PKGS[@]}"

echo ">> controller-gen (CRD)"
gen controller-gen crd paths=./pkg/apis/... output:crd:artifacts:config=config/crd
