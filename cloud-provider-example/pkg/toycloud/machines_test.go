package toycloud

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// node returns a Node named name with the provider ID providerID ("": none yet).
func node(name, providerID string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}}
}

func TestStubInstancesRefuseMetadataButNeverDeleteANode(t *testing.T) {
	ctx := context.Background()
	stub := &StubInstances{}
	n := node("toy-node-1", "")
	if _, err := stub.InstanceMetadata(ctx, n); !errors.Is(err, ErrStubInstancesNotImplemented) {
		t.Errorf("InstanceMetadata error = %v, want ErrStubInstancesNotImplemented", err)
	}
	if exists, err := stub.InstanceExists(ctx, n); !exists || err != nil {
		t.Errorf("InstanceExists = %v, %v; want true, nil", exists, err)
	}
	if down, err := stub.InstanceShutdown(ctx, n); down || err != nil {
		t.Errorf("InstanceShutdown = %v, %v; want false, nil", down, err)
	}
}
