//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/controller-kit/controller-kit/test/kittest"
)

const (
	// topologyKey is the driver's topology key (controller.TopologyKey),
	// the label of config/examples/topology/nodes.yaml.
	topologyKey = "topology.toy.csi.controller-kit.dev/zone"
	// selectedNodeAnnotation is where the scheduler writes the node it
	// picked for a Pod into the Pod's claims of a WaitForFirstConsumer class.
	selectedNodeAnnotation = "volume.kubernetes.io/selected-node"
	// testZones is the tests' --zones: zone-a holds one 30Mi volume at most.
	testZones = "zone-a=40Mi,zone-b=1Gi"
)

// zonedDriver is a test driver with zones (testZones), and what lesson 7's
// section on topology applies: for each zone a kwok Node <namespace>-<zone>
// labelled with the driver's topology key, and its CSINode listing the driver
// with that key (the kubelet's part, by hand, as
// config/examples/topology/nodes.yaml plays it); and the driver's
// WaitForFirstConsumer class (config/storageclass-wffc.yaml), whose name it
// returns. The sidecars are not started.
func zonedDriver(t *testing.T, prefix string) (*testDriver, string) {
	t.Helper()
	d := newTestDriver(t, prefix, func(d *testDriver) { d.zones = testZones })
	for _, zone := range []string{"zone-a", "zone-b"} {
		node := d.namespace + "-" + zone
		kittest.KwokNode(t, d.cs, metav1.ObjectMeta{
			Name:   node,
			Labels: map[string]string{testNodeLabel: d.namespace, topologyKey: zone},
		})
		makeCSINode(t, d.cs, node, d.name, node, topologyKey)
	}
	class := d.name + "-wffc"
	d.applyShipped("config/storageclass-wffc.yaml", map[string]string{shippedClassLine: "name: " + d.name})
	return d, class
}

// createZonalPod creates a Pod called name using the claim of that name, which
// runs only on the test's own Nodes and prefers the one in zone prefer.
func (d *testDriver) createZonalPod(name, prefer string) {
	d.t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: d.namespace},
		Spec: corev1.PodSpec{
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{
						{Key: testNodeLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{d.namespace}},
						{Key: topologyKey, Operator: corev1.NodeSelectorOpExists},
					},
				}}},
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
					Weight: 100,
					Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
						{Key: topologyKey, Operator: corev1.NodeSelectorOpIn, Values: []string{prefer}},
					}},
				}},
			}},
			Containers: []corev1.Container{{Name: "app", Image: "busybox:1.37", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name},
			}}},
		},
	}
	if _, err := d.cs.CoreV1().Pods(d.namespace).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		d.t.Fatalf("creating Pod %s: %v", name, err)
	}
}

// waitPodOn waits until the Pod called name is bound to a node and returns
// the node's name.
func (d *testDriver) waitPodOn(name string) string {
	d.t.Helper()
	var node string
	kittest.Eventually(d.t, deadline, "Pod "+d.namespace+"/"+name+" bound to a node", func(ctx context.Context) (bool, error) {
		pod, err := d.cs.CoreV1().Pods(d.namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		node = pod.Spec.NodeName
		return node != "", nil
	})
	return node
}

// volumeZone returns the zone pv's node affinity requires (the driver's
// accessible_topology, as csi-provisioner wrote it), "" for none.
func volumeZone(pv *corev1.PersistentVolume) string {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return ""
	}
	for _, term := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		for _, e := range term.MatchExpressions {
			if e.Key == topologyKey && e.Operator == corev1.NodeSelectorOpIn && len(e.Values) == 1 {
				return e.Values[0]
			}
		}
	}
	return ""
}

// requireVolumeIn fails the test unless pv's node affinity and the driver's
// record of its volume both say zone.
func (d *testDriver) requireVolumeIn(pv *corev1.PersistentVolume, zone, why string) {
	d.t.Helper()
	if got := volumeZone(pv); got != zone {
		d.t.Errorf("volume %s: its node affinity requires %s %q, want %q: %s (CreateVolume answers the volume's zone as accessible_topology)", pv.Name, topologyKey, got, zone, why)
	}
	data, err := os.ReadFile(filepath.Join(d.volumeFolder(pv.Spec.CSI.VolumeHandle), "volume.json"))
	if err != nil {
		d.t.Errorf("volume %s: the driver's record: %v", pv.Name, err)
		return
	}
	var record struct {
		Zone string `json:"zone"`
	}
	if err := json.Unmarshal(data, &record); err != nil || record.Zone != zone {
		d.t.Errorf("volume %s: the driver's record says zone %q (%v), want %q", pv.Name, record.Zone, err, zone)
	}
}

// setStorageCapacity sets the test driver's CSIDriver's spec.storageCapacity:
// whether the scheduler reads its CSIStorageCapacity objects.
func (d *testDriver) setStorageCapacity(on bool) {
	d.t.Helper()
	patch := fmt.Appendf(nil, `{"spec":{"storageCapacity":%t}}`, on)
	if _, err := d.cs.StorageV1().CSIDrivers().Patch(context.Background(), d.name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		d.t.Fatalf("setting CSIDriver %s's storageCapacity to %t: %v", d.name, on, err)
	}
}

