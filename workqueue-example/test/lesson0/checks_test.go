//go:build e2e

package lesson0

import "github.com/controller-kit/controller-kit/hack/kittest"

// lesson is the lesson these checks send a learner back to.
const lesson = "docs/lessons/00-reading-kubernetes.md"

// checks describes each test of this suite for `make check LESSON=0`. Lesson 0
// has no Reconciler to write: both checks are exercises that add a flag to
// workqueue-example, so the tier as shipped (stub or reference Reconciler
// alike) fails both, and `make check LESSON=0` runs both unless EXERCISE names
// one (hack/check/lessons.go marks the lesson so).
var checks = []kittest.Check{
	{
		Test:      "TestExerciseProfileFlagWritesTheAskedProfileOnShutdown",
		Behaviour: "exercise profile: --profile=cpu|heap|goroutine|threadcreate|block|mutex --profile-output=FILE writes FILE on SIGTERM, a pprof profile of that kind, and the controller exits 0",
		Hint:      "read k8s.io/kubectl/pkg/cmd/profiling.go (initProfiling, flushProfiling): start the CPU profile at start, set the block and mutex rates at start, write the other profiles with pprof.Lookup(name).WriteTo once the workers have stopped",
		Reread:    lesson + "#exercise-1-a-kubectl-style---profile-for-workqueue-example",
		StubFails: true,
		Exercise:  "profile",
	},
	{
		Test:      "TestExercisePprofEndpointServesLiveProfiles",
		Behaviour: "exercise pprof: kube-controller-manager's --profiling (default true; false leaves /debug/pprof/ out of --metrics-bind-address) and --contention-profiling (fills the block profile, which stays empty without it), and SIGTERM still exits 0",
		Hint:      "read NewBaseHandler in k8s.io/controller-manager/app/serve.go and DebuggingOptions in k8s.io/controller-manager/options/debugging.go: register the /debug/pprof/ handlers in serveMetrics only with --profiling, and call runtime.SetBlockProfileRate(1) only with --contention-profiling",
		Reread:    lesson + "#exercise-2-kube-controller-managers-debug-handler-in-workqueue-example",
		StubFails: true,
		Exercise:  "pprof",
	},
}
