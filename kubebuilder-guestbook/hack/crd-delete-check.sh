#!/usr/bin/env bash
# crd-delete-check.sh TARGET is what a make target that deletes
# CustomResourceDefinitions runs first (kubebuilder-guestbook's `make uninstall`
# and `make undeploy`), with the manifests it is about to delete on standard input.
#
# Deleting a CRD deletes every object of it, and kubectl waits until they are all
# gone. An object that carries a finalizer goes only once a controller removes it:
# with no controller running (or with the controller deleted by the same command,
# as make undeploy does), kubectl would wait forever, leaving the CRD and every
# object of it terminating. So, before anything is deleted, this lists the objects
# of those CRDs that carry a finalizer, names each one (namespace/name) with the
# command that unblocks it, and exits 1: nothing was changed. It exits 0 when no
# object carries one (or the CRDs are not installed).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../hack/lib.sh"

target=${1:?usage: crd-delete-check.sh TARGET < manifests}
KIT_ME=$target
# The same kubectl and cluster as the delete that follows: $KUBECTL (the tier's
# Makefile passes its own), else the kit's, with $KUBECONFIG.
kubectl() { "${KUBECTL:-$KIT_BIN/kubectl}" "$@"; }
# The CRDs among the manifests that exist in the cluster.
crds=$(kubectl get --ignore-not-found -f - -o name 2>/dev/null | sed -n 's|^customresourcedefinition.apiextensions.k8s.io/||p') || {
	kit_error "cannot read the CustomResourceDefinitions from the cluster KUBECONFIG points at (is it running?); nothing was deleted"
	exit 1
}

blocked=0
for crd in $crds; do
	kind=$(kubectl get crd "$crd" -o jsonpath='{.spec.names.kind}')
	# Each object with a finalizer, as namespace/name and its finalizers.
	objects=$(kubectl get "$crd" --all-namespaces -o jsonpath='{range .items[?(@.metadata.finalizers)]}{.metadata.namespace}{"/"}{.metadata.name}{" "}{.metadata.finalizers}{"\n"}{end}')
	[ -n "$objects" ] || continue
	echo "$target: deleting the CRD $crd would wait until a controller removes the finalizer of each $kind below, and none may be running:" >&2
	while read -r object finalizers; do
		blocked=$((blocked + 1))
		ns=${object%%/*} name=${object#*/}
		flag="-n $ns "
		[ -n "$ns" ] || flag="" object=$name
		finalizers=$(tr -d '[]"' <<<"$finalizers")
		echo "  $object (finalizer $finalizers): unblock it with" >&2
		echo "    its controller running:                kubectl ${flag}delete $crd $name" >&2
		echo "    no controller (what it made stays):    kubectl ${flag}patch $crd $name --type=merge -p '{\"metadata\":{\"finalizers\":null}}'" >&2
	done <<<"$objects"
done
if [ "$blocked" -gt 0 ]; then
	kit_error "nothing was deleted; run $target again once those objects are gone"
	exit 1
fi
