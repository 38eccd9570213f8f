//go:build e2e

package e2e

import "github.com/controller-kit/controller-kit/hack/kittest"

// lesson is the lesson these checks send a learner back to.
const lesson = "docs/lessons/02-sample-controller.md"

// checks describes each test of this suite for `make check LESSON=2`: the
// behaviour in plain words, a hint for a Reconciler that fails it, and the
// lesson section to reread. StubFails marks what StubReconciler lacks;
// `make test-checks` fails when the stub's failures differ from these marks.
var checks = []kittest.Check{
	{
		Test:      "TestFooCreatesOwnedDeploymentAndReportsAvailableReplicas",
		Behaviour: "a new Foo gets a Deployment it controls (owner reference), its Pods run, and the Foo reports them",
		Hint:      "when the Deployment is missing, create it with metav1.NewControllerRef(foo, ...) and record a Normal DeploymentCreated event",
		Reread:    lesson + "#5-the-reconciler-step-by-step",
		StubFails: true,
		Contracts: []string{
			"The Deployment is named after `spec.deploymentName`, in the Foo's namespace, with a controller owner reference to the Foo (`metav1.NewControllerRef`).",
			"Its Pods carry the label `app.kubernetes.io/instance: <spec.deploymentName>`: the checks count the Foo's running Pods by it.",
			"`status.availableReplicas` is the Deployment's `status.availableReplicas`, and `status.observedGeneration` the Foo's `metadata.generation`.",
			"Creating the Deployment records a Normal event with reason `DeploymentCreated` on the Foo.",
			"Deployments are written with `create` and `update`, the Foo's status with `update` on `foos/status`: the verbs `config/rbac/role.yaml` allows.",
		},
	},
	{
		Test:      "TestScalingFooScalesDeployment",
		Behaviour: "changing a Foo's spec.replicas scales its Deployment",
		Hint:      "compare the Deployment's spec.replicas with the Foo's and Update a DeepCopy when they differ",
		Reread:    lesson + "#5-the-reconciler-step-by-step",
		StubFails: true,
		Contracts: []string{
			"The Deployment's `spec.replicas` follows the Foo's `spec.replicas` (1 when it is unset).",
		},
	},
	{
		Test:      "TestKubectlScaleOnDeploymentIsReverted",
		Behaviour: "scaling the Deployment by hand is undone: the Foo's replicas win",
		Hint:      "the Deployment's events already reach its Foo's key: compare replicas again, Update a DeepCopy and record Normal DeploymentScaled",
		Reread:    lesson + "#5-the-reconciler-step-by-step",
		StubFails: true,
		Contracts: []string{
			"Correcting the Deployment's replicas records a Normal event with reason `DeploymentScaled` on the Foo.",
		},
	},
	{
		Test:      "TestForeignDeploymentIsLeftUntouched",
		Behaviour: "a Deployment of the same name that this Foo does not control is never changed or adopted",
		Hint:      "if metav1.IsControlledBy(deployment, foo) is false, record Warning ErrResourceExists naming it, and change nothing of the Deployment",
		Reread:    lesson + "#6-owner-references-and-garbage-collection",
		StubFails: true,
		Contracts: []string{
			"A Deployment of that name that the Foo does not control gets a Warning event with reason `ErrResourceExists` on the Foo, naming the Deployment.",
		},
	},
	{
		Test:      "TestDeploymentThatLostItsOwnerReferenceIsReportedNotAdopted",
		Behaviour: "a Deployment whose owner reference was removed is reported at once and at each change, never adopted, and the Foo stops claiming its Pods",
		Hint:      "treat it as any Deployment the Foo does not control: Warning ErrResourceExists, no write to it, and status.availableReplicas 0; the controller's DeploymentNameIndex queues the Foo at each change of it",
		Reread:    lesson + "#objects-that-are-going-away-and-children-that-are-not-yours",
		StubFails: true,
		Contracts: []string{
			"While the Deployment is not the Foo's, `status.availableReplicas` is 0: the Foo does not claim Pods it does not control.",
		},
	},
	{
		Test:      "TestForegroundDeletedFooGetsNoNewDeployment",
		Behaviour: "a Foo that is being deleted (kubectl delete --cascade=foreground) gets no new Deployment while the garbage collector deletes the old one",
		Hint:      `after reading the Foo, return nil when foo.DeletionTimestamp is set ("Foo is being deleted, nothing to do"): no create, no update, no event; this check starts from converged Foos (the first check)`,
		Reread:    lesson + "#objects-that-are-going-away-and-children-that-are-not-yours",
		StubFails: true,
		Contracts: []string{
			"A Foo whose `metadata.deletionTimestamp` is set gets no new Deployment, no update and no event: it is going away. The check counts the controller's creates in the audit log.",
		},
	},
	{
		Test:      "TestFooInTerminatingNamespaceIsNotRetried",
		Behaviour: "in a namespace being deleted, a create the API server refuses is not retried",
		Hint:      "when the create fails with apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause), log it once and return nil: the namespace will not come back; this check starts from a converged Foo (the first check)",
		Reread:    lesson + "#objects-that-are-going-away-and-children-that-are-not-yours",
		StubFails: true,
		Contracts: []string{
			"A create refused because the namespace is terminating (the `NamespaceTerminating` cause) ends the work: `Reconcile` returns nil, so the key is not retried. The check allows one refused create per object.",
		},
	},
	{
		Test:      "TestDeletingFooGarbageCollectsDeployment",
		Behaviour: "deleting a Foo deletes its Deployment (by the garbage collector), and the controller logs it once without error",
		Hint:      `set blockOwnerDeletion in the owner reference; on NotFound from the Foo lister log "Foo is gone, nothing to do" and return nil`,
		Reread:    lesson + "#6-owner-references-and-garbage-collection",
		StubFails: true,
		Contracts: []string{
			"A Foo that is gone is logged once as `\"Foo is gone, nothing to do\"`, and `Reconcile` returns nil.",
		},
	},
	{
		Test:      "TestInvalidFooIsRejectedByTheAPINamingTheField",
		Behaviour: "the API server rejects an invalid Foo with an error naming the field",
		Hint:      "this is the CRD's schema (config/crd), not the Reconciler: regenerate it with make generate if you changed the types",
		Reread:    lesson + "#2-the-foo-api-and-its-crd",
	},
	{
		Test:      "TestFooStatusIsWrittenThroughStatusSubresource",
		Behaviour: "the Foo's status is written through the status subresource, and never its spec",
		Hint:      `write status with UpdateStatus and FieldManager "sample-controller", on a DeepCopy of the Foo`,
		Reread:    lesson + "#5-the-reconciler-step-by-step",
		StubFails: true,
		Contracts: []string{
			"Status is written with `UpdateStatus` (the status subresource) and `FieldManager: \"sample-controller\"`.",
		},
	},
	{
		Test:      "TestMissingCRDFailsFastNamingTheFix",
		Behaviour: "without the Foo CRD the controller exits at once, saying how to install it",
		Hint:      "this is main.go's discovery check, before any informer starts; keep it",
		Reread:    lesson + "#10-when-the-crd-is-missing",
	},
	{
		Test:      "TestRestartedControllerWritesNothingWhenUpToDate",
		Behaviour: "a restarted controller with nothing to change sends no write and records no event",
		Hint:      "write the Deployment or the status only when they differ from what you want, and record events only on real changes",
		Reread:    lesson + "#5-the-reconciler-step-by-step",
		StubFails: true,
		Contracts: []string{
			`An up-to-date Foo costs no write and no event: the check counts the controller's writes in the API server's audit log.`,
		},
	},
	{
		Test:      "TestMetricsShowTheQueueAndTheReconciles",
		Behaviour: "with --metrics-bind-address, /metrics shows the queue's adds, depth and latencies, every reconcile counted and timed, and the client's request and rate-limiter latencies; /debug/pprof/ answers",
		Hint:      "the plumbing serves these, not the Reconciler: return nil when the work is done, so the reconciles count as successes",
		Reread:    lesson + "#watch-the-loop",
	},
	{
		Test:      "TestLeaderElectionFollowerTakesOverWhenLeaderIsKilled",
		Behaviour: "with --leader-elect one replica leads; when it dies, the other takes over and reconciles a new Foo",
		Hint:      "leader election is main.go's; this check also needs a new Foo's Deployment to be created (the first check)",
		Reread:    lesson + "#8-leader-election",
		StubFails: true,
	},
	{
		Test:      "TestLeaderExitsNonZeroWhenLeaseIsLost",
		Behaviour: "a leader that loses its Lease exits non-zero, and the replica that takes over reconciles a new Foo",
		Hint:      "leader election is main.go's; this check also needs a new Foo's Deployment to be created (the first check)",
		Reread:    lesson + "#8-leader-election",
		StubFails: true,
	},
	{
		Test:      "TestGracefulShutdownReleasesLease",
		Behaviour: "SIGTERM releases the Lease, so the next replica takes over at once",
		Hint:      "Reconcile must return when its work is done so the shutdown can finish and release the Lease",
		Reread:    lesson + "#8-leader-election",
	},
}

// exerciseChecks describe the exercises beyond the reference Reconciler; each
// runs only when EXERCISE names it.
var exerciseChecks = []kittest.Check{
	{
		Test:      "TestExerciseEachFooGetsAServiceForItsPods",
		Behaviour: "exercise service: each Foo also gets a Service, owned by the Foo, selecting its Deployment's Pods",
		Hint:      "read Services from a Service lister, create a missing one with a controller reference, and add services to config/rbac/role.yaml",
		Reread:    lesson + "#13-exercises",
		Exercise:  "service",
	},
}
