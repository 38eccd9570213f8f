package gang

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
)

// handle is the part of the framework's Handle that Gang uses: the Pods
// waiting at Permit and the informer factory. Any other method panics (the
// embedded interface is nil), which would show a use the tests do not expect.
type handle struct {
	fwk.Handle
	waiting   []*waitingPod
	informers informers.SharedInformerFactory
}

func (h *handle) IterateOverWaitingPods(callback func(fwk.WaitingPod)) {
	for _, wp := range h.waiting {
		callback(wp)
	}
}

func (h *handle) SharedInformerFactory() informers.SharedInformerFactory { return h.informers }

// waitingPod is a Pod held at Permit that records whether it was allowed.
type waitingPod struct {
	fwk.WaitingPod
	pod     *v1.Pod
	allowed bool
}

func (w *waitingPod) GetPod() *v1.Pod     { return w.pod }
func (w *waitingPod) Allow(plugin string) { w.allowed = plugin == Name }

// podOf returns a Pod of namespace called name, of gang group ("" for none),
// bound to node ("" for unbound).
func podOf(namespace, name, group, node string) *v1.Pod {
	w := st.MakePod().Namespace(namespace).Name(name).UID(namespace + "/" + name).Node(node)
	if group != "" {
		w = w.Label(GroupLabel, group)
	}
	return w.Obj()
}

// newGang returns a Gang whose handle holds waiting at Permit and whose Pod
// lister holds pods.
func newGang(t *testing.T, waiting []*waitingPod, pods ...*v1.Pod) *Gang {
	t.Helper()
	factory := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	for _, p := range pods {
		if err := factory.Core().V1().Pods().Informer().GetIndexer().Add(p); err != nil {
			t.Fatal(err)
		}
	}
	pl, err := New(t.Context(), nil, &handle{waiting: waiting, informers: factory})
	if err != nil {
		t.Fatal(err)
	}
	return pl.(*Gang)
}

// cycleState returns a CycleState with an empty PodsToActivate, as the
// scheduler writes one at the start of each cycle.
func cycleState() (fwk.CycleState, *framework.PodsToActivate) {
	state := framework.NewCycleState()
	toActivate := framework.NewPodsToActivate()
	state.Write(framework.PodsToActivateKey, toActivate)
	return state, toActivate
}

func TestPermitLetsAPodOfNoGangThrough(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	state, _ := cycleState()
	status, _ := newGang(t, nil).Permit(ctx, state, podOf("ns", "alone", "", ""), "node-1")
	if !status.IsSuccess() {
		t.Fatalf("Permit of a Pod without %s: %v, want Success", GroupLabel, status)
	}
}

func TestPermitHoldsTheFirstPodOfAGangAndWakesItsPartner(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	first := podOf("ns", "first", "pair", "")
	pending := podOf("ns", "second", "pair", "")
	others := []*v1.Pod{
		podOf("ns", "bound", "pair", "node-2"),     // bound already: nothing to wake
		podOf("ns", "stranger", "other", ""),       // another gang
		podOf("elsewhere", "namesake", "pair", ""), // the same group in another namespace
		podOf("ns", "loner", "", ""),               // no gang
	}
	stranger := &waitingPod{pod: podOf("ns", "waiting-stranger", "other", "node-3")}
	state, toActivate := cycleState()
	status, timeout := newGang(t, []*waitingPod{stranger}, append(others, first, pending)...).Permit(ctx, state, first, "node-1")
	if status.Code() != fwk.Wait || timeout != PermitTimeout {
		t.Fatalf("Permit of a gang's first Pod: %v, %v; want Wait for %v", status, timeout, PermitTimeout)
	}
	if stranger.allowed {
		t.Errorf("Permit allowed %s, a Pod of another gang", stranger.pod.Name)
	}
	var woken []string
	for key := range toActivate.Map {
		woken = append(woken, key)
	}
	if !slices.Equal(woken, []string{"ns/second"}) {
		t.Errorf("Pods to activate: %v, want [ns/second], the gang's other unbound Pod", woken)
	}
}

func TestPermitLetsTheGangGoWhenItsSecondPodArrives(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	partner := &waitingPod{pod: podOf("ns", "first", "pair", "node-1")}
	namesake := &waitingPod{pod: podOf("elsewhere", "first", "pair", "node-1")}
	state, _ := cycleState()
	status, _ := newGang(t, []*waitingPod{partner, namesake}).Permit(ctx, state, podOf("ns", "second", "pair", ""), "node-2")
	if !status.IsSuccess() {
		t.Fatalf("Permit of a gang's second Pod: %v, want Success", status)
	}
	if !partner.allowed {
		t.Errorf("the Pod waiting at Permit, %s, was not allowed by %s", partner.pod.Name, Name)
	}
	if namesake.allowed {
		t.Errorf("a Pod of the same group in another namespace was allowed: another gang")
	}
}

func TestEventsToRegisterIsEmpty(t *testing.T) {
	events, err := (&Gang{}).EventsToRegister(t.Context())
	if err != nil || len(events) != 0 {
		t.Fatalf("EventsToRegister: %v, %v; want none: only the gang's other Pod, which wakes it, can help a Pod Gang rejected", events, err)
	}
}

func TestNewWithoutAHandleFails(t *testing.T) {
	if _, err := New(t.Context(), nil, nil); err == nil {
		t.Fatal("New(nil handle): no error, want one (the plugin reads the waiting Pods through the handle)")
	}
}
