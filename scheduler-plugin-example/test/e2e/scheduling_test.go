//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// TestOnePodIsBoundByTheScheduler is make test's smoke of lesson 8: a Pod that
// names the scheduler is bound to a node, and the Scheduled Event says it was
// this scheduler.
func TestOnePodIsBoundByTheScheduler(t *testing.T) {
	t.Parallel()
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "zs-smoke")
	makeNode(t, cs, ns+"-1", ns)
	startScheduler(t, ns)
	makePod(t, cs, ns, "one", ns, "")
	waitBound(t, cs, ns, "one", deadline)
	if e := schedulingEvent(t, cs, ns, "one", "Scheduled"); e.ReportingController != ns {
		t.Errorf("the Scheduled Event comes from %q, want %q, the profile's scheduler name", e.ReportingController, ns)
	}
}

// TestPodsLandOnlyOnNodesOfTheirZone: Pods that ask for a zone are bound only to
// nodes labelled with it, and a Pod whose only other choice is a node of another
// zone stays Pending.
//
// The six Pods alone cannot fail a plugin that filters nothing every time: it
// leaves the choice to chance among all the cluster's nodes (the profile's one
// score plugin is ZoneSpread), and chance may put all six in the zone. So a
// seventh Pod asks for the zone too, and its node affinity (the in-tree
// NodeAffinity filter) allows it only onto the node of another zone: ZoneSpread
// turns that node away and the Pod stays Pending; without ZoneSpread's Filter
// it is bound there, every time.
func TestPodsLandOnlyOnNodesOfTheirZone(t *testing.T) {
	t.Parallel()
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "zs-filter")
	fitting := nodeNames(ns, 2)
	for _, n := range fitting {
		makeNode(t, cs, n, ns)
	}
	elsewhere := ns + "-elsewhere"
	makeNode(t, cs, elsewhere, elsewhere)
	startScheduler(t, ns)
	for i := range 6 {
		makePod(t, cs, ns, fmt.Sprintf("pod-%d", i), ns, ns)
	}
	onlyElsewhere := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "only-elsewhere", Namespace: ns, Annotations: map[string]string{zoneAnnotation: ns}},
		Spec:       podSpec(ns),
	}
	onlyElsewhere.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{elsewhere}}},
		}}},
	}}
	if _, err := cs.CoreV1().Pods(ns).Create(context.Background(), onlyElsewhere, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Pod only-elsewhere: %v", err)
	}
	for i := range 6 {
		name := fmt.Sprintf("pod-%d", i)
		if node := waitBound(t, cs, ns, name, deadline); !slices.Contains(fitting, node) {
			t.Errorf("Pod %s asks for zone %s and is on node %s, want one of %v (labelled %s=%s)", name, ns, node, fitting, zoneLabel, ns)
		}
	}
	kittest.Eventually(t, deadline, "Pod "+ns+"/only-elsewhere Pending (PodScheduled False): it asks for zone "+ns+" and its node affinity allows only node "+elsewhere,
		func(ctx context.Context) (bool, error) {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, "only-elsewhere", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if p.Spec.NodeName != "" {
				t.Fatalf("Pod only-elsewhere asks for zone %s and is bound to node %s of zone %s, the one node its node affinity allows; want it Pending: a node out of the Pod's zone never fits",
					ns, p.Spec.NodeName, elsewhere)
			}
			i := slices.IndexFunc(p.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == corev1.PodScheduled })
			return i >= 0 && p.Status.Conditions[i].Status == corev1.ConditionFalse, nil
		})
}

// What the preemption part of a FailedScheduling Event says of the nodes the
// Filter turned away (the DefaultPreemption plugin, which runs at PostFilter
// when no node fits). A node rejected as UnschedulableAndUnresolvable is left
// out of preemption's search, and the Event counts it as preemptionNotHelpful;
// a node rejected as plain Unschedulable is searched for Pods to evict, and a
// node with none of lower priority is counted as preemptionFoundNoVictims.
const (
	preemptionNotHelpful     = "Preemption is not helpful for scheduling"
	preemptionFoundNoVictims = "No preemption victims found for incoming pod"
)

