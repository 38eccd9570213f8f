package node_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/controller-kit/controller-kit/csi-driver-example/internal/testserver"
	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/controller"
	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/driver"
	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/node"
	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/volumes"
)

const nodeID = "node-1"

// fixture is a Node service on a state folder holding one volume, with the
// two folders a kubelet would hand it: the staging folder (which the kubelet
// makes) and the parent of the target folder (which the driver makes).
type fixture struct {
	node    csi.NodeClient
	volume  string // the volume's ID
	data    string // the volume's data folder
	staging string // staging_target_path, an existing folder
	target  string // target_path, not there yet
}

// start serves svc (a Service or a StubService, given the store) and makes the
// fixture's volume and folders.
func start(t *testing.T, svc func(*volumes.Store) csi.NodeServer) fixture {
	t.Helper()
	dir := t.TempDir()
	store, err := volumes.Open(filepath.Join(dir, "state"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := store.Create("pvc-1", 1<<20, "")
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{
		volume:  v.ID,
		data:    filepath.Join(store.Dir(v.ID), volumes.DataDir),
		staging: filepath.Join(dir, "globalmount"),
		target:  filepath.Join(dir, "pod", "mount"),
	}
	for _, d := range []string{f.staging, filepath.Dir(f.target)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Whatever a failed test leaves mounted is unmounted before t.TempDir's
	// folder is removed (cleanups run last registered, first run).
	t.Cleanup(func() {
		for _, p := range []string{f.target, f.staging} {
			for unix.Unmount(p, 0) == nil {
			}
		}
	})
	conn := testserver.Start(t, &driver.Identity{Name: "test.csi.controller-kit.dev"}, &controller.StubService{}, svc(store))
	f.node = csi.NewNodeClient(conn)
	return f
}

func reference(store *volumes.Store) csi.NodeServer {
	return &node.Service{Volumes: store, NodeID: nodeID}
}

// requireMounts skips the test, saying why, unless this process may make bind
// mounts: root, where a bind mount of a temporary folder works.
func requireMounts(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("bind mounts need root: run as root (sudo go test) to test the mounts")
	}
	dir := t.TempDir()
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("a bind mount of a temporary folder fails here (%v): the mounts are not tested", err)
	}
	unix.Unmount(dir, 0)
}

// mountRWO is what the kubelet asks for a ReadWriteOnce claim of volumeMode
// Filesystem.
func mountRWO() *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
}

func (f fixture) stageReq() *csi.NodeStageVolumeRequest {
	return &csi.NodeStageVolumeRequest{VolumeId: f.volume, StagingTargetPath: f.staging, VolumeCapability: mountRWO()}
}

