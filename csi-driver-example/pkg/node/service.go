// Package node is the toy driver's Node service, the half of a CSI driver the
// kubelet calls on the node where a Pod runs: it mounts a volume's folder where
// the kubelet asks, so that the Pod's container sees it. It is the learner's
// part of lesson 7's part 2 (docs/lessons/07-csi-driver.md), in two versions
// that --reconciler picks in main.go with the Controller service:
//   - Service (reference): every rule the CSI spec states for its calls;
//   - StubService (stub): the starting point, which logs each call and answers
//     codes.Unimplemented.
//
// A toy volume is a folder, <state-dir>/volumes/<volume ID>/data, so mounting
// it is a bind mount, done in two steps as the kubelet asks for them when the
// driver offers STAGE_UNSTAGE_VOLUME:
//
//	<state-dir>/volumes/<id>/data
//	  -> NodeStageVolume:   staging_target_path (one per volume and node,
//	                        /var/lib/kubelet/plugins/kubernetes.io/csi/<driver>/<hash>/globalmount)
//	  -> NodePublishVolume: target_path (one per Pod,
//	                        /var/lib/kubelet/pods/<pod UID>/volumes/kubernetes.io~csi/<pv>/mount)
//
// and NodeUnpublishVolume and NodeUnstageVolume undo them in the other order.
// A real driver stages by formatting and mounting a disk once per node, and
// publishes by bind-mounting that into each Pod; the toy's stage is a bind
// mount too, so that the two steps can be seen apart in the kubelet's log.
//
// The mounts are system calls (mount.go, golang.org/x/sys/unix), not the
// mount command: the driver's image has no other file than the driver. They
// need root (CAP_SYS_ADMIN), which is why the node plugin's container is
// privileged. The rules come from the CSI spec v1.14.0, spec.md, whose
// sections each method names; compare with pkg/hostpath/nodeserver.go in
// github.com/kubernetes-csi/csi-driver-host-path.
package node

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/controller"
	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/volumes"
)

// Service is the reference Node service. It keeps no state of its own: what
// is mounted where is in the node's mount table (mount.go), and the volumes
// are the folders of Volumes, so a driver started again answers as before.
//
// The calls change the mount table, and two of them racing on one path (the
// same NodeStageVolume retried while the first is under way, say) could mount
// twice; one mutex serializes them, as in the reference Controller service.
type Service struct {
	// UnimplementedNodeServer answers codes.Unimplemented for the calls
	// this driver does not offer (volume stats, expansion, ...), which
	// NodeGetCapabilities does not list either.
	csi.UnimplementedNodeServer

	// Volumes is where the volumes live: the same --state-dir as the
	// Controller service's (on kind, the node's folder both halves mount).
	Volumes *volumes.Store
	// NodeID is this node's ID (--node-id): the kubelet writes it into the
	// node's CSINode object, where csi-attacher reads it to call
	// ControllerPublishVolume with it.
	NodeID string
	// Zone is this node's zone (--node-zone), "" for none: NodeGetInfo
	// answers it as the node's accessible_topology.
	Zone string

	mu sync.Mutex
}

// NodeGetInfo answers the node's ID (spec section NodeGetInfo), with no limit
// on volumes (max_volumes_per_node 0), and the node's zone, if it has one, as
// its accessible_topology (nodeInfo).
func (s *Service) NodeGetInfo(ctx context.Context, req *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return nodeInfo(s.NodeID, s.Zone), nil
}

// nodeInfo is NodeGetInfo's answer for the node nodeID in zone ("" for none).
// The kubelet, at registration, labels its Node with each segment of
// accessible_topology and lists their keys in the Node's CSINode
// (topologyKeys), where csi-provisioner reads them to build CreateVolume's
// accessibility_requirements (lesson 7, section 10). Compare with
// NodeGetInfo in csi-driver-host-path's pkg/hostpath/nodeserver.go.
func nodeInfo(nodeID, zone string) *csi.NodeGetInfoResponse {
	info := &csi.NodeGetInfoResponse{NodeId: nodeID}
	if zone != "" {
		info.AccessibleTopology = &csi.Topology{Segments: map[string]string{controller.TopologyKey: zone}}
	}
	return info
}

