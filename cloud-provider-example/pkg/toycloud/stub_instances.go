package toycloud

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"
)

// ErrStubInstancesNotImplemented is what StubInstances answers when asked for a
// Node's metadata.
var ErrStubInstancesNotImplemented = errors.New("the stub instances know no machines yet: write InstanceMetadata (docs/lessons/05-cloud-controller-manager.md)")

// StubInstances is the starting point of lesson 5's second exercise: a
// cloudprovider.InstancesV2 (k8s.io/cloud-provider cloud.go) that logs every
// question the cloud-node controller asks and answers InstanceMetadata with
// ErrStubInstancesNotImplemented, so a Node of one of the cloud's machines keeps
// its node.cloudprovider.kubernetes.io/uninitialized taint. Its two other answers
// are the safe ones (the machine exists and runs): a Node is never deleted or
// marked shut down because of the stub.
type StubInstances struct {
	// Machines are the cloud config's machines; the stub only logs how many.
	Machines []Machine
}

var _ cloudprovider.InstancesV2 = &StubInstances{}

// InstanceExists logs the question and answers that the machine exists.
func (s *StubInstances) InstanceExists(ctx context.Context, node *corev1.Node) (bool, error) {
	klog.FromContext(ctx).Info("Stub: asked whether a Node's machine exists; answering yes", "node", klog.KObj(node), "providerID", node.Spec.ProviderID)
	return true, nil
}

// InstanceShutdown logs the question and answers that the machine runs.
func (s *StubInstances) InstanceShutdown(ctx context.Context, node *corev1.Node) (bool, error) {
	klog.FromContext(ctx).Info("Stub: asked whether a Node's machine is shut down; answering no", "node", klog.KObj(node), "providerID", node.Spec.ProviderID)
	return false, nil
}

// InstanceMetadata logs the question and returns ErrStubInstancesNotImplemented.
func (s *StubInstances) InstanceMetadata(ctx context.Context, node *corev1.Node) (*cloudprovider.InstanceMetadata, error) {
	klog.FromContext(ctx).Info("Stub: asked for a Node's machine", "node", klog.KObj(node), "providerID", node.Spec.ProviderID, "machines", len(s.Machines))
	return nil, fmt.Errorf("node %s: %w", node.Name, ErrStubInstancesNotImplemented)
}
