// Command workqueue-example is lesson 1 of controller-kit: the whole reconciliation
// loop of a Kubernetes controller in one loop file (this one), plus metrics.go, the
// metrics and the server that show the loop running (--metrics-bind-address).
//
//	informer (list+watch Pods, local cache)
//	  --event handlers--> workqueue (rate-limited, de-duplicated namespace/name keys)
//	  --> N workers: Get key -> Reconciler.Reconcile(key)
//	      -> Forget on success / AddRateLimited on error (fast, then every --max-retry-delay) -> Done
//
// It reads top to bottom in the loop's order: main, parseFlags, run, NewController
// and enqueue, Run, processNextWorkItem and handleResult, then the Reconcilers, the
// part you change (docs/lessons/01-workqueue.md). Compare with client-go's
// examples/workqueue/main.go and kube-controller-manager's pkg/controller/ttlafterfinished.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// ControllerName names this controller to the API server: it is the user agent of
// every request and the field manager of every write.
const ControllerName = "workqueue-example"

// PhaseLabel is the label the reference Reconciler keeps on every Pod, set to the
// Pod's status.phase (Pending, Running, Succeeded, Failed or Unknown).
const PhaseLabel = "controller-kit.dev/phase"

// options holds the command-line flags (parseFlags says what each means; -v is klog's).
type options struct {
	kubeconfig, namespace, reconciler string
	workers, maxRetries, burst        int
	qps                               float64
	maxRetryDelay                     time.Duration
	listReconcilers                   bool
	metricsAddr                       string // "0": no /metrics, no /debug/pprof/
}

func main() {
	ctx := withShutdownSignals(context.Background())
	if err := run(ctx, os.Args[1:]); err != nil && !errors.Is(err, flag.ErrHelp) {
		klog.Background().Error(err, "Controller failed")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
	klog.Flush()
}

// withShutdownSignals returns a context the first SIGINT or SIGTERM cancels (no new work;
// in-flight reconciles finish). A second signal exits at once, for an impatient Ctrl-C.
func withShutdownSignals(parent context.Context) context.Context {
	ctx, cancel := context.WithCancel(parent)
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-signals
		klog.Background().Info("Shutting down: no new work, waiting for in-flight reconciles (signal again to exit at once)", "signal", sig.String())
		cancel()
		sig = <-signals
		klog.Background().Info("Second signal: exiting at once", "signal", sig.String())
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}()
	return ctx
}

// parseFlags reads the command line; a value that cannot work is an error naming the flag and a fix.
func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet(ControllerName, flag.ContinueOnError)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "path to a kubeconfig; empty = the default loading rules ($KUBECONFIG, ~/.kube/config, in-cluster)")
	fs.StringVar(&o.namespace, "namespace", "", "watch Pods in this namespace only; empty = all namespaces")
	fs.IntVar(&o.workers, "workers", 2, "number of workers reconciling keys in parallel (one key is never reconciled by two workers at once)")
	fs.IntVar(&o.maxRetries, "max-retries", 5, "fast retries of a failed key (5 ms, doubling) before the slow ones, every --max-retry-delay; a key is never dropped")
	fs.DurationVar(&o.maxRetryDelay, "max-retry-delay", 30*time.Second, "the longest wait between two retries of a failed key: the end of an outage is noticed within it")
	fs.StringVar(&o.reconciler, "reconciler", "reference", "which Reconciler to run: reference (labels Pods with their phase) or stub (only logs); see reconcilers")
	fs.BoolVar(&o.listReconcilers, "list-reconcilers", false, "print the names --reconciler accepts, one per line, and exit (after refusing a --reconciler that names none of them)")
	fs.Float64Var(&o.qps, "kube-api-qps", 200, "client-side limit of API requests per second")
	fs.IntVar(&o.burst, "kube-api-burst", 400, "client-side burst of API requests above --kube-api-qps")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", "0", "serve /metrics and /debug/pprof/ over plain HTTP on this address, for example 127.0.0.1:8080; 0 = off (they have no authentication: keep them on loopback)")
	klog.InitFlags(fs)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected argument %q: this command takes flags only (see -h)", fs.Arg(0))
	case o.workers < 1:
		return o, fmt.Errorf("--workers=%d: need at least 1 worker, for example --workers=1", o.workers)
	case o.maxRetries < 0 || o.maxRetryDelay < time.Second || o.maxRetryDelay > 10*time.Minute:
		return o, fmt.Errorf("--max-retries=%d --max-retry-delay=%s: want 0 or more fast retries and a delay from 1s to 10m, for example 5 and 30s", o.maxRetries, o.maxRetryDelay)
	case reconcilers[o.reconciler] == nil:
		return o, unknownReconciler(o.reconciler)
	case o.qps <= 0 || o.burst < 1:
		return o, fmt.Errorf("--kube-api-qps=%g --kube-api-burst=%d: both must be positive, for example 200 and 400", o.qps, o.burst)
	}
	return o, nil
}

