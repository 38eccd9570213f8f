//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/controller-kit/controller-kit/test/kittest"
)

// TestClaimIsBoundToAVolumeOfTheDriver is make test's smoke of lesson 7: a
// claim of the driver's StorageClass is Bound to a PersistentVolume of the
// driver, of the size the claim asked for, whose volume is a folder of the
// driver.
func TestClaimIsBoundToAVolumeOfTheDriver(t *testing.T) {
	t.Parallel()
	d := newTestDriver(t, "csi-bound")
	d.startSidecars(false)
	d.createClaim("data", d.name, "10Mi")
	pv := d.waitBound("data")
	if pv.Spec.CSI.Driver != d.name {
		t.Errorf("volume %s: spec.csi.driver is %q, want %q", pv.Name, pv.Spec.CSI.Driver, d.name)
	}
	if got, want := pv.Spec.Capacity[corev1.ResourceStorage], resource.MustParse("10Mi"); got.Cmp(want) != 0 {
		t.Errorf("volume %s: capacity %s, want %s, what the claim asked for (CreateVolume's capacity_bytes)", pv.Name, got.String(), want.String())
	}
	d.requireFolder(pv, true, "the driver keeps each volume it made as a folder of its own, named after the volume's ID")
}

// TestCreateVolumeIsIdempotentByName asks the driver on its socket, as
// csi-provisioner does, for one volume twice: the second answer is the first
// volume, and the driver has one folder. The same name with another size is
// ALREADY_EXISTS (the CSI spec's CreateVolume errors).
func TestCreateVolumeIsIdempotentByName(t *testing.T) {
	t.Parallel()
	d := newTestDriver(t, "csi-idempotent")
	controller := csi.NewControllerClient(d.conn())
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	request := &csi.CreateVolumeRequest{
		Name:               "pvc-twice",
		CapacityRange:      &csi.CapacityRange{RequiredBytes: 10 << 20},
		VolumeCapabilities: mountCapability(),
	}
	first, err := controller.CreateVolume(ctx, request)
	if err != nil {
		t.Fatalf("CreateVolume %s: %v", request.Name, err)
	}
	second, err := controller.CreateVolume(ctx, request)
	if err != nil {
		t.Fatalf("CreateVolume %s a second time: %v; want the volume of the first call (a sidecar that timed out asks again)", request.Name, err)
	}
	if first.GetVolume().GetVolumeId() != second.GetVolume().GetVolumeId() {
		t.Errorf("CreateVolume %s twice made volumes %q and %q, want the same volume both times", request.Name, first.GetVolume().GetVolumeId(), second.GetVolume().GetVolumeId())
	}
	if got := d.volumeFolders(); len(got) != 1 {
		t.Errorf("the driver's volumes folder has %d volumes (%v) after CreateVolume %s twice, want 1", len(got), got, request.Name)
	}
	request.CapacityRange.RequiredBytes = 20 << 20
	_, err = controller.CreateVolume(ctx, request)
	if status.Code(err) != codes.AlreadyExists {
		t.Errorf("CreateVolume %s again with 20Mi (it has 10Mi): %v, want code AlreadyExists", request.Name, err)
	}
}

