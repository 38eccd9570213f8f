// Package controller is sample-controller's loop: the plumbing (informers, a
// workqueue, workers, retries) in this file, and the Reconciler it calls for each
// Foo in reconciler.go (the seam), reference.go (what the kit ships) and stub.go
// (the learner's starting point).
//
// Compare with k8s.io/sample-controller/controller.go, which keeps plumbing and
// sync logic in one type.
//
// The queue reports client-go's workqueue metrics under the name "foos" once
// main has installed a MetricsProvider, and every reconcile is counted and timed
// under controller-runtime's metric names (reconcileTotal, reconcileTime).
package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	samplev1alpha1 "github.com/controller-kit/controller-kit/sample-controller/pkg/apis/samplecontroller/v1alpha1"
	fooinformers "github.com/controller-kit/controller-kit/sample-controller/pkg/generated/informers/externalversions/samplecontroller/v1alpha1"
	foolisters "github.com/controller-kit/controller-kit/sample-controller/pkg/generated/listers/samplecontroller/v1alpha1"
)

// ControllerName is the controller's name: its FieldManager on every write, the source of
// its events, the name of its leader-election Lease and the controller label of
// its reconcile metrics.
const ControllerName = "sample-controller"

// QueueName is the name of the Controller's workqueue: the label "name" of its
// workqueue_* metrics.
const QueueName = "foos"

// The reconcile metrics, named and labelled as controller-runtime names them
// (pkg/internal/controller/metrics/metrics.go there), so that one query reads
// all three tiers; workqueue-example/metrics.go defines the same two.
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

// Controller turns informer events into Foo keys on a rate-limited workqueue and
// runs workers that hand each key to a Reconciler. It knows nothing about what
// reconciling a Foo means.
type Controller struct {
	reconciler Reconciler
	// queue holds the namespace/name of each Foo that needs a reconcile. A key
	// added many times before a worker takes it is reconciled once.
	queue  workqueue.TypedRateLimitingInterface[cache.ObjectName]
	synced []cache.InformerSynced
	// foos tells the Deployment handler whether a Deployment's owner still exists.
	foos foolisters.FooLister
	// fooIndexer is the Foo informer's cache, indexed by DeploymentNameIndex, so
	// the Deployment handler finds the Foos that name a Deployment even when the
	// Deployment has lost its owner reference.
	fooIndexer cache.Indexer
}

// DefaultMaxRetryDelay is --max-retry-delay's default: the end of an outage is
// noticed within 30 seconds.
const DefaultMaxRetryDelay = 30 * time.Second

// NewRetryRateLimiter is the retry policy of the Foo queue: a failed key comes
// back after 5ms, 10ms, 20ms ... and never more than maxRetryDelay after its
// last failure, however long it keeps failing, so the end of an outage is
// noticed within maxRetryDelay (the --max-retry-delay flag; 0 means
// DefaultMaxRetryDelay). A
// key is never dropped: it leaves the queue when Reconcile succeeds, which it
// does for a Foo that is gone. Compare with workqueue.DefaultTypedControllerRateLimiter,
// which kube-controller-manager's controllers use: its backoff doubles up to
// 1000s, and its bucket for all keys (10 retries a second, bursts of 100) would
// hold the last of 1000 failing Foos for some 90s, past any bound; the client's
// --kube-api-qps limits the load instead.
func NewRetryRateLimiter(maxRetryDelay time.Duration) workqueue.TypedRateLimiter[cache.ObjectName] {
	if maxRetryDelay <= 0 {
		maxRetryDelay = DefaultMaxRetryDelay
	}
	return workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](5*time.Millisecond, maxRetryDelay)
}

// DeploymentNameIndex names the Foo informer's index from "namespace/deploymentName"
// to the Foos whose spec.deploymentName names that Deployment. Compare with the
// indexers that kube-controller-manager's controllers add with AddIndexers, for
// example the Pod controller-ref index in pkg/controller/controller_utils.go.
const DeploymentNameIndex = "spec.deploymentName"

// deploymentNameIndexFunc is DeploymentNameIndex's function: one value per Foo,
// its namespace and spec.deploymentName.
func deploymentNameIndexFunc(obj interface{}) ([]string, error) {
	foo, ok := obj.(*samplev1alpha1.Foo)
	if !ok {
		return nil, fmt.Errorf("indexing %T by spec.deploymentName: not a Foo", obj)
	}
	return []string{foo.Namespace + "/" + foo.Spec.DeploymentName}, nil
}

