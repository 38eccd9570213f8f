package controller_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/controller-kit/controller-kit/csi-driver-example/internal/testserver"
	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/controller"
	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/driver"
	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/node"
	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/volumes"
)

const (
	nodeID = "node-1"
	mi     = 1 << 20
	// maxBytes is the tests' --max-volume-size.
	maxBytes = 100 * mi
)

// startReference serves the reference Controller service on stateDir and
// returns a client of it.
func startReference(t *testing.T, stateDir string) csi.ControllerClient {
	t.Helper()
	store, err := volumes.Open(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	conn := testserver.Start(t,
		&driver.Identity{Name: "test.csi.controller-kit.dev"},
		&controller.Service{Volumes: store, NodeID: nodeID, MaxCapacityBytes: maxBytes},
		&node.StubService{NodeID: nodeID})
	return csi.NewControllerClient(conn)
}

// mountRWO is what csi-provisioner asks for a ReadWriteOnce claim of
// volumeMode Filesystem.
func mountRWO() *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
}

// createReq is a CreateVolume request for name of required bytes.
func createReq(name string, required int64) *csi.CreateVolumeRequest {
	return &csi.CreateVolumeRequest{
		Name:               name,
		CapacityRange:      &csi.CapacityRange{RequiredBytes: required},
		VolumeCapabilities: []*csi.VolumeCapability{mountRWO()},
	}
}

// wantCode fails the test unless err is a gRPC status with code want whose
// message contains every one of words (the field it names, say).
func wantCode(t *testing.T, err error, want codes.Code, words ...string) {
	t.Helper()
	if status.Code(err) != want {
		t.Fatalf("got %v, want code %v", err, want)
	}
	for _, w := range words {
		if !strings.Contains(status.Convert(err).Message(), w) {
			t.Errorf("message %q does not name %q", status.Convert(err).Message(), w)
		}
	}
}