// NodeGetCapabilities lists STAGE_UNSTAGE_VOLUME (spec section
// NodeGetCapabilities): the kubelet then calls NodeStageVolume once per volume
// and node (its MountDevice) before NodePublishVolume for each Pod (its
// SetUp), and NodeUnstageVolume after the last NodeUnpublishVolume.
func (s *Service) NodeGetCapabilities(ctx context.Context, req *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	return nodeCapabilities(csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME), nil
}

// NodeStageVolume bind-mounts the volume's data folder at staging_target_path
// (spec sections NodeStageVolume and "NodeStageVolume Errors"). The CO makes
// that folder; the driver mounts on it. Asked again when the volume is
// mounted there already, it answers OK (idempotency); something else mounted
// there is ALREADY_EXISTS.
func (s *Service) NodeStageVolume(ctx context.Context, req *csi.NodeStageVolumeRequest) (*csi.NodeStageVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id: required")
	}
	if req.GetStagingTargetPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "staging_target_path: required")
	}
	if req.GetVolumeCapability() == nil {
		return nil, status.Error(codes.InvalidArgument, "volume_capability: required")
	}
	if err := checkCapability(req.GetVolumeCapability()); err != nil {
		return nil, err
	}
	staging := req.GetStagingTargetPath()

	s.mu.Lock()
	defer s.mu.Unlock()

	data, err := s.dataFolder(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	// The spec makes the CO create staging_target_path (the kubelet does,
	// under /var/lib/kubelet); the driver only mounts on it.
	if info, err := os.Stat(staging); err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "staging_target_path: %v; the CO makes this folder before NodeStageVolume", err)
	} else if !info.IsDir() {
		return nil, status.Errorf(codes.FailedPrecondition, "staging_target_path %s: not a folder", staging)
	}
	if _, mounted, err := mountAt(staging); err != nil {
		return nil, status.Errorf(codes.Internal, "reading the mount table: %v", err)
	} else if mounted {
		if err := mountedHere(staging, data, "staging_target_path"); err != nil {
			return nil, err
		}
		klog.FromContext(ctx).V(2).Info("Volume is staged already", "volumeID", req.GetVolumeId(), "stagingTargetPath", staging)
		return &csi.NodeStageVolumeResponse{}, nil
	}
	if err := bindMount(data, staging, false); err != nil {
		return nil, status.Errorf(codes.Internal, "staging volume %s: %v", req.GetVolumeId(), err)
	}
	klog.FromContext(ctx).Info("Staged volume", "volumeID", req.GetVolumeId(), "folder", data, "stagingTargetPath", staging)
	return &csi.NodeStageVolumeResponse{}, nil
}

// NodeUnstageVolume undoes NodeStageVolume (spec sections NodeUnstageVolume
// and "NodeUnstageVolume Errors"): it unmounts staging_target_path and leaves
// the folder, which is the CO's. Nothing mounted there is OK, as the spec
// asks (the volume is not staged, so it is unstaged), or NOT_FOUND when the
// volume does not exist either.
func (s *Service) NodeUnstageVolume(ctx context.Context, req *csi.NodeUnstageVolumeRequest) (*csi.NodeUnstageVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id: required")
	}
	if req.GetStagingTargetPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "staging_target_path: required")
	}
	staging := req.GetStagingTargetPath()

	s.mu.Lock()
	defer s.mu.Unlock()

	unmounted, err := s.unmountIfMounted(req.GetVolumeId(), staging)
	if err != nil {
		return nil, err
	}
	if unmounted {
		klog.FromContext(ctx).Info("Unstaged volume", "volumeID", req.GetVolumeId(), "stagingTargetPath", staging)
	}
	return &csi.NodeUnstageVolumeResponse{}, nil
}