// TestPodWithNoFittingNodeStaysPendingWithTheReason: a Pod that asks for a zone
// no node has stays Pending, its PodScheduled condition False (Unschedulable),
// with a FailedScheduling Event that names the zone and says preemption cannot
// help: the Filter's status code is UnschedulableAndUnresolvable, not plain
// Unschedulable, which would send preemption looking for victims on every node.
func TestPodWithNoFittingNodeStaysPendingWithTheReason(t *testing.T) {
	t.Parallel()
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "zs-pending")
	makeNode(t, cs, ns+"-elsewhere", ns+"-elsewhere")
	startScheduler(t, ns)
	makePod(t, cs, ns, "nowhere", ns, ns)
	e := schedulingEvent(t, cs, ns, "nowhere", "FailedScheduling")
	if want := "not in zone " + ns; !strings.Contains(e.Note, want) {
		t.Errorf("FailedScheduling Event: %q, want it to say %q (the plugin's reason)", e.Note, want)
	}
	if strings.Contains(e.Note, preemptionFoundNoVictims) || !strings.Contains(e.Note, preemptionNotHelpful) {
		t.Errorf("FailedScheduling Event: %q, want its preemption part to say %q and never %q: "+
			"a node out of the Pod's zone is UnschedulableAndUnresolvable (evicting Pods cannot change its labels), "+
			"and plain Unschedulable has preemption look for victims on it", e.Note, preemptionNotHelpful, preemptionFoundNoVictims)
	}
	pod, err := cs.CoreV1().Pods(ns).Get(context.Background(), "nowhere", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.NodeName != "" {
		t.Fatalf("Pod nowhere is bound to %s, want it Pending: no node is in zone %s", pod.Spec.NodeName, ns)
	}
	i := slices.IndexFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == corev1.PodScheduled })
	if i < 0 || pod.Status.Conditions[i].Status != corev1.ConditionFalse || pod.Status.Conditions[i].Reason != corev1.PodReasonUnschedulable {
		t.Errorf("Pod nowhere's conditions: %+v, want PodScheduled False, reason Unschedulable", pod.Status.Conditions)
	}
}

// TestRelabelledNodeSchedulesThePendingPod: a Pending Pod is bound within
// seconds of a node being labelled with its zone: the node's event moves it
// back to be scheduled, long before the queue's periodic flush of
// unschedulable Pods (5 minutes).
func TestRelabelledNodeSchedulesThePendingPod(t *testing.T) {
	t.Parallel()
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "zs-requeue")
	node := ns + "-1"
	makeNode(t, cs, node, ns+"-elsewhere")
	startScheduler(t, ns)
	makePod(t, cs, ns, "waiting", ns, ns)
	schedulingEvent(t, cs, ns, "waiting", "FailedScheduling")
	if p, err := cs.CoreV1().Pods(ns).Get(context.Background(), "waiting", metav1.GetOptions{}); err != nil || p.Spec.NodeName != "" {
		t.Fatalf("Pod waiting: %v, bound to %q; want it Pending before the node is relabelled", err, p.Spec.NodeName)
	}
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, zoneLabel, ns)
	kittest.Kubectl(t, "patch", "node", node, "--type=merge", "-p", patch)
	// Under the periodic flush: an event, not the flush, must have moved it.
	if got := waitBound(t, cs, ns, "waiting", min(deadline, 2*time.Minute)); got != node {
		t.Errorf("Pod waiting is on %s, want %s, the node relabelled into its zone", got, node)
	}
}

// TestEditedZoneSchedulesTheRejectedPod: a Pod rejected for a zone no node has
// (a typo) is bound within seconds of its own zone annotation being edited to a
// zone that has a node, long before the queue's periodic flush of
// unschedulable Pods (5 minutes): the edit reaches the queue as an update of
// the rejected Pod itself, which the plugin must register, since its Filter
// reads the Pod's annotation as much as the nodes' labels.
func TestEditedZoneSchedulesTheRejectedPod(t *testing.T) {
	t.Parallel()
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "zs-edit")
	node := ns + "-1"
	makeNode(t, cs, node, ns)
	startScheduler(t, ns)
	// The Pod tolerates every taint, so that ZoneSpread alone turns nodes away
	// and only the events it registered can requeue the Pod (see
	// TestUnrelatedNodeChangesLeaveThePendingPodAlone).
	typo := ns + "-typo"
	makePod(t, cs, ns, "typo", ns, typo, corev1.Toleration{Operator: corev1.TolerationOpExists})
	if e := schedulingEvent(t, cs, ns, "typo", "FailedScheduling"); !strings.Contains(e.Note, "not in zone "+typo) {
		t.Fatalf("FailedScheduling Event: %q, want it to say %q", e.Note, "not in zone "+typo)
	}
	if p, err := cs.CoreV1().Pods(ns).Get(context.Background(), "typo", metav1.GetOptions{}); err != nil || p.Spec.NodeName != "" {
		t.Fatalf("Pod typo: %v, bound to %q; want it Pending before its zone is edited", err, p.Spec.NodeName)
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, zoneAnnotation, ns)
	kittest.Kubectl(t, "patch", "pod", "typo", "-n", ns, "--type=merge", "-p", patch)
	// Under the periodic flush: the Pod's own update, not the flush, must have
	// moved it.
	if got := waitBound(t, cs, ns, "typo", min(deadline, 2*time.Minute)); got != node {
		t.Errorf("Pod typo is on %s, want %s, the node of the zone it now asks for", got, node)
	}
}

