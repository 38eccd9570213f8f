#!/usr/bin/env bash
# update-codegen.sh regenerates everything in sample-controller that is written by
# a tool, from the pinned generators in the kit's bin/ (hack/build-bins.sh codegen):
#   deepcopy-gen   pkg/apis/samplecontroller/v1alpha1/zz_generated.deepcopy.go
#   client-gen     pkg/generated/clientset/versioned (typed client, and a fake one for tests)
#   lister-gen     pkg/generated/listers (read Foos from an informer's cache)
#   informer-gen   pkg/generated/informers (shared informers that fill that cache)
#   controller-gen config/crd/samplecontroller.k8s.io_foos.yaml (the CRD, from the +kubebuilder markers)
#
# The generators run in Go module mode and are given import paths and output
# directories explicitly, so this works from any clone directory: no GOPATH, no
# vendor/, and the directory name does not have to match the module path.
set -euo pipefail

TIER=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KIT_BIN=${KIT_BIN:-$(cd "$TIER/.." && pwd)/bin}
cd "$TIER"

for tool in deepcopy-gen client-gen lister-gen informer-gen controller-gen; do
	if [ ! -x "$KIT_BIN/$tool" ]; then
		echo "update-codegen: $KIT_BIN/$tool is missing; build it with: hack/build-bins.sh codegen (from the repo root)" >&2
		exit 1
	fi
done

MODULE=$(awk '$1 == "module" {print $2; exit}' go.mod)
APIS="$MODULE/pkg/apis"
API="$APIS/samplecontroller/v1alpha1"
OUT=pkg/generated
OUT_PKG="$MODULE/$OUT"
HEADER=hack/boilerplate.go.txt

# Start from an empty output so a type that was removed leaves nothing behind.
rm -rf "$OUT"
rm -f pkg/apis/samplecontroller/v1alpha1/zz_generated.deepcopy.go

echo ">> deepcopy-gen"
"$KIT_BIN/deepcopy-gen" --go-header-file "$HEADER" --output-file zz_generated.deepcopy.go "$API"

echo ">> client-gen"
"$KIT_BIN/client-gen" --go-header-file "$HEADER" \
	--input-base "$APIS" --input samplecontroller/v1alpha1 \
	--clientset-name versioned \
	--output-dir "$OUT/clientset" --output-pkg "$OUT_PKG/clientset"

echo ">> lister-gen"
"$KIT_BIN/lister-gen" --go-header-file "$HEADER" \
	--output-dir "$OUT/listers" --output-pkg "$OUT_PKG/listers" "$API"

echo ">> informer-gen"
"$KIT_BIN/informer-gen" --go-header-file "$HEADER" \
	--versioned-clientset-package "$OUT_PKG/clientset/versioned" \
	--listers-package "$OUT_PKG/listers" \
	--output-dir "$OUT/informers" --output-pkg "$OUT_PKG/informers" "$API"

echo ">> controller-gen (CRD)"
"$KIT_BIN/controller-gen" crd paths=./pkg/apis/... output:crd:artifacts:config=config/crd
