package controller

import (
	"context"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/volumes"
)

// StubService is the Controller service a learner starts from
// (--reconciler=stub): it logs each call and answers codes.Unimplemented.
// Only ControllerGetCapabilities answers, since the sidecars ask it first and
// stop or skip the driver without an answer: it lists CreateVolume,
// DeleteVolume and ControllerPublish/UnpublishVolume, so csi-provisioner and
// csi-attacher start and call them, and their Unimplemented answers show up as
// the claim's and the VolumeAttachment's events. Service (service.go) is the
// finished version; lesson 7 goes from one to the other.
type StubService struct {
	csi.UnimplementedControllerServer

	// The fields Service has, filled the same way by main.go: what your
	// version will need.

	// Volumes is where the volumes live (see pkg/volumes).
	Volumes *volumes.Store
	// NodeID is the one node's ID (--node-id).
	NodeID string
	// MaxCapacityBytes is the largest volume allowed (--max-volume-size).
	MaxCapacityBytes int64
	// Zones maps each zone to its capacity in bytes (--zones; exercise 3).
	// Empty: no topology.
	Zones map[string]int64
}

// ControllerGetCapabilities lists the calls the lesson has you write:
// GetCapacity too when the driver runs with zones (exercise 3).
func (s *StubService) ControllerGetCapabilities(ctx context.Context, req *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	offered := []csi.ControllerServiceCapability_RPC_Type{
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
		csi.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME,
	}
	if len(s.Zones) > 0 {
		offered = append(offered, csi.ControllerServiceCapability_RPC_GET_CAPACITY)
	}
	return capabilities(offered...), nil
}

// GetCapacity logs the call and answers Unimplemented.
func (s *StubService) GetCapacity(ctx context.Context, req *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
	return nil, notYet(ctx, "GetCapacity", "accessibleTopology", req.GetAccessibleTopology().GetSegments())
}

// CreateVolume logs the call and answers Unimplemented.
func (s *StubService) CreateVolume(ctx context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	return nil, notYet(ctx, "CreateVolume", "name", req.GetName(),
		"requiredBytes", req.GetCapacityRange().GetRequiredBytes(), "limitBytes", req.GetCapacityRange().GetLimitBytes())
}

// DeleteVolume logs the call and answers Unimplemented.
func (s *StubService) DeleteVolume(ctx context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	return nil, notYet(ctx, "DeleteVolume", "volumeID", req.GetVolumeId())
}

// ControllerPublishVolume logs the call and answers Unimplemented.
func (s *StubService) ControllerPublishVolume(ctx context.Context, req *csi.ControllerPublishVolumeRequest) (*csi.ControllerPublishVolumeResponse, error) {
	return nil, notYet(ctx, "ControllerPublishVolume", "volumeID", req.GetVolumeId(), "node", req.GetNodeId(), "readonly", req.GetReadonly())
}

// ControllerUnpublishVolume logs the call and answers Unimplemented.
func (s *StubService) ControllerUnpublishVolume(ctx context.Context, req *csi.ControllerUnpublishVolumeRequest) (*csi.ControllerUnpublishVolumeResponse, error) {
	return nil, notYet(ctx, "ControllerUnpublishVolume", "volumeID", req.GetVolumeId(), "node", req.GetNodeId())
}

// ValidateVolumeCapabilities logs the call and answers Unimplemented.
func (s *StubService) ValidateVolumeCapabilities(ctx context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	return nil, notYet(ctx, "ValidateVolumeCapabilities", "volumeID", req.GetVolumeId())
}

// ListVolumes logs the call and answers Unimplemented.
func (s *StubService) ListVolumes(ctx context.Context, req *csi.ListVolumesRequest) (*csi.ListVolumesResponse, error) {
	return nil, notYet(ctx, "ListVolumes", "maxEntries", req.GetMaxEntries(), "startingToken", req.GetStartingToken())
}

// notYet logs a call the stub does not implement, with the request's fields
// given as key/value pairs (chosen ones: a request can carry secrets, which
// must never reach a log), and returns the Unimplemented error to answer.
func notYet(ctx context.Context, call string, keysAndValues ...any) error {
	klog.FromContext(ctx).Info("Stub: not implemented yet", append([]any{"call", call}, keysAndValues...)...)
	return status.Errorf(codes.Unimplemented, "%s: not implemented yet (the stub Controller service, --reconciler=stub)", call)
}
