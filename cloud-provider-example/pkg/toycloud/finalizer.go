package toycloud

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	servicehelper "k8s.io/cloud-provider/service/helpers"
	"k8s.io/klog/v2"
)

// ReasonRestoredFinalizer is the reason of the Normal event on a Service whose
// cleanup finalizer the toy cloud put back.
const ReasonRestoredFinalizer = "RestoredFinalizer"

// finalizerKeeper puts the service controller's cleanup finalizer
// (service.kubernetes.io/load-balancer-cleanup) back on a Service that lost it
// while the manager runs and its load balancer exists. Finalizers are removed by
// more than their owner: `kubectl replace` and tools that send whole objects
// drop every finalizer their manifest lacks. Without it, a deleted Service goes
// at once, and the controller, which has no delete handler, never asks the
// cloud to delete its load balancer. The controller itself adds the finalizer
// only when it syncs a Service: at start-up, on the changes needsUpdate
// compares, and on retries; a replace that drops nothing but the finalizer is
// none of these, so it is left off until the manager restarts or the Service
// changes.
//
// It is a small controller of its own: an informer event handler that queues
// the Service's key, and one worker that reads the Service from the cache and
// patches the finalizer back through services/status, as the controller adds
// it (servicehelper.PatchService), with a Normal event (ReasonRestoredFinalizer).
type finalizerKeeper struct {
	client   kubernetes.Interface
	services corelisters.ServiceLister
	queue    workqueue.TypedRateLimitingInterface[cache.ObjectName]
	recorder record.EventRecorder
}

// startFinalizerKeeper starts a finalizerKeeper that writes Services and
// events with client, until ctx is done; its queue stays empty until watch
// gives it the Services.
func startFinalizerKeeper(ctx context.Context, client kubernetes.Interface) *finalizerKeeper {
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	k := &finalizerKeeper{
		client: client,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](),
			workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: "toycloud-finalizer"},
		),
		recorder: broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: ProviderName}),
	}
	go func() {
		<-ctx.Done()
		k.queue.ShutDown()
		broadcaster.Shutdown()
	}()
	go k.run(ctx)
	return k
}

// watch reads Services from informer: a Service that held the finalizer and
// lost it while it still wants this cloud's load balancer is queued. (A Service
// without it at start-up is the controller's: it syncs every Service of type
// LoadBalancer then, and adds the finalizer itself.)
func (k *finalizerKeeper) watch(informer coreinformers.ServiceInformer) error {
	k.services = informer.Lister()
	_, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, cur any) {
			oldService, ok1 := old.(*corev1.Service)
			service, ok2 := cur.(*corev1.Service)
			if ok1 && ok2 && servicehelper.HasLBFinalizer(oldService) && lostFinalizer(service) {
				k.queue.Add(cache.MetaObjectToName(service))
			}
		},
	})
	return err
}

// lostFinalizer reports whether the Service should carry the cleanup finalizer
// and does not: it wants this cloud's load balancer, has one (an address in its
// status, which the controller writes only after adding the finalizer), and is
// not being deleted (no finalizer may be added then; the controller is cleaning
// up, or has, if it had the finalizer).
func lostFinalizer(s *corev1.Service) bool {
	return wantsLoadBalancer(s) && s.DeletionTimestamp == nil &&
		len(s.Status.LoadBalancer.Ingress) > 0 && !servicehelper.HasLBFinalizer(s)
}

// run processes the queue with one worker until ctx is done.
func (k *finalizerKeeper) run(ctx context.Context) {
	defer utilruntime.HandleCrash()
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		for k.processNext(ctx) {
		}
	}, time.Second)
}

// processNext restores the finalizer of the next queued Service: forgotten on
// success, queued again with the queue's backoff on an error.
func (k *finalizerKeeper) processNext(ctx context.Context) bool {
	key, quit := k.queue.Get()
	if quit {
		return false
	}
	defer k.queue.Done(key)
	if err := k.restore(ctx, key); err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Cannot put the load balancer's cleanup finalizer back; retrying", "service", key)
		k.queue.AddRateLimited(key)
		return true
	}
	k.queue.Forget(key)
	return true
}

// restore puts the finalizer back on the Service called key, if it is still
// there and still lacks it.
func (k *finalizerKeeper) restore(ctx context.Context, key cache.ObjectName) error {
	service, err := k.services.Services(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !lostFinalizer(service) {
		return nil
	}
	updated := service.DeepCopy()
	updated.Finalizers = append(updated.Finalizers, servicehelper.LoadBalancerCleanupFinalizer)
	if _, err := servicehelper.PatchService(k.client.CoreV1(), service, updated); err != nil {
		if apierrors.IsNotFound(err) {
			// Deleted meanwhile: the load balancer's address is released
			// when the next one is handed out (PoolLoadBalancer.releaseGone).
			return nil
		}
		return fmt.Errorf("patching Service %s: %w", key, err)
	}
	addresses := make([]string, 0, len(service.Status.LoadBalancer.Ingress))
	for _, in := range service.Status.LoadBalancer.Ingress {
		addresses = append(addresses, in.IP+in.Hostname)
	}
	klog.FromContext(ctx).Info("Put the load balancer's cleanup finalizer back", "service", klog.KObj(service), "finalizer", servicehelper.LoadBalancerCleanupFinalizer)
	k.recorder.Eventf(service, corev1.EventTypeNormal, ReasonRestoredFinalizer,
		"Put the finalizer %s back: it keeps the Service until its load balancer (%s) is deleted",
		servicehelper.LoadBalancerCleanupFinalizer, strings.Join(addresses, ", "))
	return nil
}
