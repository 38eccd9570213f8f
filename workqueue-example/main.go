// Command workqueue-example is lesson 1 of controller-kit: the whole reconciliation
// loop of a Kubernetes controller in one file.
//
//	informer (list+watch Pods, local cache)
//	  --event handlers--> workqueue (rate-limited, de-duplicated namespace/name keys)
//	  --> N workers: Get key -> Reconciler.Reconcile(key)
//	      -> Forget on success / AddRateLimited on error (drop after --max-retries) -> Done
//
// Read it in this order: main and withShutdownSignals, parseFlags, run (client,
// informer, Reconciler), NewController, enqueue and onDelete (events become keys),
// Run (cache sync, workers, shutdown), processNextWorkItem and handleResult (the
// retry policy), then the Reconcilers at the end of the file and the reconcilers
// map that registers them: the part a learner copies and changes.
// docs/lessons/01-workqueue.md walks through it.
//
// Compare with client-go's examples/workqueue/main.go (the same loop with one
// worker and no signal handling) and with kube-controller-manager's
// pkg/controller/ttlafterfinished (the same worker loop) and pkg/controller/podgc.
//
// With --metrics-bind-address the loop can be watched as it runs: /metrics has
// the queue's and the client's metrics under the names Kubernetes' components
// use, and the reconciles under controller-runtime's names; /debug/pprof/ has
// the runtime's profiles (serveMetrics).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net"
	"net/http"
	httppprof "net/http/pprof"
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
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	// Imported for their init functions, as kube-controller-manager imports them:
	// one hands client-go's workqueue a MetricsProvider (workqueue.SetProvider),
	// so every queue reports workqueue_depth, workqueue_adds_total, ... with its
	// name as the label "name"; the other registers client-go's REST-client hooks,
	// so every request reports rest_client_request_duration_seconds and the time it
	// waited for the client's own rate limiter,
	// rest_client_rate_limiter_duration_seconds. Both register in legacyregistry.
	_ "k8s.io/component-base/metrics/prometheus/restclient"
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
	"k8s.io/klog/v2"
)

// ControllerName names this controller to the API server: it is the user agent of
// every request and the field manager of every write.
const ControllerName = "workqueue-example"

// PhaseLabel is the label the reference Reconciler keeps on every Pod, set to the
// Pod's status.phase (Pending, Running, Succeeded, Failed or Unknown).
const PhaseLabel = "controller-kit.dev/phase"

// options holds the command-line flags; the klog flags (-v and friends) live in klog.
type options struct {
	kubeconfig string
	namespace  string
	workers    int
	maxRetries int
	reconciler string
	// listReconcilers asks for the names --reconciler accepts instead of a run.
	listReconcilers bool
	qps             float64
	burst           int
	// metricsAddr is where /metrics and /debug/pprof/ are served; "0" = nowhere.
	metricsAddr string
}

func main() {
	ctx := withShutdownSignals(context.Background())
	if err := run(ctx, os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		klog.Background().Error(err, "Controller failed")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
	klog.Flush()
}

// withShutdownSignals returns a context that is cancelled by the first SIGINT or
// SIGTERM, so the controller stops taking work and lets in-flight reconciles finish.
// A second signal exits at once, for a learner whose Ctrl-C should not wait.
func withShutdownSignals(parent context.Context) context.Context {
	ctx, cancel := context.WithCancel(parent)
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		logger := klog.Background()
		sig := <-signals
		logger.Info("Shutting down: no new work, waiting for in-flight reconciles (signal again to exit at once)", "signal", sig.String())
		cancel()
		sig = <-signals
		logger.Info("Second signal: exiting at once", "signal", sig.String())
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}()
	return ctx
}