// unrelatedChanges is how many times TestUnrelatedNodeChangesLeaveThePendingPodAlone
// changes a node's label, and unrelatedPace the pause between two changes:
// at least the scheduling queue's first backoffs (1 s, then 2 s), so that a
// plugin which has every node change requeue its Pods has the Pod tried again
// for most of them.
const (
	unrelatedChanges = 5
	unrelatedPace    = 2 * time.Second
)

// TestUnrelatedNodeChangesLeaveThePendingPodAlone: a Pending Pod is not tried
// again for node changes that cannot make it fit (a label other than the zone,
// changed five times). The plugin's QueueingHintFn answers QueueSkip for them;
// a plugin without EnqueueExtensions has the Pod requeued on every node change,
// and the scheduler's own counter of attempts
// (scheduler_schedule_attempts_total{result="unschedulable"}) shows each try.
func TestUnrelatedNodeChangesLeaveThePendingPodAlone(t *testing.T) {
	t.Parallel()
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "zs-skip")
	node := ns + "-1"
	makeNode(t, cs, node, ns+"-elsewhere")
	metrics := startSchedulerWithMetrics(t, ns)
	// The Pod tolerates every taint, so that ZoneSpread alone turns nodes away
	// and only the events it registered can requeue the Pod: a Node of a test
	// running beside this one is tainted until kwok reports it Ready, and the
	// taint's removal would requeue a Pod that TaintToleration turned away.
	makePod(t, cs, ns, "waiting", ns, ns, corev1.Toleration{Operator: corev1.TolerationOpExists})
	schedulingEvent(t, cs, ns, "waiting", "FailedScheduling")
	before := unschedulableAttempts(t, metrics, ns)
	if before < 1 {
		t.Fatalf("scheduler_schedule_attempts_total{profile=%q,result=\"unschedulable\"} is %v after a FailedScheduling Event, want at least 1", ns, before)
	}
	for i := range unrelatedChanges {
		patch := fmt.Sprintf(`{"metadata":{"labels":{"controller-kit.dev/e2e-unrelated":"%d"}}}`, i)
		kittest.Kubectl(t, "patch", "node", node, "--type=merge", "-p", patch)
		time.Sleep(unrelatedPace)
	}
	if p, err := cs.CoreV1().Pods(ns).Get(context.Background(), "waiting", metav1.GetOptions{}); err != nil || p.Spec.NodeName != "" {
		t.Fatalf("Pod waiting: %v, bound to %q; want it still Pending (no node has its zone)", err, p.Spec.NodeName)
	}
	// One more try is allowed: it is not the events' doing when it falls on
	// the queue's periodic flush or a move of the Pod already under way.
	again := unschedulableAttempts(t, metrics, ns) - before
	t.Logf("the scheduler tried the Pod %v times before the node changes and %v more times during them", before, again)
	if again > 1 {
		t.Errorf("the scheduler tried the Pending Pod %v more times while %d changes to a label other than %s were made to node %s; want at most 1: a node change that leaves the zone as it was cannot make the Pod fit",
			again, unrelatedChanges, zoneLabel, node)
	}
}

// TestWorkloadSpreadsEvenlyOverTheFittingNodes: the twelve Pods of one
// ReplicaSet that asks for a zone of four nodes land three on each.
func TestWorkloadSpreadsEvenlyOverTheFittingNodes(t *testing.T) {
	t.Parallel()
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "zs-spread")
	fitting := nodeNames(ns, 4)
	for _, n := range fitting {
		makeNode(t, cs, n, ns)
	}
	startScheduler(t, ns)
	const replicas = 12
	makeReplicaSet(t, cs, ns, "spread", replicas)
	count := waitLivePodsBound(t, cs, ns, replicas)
	for _, n := range fitting {
		if count[n] != replicas/len(fitting) {
			t.Errorf("Pods per node: %v, want %d on each of %v", count, replicas/len(fitting), fitting)
			break
		}
	}
}