// run wires the parts together and blocks until ctx is cancelled and the workers stop.
func run(ctx context.Context, args []string) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	if o.listReconcilers {
		fmt.Println(strings.Join(slices.Sorted(maps.Keys(reconcilers)), "\n"))
		return nil
	}
	logger := klog.Background()
	ctx = klog.NewContext(ctx, logger)

	if o.metricsAddr != "0" {
		stopServing, err := serveMetrics(logger, o.metricsAddr) // metrics.go
		if err != nil {
			return err
		}
		defer stopServing()
	}

	// The client configuration as kubectl loads it: --kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster.
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	config, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return fmt.Errorf("loading the kubeconfig (set --kubeconfig or KUBECONFIG; 'make env' at the repo root prints the kit's): %w", err)
	}
	config.QPS, config.Burst = float32(o.qps), o.burst
	client, err := kubernetes.NewForConfig(rest.AddUserAgent(config, ControllerName))
	if err != nil {
		return fmt.Errorf("creating the clientset: %w", err)
	}

	// Resync 0: every reconcile has an event or a retry behind it. A failed key is
	// retried until it succeeds (handleResult), so no periodic replay is needed.
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(o.namespace))
	podInformer := factory.Core().V1().Pods()
	reconciler := reconcilers[o.reconciler](reconcilerDeps{client: client, pods: podInformer.Lister()})
	controller, err := NewController(ctx, podInformer.Informer(), reconciler, o.maxRetries, o.maxRetryDelay)
	if err != nil {
		return err
	}

	logger.Info("Starting", "reconciler", o.reconciler, "namespace", o.namespace, "workers", o.workers,
		"maxRetries", o.maxRetries, "maxRetryDelay", o.maxRetryDelay, "server", config.Host)
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	controller.Run(ctx, o.workers)
	return nil
}

// Controller is the loop's plumbing: it turns informer events into namespace/name keys
// on a rate-limited workqueue, and runs workers that hand each key to a Reconciler and
// retry failures with backoff. Compare with client-go's examples/workqueue/main.go.
type Controller struct {
	reconciler    Reconciler
	queue         workqueue.TypedRateLimitingInterface[string]
	handlerSynced cache.InformerSynced // our handlers have seen the informer's first list
	maxRetries    int                  // fast retries of a failed key
}

// NewController registers the event handlers on informer and returns a Controller that
// passes the key of every object it sees to reconciler and retries a failed key (see
// handleResult). Nothing is specific to Pods. It fails only if the informer stopped.
func NewController(ctx context.Context, informer cache.SharedInformer, reconciler Reconciler, maxRetries int, maxRetryDelay time.Duration) (*Controller, error) {
	c := &Controller{reconciler: reconciler, maxRetries: maxRetries,
		// A failed key waits the longer of 5 ms doubling per failure (capped at maxRetryDelay)
		// and, after maxRetries failures, maxRetryDelay. No bucket for all keys, unlike
		// client-go's default: the last of 1000 keys failing at once would wait 90 s in it.
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.NewTypedMaxOfRateLimiter(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, maxRetryDelay),
			workqueue.NewTypedItemFastSlowRateLimiter[string](0, maxRetryDelay, maxRetries),
		), workqueue.TypedRateLimitingQueueConfig[string]{Name: ControllerName}),
	}
	logger := klog.FromContext(ctx)
	registration, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueue(logger, "add", obj) },
		UpdateFunc: func(_, newObj any) { c.enqueue(logger, "update", newObj) },
		DeleteFunc: func(obj any) { c.enqueue(logger, "delete", obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding event handlers to the informer: %w", err)
	}
	c.handlerSynced = registration.HasSynced
	return c, nil
}