// volumeFolders lists the volume folders under stateDir (what ls shows).
func volumeFolders(t *testing.T, stateDir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(stateDir, "volumes"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestCreateVolumeMakesAFolderWithItsRecord(t *testing.T) {
	dir := t.TempDir()
	c := startReference(t, dir)

	resp, err := c.CreateVolume(context.Background(), createReq("pvc-1", 10*mi))
	if err != nil {
		t.Fatal(err)
	}
	vol := resp.GetVolume()
	if vol.GetCapacityBytes() != 10*mi {
		t.Errorf("capacity_bytes %d, want %d", vol.GetCapacityBytes(), 10*mi)
	}
	if got := volumeFolders(t, dir); len(got) != 1 || got[0] != vol.GetVolumeId() {
		t.Fatalf("volume folders %v, want [%s]", got, vol.GetVolumeId())
	}
	for _, f := range []string{volumes.RecordFile, volumes.DataDir} {
		if _, err := os.Stat(filepath.Join(dir, "volumes", vol.GetVolumeId(), f)); err != nil {
			t.Errorf("the volume's folder lacks %s: %v", f, err)
		}
	}
}

func TestCreateVolumeTwiceWithTheSameNameReturnsTheSameVolume(t *testing.T) {
	dir := t.TempDir()
	c := startReference(t, dir)

	first, err := c.CreateVolume(context.Background(), createReq("pvc-1", 10*mi))
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.CreateVolume(context.Background(), createReq("pvc-1", 10*mi))
	if err != nil {
		t.Fatalf("the second call: %v", err)
	}
	if first.GetVolume().GetVolumeId() != second.GetVolume().GetVolumeId() {
		t.Errorf("volume IDs %s and %s, want the same", first.GetVolume().GetVolumeId(), second.GetVolume().GetVolumeId())
	}
	if got := volumeFolders(t, dir); len(got) != 1 {
		t.Errorf("volume folders %v, want one", got)
	}
}

func TestCreateVolumeWithTheSameNameAndAnotherSizeIsAlreadyExists(t *testing.T) {
	dir := t.TempDir()
	c := startReference(t, dir)

	if _, err := c.CreateVolume(context.Background(), createReq("pvc-1", 10*mi)); err != nil {
		t.Fatal(err)
	}
	_, err := c.CreateVolume(context.Background(), createReq("pvc-1", 20*mi))
	wantCode(t, err, codes.AlreadyExists, "pvc-1", "10Mi")
	if got := volumeFolders(t, dir); len(got) != 1 {
		t.Errorf("volume folders %v, want one", got)
	}
}

func TestCreateVolumeAboveTheMaximumIsOutOfRange(t *testing.T) {
	dir := t.TempDir()
	c := startReference(t, dir)

	_, err := c.CreateVolume(context.Background(), createReq("pvc-big", maxBytes+1))
	wantCode(t, err, codes.OutOfRange, "--max-volume-size", "100Mi", "104857600")
	if got := volumeFolders(t, dir); len(got) != 0 {
		t.Errorf("volume folders %v, want none", got)
	}
	if _, err := c.CreateVolume(context.Background(), createReq("pvc-max", maxBytes)); err != nil {
		t.Errorf("a volume of exactly the maximum: %v", err)
	}
}

func TestCreateVolumeWithoutCapacityRangeGetsTheDefault(t *testing.T) {
	c := startReference(t, t.TempDir())

	req := createReq("pvc-1", 0)
	req.CapacityRange = nil
	resp, err := c.CreateVolume(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetVolume().GetCapacityBytes(); got != controller.DefaultCapacityBytes {
		t.Errorf("capacity_bytes %d, want the default %d", got, controller.DefaultCapacityBytes)
	}
}

func TestCreateVolumeRefusesBadRequestsNamingTheField(t *testing.T) {
	block := &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
	rwx := mountRWO()
	rwx.AccessMode.Mode = csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER
	for _, tc := range []struct {
		name   string
		change func(*csi.CreateVolumeRequest)
		field  string
	}{
		{"no name", func(r *csi.CreateVolumeRequest) { r.Name = "" }, "name"},
		{"no capabilities", func(r *csi.CreateVolumeRequest) { r.VolumeCapabilities = nil }, "volume_capabilities"},
		{"block", func(r *csi.CreateVolumeRequest) { r.VolumeCapabilities = []*csi.VolumeCapability{block} }, "volume_capabilities[0]: access_type block"},
		{"ReadWriteMany", func(r *csi.CreateVolumeRequest) { r.VolumeCapabilities = []*csi.VolumeCapability{mountRWO(), rwx} }, "volume_capabilities[1]: access_mode MULTI_NODE_MULTI_WRITER"},
		{"negative size", func(r *csi.CreateVolumeRequest) { r.CapacityRange.RequiredBytes = -1 }, "capacity_range"},
		{"required above limit", func(r *csi.CreateVolumeRequest) { r.CapacityRange.LimitBytes = mi }, "limit_bytes"},
		{"a parameter", func(r *csi.CreateVolumeRequest) { r.Parameters = map[string]string{"speed": "fast"} }, `parameters: "speed"`},
		{"a snapshot source", func(r *csi.CreateVolumeRequest) {
			r.VolumeContentSource = &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: "s"}}}
		}, "volume_content_source"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c := startReference(t, dir)
			req := createReq("pvc-1", 10*mi)
			tc.change(req)
			_, err := c.CreateVolume(context.Background(), req)
			wantCode(t, err, codes.InvalidArgument, tc.field)
			if got := volumeFolders(t, dir); len(got) != 0 {
				t.Errorf("volume folders %v, want none", got)
			}
		})
	}
}

func TestCreateVolumeAcceptsTheCOsOwnParameters(t *testing.T) {
	c := startReference(t, t.TempDir())
	req := createReq("pvc-1", 10*mi)
	// What csi-provisioner --extra-create-metadata adds.
	req.Parameters = map[string]string{"csi.storage.k8s.io/pvc/name": "claim"}
	if _, err := c.CreateVolume(context.Background(), req); err != nil {
		t.Fatal(err)
	}
}

