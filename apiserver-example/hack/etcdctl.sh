#!/usr/bin/env bash
# etcdctl.sh is make etcdctl (lesson 6): it builds bin/etcdctl, etcd's own client at
# the release of the cluster's etcd (hack/etcd/go.mod), and prints on standard output
# the export that points it at the etcd of the local cluster KIT_CLUSTER names:
#
#   eval "$(make etcdctl)"     then     etcdctl get /registry/pods --prefix --keys-only
#
# The endpoint is the one the cluster's kube-apiserver stores objects in (its
# --etcd-servers, which local-up.sh writes into the cluster's file, KIT_CLUSTER_INFO):
# plain http on 127.0.0.1, every key under its --etcd-prefix, /registry. The build's
# lines and any warning go to standard error, so eval gets the export alone. With no
# local cluster running it builds the binary, says so, and prints nothing to eval.
# The lesson only reads: a write behind the API server's back never reaches its
# watch cache (docs/lessons/06-kube-apiserver.md says why).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../hack/lib.sh"
KIT_ME="make etcdctl"

"$KIT_ROOT/hack/build-bins.sh" etcdctl >&2

# info_field NAME prints the string field NAME of the cluster's file, one field a
# line as local-up.sh writes it.
info_field() { sed -n "s|^ *\"$1\": \"\(.*\)\",\{0,1\}$|\1|p" "$KIT_CLUSTER_INFO"; }

if [ ! -f "$KIT_CLUSTER_INFO" ]; then
	kit_error "warning: no local cluster called $KIT_CLUSTER is running ($KIT_CLUSTER_INFO is missing), so there is no etcd to point etcdctl at; start one with: ${KIT_MAKE_PREFIX}make local-up. Only the kit's local cluster runs an etcd of its own on loopback; a kind cluster's is inside its node"
	exit 0
fi
endpoint=$(info_field etcdEndpoint)
if [ -z "$endpoint" ]; then
	kit_die "$KIT_CLUSTER_INFO names no etcdEndpoint: it was written by an older make local-up; run ${KIT_MAKE_PREFIX}make local-up once more (it rewrites the file and leaves the running cluster as it is)"
fi
echo "export ETCDCTL_ENDPOINTS=$endpoint PATH=$KIT_BIN:\$PATH"