// enqueue adds the namespace/name key of a Pod to the workqueue. The queue holds keys,
// not objects: a worker reads the newest state from the cache, and ten events for one
// waiting Pod become one reconcile. When the informer missed a delete (its watch broke,
// a relist found the Pod gone), the delete handler gets a cache.DeletedFinalStateUnknown
// tombstone instead of a Pod; DeletionHandlingMetaNamespaceKeyFunc takes its key.
func (c *Controller) enqueue(logger klog.Logger, event string, obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Cannot compute the key of an object", "event", event)
		return
	}
	logger.V(4).Info("Enqueued", "event", event, "key", key)
	c.queue.Add(key)
}

// Run waits for the informer's cache to sync (start the informer first), starts
// workers and blocks until ctx is cancelled; then it stops handing out keys and
// returns once every reconcile already running has finished.
func (c *Controller) Run(ctx context.Context, workers int) {
	logger := klog.FromContext(ctx)
	// Before the first full list, a Pod missing from the cache might exist: a
	// Reconciler would act on a wrong picture. Only a shutdown ends the wait early.
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.handlerSynced) {
		c.queue.ShutDown()
		logger.Info("Shut down before the informer cache synced")
		return
	}

	// Reconciles get a context the shutdown does not cancel: a started write finishes.
	reconcileCtx := context.WithoutCancel(ctx)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for c.processNextWorkItem(reconcileCtx) {
			}
		})
	}
	logger.Info("Starting workers", "count", workers)

	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
	logger.Info("Workers stopped")
}

// processNextWorkItem takes one key off the queue, reconciles it and records the
// outcome. It returns false when the worker should stop because the queue shut down.
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	// Done releases the key: while a worker holds it no other worker gets it, and
	// an event that arrived meanwhile puts it back on the queue.
	defer c.queue.Done(key)

	// A shut-down queue still hands out the keys it holds. Leave them: the next
	// start lists every Pod again, so nothing is lost.
	if c.queue.ShuttingDown() {
		return false
	}
	observe := startReconcile() // the reconcile metrics, in metrics.go
	err := c.reconciler.Reconcile(ctx, key)
	observe(err)
	c.handleResult(ctx, key, err)
	return true
}

// handleResult is the retry policy. Success resets the key's backoff. A failure goes back
// with AddRateLimited: the queue's limiter (NewController) retries it fast, then every
// --max-retry-delay, until Reconcile returns nil (it does for a Pod that is gone). No
// resync, so a dropped key would wait for an event a settled Pod may never get.
func (c *Controller) handleResult(ctx context.Context, key string, err error) {
	if err == nil {
		c.queue.Forget(key)
		return
	}
	retries := c.queue.NumRequeues(key) // failures before this one
	c.queue.AddRateLimited(key)
	klog.FromContext(ctx).Error(err, "Reconcile failed, will retry", "key", key, "retry", retries+1, "fast", retries < c.maxRetries)
}

// Reconciler makes the cluster match what one Pod asks for. It gets a key, not an
// object or an event, and reads the current state itself, so it acts on the newest
// state however many events led to the call (it is level-triggered). It returns nil
// when the work is done (also when the Pod is gone) and an error to be retried.
type Reconciler interface {
	Reconcile(ctx context.Context, key string) error
}

// reconcilerDeps is what a Reconciler may use: the client for writes, the lister
// for reads from the informer's cache.
type reconcilerDeps struct {
	client kubernetes.Interface
	pods   corelisters.PodLister
}

// reconcilers maps each --reconciler value to the Reconciler it runs, and is the
// one place that names them: parseFlags accepts exactly these keys and run builds
// the chosen one. To try your own, add an entry here.
var reconcilers = map[string]func(reconcilerDeps) Reconciler{
	"reference": func(d reconcilerDeps) Reconciler { return &PhaseLabelReconciler{Client: d.client, Pods: d.pods} },
	"stub":      func(d reconcilerDeps) Reconciler { return &StubReconciler{Pods: d.pods} },
}