// New returns a Controller that reconciles Foos with r and retries a failed Foo
// with a backoff that grows to maxRetryDelay at most (see NewRetryRateLimiter).
// It registers event handlers on both informers, so create it before starting
// the informer factories. It returns an error only if a handler cannot be
// registered.
func New(ctx context.Context, foos fooinformers.FooInformer, deployments appsinformers.DeploymentInformer, r Reconciler, maxRetryDelay time.Duration) (*Controller, error) {
	c := &Controller{
		reconciler: r,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			NewRetryRateLimiter(maxRetryDelay),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: QueueName},
		),
		synced:     []cache.InformerSynced{foos.Informer().HasSynced, deployments.Informer().HasSynced},
		foos:       foos.Lister(),
		fooIndexer: foos.Informer().GetIndexer(),
	}
	logger := klog.FromContext(ctx)

	if err := foos.Informer().AddIndexers(cache.Indexers{DeploymentNameIndex: deploymentNameIndexFunc}); err != nil {
		return nil, fmt.Errorf("adding the Foo index %s: %w", DeploymentNameIndex, err)
	}

	// Every change to a Foo, including its deletion, means "look at this Foo again".
	if _, err := foos.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueFoo,
		UpdateFunc: func(old, cur interface{}) {
			c.enqueueFoo(cur)
		},
		DeleteFunc: c.enqueueFoo,
	}); err != nil {
		return nil, fmt.Errorf("adding the Foo event handler: %w", err)
	}

	// A change to a Deployment means "look at the Foos it concerns again", so
	// drift (kubectl scale, a rollout, a deletion, a removed owner reference) is
	// corrected or reported without polling.
	if _, err := deployments.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) { c.enqueueFoosOf(logger, obj, true) },
		UpdateFunc: func(old, cur interface{}) {
			oldD, curD := old.(*appsv1.Deployment), cur.(*appsv1.Deployment)
			// A periodic resync redelivers objects that did not change; skip them.
			if oldD.ResourceVersion == curD.ResourceVersion {
				return
			}
			// A Foo that does not control the Deployment only cares whether it
			// exists and who controls it, not about its rollout's status.
			naming := oldD.Generation != curD.Generation || !equality.Semantic.DeepEqual(oldD.OwnerReferences, curD.OwnerReferences)
			c.enqueueFoosOf(logger, cur, naming)
		},
		DeleteFunc: func(obj interface{}) { c.enqueueFoosOf(logger, obj, true) },
	}); err != nil {
		return nil, fmt.Errorf("adding the Deployment event handler: %w", err)
	}
	return c, nil
}

// Run waits for the informers' caches to fill, starts the given number of
// workers and blocks until ctx is cancelled. It then shuts the queue down and
// returns once every worker has finished the key it was working on. A ctx
// cancelled before the caches synced is a clean stop too: no worker has started.
// Compare with Run in k8s.io/sample-controller's controller.go, which returns an
// error in that case.
func (c *Controller) Run(ctx context.Context, workers int) {
	defer utilruntime.HandleCrashWithContext(ctx)
	logger := klog.FromContext(ctx)

	logger.Info("Waiting for informer caches to sync")
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced...) {
		// The wait ends early only at a shutdown (client-go then logs "Unable to
		// sync caches"). No worker has started, so there is nothing to finish:
		// a SIGTERM during startup is as clean a stop as any other.
		c.queue.ShutDown()
		logger.Info("Shut down before the informer caches synced")
		return
	}

	logger.Info("Starting workers", "count", workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { wait.UntilWithContext(ctx, c.runWorker, time.Second) })
	}

	<-ctx.Done()
	logger.Info("Shutting down: letting workers finish their current Foo")
	c.queue.ShutDown()
	wg.Wait()
	logger.Info("Workers stopped")
}

// runWorker processes keys until the queue shuts down.
func (c *Controller) runWorker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

