package controller

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	samplev1alpha1 "github.com/controller-kit/controller-kit/sample-controller/pkg/apis/samplecontroller/v1alpha1"
	"github.com/controller-kit/controller-kit/sample-controller/pkg/generated/clientset/versioned"
	foolisters "github.com/controller-kit/controller-kit/sample-controller/pkg/generated/listers/samplecontroller/v1alpha1"
)

// Event reasons the FooReconciler records on Foos. Normal events mark a
// real change; Warning events mark something a person has to fix.
const (
	// ReasonDeploymentCreated: the Foo's Deployment was created.
	ReasonDeploymentCreated = "DeploymentCreated"
	// ReasonDeploymentScaled: the Deployment's replicas were set back to the Foo's.
	ReasonDeploymentScaled = "DeploymentScaled"
	// ReasonErrResourceExists: a Deployment with the Foo's deploymentName exists
	// and is not controlled by this Foo. The same reason as upstream.
	ReasonErrResourceExists = "ErrResourceExists"
	// ReasonInvalidSpec: the Foo's spec cannot be acted on (see validateSpec).
	ReasonInvalidSpec = "InvalidSpec"
)

// PodImage is the container image of the pods in every Deployment the
// FooReconciler creates.
const PodImage = "nginx:1.27"

// FooReconciler is the reference Reconciler, the one the kit ships: for each Foo it keeps one owned
// Deployment with the Foo's replica count and mirrors the Deployment's available
// replicas into the Foo's status. It reads only from the informers' caches and
// writes only what differs.
//
// Compare with syncHandler in k8s.io/sample-controller/controller.go.
type FooReconciler struct {
	// KubeClient writes Deployments.
	KubeClient kubernetes.Interface
	// FooClient writes Foos' status.
	FooClient versioned.Interface
	// Foos reads Foos from the informer's cache.
	Foos foolisters.FooLister
	// Deployments reads Deployments from the informer's cache.
	Deployments appslisters.DeploymentLister
	// Recorder records events on Foos.
	Recorder record.EventRecorder
}

var _ Reconciler = (*FooReconciler)(nil)