func (f fixture) publishReq(readonly bool) *csi.NodePublishVolumeRequest {
	return &csi.NodePublishVolumeRequest{
		VolumeId: f.volume, StagingTargetPath: f.staging, TargetPath: f.target,
		VolumeCapability: mountRWO(), Readonly: readonly,
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

// mounted reports whether the mount table lists path as a mount point.
func mounted(t *testing.T, path string) bool {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if fields := strings.Fields(line); len(fields) > 4 && fields[4] == path {
			return true
		}
	}
	return false
}

func TestNodeAnswersItsIDAndOffersStaging(t *testing.T) {
	f := start(t, reference)
	ctx := context.Background()

	info, err := f.node.NodeGetInfo(ctx, &csi.NodeGetInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.GetNodeId() != nodeID {
		t.Errorf("NodeGetInfo: node_id %q, want %s (--node-id)", info.GetNodeId(), nodeID)
	}
	caps, err := f.node.NodeGetCapabilities(ctx, &csi.NodeGetCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(caps.GetCapabilities()) != 1 || caps.GetCapabilities()[0].GetRpc().GetType() != csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME {
		t.Errorf("NodeGetCapabilities: %v, want STAGE_UNSTAGE_VOLUME alone", caps.GetCapabilities())
	}
}

func TestNodeRefusesBadRequestsNamingTheField(t *testing.T) {
	f := start(t, reference)
	ctx := context.Background()
	block := &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
	rwx := mountRWO()
	rwx.AccessMode.Mode = csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER
	const unknown = "vol-0000000000000000"

	stage := func(change func(*csi.NodeStageVolumeRequest)) error {
		req := f.stageReq()
		change(req)
		_, err := f.node.NodeStageVolume(ctx, req)
		return err
	}
	publish := func(change func(*csi.NodePublishVolumeRequest)) error {
		req := f.publishReq(false)
		change(req)
		_, err := f.node.NodePublishVolume(ctx, req)
		return err
	}
	for _, tc := range []struct {
		name  string
		err   error
		code  codes.Code
		words []string
	}{
		{"stage: no volume_id", stage(func(r *csi.NodeStageVolumeRequest) { r.VolumeId = "" }), codes.InvalidArgument, []string{"volume_id"}},
		{"stage: no staging_target_path", stage(func(r *csi.NodeStageVolumeRequest) { r.StagingTargetPath = "" }), codes.InvalidArgument, []string{"staging_target_path"}},
		{"stage: no volume_capability", stage(func(r *csi.NodeStageVolumeRequest) { r.VolumeCapability = nil }), codes.InvalidArgument, []string{"volume_capability"}},
		{"stage: block", stage(func(r *csi.NodeStageVolumeRequest) { r.VolumeCapability = block }), codes.FailedPrecondition, []string{"volume_capability", "block"}},
		{"stage: ReadWriteMany", stage(func(r *csi.NodeStageVolumeRequest) { r.VolumeCapability = rwx }), codes.FailedPrecondition, []string{"MULTI_NODE_MULTI_WRITER"}},
		{"stage: a volume that does not exist", stage(func(r *csi.NodeStageVolumeRequest) { r.VolumeId = unknown }), codes.NotFound, []string{"volume_id", unknown}},
		{"stage: no staging folder", stage(func(r *csi.NodeStageVolumeRequest) { r.StagingTargetPath = f.target }), codes.FailedPrecondition, []string{"staging_target_path"}},
		{"publish: no volume_id", publish(func(r *csi.NodePublishVolumeRequest) { r.VolumeId = "" }), codes.InvalidArgument, []string{"volume_id"}},
		{"publish: no target_path", publish(func(r *csi.NodePublishVolumeRequest) { r.TargetPath = "" }), codes.InvalidArgument, []string{"target_path"}},
		{"publish: no volume_capability", publish(func(r *csi.NodePublishVolumeRequest) { r.VolumeCapability = nil }), codes.InvalidArgument, []string{"volume_capability"}},
		{"publish: no staging_target_path", publish(func(r *csi.NodePublishVolumeRequest) { r.StagingTargetPath = "" }), codes.FailedPrecondition, []string{"staging_target_path", "NodeStageVolume"}},
		{"publish: a volume that does not exist", publish(func(r *csi.NodePublishVolumeRequest) { r.VolumeId = unknown }), codes.NotFound, []string{"volume_id", unknown}},
		{"publish: not staged", publish(func(*csi.NodePublishVolumeRequest) {}), codes.FailedPrecondition, []string{"staging_target_path", "not staged", "NodeStageVolume"}},
		{"unpublish: no volume_id", second(f.node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{TargetPath: f.target})), codes.InvalidArgument, []string{"volume_id"}},
		{"unpublish: no target_path", second(f.node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: f.volume})), codes.InvalidArgument, []string{"target_path"}},
		{"unpublish: a volume that does not exist", second(f.node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: unknown, TargetPath: f.target})), codes.NotFound, []string{unknown}},
		{"unstage: no volume_id", second(f.node.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{StagingTargetPath: f.staging})), codes.InvalidArgument, []string{"volume_id"}},
		{"unstage: no staging_target_path", second(f.node.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: f.volume})), codes.InvalidArgument, []string{"staging_target_path"}},
		{"unstage: a volume that does not exist", second(f.node.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: unknown, StagingTargetPath: f.staging})), codes.NotFound, []string{unknown}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantCode(t, tc.err, tc.code, tc.words...)
		})
	}
	if _, err := os.Stat(f.target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused NodePublishVolume left %s behind (%v)", f.target, err)
	}
}

func TestStagePublishUnpublishUnstage(t *testing.T) {
	requireMounts(t)
	f := start(t, reference)
	ctx := context.Background()

	// Each call twice: the second time finds the work done and answers OK,
	// as the spec asks (the kubelet retries whenever it is unsure).
	for range 2 {
		if _, err := f.node.NodeStageVolume(ctx, f.stageReq()); err != nil {
			t.Fatalf("NodeStageVolume: %v", err)
		}
	}
	if !mounted(t, f.staging) {
		t.Fatalf("%s is not a mount point after NodeStageVolume", f.staging)
	}
	for range 2 {
		if _, err := f.node.NodePublishVolume(ctx, f.publishReq(false)); err != nil {
			t.Fatalf("NodePublishVolume: %v", err)
		}
	}
	// What the Pod writes is in the volume's folder.
	if err := os.WriteFile(filepath.Join(f.target, "hello.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatalf("writing into the published volume: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(f.data, "hello.txt")); err != nil || string(got) != "hello\n" {
		t.Errorf("the volume's folder has %q (%v), want the file written at target_path", got, err)
	}
	// The same target_path read-only is another publication of it.
	_, err := f.node.NodePublishVolume(ctx, f.publishReq(true))
	wantCode(t, err, codes.AlreadyExists, "target_path", "readonly=false")

	for range 2 {
		if _, err := f.node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: f.volume, TargetPath: f.target}); err != nil {
			t.Fatalf("NodeUnpublishVolume: %v", err)
		}
	}
	if _, err := os.Stat(f.target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("target_path %s is still there after NodeUnpublishVolume (%v); the driver must remove it", f.target, err)
	}
	for range 2 {
		if _, err := f.node.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: f.volume, StagingTargetPath: f.staging}); err != nil {
			t.Fatalf("NodeUnstageVolume: %v", err)
		}
	}
	if mounted(t, f.staging) {
		t.Errorf("%s is still a mount point after NodeUnstageVolume", f.staging)
	}
	if _, err := os.Stat(filepath.Join(f.data, "hello.txt")); err != nil {
		t.Errorf("the volume's file is gone after unpublish and unstage: %v", err)
	}
}