// unknownReconciler is the error for a --reconciler value that is no key of
// reconcilers: it lists the keys and, for a typo (two letters off at most),
// names the one meant.
func unknownReconciler(name string) error {
	names := slices.Sorted(maps.Keys(reconcilers))
	for _, known := range names {
		if editDistance(name, known) <= 2 {
			return fmt.Errorf("--reconciler=%q: want one of %s; did you mean %s?", name, strings.Join(names, ", "), known)
		}
	}
	return fmt.Errorf("--reconciler=%q: want one of %s (add yours to the reconcilers map first)", name, strings.Join(names, ", "))
}

// editDistance is the number of one-letter edits that turn a into b (Levenshtein distance).
// Each tier has this copy on purpose: a tier stands alone, importing no code of the kit.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// StubReconciler only logs what it sees: your starting point. Its first step is
// PhaseLabelReconciler's, line for line, so a copy starts where the reference does.
type StubReconciler struct {
	Pods corelisters.PodLister // reads Pods from the informer's cache
}

var _ Reconciler = (*StubReconciler)(nil)

// Reconcile logs the Pod's phase, or that it is gone. It fails on a bad key or cache error.
func (r *StubReconciler) Reconcile(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return fmt.Errorf("malformed key %q: %w", key, err)
	}
	pod, err := r.Pods.Pods(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		logger.Info("Pod is gone, nothing to do", "pod", klog.KRef(namespace, name))
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading Pod %s from the cache: %w", key, err)
	}
	logger.Info("Pod seen", "pod", klog.KObj(pod), "phase", pod.Status.Phase)
	return nil
}

// PhaseLabelReconciler is the reference Reconciler: it keeps the PhaseLabel of every
// Pod that is not being deleted equal to the Pod's phase. Its own write causes
// another update event; that reconcile finds the label right and writes nothing.
// It needs RBAC to get, list, watch and patch Pods.
type PhaseLabelReconciler struct {
	Client kubernetes.Interface  // writes to the API server
	Pods   corelisters.PodLister // reads Pods from the informer's cache
}

var _ Reconciler = (*PhaseLabelReconciler)(nil)

// Reconcile patches the PhaseLabel of one Pod when it differs from the phase. It
// fails when the key is malformed or the patch fails (a Pod gone is no failure).
func (r *PhaseLabelReconciler) Reconcile(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	// 1. Read the Pod from the cache. Gone is a normal deletion, not a failure.
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return fmt.Errorf("malformed key %q: %w", key, err)
	}
	pod, err := r.Pods.Pods(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		logger.Info("Pod is gone, nothing to do", "pod", klog.KRef(namespace, name))
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading Pod %s from the cache: %w", key, err)
	}

	// 2. A Pod that is going away (deletionTimestamp set: kubectl delete, or its
	// namespace being deleted) gets no more writes: they help no one, and race it.
	if pod.DeletionTimestamp != nil {
		logger.Info("Pod is being deleted, nothing to do", "pod", klog.KObj(pod))
		return nil
	}

	// 3. Compare desired with actual, and write only when they differ: every write
	// is an API request, and every write that changes the Pod comes back as an event.
	phase := string(pod.Status.Phase)
	if current, ok := pod.Labels[PhaseLabel]; ok && current == phase {
		logger.Info("Pod is up to date, no write", "pod", klog.KObj(pod), "phase", phase)
		return nil
	}

	// 4. Patch just the label. (Objects from the cache are shared with every other
	// reader: never modify them; send the change to the API server instead.)
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{PhaseLabel: phase}}})
	if err != nil {
		return fmt.Errorf("encoding the label patch: %w", err)
	}
	_, err = r.Client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: ControllerName})
	if apierrors.IsNotFound(err) { // deleted between the cache read and the patch
		logger.Info("Pod is gone, nothing to do", "pod", klog.KObj(pod))
		return nil
	}
	if err != nil {
		return fmt.Errorf("labelling Pod %s with %s=%s: %w", key, PhaseLabel, phase, err)
	}
	logger.Info("Labelled Pod with its phase", "pod", klog.KObj(pod), "phase", phase)
	return nil
}
