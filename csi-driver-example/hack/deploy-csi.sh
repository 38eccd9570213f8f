#!/usr/bin/env bash
# deploy-csi.sh is lesson 7 part 2's way onto kind: the toy CSI driver
# (csi-driver-example) in the cluster, its controller half as the Deployment
# csi-controller (the driver, csi-provisioner and csi-attacher in one Pod) and
# its node half as the DaemonSet csi-node (the driver alone, privileged,
# registering itself with the kubelet), in the namespace csi-driver-example;
# the manifests are csi-driver-example/config/deploy, beside the RBAC, the
# CSIDriver and the StorageClass of config/.
#
#   deploy-csi.sh check      refuse at once, saying why and what still runs on
#                            the local cluster, unless KUBECONFIG reaches a kind
#                            cluster (Docker running) that admits privileged Pods
#                            in the driver's namespace
#   deploy-csi.sh apply      refuse a RECONCILER the driver's image has no entry
#                            for (--list-reconcilers), check, then apply
#                            everything with the images IMG,
#                            PROVISIONER_IMG and ATTACHER_IMG (loaded into the
#                            cluster already: make kind-load) and the Reconciler
#                            RECONCILER (empty: reference), and wait until the
#                            Deployment and the DaemonSet are ready
#   deploy-csi.sh deploy     apply, then wait until the kubelet of every node has
#                            registered the driver (its CSINode lists it); with
#                            RECONCILER=stub it says why it does not wait, with
#                            DEPLOY_WAIT=ready it does not either (make check's
#                            kind checks see the registration themselves)
#   deploy-csi.sh undeploy   the claims of the driver's StorageClass and the Pods
#                            that use them deleted first, while the driver still
#                            runs to unpublish, unstage and delete their volumes;
#                            then everything apply made; then what is left on
#                            each node (a mount of a volume's folder, the
#                            driver's folders and sockets) removed through docker
#                            exec; and it says what, if anything, is left
#
# The root's make deploy-csi is check, then the tier's make docker-build,
# kind-load and deploy; make undeploy-csi is undeploy. make check LESSON=7 on
# kind runs apply itself, with the Reconciler under test.
#
# Each Pod template carries the images' IDs in an annotation, so an image built
# again under the same tag (the git commit, which a learner's change does not
# move) restarts the Pods, and an unchanged one does not.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../hack/lib.sh"
KIT_ME="make deploy-csi"
[ "${1:-}" != undeploy ] || KIT_ME="make undeploy-csi"

config="$KIT_ROOT/csi-driver-example/config"
namespace=csi-driver-example
class=csi-driver-example
# The driver's name, as main.go's DefaultDriverName and config/csidriver.yaml
# give it.
driver=$(sed -n 's/^  name: //p' "$config/csidriver.yaml" | head -n 1)
# Never empty: the folders below, which undeploy removes, end with it.
[ -n "$driver" ] || kit_die "$config/csidriver.yaml names no driver (no '  name: ' line under metadata): put the driver's name back"
# The folders of the driver on a node (config/deploy/node.yaml's flags).
state_dir=/var/lib/csi-driver-example
plugin_dir=/var/lib/kubelet/plugins/$driver
registration_socket=/var/lib/kubelet/plugins_registry/$driver-reg.sock
# Where the kubelet keeps the staging folders of the driver's volumes.
staging_dir=/var/lib/kubelet/plugins/kubernetes.io/csi/$driver
kubeconfig=${KUBECONFIG:-$KIT_KUBECONFIG}
k() { "$KIT_BIN/kubectl" --kubeconfig "$kubeconfig" "$@"; }

# wait_for WHAT SECONDS COMMAND... polls COMMAND every 2 seconds until it
# succeeds, and says so; it fails after SECONDS, saying what it waited for.
wait_for() {
	local what=$1 seconds=$2 deadline=$((SECONDS + $2))
	shift 2
	until "$@" >/dev/null 2>&1; do
		if ((SECONDS > deadline)); then
			kit_error "timed out after $(kit_elapsed "$seconds") waiting for $what"
			return 1
		fi
		sleep 2
	done
	kit_log "$what"
}

