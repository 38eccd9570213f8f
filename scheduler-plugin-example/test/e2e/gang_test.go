//go:build e2e

package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// gangLabel is the label by which a Pod joins a gang (gang.GroupLabel in the
// scheduler's module, which this suite does not import; see go.mod).
const gangLabel = "gang.controller-kit.dev/group"

// makeGangPod creates a Pod called name of gang group for the scheduler named
// namespace, asking for the zone of the same name (the test's own nodes).
func makeGangPod(t *testing.T, cs kubernetes.Interface, namespace, name, group string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   namespace,
			Labels:      map[string]string{gangLabel: group},
			Annotations: map[string]string{zoneAnnotation: namespace},
		},
		Spec: podSpec(namespace),
	}
	if _, err := cs.CoreV1().Pods(namespace).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Pod %s: %v", name, err)
	}
}

// waitHeldAtPermit waits until the Pod namespace/name is held at Permit: the
// scheduler has chosen its node and written it to status.nominatedNodeName
// (as it does before a binding cycle waits, WaitOnPermit), and the Pod is not
// bound. A Pod bound first fails the test at once: bound alone.
func waitHeldAtPermit(t *testing.T, cs kubernetes.Interface, namespace, name string) string {
	t.Helper()
	var nominated, bound string
	kittest.Eventually(t, deadline, "Pod "+namespace+"/"+name+" held at Permit (status.nominatedNodeName set, spec.nodeName empty)", func(ctx context.Context) (bool, error) {
		pod, err := cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		nominated, bound = pod.Status.NominatedNodeName, pod.Spec.NodeName
		return nominated != "" || bound != "", nil
	})
	if bound != "" {
		t.Fatalf("Pod %s/%s of a gang of two was bound to %s alone, before the rest of its gang existed; want it held at Permit (Wait) until its gang is there", namespace, name, bound)
	}
	return nominated
}

// TestGangOfTwoIsBoundTogether: the first Pod of a gang of two is held at
// Permit, its node chosen and not bound, until the second comes; then both are
// bound.
func TestGangOfTwoIsBoundTogether(t *testing.T) {
	t.Parallel()
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "gang-pair")
	makeNode(t, cs, ns+"-1", ns)
	startScheduler(t, ns)
	makeGangPod(t, cs, ns, "first", "pair")
	waitHeldAtPermit(t, cs, ns, "first")
	makeGangPod(t, cs, ns, "second", "pair")
	// The first may have been rejected by its Permit timeout meanwhile (a slow
	// machine): the second wakes it, and both are bound all the same.
	for _, name := range []string{"first", "second"} {
		waitBound(t, cs, ns, name, deadline)
	}
}

// TestLonePodOfAGangGoesBackToTheQueue is the bad input of exercise 4: a gang
// whose second Pod never comes. Its first Pod is held at Permit, never bound,
// and after the plugin's Permit timeout the framework rejects it: it is
// Pending again (PodScheduled False, Unschedulable), its FailedScheduling
// Event gives the reason (the timeout at plugin Gang), and it waits in the
// scheduler's unschedulable pool (scheduler_pending_pods{queue="unschedulable"}).
func TestLonePodOfAGangGoesBackToTheQueue(t *testing.T) {
	t.Parallel()
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "gang-alone")
	makeNode(t, cs, ns+"-1", ns)
	metrics := startSchedulerWithMetrics(t, ns)
	makeGangPod(t, cs, ns, "alone", "solo")
	waitHeldAtPermit(t, cs, ns, "alone")
	e := schedulingEvent(t, cs, ns, "alone", "FailedScheduling")
	for _, want := range []string{"rejected due to timeout", "plugin Gang"} {
		if !strings.Contains(e.Note, want) {
			t.Errorf("FailedScheduling Event: %q, want it to say %q (the framework's reason for a Pod its Permit plugin kept waiting too long)", e.Note, want)
		}
	}
	pod, err := cs.CoreV1().Pods(ns).Get(context.Background(), "alone", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.NodeName != "" {
		t.Fatalf("Pod alone is bound to %s, want it Pending: its gang never came", pod.Spec.NodeName)
	}
	i := slices.IndexFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == corev1.PodScheduled })
	if i < 0 || pod.Status.Conditions[i].Status != corev1.ConditionFalse || pod.Status.Conditions[i].Reason != corev1.PodReasonUnschedulable {
		t.Errorf("Pod alone's conditions: %+v, want PodScheduled False, reason Unschedulable", pod.Status.Conditions)
	}
	kittest.Eventually(t, deadline, `the Pod back in the scheduler's queue, in its unschedulable pool (scheduler_pending_pods{queue="unschedulable"} 1)`, func(ctx context.Context) (bool, error) {
		m, err := kittest.ScrapeSelfSigned(ctx, metrics)
		if err != nil {
			return false, err
		}
		unschedulable, _ := m.Value("scheduler_pending_pods", map[string]string{"queue": "unschedulable"})
		return unschedulable == 1, nil
	})
}
