package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	corelisters "k8s.io/client-go/listers/core/v1"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
)

// waitTimeout bounds every wait in these tests. It only limits how long a failing
// test takes; a passing one is done in milliseconds.
const waitTimeout = 30 * time.Second

// recordingReconciler is a Reconciler for tests. It records what it saw for each
// call (the key, and the Pod's "step" label or "gone") and returns what result
// returns for that call (nil when result is nil).
type recordingReconciler struct {
	pods   corelisters.PodLister
	result func(ctx context.Context, key string, attempt int) error

	mu   sync.Mutex
	seen []string
}

func (r *recordingReconciler) Reconcile(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	observed := key + " gone"
	if pod, err := r.pods.Pods(namespace).Get(name); err == nil {
		observed = key + " step=" + pod.Labels["step"]
	}
	r.mu.Lock()
	r.seen = append(r.seen, observed)
	attempt := 0
	for _, s := range r.seen {
		if strings.HasPrefix(s, key+" ") {
			attempt++
		}
	}
	r.mu.Unlock()
	if r.result == nil {
		return nil
	}
	return r.result(ctx, key, attempt)
}

// observations returns a copy of everything the reconciler saw so far.
func (r *recordingReconciler) observations() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

// attempts returns how many times key was reconciled.
func (r *recordingReconciler) attempts(key string) int {
	n := 0
	for _, s := range r.observations() {
		if strings.HasPrefix(s, key+" ") {
			n++
		}
	}
	return n
}

// harness is a Controller running against a fake clientset, with its logs kept
// for assertions.
type harness struct {
	controller *Controller
	client     *fake.Clientset
	logs       ktesting.Buffer
	cancel     context.CancelFunc
	runDone    chan struct{} // closed when Run returns
}

// start builds a Controller on a fake clientset holding objects, starts its
// informer and Run in the background, and waits for the informer's first list, so
// that objects the test creates afterwards arrive as watch events. The Controller is
// stopped at cleanup. Its slow retries come testMaxRetryDelay apart.
func start(t *testing.T, rec *recordingReconciler, maxRetries, workers int, objects ...runtime.Object) *harness {
	t.Helper()
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))

	client := fake.NewClientset(objects...)
	factory := informers.NewSharedInformerFactory(client, 0)
	podInformer := factory.Core().V1().Pods()
	rec.pods = podInformer.Lister()
	controller, err := NewController(ctx, podInformer.Informer(), rec, maxRetries, testMaxRetryDelay)
	if err != nil {
		t.Fatalf("NewController: %v", err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), podInformer.Informer().HasSynced) {
		t.Fatal("the Pod informer did not sync")
	}

	h := &harness{
		controller: controller,
		client:     client,
		logs:       logger.GetSink().(ktesting.Underlier).GetBuffer(),
		cancel:     cancel,
		runDone:    make(chan struct{}),
	}
	go func() {
		defer close(h.runDone)
		controller.Run(ctx, workers)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-h.runDone:
		case <-time.After(waitTimeout):
			t.Errorf("Run did not return within %s of the shutdown", waitTimeout)
		}
		factory.Shutdown()
	})
	return h
}

// countLogs returns how many log entries have the message msg.
func (h *harness) countLogs(msg string) int {
	n := 0
	for _, entry := range h.logs.Data() {
		if entry.Message == msg {
			n++
		}
	}
	return n
}

// eventually polls cond every 10 ms and fails the test with what when it is still
// false after waitTimeout.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", waitTimeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func newPod(namespace, name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}
}