// TestClaimAboveTheMaximumGetsAnEventAndNoVolume: a claim larger than the
// driver makes gets a ProvisioningFailed event that names the limit, and no
// volume; and csi-provisioner asks again with a growing pause, not in a loop.
func TestClaimAboveTheMaximumGetsAnEventAndNoVolume(t *testing.T) {
	t.Parallel()
	d := newTestDriver(t, "csi-too-big")
	d.startSidecars(false)
	d.createClaim("too-big", d.name, "2Gi")
	event := d.waitProvisioningFailed("too-big")
	if !strings.Contains(event.Message, maxVolumeSize) && !strings.Contains(event.Message, maxVolumeBytes) {
		t.Errorf("ProvisioningFailed event: %q, want it to name the limit, %s (%s bytes), so the user knows what to ask for", event.Message, maxVolumeSize, maxVolumeBytes)
	}
	// What the user sees after half a minute is a count: how many times the
	// claim failed (the events' counts), not how fast. csi-provisioner retries
	// a claim with a pause that doubles from 1 s (--retry-interval-start), so
	// about five times in 30 s; run in a loop (--retry-interval-start=10ms) it
	// failed 25 times, the most events the recorder writes about one object.
	const window, most = 30 * time.Second, 10
	time.Sleep(window)
	events, err := d.claimEvents(context.Background(), "too-big", "ProvisioningFailed")
	if err != nil {
		t.Fatal(err)
	}
	failures := int32(0)
	for _, e := range events {
		failures += max(e.Count, 1)
	}
	t.Logf("claim too-big failed %d times in about %s", failures, window)
	if failures > most {
		t.Errorf("claim too-big failed %d times in about %s (its ProvisioningFailed events' counts), want at most %d: a retry in a loop", failures, window, most)
	}
	d.requirePending("too-big", "the driver makes no volume above "+maxVolumeSize)
	if got := d.volumeFolders(); len(got) != 0 {
		t.Errorf("the driver's volumes folder has %v, want nothing: no volume was made", got)
	}
}

// TestClaimOfAnAccessModeTheDriverLacksGetsAnEventAndNoVolume: a claim many
// nodes would write to (ReadWriteMany), which a volume of one node's folders
// cannot serve, gets a ProvisioningFailed event that names the access mode, and
// no volume.
func TestClaimOfAnAccessModeTheDriverLacksGetsAnEventAndNoVolume(t *testing.T) {
	t.Parallel()
	d := newTestDriver(t, "csi-rwx")
	d.startSidecars(false)
	d.createClaimOf("shared", d.name, "10Mi", corev1.ReadWriteMany)
	event := d.waitProvisioningFailed("shared")
	// csi-provisioner asks for ReadWriteMany as MULTI_NODE_MULTI_WRITER.
	message := strings.ToLower(event.Message)
	if !strings.Contains(message, "access_mode") && !strings.Contains(message, "access mode") && !strings.Contains(message, "multi_node") {
		t.Errorf("ProvisioningFailed event: %q, want it to name the access mode (MULTI_NODE_MULTI_WRITER, which the claim's ReadWriteMany asks for), so the user knows what to change", event.Message)
	}
	d.requirePending("shared", "the driver serves one node's volumes only")
	if got := d.volumeFolders(); len(got) != 0 {
		t.Errorf("the driver's volumes folder has %v, want nothing: no volume was made", got)
	}
}

// TestDeletedClaimDeletesOrRetainsItsVolume: deleting a claim of a Delete class
// deletes its PersistentVolume and the driver's folder (DeleteVolume); one of
// a Retain class keeps both, the volume Released.
func TestDeletedClaimDeletesOrRetainsItsVolume(t *testing.T) {
	t.Parallel()
	d := newTestDriver(t, "csi-reclaim")
	retain := d.retainClass()
	d.startSidecars(false)
	d.createClaim("deleted", d.name, "10Mi")
	d.createClaim("retained", retain, "10Mi")
	deleted, retained := d.waitBound("deleted"), d.waitBound("retained")
	d.requireFolder(deleted, true, "the claim is Bound to it")
	d.deleteClaim("deleted")
	d.deleteClaim("retained")
	d.waitGone(deleted.Name, "its class's reclaimPolicy is Delete")
	d.requireFolder(deleted, false, "csi-provisioner called DeleteVolume before it deleted the PersistentVolume")
	kittest.Eventually(t, deadline, "volume "+retained.Name+" Released", func(ctx context.Context) (bool, error) {
		pv, err := d.cs.CoreV1().PersistentVolumes().Get(ctx, retained.Name, metav1.GetOptions{})
		return err == nil && pv.Status.Phase == corev1.VolumeReleased, err
	})
	d.requireFolder(retained, true, "its class's reclaimPolicy is Retain: the volume and its data stay for the administrator")
}

