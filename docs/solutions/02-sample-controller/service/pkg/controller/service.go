package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	samplev1alpha1 "github.com/controller-kit/controller-kit/sample-controller/pkg/apis/samplecontroller/v1alpha1"
)

// ReasonServiceCreated is recorded on a Foo when its Service is created.
const ReasonServiceCreated = "ServiceCreated"

// WithService is a reference solution of lesson 2's Service exercise: the
// Reference Reconciler, plus a Service per Foo, named like its Deployment,
// owned by the Foo and selecting the Deployment's Pods. It reads Services from
// the informer's cache and creates one only when it is missing, so a Foo that
// is up to date costs no write.
type WithService struct {
	*Reference
	// Services reads Services from the informer's cache.
	Services corelisters.ServiceLister
}

var _ Reconciler = (*WithService)(nil)

// Reconcile runs the Reference steps, then makes sure the Foo's Service
// exists. It returns an error (retried with backoff) when the Service name is
// taken by a Service this Foo does not control, or when an API call fails.
func (r *WithService) Reconcile(ctx context.Context, key cache.ObjectName) error {
	if err := r.Reference.Reconcile(ctx, key); err != nil {
		return err
	}
	foo, err := r.Foos.Foos(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return nil // deleted: the garbage collector removes its Service too
	}
	if err != nil {
		return fmt.Errorf("reading Foo %s from the cache: %w", key, err)
	}
	if field, _ := validateSpec(foo); field != "" {
		return nil // Reference has recorded the InvalidSpec warning
	}

	name := foo.Spec.DeploymentName
	service, err := r.Services.Services(foo.Namespace).Get(name)
	if apierrors.IsNotFound(err) {
		created, err := r.KubeClient.CoreV1().Services(foo.Namespace).Create(ctx, newService(foo), metav1.CreateOptions{FieldManager: Name})
		if err != nil {
			return fmt.Errorf("creating Service %s/%s: %w", foo.Namespace, name, err)
		}
		r.Recorder.Eventf(foo, corev1.EventTypeNormal, ReasonServiceCreated, "Created Service %s", created.Name)
		klog.FromContext(ctx).Info("Created Service", "service", klog.KObj(created))
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading Service %s/%s from the cache: %w", foo.Namespace, name, err)
	}
	if !metav1.IsControlledBy(service, foo) {
		r.Recorder.Eventf(foo, corev1.EventTypeWarning, ReasonErrResourceExists, "Service %s exists and is not controlled by this Foo", name)
		return fmt.Errorf("service %s/%s exists and is not controlled by Foo %s", foo.Namespace, name, foo.Name)
	}
	return nil
}

// newService returns the Service a Foo asks for: port 80 of the Pods of its
// Deployment, with the same labels as the Deployment and a controller owner
// reference to the Foo.
func newService(foo *samplev1alpha1.Foo) *corev1.Service {
	labels := newDeployment(foo).Spec.Template.Labels
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:      foo.Spec.DeploymentName,
			Namespace: foo.Namespace,
			Labels:    labels,
			OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(foo, samplev1alpha1.SchemeGroupVersion.WithKind("Foo")),
			},
		},
		Spec: corev1.ServiceSpec{
			Selector: labels,
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(80)}},
		},
	}
}