func TestDeleteVolumeRemovesTheFolderAndIsIdempotent(t *testing.T) {
	dir := t.TempDir()
	c := startReference(t, dir)
	resp, err := c.CreateVolume(context.Background(), createReq("pvc-1", 10*mi))
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetVolume().GetVolumeId()

	for i := range 2 {
		if _, err := c.DeleteVolume(context.Background(), &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
			t.Fatalf("DeleteVolume #%d: %v", i+1, err)
		}
	}
	if got := volumeFolders(t, dir); len(got) != 0 {
		t.Errorf("volume folders %v, want none", got)
	}
	// A name deleted is free again: a new volume, with a new ID.
	again, err := c.CreateVolume(context.Background(), createReq("pvc-1", 10*mi))
	if err != nil {
		t.Fatal(err)
	}
	if again.GetVolume().GetVolumeId() == id {
		t.Errorf("the deleted volume's ID %s came back", id)
	}
}

func TestDeleteVolumeOfAnUnknownIDSucceedsAndTouchesNothing(t *testing.T) {
	dir := t.TempDir()
	c := startReference(t, dir)
	// A folder beside the state dir's volumes, which a volume ID built as a
	// path must never reach.
	outside := filepath.Join(dir, "keep")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"vol-0000000000000000", "no-such-volume", "../keep"} {
		if _, err := c.DeleteVolume(context.Background(), &csi.DeleteVolumeRequest{VolumeId: id}); err != nil {
			t.Errorf("DeleteVolume(%q): %v, want success (it is gone)", id, err)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("DeleteVolume(\"../keep\") removed a folder outside volumes/: %v", err)
	}
	_, err := c.DeleteVolume(context.Background(), &csi.DeleteVolumeRequest{})
	wantCode(t, err, codes.InvalidArgument, "volume_id")
}

func TestARestartedDriverServesTheSameVolumes(t *testing.T) {
	dir := t.TempDir()
	before := startReference(t, dir)
	created, err := before.CreateVolume(context.Background(), createReq("pvc-1", 10*mi))
	if err != nil {
		t.Fatal(err)
	}
	id := created.GetVolume().GetVolumeId()

	// A second driver on the same state dir: all it knows is on disk.
	after := startReference(t, dir)
	list, err := after.ListVolumes(context.Background(), &csi.ListVolumesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.GetEntries()) != 1 || list.GetEntries()[0].GetVolume().GetVolumeId() != id || list.GetEntries()[0].GetVolume().GetCapacityBytes() != 10*mi {
		t.Fatalf("ListVolumes after the restart: %v, want volume %s of %d bytes", list.GetEntries(), id, 10*mi)
	}
	again, err := after.CreateVolume(context.Background(), createReq("pvc-1", 10*mi))
	if err != nil {
		t.Fatal(err)
	}
	if again.GetVolume().GetVolumeId() != id {
		t.Errorf("CreateVolume after the restart made %s, want the volume %s it had", again.GetVolume().GetVolumeId(), id)
	}
	_, err = after.CreateVolume(context.Background(), createReq("pvc-1", 20*mi))
	wantCode(t, err, codes.AlreadyExists)
}

func TestControllerPublishVolume(t *testing.T) {
	dir := t.TempDir()
	c := startReference(t, dir)
	resp, err := c.CreateVolume(context.Background(), createReq("pvc-1", 10*mi))
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetVolume().GetVolumeId()
	publish := func(volumeID, node string, readonly bool) error {
		_, err := c.ControllerPublishVolume(context.Background(), &csi.ControllerPublishVolumeRequest{
			VolumeId: volumeID, NodeId: node, VolumeCapability: mountRWO(), Readonly: readonly,
		})
		return err
	}
	deleteVolume := func() error {
		_, err := c.DeleteVolume(context.Background(), &csi.DeleteVolumeRequest{VolumeId: id})
		return err
	}
	unpublish := func() error {
		_, err := c.ControllerUnpublishVolume(context.Background(), &csi.ControllerUnpublishVolumeRequest{VolumeId: id, NodeId: nodeID})
		return err
	}

	if err := publish(id, nodeID, false); err != nil {
		t.Fatal(err)
	}
	if err := publish(id, nodeID, false); err != nil {
		t.Errorf("publishing again the same way: %v, want success", err)
	}
	wantCode(t, publish(id, nodeID, true), codes.AlreadyExists, "readonly")
	wantCode(t, publish(id, "node-2", false), codes.NotFound, "node-2", nodeID)
	wantCode(t, publish("vol-0000000000000000", nodeID, false), codes.NotFound, "vol-0000000000000000")
	wantCode(t, publish(id, "", false), codes.InvalidArgument, "node_id")
	wantCode(t, deleteVolume(), codes.FailedPrecondition, nodeID)

	// A restarted driver still knows where the volume is published.
	_, err = startReference(t, dir).DeleteVolume(context.Background(), &csi.DeleteVolumeRequest{VolumeId: id})
	wantCode(t, err, codes.FailedPrecondition)

	for i := range 2 {
		if err := unpublish(); err != nil {
			t.Fatalf("ControllerUnpublishVolume #%d: %v", i+1, err)
		}
	}
	if err := deleteVolume(); err != nil {
		t.Errorf("DeleteVolume after the unpublish: %v", err)
	}
	if err := unpublish(); err != nil {
		t.Errorf("ControllerUnpublishVolume of a deleted volume: %v, want success", err)
	}
}

