//go:build e2e

package e2e

import (
	"context"
	"slices"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// TestPodOnANodeGetsItsVolumeAttachedAndDetached plays the kubelet's part by
// hand on a kwok node (the annotation that hands its volumes to the
// attach-detach controller, and a CSINode with the driver's node ID): a Pod on
// that node using a claim gets a VolumeAttachment of the driver that
// csi-attacher marks attached, through the driver's ControllerPublishVolume;
// deleting the Pod detaches the volume, and the VolumeAttachment goes away.
func TestPodOnANodeGetsItsVolumeAttachedAndDetached(t *testing.T) {
	kittest.SkipElsewhere(t)
	t.Parallel()
	cs := kittest.Clientset(t)
	d := newTestDriver(t, "csi-attach", onNodeOfNamespace)
	node := d.nodeID
	makeManagedNode(t, cs, node)
	makeCSINode(t, cs, node, d.name, node)
	d.startSidecars(true)
	d.createClaim("data", d.name, "10Mi")
	pv := d.waitBound("data")

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "user", Namespace: d.namespace},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "app", Image: "busybox:1.37", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"},
			}}},
		},
	}
	if _, err := cs.CoreV1().Pods(d.namespace).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Pod user: %v", err)
	}
	var attachment string
	kittest.Eventually(t, deadline, "a VolumeAttachment of volume "+pv.Name+" on node "+node+", attached", func(ctx context.Context) (bool, error) {
		va, err := d.attachmentOf(ctx, pv.Name)
		if err != nil || va == nil {
			return false, err
		}
		attachment = va.Name
		if va.Spec.Attacher != d.name || va.Spec.NodeName != node {
			t.Fatalf("VolumeAttachment %s: attacher %q on node %q, want %q on %q", va.Name, va.Spec.Attacher, va.Spec.NodeName, d.name, node)
		}
		return va.Status.Attached, nil
	})
	// csi-attacher marks a VolumeAttachment attached without asking a driver
	// that offers no ControllerPublishVolume: only the capability proves it asked.
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	capabilities, err := csi.NewControllerClient(d.conn()).ControllerGetCapabilities(ctx, &csi.ControllerGetCapabilitiesRequest{})
	if err != nil {
		t.Fatalf("ControllerGetCapabilities: %v", err)
	}
	if !slices.ContainsFunc(capabilities.GetCapabilities(), func(c *csi.ControllerServiceCapability) bool {
		return c.GetRpc().GetType() == csi.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME
	}) {
		t.Errorf("ControllerGetCapabilities: %v, want PUBLISH_UNPUBLISH_VOLUME among them: without it csi-attacher marks VolumeAttachment %s attached without calling ControllerPublishVolume", capabilities.GetCapabilities(), attachment)
	}

	if err := cs.CoreV1().Pods(d.namespace).Delete(context.Background(), "user", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatalf("deleting Pod user: %v", err)
	}
	kittest.Eventually(t, deadline, "VolumeAttachment "+attachment+" to be gone (the volume detached: ControllerUnpublishVolume)", func(ctx context.Context) (bool, error) {
		_, err := cs.StorageV1().VolumeAttachments().Get(ctx, attachment, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// attachmentOf returns the VolumeAttachment of the PersistentVolume called
// volume, nil when there is none.
func (d *testDriver) attachmentOf(ctx context.Context, volume string) (*storagev1.VolumeAttachment, error) {
	list, err := d.cs.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i, va := range list.Items {
		if name := va.Spec.Source.PersistentVolumeName; name != nil && *name == volume {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// makeManagedNode creates a kwok Node called name whose volumes the
// attach-detach controller attaches (managedAttachAnnotation, which the kubelet
// would set), waits until kwok reports it Ready, and deletes it at cleanup.
func makeManagedNode(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	kittest.KwokNode(t, cs, metav1.ObjectMeta{
		Name:        name,
		Labels:      map[string]string{testNodeLabel: "true"},
		Annotations: map[string]string{managedAttachAnnotation: "true"},
	})
}

// makeCSINode creates the CSINode of node, which the kubelet writes once a
// driver registers on it: it lists driver with its node ID, where csi-attacher
// reads the node_id it gives ControllerPublishVolume, and the driver's
// topology keys, where csi-provisioner reads which of the Node's labels are
// its zone. It is deleted at cleanup.
func makeCSINode(t *testing.T, cs kubernetes.Interface, node, driver, nodeID string, topologyKeys ...string) {
	t.Helper()
	csiNode := &storagev1.CSINode{
		ObjectMeta: metav1.ObjectMeta{Name: node},
		Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{
			Name: driver, NodeID: nodeID, TopologyKeys: topologyKeys,
		}}},
	}
	if _, err := cs.StorageV1().CSINodes().Create(context.Background(), csiNode, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating CSINode %s: %v", node, err)
	}
	t.Cleanup(func() {
		if err := cs.StorageV1().CSINodes().Delete(context.Background(), node, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Logf("cannot delete CSINode %s: %v", node, err)
		}
	})
}
