package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	foolisters "github.com/controller-kit/controller-kit/sample-controller/pkg/generated/listers/samplecontroller/v1alpha1"
)

// StubReconciler is a Reconciler that only reads and logs: the Foo it was asked about and
// the Deployment that Foo names, if any. It never writes. Start your own
// Reconciler from it; `make test-e2e RECONCILER=stub` shows which behaviours
// are still missing. Its first step (read the Foo; gone is no error) is
// FooReconciler's, line for line, on purpose: a copy of the stub starts where
// the reference starts.
type StubReconciler struct {
	// Foos reads Foos from the informer's cache.
	Foos foolisters.FooLister
	// Deployments reads Deployments from the informer's cache.
	Deployments appslisters.DeploymentLister
}

var _ Reconciler = (*StubReconciler)(nil)

// Reconcile logs what the caches hold for key. It returns an error only when a
// cache read fails for a reason other than "not found".
func (s *StubReconciler) Reconcile(ctx context.Context, key cache.ObjectName) error {
	logger := klog.FromContext(ctx)

	foo, err := s.Foos.Foos(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		logger.Info("Foo is gone, nothing to do")
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading Foo %s from the cache: %w", key, err)
	}
	logger.Info("Foo seen", "deploymentName", foo.Spec.DeploymentName, "replicas", foo.Spec.Replicas, "generation", foo.Generation)

	deployment, err := s.Deployments.Deployments(foo.Namespace).Get(foo.Spec.DeploymentName)
	if apierrors.IsNotFound(err) {
		logger.Info("Its Deployment does not exist yet (a real Reconciler would create it)")
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading Deployment %s/%s from the cache: %w", foo.Namespace, foo.Spec.DeploymentName, err)
	}
	logger.Info("Its Deployment exists", "deployment", klog.KObj(deployment), "replicas", deployment.Spec.Replicas, "availableReplicas", deployment.Status.AvailableReplicas)
	return nil
}
