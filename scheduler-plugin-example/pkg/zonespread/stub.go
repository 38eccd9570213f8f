package zonespread

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// Stub is the learner's starting point: a FilterPlugin that lets every node
// through and a ScorePlugin that gives every node the same score, each logging
// what the framework asks it (at -v=4). It never fails and never panics, so a
// profile with it schedules Pods as if it were not there. Lesson 8's exercises
// fill in Filter, then Score (counting only the Pods without a
// deletionTimestamp), then add EventsToRegister (EnqueueExtensions: the node
// events and the rejected Pod's own update, each with a queueing hint); the
// reference (ZoneSpread) is one answer.
type Stub struct{}

// The extension points Stub implements, checked by the compiler.
var (
	_ fwk.FilterPlugin = &Stub{}
	_ fwk.ScorePlugin  = &Stub{}
)

// NewStub is Stub's factory (a runtime.PluginFactory): the framework calls it
// once per profile that enables the plugin, with the plugin's arguments from
// the profile's pluginConfig (none here) and the framework's Handle.
func NewStub(_ context.Context, _ runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	return &Stub{}, nil
}

// Name returns the plugin's name, Name.
func (*Stub) Name() string { return Name }

// Filter lets every node through: a nil Status is Success.
func (*Stub) Filter(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	klog.FromContext(ctx).V(4).Info("Stub filter: every node fits", "pod", klog.KObj(pod), "node", klog.KObj(nodeInfo.Node()), "zoneAsked", RequestedZone(pod))
	return nil
}

// Score gives every node the lowest score, so it changes no choice.
func (*Stub) Score(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	klog.FromContext(ctx).V(4).Info("Stub score: the same for every node", "pod", klog.KObj(pod), "node", klog.KObj(nodeInfo.Node()))
	return fwk.MinNodeScore, nil
}

// ScoreExtensions returns nil: the stub's scores need no normalizing.
func (*Stub) ScoreExtensions() fwk.ScoreExtensions { return nil }
