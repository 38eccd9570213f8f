// Package controller is the toy driver's Controller service, the part of a CSI
// driver that makes and removes volumes and attaches them to nodes
// (ControllerPublishVolume): csi-provisioner and csi-attacher call it. It is
// the learner's part of lesson 7 (docs/lessons/07-csi-driver.md), in two
// versions that --reconciler picks in main.go, as the other tiers pick their
// Reconciler:
//   - Service (reference): every rule the CSI spec states for its calls;
//   - StubService (stub): the starting point, which logs each call and answers
//     codes.Unimplemented.
//
// The rules come from the CSI spec v1.14.0, spec.md in
// github.com/container-storage-interface/spec: each method's doc comment names
// its section (CreateVolume, "CreateVolume Errors", ...) and the section
// "Error Scheme" says how an error is carried (a gRPC status code and a
// message for a person). To compare with a driver in production use, read
// pkg/hostpath/controllerserver.go in github.com/kubernetes-csi/csi-driver-host-path,
// the CSI project's own example: the same calls, on a bigger state.
package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/volumes"
)

// DefaultCapacityBytes is the size of a volume created without a capacity
// range (1 MiB, or --max-volume-size if that is smaller). The spec lets the
// plugin choose; Kubernetes always sends the claim's request.
const DefaultCapacityBytes = 1 << 20

// reservedParameterPrefix starts the parameters the CO and the sidecars add
// (csi-provisioner's --extra-create-metadata adds csi.storage.k8s.io/pvc/name
// and its kin); they are the CO's business and accepted as they come.
const reservedParameterPrefix = "csi.storage.k8s.io/"

// Service is the reference Controller service. Its volumes are folders in
// Volumes (pkg/volumes), so everything it answers survives a restart.
//
// The spec asks a plugin to cope with calls that race each other (section
// "Concurrency"); Service serializes them all with one mutex, which is the
// simplest correct answer for a driver this small.
type Service struct {
	// UnimplementedControllerServer answers codes.Unimplemented for the
	// calls this driver does not offer (snapshots, expansion, ...), which
	// ControllerGetCapabilities does not list either.
	csi.UnimplementedControllerServer

	// Volumes is where the volumes live.
	Volumes *volumes.Store
	// NodeID is the ID of the one node this driver's volumes can be
	// published to: --node-id, which the Node service reports in
	// NodeGetInfo.
	NodeID string
	// MaxCapacityBytes is the largest volume CreateVolume makes
	// (--max-volume-size).
	MaxCapacityBytes int64
	// Zones are the zones volumes can be made in, each with its capacity
	// in bytes (--zones; topology.go). Empty: the driver has no topology,
	// as in lesson 7's first sections.
	Zones map[string]int64

	mu sync.Mutex
}

// ControllerGetCapabilities says which optional calls the service offers
// (spec section ControllerGetCapabilities). The sidecars ask first and act on
// the answer: csi-provisioner exits unless CREATE_DELETE_VOLUME is listed,
// and csi-attacher calls ControllerPublishVolume only when
// PUBLISH_UNPUBLISH_VOLUME is (else it marks every VolumeAttachment attached
// without asking).
func (s *Service) ControllerGetCapabilities(ctx context.Context, req *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	offered := []csi.ControllerServiceCapability_RPC_Type{
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
		csi.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME,
		// ControllerPublishVolume keeps the readonly flag it was asked for
		// and refuses the same publication with the other one.
		csi.ControllerServiceCapability_RPC_PUBLISH_READONLY,
		csi.ControllerServiceCapability_RPC_LIST_VOLUMES,
	}
	if len(s.Zones) > 0 {
		// Each zone's free bytes, for csi-provisioner's CSIStorageCapacity
		// objects (GetCapacity, topology.go).
		offered = append(offered, csi.ControllerServiceCapability_RPC_GET_CAPACITY)
	}
	return capabilities(offered...), nil
}

