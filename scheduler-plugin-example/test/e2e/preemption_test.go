//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// preemptionCPU is what each Pod of TestHigherPriorityPodPreemptsALowerOne
// requests: more than half of a kwok Node's 32 CPUs, so the node holds one of
// them and not both.
const preemptionCPU = "24"

// makePriorityClass creates a PriorityClass called name of value, and deletes
// it at cleanup (PriorityClasses are cluster-wide: the name is the test's own).
func makePriorityClass(t *testing.T, cs kubernetes.Interface, name string, value int32) {
	t.Helper()
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
	if _, err := cs.SchedulingV1().PriorityClasses().Create(context.Background(), pc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating PriorityClass %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := cs.SchedulingV1().PriorityClasses().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Logf("cannot delete PriorityClass %s: %v", name, err)
		}
	})
}

// makePriorityPod creates a Pod called name of PriorityClass class for the
// scheduler named namespace, asking for the zone of the same name and for
// preemptionCPU.
func makePriorityPod(t *testing.T, cs kubernetes.Interface, namespace, name, class string) {
	t.Helper()
	spec := podSpec(namespace)
	spec.PriorityClassName = class
	spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(preemptionCPU)}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Annotations: map[string]string{zoneAnnotation: namespace}},
		Spec:       spec,
	}
	if _, err := cs.CoreV1().Pods(namespace).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Pod %s: %v", name, err)
	}
}

// TestHigherPriorityPodPreemptsALowerOne: on the one node of its zone, full
// with a Pod of low priority, a Pod of high priority fails the Filter
// (NodeResourcesFit: Insufficient cpu, a node preemption can help) and the
// PostFilter point's DefaultPreemption evicts the low one: a Preempted Event
// about it names the node, the high Pod's FailedScheduling Event says what did
// not fit, and the high Pod is bound to that node.
func TestHigherPriorityPodPreemptsALowerOne(t *testing.T) {
	t.Parallel()
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "zs-preempt")
	node := ns + "-1"
	makeNode(t, cs, node, ns)
	makePriorityClass(t, cs, ns+"-low", 100)
	makePriorityClass(t, cs, ns+"-high", 1000)
	startScheduler(t, ns)
	makePriorityPod(t, cs, ns, "low", ns+"-low")
	if got := waitBound(t, cs, ns, "low", deadline); got != node {
		t.Fatalf("Pod low is on %s, want %s, the one node of its zone %s", got, node, ns)
	}
	makePriorityPod(t, cs, ns, "high", ns+"-high")
	if e := schedulingEvent(t, cs, ns, "low", "Preempted"); !strings.Contains(e.Note, "on node "+node) {
		t.Errorf("Preempted Event about Pod low: %q, want it to name node %s", e.Note, node)
	}
	if e := schedulingEvent(t, cs, ns, "high", "FailedScheduling"); !strings.Contains(e.Note, "Insufficient cpu") {
		t.Errorf("FailedScheduling Event about Pod high: %q, want it to say %q (NodeResourcesFit's reason, which preemption can help)", e.Note, "Insufficient cpu")
	}
	if got := waitBound(t, cs, ns, "high", deadline); got != node {
		t.Errorf("Pod high is on %s, want %s, the node its preemption freed", got, node)
	}
	low, err := cs.CoreV1().Pods(ns).Get(context.Background(), "low", metav1.GetOptions{})
	if err == nil && low.DeletionTimestamp == nil {
		t.Errorf("Pod low is still there and not being deleted, want it evicted by the preemption")
	} else if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}
