package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// benchNamespace holds the burst's objects; warmupNamespace the one object that
// proves a controller is up before the clock starts.
const (
	benchNamespace  = "bench"
	warmupNamespace = "warmup"
	// createWorkers is how many goroutines create the burst's objects.
	createWorkers = 32
	// settle is the pause between convergence and the idle window, and
	// auditLag the one before the audit log is read (settleSmoke and
	// auditLagSmoke on a -one-cluster smoke run, whose figures are not
	// compared).
	settle, settleSmoke     = 2 * time.Second, 500 * time.Millisecond
	auditLag, auditLagSmoke = 2 * time.Second, 500 * time.Millisecond
	// stopTimeout is how long a controller has to exit after SIGTERM before SIGKILL.
	stopTimeout = 10 * time.Second
	// depthSampling is how often the burst scrapes the controller's /metrics for
	// its queue depth.
	depthSampling = 250 * time.Millisecond
	// progressEvery is how often a burst prints how far it has come.
	progressEvery = 15 * time.Second
)

// result is one scenario run. Durations are seconds since the first create of the burst.
type result struct {
	Scenario string `json:"scenario"`
	// Objects is how many custom resources the burst created.
	Objects int `json:"objects"`
	// DeploymentsExist is when the last Deployment of the burst was first seen.
	DeploymentsExist float64 `json:"deploymentsExistSeconds"`
	// Converged is when the last object reported ready (Foo: availableReplicas equal
	// to replicas; Guestbook: condition Available); for the floor, when the last
	// of its Deployments was available (the cluster's own rollout).
	Converged float64 `json:"convergedSeconds"`
	// WritesDone is, for the floor only, when its last status write returned:
	// the floor's "converged" before it measured the rollout.
	WritesDone float64 `json:"writesDoneSeconds,omitempty"`
	// Nodes is how many kwok nodes the scenario's cluster had.
	Nodes int `json:"nodes"`
	// BurstWrites counts the controller's writes from the burst's first create
	// until convergence, from the audit log (its user agent; custom resources
	// with their status, Deployments, Events); nil for the floor, which makes
	// exactly two per Foo.
	BurstWrites *writeCounts `json:"burstWrites,omitempty"`
	// CacheCost is, for ours under -scale, what one of its Deployments costs
	// in an informer's cache, measured in the harness (measureCacheCost).
	CacheCost *cacheCost `json:"cacheCost,omitempty"`
	// Idle is what the idle window counted; nil for the floor (no controller).
	Idle *writeCounts `json:"idle,omitempty"`
	// IdleSeconds is the idle window's length.
	IdleSeconds float64 `json:"idleSeconds,omitempty"`
	// PeakRSSMiB and CPUSeconds describe the controller process (zero for the floor).
	PeakRSSMiB float64 `json:"peakRSSMiB,omitempty"`
	CPUSeconds float64 `json:"cpuSeconds,omitempty"`
	// Timeline holds, sorted, when each Deployment of the burst was first seen.
	Timeline []float64 `json:"deploymentTimeline"`
	// The controller's own view of the burst, from its /metrics; nil for a
	// controller without metrics (upstream) and for the floor.
	// RateLimiterWaitSeconds is how long the burst's requests waited, summed over
	// requests, for the client's own rate limiter
	// (rest_client_rate_limiter_duration_seconds_sum, end minus start): client
	// throttling.
	RateLimiterWaitSeconds *float64 `json:"rateLimiterWaitSeconds,omitempty"`
	// PeakQueueDepth is the highest workqueue_depth of the controller's queue,
	// sampled every depthSampling from the burst's start until convergence.
	PeakQueueDepth *float64 `json:"peakQueueDepth,omitempty"`
}

// tracker records when each key first met a condition, and closes done once want
// keys have.
type tracker struct {
	mu    sync.Mutex
	start time.Time
	seen  map[string]float64
	want  int
	done  chan struct{}
}

func newTracker(want int) *tracker {
	return &tracker{seen: map[string]float64{}, want: want, done: make(chan struct{})}
}