// NodePublishVolume bind-mounts staging_target_path, where NodeStageVolume
// mounted the volume, at target_path, a folder it makes (spec sections
// NodePublishVolume and "NodePublishVolume Errors"); with readonly (a Pod's
// volume persistentVolumeClaim.readOnly: true, say), or the access mode
// SINGLE_NODE_READER_ONLY, the mount is read-only. Asked again when the volume
// is mounted there the same way already, it answers OK (idempotency); the
// other readonly, or another volume there, is ALREADY_EXISTS.
//
// The spec's table for a second target_path of a volume whose access mode is
// not MULTI_NODE_* suggests FAILED_PRECONDITION; Kubernetes, though, reads
// ReadWriteOnce (SINGLE_NODE_WRITER) as one node and any number of its Pods,
// each with a target_path of its own, so this driver publishes a volume at as
// many paths as it is asked to.
func (s *Service) NodePublishVolume(ctx context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id: required")
	}
	if req.GetTargetPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "target_path: required")
	}
	if req.GetVolumeCapability() == nil {
		return nil, status.Error(codes.InvalidArgument, "volume_capability: required")
	}
	if err := checkCapability(req.GetVolumeCapability()); err != nil {
		return nil, err
	}
	// The driver offers STAGE_UNSTAGE_VOLUME, so the CO must say where it
	// staged the volume; the spec's code for its absence is this one.
	if req.GetStagingTargetPath() == "" {
		return nil, status.Error(codes.FailedPrecondition, "staging_target_path: required (this driver offers STAGE_UNSTAGE_VOLUME): call NodeStageVolume first")
	}
	staging, target := req.GetStagingTargetPath(), req.GetTargetPath()
	readOnly := req.GetReadonly() ||
		req.GetVolumeCapability().GetAccessMode().GetMode() == csi.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY

	s.mu.Lock()
	defer s.mu.Unlock()

	data, err := s.dataFolder(req.GetVolumeId())
	if err != nil {
		return nil, err
	}
	// The volume must be staged at staging_target_path: publishing that
	// folder otherwise would mount an empty folder into the Pod.
	if _, mounted, err := mountAt(staging); err != nil {
		return nil, status.Errorf(codes.Internal, "reading the mount table: %v", err)
	} else if !mounted {
		return nil, status.Errorf(codes.FailedPrecondition, "staging_target_path %s: volume %s is not staged there: call NodeStageVolume first", staging, req.GetVolumeId())
	}
	if err := mountedHere(staging, data, "staging_target_path"); status.Code(err) == codes.AlreadyExists {
		return nil, status.Errorf(codes.FailedPrecondition, "%s: call NodeStageVolume first", status.Convert(err).Message())
	} else if err != nil {
		return nil, err
	}

	// The spec makes target_path the driver's to create (its parent is the
	// CO's), and makes NodeUnpublishVolume remove it.
	if err := os.Mkdir(target, 0o750); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, status.Errorf(codes.Internal, "target_path: making the folder %s: %v", target, err)
	}
	if m, mounted, err := mountAt(target); err != nil {
		return nil, status.Errorf(codes.Internal, "reading the mount table: %v", err)
	} else if mounted {
		if err := mountedHere(target, data, "target_path"); err != nil {
			return nil, err
		}
		if m.ReadOnly != readOnly {
			return nil, status.Errorf(codes.AlreadyExists, "target_path %s: volume %s is published there with readonly=%t already; unpublish it first to publish it with readonly=%t", target, req.GetVolumeId(), m.ReadOnly, readOnly)
		}
		klog.FromContext(ctx).V(2).Info("Volume is published already", "volumeID", req.GetVolumeId(), "targetPath", target)
		return &csi.NodePublishVolumeResponse{}, nil
	}
	if err := bindMount(staging, target, readOnly); err != nil {
		return nil, status.Errorf(codes.Internal, "publishing volume %s: %v", req.GetVolumeId(), err)
	}
	klog.FromContext(ctx).Info("Published volume", "volumeID", req.GetVolumeId(), "targetPath", target, "readonly", readOnly)
	return &csi.NodePublishVolumeResponse{}, nil
}