// Reconcile brings one Foo's Deployment and status in line with its spec. It
// returns an error (so the key is retried with backoff) only when an API call
// fails. A Foo that is gone or being deleted, a Foo whose namespace is
// terminating, an invalid spec and a Deployment name taken by a Deployment this
// Foo does not control are all logged and return nil: retrying would not help.
func (r *FooReconciler) Reconcile(ctx context.Context, key cache.ObjectName) error {
	logger := klog.FromContext(ctx)

	// 1. Read the Foo from the informer's cache. Gone means deleted: its
	// Deployment goes with it through the owner reference (the garbage collector).
	foo, err := r.Foos.Foos(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		logger.Info("Foo is gone, nothing to do")
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading Foo %s from the cache: %w", key, err)
	}

	// 2. A Foo that is going away gets nothing new. Once deletionTimestamp is set
	// (kubectl delete --cascade=foreground, or a finalizer holding the Foo), the
	// garbage collector is deleting its Deployment: creating it again would
	// race the collector, start Pods that are killed at once and record events
	// about a Foo nobody wants. No child, no event, no status. Each step of the
	// collection queues the Foo again, so this line is logged only at -v=2.
	if foo.DeletionTimestamp != nil {
		logger.V(2).Info("Foo is being deleted, nothing to do")
		return nil
	}

	// 3. Refuse a spec we cannot act on. The CRD schema already rejects these,
	// but objects stored before the schema was tightened are not revalidated.
	// Retrying would not help, so one Warning event and no error.
	if field, problem := validateSpec(foo); field != "" {
		r.Recorder.Eventf(foo, corev1.EventTypeWarning, ReasonInvalidSpec, "%s %s; fix the Foo's spec", field, problem)
		logger.Info("Foo has an invalid spec; waiting for it to be fixed", "field", field, "problem", problem)
		return nil
	}

	// 4. Create the Deployment if it does not exist.
	name := foo.Spec.DeploymentName
	deployment, err := r.Deployments.Deployments(foo.Namespace).Get(name)
	if apierrors.IsNotFound(err) {
		if foo.Status.ObservedGeneration != 0 {
			// This Foo was reconciled before, so it had its Deployment, and now
			// the cache has none. Someone deleted it (create it again), or the
			// garbage collector did because the Foo is gone and our cache has not
			// seen that yet: the two watches are separate streams. Ask the API
			// server, not the cache, before creating a child for a Foo that may
			// no longer exist.
			gone, recheckErr := r.deletedMeanwhile(ctx, foo)
			if recheckErr != nil || gone {
				return recheckErr
			}
		}
		deployment, err = r.KubeClient.AppsV1().Deployments(foo.Namespace).Create(ctx, newDeployment(foo), metav1.CreateOptions{FieldManager: ControllerName})
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			// The namespace is being deleted, and the Foo with it: the API
			// server refuses every create there, for good. That is the end of
			// the work, not a failure to retry.
			logger.Info("Namespace is terminating; not creating the Deployment", "deployment", klog.KRef(foo.Namespace, name))
			return nil
		}
		if err != nil {
			// AlreadyExists lands here too when our cache lags behind: the
			// retry reads the Deployment from the cache and carries on.
			return fmt.Errorf("creating Deployment %s/%s: %w", foo.Namespace, name, err)
		}
		logger.Info("Created Deployment", "deployment", klog.KObj(deployment))
		r.Recorder.Eventf(foo, corev1.EventTypeNormal, ReasonDeploymentCreated, "Created Deployment %s (spec.replicas %d)", name, desiredReplicas(foo))
	} else if err != nil {
		return fmt.Errorf("reading Deployment %s/%s from the cache: %w", foo.Namespace, name, err)
	}

	// 5. Never touch a Deployment this Foo does not control: someone else made
	// it, or removed our owner reference from it, and adopting or changing it
	// could break their workload. The kit never adopts. Report the conflict and
	// stop claiming the Deployment's Pods in the status. No error: retrying
	// would change nothing, and every change to that Deployment (its deletion
	// included) queues this Foo again through DeploymentNameIndex.
	if !metav1.IsControlledBy(deployment, foo) {
		// Unless it is on its way out: most likely the Foo was deleted and
		// created again under its name (kubectl replace --force, a GitOps
		// tool syncing again) and this is the old Foo's Deployment, which the
		// garbage collector is deleting. That is no conflict: no event, a
		// status that claims none of its Pods, and a wait. Its deletion queues
		// this Foo (enqueueFoosOf), which then creates its own.
		if why := goingAway(deployment, foo); why != "" {
			logger.Info("Waiting for the Deployment to be gone before creating this Foo's own", "deployment", klog.KObj(deployment), "reason", why)
			return r.updateStatus(ctx, foo, samplev1alpha1.FooStatus{ObservedGeneration: foo.Generation})
		}
		r.Recorder.Eventf(foo, corev1.EventTypeWarning, ReasonErrResourceExists,
			"Deployment %s already exists and is not controlled by this Foo; delete that Deployment, or recreate the Foo with another deploymentName", name)
		logger.V(2).Info("Deployment is not controlled by this Foo; leaving it alone", "deployment", klog.KObj(deployment))
		return r.updateStatus(ctx, foo, samplev1alpha1.FooStatus{ObservedGeneration: foo.Generation})
	}

	// 6. Correct replica drift (someone ran kubectl scale, or the Foo changed).
	// Objects from the cache are shared: change a copy, never the original.
	want := desiredReplicas(foo)
	if deployment.Spec.Replicas == nil || *deployment.Spec.Replicas != want {
		from := "unset"
		if deployment.Spec.Replicas != nil {
			from = fmt.Sprint(*deployment.Spec.Replicas)
		}
		scaled := deployment.DeepCopy()
		scaled.Spec.Replicas = &want
		deployment, err = r.KubeClient.AppsV1().Deployments(foo.Namespace).Update(ctx, scaled, metav1.UpdateOptions{FieldManager: ControllerName})
		if err != nil {
			return fmt.Errorf("scaling Deployment %s/%s to %d replicas: %w", foo.Namespace, name, want, err)
		}
		logger.Info("Scaled Deployment", "deployment", klog.KObj(deployment), "from", from, "to", want)
		r.Recorder.Eventf(foo, corev1.EventTypeNormal, ReasonDeploymentScaled, "Scaled Deployment %s: spec.replicas %s -> %d", name, from, want)
	}

	// 7. Report what we observed.
	return r.updateStatus(ctx, foo, samplev1alpha1.FooStatus{
		AvailableReplicas:  deployment.Status.AvailableReplicas,
		ObservedGeneration: foo.Generation,
	})
}

// goingAway says why child, which has the name a child of foo must have (its
// Deployment, or another object it makes), is on its way out, or returns ""
// when it is not. It is when its deletionTimestamp is set (a finalizer holds it
// while it is deleted), or when its only owner reference is the controller
// reference of an earlier Foo of the same name, one with another UID: that Foo
// was deleted, and the garbage collector deletes what it owned. The name cannot
// tell the two apart from a stranger's object; the owner's UID and the
// deletionTimestamp can.
func goingAway(child metav1.Object, foo *samplev1alpha1.Foo) string {
	if child.GetDeletionTimestamp() != nil {
		return "it is being deleted"
	}
	if refs := child.GetOwnerReferences(); len(refs) == 1 {
		ref := refs[0]
		if ref.Controller != nil && *ref.Controller && ref.Kind == "Foo" &&
			ref.APIVersion == samplev1alpha1.SchemeGroupVersion.String() && ref.Name == foo.Name && ref.UID != foo.UID {
			return "it belongs to a deleted Foo of the same name, and the garbage collector deletes it"
		}
	}
	return ""
}

