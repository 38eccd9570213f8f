// Package controller is sample-controller's loop: the plumbing (informers, a
// workqueue, workers, retries) in this file, and the Reconciler it calls for each
// Foo in reconciler.go (the seam), reference.go (what the kit ships) and stub.go
// (the learner's starting point).
//
// Compare with k8s.io/sample-controller/controller.go, which keeps plumbing and
// sync logic in one type.
package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	samplev1alpha1 "github.com/controller-kit/controller-kit/sample-controller/pkg/apis/samplecontroller/v1alpha1"
	fooinformers "github.com/controller-kit/controller-kit/sample-controller/pkg/generated/informers/externalversions/samplecontroller/v1alpha1"
	foolisters "github.com/controller-kit/controller-kit/sample-controller/pkg/generated/listers/samplecontroller/v1alpha1"
)

// ControllerName is the controller's name: its FieldManager on every write, the source of
// its events and the name of its leader-election Lease.
const ControllerName = "sample-controller"

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
}

// New returns a Controller that reconciles Foos with r. It registers event
// handlers on both informers, so create it before starting the informer
// factories. It returns an error only if a handler cannot be registered.
func New(ctx context.Context, foos fooinformers.FooInformer, deployments appsinformers.DeploymentInformer, r Reconciler) (*Controller, error) {
	c := &Controller{
		reconciler: r,
		// Failed keys come back after 5ms, 10ms, 20ms ... up to 1000s; see
		// workqueue.DefaultTypedControllerRateLimiter.
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: "foos"},
		),
		synced: []cache.InformerSynced{foos.Informer().HasSynced, deployments.Informer().HasSynced},
		foos:   foos.Lister(),
	}
	logger := klog.FromContext(ctx)

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

	// A change to a Deployment means "look at the Foo that owns it again", so
	// drift (kubectl scale, a rollout, a deletion) is corrected without polling.
	if _, err := deployments.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) { c.enqueueOwner(logger, obj) },
		UpdateFunc: func(old, cur interface{}) {
			// A periodic resync redelivers objects that did not change; skip them.
			if old.(*appsv1.Deployment).ResourceVersion == cur.(*appsv1.Deployment).ResourceVersion {
				return
			}
			c.enqueueOwner(logger, cur)
		},
		DeleteFunc: func(obj interface{}) { c.enqueueOwner(logger, obj) },
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
	err := c.reconciler.Reconcile(klog.NewContext(ctx, logger), key)
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

// enqueueOwner adds the Foo that controls a Deployment to the queue. Deployments
// without a Foo as their controller are not this controller's business, and
// neither are those whose Foo is gone: the garbage collector is deleting them.
func (c *Controller) enqueueOwner(logger klog.Logger, obj interface{}) {
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
	ref := metav1.GetControllerOf(object)
	if ref == nil || ref.Kind != "Foo" || ref.APIVersion != samplev1alpha1.SchemeGroupVersion.String() {
		return
	}
	// A Foo of the same name but another UID is queued too: it may be waiting
	// for this Deployment of its deleted predecessor to be garbage-collected.
	foo, err := c.foos.Foos(object.GetNamespace()).Get(ref.Name)
	if err != nil {
		logger.V(4).Info("Ignoring a Deployment whose Foo is gone", "deployment", klog.KObj(object), "foo", ref.Name)
		return
	}
	logger.V(4).Info("Deployment changed; enqueueing its Foo", "deployment", klog.KObj(object), "foo", klog.KObj(foo))
	c.queue.Add(cache.ObjectName{Namespace: foo.Namespace, Name: foo.Name})
}
