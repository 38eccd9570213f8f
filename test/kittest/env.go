package kittest

// The environment variables through which `make`, `make check` (test/check) and the
// e2e suites talk to each other, declared here and nowhere else: the grader sets
// them, the suites read them.
const (
	// ReconcilerEnv picks the Reconciler the e2e suites run: each suite passes it
	// to its controller's --reconciler flag (see Reconciler).
	ReconcilerEnv = "RECONCILER"
	// ExerciseEnv selects the exercise checks to run (see Exercise): a name such
	// as "service", or several separated by commas.
	ExerciseEnv = "EXERCISE"
	// TimeoutEnv, set to a Go duration such as 30s, replaces the deadline of every
	// wait in the suites (see Deadline): a check that is going to fail then fails
	// in seconds instead of minutes.
	TimeoutEnv = "KIT_E2E_TIMEOUT"
	// OverlayEnv names a `go build -overlay` file: Suite.Run builds with it, and
	// File returns the replacement it names for a non-Go file. This is how
	// `make check SOLUTION=...` builds a tier with a reference solution (a patch
	// in docs/solutions, applied to copies) without changing the tier's files.
	OverlayEnv = "KIT_E2E_OVERLAY"
	// BinaryEnv names a controller binary built already and known to have the
	// Reconciler under test: Suite.Run uses it instead of building one and
	// asking it (--list-reconcilers). make check builds each binary once per run,
	// asks it once, and passes it on.
	BinaryEnv = "KIT_E2E_BINARY"
	// LogDirEnv names a folder where the e2e suites keep what a failing check
	// needs for its diagnosis, one sub-folder per test (see TestDir): each
	// controller's log (StartProcess) and the API errors the controllers got
	// (APIErrorsFile). `make check` sets it to _output/check/lesson-N and points
	// at it from every failing check. Unset, logs go to the test's temporary
	// folder and are deleted with it.
	LogDirEnv = "KIT_E2E_LOG_DIR"
	// AnyContextEnv, set to 1, lets the e2e suites run against a context that is
	// neither the kit's local cluster nor a kind cluster.
	AnyContextEnv = "KIT_E2E_ANY_CONTEXT"
	// KeepEnv, set to 1, keeps each test's namespace after the test, for a look
	// with kubectl.
	KeepEnv = "KIT_E2E_KEEP"
	// LangEnv, set to ja or en, picks the language of make check's own texts
	// (test/check/texts.go) and of the lesson pages it points at (its "reread:"
	// lines). Unset, a Japanese locale (LC_ALL, LC_MESSAGES or LANG starting with
	// ja) means ja.
	LangEnv = "KIT_LANG"
	// KubeSolutionEnv names a reference solution of a kubeSource lesson (a patch
	// to Kubernetes' source with upstream's paths, Lesson.KubeSource): the lesson's
	// suite applies it to a fresh copy of its own, builds from that copy and runs
	// the result in the cluster, instead of checking the learner's copy.
	KubeSolutionEnv = "KIT_KUBE_SOLUTION"
	// KubePristineEnv, set to 1, has a kubeSource lesson's suite check a fresh,
	// unchanged copy and the pinned binaries: what the lesson starts from, which
	// fails every exercise (make test-lesson4's stub step).
	KubePristineEnv = "KIT_KUBE_PRISTINE"
	// ParallelEnv is how many of a suite's independent tests run at once (go
	// test's -parallel; unset: 16, since the tests mostly wait). Each guestbook
	// Pod asks for 100m of CPU, so a kind node on a 2-CPU machine has room for
	// two guestbook tests at a time: make test-kind sets 2. A lane's stub
	// step runs 16 at a time whatever it says: the stub makes no Pods.
	ParallelEnv = "KIT_E2E_PARALLEL"
	// StubTimeoutEnv is how long each wait of a lane's stub step may take (a
	// Go duration; unset: 20s, enough where kwok starts and deletes Pods at
	// once). On kind a real kubelet starts and stops each Pod, which on a
	// loaded 2-CPU node takes longer: make test-kind sets 60s.
	StubTimeoutEnv = "KIT_STUB_TIMEOUT"
	// ClusterEnv names the kit cluster (hack/lib.sh's KIT_CLUSTER, default
	// DefaultCluster): it picks the kit kubeconfig (see KitKubeconfig).
	ClusterEnv = "KIT_CLUSTER"
)
