/*
Copyright 2026 The controller-kit Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package controller holds the Guestbook controller: the reference Reconciler
// (GuestbookReconciler), the stub a learner starts from (StubReconciler), and the
// plumbing both share (NewControllerBuilder).
package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
)

// ControllerName names the operator to the API server: the field manager of its
// writes, the reporting controller of its events and the managed-by label of its
// children. workqueue-example's ControllerName and sample-controller's
// controller.ControllerName are the same idea in the other tiers.
const ControllerName = "guestbook-operator"

// Event reasons the GuestbookReconciler records on Guestbooks. Normal events mark
// a real change; Warning events something a person has to look at.
const (
	// ReasonCreated and ReasonUpdated: a child Deployment or Service was created,
	// or updated to match the spec.
	ReasonCreated = "Created"
	ReasonUpdated = "Updated"
	// ReasonAvailable and ReasonUnavailable: the Available condition turned True
	// or False.
	ReasonAvailable   = "Available"
	ReasonUnavailable = "Unavailable"
	// ReasonRecovered: the Degraded condition turned back to False.
	ReasonRecovered = "Recovered"
)

// ReasonChildGoingAway is the reason of a True Progressing condition while a
// child's name is still held by an object that is being deleted, such as the
// child of a deleted Guestbook of the same name (see goingAway): the Guestbook
// waits for it, and is not degraded.
const ReasonChildGoingAway = "ChildGoingAway"

// Reasons of a True Degraded condition, recorded as the reason of the Warning
// event that reports it too.
const (
	// ReasonInvalidName: the Guestbook's name cannot name its children.
	ReasonInvalidName = "InvalidName"
	// ReasonInvalidSpec: the spec cannot be acted on (stored before the CRD
	// schema or the webhook refused it).
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonChildConflict: a child's name is taken by an object this Guestbook
	// does not control (someone else's, or one whose owner reference was removed).
	ReasonChildConflict = "ChildConflict"
	// ReasonChildFailed: a child Deployment's own conditions say it has
	// stopped making progress (ProgressDeadlineExceeded) or cannot create its
	// Pods (ReplicaFailure); the message names the Deployment and the cause.
	// The Guestbook recovers by itself when the Deployment does.
	ReasonChildFailed = "ChildFailed"
	// ReasonReconcileError: an API call failed; the reconcile is retried.
	ReasonReconcileError = "ReconcileError"
)

// FinalizerName is the finalizer the Reconciler puts on every Guestbook, so that it
// can remove the Guestbook's directory entry before the API server lets the object
// go. Owner references cannot do that: the entry lives in another namespace.
const FinalizerName = "webapp.controller-kit.dev/directory-entry"

// GuestbookReconciler is the reference Reconciler: it keeps a Guestbook's Redis
// leader, Redis followers and frontend (a Deployment and a Service each) in the
// shape the spec asks for, registers the Guestbook in the Directory, and reports
// what it sees in status conditions. Compare with controller-runtime's
// examples/builtins/controller.go and with lesson 2's FooReconciler.Reconcile in
// sample-controller/pkg/controller/reference.go.
type GuestbookReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	client.Client
	// Scheme maps Go types to API kinds, for owner references.
	Scheme *runtime.Scheme
	// Recorder records Kubernetes events on Guestbooks.
	Recorder events.EventRecorder
	// Directory is the shared ConfigMap every Guestbook is registered in.
	Directory *Directory
	// MaxRetryDelay is the longest wait between two retries of a failed
	// Guestbook (--max-retry-delay); 0 means DefaultMaxRetryDelay.
	MaxRetryDelay time.Duration
}

var _ reconcile.Reconciler = &GuestbookReconciler{}

// The RBAC markers below are all the permissions the operator has: `make generate`
// turns them into config/rbac/role.yaml. The e2e suite runs the manager with
// exactly that role, so a missing verb fails a test.

// +kubebuilder:rbac:groups=webapp.controller-kit.dev,resources=guestbooks,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=webapp.controller-kit.dev,resources=guestbooks/status,verbs=update
// +kubebuilder:rbac:groups=webapp.controller-kit.dev,resources=guestbooks/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups="",namespace=kubebuilder-guestbook-system,resources=configmaps,verbs=get;list;watch;create;update

// Reconcile brings the Guestbook named by req to its spec. It is level-triggered:
// it looks at the whole world each time and writes only what differs, so running
// it twice in a row makes no second write. An error makes the controller retry
// with exponential backoff.
func (r *GuestbookReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)

	// 1. Read the Guestbook from the cache. Not found means it was deleted: its
	// children go by garbage collection, and its directory entry went with the
	// finalizer, unless someone removed the finalizer first (by hand, or with
	// kubectl replace and a manifest without it): then the entry is dropped
	// here. The operator's own record is kept true against the Guestbooks that
	// exist, not only cleaned up on the way out.
	var gb webappv1.Guestbook
	if err := r.Get(ctx, req.NamespacedName, &gb); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("reading Guestbook: %w", err)
		}
		dropped, err := r.Directory.DropGone(ctx, req.NamespacedName)
		if err != nil {
			// Not ignoreConflict: no later event would bring this key back.
			return ctrl.Result{}, fmt.Errorf("removing the directory entry of Guestbook %s, which is gone: %w", req.NamespacedName, err)
		}
		if dropped {
			log.Info("Guestbook is gone without its finalizer; removed its directory entry", "directory", r.Directory.Key)
			return ctrl.Result{}, nil
		}
		log.Info("Guestbook is gone, nothing to do")
		return ctrl.Result{}, nil
	}

	// 2. Being deleted: clean up what owner references cannot, then let it go.
	// A Guestbook that is going away gets no new children, updates or events,
	// even when one of its children was deleted meanwhile.
	if !gb.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, &gb)
	}

	// 3. The finalizer goes on before anything is registered that it must clean up.
	if controllerutil.AddFinalizer(&gb, FinalizerName) {
		if err := r.Update(ctx, &gb); err != nil {
			return ignoreConflict(ctx, fmt.Errorf("adding finalizer: %w", err))
		}
	}
	oldStatus := gb.Status.DeepCopy()

	// 4. A name or spec the children cannot carry (the schema let it through,
	// the webhook was off): say so once and wait for the user. A new spec is a
	// new event; a name never changes, so only a new Guestbook fixes that.
	if errs := webappv1.ValidateName(gb.Name); len(errs) > 0 {
		setBlocked(&gb, ReasonInvalidName, errs.ToAggregate().Error())
		return ctrl.Result{}, r.updateStatus(ctx, &gb, oldStatus)
	}
	if errs := webappv1.ValidateSpec(&gb.Spec); len(errs) > 0 {
		setBlocked(&gb, ReasonInvalidSpec, errs.ToAggregate().Error())
		return ctrl.Result{}, r.updateStatus(ctx, &gb, oldStatus)
	}

	// 5. Create or update the children, leader first: the followers and the
	// frontend need its Service.
	deployments, err := r.ensureChildren(ctx, &gb)
	var notOwned *notOwnedError
	var waiting *goingAwayError
	switch {
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		// The namespace is being deleted, the Guestbook with it: the refusal
		// is the end of the work, not an error to retry or to report.
		log.Info("Namespace is terminating, nothing more to create")
		return ctrl.Result{}, nil
	case errors.As(err, &waiting):
		// The child's name is held by an object on its way out, most likely the
		// child of a Guestbook of the same name that was deleted a moment ago.
		// Not a conflict: no Warning, no Degraded. Its deletion (Owns, or the
		// watch by name) queues this Guestbook, which then creates its own.
		log.Info("Waiting for an object that is going away to free a child's name", "child", waiting.kind+" "+waiting.name)
		forgetComponent(&gb, waiting.kind, waiting.name)
		setWaiting(&gb, ReasonChildGoingAway, waiting.Error())
		return ctrl.Result{}, r.updateStatus(ctx, &gb, oldStatus)
	case errors.As(err, &notOwned):
		// A person has to resolve this; the watch by name (NewControllerBuilder)
		// brings the change that does. Meanwhile the status claims no replicas
		// of a Deployment the Guestbook does not control.
		forgetComponent(&gb, notOwned.kind, notOwned.name)
		setBlocked(&gb, ReasonChildConflict, notOwned.Error())
		return ctrl.Result{}, r.updateStatus(ctx, &gb, oldStatus)
	case apierrors.IsConflict(err):
		// A child changed between the cache read and the update (the
		// deployment controller writes its status all the time): nothing is
		// wrong, and the child's change queues the Guestbook again (Owns).
		return ignoreConflict(ctx, fmt.Errorf("updating a child: %w", err))
	case err != nil:
		setBlocked(&gb, ReasonReconcileError, err.Error())
		return ctrl.Result{}, errors.Join(err, r.updateStatus(ctx, &gb, oldStatus))
	}

	// 6. Register the Guestbook in the directory (the finalizer removes it).
	if err := r.Directory.Register(ctx, &gb); err != nil {
		return ignoreConflict(ctx, fmt.Errorf("registering in the directory: %w", err))
	}

	// 7. Report what the Deployments say, if that differs from the last report.
	setObserved(&gb, deployments)
	return ctrl.Result{}, r.updateStatus(ctx, &gb, oldStatus)
}

// finalize removes the Guestbook's directory entry and then the finalizer. The
// children need nothing: the garbage collector deletes them through their owner
// references, and one a user already deleted is simply done. It never adds the
// finalizer back.
func (r *GuestbookReconciler) finalize(ctx context.Context, gb *webappv1.Guestbook) error {
	if !controllerutil.ContainsFinalizer(gb, FinalizerName) {
		return nil
	}
	if err := r.Directory.Unregister(ctx, gb); err != nil {
		return fmt.Errorf("removing the directory entry: %w", err)
	}
	controllerutil.RemoveFinalizer(gb, FinalizerName)
	if err := r.Update(ctx, gb); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return ignoreConflictErr(ctx, fmt.Errorf("removing finalizer: %w", err))
	}
	logf.FromContext(ctx).Info("Removed the directory entry and the finalizer")
	return nil
}

// SetupWithManager registers the reference Reconciler with the manager: the
// shared plumbing, plus a watch on the directory ConfigMap it generates, so a
// directory deleted or edited by hand is repaired at once rather than at the
// next resync (Directory.Repairs; the manager's cache holds only that one
// ConfigMap, see Directory.CacheOptions).
func (r *GuestbookReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return r.controllerBuilder(mgr).Complete(r)
}

// controllerBuilder is NewControllerBuilder plus the watch on the directory.
func (r *GuestbookReconciler) controllerBuilder(mgr ctrl.Manager) *ctrl.Builder {
	return NewControllerBuilder(mgr, r.MaxRetryDelay).
		Watches(&corev1.ConfigMap{}, r.Directory.Repairs(mgr.GetCache()))
}

// NewControllerBuilder is the plumbing every Guestbook Reconciler shares: a
// controller named "guestbook" that reconciles a Guestbook when it changes (For),
// when one of the Deployments or Services it controls changes (Owns: the event
// is mapped to the owner's key through the controller reference), and when a
// Deployment or Service carrying one of its children's names but not its
// controller reference changes (Watches: mapped by name, see byChildName). A
// Guestbook whose Reconcile fails is retried with NewRetryRateLimiter's backoff,
// bounded by maxRetryDelay (0: DefaultMaxRetryDelay).
func NewControllerBuilder(mgr ctrl.Manager, maxRetryDelay time.Duration) *ctrl.Builder {
	byName := handler.EnqueueRequestsFromMapFunc(byChildName(mgr.GetCache()))
	return ctrl.NewControllerManagedBy(mgr).
		For(&webappv1.Guestbook{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Watches(&appsv1.Deployment{}, byName).
		Watches(&corev1.Service{}, byName).
		// Options left zero (the workers, the cache sync timeout) are the
		// manager's (config.Controller in cmd/main.go).
		WithOptions(controller.Options{RateLimiter: NewRetryRateLimiter(maxRetryDelay)}).
		Named("guestbook")
}

// DefaultMaxRetryDelay is --max-retry-delay's default: the end of an outage is
// noticed within 30 seconds.
const DefaultMaxRetryDelay = 30 * time.Second

// NewRetryRateLimiter is the retry policy of the Guestbook controller's queue: a
// Guestbook whose Reconcile fails comes back after 5ms, 10ms, 20ms ... and never
// more than maxRetryDelay (0: DefaultMaxRetryDelay) after its last failure,
// however long it keeps failing. It is never dropped: a Guestbook leaves the
// queue when Reconcile succeeds, which it does for one that is gone.
// controller-runtime's default (controller.Options.RateLimiter, as
// kube-controller-manager's workqueue.DefaultTypedControllerRateLimiter) lets the
// backoff double up to 1000s, and its bucket for all keys (10 retries a second,
// bursts of 100) would hold the last of 1000 failing Guestbooks for some 90s; the
// client's --kube-api-qps limits the load instead.
func NewRetryRateLimiter(maxRetryDelay time.Duration) workqueue.TypedRateLimiter[reconcile.Request] {
	if maxRetryDelay <= 0 {
		maxRetryDelay = DefaultMaxRetryDelay
	}
	return workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, maxRetryDelay)
}

// byChildName maps a Deployment or Service that no Guestbook controls to the
// Guestbook whose child's name it carries, if that Guestbook exists. Owns cannot
// see such an object: someone removed its owner reference, or it was there
// before the Guestbook. The Guestbook reports the conflict (ChildConflict), and
// through this mapping it sees each change to the object, including the delete
// that resolves the conflict. The kit never adopts such an object: it may be
// someone else's, and taking it over would hide that.
func byChildName(guestbooks client.Reader) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		if ref := metav1.GetControllerOfNoCopy(obj); ref != nil && ref.Kind == "Guestbook" &&
			ref.APIVersion == webappv1.GroupVersion.String() {
			return nil // Owns queues it
		}
		name, ok := guestbookNameOf(obj.GetName())
		if !ok {
			return nil
		}
		key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}
		if err := guestbooks.Get(ctx, key, &webappv1.Guestbook{}); err != nil {
			return nil // no such Guestbook: the name is a coincidence
		}
		return []reconcile.Request{{NamespacedName: key}}
	}
}

// ignoreConflict turns a write conflict into success: a conflict means the
// object written (the Guestbook, a child, the directory) changed after it was
// read, and that change queues the Guestbook again anyway. It is not a failure:
// no error, no Warning event, no Degraded condition.
func ignoreConflict(ctx context.Context, err error) (ctrl.Result, error) {
	return ctrl.Result{}, ignoreConflictErr(ctx, err)
}

// ignoreConflictErr is ignoreConflict for functions that return only an error.
func ignoreConflictErr(ctx context.Context, err error) error {
	if apierrors.IsConflict(err) {
		logf.FromContext(ctx).V(1).Info("Write conflict: the object changed since it was read; the Guestbook is queued again", "error", err.Error())
		return nil
	}
	return err
}
