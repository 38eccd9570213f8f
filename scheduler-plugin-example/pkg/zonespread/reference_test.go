package zonespread

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

// replicaSet is the GroupVersionKind of the owner the tests' Pods share.
var replicaSet = v1.SchemeGroupVersion.WithKind("ReplicaSet")

// podOf returns a Pod named name, controlled by the workload whose UID is
// owner ("" for none), asking for zone ("" for none). The framework's test
// wrappers (st.MakePod) build it; they leave the owner's UID empty, which is
// what tells workloads apart here, so it is set after.
func podOf(name, owner, zone string) *v1.Pod {
	w := st.MakePod().Namespace("default").Name(name).UID(name)
	if zone != "" {
		w = w.Annotation(ZoneAnnotation, zone)
	}
	if owner != "" {
		w = w.OwnerReference(owner, replicaSet)
	}
	pod := w.Obj()
	if owner != "" {
		pod.OwnerReferences[0].UID = types.UID(owner)
	}
	return pod
}

// nodeInZone returns a NodeInfo of a node named name, labelled with zone ("" for
// no label), holding pods.
func nodeInZone(name, zone string, pods ...*v1.Pod) fwk.NodeInfo {
	n := st.MakeNode().Name(name)
	if zone != "" {
		n = n.Label(ZoneLabel, zone)
	}
	info := framework.NewNodeInfo(pods...)
	info.SetNode(n.Obj())
	return info
}

func TestFilterKeepsAPodToTheZoneItAsksFor(t *testing.T) {
	for _, tc := range []struct {
		name     string
		pod      *v1.Pod
		node     fwk.NodeInfo
		wantCode fwk.Code
	}{
		{"no zone asked, node without a zone", podOf("p", "", ""), nodeInZone("n", ""), fwk.Success},
		{"no zone asked, node in a zone", podOf("p", "", ""), nodeInZone("n", "zone-b"), fwk.Success},
		{"zone asked, node in it", podOf("p", "", "zone-a"), nodeInZone("n", "zone-a"), fwk.Success},
		{"zone asked, node in another", podOf("p", "", "zone-a"), nodeInZone("n", "zone-b"), fwk.UnschedulableAndUnresolvable},
		{"zone asked, node without a zone", podOf("p", "", "zone-a"), nodeInZone("n", ""), fwk.UnschedulableAndUnresolvable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			status := (&ZoneSpread{}).Filter(ctx, nil, tc.pod, tc.node)
			if got := status.Code(); got != tc.wantCode {
				t.Fatalf("Filter: %v (%v), want %v", got, status.Reasons(), tc.wantCode)
			}
			if tc.wantCode != fwk.Success && (len(status.Reasons()) != 1 || status.Reasons()[0] != "node(s) not in zone zone-a (label topology.kubernetes.io/zone)") {
				t.Errorf("Filter's reasons: %q, want one naming the zone and the label, and no node (the event sums nodes up by reason)", status.Reasons())
			}
		})
	}
}

func TestScoreSpreadsAWorkloadOverTheNodes(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pl := &ZoneSpread{}
	pod := podOf("new", "rs-1", "")
	nodes := []fwk.NodeInfo{
		nodeInZone("empty", ""),
		nodeInZone("one", "", podOf("a", "rs-1", "")),
		nodeInZone("two", "", podOf("b", "rs-1", ""), podOf("c", "rs-1", ""), podOf("other", "rs-2", "")),
		nodeInZone("others-only", "", podOf("d", "rs-2", ""), podOf("e", "", "")),
	}
	var scores fwk.NodeScoreList
	for _, n := range nodes {
		score, status := pl.Score(ctx, nil, pod, n)
		if !status.IsSuccess() {
			t.Fatalf("Score on %s: %v", n.Node().Name, status.AsError())
		}
		scores = append(scores, fwk.NodeScore{Name: n.Node().Name, Score: score})
	}
	if status := pl.ScoreExtensions().NormalizeScore(ctx, nil, pod, scores); !status.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", status.AsError())
	}
	want := map[string]int64{"empty": fwk.MaxNodeScore, "one": fwk.MaxNodeScore / 2, "two": fwk.MinNodeScore, "others-only": fwk.MaxNodeScore}
	for _, s := range scores {
		if s.Score != want[s.Name] {
			t.Errorf("node %s: score %d, want %d (fewest Pods of the workload highest)", s.Name, s.Score, want[s.Name])
		}
	}
}