# nodes prints the cluster's Nodes, one a line: on kind, each is a Docker
# container of the same name.
nodes() { k get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'; }

# on_node NODE COMMAND... runs COMMAND (sh -c) inside the kind node NODE.
on_node() {
	local node=$1
	shift
	docker exec "$node" sh -c "$*"
}

# leftover_mounts NODE prints the mount points on NODE whose source is a
# volume's folder of the driver (a bind mount NodeStageVolume or
# NodePublishVolume made and no unstage or unpublish removed), one a line.
# mountinfo's fourth field is the mounted folder, its fifth the mount point;
# the folder is named as the file system holding it sees it (kind keeps a
# node's /var in a Docker volume: /var/lib/docker/volumes/.../_data/lib/...),
# so the end of its name is what tells.
leftover_mounts() {
	on_node "$1" "cat /proc/1/mountinfo" | awk -v dir="/${state_dir##*/}/volumes/" 'index($4, dir) > 0 { print $5 }'
}

refuse() {
	kit_die "$1
Part 1 of lesson 7 does not need it: make run-csi and make check LESSON=7 run the driver's
Controller service beside the kit's local cluster (make local-up), as local processes."
}

# check_kind refuses, at once, a cluster that is no kind cluster of this
# machine's Docker engine.
check_kind() {
	"$KIT_ROOT/hack/cluster/require-docker.sh" "make deploy-csi (the node half of lesson 7 runs on kind, whose nodes are Docker containers)" ||
		refuse "no Docker engine: see above."
	"$KIT_ROOT/hack/build-bins.sh" kubectl kind >/dev/null
	local context
	context=$(k config current-context 2>/dev/null) ||
		refuse "no cluster: $kubeconfig has no current context. Start kind first: make kind-up."
	case $context in
	kind-*) ;;
	*) refuse "the cluster of $kubeconfig (context $context) is no kind cluster, and the node half needs a real kubelet, which the local cluster's kwok nodes are not. Start kind first: make local-down, then make kind-up (the two share the kit kubeconfig); or KIT_CLUSTER=NAME make kind-up, and the same KIT_CLUSTER here." ;;
	esac
	local node
	for node in $(nodes); do
		docker inspect "$node" >/dev/null 2>&1 ||
			refuse "the Node $node of the kind cluster ${context#kind-} is no Docker container here: the driver's folders on the nodes are reached through docker exec, so run it on the machine that runs kind."
	done
}

# check refuses, at once, a cluster the node half cannot run on: no kind
# cluster (check_kind), or one whose admission refuses the node plugin's Pod.
check() {
	check_kind
	# The namespace first, when it is not there: whether its Pods may be
	# privileged is its label and the API server's admission configuration.
	k get namespace "$namespace" >/dev/null 2>&1 ||
		k apply --server-side -f "$config/rbac/service_account.yaml" >/dev/null
	local refusal
	if ! refusal=$(privileged_pod | k create --dry-run=server -f - 2>&1 >/dev/null); then
		refuse "the cluster refuses privileged Pods in the namespace $namespace, and the node plugin is one (it mounts with Bidirectional propagation); the API server says:
  $refusal
The namespace's Pod Security label is $(k get namespace "$namespace" -o jsonpath='{.metadata.labels.pod-security\.kubernetes\.io/enforce}' 2>/dev/null || echo unknown); config/rbac/service_account.yaml labels it privileged, and says why. Where another label was set by hand, delete the namespace (make undeploy-csi) and deploy again."
	fi
}

