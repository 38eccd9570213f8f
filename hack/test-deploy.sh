#!/usr/bin/env bash
# test-deploy.sh is make test-kind's in-cluster step: every controller as a Pod,
# on the kind cluster $KUBECONFIG reaches (KIT_CLUSTER names it for kind load).
# For each controller, as a learner with Docker runs it:
#
#   1. make docker-build (the static image where base images cannot be pulled:
#      hack/cluster/docker-build.sh), then make kind-load;
#   2. its namespace made first, enforcing the restricted Pod Security Standard,
#      then make deploy: every Pod must be admitted and become ready;
#   3. it reconciles: an object of its own, in a namespace of its own (not
#      restricted: the nginx of a Foo is no controller), gets what the
#      controller makes, and an Event where the controller records one;
#   4. where it elects a leader (every tier but workqueue-example, which runs
#      one replica): with two replicas, the Pod holding the leader Lease is
#      deleted, the other replica takes the Lease, and a second object is
#      reconciled;
#   5. make undeploy (after the test objects are gone): once every controller
#      is undeployed, nothing cluster-wide of any is left but what its undeploy
#      says it keeps (the CRD).
#
# Steps 2 to 5 run for the four controllers at once, each line of progress
# starting with the tier: they share no object (the in-cluster
# workqueue-example labels the others' Pods too, which none of them reads).
#
#   hack/test-deploy.sh          steps 1 to 5
#   hack/test-deploy.sh build    make docker-build only (no cluster needed: make
#                                test-kind runs it while kind-up makes the cluster),
#                                the lessons' images too (lesson_images below)
#   hack/test-deploy.sh load     make kind-load only (the images built), the
#                                lessons' images too
#   hack/test-deploy.sh deploy   steps 2 to 5 (the images loaded)
#
# kubebuilder-guestbook is deployed with its webhooks off (config/default needs
# cert-manager, which cannot be installed offline): its CRD, RBAC and manager
# from the same kustomize bases, --enable-webhooks=false.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$KIT_ROOT"
: "${KUBECONFIG:?test-deploy.sh runs against the kind cluster KUBECONFIG reaches}"

hack/build-bins.sh kubectl kustomize kind >/dev/null
k() { "$KIT_BIN/kubectl" "$@"; }
tag=kind-test
failed=()
# who is the tier a line of progress is about: deploy sets it in the subshell
# each controller runs in, so that the four controllers' lines can be told apart.
who=

# say TEXT prints a line of progress about the tier $who.
say() { kit_log "$who: $*"; }

# wait_for WHAT SECONDS COMMAND... polls COMMAND every 2 seconds until it succeeds.
wait_for() {
	local what=$1 deadline=$((SECONDS + $2))
	shift 2
	until "$@" >/dev/null 2>&1; do
		if ((SECONDS > deadline)); then
			say "timed out waiting for $what"
			return 1
		fi
		sleep 2
	done
	say "$what"
}

# restricted_namespace NS makes NS (if missing) enforcing the restricted standard.
restricted_namespace() {
	k create namespace "$1" --dry-run=client -o yaml | k apply --server-side -f - >/dev/null
	k label --overwrite namespace "$1" pod-security.kubernetes.io/enforce=restricted \
		pod-security.kubernetes.io/enforce-version=latest >/dev/null
}

# leader NS prints the name of the Pod in NS that holds a Lease there.
leader() {
	local holder pod
	for holder in $(k -n "$1" get leases -o jsonpath='{range .items[*]}{.spec.holderIdentity}{"\n"}{end}'); do
		for pod in $(k -n "$1" get pods -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'); do
			case $holder in "$pod" | "$pod"_*) echo "$pod"; return 0 ;; esac
		done
	done
	return 1
}

# leader_is_not NS POD: a Pod of NS other than POD holds a Lease there.
leader_is_not() {
	local now
	now=$(leader "$1") && [ "$now" != "$2" ]
}

# handover NS kills the leader's Pod and waits for another Pod to hold the Lease.
handover() {
	local ns=$1 old
	old=$(leader "$ns") || { say "no Pod of $ns holds a Lease"; return 1; }
	say "deleting the leader $old"
	k -n "$ns" delete pod "$old" --wait=false >/dev/null
	wait_for "another replica took the Lease" 120 leader_is_not "$ns" "$old"
}