// TestScoreCountsOnlyLivePods: a Pod with a deletionTimestamp is going away (a
// drain, a rolling restart), so it does not count as one of the workload's on
// its node; counted, the three replacements of three terminating Pods would
// spread over every node and leave the workload 1/4/4, not 3/3/3.
func TestScoreCountsOnlyLivePods(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pl := &ZoneSpread{}
	terminating := func(name string) *v1.Pod {
		p := podOf(name, "rs-1", "")
		p.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		p.Finalizers = []string{"example.com/slow-shutdown"}
		return p
	}
	nodes := []fwk.NodeInfo{
		nodeInZone("drained", "", terminating("a"), terminating("b"), terminating("c")),
		nodeInZone("two", "", podOf("d", "rs-1", ""), podOf("e", "rs-1", "")),
		nodeInZone("three", "", podOf("f", "rs-1", ""), podOf("g", "rs-1", ""), podOf("h", "rs-1", "")),
	}
	want := map[string]int64{"drained": 0, "two": 2, "three": 3}
	for _, n := range nodes {
		score, status := pl.Score(ctx, nil, podOf("new", "rs-1", ""), n)
		if !status.IsSuccess() {
			t.Fatalf("Score on %s: %v", n.Node().Name, status.AsError())
		}
		if score != want[n.Node().Name] {
			t.Errorf("Score on node %s: %d Pods of the workload, want %d (its Pods with a deletionTimestamp are going away and do not count)", n.Node().Name, score, want[n.Node().Name])
		}
	}
}

func TestScoreOfAPodWithoutWorkloadIsTheSameEverywhere(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pl := &ZoneSpread{}
	pod := podOf("alone", "", "")
	scores := fwk.NodeScoreList{}
	for _, n := range []fwk.NodeInfo{nodeInZone("a", ""), nodeInZone("b", "", podOf("x", "", ""), podOf("y", "rs-1", ""))} {
		score, _ := pl.Score(ctx, nil, pod, n)
		scores = append(scores, fwk.NodeScore{Name: n.Node().Name, Score: score})
	}
	pl.NormalizeScore(ctx, nil, pod, scores)
	for _, s := range scores {
		if s.Score != fwk.MaxNodeScore {
			t.Errorf("node %s: %d, want %d on every node", s.Name, s.Score, fwk.MaxNodeScore)
		}
	}
}

func TestEventsToRegisterAreWhatFilterReads(t *testing.T) {
	events, err := (&ZoneSpread{}).EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []fwk.ClusterEvent{
		{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeLabel},
		{Resource: fwk.TargetPod, ActionType: fwk.Update},
	}
	var got []fwk.ClusterEvent
	for _, e := range events {
		if e.QueueingHintFn == nil {
			t.Errorf("EventsToRegister: %v has no QueueingHintFn, so every such event would requeue the Pod", e.Event)
		}
		got = append(got, e.Event)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("EventsToRegister: %s, want %s: the nodes' zone labels and the rejected Pod's own zone annotation, the two things Filter reads", eventNames(got), eventNames(want))
	}
}