// NodeUnpublishVolume undoes NodePublishVolume (spec sections
// NodeUnpublishVolume and "NodeUnpublishVolume Errors"): it unmounts
// target_path and removes the folder, which the spec makes the driver's to
// remove. Nothing there is OK (unpublished already), or NOT_FOUND when the
// volume does not exist either.
func (s *Service) NodeUnpublishVolume(ctx context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id: required")
	}
	if req.GetTargetPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "target_path: required")
	}
	target := req.GetTargetPath()

	s.mu.Lock()
	defer s.mu.Unlock()

	unmounted, err := s.unmountIfMounted(req.GetVolumeId(), target)
	if err != nil {
		return nil, err
	}
	// os.Remove removes an empty folder only: should the unmount not have
	// happened after all, the volume's files are never touched.
	if err := os.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, status.Errorf(codes.Internal, "target_path: removing the folder %s: %v", target, err)
	}
	if unmounted {
		klog.FromContext(ctx).Info("Unpublished volume", "volumeID", req.GetVolumeId(), "targetPath", target)
	}
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

// unmountIfMounted unmounts path and reports true when something is mounted
// there. Nothing mounted is no error for a volume that exists, and NOT_FOUND
// for one that does not: the spec's two rules, in an order that never leaves
// a mount behind because its volume is gone.
func (s *Service) unmountIfMounted(volumeID, path string) (bool, error) {
	_, mounted, err := mountAt(path)
	if err != nil {
		return false, status.Errorf(codes.Internal, "reading the mount table: %v", err)
	}
	if mounted {
		if err := unmount(path); err != nil {
			return false, status.Errorf(codes.Internal, "volume %s: %v", volumeID, err)
		}
		return true, nil
	}
	if _, err := s.dataFolder(volumeID); err != nil {
		return false, err
	}
	return false, nil
}

// dataFolder returns the folder of volumeID that NodeStageVolume mounts, or
// the gRPC error to answer: NOT_FOUND when the volume does not exist.
func (s *Service) dataFolder(volumeID string) (string, error) {
	_, err := s.Volumes.Get(volumeID)
	if errors.Is(err, volumes.ErrNotFound) {
		return "", status.Errorf(codes.NotFound, "volume_id: no volume %q", volumeID)
	}
	if err != nil {
		return "", status.Errorf(codes.Internal, "reading volume %s: %v", volumeID, err)
	}
	return filepath.Join(s.Volumes.Dir(volumeID), volumes.DataDir), nil
}

// mountedHere returns nil when the mount at path shows the folder data (the
// volume's), and ALREADY_EXISTS naming field when it shows another one.
func mountedHere(path, data, field string) error {
	same, err := sameFolder(data, path)
	if err != nil {
		return status.Errorf(codes.Internal, "comparing %s with the volume's folder: %v", field, err)
	}
	if !same {
		return status.Errorf(codes.AlreadyExists, "%s %s: something else is mounted there, not the volume's folder %s", field, path, data)
	}
	return nil
}

// checkCapability returns nil when this driver can serve c on a node (spec
// message VolumeCapability): the mount access type, for a folder, with a
// single-node access mode, as CreateVolume accepts (controller.Unsupported, the
// one place the rule is written). No access type is INVALID_ARGUMENT; anything
// else is the spec's "Exceeds capabilities", FAILED_PRECONDITION, naming the
// field.
func checkCapability(c *csi.VolumeCapability) error {
	if c.GetBlock() == nil && c.GetMount() == nil {
		return status.Error(codes.InvalidArgument, "volume_capability: access_type: required (mount)")
	}
	if reason := controller.Unsupported(c); reason != "" {
		return status.Error(codes.FailedPrecondition, "volume_capability: "+reason)
	}
	return nil
}

// nodeCapabilities is a NodeGetCapabilities answer listing the given calls.
func nodeCapabilities(types ...csi.NodeServiceCapability_RPC_Type) *csi.NodeGetCapabilitiesResponse {
	resp := &csi.NodeGetCapabilitiesResponse{}
	for _, t := range types {
		resp.Capabilities = append(resp.Capabilities, &csi.NodeServiceCapability{
			Type: &csi.NodeServiceCapability_Rpc{Rpc: &csi.NodeServiceCapability_RPC{Type: t}},
		})
	}
	return resp
}