// slowShutdown is the finalizer TestReplacementsOfTerminatingPodsRestoreTheSpread
// holds Pods Terminating with, as a long graceful shutdown would: kwok deletes a
// Pod at once, but not one with a finalizer.
const slowShutdown = "controller-kit.dev/e2e-slow-shutdown"

// TestReplacementsOfTerminatingPodsRestoreTheSpread: the nine Pods of one
// ReplicaSet lie three on each of three nodes; the three on one node are
// deleted and stay Terminating (a drain, a rolling restart). Their
// replacements go to that node, so the workload's live Pods are 3/3/3 again,
// not 1/4/4: a Pod with a deletionTimestamp is going away, and Score does not
// count it as present.
func TestReplacementsOfTerminatingPodsRestoreTheSpread(t *testing.T) {
	t.Parallel()
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "zs-drain")
	fitting := nodeNames(ns, 3)
	for _, n := range fitting {
		makeNode(t, cs, n, ns)
	}
	startScheduler(t, ns)
	const replicas = 9
	makeReplicaSet(t, cs, ns, "drain", replicas)
	live := waitLivePodsBound(t, cs, ns, replicas)
	for _, n := range fitting {
		if live[n] != replicas/len(fitting) {
			t.Fatalf("live Pods per node before the drain: %v, want %d on each of %v", live, replicas/len(fitting), fitting)
		}
	}
	drained := fitting[0]
	pods, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "spec.nodeName=" + drained})
	if err != nil {
		t.Fatal(err)
	}
	hold := fmt.Sprintf(`{"metadata":{"finalizers":[%q]}}`, slowShutdown)
	for _, p := range pods.Items {
		kittest.Kubectl(t, "patch", "pod", p.Name, "-n", ns, "--type=merge", "-p", hold)
		t.Cleanup(func() {
			if _, err := kittest.KubectlE("patch", "pod", p.Name, "-n", ns, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`); err != nil {
				t.Logf("cannot take finalizer %s off Pod %s: %v", slowShutdown, p.Name, err)
			}
		})
		kittest.Kubectl(t, "delete", "pod", p.Name, "-n", ns, "--wait=false")
	}
	live = waitLivePodsBound(t, cs, ns, replicas)
	terminating := podsOnNodes(t, cs, ns)
	for n, c := range live {
		terminating[n] -= c
	}
	if terminating[drained] != len(pods.Items) {
		t.Fatalf("Pods Terminating on %s: %d, want the %d deleted, held by finalizer %s (else the check proves nothing)", drained, terminating[drained], len(pods.Items), slowShutdown)
	}
	for _, n := range fitting {
		if live[n] != replicas/len(fitting) {
			t.Errorf("live Pods per node after the Pods on %s were deleted and held Terminating: %v, want %d on each of %v: "+
				"a Pod with a deletionTimestamp is going away and must not count as the workload's", drained, live, replicas/len(fitting), fitting)
			break
		}
	}
}

// TestEachSchedulerKeepsToItsOwnPods: the cluster's scheduler never binds a Pod
// that names this one, and this one never binds a Pod of the cluster's
// (default-scheduler), even one that asks for its zone.
func TestEachSchedulerKeepsToItsOwnPods(t *testing.T) {
	t.Parallel()
	cs := kittest.Clientset(t)
	ns := kittest.Namespace(t, cs, "zs-two")
	makeNode(t, cs, ns+"-1", ns)
	// This scheduler does not run yet: its Pod waits, while the cluster's
	// scheduler binds its own Pod created after it.
	makePod(t, cs, ns, "ours", ns, ns)
	makePod(t, cs, ns, "default", corev1.DefaultSchedulerName, ns)
	waitBound(t, cs, ns, "default", deadline)
	if p, err := cs.CoreV1().Pods(ns).Get(context.Background(), "ours", metav1.GetOptions{}); err != nil || p.Spec.NodeName != "" {
		t.Fatalf("Pod ours: %v, bound to %q while no scheduler of its name runs; want it unbound: the cluster's scheduler took it", err, p.Spec.NodeName)
	}
	startScheduler(t, ns)
	waitBound(t, cs, ns, "ours", deadline)
	makePod(t, cs, ns, "default-later", corev1.DefaultSchedulerName, ns)
	waitBound(t, cs, ns, "default-later", deadline)
	for pod, want := range map[string]string{"ours": ns, "default": corev1.DefaultSchedulerName, "default-later": corev1.DefaultSchedulerName} {
		if e := schedulingEvent(t, cs, ns, pod, "Scheduled"); e.ReportingController != want {
			t.Errorf("Pod %s was scheduled by %q (its Scheduled Event), want %q", pod, e.ReportingController, want)
		}
	}
}