// parseFlags reads the command line into options and klog's flags. A value that
// cannot work is an error naming the flag and what to pass instead.
func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet(ControllerName, flag.ContinueOnError)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "path to a kubeconfig; empty = the default loading rules ($KUBECONFIG, ~/.kube/config, in-cluster)")
	fs.StringVar(&o.namespace, "namespace", "", "watch Pods in this namespace only; empty = all namespaces")
	fs.IntVar(&o.workers, "workers", 2, "number of workers reconciling keys in parallel (one key is never reconciled by two workers at once)")
	fs.IntVar(&o.maxRetries, "max-retries", 5, "retries with backoff after a failed reconcile, before the key is dropped until its next event")
	fs.StringVar(&o.reconciler, "reconciler", "reference", "which Reconciler to run: reference (labels Pods with their phase) or stub (only logs); see reconcilers")
	fs.BoolVar(&o.listReconcilers, "list-reconcilers", false, "print the names --reconciler accepts, one per line, and exit")
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
	case o.maxRetries < 0:
		return o, fmt.Errorf("--max-retries=%d: must be 0 (never retry) or more", o.maxRetries)
	case reconcilers[o.reconciler] == nil:
		return o, fmt.Errorf("--reconciler=%q: want one of %s", o.reconciler, strings.Join(reconcilerNames(), ", "))
	case o.qps <= 0 || o.burst < 1:
		return o, fmt.Errorf("--kube-api-qps=%g --kube-api-burst=%d: both must be positive, for example 200 and 400", o.qps, o.burst)
	}
	return o, nil
}

// run wires the parts together and blocks until ctx is cancelled and the workers
// have stopped.
func run(ctx context.Context, args []string) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	if o.listReconcilers {
		fmt.Println(strings.Join(reconcilerNames(), "\n"))
		return nil
	}
	logger := klog.Background()
	ctx = klog.NewContext(ctx, logger)

	if o.metricsAddr != "0" {
		stopServing, err := serveMetrics(logger, o.metricsAddr)
		if err != nil {
			return err
		}
		defer stopServing()
	}

	config, err := restConfig(o.kubeconfig)
	if err != nil {
		return err
	}
	config.QPS, config.Burst = float32(o.qps), o.burst
	client, err := kubernetes.NewForConfig(rest.AddUserAgent(config, ControllerName))
	if err != nil {
		return fmt.Errorf("creating the clientset: %w", err)
	}

	// Resync 0: every reconcile has a real event behind it. Level-triggered
	// Reconcilers do not need periodic replays to stay correct.
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(o.namespace))
	podInformer := factory.Core().V1().Pods()

	reconciler := reconcilers[o.reconciler](reconcilerDeps{client: client, pods: podInformer.Lister()})
	controller, err := NewController(ctx, podInformer.Informer(), reconciler, o.maxRetries)
	if err != nil {
		return err
	}

	logger.Info("Starting", "reconciler", o.reconciler, "namespace", o.namespace, "workers", o.workers,
		"maxRetries", o.maxRetries, "server", config.Host)
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	controller.Run(ctx, o.workers)
	return nil
}

// serveMetrics serves, on addr until stop is called, /metrics (everything
// registered in component-base's legacyregistry, in Prometheus' text format) and
// /debug/pprof/ (the runtime's profiles: go tool pprof reads them). It fails at
// once when addr cannot be listened on. sample-controller's main.go serves the
// same; kube-controller-manager serves both on its secure port (compare with
// NewBaseHandler in k8s.io/controller-manager/app/serve.go).
func serveMetrics(logger klog.Logger, addr string) (stop func(), err error) {
	// A mux of our own: importing net/http/pprof also registers its handlers on
	// http.DefaultServeMux, which this program never serves.
	mux := http.NewServeMux()
	mux.Handle("/metrics", legacyregistry.Handler())
	mux.HandleFunc("/debug/pprof/", httppprof.Index) // the index, and /debug/pprof/<name> for each profile
	mux.HandleFunc("/debug/pprof/cmdline", httppprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", httppprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", httppprof.Trace)

	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-bind-address: %w", err)
	}
	// No write timeout: a CPU profile answers only after its 30 s.
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := server.Serve(listener); !errors.Is(err, http.ErrServerClosed) {
			logger.Error(err, "The metrics endpoint stopped")
		}
	}()
	logger.Info("Serving metrics and profiles", "metrics", "http://"+listener.Addr().String()+"/metrics",
		"pprof", "http://"+listener.Addr().String()+"/debug/pprof/")
	return func() { _ = server.Close() }, nil
}

// restConfig loads the client configuration the way kubectl does: --kubeconfig if
// given, else $KUBECONFIG, else ~/.kube/config, else the in-cluster ServiceAccount.
func restConfig(kubeconfig string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	config, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig (set --kubeconfig or KUBECONFIG; 'make env' at the repo root prints the kit's): %w", err)
	}
	return config, nil
}