# require_reconciler refuses a RECONCILER the driver in $IMG has no entry for
# (its --list-reconcilers): both its Pods would exit at start, and a rollout
# can count a container that ran for a moment as ready.
require_reconciler() {
	local want=${RECONCILER:-reference} have
	have=$(docker run --rm "$IMG" --list-reconcilers) ||
		kit_die "the driver in $IMG does not answer --list-reconcilers: build it again (make -C csi-driver-example docker-build kind-load, or make deploy-csi, which does)"
	kit_listed "$want" echo "$have" ||
		kit_die "RECONCILER=$want: the driver in $IMG has no Reconciler of that name (it has: $(echo $have | sed 's/ /, /g')). Add yours to the reconcilers map in csi-driver-example/main.go first (lesson 7, section 17), then run make deploy-csi RECONCILER=$want again."
}

# privileged_pod prints a Pod such as the node plugin's: privileged, with the
# kubelet's folder mounted Bidirectional.
privileged_pod() {
	cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: privileged-check, namespace: $namespace}
spec:
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    securityContext: {privileged: true}
    volumeMounts: [{name: k, mountPath: /var/lib/kubelet, mountPropagation: Bidirectional}]
  volumes: [{name: k, hostPath: {path: /var/lib/kubelet, type: Directory}}]
EOF
}

# image_id IMAGE prints the ID of the local image IMAGE.
image_id() {
	docker image inspect -f '{{.Id}}' "$1" 2>/dev/null ||
		kit_die "no image $1 here: build it first (make -C csi-driver-example docker-build kind-load, or make deploy-csi, which does)"
}

# manifests prints config/deploy with the images, their IDs and the Reconciler.
manifests() {
	local ids
	ids=$(for img in "$IMG" "$PROVISIONER_IMG" "$ATTACHER_IMG"; do image_id "$img"; done | cksum | cut -d' ' -f1)
	sed -e "s|image: controller-kit/csi-driver-example:.*|image: $IMG|" \
		-e "s|image: controller-kit/csi-provisioner:.*|image: $PROVISIONER_IMG|" \
		-e "s|image: controller-kit/csi-attacher:.*|image: $ATTACHER_IMG|" \
		-e "s|controller-kit.dev/image-ids: .*|controller-kit.dev/image-ids: \"$ids\"|" \
		-e "s|--reconciler=reference|--reconciler=${RECONCILER:-reference}|" \
		"$config/deploy/controller.yaml" - "$config/deploy/node.yaml" <<<"---"
}

apply() {
	if [ -z "${IMG:-}" ] || [ -z "${PROVISIONER_IMG:-}" ] || [ -z "${ATTACHER_IMG:-}" ]; then
		kit_die "IMG, PROVISIONER_IMG and ATTACHER_IMG name the three images (csi-driver-example's Makefile sets them)"
	fi
	require_reconciler
	check
	kit_log "applying the RBAC, the CSIDriver, the StorageClass and config/deploy (driver $IMG, --reconciler=${RECONCILER:-reference})"
	# --force-conflicts: the kit's files win over a field changed by hand since
	# (a kubectl patch of the CSIDriver's storageCapacity, lesson 7 section 10).
	k apply --server-side --force-conflicts -f "$config/rbac/" -f "$config/csidriver.yaml" -f "$config/storageclass.yaml" | sed 's/^/    /'
	manifests | k apply --server-side -f - | sed 's/^/    /'
	wait_for "Deployment csi-controller ready (the driver, csi-provisioner, csi-attacher)" 180 \
		k -n "$namespace" rollout status deployment/csi-controller --timeout=5s || { why_not_ready; return 1; }
	wait_for "DaemonSet csi-node ready on every node" 180 \
		k -n "$namespace" rollout status daemonset/csi-node --timeout=5s || { why_not_ready; return 1; }
}

# why_not_ready prints what the driver's Pods say: their state, and the last
# lines of each container's log.
why_not_ready() {
	k -n "$namespace" get pods -o wide >&2 || true
	local pod
	for pod in $(k -n "$namespace" get pods -o name 2>/dev/null); do
		echo "--- $pod: kubectl -n $namespace logs $pod --all-containers --tail=10" >&2
		k -n "$namespace" logs "$pod" --all-containers --tail=10 >&2 || true
	done
}

