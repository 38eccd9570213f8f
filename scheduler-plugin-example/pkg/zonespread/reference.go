package zonespread

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// ZoneSpread is the reference plugin. At the filter point it keeps a Pod that
// asks for a zone (ZoneAnnotation) to the nodes labelled with that zone
// (ZoneLabel); at the score point it prefers the nodes that hold the fewest
// Pods of the Pod's workload (Workload), so one workload's Pods spread evenly
// over the nodes that fit. It also tells the scheduling queue which cluster
// events can make a Pod it rejected schedulable (EnqueueExtensions), and signs
// Pods for opportunistic batching where its answers allow it (SignPlugin).
type ZoneSpread struct{}

// The extension points ZoneSpread implements, checked by the compiler: the
// framework looks for each with a type assertion, so a method with a wrong
// signature would otherwise be skipped in silence.
var (
	_ fwk.FilterPlugin      = &ZoneSpread{}
	_ fwk.ScorePlugin       = &ZoneSpread{}
	_ fwk.ScoreExtensions   = &ZoneSpread{}
	_ fwk.EnqueueExtensions = &ZoneSpread{}
	_ fwk.SignPlugin        = &ZoneSpread{}
)

// New is ZoneSpread's factory (a runtime.PluginFactory), which main.go
// registers under Name. ZoneSpread takes no arguments and keeps no state: what
// it needs of the cluster comes with each call (the Pod, the node's NodeInfo
// from the scheduler's snapshot).
func New(_ context.Context, _ runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	return &ZoneSpread{}, nil
}

// Name returns the plugin's name, Name.
func (*ZoneSpread) Name() string { return Name }

// Filter passes a node when the Pod asks for no zone or the node is labelled
// with the zone it asks for. Otherwise it rejects the node as
// UnschedulableAndUnresolvable: no preemption can help, since evicting Pods
// does not change a node's labels. The reason names the zone and not the node,
// so that the FailedScheduling event sums the nodes up under one reason
// ("3 node(s) not in zone zone-c, ...").
func (*ZoneSpread) Filter(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	zone := RequestedZone(pod)
	if zone == "" {
		return nil
	}
	node := nodeInfo.Node()
	if node.Labels[ZoneLabel] == zone {
		return nil
	}
	klog.FromContext(ctx).V(5).Info("Node is not in the zone the Pod asks for", "pod", klog.KObj(pod), "node", klog.KObj(node), "zone", zone)
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("node(s) not in zone %s (label %s)", zone, ZoneLabel))
}

// Score counts the Pods of the Pod's workload already on the node, those bound
// and those the scheduler has assumed there but not bound yet (NodeInfo holds
// both). A Pod with a deletionTimestamp is not counted: it is going away (a
// node drained, a rolling restart, a slow graceful shutdown), and counted it
// would send its own replacement to another node. A Pod of no workload scores 0
// everywhere. NormalizeScore turns the counts into scores, fewest Pods highest.
func (*ZoneSpread) Score(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	workload := Workload(pod)
	if workload == "" {
		return 0, nil
	}
	var siblings int64
	for _, p := range nodeInfo.GetPods() {
		if p.GetPod().DeletionTimestamp == nil && Workload(p.GetPod()) == workload {
			siblings++
		}
	}
	return siblings, nil
}

// ScoreExtensions returns the plugin itself: its Score returns counts, which
// NormalizeScore maps into the framework's range.
func (pl *ZoneSpread) ScoreExtensions() fwk.ScoreExtensions { return pl }

// NormalizeScore maps the counts Score returned into [MinNodeScore,
// MaxNodeScore], reversed: the node with the most Pods of the workload gets
// MinNodeScore, a node with none MaxNodeScore. The framework checks that each
// score is in range after this, and fails the cycle if one is not.
func (*ZoneSpread) NormalizeScore(_ context.Context, _ fwk.CycleState, _ *v1.Pod, scores fwk.NodeScoreList) *fwk.Status {
	var most int64
	for _, s := range scores {
		most = max(most, s.Score)
	}
	for i := range scores {
		if most == 0 {
			scores[i].Score = fwk.MaxNodeScore
			continue
		}
		scores[i].Score = fwk.MaxNodeScore * (most - scores[i].Score) / most
	}
	return nil
}