func TestValidateVolumeCapabilities(t *testing.T) {
	c := startReference(t, t.TempDir())
	resp, err := c.CreateVolume(context.Background(), createReq("pvc-1", 10*mi))
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetVolume().GetVolumeId()

	ok, err := c.ValidateVolumeCapabilities(context.Background(), &csi.ValidateVolumeCapabilitiesRequest{
		VolumeId: id, VolumeCapabilities: []*csi.VolumeCapability{mountRWO()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if ok.GetConfirmed() == nil {
		t.Errorf("mount, SINGLE_NODE_WRITER not confirmed: %q", ok.GetMessage())
	}

	rox := mountRWO()
	rox.AccessMode.Mode = csi.VolumeCapability_AccessMode_MULTI_NODE_READER_ONLY
	no, err := c.ValidateVolumeCapabilities(context.Background(), &csi.ValidateVolumeCapabilitiesRequest{
		VolumeId: id, VolumeCapabilities: []*csi.VolumeCapability{rox},
	})
	if err != nil {
		t.Fatal(err)
	}
	if no.GetConfirmed() != nil || !strings.Contains(no.GetMessage(), "MULTI_NODE_READER_ONLY") {
		t.Errorf("MULTI_NODE_READER_ONLY: confirmed %v, message %q; want no confirmation and a message naming the mode", no.GetConfirmed(), no.GetMessage())
	}

	_, err = c.ValidateVolumeCapabilities(context.Background(), &csi.ValidateVolumeCapabilitiesRequest{
		VolumeId: "vol-0000000000000000", VolumeCapabilities: []*csi.VolumeCapability{mountRWO()},
	})
	wantCode(t, err, codes.NotFound)
	_, err = c.ValidateVolumeCapabilities(context.Background(), &csi.ValidateVolumeCapabilitiesRequest{VolumeId: id})
	wantCode(t, err, codes.InvalidArgument, "volume_capabilities")
}

func TestListVolumesPages(t *testing.T) {
	c := startReference(t, t.TempDir())
	want := map[string]bool{}
	for _, name := range []string{"pvc-1", "pvc-2", "pvc-3"} {
		resp, err := c.CreateVolume(context.Background(), createReq(name, mi))
		if err != nil {
			t.Fatal(err)
		}
		want[resp.GetVolume().GetVolumeId()] = true
	}

	got := map[string]bool{}
	token := ""
	for page := 1; ; page++ {
		resp, err := c.ListVolumes(context.Background(), &csi.ListVolumesRequest{MaxEntries: 2, StartingToken: token})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetEntries()) > 2 {
			t.Errorf("page %d has %d entries, want 2 at most", page, len(resp.GetEntries()))
		}
		for _, e := range resp.GetEntries() {
			got[e.GetVolume().GetVolumeId()] = true
		}
		if token = resp.GetNextToken(); token == "" {
			break
		}
		if page == 3 {
			t.Fatal("a third page of 3 volumes at 2 a page")
		}
	}
	if len(got) != len(want) {
		t.Errorf("listed %v, want %v", got, want)
	}

	_, err := c.ListVolumes(context.Background(), &csi.ListVolumesRequest{StartingToken: "invalid-token"})
	wantCode(t, err, codes.Aborted, "starting_token")
}