// Controller is the plumbing of the loop: it turns informer events (about Pods,
// here) into namespace/name keys on a rate-limited workqueue and runs workers that hand each key to a
// Reconciler, retrying failures with backoff. It mirrors the Controller of
// client-go's examples/workqueue/main.go.
type Controller struct {
	reconciler Reconciler
	queue      workqueue.TypedRateLimitingInterface[string]
	// handlerSynced reports whether our event handlers have seen the informer's
	// initial list.
	handlerSynced cache.InformerSynced
	maxRetries    int
}

// NewController registers the event handlers on informer and returns a Controller
// that passes the key of every object the informer sees to reconciler. A key whose
// reconcile fails is retried with per-key exponential backoff up to maxRetries
// times, then dropped until the object's next event. Nothing here is specific to
// Pods: give it another informer (and a Reconciler that reads that kind) and it runs
// the same loop. It fails only when the informer has already been stopped.
func NewController(ctx context.Context, informer cache.SharedInformer, reconciler Reconciler, maxRetries int) (*Controller, error) {
	c := &Controller{
		reconciler: reconciler,
		maxRetries: maxRetries,
		// The default controller rate limiter retries a key after 5ms, 10ms, 20ms, ...
		// (capped at 1000s), and all keys together at 10 per second with bursts of 100.
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: ControllerName},
		),
	}
	logger := klog.FromContext(ctx)
	registration, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueue(logger, "add", obj) },
		UpdateFunc: func(_, newObj any) { c.enqueue(logger, "update", newObj) },
		DeleteFunc: func(obj any) { c.onDelete(logger, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding event handlers to the informer: %w", err)
	}
	c.handlerSynced = registration.HasSynced
	return c, nil
}

// enqueue adds the namespace/name key of a Pod to the workqueue. The queue holds
// keys, not objects: the worker reads the newest state from the informer's cache, and
// ten events for one Pod waiting in the queue collapse into one reconcile.
func (c *Controller) enqueue(logger klog.Logger, event string, obj any) {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(logger, err, "Cannot compute the key of an object", "event", event)
		return
	}
	logger.V(4).Info("Enqueued", "event", event, "key", key)
	c.queue.Add(key)
}

// onDelete enqueues the key of a deleted Pod. When the informer missed the delete
// itself (its watch broke and a relist found the Pod gone) it hands over a
// cache.DeletedFinalStateUnknown tombstone instead of a Pod; the tombstone carries
// the key, so the Reconciler still learns that the Pod is gone.
func (c *Controller) onDelete(logger klog.Logger, obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		logger.V(4).Info("Enqueued", "event", "delete (tombstone)", "key", tombstone.Key)
		c.queue.Add(tombstone.Key)
		return
	}
	c.enqueue(logger, "delete", obj)
}

// Run waits for the informer's cache to sync, starts workers and blocks until ctx is
// cancelled. It then stops handing out keys and returns once every reconcile that
// was already running has finished. Start the informer before calling Run. A ctx
// cancelled before the cache synced is a clean stop too: no worker had started.
func (c *Controller) Run(ctx context.Context, workers int) {
	logger := klog.FromContext(ctx)

	// Workers read from the cache; before the first full list a Pod missing from it
	// might exist, and a Reconciler would act on a wrong picture of the world. The
	// wait ends early only at a shutdown (client-go then logs "Unable to sync caches").
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.handlerSynced) {
		c.queue.ShutDown()
		logger.Info("Shut down before the informer cache synced")
		return
	}

	// Reconciles get a context the shutdown signal does not cancel, so a write that
	// has started can finish instead of failing half-way.
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
	start := time.Now()
	err := c.reconciler.Reconcile(ctx, key)
	observeReconcile(time.Since(start), err)
	c.handleResult(ctx, key, err)
	return true
}

// The reconcile metrics, named and labelled as controller-runtime names them
// (pkg/internal/controller/metrics/metrics.go there), so that one query reads
// all three tiers. sample-controller defines the same two.
var (
	reconcileTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Name: "controller_runtime_reconcile_total",
		Help: "Reconcile calls per controller and result (success or error).",
	}, []string{"controller", "result"})
	reconcileTime = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Name:    "controller_runtime_reconcile_time_seconds",
		Help:    "How long one Reconcile call takes, in seconds.",
		Buckets: metrics.DefBuckets,
	}, []string{"controller"})
)

func init() {
	legacyregistry.MustRegister(reconcileTotal, reconcileTime)
}

// observeReconcile counts one Reconcile call by its result and records how long
// it took.
func observeReconcile(took time.Duration, err error) {
	result := "success"
	if err != nil {
		result = "error"
	}
	reconcileTotal.WithLabelValues(ControllerName, result).Inc()
	reconcileTime.WithLabelValues(ControllerName).Observe(took.Seconds())
}

