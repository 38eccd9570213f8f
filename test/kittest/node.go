package kittest

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// KwokNode creates a Node with meta's name, labels and annotations, labelled
// type=kwok besides, with the capacity of one of the local cluster's kwok nodes
// (32 CPUs, 256 GiB, 110 Pods), waits until kwok reports it Ready (2 minutes at
// the most), and deletes it at cleanup. A suite that needs a Node of its own
// (one in a zone, one whose volumes the attach-detach controller attaches)
// makes it so, and labels it with a key of its own, so that the Nodes a run cut
// short leaves are found with kubectl get nodes -l KEY.
func KwokNode(t testing.TB, cs kubernetes.Interface, meta metav1.ObjectMeta) {
	t.Helper()
	name := meta.Name
	meta.Labels = maps.Clone(meta.Labels)
	if meta.Labels == nil {
		meta.Labels = map[string]string{}
	}
	meta.Labels["type"] = "kwok"
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	node := &corev1.Node{
		ObjectMeta: meta,
		Status:     corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
	if _, err := cs.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Node %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := cs.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Logf("cannot delete Node %s: %v", name, err)
		}
	})
	Eventually(t, 2*time.Minute, "Node "+name+" Ready (kwok)", func(ctx context.Context) (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		i := slices.IndexFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool { return c.Type == corev1.NodeReady })
		return i >= 0 && n.Status.Conditions[i].Status == corev1.ConditionTrue, nil
	})
}