// eventNames spells events out as Resource/Action|Action..., which
// ClusterEvent's own Label does not for more than one ActionType.
func eventNames(events []fwk.ClusterEvent) string {
	var names []string
	for _, e := range events {
		var actions []string
		for bit := fwk.ActionType(1); bit <= fwk.All; bit <<= 1 {
			if e.ActionType&bit != 0 {
				actions = append(actions, bit.String())
			}
		}
		if e.ActionType == fwk.Update {
			actions = []string{fwk.Update.String()}
		}
		names = append(names, string(e.Resource)+"/"+strings.Join(actions, "|"))
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// TestAnAnnotationEditReachesTheQueueAsTargetPodUpdate holds the pinned
// scheduler to what EventsToRegister relies on: an edit of the zone annotation
// of an unscheduled Pod is, for the queue, an Update of the TargetPod (no
// narrower Pod update matches an annotation), and it matches the registration.
func TestAnAnnotationEditReachesTheQueueAsTargetPodUpdate(t *testing.T) {
	old, edited := podOf("p", "", "zone-x"), podOf("p", "", "zone-a")
	events := framework.PodSchedulingPropertiesChange(edited, old, true)
	want := fwk.ClusterEvent{Resource: fwk.TargetPod, ActionType: fwk.Update}
	if len(events) != 1 || events[0] != want {
		t.Fatalf("the queue's events for an edited zone annotation: %s, want %s", eventNames(events), eventNames([]fwk.ClusterEvent{want}))
	}
	registered, _ := (&ZoneSpread{}).EventsToRegister(context.Background())
	if !slices.ContainsFunc(registered, func(e fwk.ClusterEventWithHint) bool { return framework.MatchClusterEvents(e.Event, events[0]) }) {
		t.Errorf("no event ZoneSpread registers matches %s: the edited Pod would wait for the queue's 5-minute flush", eventNames(events))
	}
}

func TestQueueingHintQueuesOnlyWhenThePodsZoneChanged(t *testing.T) {
	pod := podOf("p", "", "zone-x")
	for _, tc := range []struct {
		name     string
		old, new any
		want     fwk.QueueingHint
	}{
		{"zone edited", pod, podOf("p", "", "zone-a"), fwk.Queue},
		{"zone taken away", pod, podOf("p", "", ""), fwk.Queue},
		{"something else edited", pod, podOf("p", "rs-1", "zone-x"), fwk.QueueSkip},
		{"another Pod's zone edited", podOf("other", "", "zone-x"), podOf("other", "", "zone-a"), fwk.QueueSkip},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			// The queue passes the rejected Pod as it is now, the edit applied.
			now := pod
			if p, ok := tc.new.(*v1.Pod); ok && p.UID == pod.UID {
				now = p
			}
			got, err := (&ZoneSpread{}).isSchedulableAfterPodZoneChange(logger, now, tc.old, tc.new)
			if err != nil || got != tc.want {
				t.Errorf("hint: %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	logger, _ := ktesting.NewTestContext(t)
	if got, err := (&ZoneSpread{}).isSchedulableAfterPodZoneChange(logger, pod, pod, "not a pod"); err == nil || got != fwk.Queue {
		t.Errorf("hint for an object that is no Pod: %v, %v; want Queue and an error, so no Pod is stranded", got, err)
	}
}

func TestQueueingHintQueuesOnlyForANodeNowInTheZone(t *testing.T) {
	node := func(zone string) *v1.Node {
		n := st.MakeNode().Name("n")
		if zone != "" {
			n = n.Label(ZoneLabel, zone)
		}
		return n.Obj()
	}
	for _, tc := range []struct {
		name     string
		old, new any
		want     fwk.QueueingHint
	}{
		{"node added in the zone", nil, node("zone-a"), fwk.Queue},
		{"node added elsewhere", nil, node("zone-b"), fwk.QueueSkip},
		{"node relabelled into the zone", node("zone-b"), node("zone-a"), fwk.Queue},
		{"node labelled for the first time", node(""), node("zone-a"), fwk.Queue},
		{"node relabelled elsewhere", node("zone-b"), node("zone-c"), fwk.QueueSkip},
		{"node in the zone changed another label", node("zone-a"), node("zone-a"), fwk.QueueSkip},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logger, _ := ktesting.NewTestContext(t)
			got, err := (&ZoneSpread{}).isSchedulableAfterNodeChange(logger, podOf("p", "", "zone-a"), tc.old, tc.new)
			if err != nil || got != tc.want {
				t.Errorf("hint: %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	logger, _ := ktesting.NewTestContext(t)
	if got, err := (&ZoneSpread{}).isSchedulableAfterNodeChange(logger, podOf("p", "", "zone-a"), nil, "not a node"); err == nil || got != fwk.Queue {
		t.Errorf("hint for an object that is no Node: %v, %v; want Queue and an error, so no Pod is stranded", got, err)
	}
}

func TestSignPodRefusesAPodOfAWorkload(t *testing.T) {
	ctx := context.Background()
	pl := &ZoneSpread{}
	if _, status := pl.SignPod(ctx, podOf("p", "rs-1", "zone-a")); status.Code() != fwk.Unschedulable {
		t.Errorf("SignPod of a Pod of a workload: %v, want Unschedulable (not signable): its score depends on its siblings", status.Code())
	}
	a, status := pl.SignPod(ctx, podOf("a", "", "zone-a"))
	if !status.IsSuccess() {
		t.Fatalf("SignPod of a Pod of no workload: %v, want Success", status.AsError())
	}
	b, _ := pl.SignPod(ctx, podOf("b", "", "zone-b"))
	if len(a) != 1 || len(b) != 1 || a[0].Key != b[0].Key || a[0].Value == b[0].Value {
		t.Errorf("SignPod: %+v and %+v, want one fragment each, same key, the zone as its value", a, b)
	}
}

func TestStubLetsEveryNodeThroughAndNeverFails(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	pl, err := NewStub(ctx, nil, nil)
	if err != nil || pl.Name() != Name {
		t.Fatalf("NewStub: %v, %v; want the plugin named %s", pl, err, Name)
	}
	stub := pl.(*Stub)
	for _, n := range []fwk.NodeInfo{nodeInZone("a", "zone-a"), nodeInZone("b", "")} {
		if status := stub.Filter(ctx, nil, podOf("p", "rs-1", "zone-z"), n); !status.IsSuccess() {
			t.Errorf("stub Filter on %s: %v, want Success", n.Node().Name, status.AsError())
		}
		if score, status := stub.Score(ctx, nil, podOf("p", "rs-1", ""), n); !status.IsSuccess() || score != fwk.MinNodeScore {
			t.Errorf("stub Score on %s: %d, %v; want %d, Success", n.Node().Name, score, status.AsError(), fwk.MinNodeScore)
		}
	}
}
