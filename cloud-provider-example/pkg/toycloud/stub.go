package toycloud

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"
)

// ErrStubNotImplemented is what StubLoadBalancer answers when asked to make or
// change a load balancer.
var ErrStubNotImplemented = errors.New("the stub load balancer makes no load balancers yet: write EnsureLoadBalancer (docs/lessons/05-cloud-controller-manager.md)")

// StubLoadBalancer is the learner's starting point (--reconciler=stub), a
// cloudprovider.LoadBalancer (k8s.io/cloud-provider cloud.go) that logs
// every question the service controller asks and refuses to make or change a load
// balancer (ErrStubNotImplemented), so a Service of type LoadBalancer gets the
// controller's finalizer and a Warning event (SyncLoadBalancerFailed) but no
// address. It answers the two cleanup questions truthfully (it made no load
// balancer, so none exists and deleting one is done): were they errors too, the
// controller could never remove its finalizer, and a Service it once saw could
// never be deleted.
type StubLoadBalancer struct {
	// Pool is where the addresses should come from; the stub only logs it.
	Pool Pool
}

var _ cloudprovider.LoadBalancer = &StubLoadBalancer{}

// GetLoadBalancer logs the question and answers that no load balancer exists.
func (s *StubLoadBalancer) GetLoadBalancer(ctx context.Context, clusterName string, service *corev1.Service) (*corev1.LoadBalancerStatus, bool, error) {
	klog.FromContext(ctx).Info("Stub: asked whether a load balancer exists; answering no", "service", klog.KObj(service), "cluster", clusterName)
	return nil, false, nil
}

// GetLoadBalancerName returns upstream's default name
// (cloudprovider.DefaultLoadBalancerName).
func (s *StubLoadBalancer) GetLoadBalancerName(_ context.Context, _ string, service *corev1.Service) string {
	return cloudprovider.DefaultLoadBalancerName(service)
}

// EnsureLoadBalancer logs what it is asked for and returns ErrStubNotImplemented.
func (s *StubLoadBalancer) EnsureLoadBalancer(ctx context.Context, clusterName string, service *corev1.Service, nodes []*corev1.Node) (*corev1.LoadBalancerStatus, error) {
	klog.FromContext(ctx).Info("Stub: asked to ensure a load balancer", "service", klog.KObj(service), "cluster", clusterName,
		"ports", len(service.Spec.Ports), "loadBalancerIP", service.Spec.LoadBalancerIP, "nodes", len(nodes), "pool", s.Pool)
	return nil, fmt.Errorf("service %s: %w", klog.KObj(service), ErrStubNotImplemented)
}

// UpdateLoadBalancer logs the new set of nodes and returns ErrStubNotImplemented.
func (s *StubLoadBalancer) UpdateLoadBalancer(ctx context.Context, clusterName string, service *corev1.Service, nodes []*corev1.Node) error {
	klog.FromContext(ctx).Info("Stub: asked to update a load balancer's nodes", "service", klog.KObj(service), "cluster", clusterName, "nodes", len(nodes))
	return fmt.Errorf("service %s: %w", klog.KObj(service), ErrStubNotImplemented)
}

// EnsureLoadBalancerDeleted logs the question and returns nil: the stub made no
// load balancer, so there is none to delete.
func (s *StubLoadBalancer) EnsureLoadBalancerDeleted(ctx context.Context, clusterName string, service *corev1.Service) error {
	klog.FromContext(ctx).Info("Stub: asked to delete a load balancer; there is none", "service", klog.KObj(service), "cluster", clusterName)
	return nil
}