// CreateVolume makes a volume (spec sections CreateVolume and "CreateVolume
// Errors"). The name is the key: csi-provisioner retries with the same name
// until it gets an answer, so a second call for a name that already has a
// volume returns that volume instead of making another (idempotency), as long
// as the volume fits what is asked; one that does not fit is ALREADY_EXISTS.
// A new volume larger than MaxCapacityBytes is OUT_OF_RANGE. With Zones, the
// volume goes to the first zone of accessibility_requirements with room for
// it, or nowhere: RESOURCE_EXHAUSTED (zoneFor, topology.go).
func (s *Service) CreateVolume(ctx context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	logger := klog.FromContext(ctx)
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "name: required")
	}
	if err := checkCapabilities("volume_capabilities", req.GetVolumeCapabilities()); err != nil {
		return nil, err
	}
	for key := range req.GetParameters() {
		if !strings.HasPrefix(key, reservedParameterPrefix) {
			return nil, status.Errorf(codes.InvalidArgument, "parameters: %q: this driver takes no parameters (remove it from the StorageClass)", key)
		}
	}
	if req.GetVolumeContentSource() != nil {
		return nil, status.Error(codes.InvalidArgument, "volume_content_source: this driver makes empty volumes only (no snapshots, no clones)")
	}
	required := req.GetCapacityRange().GetRequiredBytes()
	limit := req.GetCapacityRange().GetLimitBytes()
	if required < 0 || limit < 0 {
		return nil, status.Errorf(codes.InvalidArgument, "capacity_range: required_bytes (%d) and limit_bytes (%d) must not be negative", required, limit)
	}
	if limit != 0 && required > limit {
		return nil, status.Errorf(codes.InvalidArgument, "capacity_range: required_bytes (%d) is larger than limit_bytes (%d)", required, limit)
	}

	s.mu.Lock()
	defer s.mu.Unlock()

	existing, found, err := s.Volumes.FindByName(req.GetName())
	if err != nil {
		return nil, status.Errorf(codes.Internal, "reading the volumes: %v", err)
	}
	if found {
		// The same name again: the same volume, if it is what is asked for.
		// The spec's test is the capacity range (capacity_range is the
		// only property of a request this driver's volumes differ in).
		if existing.CapacityBytes < required || (limit != 0 && existing.CapacityBytes > limit) {
			return nil, status.Errorf(codes.AlreadyExists,
				"name %q: volume %s has this name already, with %s, outside the capacity range asked for now (required_bytes %d, limit_bytes %d)",
				req.GetName(), existing.ID, quantity(existing.CapacityBytes), required, limit)
		}
		if !s.inRequisite(existing, req.GetAccessibilityRequirements()) {
			return nil, status.Errorf(codes.AlreadyExists,
				"name %q: volume %s has this name already, in zone %s, which accessibility_requirements.requisite does not name",
				req.GetName(), existing.ID, existing.Zone)
		}
		logger.V(2).Info("Volume exists already", "name", existing.Name, "volumeID", existing.ID, "capacityBytes", existing.CapacityBytes)
		return &csi.CreateVolumeResponse{Volume: csiVolume(existing)}, nil
	}

	size := required
	if size == 0 {
		size = min(DefaultCapacityBytes, s.MaxCapacityBytes)
		if limit != 0 {
			size = min(size, limit)
		}
	}
	if size > s.MaxCapacityBytes {
		return nil, status.Errorf(codes.OutOfRange,
			"capacity_range.required_bytes: %s is more than this driver's maximum, %s (--max-volume-size)", quantity(size), quantity(s.MaxCapacityBytes))
	}
	var zone string
	if len(s.Zones) > 0 {
		if zone, err = s.zoneFor(req.GetAccessibilityRequirements(), size); err != nil {
			return nil, err
		}
	}
	v, err := s.Volumes.Create(req.GetName(), size, zone)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "creating the volume's folder: %v", err)
	}
	created := []any{"name", v.Name, "volumeID", v.ID, "capacityBytes", v.CapacityBytes}
	if v.Zone != "" {
		created = append(created, "zone", v.Zone)
	}
	logger.Info("Created volume", append(created, "folder", s.Volumes.Dir(v.ID))...)
	return &csi.CreateVolumeResponse{Volume: csiVolume(v)}, nil
}

// DeleteVolume removes a volume and its folder (spec sections DeleteVolume and
// "DeleteVolume Errors"). A volume that is not there (deleted before, or an ID
// this driver never made) is success: the caller wants it gone, and it is.
func (s *Service) DeleteVolume(ctx context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id: required")
	}

	s.mu.Lock()
	defer s.mu.Unlock()

	v, err := s.Volumes.Get(req.GetVolumeId())
	if errors.Is(err, volumes.ErrNotFound) {
		klog.FromContext(ctx).V(2).Info("Volume is gone already", "volumeID", req.GetVolumeId())
		return &csi.DeleteVolumeResponse{}, nil
	}
	if err != nil {
		return nil, status.Errorf(codes.Internal, "reading volume %s: %v", req.GetVolumeId(), err)
	}
	// A volume still published to a node is in use there. csi-provisioner
	// deletes only after the PV is released, by which time csi-attacher has
	// unpublished it; anyone else gets FAILED_PRECONDITION ("Volume in use").
	if len(v.Published) > 0 {
		return nil, status.Errorf(codes.FailedPrecondition, "volume %s is still published to node(s) %s: ControllerUnpublishVolume first", v.ID, publishedNodes(v))
	}
	if err := s.Volumes.Delete(v.ID); err != nil {
		return nil, status.Errorf(codes.Internal, "removing volume %s: %v", v.ID, err)
	}
	klog.FromContext(ctx).Info("Deleted volume", "name", v.Name, "volumeID", v.ID)
	return &csi.DeleteVolumeResponse{}, nil
}