func TestReadOnlyPublishRefusesWrites(t *testing.T) {
	requireMounts(t)
	f := start(t, reference)
	ctx := context.Background()

	if _, err := f.node.NodeStageVolume(ctx, f.stageReq()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.node.NodePublishVolume(ctx, f.publishReq(true)); err != nil {
		t.Fatal(err)
	}
	err := os.WriteFile(filepath.Join(f.target, "hello.txt"), []byte("hello\n"), 0o644)
	if !errors.Is(err, syscall.EROFS) {
		t.Errorf("writing into a volume published read-only: %v, want %v", err, syscall.EROFS)
	}
	// The volume itself stays writable, through the staging mount.
	if err := os.WriteFile(filepath.Join(f.staging, "hello.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Errorf("writing through staging_target_path: %v", err)
	}
	_, err = f.node.NodePublishVolume(ctx, f.publishReq(false))
	wantCode(t, err, codes.AlreadyExists, "readonly=true")
}

func TestStageWhereAnotherFolderIsMountedIsAlreadyExists(t *testing.T) {
	requireMounts(t)
	f := start(t, reference)
	other := t.TempDir()
	if err := unix.Mount(other, f.staging, "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	_, err := f.node.NodeStageVolume(context.Background(), f.stageReq())
	wantCode(t, err, codes.AlreadyExists, "staging_target_path", "something else is mounted")
}

func TestStubAnswersUnimplementedButUndoesNothingWithoutComplaint(t *testing.T) {
	testserver.SkipIfYours(t, "stub.go", "exercise 5")
	f := start(t, func(store *volumes.Store) csi.NodeServer { return &node.StubService{Volumes: store, NodeID: nodeID} })
	ctx := context.Background()

	info, err := f.node.NodeGetInfo(ctx, &csi.NodeGetInfoRequest{})
	if err != nil || info.GetNodeId() != nodeID {
		t.Errorf("NodeGetInfo: %v, %v; want node_id %s (the kubelet asks it when the driver registers)", info, err, nodeID)
	}
	// The kubelet calls NodeStageVolume only when this is listed.
	caps, err := f.node.NodeGetCapabilities(ctx, &csi.NodeGetCapabilitiesRequest{})
	if err != nil || len(caps.GetCapabilities()) != 1 || caps.GetCapabilities()[0].GetRpc().GetType() != csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME {
		t.Errorf("NodeGetCapabilities: %v, %v; want STAGE_UNSTAGE_VOLUME, the call to write", caps, err)
	}
	wantCode(t, second(f.node.NodeStageVolume(ctx, f.stageReq())), codes.Unimplemented, "NodeStageVolume", "--reconciler=stub")
	wantCode(t, second(f.node.NodePublishVolume(ctx, f.publishReq(false))), codes.Unimplemented, "NodePublishVolume", "--reconciler=stub")
	// Nothing mounted: nothing to undo, OK (csi-sanity's cleanup after every
	// Controller test relies on it).
	if _, err := f.node.NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: f.volume, TargetPath: f.target}); err != nil {
		t.Errorf("NodeUnpublishVolume where nothing is mounted: %v, want OK", err)
	}
	if _, err := f.node.NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: f.volume, StagingTargetPath: f.staging}); err != nil {
		t.Errorf("NodeUnstageVolume where nothing is mounted: %v, want OK", err)
	}
}

// second returns the error of a call's two results.
func second[T any](_ T, err error) error { return err }

func TestNodeInAZoneAnswersItAsItsTopology(t *testing.T) {
	for _, svc := range []csi.NodeServer{
		&node.Service{NodeID: nodeID, Zone: "zone-b"},
		&node.StubService{NodeID: nodeID, Zone: "zone-b"},
	} {
		info, err := svc.NodeGetInfo(context.Background(), &csi.NodeGetInfoRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if got := info.GetAccessibleTopology().GetSegments(); len(got) != 1 || got[controller.TopologyKey] != "zone-b" {
			t.Errorf("%T NodeGetInfo: accessible_topology %v, want {%s: zone-b} (--node-zone)", svc, got, controller.TopologyKey)
		}
	}
	none, err := (&node.Service{NodeID: nodeID}).NodeGetInfo(context.Background(), &csi.NodeGetInfoRequest{})
	if err != nil || none.GetAccessibleTopology() != nil {
		t.Errorf("NodeGetInfo without a zone: %v, %v; want no accessible_topology", none.GetAccessibleTopology(), err)
	}
}