// processNextWorkItem reconciles one key and decides whether it comes back:
// Forget on success (resets its backoff), AddRateLimited on error. It returns
// false when the queue has shut down.
func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	// Done tells the queue this worker is finished with the key, so another
	// worker may take it if it was added again meanwhile.
	defer c.queue.Done(key)

	logger := klog.LoggerWithValues(klog.FromContext(ctx), "foo", key.String())
	observe := startReconcile()
	err := c.reconciler.Reconcile(klog.NewContext(ctx, logger), key)
	observe(err)
	if err == nil {
		c.queue.Forget(key)
		logger.V(4).Info("Reconciled")
		return true
	}
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		// The cache was behind the API server, typically because this
		// controller has just written the object and the informer has not
		// seen the write yet. Expected and harmless: retry quietly.
		logger.V(2).Info("Cache was stale; retrying", "err", err)
	} else {
		logger.Error(err, "Reconcile failed; retrying with backoff", "retries", c.queue.NumRequeues(key))
	}
	c.queue.AddRateLimited(key)
	return true
}

// startReconcile starts the clock of one Reconcile call. Call the function it returns
// with the call's error: it counts the call by its result (success or error) and
// records how long it took, in seconds. workqueue-example/metrics.go has the same.
func startReconcile() (observe func(err error)) {
	start := time.Now()
	return func(err error) {
		result := "success"
		if err != nil {
			result = "error"
		}
		reconcileTotal.WithLabelValues(ControllerName, result).Inc()
		reconcileTime.WithLabelValues(ControllerName).Observe(time.Since(start).Seconds())
	}
}

// enqueueFoo adds a Foo's namespace/name to the queue. The object may be a
// cache.DeletedFinalStateUnknown tombstone when the informer missed the delete.
func (c *Controller) enqueueFoo(obj interface{}) {
	key, err := cache.DeletionHandlingObjectToName(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

// enqueueFoosOf adds to the queue the Foos a Deployment concerns: the Foo that
// controls it (its owner reference) and, when naming is true, every Foo whose
// spec.deploymentName names it. The second kind matters when the Deployment is
// not, or no longer, this controller's: someone removed its owner reference, or
// it was never ours. Those Foos must hear of it being created, changed or
// deleted, so that they report the conflict at once and create their own
// Deployment as soon as the foreign one is gone; the caller passes naming=false
// for a change to the Deployment's status alone, which concerns only its
// controller. A Deployment whose controlling Foo is gone is not queued for it:
// the garbage collector is deleting it.
func (c *Controller) enqueueFoosOf(logger klog.Logger, obj interface{}, naming bool) {
	object, ok := obj.(metav1.Object)
	if !ok {
		// A deletion the informer did not see happen arrives as a tombstone
		// holding the last known state.
		tombstone, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			utilruntime.HandleError(fmt.Errorf("unexpected object of type %T in the Deployment handler", obj))
			return
		}
		object, ok = tombstone.Obj.(metav1.Object)
		if !ok {
			utilruntime.HandleError(fmt.Errorf("unexpected object of type %T in a Deployment tombstone", tombstone.Obj))
			return
		}
	}

	// The controller: a Foo of the same name but another UID is queued too: it
	// may be waiting for this Deployment of its deleted predecessor to be
	// garbage-collected.
	if ref := metav1.GetControllerOf(object); ref != nil && ref.Kind == "Foo" && ref.APIVersion == samplev1alpha1.SchemeGroupVersion.String() {
		if foo, err := c.foos.Foos(object.GetNamespace()).Get(ref.Name); err == nil {
			logger.V(4).Info("Deployment changed; enqueueing its Foo", "deployment", klog.KObj(object), "foo", klog.KObj(foo))
			c.queue.Add(cache.ObjectName{Namespace: foo.Namespace, Name: foo.Name})
		} else {
			logger.V(4).Info("Ignoring a Deployment whose Foo is gone", "deployment", klog.KObj(object), "foo", ref.Name)
		}
	}

	// The Foos that name it, owner or not. Queueing the controller twice is
	// harmless: the queue holds each key once.
	if !naming {
		return
	}
	foos, err := c.fooIndexer.ByIndex(DeploymentNameIndex, object.GetNamespace()+"/"+object.GetName())
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("looking up the Foos that name Deployment %s/%s: %w", object.GetNamespace(), object.GetName(), err))
		return
	}
	for _, obj := range foos {
		foo := obj.(*samplev1alpha1.Foo)
		logger.V(4).Info("Deployment changed; enqueueing a Foo that names it", "deployment", klog.KObj(object), "foo", klog.KObj(foo))
		c.queue.Add(cache.ObjectName{Namespace: foo.Namespace, Name: foo.Name})
	}
}
