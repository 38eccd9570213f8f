package gang

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// Stub is exercise 4's starting point: a PermitPlugin that lets every Pod
// through at once, logging (at -v=4) the gang it belongs to. A Pod of a gang is
// bound alone, as if the plugin were not there. The exercise makes its Permit
// hold a Pod of a gang until the gang has Size Pods at Permit (Wait, with
// PermitTimeout), then allow them all, and wake a gang member the queue holds
// (PodsToActivate); the reference (Gang) is one answer.
type Stub struct{}

// The extension point Stub implements, checked by the compiler.
var _ fwk.PermitPlugin = &Stub{}

// NewStub is Stub's factory (a runtime.PluginFactory).
func NewStub(_ context.Context, _ runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	return &Stub{}, nil
}

// Name returns the plugin's name, Name.
func (*Stub) Name() string { return Name }

// Permit lets the Pod through: a nil Status is Success, and the timeout is
// read only with Wait.
func (*Stub) Permit(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, nodeName string) (*fwk.Status, time.Duration) {
	klog.FromContext(ctx).V(4).Info("Stub permit: bound at once", "pod", klog.KObj(pod), "node", nodeName, "gang", Group(pod))
	return nil, 0
}
