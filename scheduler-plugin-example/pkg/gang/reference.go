package gang

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// Gang is the reference plugin. At the Permit point it holds a Pod of a gang
// (GroupLabel) until Size Pods of the gang are there, each with its node
// reserved, then allows the ones waiting and lets the last one through: the
// gang goes on to bind together. A Pod alone is rejected by the framework after
// PermitTimeout and goes back to the queue, and no Pod of a gang is bound
// alone.
//
// It needs no Reserve: nothing it keeps outlives a scheduling cycle (the
// framework keeps the waiting Pods, and a Pod rejected at Permit or after is
// unreserved by the framework, its node given back).
type Gang struct {
	handle fwk.Handle
	pods   corelisters.PodLister
}

// The extension points Gang implements, checked by the compiler.
var (
	_ fwk.PermitPlugin      = &Gang{}
	_ fwk.EnqueueExtensions = &Gang{}
)

// New is Gang's factory (a runtime.PluginFactory), which main.go registers
// under Name. It asks the scheduler's informer factory for the Pod lister here,
// before the factory starts, so the informer behind it runs (the scheduler's
// own Pod informer: no second watch).
func New(_ context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	if h == nil {
		return nil, fmt.Errorf("%s: no framework handle: the plugin reads the waiting Pods through it", Name)
	}
	return &Gang{handle: h, pods: h.SharedInformerFactory().Core().V1().Pods().Lister()}, nil
}

// Name returns the plugin's name, Name.
func (*Gang) Name() string { return Name }

// Permit lets a Pod of no gang through. For a Pod of a gang it counts the Pods
// of the same gang the framework holds at Permit (IterateOverWaitingPods):
// with this one they make Size, so it allows each of them (WaitingPod.Allow,
// which ends their wait in WaitOnPermit) and returns Success; otherwise the
// Pod waits, at most PermitTimeout, and the Pods of its gang that the queue
// holds are woken (activate) so that they come to Permit too.
//
// A Pod whose partner is already bound waits for a new partner all the same:
// the gang is formed once, at Permit, from the Pods waiting there.
func (g *Gang) Permit(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) (*fwk.Status, time.Duration) {
	group := Group(pod)
	if group == "" {
		return nil, 0
	}
	logger := klog.FromContext(ctx)
	var waiting []fwk.WaitingPod
	g.handle.IterateOverWaitingPods(func(wp fwk.WaitingPod) {
		if SameGang(wp.GetPod(), pod) {
			waiting = append(waiting, wp)
		}
	})
	if len(waiting)+1 >= Size {
		for _, wp := range waiting {
			logger.V(2).Info("Gang complete: allowing the Pod that waited", "pod", klog.KObj(wp.GetPod()), "gang", group)
			wp.Allow(Name)
		}
		logger.V(2).Info("Gang complete: the Pod goes on to bind", "pod", klog.KObj(pod), "gang", group, "node", nodeName)
		return nil, 0
	}
	g.activate(logger, state, pod)
	logger.V(2).Info("Gang incomplete: the Pod waits at Permit", "pod", klog.KObj(pod), "gang", group, "node", nodeName, "atPermit", len(waiting)+1, "size", Size, "timeout", PermitTimeout)
	return fwk.NewStatus(fwk.Wait, fmt.Sprintf("gang %s: %d of %d Pods at Permit", group, len(waiting)+1, Size)), PermitTimeout
}

// activate puts the unbound Pods of pod's gang into the cycle's PodsToActivate,
// which the scheduler moves to the active queue at the end of a scheduling
// cycle that did not fail (a Wait is no failure): a partner rejected at Permit
// sits in the unschedulable pool, which no event moves it out of (see
// EventsToRegister). It lists the gang in every namespace and keeps its own
// (SameGang): the scheduler's Pod informer has no namespace index, and a
// lister's Pods(namespace) would scan every Pod all the same, with a warning.
func (g *Gang) activate(logger klog.Logger, state fwk.CycleState, pod *v1.Pod) {
	data, err := state.Read(framework.PodsToActivateKey)
	if err != nil {
		return
	}
	toActivate, ok := data.(*framework.PodsToActivate)
	if !ok {
		return
	}
	members, err := g.pods.List(labels.SelectorFromSet(labels.Set{GroupLabel: Group(pod)}))
	if err != nil {
		logger.Error(err, "Listing the Pods of the gang", "pod", klog.KObj(pod), "gang", Group(pod))
		return
	}
	toActivate.Lock()
	defer toActivate.Unlock()
	for _, m := range members {
		if SameGang(m, pod) && m.Spec.NodeName == "" && m.DeletionTimestamp == nil {
			logger.V(4).Info("Waking the gang's other Pod", "pod", klog.KObj(m), "gang", Group(pod))
			toActivate.Map[m.Namespace+"/"+m.Name] = m
		}
	}
}

// EventsToRegister returns no event: a Pod this plugin rejected (alone at
// Permit until its timeout) can be helped only by the rest of its gang
// arriving, and the Pod that arrives wakes it (activate). No cluster event
// moves it back to be tried again; the queue's periodic flush of the
// unschedulable pool (5 minutes) does, and it waits at Permit once more. A
// plugin without this method would have every cluster event requeue it, each
// for another PermitTimeout alone.
func (*Gang) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return nil, nil
}