// begin sets the instant durations are measured from.
func (t *tracker) begin(at time.Time) { t.mu.Lock(); t.start = at; t.mu.Unlock() }

func (t *tracker) mark(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.start.IsZero() {
		return // the warm-up object, seen before the clock started
	}
	if _, ok := t.seen[key]; ok {
		return
	}
	t.seen[key] = time.Since(t.start).Seconds()
	if len(t.seen) == t.want {
		close(t.done)
	}
}

// count returns how many keys are marked so far.
func (t *tracker) count() int { t.mu.Lock(); defer t.mu.Unlock(); return len(t.seen) }

// wait blocks until want keys are marked, then returns the sorted times.
func (t *tracker) wait(ctx context.Context, what string) ([]float64, error) {
	select {
	case <-t.done:
	case <-ctx.Done():
		t.mu.Lock()
		n := len(t.seen)
		t.mu.Unlock()
		return nil, fmt.Errorf("timed out waiting for %s: %d of %d", what, n, t.want)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	times := make([]float64, 0, len(t.seen))
	for _, s := range t.seen {
		times = append(times, s)
	}
	sort.Float64s(times)
	return times, nil
}

// controllerScenario describes a controller under test: how to run it, its CRD, the
// objects a burst creates, and when one of them counts as converged.
type controllerScenario struct {
	name           string
	bin            string
	args           func(kubeconfig string) []string
	crdPath        string
	crdName        string
	gvr            schema.GroupVersionResource
	newObject      func(namespace string, i int) *unstructured.Unstructured
	deploymentsPer int
	ready          func(u *unstructured.Unstructured) bool
	// podsPer is how many pods one object ends up with (sizes the fake nodes).
	podsPer int
	// metricsArgs are the flags that serve the controller's /metrics on addr,
	// and queue the name of its workqueue there; nil for a controller without
	// metrics.
	metricsArgs func(addr string) []string
	queue       string
}

// run creates a fresh cluster, starts the controller, proves it works on one
// warm-up object, then times a burst of n objects and counts writes in the idle
// window: the steps of a scenarioRun, in order.
func (s controllerScenario) run(o options, n int) (result, error) {
	r := &scenarioRun{controllerScenario: s, o: o, say: phases(s.name, n),
		res: result{Scenario: s.name, Objects: n, Nodes: nodesFor(n * s.podsPer)}}
	c, release, err := clusterFor(o, r.res.Nodes, r.say)
	if err != nil {
		return r.res, err
	}
	r.c = c
	if !o.oneCluster {
		defer release()
	}
	ctx, cancel := waitCtx(o.timeout)
	defer cancel()
	if err := r.prepare(ctx); err != nil {
		return r.res, err
	}
	if err := r.startController(ctx); err != nil {
		return r.res, err
	}
	defer func() { _, _ = r.proc.Stop(stopTimeout) }()
	if o.oneCluster {
		// Before the controller stops (deferred calls run last first; and
		// in stopController, before the stop that reads its usage): it
		// removes its finalizers while its objects are deleted.
		defer release()
	}
	if err := r.burst(ctx); err != nil {
		return r.res, err
	}
	r.idle()
	if err := r.stopController(release); err != nil {
		return r.res, err
	}
	if o.scale != "" && s.name == "ours" {
		r.say("measuring what a cached Deployment costs, four ways")
		cost, err := measureCacheCost(ctx, c)
		if err != nil {
			return r.res, err
		}
		r.res.CacheCost = &cost
	}
	return r.res, r.countWrites()
}

// scenarioRun is one run of a controllerScenario: the cluster it runs on, the
// controller's process, and the result its steps fill in.
type scenarioRun struct {
	controllerScenario
	o   options
	say func(format string, args ...any)
	c   *cluster
	res result

	// deployments marks each Deployment of the burst when it first exists,
	// ready each object when it first reports ready.
	deployments, ready *tracker
	proc               *kittest.Process
	// metricsURL is the controller's /metrics, "" for one without.
	metricsURL string
	// start is the burst's first create; convergedAt when its last object
	// was ready; idleStart and idleEnd bound the idle window.
	start, convergedAt, idleStart, idleEnd time.Time
}

// prepare installs the CRD, creates the bench and warm-up namespaces, and
// starts the informers that mark when each Deployment of the burst exists and
// each object is ready.
func (r *scenarioRun) prepare(ctx context.Context) error {
	if err := r.c.installCRD(r.crdPath, r.crdName); err != nil {
		return err
	}
	if err := r.c.createNamespaces(ctx, benchNamespace, warmupNamespace); err != nil {
		return err
	}
	r.deployments = newTracker(r.res.Objects * r.deploymentsPer)
	r.ready = newTracker(r.res.Objects)
	watchDeployments(ctx, r.c, r.deployments, nil)
	dynInformers := dynamicinformer.NewFilteredDynamicSharedInformerFactory(r.c.dyn, 0, benchNamespace, nil)
	_, _ = dynInformers.ForResource(r.gvr).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { markReady(r.ready, r.controllerScenario.ready, obj) },
		UpdateFunc: func(_, obj any) { markReady(r.ready, r.controllerScenario.ready, obj) },
	})
	dynInformers.Start(ctx.Done())
	dynInformers.WaitForCacheSync(ctx.Done())
	return nil
}