# field_is NS OBJECT JSONPATH VALUE: the object's field is VALUE ("" for unset).
field_is() { [ "$(k -n "$1" get "$2" -o jsonpath="{$3}")" = "$4" ]; }

# field_set NS OBJECT JSONPATH: the object's field is set, to anything.
field_set() { ! field_is "$1" "$2" "$3" ""; }

# namespace_gone NS: the namespace NS no longer exists.
namespace_gone() { ! k get namespace "$1"; }

# event_seen NS NAME REASON: an Event with REASON was recorded on the object NAME.
event_seen() { [ -n "$(k -n "$1" get events --field-selector "involvedObject.name=$2,reason=$3" -o name)" ]; }

# --- the controllers' own checks -----------------------------------------------
# reconciles_TIER TEST-NAMESPACE N: the controller makes what it should for a
# new object, the Nth (1 before the handover, 2 after).
reconciles_workqueue-example() {
	k -n "$1" run "pause-$2" --image=registry.k8s.io/pause:3.10 --restart=Never \
		--overrides='{"spec":{"securityContext":{"runAsNonRoot":true,"runAsUser":65532,"seccompProfile":{"type":"RuntimeDefault"}},"containers":[{"name":"pause-'"$2"'","image":"registry.k8s.io/pause:3.10","securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]}}}]}}' >/dev/null
	wait_for "Pod pause-$2 labelled controller-kit.dev/phase=Running" 120 \
		field_is "$1" "pod/pause-$2" '.metadata.labels.controller-kit\.dev/phase' Running
}
reconciles_sample-controller() {
	sed "s/name: example-foo/name: foo-$2/; s/deploymentName: example-foo/deploymentName: foo-$2/; /namespace:/d" \
		sample-controller/config/examples/foo.yaml | k -n "$1" apply --server-side -f - >/dev/null
	wait_for "Foo foo-$2: its Deployment's Pod available (status.availableReplicas 1)" 180 \
		field_is "$1" "foo/foo-$2" .status.availableReplicas 1
	wait_for "Foo foo-$2: Event DeploymentCreated" 60 event_seen "$1" "foo-$2" DeploymentCreated
}
reconciles_cloud-provider-example() {
	k -n "$1" create service loadbalancer "lb-$2" --tcp=80:80 >/dev/null
	wait_for "Service lb-$2: a load balancer address" 120 \
		field_set "$1" "service/lb-$2" '.status.loadBalancer.ingress[0].ip'
	wait_for "Service lb-$2: Event EnsuredLoadBalancer" 60 event_seen "$1" "lb-$2" EnsuredLoadBalancer
}
reconciles_kubebuilder-guestbook() {
	sed "s/name: guestbook-sample/name: gb-$2/; s/followerReplicas: 2/followerReplicas: 1/; s/replicas: 2/replicas: 1/" \
		kubebuilder-guestbook/config/samples/webapp_v1_guestbook.yaml | k -n "$1" apply --server-side -f - >/dev/null
	wait_for "Guestbook gb-$2: Available" 240 \
		k -n "$1" wait --for=condition=Available --timeout=5s "guestbook/gb-$2"
}

# The guestbook without its webhooks: the bases of config/default but webhook
# and certmanager, the manager told --enable-webhooks=false.
guestbook_manifests() {
	local dir
	dir=$(mktemp -d "$KIT_OUT/guestbook-kind.XXXX")
	cat >"$dir/kustomization.yaml" <<EOF
namespace: kubebuilder-guestbook-system
namePrefix: kubebuilder-guestbook-
resources:
- ../../kubebuilder-guestbook/config/crd
- ../../kubebuilder-guestbook/config/rbac
- ../../kubebuilder-guestbook/config/manager
images:
- name: controller
  newName: controller-kit/guestbook-operator
  newTag: $tag
patches:
- target:
    kind: Deployment
  patch: |
    - op: add
      path: /spec/template/spec/containers/0/args/-
      value: --enable-webhooks=false
EOF
	"$KIT_BIN/kustomize" build "$dir"
	rm -rf "$dir"
}

