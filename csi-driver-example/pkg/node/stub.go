package node

import (
	"context"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/volumes"
)

// StubService is the Node service a learner starts from (--reconciler=stub):
// NodeGetInfo answers the node's ID, since the kubelet asks it when the driver
// registers and writes it into the node's CSINode; NodeGetCapabilities lists
// STAGE_UNSTAGE_VOLUME, so the kubelet calls NodeStageVolume first; the four
// calls that mount and unmount log and answer codes.Unimplemented, which
// shows up as the Pod's FailedMount event. Service (service.go) is the
// finished version, and mount.go has the mounts' system calls both use.
//
// NodeUnpublishVolume and NodeUnstageVolume answer OK where nothing is
// mounted: there is nothing to undo, the spec's idempotent answer. csi-sanity
// calls both after each of its tests, for every volume the test made, and the
// stub lets the Controller tests pass or fail on the Controller service alone.
type StubService struct {
	csi.UnimplementedNodeServer

	// The fields Service has, filled the same way by main.go: what your
	// version will need.

	// Volumes is where the volumes live (see pkg/volumes).
	Volumes *volumes.Store
	// NodeID is this node's ID (--node-id).
	NodeID string
	// Zone is this node's zone (--node-zone), "" for none.
	Zone string
}

// NodeGetInfo answers the node's ID and zone, as the reference does.
func (s *StubService) NodeGetInfo(ctx context.Context, req *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return nodeInfo(s.NodeID, s.Zone), nil
}

// NodeGetCapabilities lists the calls the lesson has you write.
func (s *StubService) NodeGetCapabilities(ctx context.Context, req *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	return nodeCapabilities(csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME), nil
}

// NodeStageVolume logs the call and answers Unimplemented.
func (s *StubService) NodeStageVolume(ctx context.Context, req *csi.NodeStageVolumeRequest) (*csi.NodeStageVolumeResponse, error) {
	return nil, notYet(ctx, "NodeStageVolume", "volumeID", req.GetVolumeId(), "stagingTargetPath", req.GetStagingTargetPath())
}

// NodePublishVolume logs the call and answers Unimplemented.
func (s *StubService) NodePublishVolume(ctx context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	return nil, notYet(ctx, "NodePublishVolume", "volumeID", req.GetVolumeId(), "stagingTargetPath", req.GetStagingTargetPath(),
		"targetPath", req.GetTargetPath(), "readonly", req.GetReadonly())
}

// NodeUnpublishVolume answers OK where nothing is mounted at target_path, and
// otherwise logs the call and answers Unimplemented.
func (s *StubService) NodeUnpublishVolume(ctx context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	if nothingMounted(req.GetTargetPath()) {
		return &csi.NodeUnpublishVolumeResponse{}, nil
	}
	return nil, notYet(ctx, "NodeUnpublishVolume", "volumeID", req.GetVolumeId(), "targetPath", req.GetTargetPath())
}

// NodeUnstageVolume answers OK where nothing is mounted at
// staging_target_path, and otherwise logs the call and answers Unimplemented.
func (s *StubService) NodeUnstageVolume(ctx context.Context, req *csi.NodeUnstageVolumeRequest) (*csi.NodeUnstageVolumeResponse, error) {
	if nothingMounted(req.GetStagingTargetPath()) {
		return &csi.NodeUnstageVolumeResponse{}, nil
	}
	return nil, notYet(ctx, "NodeUnstageVolume", "volumeID", req.GetVolumeId(), "stagingTargetPath", req.GetStagingTargetPath())
}

// nothingMounted reports whether the mount table says for sure that nothing
// is mounted at path.
func nothingMounted(path string) bool {
	_, mounted, err := mountAt(path)
	return path != "" && err == nil && !mounted
}

// notYet logs a call the stub does not implement, with the request's fields
// given as key/value pairs (chosen ones: a request can carry secrets, which
// must never reach a log), and returns the Unimplemented error to answer.
func notYet(ctx context.Context, call string, keysAndValues ...any) error {
	klog.FromContext(ctx).Info("Stub: not implemented yet", append([]any{"call", call}, keysAndValues...)...)
	return status.Errorf(codes.Unimplemented, "%s: not implemented yet (the stub Node service, --reconciler=stub)", call)
}