// ControllerPublishVolume makes a volume available on a node (spec sections
// ControllerPublishVolume and "ControllerPublishVolume Errors"); csi-attacher
// calls it for a VolumeAttachment. A toy volume is a folder on the one node,
// so publishing records the node in the volume's record, nothing more. Again
// to the same node with the same readonly flag is success, with the other one
// ALREADY_EXISTS. Any node ID but NodeID is NOT_FOUND: there is no other node
// (nor, so, the spec's FAILED_PRECONDITION for a volume on another node).
func (s *Service) ControllerPublishVolume(ctx context.Context, req *csi.ControllerPublishVolumeRequest) (*csi.ControllerPublishVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id: required")
	}
	if req.GetNodeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "node_id: required")
	}
	if req.GetVolumeCapability() == nil {
		return nil, status.Error(codes.InvalidArgument, "volume_capability: required")
	}
	if err := checkCapability("volume_capability", req.GetVolumeCapability()); err != nil {
		return nil, err
	}

	s.mu.Lock()
	defer s.mu.Unlock()

	v, err := s.get(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	if req.GetNodeId() != s.NodeID {
		return nil, status.Errorf(codes.NotFound, "node_id: no node %q; this driver's only node is %q (--node-id)", req.GetNodeId(), s.NodeID)
	}
	if readonly, ok := v.Published[req.GetNodeId()]; ok {
		if readonly != req.GetReadonly() {
			return nil, status.Errorf(codes.AlreadyExists, "volume %s is published to node %q with readonly=%t already; unpublish it first to publish it with readonly=%t", v.ID, req.GetNodeId(), readonly, req.GetReadonly())
		}
		klog.FromContext(ctx).V(2).Info("Volume is published already", "volumeID", v.ID, "node", req.GetNodeId())
		return &csi.ControllerPublishVolumeResponse{}, nil
	}
	if v.Published == nil {
		v.Published = map[string]bool{}
	}
	v.Published[req.GetNodeId()] = req.GetReadonly()
	if err := s.Volumes.Update(v); err != nil {
		return nil, status.Errorf(codes.Internal, "recording the publication of volume %s: %v", v.ID, err)
	}
	klog.FromContext(ctx).Info("Published volume", "volumeID", v.ID, "node", req.GetNodeId(), "readonly", req.GetReadonly())
	return &csi.ControllerPublishVolumeResponse{}, nil
}

// ControllerUnpublishVolume undoes ControllerPublishVolume (spec sections
// ControllerUnpublishVolume and "ControllerUnpublishVolume Errors"). A volume
// or a publication that is not there is success, as the spec asks: it is
// unpublished. An empty node_id means every node.
func (s *Service) ControllerUnpublishVolume(ctx context.Context, req *csi.ControllerUnpublishVolumeRequest) (*csi.ControllerUnpublishVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id: required")
	}

	s.mu.Lock()
	defer s.mu.Unlock()

	v, err := s.Volumes.Get(req.GetVolumeId())
	if errors.Is(err, volumes.ErrNotFound) {
		return &csi.ControllerUnpublishVolumeResponse{}, nil
	}
	if err != nil {
		return nil, status.Errorf(codes.Internal, "reading volume %s: %v", req.GetVolumeId(), err)
	}
	_, published := v.Published[req.GetNodeId()]
	switch {
	case req.GetNodeId() == "" && len(v.Published) > 0:
		v.Published = nil
	case published:
		delete(v.Published, req.GetNodeId())
	default:
		return &csi.ControllerUnpublishVolumeResponse{}, nil
	}
	if err := s.Volumes.Update(v); err != nil {
		return nil, status.Errorf(codes.Internal, "recording the unpublication of volume %s: %v", v.ID, err)
	}
	klog.FromContext(ctx).Info("Unpublished volume", "volumeID", v.ID, "node", req.GetNodeId())
	return &csi.ControllerUnpublishVolumeResponse{}, nil
}