// TestWaitingClaimIsProvisionedInItsPodsZone: once csi-provisioner has
// published both zones' capacity, a claim of the WaitForFirstConsumer class
// stays Pending with kube-controller-manager's WaitForFirstConsumer event and
// no CreateVolume; once a Pod that uses it is
// scheduled, the claim carries the selected node, and the driver makes the
// volume in that node's zone, which the PersistentVolume's node affinity names.
func TestWaitingClaimIsProvisionedInItsPodsZone(t *testing.T) {
	kittest.SkipElsewhere(t)
	t.Parallel()
	d, class := zonedDriver(t, "csi-wffc")
	d.startSidecars(false)
	// The scheduler keeps a Pod off a node whose zone has no CSIStorageCapacity
	// yet (the CSIDriver says storageCapacity: true): both zones' first.
	d.waitCapacities(class, map[string]string{"zone-a": "40Mi", "zone-b": "1Gi"}, "each zone's capacity (--zones), which the scheduler reads before it picks a node")
	d.createClaim("data", class, "10Mi")
	d.waitClaimEvent("data", "WaitForFirstConsumer")
	d.requirePending("data", "a claim of a WaitForFirstConsumer class waits for a Pod")
	if got := d.volumeFolders(); len(got) != 0 {
		t.Errorf("the driver has volumes %v before any Pod uses the claim, want none", got)
	}

	d.createZonalPod("data", "zone-b")
	pv := d.waitBound("data")
	node := d.waitPodOn("data")
	if want := d.namespace + "-zone-b"; node != want {
		t.Errorf("Pod data is on node %s, want %s, the node it prefers", node, want)
	}
	claim, err := d.cs.CoreV1().PersistentVolumeClaims(d.namespace).Get(context.Background(), "data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := claim.Annotations[selectedNodeAnnotation]; got != node {
		t.Errorf("claim data: annotation %s is %q, want %q, the Pod's node", selectedNodeAnnotation, got, node)
	}
	d.requireVolumeIn(pv, "zone-b", "the zone of the Pod's node (accessibility_requirements' first preferred)")
}

// TestCapacityIsPublishedPerZone: csi-provisioner asks GetCapacity for each
// zone of the WaitForFirstConsumer class and publishes the answers as
// CSIStorageCapacity objects, one per zone, which follow the volumes made.
func TestCapacityIsPublishedPerZone(t *testing.T) {
	kittest.SkipElsewhere(t)
	t.Parallel()
	d, class := zonedDriver(t, "csi-capacity")
	d.startSidecars(false)
	want := map[string]string{"zone-a": "40Mi", "zone-b": "1Gi"}
	d.waitCapacities(class, want, "each zone's capacity (--zones), nothing used yet")

	d.createClaim("data", class, "30Mi")
	d.createZonalPod("data", "zone-a")
	pv := d.waitBound("data")
	d.requireVolumeIn(pv, "zone-a", "the zone of the Pod's node")
	want["zone-a"] = "10Mi"
	d.waitCapacities(class, want, "zone-a less the 30Mi volume made there")
}

// waitCapacities waits until the driver's CSIStorageCapacity objects of class
// give each zone of want its capacity (a Kubernetes quantity).
func (d *testDriver) waitCapacities(class string, want map[string]string, why string) {
	d.t.Helper()
	var got map[string]string
	kittest.Eventually(d.t, deadline, fmt.Sprintf("CSIStorageCapacity objects of class %s with %v (%s)", class, want, why), func(ctx context.Context) (bool, error) {
		list, err := d.cs.StorageV1().CSIStorageCapacities(sidecarNamespace).List(ctx, metav1.ListOptions{LabelSelector: capacityDriverLabel + "=" + d.name})
		if err != nil {
			return false, err
		}
		got = capacitiesOf(list.Items, class)
		for zone, size := range want {
			q := resource.MustParse(size)
			if got[zone] != q.String() {
				return false, nil
			}
		}
		return true, nil
	})
}

// capacitiesOf maps each zone of the capacity objects of class to the capacity
// they give it ("" for none), as a Kubernetes quantity.
func capacitiesOf(items []storagev1.CSIStorageCapacity, class string) map[string]string {
	got := map[string]string{}
	for _, c := range items {
		if c.StorageClassName != class || c.NodeTopology == nil {
			continue
		}
		zone := c.NodeTopology.MatchLabels[topologyKey]
		got[zone] = ""
		if c.Capacity != nil {
			got[zone] = c.Capacity.String()
		}
	}
	return got
}

// TestFullZoneSendsThePodToAnother: a Pod that prefers zone-a, whose claim
// does not fit there. With the CSIDriver's storageCapacity off, the scheduler
// picks zone-a, the driver answers RESOURCE_EXHAUSTED, and csi-provisioner
// hands the Pod back (ProvisioningFailed, the selected node taken off the
// claim), again and again; with it on, the scheduler reads zone-a's
// CSIStorageCapacity and binds the Pod in zone-b, where the volume is made.
func TestFullZoneSendsThePodToAnother(t *testing.T) {
	kittest.SkipElsewhere(t)
	t.Parallel()
	d, class := zonedDriver(t, "csi-full")
	d.setStorageCapacity(false)
	d.startSidecars(false)
	d.createClaim("data", class, "50Mi")
	d.createZonalPod("data", "zone-a")
	event := d.waitProvisioningFailed("data")
	if !strings.Contains(event.Message, "ResourceExhausted") || !strings.Contains(event.Message, "zone-a") {
		t.Errorf("claim data's ProvisioningFailed event says %q, want CreateVolume's RESOURCE_EXHAUSTED naming zone-a (no room there)", event.Message)
	}
	d.requirePending("data", "no zone-a volume may be made for it")

	d.setStorageCapacity(true)
	pv := d.waitBound("data")
	if node, want := d.waitPodOn("data"), d.namespace+"-zone-b"; node != want {
		t.Errorf("Pod data is on node %s, want %s: zone-a's CSIStorageCapacity has no room for its claim", node, want)
	}
	d.requireVolumeIn(pv, "zone-b", "the zone with room, where the scheduler sent the Pod")
}