func TestCreateUpdateAndDeleteEachReachTheReconciler(t *testing.T) {
	rec := &recordingReconciler{}
	h := start(t, rec, 5, 2)
	pods := h.client.CoreV1().Pods("team-a")
	ctx := context.Background()

	if _, err := pods.Create(ctx, newPod("team-a", "p1", map[string]string{"step": "created"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Reconciler to see the created Pod", func() bool {
		return slices.Contains(rec.observations(), "team-a/p1 step=created")
	})

	if _, err := pods.Update(ctx, newPod("team-a", "p1", map[string]string{"step": "updated"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Reconciler to see the updated Pod", func() bool {
		return slices.Contains(rec.observations(), "team-a/p1 step=updated")
	})

	if err := pods.Delete(ctx, "p1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Reconciler to see that the Pod is gone", func() bool {
		return slices.Contains(rec.observations(), "team-a/p1 gone")
	})
}

func TestDeleteHandlerEnqueuesTheKeyOfPodsAndTombstones(t *testing.T) {
	pod := newPod("team-a", "p1", nil)
	tests := []struct {
		name string
		obj  any
	}{
		{"deleted Pod", pod},
		{"tombstone of a Pod deleted while the watch was down", cache.DeletedFinalStateUnknown{Key: "team-a/p1", Obj: pod}},
		{"tombstone without its last state", cache.DeletedFinalStateUnknown{Key: "team-a/p1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, ctx := ktesting.NewTestContext(t)
			factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
			c, err := NewController(ctx, factory.Core().V1().Pods().Informer(), &recordingReconciler{}, 5, testMaxRetryDelay)
			if err != nil {
				t.Fatal(err)
			}
			defer c.queue.ShutDown()

			c.enqueue(logger, "delete", tt.obj)

			if got := c.queue.Len(); got != 1 {
				t.Fatalf("queue holds %d keys after one delete, want 1", got)
			}
			if key, _ := c.queue.Get(); key != "team-a/p1" {
				t.Errorf("delete enqueued key %q, want %q", key, "team-a/p1")
			}
		})
	}
}

func TestFailedReconcileIsRetriedAndSuccessResetsTheRetryCount(t *testing.T) {
	rec := &recordingReconciler{result: func(_ context.Context, _ string, attempt int) error {
		if attempt == 1 {
			return errors.New("injected failure on the first attempt")
		}
		return nil
	}}
	h := start(t, rec, 5, 2, newPod("team-a", "flaky", nil))

	eventually(t, "a second, successful attempt and the retry count back at 0", func() bool {
		return rec.attempts("team-a/flaky") == 2 && h.controller.queue.NumRequeues("team-a/flaky") == 0
	})
	if n := h.countLogs("Reconcile failed, will retry"); n != 1 {
		t.Errorf("logged %d retries, want 1", n)
	}
}

// The metrics /metrics serves come from component-base's registry: after a key
// fails once and then succeeds, the queue has counted both adds and the retry,
// its depth is back at 0, and the reconcile metrics have one error and one
// success. The registry is the process's, so the test compares before with after.
func TestMetricsCountAddsRetriesAndReconcilesAndDepthReturnsToZero(t *testing.T) {
	// Read through component-base's testutil: the queue's series from the
	// registry /metrics serves, the reconcile metrics from their vectors (which
	// count only once registered there: unregistered, they are no-ops).
	series := []struct {
		name string
		read func() (float64, error)
		want float64 // how much it grows
	}{
		{"workqueue_adds_total", queueCounter("workqueue_adds_total"), 2}, // the add event, and the retry after its backoff
		{"workqueue_retries_total", queueCounter("workqueue_retries_total"), 1},
		{"workqueue_work_duration_seconds", queueObservations("workqueue_work_duration_seconds"), 2}, // a histogram: its count of observations
		{"controller_runtime_reconcile_time_seconds", func() (float64, error) {
			n, err := testutil.GetHistogramMetricCount(reconcileTime.WithLabelValues(ControllerName))
			return float64(n), err
		}, 2},
		{"controller_runtime_reconcile_total{result=success}", func() (float64, error) {
			return testutil.GetCounterMetricValue(reconcileTotal.WithLabelValues(ControllerName, "success"))
		}, 1},
		{"controller_runtime_reconcile_total{result=error}", func() (float64, error) {
			return testutil.GetCounterMetricValue(reconcileTotal.WithLabelValues(ControllerName, "error"))
		}, 1},
	}
	rec := &recordingReconciler{result: func(_ context.Context, _ string, attempt int) error {
		if attempt == 1 {
			return errors.New("injected failure on the first attempt")
		}
		return nil
	}}
	// The queue's series exist once its controller does: read them after
	// start, then create the Pod.
	h := start(t, rec, 5, 1)
	before := make([]float64, len(series))
	for i, s := range series {
		var err error
		if before[i], err = s.read(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
	}
	if _, err := h.client.CoreV1().Pods("team-a").Create(context.Background(), newPod("team-a", "flaky", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a second, successful attempt", func() bool {
		return rec.attempts("team-a/flaky") == 2 && h.controller.queue.NumRequeues("team-a/flaky") == 0
	})
	eventually(t, "workqueue_depth back at 0", func() bool { return queueDepthIs(0) == nil })

	for i, s := range series {
		after, err := s.read()
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := after - before[i]; got != s.want {
			t.Errorf("%s grew by %g, want %g", s.name, got, s.want)
		}
	}
}

// queueCounter reads the counter name of the controller's queue from
// legacyregistry, the registry /metrics serves.
func queueCounter(name string) func() (float64, error) {
	return func() (float64, error) {
		values, err := testutil.GetCounterValuesFromGatherer(legacyregistry.DefaultGatherer, name, nil, "name")
		return values[ControllerName], err
	}
}

// queueObservations reads how many observations the histogram name of the
// controller's queue holds in legacyregistry.
func queueObservations(name string) func() (float64, error) {
	return func() (float64, error) {
		vec, err := testutil.GetHistogramVecFromGatherer(legacyregistry.DefaultGatherer, name, map[string]string{"name": ControllerName})
		return float64(vec.GetAggregatedSampleCount()), err
	}
}

// queueDepthIs compares workqueue_depth of the controller's queue, as
// legacyregistry serves it, with want; the error shows the difference.
func queueDepthIs(want int) error {
	return testutil.GatherAndCompare(legacyregistry.DefaultGatherer, strings.NewReader(fmt.Sprintf(`
# HELP workqueue_depth [BETA] Current depth of workqueue
# TYPE workqueue_depth gauge
workqueue_depth{name=%q} %d
`, ControllerName, want)), "workqueue_depth")
}

// testMaxRetryDelay stands in for --max-retry-delay (30 s) in these tests.
const testMaxRetryDelay = 100 * time.Millisecond

// A key that fails longer than its fast retries last (a refusal of 20 s, an API
// server restart) is not dropped: it is retried every max-retry-delay until it
// succeeds, and then forgotten. With resync 0 a dropped key would never come
// back for a Pod that does not change, and its work would be lost.
func TestFailingKeyIsRetriedPastMaxRetriesUntilItSucceeds(t *testing.T) {
	const maxRetries, failures = 2, 5 // the last 3 failures get slow retries
	const key = "team-a/refused"
	rec := &recordingReconciler{result: func(_ context.Context, key string, attempt int) error {
		if attempt <= failures {
			return fmt.Errorf("injected failure %d for %s", attempt, key)
		}
		return nil
	}}
	h := start(t, rec, maxRetries, 2, newPod("team-a", "refused", nil))

	eventually(t, "the attempt after the last failure to succeed", func() bool { return rec.attempts(key) == failures+1 })
	eventually(t, "the key to be forgotten after its success", func() bool {
		return h.controller.queue.NumRequeues(key) == 0 && h.controller.queue.Len() == 0
	})
	if got := rec.attempts(key); got != failures+1 {
		t.Errorf("reconciled %d times, want %d (%d failures, then one success, then nothing)", got, failures+1, failures)
	}
}

// A Ctrl-C while the controller is still listing Pods is an ordinary shutdown:
// Run returns without starting a worker, and says so in the log.
func TestShutdownBeforeTheCacheSyncsIsCleanAndStartsNoWorker(t *testing.T) {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
	factory := informers.NewSharedInformerFactory(fake.NewClientset(newPod("team-a", "web", nil)), 0)
	// The informer is never started, so its cache never syncs.
	controller, err := NewController(ctx, factory.Core().V1().Pods().Informer(), &recordingReconciler{}, 5, testMaxRetryDelay)
	if err != nil {
		t.Fatalf("NewController: %v", err)
	}
	cancel()

	done := make(chan struct{})
	go func() {
		defer close(done)
		controller.Run(ctx, 2)
	}()
	select {
	case <-done:
	case <-time.After(waitTimeout):
		t.Fatalf("Run did not return within %s of a shutdown before the cache synced", waitTimeout)
	}
	h := &harness{logs: logger.GetSink().(ktesting.Underlier).GetBuffer()}
	if h.countLogs("Shut down before the informer cache synced") != 1 || h.countLogs("Starting workers") != 0 {
		t.Errorf("log = %q; want one \"Shut down before the informer cache synced\" and no \"Starting workers\"", h.logs.String())
	}
}

func TestShutdownWaitsForTheInFlightReconcileAndStartsNoNewOne(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	var ctxErrAtEnd error
	rec := &recordingReconciler{result: func(ctx context.Context, key string, _ int) error {
		if key != "team-a/slow" {
			return nil
		}
		close(started)
		<-release
		ctxErrAtEnd = ctx.Err()
		return nil
	}}
	// One worker: while it holds "slow", "next" has to wait in the queue.
	h := start(t, rec, 5, 1, newPod("team-a", "slow", nil))
	<-started
	if _, err := h.client.CoreV1().Pods("team-a").Create(context.Background(), newPod("team-a", "next", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the second key to wait in the queue", func() bool { return h.controller.queue.Len() == 1 })

	h.cancel()
	eventually(t, "the queue to shut down", h.controller.queue.ShuttingDown)
	// Run must still be waiting for the reconcile that is in flight. (A broken Run
	// could return a moment later; this check catches it when it returns at once.)
	select {
	case <-h.runDone:
		t.Fatal("Run returned while a reconcile was still in flight")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)

	select {
	case <-h.runDone:
	case <-time.After(waitTimeout):
		t.Fatal("Run did not return after the in-flight reconcile finished")
	}
	if ctxErrAtEnd != nil {
		t.Errorf("the in-flight reconcile's context was cancelled by the shutdown (%v): its writes would fail", ctxErrAtEnd)
	}
	if got := rec.observations(); !slices.Equal(got, []string{"team-a/slow step="}) {
		t.Errorf("reconciled %q, want only the in-flight key: no new work after shutdown", got)
	}
}

func TestPhaseLabelReconcilerWritesOnlyWhenTheLabelDiffers(t *testing.T) {
	running := func(labels map[string]string) *corev1.Pod {
		pod := newPod("team-a", "p1", labels)
		pod.Status.Phase = corev1.PodRunning
		return pod
	}
	deleting := func(pod *corev1.Pod) *corev1.Pod {
		pod.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		pod.Finalizers = []string{"controller-kit.dev/test"}
		return pod
	}
	tests := []struct {
		name      string
		inCache   *corev1.Pod // nil: the informer has seen the deletion
		inAPI     *corev1.Pod // nil: the Pod is gone from the API server too
		patchErr  error       // returned by the API server for a patch
		wantPatch bool
		wantLabel string // the label on the Pod in the API server afterwards
		wantErr   bool
	}{
		{name: "label missing", inCache: running(nil), inAPI: running(nil), wantPatch: true, wantLabel: "Running"},
		{name: "label stale", inCache: running(map[string]string{PhaseLabel: "Pending"}), inAPI: running(map[string]string{PhaseLabel: "Pending"}), wantPatch: true, wantLabel: "Running"},
		{name: "label matches the phase", inCache: running(map[string]string{PhaseLabel: "Running"}), inAPI: running(map[string]string{PhaseLabel: "Running"}), wantLabel: "Running"},
		{name: "Pod gone from the cache", inCache: nil, inAPI: nil},
		{name: "Pod being deleted, label stale", inCache: deleting(running(map[string]string{PhaseLabel: "Pending"})), inAPI: deleting(running(map[string]string{PhaseLabel: "Pending"})), wantLabel: "Pending"},
		{name: "Pod deleted after the cache read", inCache: running(nil), inAPI: nil, wantPatch: true},
		{name: "patch refused", inCache: running(nil), inAPI: running(nil), patchErr: errors.New("injected: etcd unavailable"), wantPatch: true, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
			if tt.inCache != nil {
				if err := indexer.Add(tt.inCache); err != nil {
					t.Fatal(err)
				}
			}
			var objects []runtime.Object
			if tt.inAPI != nil {
				objects = append(objects, tt.inAPI)
			}
			client := fake.NewClientset(objects...)
			if tt.patchErr != nil {
				client.PrependReactor("patch", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, tt.patchErr
				})
			}
			r := &PhaseLabelReconciler{Client: client, Pods: corelisters.NewPodLister(indexer)}

			err := r.Reconcile(ctx, "team-a/p1")

			if (err != nil) != tt.wantErr {
				t.Fatalf("Reconcile returned error %v, want error: %v", err, tt.wantErr)
			}
			var patches int
			for _, action := range client.Actions() {
				if action.GetVerb() != "patch" {
					t.Errorf("unexpected %s %s: the Reconciler reads from the cache and only patches", action.GetVerb(), action.GetResource().Resource)
				}
				patches++
			}
			if want := map[bool]int{false: 0, true: 1}[tt.wantPatch]; patches != want {
				t.Errorf("sent %d patches, want %d", patches, want)
			}
			if tt.inAPI == nil || tt.patchErr != nil {
				return
			}
			pod, err := client.CoreV1().Pods("team-a").Get(ctx, "p1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := pod.Labels[PhaseLabel]; got != tt.wantLabel {
				t.Errorf("label %s = %q, want %q", PhaseLabel, got, tt.wantLabel)
			}
		})
	}
}

func TestStubReconcilerNeverWrites(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	pod := newPod("team-a", "p1", nil)
	if err := indexer.Add(pod); err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset(pod)
	r := &StubReconciler{Pods: corelisters.NewPodLister(indexer)}

	for _, key := range []string{"team-a/p1", "team-a/gone"} {
		if err := r.Reconcile(ctx, key); err != nil {
			t.Errorf("Reconcile(%q) = %v, want nil", key, err)
		}
	}
	if actions := client.Actions(); len(actions) != 0 {
		t.Errorf("the stub sent %d requests, want none: %v", len(actions), actions)
	}
}

func TestParseFlagsRejectsValuesThatCannotWork(t *testing.T) {
	tests := []struct {
		args     []string
		wantFlag string // the flag the error must name
	}{
		{[]string{"--workers=0"}, "--workers"},
		{[]string{"--max-retries=-1"}, "--max-retries"},
		{[]string{"--max-retry-delay=0s"}, "--max-retry-delay"},
		{[]string{"--max-retry-delay=1h"}, "--max-retry-delay"},
		{[]string{"--reconciler=mine"}, "--reconciler"},
		{[]string{"--kube-api-qps=0"}, "--kube-api-qps"},
		{[]string{"extra"}, "extra"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := parseFlags(tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.wantFlag) {
				t.Errorf("parseFlags(%q) = %v, want an error naming %s", tt.args, err, tt.wantFlag)
			}
		})
	}

	o, err := parseFlags(nil)
	if err != nil {
		t.Fatalf("parseFlags with no arguments: %v", err)
	}
	want := options{workers: 2, maxRetries: 5, maxRetryDelay: 30 * time.Second, reconciler: "reference", qps: 200, burst: 400, metricsAddr: "0"}
	if o != want {
		t.Errorf("defaults = %+v, want %+v", o, want)
	}
}

// The reconcilers map is the one place that names Reconcilers: --reconciler
// accepts each of its keys, builds a Reconciler for it, and refuses any other
// name with an error that lists them all.
func TestReconcilerFlagAcceptsExactlyTheRegisteredReconcilers(t *testing.T) {
	pods := corelisters.NewPodLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, nil))
	deps := reconcilerDeps{client: fake.NewClientset(), pods: pods}
	for name, build := range reconcilers {
		if _, err := parseFlags([]string{"--reconciler=" + name}); err != nil {
			t.Errorf("parseFlags(--reconciler=%s) = %v, want nil", name, err)
		}
		if build(deps) == nil {
			t.Errorf("reconcilers[%q] built a nil Reconciler", name)
		}
	}

	_, err := parseFlags([]string{"--reconciler=nope"})
	if err == nil {
		t.Fatal("parseFlags(--reconciler=nope) = nil, want an error")
	}
	for name := range reconcilers {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("the error %q does not list the valid value %q", err, name)
		}
	}
	if strings.Contains(err.Error(), "did you mean") {
		t.Errorf("the error %q suggests a name for nope, which is near none", err)
	}
	// A typo names the Reconciler meant, even with --list-reconcilers, which is
	// how make run-workqueue asks before any cluster work.
	_, err = parseFlags([]string{"--reconciler=stbu", "--list-reconcilers"})
	if err == nil || !strings.Contains(err.Error(), `--reconciler="stbu"`) || !strings.Contains(err.Error(), "did you mean stub?") {
		t.Errorf("parseFlags(--reconciler=stbu --list-reconcilers) = %v, want an error naming the flag and asking \"did you mean stub?\"", err)
	}
}
