//go:build e2e

package e2e

import "github.com/controller-kit/controller-kit/hack/kittest"

// lesson is the lesson these checks send a learner back to.
const lesson = "docs/lessons/01-workqueue.md"

// checks describes each test of this suite for `make check LESSON=1`: the
// behaviour in plain words, a hint for a Reconciler that fails it, and the
// lesson section to reread. StubFails marks what StubReconciler lacks;
// `make test-checks` fails when the stub's failures differ from these marks.
var checks = []kittest.Check{
	{
		Test:      "TestPodsGetAPhaseLabelThatFollowsThemToRunning",
		Behaviour: "every Pod gets the label controller-kit.dev/phase, kept equal to its phase, and an up-to-date Pod is not written again",
		Hint:      "patch the label only when it differs from pod.Status.Phase: an event that changes nothing you own must cost no write (the check counts writes in the API server's audit log)",
		Reread:    lesson + "#run-it",
		StubFails: true,
		Contracts: []string{
			"The label is `controller-kit.dev/phase`, its value the Pod's `status.phase` (`Pending`, `Running`, ...).",
			"Pods are written with `patch`: the shipped roles allow `get`, `list`, `watch` and `patch` on Pods, not `update`.",
			`An event that changes nothing the Reconciler owns costs no write: the check counts the controller's writes in the API server's audit log.`,
		},
	},
	{
		Test:      "TestDeletedPodIsLoggedAsGoneWithoutErrorOrRetry",
		Behaviour: "a deleted Pod is one log line, not an error or a retry",
		Hint:      `when the lister returns NotFound, log "Pod is gone, nothing to do" with the pod's key and return nil`,
		Reread:    lesson + "#run-it",
		Contracts: []string{
			"A Pod that is gone is logged once as `\"Pod is gone, nothing to do\"` with `\"pod\", klog.KRef(namespace, name)`, and `Reconcile` returns nil.",
		},
	},
	{
		Test:      "TestPodBeingDeletedGetsNoWrite",
		Behaviour: "a Pod that is being deleted (deletionTimestamp set) gets no write, even when its label is wrong",
		Hint:      `after reading the Pod, return nil when pod.DeletionTimestamp is set ("Pod is being deleted, nothing to do"): it is going away; this check also needs Pods to be labelled (the first check)`,
		Reread:    lesson + "#objects-that-are-going-away",
		StubFails: true,
		Contracts: []string{
			"A Pod whose `metadata.deletionTimestamp` is set gets no write: it is going away. The check holds one with a finalizer of its own and breaks its label.",
		},
	},
	{
		Test:      "TestNamespacedRoleIsEnoughToReconcileOneNamespace",
		Behaviour: "with --namespace, a Role in that namespace is all the controller needs",
		Hint:      "use only the lister and the verbs of config/rbac-namespaced/role.yaml (get, list, watch, patch on Pods)",
		Reread:    lesson + "#what-each-flag-shows",
	},
	{
		Test:      "TestShippedClusterRoleAllowsWatchingEveryNamespace",
		Behaviour: "the shipped ClusterRole lets the controller watch Pods in every namespace",
		Hint:      "keep config/rbac/role.yaml in step with what the controller lists and watches",
		Reread:    lesson + "#tests",
	},
	{
		Test:      "TestMetricsShowTheQueueAndTheReconciles",
		Behaviour: "with --metrics-bind-address, /metrics shows the queue's adds, depth and latencies, every reconcile counted and timed, and the client's rate-limiter wait; /debug/pprof/ answers",
		Hint:      "the plumbing serves these, not the Reconciler: return nil when the work is done, so the reconciles count as successes",
		Reread:    lesson + "#watch-the-loop",
	},
	{
		Test:      "TestSIGTERMStopsTheControllerCleanly",
		Behaviour: "SIGTERM stops the controller after its in-flight reconciles, with exit code 0",
		Hint:      "Reconcile must return once its work is done and honour its context; do not block the workers",
		Reread:    lesson + "#read-maingo-in-this-order",
	},
}

// exerciseChecks describe the exercises beyond the reference Reconciler; each
// runs only when EXERCISE names it.
var exerciseChecks = []kittest.Check{
	{
		Test:      "TestExerciseConfigMapChangesReachASecondLoop",
		Behaviour: `exercise configmaps: a second loop sees ConfigMaps come, change and go ("ConfigMap seen" configmap=... keys=N, then "ConfigMap is gone, nothing to do")`,
		Hint:      "start a second NewController on factory.Core().V1().ConfigMaps().Informer() with a Reconciler that reads the lister; add configmaps get/list/watch to both RBAC roles",
		Reread:    lesson + "#exercises",
		Exercise:  "configmaps",
	},
}