// handleResult is the retry policy. Success resets the key's backoff; a failure is
// retried after a growing delay until maxRetries retries have failed too, and then
// the key is dropped until the Pod changes again.
func (c *Controller) handleResult(ctx context.Context, key string, err error) {
	logger := klog.FromContext(ctx)
	if err == nil {
		c.queue.Forget(key)
		return
	}
	retries := c.queue.NumRequeues(key)
	if retries < c.maxRetries {
		logger.Error(err, "Reconcile failed, will retry with backoff", "key", key, "retry", retries+1, "maxRetries", c.maxRetries)
		c.queue.AddRateLimited(key)
		return
	}
	c.queue.Forget(key)
	logger.Error(err, "Reconcile failed, dropping the key until its next event", "key", key, "attempts", retries+1)
}

// Reconciler makes the cluster match what one Pod asks for. It receives a
// namespace/name key, not an object or an event: it reads the current state itself,
// so it acts on the newest state however many events led to the call (it is
// level-triggered). It returns nil when the work is done, also when the Pod no
// longer exists, and an error to have the key retried with backoff. The workqueue
// never gives one key to two workers at once.
type Reconciler interface {
	Reconcile(ctx context.Context, key string) error
}

var (
	_ Reconciler = &StubReconciler{}
	_ Reconciler = &PhaseLabelReconciler{}
)

// reconcilerDeps is what a Reconciler may use: the client for writes and the
// lister for reads from the informer's cache.
type reconcilerDeps struct {
	client kubernetes.Interface
	pods   corelisters.PodLister
}

// reconcilers maps each --reconciler value to the Reconciler it runs, and is the
// one place that names them: parseFlags accepts exactly these keys and run builds
// the chosen one. To try your own, add an entry here.
var reconcilers = map[string]func(reconcilerDeps) Reconciler{
	"reference": func(d reconcilerDeps) Reconciler {
		return &PhaseLabelReconciler{Client: d.client, Pods: d.pods}
	},
	"stub": func(d reconcilerDeps) Reconciler {
		return &StubReconciler{Pods: d.pods}
	},
}

// reconcilerNames returns the keys of reconcilers, sorted.
func reconcilerNames() []string {
	return slices.Sorted(maps.Keys(reconcilers))
}

// StubReconciler only logs what it sees for each key: the learner's starting point.
// Its first step (read the Pod; gone is no error) is PhaseLabelReconciler's, line
// for line, on purpose: a copy of the stub starts where the reference starts.
type StubReconciler struct {
	// Pods reads Pods from the informer's cache.
	Pods corelisters.PodLister
}

// Reconcile logs whether the Pod exists and, if so, its phase. It fails only on a
// malformed key or a cache error.
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

// PhaseLabelReconciler is the reference Reconciler: it keeps the PhaseLabel on every
// Pod that is not being deleted equal to the Pod's phase, so the loop visibly closes. Its own write causes
// another update event; that reconcile finds the label right and writes nothing.
// It needs RBAC to get, list, watch and patch Pods.
type PhaseLabelReconciler struct {
	// Client writes to the API server.
	Client kubernetes.Interface
	// Pods reads Pods from the informer's cache.
	Pods corelisters.PodLister
}

// Reconcile patches the PhaseLabel of one Pod when it differs from the phase, and
// does nothing when it matches or the Pod is gone or being deleted. It returns an error when the key
// is malformed or the patch fails for another reason than the Pod being gone.
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

	// 2. A Pod that is going away gets no more writes. Once deletionTimestamp is
	// set (kubectl delete, or its namespace being deleted), a label on it helps no
	// one, and the patch would race the deletion.
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
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"labels": map[string]string{PhaseLabel: phase}},
	})
	if err != nil {
		return fmt.Errorf("encoding the label patch: %w", err)
	}
	_, err = r.Client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: ControllerName})
	if apierrors.IsNotFound(err) {
		// Deleted between the cache read and the patch: also a normal deletion.
		logger.Info("Pod is gone, nothing to do", "pod", klog.KObj(pod))
		return nil
	}
	if err != nil {
		return fmt.Errorf("labelling Pod %s with %s=%s: %w", key, PhaseLabel, phase, err)
	}
	logger.Info("Labelled Pod with its phase", "pod", klog.KObj(pod), "phase", phase)
	return nil
}