# registered NODE: the kubelet of NODE lists the driver in the Node's CSINode.
registered() {
	kit_listed "$driver" k get csinode "$1" -o jsonpath='{range .spec.drivers[*]}{.name}{"\n"}{end}'
}

deploy() {
	apply
	if [ "${DEPLOY_WAIT:-registered}" = ready ]; then
		return 0
	fi
	if [ "${RECONCILER:-reference}" = stub ]; then
		kit_log "not waiting for the kubelet to register the driver: the stub's registration service is exercise 4, and answers GetInfo with Unimplemented until you write it; make check LESSON=7 says whether it registers"
		return 0
	fi
	# Up to 3 minutes: after a failed registration (the stub's, say) the kubelet
	# tries the socket again only after a backoff of up to 2 minutes.
	local node
	for node in $(nodes); do
		wait_for "the kubelet of $node registered the driver $driver (CSINode $node lists it)" 180 registered "$node" ||
			kit_die "the kubelet of $node has not registered the driver. Its reasons are in its log: docker exec $node journalctl -u kubelet --since '-5min' | grep -i $driver; the driver's: kubectl -n $namespace logs daemonset/csi-node"
	done
	kit_log "deployed: a claim of the StorageClass $class and a Pod using it get a volume the kubelet mounts (csi-driver-example/config/examples)"
}

# --- undeploy ---------------------------------------------------------------

# claims_of_class prints the claims of the driver's StorageClass as NS/NAME.
claims_of_class() {
	k get pvc -A -o jsonpath='{range .items[?(@.spec.storageClassName=="'"$class"'")]}{.metadata.namespace}/{.metadata.name}{"\n"}{end}'
}

# volumes_of_driver prints the PersistentVolumes of the driver, one a line.
volumes_of_driver() {
	k get pv -o jsonpath='{range .items[?(@.spec.csi.driver=="'"$driver"'")]}{.metadata.name}{"\n"}{end}'
}

# attachments_of_driver prints the VolumeAttachments of the driver.
attachments_of_driver() {
	k get volumeattachments -o jsonpath='{range .items[?(@.spec.attacher=="'"$driver"'")]}{.metadata.name}{"\n"}{end}'
}

# pods_using NS CLAIM prints the Pods of NS whose volumes name CLAIM.
pods_using() {
	k -n "$1" get pods -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.spec.volumes[*].persistentVolumeClaim.claimName}{"\n"}{end}' |
		awk -v claim="$2" '{ for (i = 2; i <= NF; i++) if ($i == claim) { print $1; next } }'
}

# none COMMAND...: COMMAND prints nothing.
none() { [ -z "$("$@" 2>/dev/null)" ]; }

# released: no PersistentVolume and no VolumeAttachment of the driver is left.
released() { none volumes_of_driver && none attachments_of_driver; }

# unregistered NODE: the CSINode of NODE does not list the driver.
unregistered() { ! registered "$1"; }

# namespace_gone: the driver's namespace is gone.
namespace_gone() { ! k get namespace "$namespace" >/dev/null 2>&1; }

