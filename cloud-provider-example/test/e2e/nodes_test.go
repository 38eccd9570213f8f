//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"

	"github.com/controller-kit/controller-kit/test/kittest"
)

const (
	// uninitializedTaint is the taint a kubelet run with --cloud-provider=external
	// registers its Node with, and the cloud-node controller takes away
	// (cloudproviderapi.TaintExternalCloudProvider).
	uninitializedTaint = "node.cloudprovider.kubernetes.io/uninitialized"
	// toyNodePrefix begins the name of every Node this suite makes for a machine
	// of the toy cloud; every other Node is the cluster's own.
	toyNodePrefix = "toy-e2e-"
)

// nodeView is what the cloud-node controller could change on a Node: its
// provider ID, labels, taints and addresses.
type nodeView struct {
	ProviderID string
	Labels     map[string]string
	Taints     []string
	Addresses  []corev1.NodeAddress
}

func viewOf(n *corev1.Node) nodeView {
	v := nodeView{ProviderID: n.Spec.ProviderID, Labels: n.Labels, Addresses: n.Status.Addresses}
	for _, t := range n.Spec.Taints {
		v.Taints = append(v.Taints, t.Key+"="+t.Value+":"+string(t.Effect))
	}
	return v
}

func (v nodeView) equal(o nodeView) bool {
	return v.ProviderID == o.ProviderID && maps.Equal(v.Labels, o.Labels) && slices.Equal(v.Taints, o.Taints) && slices.Equal(v.Addresses, o.Addresses)
}

// clusterNodes returns what the cloud-node controller could change on each of
// the cluster's own Nodes (kwok's on the kit's local cluster, kind's on kind),
// by name, once every one of them is Ready with its addresses (on a cluster
// started a moment ago, kwok or the kubelet is still reporting them).
func clusterNodes(t *testing.T, cs kubernetes.Interface) map[string]nodeView {
	t.Helper()
	views := map[string]nodeView{}
	kittest.Eventually(t, deadline, "the cluster's Nodes to be Ready, with their addresses", func(ctx context.Context) (bool, error) {
		list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		clear(views)
		for i := range list.Items {
			n := &list.Items[i]
			if strings.HasPrefix(n.Name, toyNodePrefix) {
				continue
			}
			ready := slices.ContainsFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool {
				return c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
			})
			if !ready || len(n.Status.Addresses) == 0 {
				return false, nil
			}
			views[n.Name] = viewOf(n)
		}
		return len(views) > 0, nil
	})
	return views
}

// TestExerciseCloudNodeControllerInitializesTheMachinesNodeOnly checks lesson
// 5's second exercise, beyond the reference; it runs only with EXERCISE=nodes.
// A Node of a machine the cloud config lists, registered with the uninitialized
// taint, gets the machine's provider ID, addresses, instance type, zone and
// region, a Normal Synced event, and loses the taint; the cluster's own Nodes
// (kwok's, or kind's), no machines of the toy cloud, keep their provider ID,
// labels, taints and addresses while the controller asks about them every
// second.
func TestExerciseCloudNodeControllerInitializesTheMachinesNodeOnly(t *testing.T) {
	kittest.Exercise(t, "nodes")
	cs := clients(t)
	ns := kittest.Namespace(t, cs, "cloud-nodes")
	ctx := context.Background()
	before := clusterNodes(t, cs)

	// A machine of a name of its own, so that a Node left from an earlier run
	// is never taken for this one.
	name := toyNodePrefix + rand.String(5)
	address := "198.51.100.200"
	config := filepath.Join(t.TempDir(), "cloud-config.yaml")
	if err := os.WriteFile(config, fmt.Appendf(nil, "machines:\n- name: %s\n  address: %s\n  type: toy.small\n  zone: toy-zone-a\n", name, address), 0o644); err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{
			{Key: uninitializedTaint, Value: "true", Effect: corev1.TaintEffectNoSchedule},
		}},
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Node %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := cs.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting Node %s: %v", name, err)
		}
	})

	// --node-status-update-frequency=1s: the controller asks the cloud about
	// every Node's addresses each second (5 minutes by default).
	startManager(t, cs, "manager", ns, "", "--controllers=cloud-node-controller",
		"--cloud-config="+config, "--node-status-update-frequency=1s")

	var got *corev1.Node
	kittest.Eventually(t, deadline, "Node "+name+" to lose the "+uninitializedTaint+" taint", func(ctx context.Context) (bool, error) {
		var err error
		got, err = cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return !slices.ContainsFunc(got.Spec.Taints, func(t corev1.Taint) bool { return t.Key == uninitializedTaint }), nil
	})
	// The addresses come in a second write, right after the taint goes.
	kittest.Eventually(t, deadline, "Node "+name+" to get its machine's addresses", func(ctx context.Context) (bool, error) {
		var err error
		got, err = cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		return err == nil && len(got.Status.Addresses) > 0, err
	})
	if want := "toycloud://" + name; got.Spec.ProviderID != want {
		t.Errorf("Node %s has spec.providerID %q, want %q", name, got.Spec.ProviderID, want)
	}
	for label, want := range map[string]string{
		corev1.LabelInstanceTypeStable: "toy.small",
		corev1.LabelTopologyZone:       "toy-zone-a",
		corev1.LabelTopologyRegion:     "toy-region-1",
	} {
		if got.Labels[label] != want {
			t.Errorf("Node %s has the label %s=%q, want %q", name, label, got.Labels[label], want)
		}
	}
	wantAddresses := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: address}, {Type: corev1.NodeHostName, Address: name}}
	if !slices.Equal(got.Status.Addresses, wantAddresses) {
		t.Errorf("Node %s has the addresses %v, want %v", name, got.Status.Addresses, wantAddresses)
	}
	selector := fields.Set{"involvedObject.kind": "Node", "involvedObject.name": name, "reason": "Synced"}.String()
	kittest.Eventually(t, deadline, "a Normal Synced event on Node "+name, func(ctx context.Context) (bool, error) {
		// The recorder writes a Node's events to the default namespace.
		events, err := cs.CoreV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{FieldSelector: selector})
		return err == nil && len(events.Items) > 0, err
	})

	// Three more rounds of questions about every Node, then the cluster's own
	// are compared.
	time.Sleep(3 * time.Second)
	after := clusterNodes(t, cs)
	for n, was := range before {
		if now, ok := after[n]; ok && !now.equal(was) {
			t.Errorf("the cluster's Node %s, no machine of the toy cloud, was changed:\n  before: %+v\n  after:  %+v", n, was, now)
		}
	}
}