// TestDriverRestartLosesNoVolume: a driver stopped and started again still has
// the volume it made before: CreateVolume of that name answers that volume,
// and deleting its claim deletes the volume's folder; a new claim binds.
func TestDriverRestartLosesNoVolume(t *testing.T) {
	t.Parallel()
	d := newTestDriver(t, "csi-restart")
	sidecars := d.startSidecars(false)
	d.createClaim("before", d.name, "10Mi")
	before := d.waitBound("before")

	// The sidecars exit when they lose the driver's socket (their way of
	// having the kubelet start them again); stop them first, then the driver.
	sidecars.stop()
	if _, err := d.driver.Stop(15 * time.Second); err != nil {
		t.Fatalf("stopping the driver: %v", err)
	}
	d.startDriver()

	// csi-provisioner names a volume after its PersistentVolume.
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	again, err := csi.NewControllerClient(d.conn()).CreateVolume(ctx, &csi.CreateVolumeRequest{
		Name:               before.Name,
		CapacityRange:      &csi.CapacityRange{RequiredBytes: 10 << 20},
		VolumeCapabilities: mountCapability(),
	})
	if err != nil {
		t.Fatalf("CreateVolume %s after the restart: %v; want the volume made before it, %s", before.Name, err, before.Spec.CSI.VolumeHandle)
	}
	if id := again.GetVolume().GetVolumeId(); id != before.Spec.CSI.VolumeHandle {
		t.Errorf("CreateVolume %s after the restart made volume %q, want %q, the one made before it: the driver forgot its volumes (keep them in its state folder, not only in memory)", before.Name, id, before.Spec.CSI.VolumeHandle)
	}

	d.startSidecars(false)
	d.deleteClaim("before")
	d.waitGone(before.Name, "its claim was deleted and its class's reclaimPolicy is Delete")
	d.requireFolder(before, false, "DeleteVolume after the restart deletes a volume made before it")
	d.createClaim("after", d.name, "10Mi")
	d.waitBound("after")
}

// TestClaimWaitsForAStoppedProvisioner: with no csi-provisioner running, a
// claim of the driver's class stays Pending, and kube-controller-manager's
// ExternalProvisioning event says which provisioner it waits for; once
// csi-provisioner starts, the claim is Bound.
func TestClaimWaitsForAStoppedProvisioner(t *testing.T) {
	t.Parallel()
	d := newTestDriver(t, "csi-no-provisioner")
	d.createClaim("waiting", d.name, "10Mi")
	event := d.waitClaimEvent("waiting", "ExternalProvisioning")
	if !strings.Contains(event.Message, d.name) {
		t.Errorf("ExternalProvisioning event: %q, want it to name the driver %s, whose provisioner the claim waits for", event.Message, d.name)
	}
	d.requirePending("waiting", "no csi-provisioner runs")
	d.startSidecars(false)
	d.waitBound("waiting")
}

// TestClaimOfAnotherDriverIsLeftAlone: a claim whose StorageClass names
// another driver gets nothing from this driver's csi-provisioner (no event, no
// volume), while a claim of its own class, made after it, is taken up.
func TestClaimOfAnotherDriverIsLeftAlone(t *testing.T) {
	t.Parallel()
	d := newTestDriver(t, "csi-other")
	other := "other-" + d.name
	createStorageClass(t, d.cs, other, other)
	d.createClaim("foreign", other, "10Mi")
	d.createClaim("own", d.name, "10Mi")
	d.startSidecars(false)
	// The provisioner's informer listed both claims before it took up its own.
	d.waitClaimEvent("own", "Provisioning")
	for _, reason := range []string{"Provisioning", "ProvisioningFailed", "ProvisioningSucceeded"} {
		events, err := d.claimEvents(context.Background(), "foreign", reason)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			t.Errorf("claim foreign, of StorageClass %s (provisioner %s), has a %s event from %s: %q; want none: it is not this driver's", other, other, reason, e.Source.Component, e.Message)
		}
	}
	d.requirePending("foreign", "its StorageClass names another driver, which does not run")
}