// startController starts the controller, serving its /metrics on a free
// address when it has them, and waits until it has reconciled one warm-up
// object.
func (r *scenarioRun) startController(ctx context.Context) error {
	args := r.args(r.c.kubeconfig)
	if r.metricsArgs != nil {
		addr, err := kittest.FreeAddressE()
		if err != nil {
			return err
		}
		r.metricsURL = "http://" + addr + "/metrics"
		args = append(args, r.metricsArgs(addr)...)
	}
	r.say("starting %s and waiting for it to reconcile one warm-up object", r.name)
	proc, err := kittest.Start(r.name, filepath.Join(r.o.out, r.name+".log"), r.bin, args...)
	if err != nil {
		return err
	}
	r.proc = proc
	if err := warmUp(ctx, r.c, r.controllerScenario); err != nil {
		return fmt.Errorf("%s did not reconcile the warm-up object (see %s.log): %w", r.name, r.name, err)
	}
	return nil
}

// burst creates the objects at once and waits until every Deployment exists
// and every object is ready, following the controller's /metrics meanwhile.
func (r *scenarioRun) burst(ctx context.Context) error {
	var watch *metricsWatch
	if r.metricsURL != "" {
		var err error
		if watch, err = watchMetrics(ctx, r.metricsURL, r.queue); err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
	}
	r.say("burst: creating %d objects from %d goroutines", r.res.Objects, createWorkers)
	r.start = time.Now()
	r.deployments.begin(r.start)
	r.ready.begin(r.start)
	stopProgress := progress(r.say, r.start, counter{"Deployments", r.deployments}, counter{"converged", r.ready})
	defer stopProgress()
	if err := kittest.ForEach(ctx, r.res.Objects, createWorkers, func(ctx context.Context, i int) error {
		_, err := r.c.dyn.Resource(r.gvr).Namespace(benchNamespace).Create(ctx, r.newObject(benchNamespace, i), metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	var err error
	if r.res.Timeline, err = r.deployments.wait(ctx, "Deployments"); err != nil {
		return err
	}
	r.res.DeploymentsExist = r.res.Timeline[len(r.res.Timeline)-1]
	readyTimes, err := r.ready.wait(ctx, "converged objects")
	if err != nil {
		return err
	}
	r.res.Converged = readyTimes[len(readyTimes)-1]
	stopProgress()
	r.convergedAt = r.start.Add(time.Duration(r.res.Converged * float64(time.Second)))
	if watch != nil {
		if r.res.RateLimiterWaitSeconds, r.res.PeakQueueDepth, err = watch.stop(ctx); err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
	}
	return nil
}

// idle lets the burst's last Events land, then watches the converged
// controller for the idle window.
func (r *scenarioRun) idle() {
	// Events are recorded asynchronously, a moment after the write they describe:
	// let those of the burst's last transitions land before the window opens.
	time.Sleep(r.o.settleWait())
	r.say("converged after %.1fs; idle window of %s", r.res.Converged, r.o.idle)
	r.idleStart = time.Now()
	time.Sleep(r.o.idle)
	r.idleEnd = time.Now()
}

// stopController stops the controller, which must still be running, and
// reads its peak RSS and CPU time. With -one-cluster it first calls release,
// while the controller can still remove its finalizers.
func (r *scenarioRun) stopController(release func()) error {
	// The controller's peak RSS and CPU time are read once it has exited: the OS
	// hands a process's resource usage to its parent then, on Linux and macOS alike.
	if r.proc.Exited() {
		return fmt.Errorf("%s exited before the end of the idle window (see %s.log)", r.name, r.name)
	}
	if r.o.oneCluster {
		release()
	}
	_, _ = r.proc.Stop(stopTimeout) // a controller that needs SIGKILL has its usage all the same
	var err error
	if r.res.PeakRSSMiB, r.res.CPUSeconds, err = usage(r.proc.State()); err != nil {
		return fmt.Errorf("%s: %w", r.name, err)
	}
	return nil
}

// countWrites counts, from the audit log, the controller's writes in the idle
// window (each listed in <scenario>-idle-writes.log) and in the burst.
func (r *scenarioRun) countWrites() error {
	// The audit log is written asynchronously; give the last lines time to land.
	time.Sleep(r.o.auditWait())
	// client-go's default user agent starts with the binary's name.
	userAgent := filepath.Base(r.bin) + "/"
	detail, err := os.Create(filepath.Join(r.o.out, r.name+"-idle-writes.log"))
	if err != nil {
		return err
	}
	defer detail.Close()
	counts, err := r.c.countWrites(r.idleStart, r.idleEnd, r.gvr.Group, userAgent, detail)
	if err != nil {
		return err
	}
	r.res.Idle, r.res.IdleSeconds = &counts, r.idleEnd.Sub(r.idleStart).Seconds()
	// The burst's writes: the same log, from the first create to convergence
	// (the status write that made the last object converge included).
	burst, err := r.c.countWrites(r.start, r.convergedAt.Add(time.Millisecond), r.gvr.Group, userAgent, nil)
	if err != nil {
		return err
	}
	r.res.BurstWrites = &burst
	return nil
}

// settleWait is the pause between convergence and the idle window: settle,
// or settleSmoke with -one-cluster.
func (o options) settleWait() time.Duration {
	if o.oneCluster {
		return settleSmoke
	}
	return settle
}

// auditWait is the pause before the audit log is read: auditLag, or
// auditLagSmoke with -one-cluster.
func (o options) auditWait() time.Duration {
	if o.oneCluster {
		return auditLagSmoke
	}
	return auditLag
}

// phases returns a function that prints one progress line of a scenario to
// standard error, with the time of day and the time since the scenario began,
// so a long run never looks hung and shows where its time goes.
func phases(scenario string, n int) func(format string, args ...any) {
	begin := time.Now()
	return func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "   [%s +%.1fs %s n=%d] %s\n", time.Now().Format("15:04:05"), time.Since(begin).Seconds(),
			scenario, n, fmt.Sprintf(format, args...))
	}
}

// counter names a tracker for progress lines.
type counter struct {
	what string
	t    *tracker
}

// progress prints, every progressEvery until the returned stop is called
// (once or more), how far each tracker has come since start.
func progress(say func(string, ...any), start time.Time, counters ...counter) (stop func()) {
	done := make(chan struct{})
	var once sync.Once
	go func() {
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			line := fmt.Sprintf("%.0fs:", time.Since(start).Seconds())
			for _, c := range counters {
				line += fmt.Sprintf(" %d/%d %s", c.t.count(), c.t.want, c.what)
			}
			say("%s", line)
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}

// metricsWatch follows a controller's /metrics through a burst: the client's
// rate-limiter wait at the start, and the highest queue depth seen since.
type metricsWatch struct {
	url, queue string
	waitBefore float64
	done       chan struct{}
	stopped    chan struct{}
	mu         sync.Mutex
	peak       float64
	lastErr    error
}

// watchMetrics reads the rate-limiter wait so far and starts sampling the
// depth of the queue called queue every depthSampling.
func watchMetrics(ctx context.Context, url, queue string) (*metricsWatch, error) {
	m, err := kittest.Scrape(ctx, url)
	if err != nil {
		return nil, err
	}
	w := &metricsWatch{url: url, queue: queue, done: make(chan struct{}), stopped: make(chan struct{})}
	w.waitBefore, _ = m.HistogramSum("rest_client_rate_limiter_duration_seconds", nil)
	go func() {
		defer close(w.stopped)
		tick := time.NewTicker(depthSampling)
		defer tick.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
			m, err := kittest.Scrape(ctx, url)
			w.mu.Lock()
			if err != nil {
				w.lastErr = err
			} else if depth, _ := m.Value("workqueue_depth", map[string]string{"name": queue}); depth > w.peak {
				w.peak = depth
			}
			w.mu.Unlock()
		}
	}()
	return w, nil
}

// stop ends the sampling and returns the rate-limiter wait since
// watchMetrics and the peak queue depth.
func (w *metricsWatch) stop(ctx context.Context) (wait, peak *float64, err error) {
	close(w.done)
	<-w.stopped
	m, err := kittest.Scrape(ctx, w.url)
	if err != nil {
		return nil, nil, err
	}
	if _, found := m.Value("workqueue_depth", map[string]string{"name": w.queue}); !found {
		return nil, nil, fmt.Errorf("%s has no workqueue_depth of the queue %q (last sampling error: %v)", w.url, w.queue, w.lastErr)
	}
	after, _ := m.HistogramSum("rest_client_rate_limiter_duration_seconds", nil)
	total := after - w.waitBefore
	return &total, &w.peak, nil
}

// warmUp creates one object in the warm-up namespace and waits for its Deployments.
func warmUp(ctx context.Context, c *cluster, s controllerScenario) error {
	if _, err := c.dyn.Resource(s.gvr).Namespace(warmupNamespace).Create(ctx, s.newObject(warmupNamespace, 0), metav1.CreateOptions{}); err != nil {
		return err
	}
	for {
		list, err := c.kube.AppsV1().Deployments(warmupNamespace).List(ctx, metav1.ListOptions{})
		if err == nil && len(list.Items) >= s.deploymentsPer {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// watchDeployments marks on exist each Deployment of the bench namespace when
// first seen, and on available (unless nil) when it first has every replica
// available.
func watchDeployments(ctx context.Context, c *cluster, exist, available *tracker) {
	f := informers.NewSharedInformerFactoryWithOptions(c.kube, 0, informers.WithNamespace(benchNamespace))
	markAvailable := func(obj any) {
		d := obj.(*appsv1.Deployment)
		if available != nil && d.Spec.Replicas != nil && *d.Spec.Replicas > 0 && d.Status.AvailableReplicas == *d.Spec.Replicas {
			available.mark(d.Name)
		}
	}
	_, _ = f.Apps().V1().Deployments().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { exist.mark(obj.(*appsv1.Deployment).Name); markAvailable(obj) },
		UpdateFunc: func(_, obj any) { markAvailable(obj) },
	})
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
}

func markReady(t *tracker, ready func(*unstructured.Unstructured) bool, obj any) {
	if u, ok := obj.(*unstructured.Unstructured); ok && ready(u) {
		t.mark(u.GetName())
	}
}

// nodesFor sizes the cluster: one kwok node takes 110 pods; keep headroom.
func nodesFor(pods int) int { return max(3, pods/100+2) }

// fooAvailable: the Foo reports as many available replicas as it asks for.
func fooAvailable(u *unstructured.Unstructured) bool {
	want, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if !found {
		want = 1
	}
	got, _, _ := unstructured.NestedInt64(u.Object, "status", "availableReplicas")
	return want > 0 && got == want
}

// runFloor is the floor: no controller. The harness creates the Foos first, then
// itself makes the writes a controller must (per Foo, one Deployment create and
// one status write) from as many goroutines as our controller has workers:
// nothing a controller does can be faster. It then waits, as the controllers'
// scenarios do, until every Deployment is available: the cluster's own rollout
// (kube-controller-manager, the scheduler and kwok) of the same Deployments.
func runFloor(o options, n int) (result, error) {
	res := result{Scenario: "floor", Objects: n, Nodes: nodesFor(n)}
	say := phases("floor", n)
	c, release, err := clusterFor(o, res.Nodes, say)
	if err != nil {
		return res, err
	}
	defer release()
	if err := c.installCRD(o.oursCRD, "foos.samplecontroller.k8s.io"); err != nil {
		return res, err
	}
	ctx, cancel := waitCtx(o.timeout)
	defer cancel()
	if err := c.createNamespaces(ctx, benchNamespace); err != nil {
		return res, err
	}
	say("creating %d Foos before the clock starts", n)
	foos, err := kittest.CreateFoos(ctx, c.dyn, benchNamespace, n, 1, createWorkers)
	if err != nil {
		return res, err
	}
	deployments, available := newTracker(n), newTracker(n)
	watchDeployments(ctx, c, deployments, available)

	say("burst: a Deployment and a status write per Foo from %d goroutines", o.workers)
	start := time.Now()
	deployments.begin(start)
	available.begin(start)
	stopProgress := progress(say, start, counter{"Deployments", deployments}, counter{"available", available})
	defer stopProgress()
	if err := kittest.ForEach(ctx, n, o.workers, func(ctx context.Context, i int) error {
		return floorWrites(ctx, c, foos[i])
	}); err != nil {
		return res, err
	}
	res.WritesDone = time.Since(start).Seconds()
	if res.Timeline, err = deployments.wait(ctx, "Deployments"); err != nil {
		return res, err
	}
	res.DeploymentsExist = res.Timeline[len(res.Timeline)-1]
	say("writes done after %.1fs; waiting for the rollout", res.WritesDone)
	availableTimes, err := available.wait(ctx, "available Deployments")
	if err != nil {
		return res, err
	}
	res.Converged = availableTimes[len(availableTimes)-1]
	return res, nil
}

// floorWrites makes the two writes a controller owes one new Foo. The
// Deployment is the one sample-controller's FooReconciler creates (newDeployment
// in sample-controller/pkg/controller/reference.go; this module cannot import it).
func floorWrites(ctx context.Context, c *cluster, foo *unstructured.Unstructured) error {
	labels := map[string]string{
		"app.kubernetes.io/name":       "nginx",
		"app.kubernetes.io/instance":   foo.GetName(),
		"app.kubernetes.io/managed-by": "sample-controller",
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name: foo.GetName(), Namespace: foo.GetNamespace(), Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "samplecontroller.k8s.io/v1alpha1", Kind: "Foo", Name: foo.GetName(), UID: foo.GetUID(),
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
			},
		},
	}
	if _, err := c.kube.AppsV1().Deployments(d.Namespace).Create(ctx, d, metav1.CreateOptions{FieldManager: "floor"}); err != nil {
		return err
	}
	foo = foo.DeepCopy()
	if err := unstructured.SetNestedField(foo.Object, int64(0), "status", "availableReplicas"); err != nil {
		return err
	}
	_, err := c.dyn.Resource(kittest.FooGVR).Namespace(foo.GetNamespace()).UpdateStatus(ctx, foo, metav1.UpdateOptions{FieldManager: "floor"})
	return err
}
