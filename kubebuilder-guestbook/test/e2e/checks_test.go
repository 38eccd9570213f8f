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
			"Events are recorded with the manager's recorder (`d.recorder`), which reports them as `guestbook-operator`: the check looks for events of that reporting controller.",
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
		Test:      "TestGuestbookOperator/UnusableNameIsDegradedWithoutChildren",
		Behaviour: "a Guestbook whose name cannot prefix its Service names (my.guestbook) is Degraded with reason InvalidName, gets a Warning event InvalidName, and no children",
		Hint:      "check webappv1.ValidateName before creating anything; if it refuses the name, set Degraded=True with reason InvalidName through r.Status(), record a Warning event and return without an error",
		Reread:    lesson + "#6-the-reconciler-step-by-step",
		StubFails: true,
		Contracts: []string{
			"A Guestbook whose name `webappv1.ValidateName` refuses gets the condition `Degraded` True with reason `InvalidName` and a Warning event with reason `InvalidName`, and no Deployment or Service in its namespace.",
		},
	},
	{
		Test:      "TestGuestbookOperator/ConditionsFollowTheRollout",
		Behaviour: "a Guestbook reports Progressing=True while its Deployments roll out, then Progressing=False (RolloutComplete) and Degraded=False (AsExpected) once it is Available",
		Hint:      "set all three conditions in every status you write: Progressing from each Deployment's rollout, Degraded False with reason AsExpected when nothing blocks you",
		Reread:    lesson + "#7-conditions-status-and-events",
		StubFails: true,
		Contracts: []string{
			"`Progressing` is True in a status written while a child Deployment has not rolled out its spec (its `status.observedGeneration`, `updatedReplicas` or `availableReplicas` behind it), such as the first status written after the Deployments are created: the check watches every version of the Guestbook, and fails when none had it.",
		},
	},
	{
		Test:      "TestGuestbookOperator/ChildNameTakenIsDegradedAndLeftAlone",
		Behaviour: "a Deployment named like a child but not controlled by the Guestbook is left untouched, and the Guestbook is Degraded with reason ChildConflict",
		Hint:      "before you change a child, check metav1.IsControlledBy(child, guestbook); when it is not yours, write nothing to it, set Degraded=True with reason ChildConflict and return: the watch by name brings you the change that resolves it",
		Reread:    lesson + "#6-the-reconciler-step-by-step",
		StubFails: true,
		Contracts: []string{
			"A child is the Guestbook's only when its controller owner reference points to the Guestbook; one without it is never adopted or written to (its spec, labels, annotations and owner references stay as they were), and `Degraded` turns True with reason `ChildConflict`.",
		},
	},
	{
		Test:      "TestGuestbookOperator/ConflictsAreRequeuesNotErrors",
		Behaviour: "a Guestbook changed again and again while it converges still converges, and Reconcile returns no error: a write conflict is a requeue",
		Hint:      "when a write fails with apierrors.IsConflict, return ctrl.Result{}, nil: the change that caused the conflict has already queued the Guestbook again",
		Reread:    lesson + "#6-the-reconciler-step-by-step",
		StubFails: true,
		Contracts: []string{
			"Reconcile returns no error for a write that fails with a conflict (`apierrors.IsConflict`): the check annotates the Guestbook every 50 ms for its first 5 s of converging and fails on any `Reconciler error` line the manager logs for the Guestbook's namespace.",
		},
	},
	{
		Test:      "TestGuestbookOperator/RestingGuestbookCostsNoWrite",
		Behaviour: "once a Guestbook is Available, a change to nothing the operator owns (an annotation) costs no write and no event; scaling the frontend does",
		Hint:      "write a child only when a field you set differs (CreateOrUpdate compares for you when you set single fields, not whole structs), the status only when it differs from the one you read, and events only on a transition",
		Reread:    lesson + "#7-conditions-status-and-events",
		StubFails: true,
		Contracts: []string{
			"The check counts the operator's writes in the Guestbook's namespace (children, status, events) in the API server's audit log, so it runs on the kit's local cluster only: once the Guestbook is Available, has its `Available` event and two seconds pass without a write, it adds an annotation and allows no write in the next three seconds.",
		},
	},
	{
		Test:      "TestGuestbookOperator/DeletedGuestbookGetsNoNewChildren",
		Behaviour: "a Guestbook deleted with --cascade=foreground gets no new Deployment or Service while the garbage collector deletes its children",
		Hint:      "once deletionTimestamp is set, do the finalizer's work and return: create, update and record nothing, even when a child is missing",
		Reread:    lesson + "#8-finalizers-and-why-this-guestbook-needs-one",
		StubFails: true,
		Contracts: []string{
			"Once the Guestbook's `deletionTimestamp` is set, Reconcile creates no Deployment or Service: the check deletes it with foreground cascading, so the garbage collector deletes the children while the Guestbook still exists, and watches the namespace until the Guestbook is gone.",
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
		Test:      "TestMetricsShowTheQueueAndTheReconciles",
		Behaviour: "with --metrics-bind-address and --metrics-secure=false, /metrics shows the queue's adds, depth and latencies, every reconcile counted and timed, and the client's request and rate-limiter latencies; /debug/pprof/ answers",
		Hint:      "the manager serves these, not the Reconciler: return a nil error when the work is done, so the reconciles count as successes",
		Reread:    lesson + "#watch-the-loop",
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