# --- one tier ---------------------------------------------------------------
# build TIER IMAGE-REPOSITORY builds the tier's image (make docker-build).
build() {
	local t=$1 repo=$2 t0=$SECONDS
	make --no-print-directory -C "$t" docker-build IMG="$repo:$tag" >"$KIT_OUT/deploy-$t.log" 2>&1 ||
		{ kit_log "$t: building $repo:$tag FAILED"; cat "$KIT_OUT/deploy-$t.log"; return 1; }
	kit_log "$t: built $repo:$tag ($(docker image inspect -f '{{index .Config.Labels "dev.controller-kit.image-build"}}' "$repo:$tag") image, $((SECONDS - t0)) s)"
}

# load TIER IMAGE-REPOSITORY loads the tier's image into the cluster (make kind-load).
load() {
	local t=$1 repo=$2 t0=$SECONDS
	make --no-print-directory -C "$t" kind-load IMG="$repo:$tag" KIND_CLUSTER="$KIT_CLUSTER" >>"$KIT_OUT/deploy-$t.log" 2>&1 ||
		{ kit_log "$t: loading $repo:$tag FAILED"; cat "$KIT_OUT/deploy-$t.log"; return 1; }
	kit_log "$t: loaded $repo:$tag into $KIT_CLUSTER ($((SECONDS - t0)) s)"
}

# deploy TIER NAMESPACE DEPLOYMENT IMAGE-REPOSITORY LEADER-ELECTION(yes|no)
deploy() {
	local t=$1 ns=$2 deploy=$3 repo=$4 elects=$5 testns="kind-test-$1"
	who=$t
	restricted_namespace "$ns"
	if [ "$t" = kubebuilder-guestbook ]; then
		guestbook_manifests | k apply --server-side -f - >>"$KIT_OUT/deploy-$t.log" 2>&1
	else
		make --no-print-directory -C "$t" deploy IMG="$repo:$tag" >>"$KIT_OUT/deploy-$t.log" 2>&1
	fi || { cat "$KIT_OUT/deploy-$t.log"; return 1; }
	wait_for "deployed in a restricted namespace: deployment/$deploy available" 180 \
		k -n "$ns" rollout status "deployment/$deploy" --timeout=5s || return 1

	# The objects it reconciles live in a namespace of their own, unrestricted:
	# what the restricted standard holds to is the controller, not the nginx and
	# redis Pods of a learner's Foo or Guestbook.
	k create namespace "$testns" >/dev/null
	"reconciles_$t" "$testns" 1 || return 1
	if [ "$elects" = yes ]; then
		k -n "$ns" scale "deployment/$deploy" --replicas=2 >/dev/null
		wait_for "two replicas ready" 180 k -n "$ns" rollout status "deployment/$deploy" --timeout=5s || return 1
		wait_for "a replica holds the leader Lease" 120 leader "$ns" || return 1
		handover "$ns" || return 1
		"reconciles_$t" "$testns" 2 || return 1
	else
		say "one replica: it elects no leader (two would both reconcile), so no handover"
	fi

	k delete namespace "$testns" --wait=true --timeout=180s >/dev/null
	if [ "$t" = kubebuilder-guestbook ]; then
		guestbook_manifests | k delete --ignore-not-found -f - >>"$KIT_OUT/deploy-$t.log" 2>&1
	else
		make --no-print-directory -C "$t" undeploy >>"$KIT_OUT/deploy-$t.log" 2>&1
	fi || { cat "$KIT_OUT/deploy-$t.log"; return 1; }
	wait_for "undeployed: namespace $ns gone" 180 namespace_gone "$ns"
}

# cluster_wide lists what undeploy must not leave behind, one name a line.
cluster_wide() { k get clusterroles,clusterrolebindings,namespaces -o name | sort; }

# Every controller: tier, its namespace, Deployment, image repository, and
# whether it elects a leader.
controllers=(
	"workqueue-example workqueue-example-system workqueue-example controller-kit/workqueue-example no"
	"sample-controller sample-controller-system sample-controller controller-kit/sample-controller yes"
	"kubebuilder-guestbook kubebuilder-guestbook-system kubebuilder-guestbook-controller-manager controller-kit/guestbook-operator yes"
	"cloud-provider-example cloud-provider-example-system cloud-provider-example controller-kit/cloud-provider-example yes"
)