// ValidateVolumeCapabilities says whether an existing volume can be used with
// the given capabilities (spec sections ValidateVolumeCapabilities and
// "ValidateVolumeCapabilities Errors"): confirmed when every one is
// supported, else an answer without confirmation and a message saying why
// (an unsupported capability is an answer, not an error).
func (s *Service) ValidateVolumeCapabilities(ctx context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id: required")
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "volume_capabilities: required")
	}

	s.mu.Lock()
	defer s.mu.Unlock()

	if _, err := s.get(req.GetVolumeId()); err != nil {
		return nil, err
	}
	for i, c := range req.GetVolumeCapabilities() {
		if reason := Unsupported(c); reason != "" {
			return &csi.ValidateVolumeCapabilitiesResponse{Message: fmt.Sprintf("volume_capabilities[%d]: %s", i, reason)}, nil
		}
	}
	return &csi.ValidateVolumeCapabilitiesResponse{
		Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
			VolumeContext:      req.GetVolumeContext(),
			VolumeCapabilities: req.GetVolumeCapabilities(),
			Parameters:         req.GetParameters(),
		},
	}, nil
}

// ListVolumes returns the volumes, sorted by ID, a page at a time (spec
// sections ListVolumes and "ListVolumes Errors"). The token of the next page
// is the ID of its first volume, so a page still starts at the right place
// when volumes come and go between two calls; a token that is no volume ID is
// ABORTED, as the spec asks.
func (s *Service) ListVolumes(ctx context.Context, req *csi.ListVolumesRequest) (*csi.ListVolumesResponse, error) {
	if req.GetMaxEntries() < 0 {
		return nil, status.Errorf(codes.InvalidArgument, "max_entries: %d must not be negative", req.GetMaxEntries())
	}
	start := req.GetStartingToken()
	if start != "" && !volumes.ValidID(start) {
		return nil, status.Errorf(codes.Aborted, "starting_token: %q is not a token this driver gave out (ask again without one)", start)
	}

	s.mu.Lock()
	defer s.mu.Unlock()

	vols, err := s.Volumes.List()
	if err != nil {
		return nil, status.Errorf(codes.Internal, "reading the volumes: %v", err)
	}
	resp := &csi.ListVolumesResponse{}
	for _, v := range vols {
		if v.ID < start {
			continue
		}
		if req.GetMaxEntries() > 0 && len(resp.Entries) == int(req.GetMaxEntries()) {
			resp.NextToken = v.ID
			break
		}
		resp.Entries = append(resp.Entries, &csi.ListVolumesResponse_Entry{Volume: csiVolume(v)})
	}
	return resp, nil
}

// get returns the volume id, or the gRPC error to answer: NOT_FOUND when
// there is none, INTERNAL when its record cannot be read.
func (s *Service) get(id string) (volumes.Volume, error) {
	v, err := s.Volumes.Get(id)
	if errors.Is(err, volumes.ErrNotFound) {
		return volumes.Volume{}, status.Errorf(codes.NotFound, "volume_id: no volume %q", id)
	}
	if err != nil {
		return volumes.Volume{}, status.Errorf(codes.Internal, "reading volume %s: %v", id, err)
	}
	return v, nil
}

// csiVolume is v as the CSI messages carry it: with its zone as its
// accessible_topology when it has one, which csi-provisioner turns into the
// PersistentVolume's node affinity.
func csiVolume(v volumes.Volume) *csi.Volume {
	vol := &csi.Volume{VolumeId: v.ID, CapacityBytes: v.CapacityBytes}
	if v.Zone != "" {
		vol.AccessibleTopology = []*csi.Topology{{Segments: map[string]string{TopologyKey: v.Zone}}}
	}
	return vol
}

// publishedNodes lists the node IDs v is published to, for a message.
func publishedNodes(v volumes.Volume) string {
	var nodes []string
	for node := range v.Published {
		nodes = append(nodes, node)
	}
	return strings.Join(nodes, ", ")
}

// capabilities is a ControllerGetCapabilities answer listing the given calls.
func capabilities(types ...csi.ControllerServiceCapability_RPC_Type) *csi.ControllerGetCapabilitiesResponse {
	resp := &csi.ControllerGetCapabilitiesResponse{}
	for _, t := range types {
		resp.Capabilities = append(resp.Capabilities, &csi.ControllerServiceCapability{
			Type: &csi.ControllerServiceCapability_Rpc{Rpc: &csi.ControllerServiceCapability_RPC{Type: t}},
		})
	}
	return resp
}
