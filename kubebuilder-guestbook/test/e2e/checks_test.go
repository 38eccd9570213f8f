//go:build e2e

package e2e

import "github.com/controller-kit/controller-kit/hack/kittest"

// lesson is the lesson these checks send a learner back to.
const lesson = "docs/lessons/03-kubebuilder.md"

// checks describes each test of this suite for `make check LESSON=3`: the
// behaviour in plain words, a hint for a Reconciler that fails it, and the
// lesson section to reread. StubFails marks what StubReconciler lacks;
// `make test-checks` fails when the stub's failures differ from these marks.
var checks = []kittest.Check{
	{
		Test:      "TestGuestbookOperator/BecomesAvailableAsPodsRunOnNodes",
		Behaviour: "a Guestbook gets its Redis and frontend Deployments and Services, a directory entry, an Available condition and an Available event",
		Hint:      "create the children with controllerutil.SetControllerReference, then set the Available condition through r.Status() and record the event on the transition",
		Reread:    lesson + "#6-the-reconciler-step-by-step",
		StubFails: true,
		Contracts: []string{
			"The children are named `<name>-redis-leader`, `<name>-redis-follower` and `<name>-frontend` (a Deployment and a Service each), with a controller owner reference to the Guestbook.",
			"Their Pods carry the label `app.kubernetes.io/instance: <name>`: the check counts the Guestbook's running Pods by it.",
			"The `Available` condition is True, with `observedGeneration` the Guestbook's `metadata.generation`, once `status.frontend.availableReplicas` equals `spec.frontend.replicas`; both are written through `r.Status()`.",
			"The directory ConfigMap `guestbook-directory` in the operator's namespace has the key `<namespace>.<name>` with the value `http://<name>-frontend.<namespace>.svc`.",
			"The condition turning True records a Normal event with reason `Available` on the Guestbook.",
		},
	},
	{
		Test:      "TestGuestbookOperator/ScalingTheFrontendReachesTheNewCount",
		Behaviour: "changing spec.frontend.replicas scales the frontend and the status follows",
		Hint:      "update the frontend Deployment when its replicas differ; Owns(&appsv1.Deployment{}) brings its status changes back to you",
		Reread:    lesson + "#5-for-and-owns-which-events-reach-the-reconciler",
		StubFails: true,
	},
	{
		Test:      "TestGuestbookOperator/DeletedChildIsRecreated",
		Behaviour: "a deleted child Deployment is created again",
		Hint:      "a NotFound child is one to create; the delete reaches you through Owns",
		Reread:    lesson + "#5-for-and-owns-which-events-reach-the-reconciler",
		StubFails: true,
	},
	{
		Test:      "TestGuestbookOperator/DeletingTheGuestbookRemovesChildrenAndDirectoryEntry",
		Behaviour: "deleting a Guestbook removes its children (garbage collector) and its directory entry (finalizer)",
		Hint:      "add a finalizer; when deletionTimestamp is set, remove the directory entry, then the finalizer",
		Reread:    lesson + "#8-finalizers-and-why-this-guestbook-needs-one",
		StubFails: true,
		Contracts: []string{
			"The Guestbook carries the finalizer `webapp.controller-kit.dev/directory-entry` until its directory entry is removed.",
		},
	},
	{
		Test:      "TestGuestbookOperator/InvalidGuestbookIsRejectedNamingTheField",
		Behaviour: "the API server rejects an invalid Guestbook with an error naming the field",
		Hint:      "this is the CRD schema from the +kubebuilder:validation markers: make manifests after changing the types",
		Reread:    lesson + "#3-the-api-the-markers-and-what-controller-gen-makes-of-them",
	},
	{
		Test:      "TestGuestbookOperator",
		Behaviour: "the manager needs nothing beyond the shipped RBAC",
		Hint:      `a "forbidden" in the manager's log: add the verb with a +kubebuilder:rbac marker and run make manifests`,
		Reread:    lesson + "#9-webhooks-rbac-leader-election-metrics",
		Contracts: []string{
			"Every API call is one the `+kubebuilder:rbac` markers allow (`make manifests` turns them into `config/rbac/role.yaml`): Deployments and Services `create` and `update`, Guestbooks `update` and `guestbooks/status` `update`, events `create` and `patch`.",
		},
	},
	{
		Test:      "TestLeaderElectionHandsOverAndTheOldLeaderExits",
		Behaviour: "with two managers only the leader reconciles; when it freezes the other takes over, and the old one exits",
		Hint:      "leader election is the manager's; this fails when the new leader cannot make a Guestbook Available",
		Reread:    lesson + "#9-webhooks-rbac-leader-election-metrics",
		StubFails: true,
	},
}

// exerciseChecks describe the exercises beyond the reference Reconciler; each
// runs only when EXERCISE names it.
var exerciseChecks = []kittest.Check{
	{
		Test:      "TestExerciseReadyColumnShowsAvailableOverDesiredPods",
		Behaviour: "exercise ready: kubectl get guestbook shows a READY column, available Pods over desired (5/5)",
		Hint:      "add status.ready, fill it in setObserved, add a +kubebuilder:printcolumn marker for it, run make manifests and install the CRD again",
		Reread:    lesson + "#3-the-api-the-markers-and-what-controller-gen-makes-of-them",
		Exercise:  "ready",
	},
}