# The tiers whose lessons' kind checks deploy images of their own (lesson 7's
# driver and sidecars, as make deploy-csi does): built and loaded in step 1
# with the controllers' images, under the tags the checks use (the tier's own,
# the git commit), so that the lesson's lane finds them and builds nothing
# again. Not deployed here: the checks deploy them, with the Reconciler under
# test.
lesson_images=(csi-driver-example)

# build_lesson_images TIER and load_lesson_images TIER: its make docker-build
# and kind-load, with the tier's own tags.
build_lesson_images() {
	local t=$1 t0=$SECONDS
	make --no-print-directory -C "$t" docker-build >"$KIT_OUT/deploy-$t.log" 2>&1 ||
		{ kit_log "$t: building its images FAILED"; cat "$KIT_OUT/deploy-$t.log"; return 1; }
	kit_log "$t: built its images, for its lesson's kind checks ($((SECONDS - t0)) s)"
}
load_lesson_images() {
	local t=$1 t0=$SECONDS
	make --no-print-directory -C "$t" kind-load KIND_CLUSTER="$KIT_CLUSTER" >>"$KIT_OUT/deploy-$t.log" 2>&1 ||
		{ kit_log "$t: loading its images FAILED"; cat "$KIT_OUT/deploy-$t.log"; return 1; }
	kit_log "$t: loaded its images into $KIT_CLUSTER ($((SECONDS - t0)) s)"
}

mode=${1:-all}
case $mode in all | build | load | deploy) ;; *)
	echo "test-deploy.sh: unknown argument $mode; want build, load, deploy or nothing (all three)" >&2
	exit 2
	;;
esac
declare -A broken # tiers whose image failed: not loaded, not deployed
if [ "$mode" = all ] || [ "$mode" = build ]; then
	for c in "${controllers[@]}"; do
		read -r t ns d repo elects <<<"$c"
		build "$t" "$repo" || { failed+=("$t"); broken[$t]=1; }
	done
	for t in "${lesson_images[@]}"; do
		build_lesson_images "$t" || { failed+=("$t"); broken[$t]=1; }
	done
fi
if [ "$mode" = all ] || [ "$mode" = load ]; then
	for c in "${controllers[@]}"; do
		read -r t ns d repo elects <<<"$c"
		[ -z "${broken[$t]:-}" ] || continue
		load "$t" "$repo" || { failed+=("$t"); broken[$t]=1; }
	done
	for t in "${lesson_images[@]}"; do
		[ -z "${broken[$t]:-}" ] || continue
		load_lesson_images "$t" || { failed+=("$t"); broken[$t]=1; }
	done
fi
if [ "$mode" = all ] || [ "$mode" = deploy ]; then
	# Left behind: what is there once every controller is undeployed and was
	# not before the first was deployed. (Objects the lessons' checks left under
	# a tier's names may be gone: undeploy deletes its manifests' objects by name.)
	before=$(cluster_wide)
	declare -A pids
	for c in "${controllers[@]}"; do
		read -r t ns d repo elects <<<"$c"
		[ -z "${broken[$t]:-}" ] || continue
		# In a || list, so that a failing step inside is deploy's to report,
		# as it does, and not set -e's to end the subshell in silence.
		{ deploy "$t" "$ns" "$d" "$repo" "$elects" || exit 1; } &
		pids[$t]=$!
	done
	for t in "${!pids[@]}"; do
		wait "${pids[$t]}" || failed+=("$t")
	done
	left=$(comm -13 <(echo "$before") <(cluster_wide))
	if [ -n "$left" ]; then
		kit_log "undeploy left cluster-wide objects behind:"
		echo "$left"
		failed+=("undeploy")
	else
		kit_log "undeployed: no ClusterRole, ClusterRoleBinding or namespace of any controller left"
	fi
fi

if [ ${#failed[@]} -gt 0 ]; then
	kit_log "in-cluster path FAILED for: ${failed[*]} (logs: $KIT_OUT/deploy-TIER.log)"
	exit 1
fi
case $mode in
build) kit_log "every controller's image built, and the images of ${lesson_images[*]}" ;;
load) kit_log "every controller's image loaded into $KIT_CLUSTER, and the images of ${lesson_images[*]}" ;;
*) kit_log "in-cluster path: every controller deployed restricted, reconciling, handed over where it elects a leader, and undeployed" ;;
esac