# release_volumes deletes the claims of the driver's StorageClass, and the Pods
# that use them, and waits until the driver released their volumes.
release_volumes() {
	local claim pod
	for claim in $(claims_of_class); do
		for pod in $(pods_using "${claim%/*}" "${claim#*/}"); do
			kit_log "deleting Pod ${claim%/*}/$pod, which uses the claim $claim"
			k -n "${claim%/*}" delete pod "$pod" --wait=false >/dev/null
		done
		kit_log "deleting claim $claim"
		k -n "${claim%/*}" delete pvc "${claim#*/}" --wait=false >/dev/null
	done
	# While the driver runs: the kubelet unpublishes and unstages, csi-attacher
	# detaches, csi-provisioner deletes each volume of a Delete class.
	wait_for "the claims of the StorageClass $class gone" 180 none claims_of_class || true
	local pv
	for pv in $(volumes_of_driver); do
		if [ "$(k get pv "$pv" -o jsonpath='{.spec.persistentVolumeReclaimPolicy}')" != Delete ]; then
			kit_log "deleting PersistentVolume $pv (reclaim policy Retain: nothing else deletes it)"
			k delete pv "$pv" --wait=false >/dev/null
		fi
	done
	wait_for "the driver's PersistentVolumes and VolumeAttachments gone" 120 released || true
	# What the driver could not release (a learner's driver that fails
	# DeleteVolume, say): its finalizers taken off, since the driver goes now;
	# its folder goes with the node's folders below.
	local object
	for object in $(volumes_of_driver | sed 's|^|pv/|') $(attachments_of_driver | sed 's|^|volumeattachment/|'); do
		kit_log "removing $object, which the driver did not release (its finalizers taken off)"
		k patch "$object" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
		k delete "$object" --ignore-not-found --wait=false >/dev/null 2>&1 || true
	done
}

# clean_node NODE removes what the driver leaves on NODE: a mount of a
# volume's folder, the kubelet's staging folders of the driver, the driver's
# sockets and its state folder.
clean_node() {
	local node=$1 mount
	for mount in $(leftover_mounts "$node" | sort -r); do
		kit_log "$node: unmounting $mount, a mount of a volume's folder that no unpublish or unstage removed (docker exec $node umount $mount)"
		on_node "$node" "umount '$mount'" || true
	done
	on_node "$node" "rm -rf '$state_dir' '$plugin_dir' '$registration_socket' '$staging_dir'"
	kit_log "$node: removed $state_dir, $plugin_dir, $registration_socket and $staging_dir"
}

# left_behind prints what of the driver is still there, one item a line.
left_behind() {
	local node
	k get namespace "$namespace" -o name 2>/dev/null || true
	k get clusterroles,clusterrolebindings -o name 2>/dev/null | grep "/$namespace" || true
	k get csidriver "$driver" -o name 2>/dev/null || true
	k get storageclass "$class" -o name 2>/dev/null || true
	volumes_of_driver | sed 's|^|persistentvolume/|'
	attachments_of_driver | sed 's|^|volumeattachment/|'
	for node in $(nodes); do
		registered "$node" && echo "csinode/$node still lists $driver"
		leftover_mounts "$node" | sed "s|^|$node: mount |"
		on_node "$node" "for f in '$state_dir' '$plugin_dir' '$registration_socket' '$staging_dir'; do [ ! -e \"\$f\" ] || echo \"$node: \$f\"; done"
	done
}

undeploy() {
	check_kind
	release_volumes
	kit_log "deleting config/deploy, the StorageClass, the CSIDriver and the RBAC (the namespace with them)"
	# Only the objects' names are read: any image and Reconciler will do.
	k delete --ignore-not-found --wait=false -f "$config/deploy/" -f "$config/storageclass.yaml" -f "$config/csidriver.yaml" -f "$config/rbac/" | sed 's/^/    /'
	wait_for "namespace $namespace gone (the driver's Pods stopped)" 180 namespace_gone
	local node
	for node in $(nodes); do
		clean_node "$node"
		# The kubelet sees the registration socket go and takes the driver out
		# of the CSINode.
		wait_for "the kubelet of $node unregistered the driver (CSINode $node no longer lists it)" 60 unregistered "$node" || true
	done
	local left
	left=$(left_behind)
	if [ -n "$left" ]; then
		kit_error "left behind:"
		echo "$left" | sed 's/^/  /' >&2
		exit 1
	fi
	kit_log "undeployed: no object, volume, mount or folder of the driver left"
}

case ${1:-} in
check) check ;;
apply) apply ;;
deploy) deploy ;;
undeploy) undeploy ;;
*)
	echo "deploy-csi.sh: want check, apply, deploy or undeploy" >&2
	exit 2
	;;
esac