// EventsToRegister tells the scheduling queue which cluster events may make a
// Pod this plugin rejected schedulable: a change to what Filter reads, the
// nodes' zone labels and the Pod's own zone annotation, and nothing else.
//
//   - A node added or relabelled (Node, Add|UpdateNodeLabel): the hint,
//     isSchedulableAfterNodeChange, lets through only a node that now has the
//     zone the Pod asks for.
//   - The rejected Pod itself updated (TargetPod, Update): an annotation has no
//     narrower Pod event, so an edit of it reaches the queue as the general
//     Update, and the hint, isSchedulableAfterPodZoneChange, lets through only
//     a change of the zone the Pod asks for (a typo fixed). TargetPod is the
//     Pod the queue holds, not the other Pods of the cluster, whose annotations
//     this Filter never reads.
//
// Any other event (a Pod deleted, a node's taints or allocatable changed)
// leaves the Pod where it is, in the unschedulable pool, instead of costing a
// scheduling cycle that would fail the same way. A plugin without this method
// is registered for every event: correct, but each event moves every Pod it
// rejected back to be tried again. A plugin that leaves out an event that can
// help is wrong: the Pod waits for the queue's flush of the pool, 5 minutes.
func (pl *ZoneSpread) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeLabel}, QueueingHintFn: pl.isSchedulableAfterNodeChange},
		{Event: fwk.ClusterEvent{Resource: fwk.TargetPod, ActionType: fwk.Update}, QueueingHintFn: pl.isSchedulableAfterPodZoneChange},
	}, nil
}

// isSchedulableAfterNodeChange is the QueueingHintFn of a node added or
// relabelled: Queue when the node now carries the zone the Pod asks for and did
// not before (oldObj is nil for a node added), QueueSkip otherwise. An object
// of another type is an error, which the queue takes as Queue, so a Pod is
// never stranded by a mistake here.
func (*ZoneSpread) isSchedulableAfterNodeChange(logger klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (fwk.QueueingHint, error) {
	zone := RequestedZone(pod)
	node, ok := newObj.(*v1.Node)
	if !ok {
		return fwk.Queue, fmt.Errorf("want a *v1.Node, got %T", newObj)
	}
	if zone == "" || node.Labels[ZoneLabel] != zone {
		logger.V(5).Info("Node added or relabelled, not in the zone the Pod asks for", "pod", klog.KObj(pod), "node", klog.KObj(node), "zone", zone)
		return fwk.QueueSkip, nil
	}
	if old, ok := oldObj.(*v1.Node); ok && old.Labels[ZoneLabel] == zone {
		return fwk.QueueSkip, nil
	}
	logger.V(4).Info("Node now in the zone the Pod asks for: trying the Pod again", "pod", klog.KObj(pod), "node", klog.KObj(node), "zone", zone)
	return fwk.Queue, nil
}

// isSchedulableAfterPodZoneChange is the QueueingHintFn of the rejected Pod
// updated: Queue when the update changed the zone it asks for (edited or taken
// away), QueueSkip for any other change (a label, an owner, the scheduler's own
// status write), which leaves Filter's answer as it was. The new zone may be
// one no node has either: Filter, not the hint, says so, with a
// FailedScheduling event naming it. An object that is no Pod is an error, taken
// as Queue.
func (*ZoneSpread) isSchedulableAfterPodZoneChange(logger klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (fwk.QueueingHint, error) {
	oldPod, okOld := oldObj.(*v1.Pod)
	newPod, okNew := newObj.(*v1.Pod)
	if !okOld || !okNew {
		return fwk.Queue, fmt.Errorf("want two *v1.Pod, got %T and %T", oldObj, newObj)
	}
	if newPod.UID != pod.UID || RequestedZone(oldPod) == RequestedZone(newPod) {
		return fwk.QueueSkip, nil
	}
	logger.V(4).Info("Pod now asks for another zone: trying it again", "pod", klog.KObj(pod), "oldZone", RequestedZone(oldPod), "zone", RequestedZone(newPod))
	return fwk.Queue, nil
}

// SignPod answers for opportunistic batching (KEP-5598): a Pod with the same
// signature as the Pod before it may take its node from the list that Pod's
// scheduling cycle scored, once the node chosen last has been filtered again
// (and scored again if it still fits: framework/runtime/batch.go). A plugin at a
// filter or score point, their Pre- points included, that does not implement
// SignPlugin turns batching off for every Pod of the profile, so the reference
// implements it.
// Its Filter reads only the zone the Pod asks for, so that is the Pod's
// fragment. Its Score reads where the workload's other Pods are, which nothing
// in the Pod itself says, so a Pod of a workload is refused (Unschedulable
// here means "not signable", not "cannot be scheduled"), as the in-tree
// PodTopologySpread and InterPodAffinity refuse the Pods whose placement
// depends on other Pods. With the shipped profile no Pod is signed anyway:
// PodTopologySpread, on at filter, refuses every Pod while its default
// constraints are on. Lesson 8's exercises leave SignPod out.
func (*ZoneSpread) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	if Workload(pod) != "" {
		return nil, fwk.NewStatus(fwk.Unschedulable, "a Pod of a workload is not signable: its score depends on where the workload's other Pods are")
	}
	return []fwk.SignFragment{{Key: "v1.Pod.Annotations[" + ZoneAnnotation + "]", Value: RequestedZone(pod)}}, nil
}
