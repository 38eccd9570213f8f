package kittest

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
)

// playKwok waits for the Node called name and reports it first not Ready, then
// Ready, as kwok does a moment after a Node is created.
func playKwok(t *testing.T, cs kubernetes.Interface, name string) {
	ctx := context.Background()
	for _, status := range []corev1.ConditionStatus{corev1.ConditionFalse, corev1.ConditionTrue} {
		for {
			n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err == nil {
				n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}
				if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
					t.Errorf("reporting Node %s Ready=%s: %v", name, status, err)
				}
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if status == corev1.ConditionFalse {
			time.Sleep(500 * time.Millisecond)
		}
	}
}

// TestKwokNodeIsReadyWhenItReturnsAndGoneAfterTheTest checks that KwokNode
// makes a kwok Node with the caller's labels and annotations, returns only once
// it is Ready, and deletes it when the test that made it ends.
func TestKwokNodeIsReadyWhenItReturnsAndGoneAfterTheTest(t *testing.T) {
	cs := fake.NewClientset()
	labels := map[string]string{"controller-kit.dev/e2e-x": "true", "topology.kubernetes.io/zone": "a"}
	t.Run("make", func(t *testing.T) {
		go playKwok(t, cs, "n1")
		KwokNode(t, cs, metav1.ObjectMeta{Name: "n1", Labels: labels, Annotations: map[string]string{"note": "kept"}})

		n, err := cs.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(n.Status.Conditions) != 1 || n.Status.Conditions[0].Status != corev1.ConditionTrue {
			t.Errorf("KwokNode returned while the Node's conditions were %v; want it Ready", n.Status.Conditions)
		}
		for k, v := range map[string]string{"type": "kwok", "controller-kit.dev/e2e-x": "true", "topology.kubernetes.io/zone": "a"} {
			if n.Labels[k] != v {
				t.Errorf("label %s=%q, want %q (labels: %v)", k, n.Labels[k], v, n.Labels)
			}
		}
		if n.Annotations["note"] != "kept" {
			t.Errorf("annotations %v, want note=kept", n.Annotations)
		}
		if pods := n.Status.Allocatable[corev1.ResourcePods]; pods.Value() != 110 {
			t.Errorf("allocatable Pods %s, want 110 (a kwok node's)", pods.String())
		}
	})
	if _, ok := labels["type"]; ok {
		t.Errorf("KwokNode added type=kwok to the caller's map: %v", labels)
	}
	if _, err := cs.CoreV1().Nodes().Get(context.Background(), "n1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after the test that made it, Get Node n1: %v; want NotFound", err)
	}
}