// deletedMeanwhile reads foo from the API server itself (one GET, not the cache)
// and reports whether it was deleted, replaced by a Foo of the same name (another
// UID) or is being deleted: then no child may be created for it, and the event
// of its deletion queues it again. The error is the GET's, when it fails
// otherwise. It re-checks as kube-controller-manager does before adopting an
// object (RecheckDeletionTimestamp in pkg/controller/controller_ref_manager.go).
func (r *FooReconciler) deletedMeanwhile(ctx context.Context, foo *samplev1alpha1.Foo) (bool, error) {
	live, err := r.FooClient.SamplecontrollerV1alpha1().Foos(foo.Namespace).Get(ctx, foo.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || (err == nil && (live.UID != foo.UID || live.DeletionTimestamp != nil)) {
		klog.FromContext(ctx).V(2).Info("Foo was deleted while it was reconciled; not creating its Deployment again")
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading Foo %s from the API server: %w", klog.KObj(foo), err)
	}
	return false, nil
}

// updateStatus writes status to the Foo through the status subresource, and only
// when it differs from the Foo's. The API server would store nothing for an
// identical status, but only after authenticating, admitting and decoding the
// request: with many Foos that is a steady load for nothing. A Foo the API
// server no longer has (NotFound) was deleted while it was reconciled, before
// the cache saw it go: there is nothing to report on, so that is not an error
// (the deletion queues the Foo once more, and that pass logs it).
func (r *FooReconciler) updateStatus(ctx context.Context, foo *samplev1alpha1.Foo, status samplev1alpha1.FooStatus) error {
	if foo.Status == status {
		return nil
	}
	// Objects from the cache are shared: change a copy, never the original.
	updated := foo.DeepCopy()
	updated.Status = status
	_, err := r.FooClient.SamplecontrollerV1alpha1().Foos(foo.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{FieldManager: ControllerName})
	if apierrors.IsNotFound(err) {
		klog.FromContext(ctx).V(2).Info("Foo was deleted while it was reconciled; no status to write")
		return nil
	}
	if err != nil {
		return fmt.Errorf("updating the status of Foo %s: %w", klog.KObj(foo), err)
	}
	klog.FromContext(ctx).V(2).Info("Updated Foo status", "availableReplicas", status.AvailableReplicas, "observedGeneration", status.ObservedGeneration)
	return nil
}

// validateSpec returns the path of the first spec field the controller cannot
// act on and what is wrong with it, or "" when the spec is usable. The rules are
// the CRD schema's (config/crd), checked again for Foos stored before it.
func validateSpec(foo *samplev1alpha1.Foo) (field, problem string) {
	if errs := validation.IsDNS1123Label(foo.Spec.DeploymentName); len(errs) > 0 {
		return "spec.deploymentName", fmt.Sprintf("%q is not a valid Deployment name: %s", foo.Spec.DeploymentName, strings.Join(errs, "; "))
	}
	if r := foo.Spec.Replicas; r != nil && (*r < 0 || *r > 100) {
		return "spec.replicas", fmt.Sprintf("is %d, must be between 0 and 100", *r)
	}
	return "", ""
}

// desiredReplicas is spec.replicas, or 1 (the CRD's default) when it is unset.
func desiredReplicas(foo *samplev1alpha1.Foo) int32 {
	if foo.Spec.Replicas == nil {
		return 1
	}
	return *foo.Spec.Replicas
}

// newDeployment returns the Deployment a Foo asks for. Its controller owner
// reference (with blockOwnerDeletion) makes the garbage collector delete it
// with the Foo, and tells enqueueFoosOf which Foo to reconcile when it changes.
func newDeployment(foo *samplev1alpha1.Foo) *appsv1.Deployment {
	labels := map[string]string{
		"app.kubernetes.io/name":       "nginx",
		"app.kubernetes.io/instance":   foo.Spec.DeploymentName,
		"app.kubernetes.io/managed-by": ControllerName,
	}
	replicas := desiredReplicas(foo)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:      foo.Spec.DeploymentName,
			Namespace: foo.Namespace,
			Labels:    labels,
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(foo, samplev1alpha1.SchemeGroupVersion.WithKind("Foo")),
			},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "nginx", Image: PodImage}},
				},
			},
		},
	}
}
