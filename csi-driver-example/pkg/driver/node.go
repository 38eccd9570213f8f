package driver

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Node is the Node service (spec section "Node Service RPC"), the half of a
// driver the kubelet calls on the node where a Pod runs. Part 1 of lesson 7
// has no kubelet (the local cluster's nodes are kwok's), so it answers who the
// node is, and NodeUnpublishVolume where nothing was published;
// NodePublishVolume (mounting a volume's folder into a Pod) is part 2's, on
// kind (issue 48), and answers codes.Unimplemented until then.
type Node struct {
	csi.UnimplementedNodeServer

	// NodeID is this node's ID (--node-id): the kubelet writes it into the
	// node's CSINode object, where csi-attacher reads it to call
	// ControllerPublishVolume with it.
	NodeID string
}

// NodeGetInfo answers the node's ID (spec section NodeGetInfo), with no limit
// on volumes (max_volumes_per_node 0) and no topology.
func (n *Node) NodeGetInfo(ctx context.Context, req *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return &csi.NodeGetInfoResponse{NodeId: n.NodeID}, nil
}

// NodeGetCapabilities lists no optional Node calls (spec section
// NodeGetCapabilities): no STAGE_UNSTAGE_VOLUME, so a kubelet would call
// NodePublishVolume alone.
func (n *Node) NodeGetCapabilities(ctx context.Context, req *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	return &csi.NodeGetCapabilitiesResponse{}, nil
}

// NodeUnpublishVolume undoes NodePublishVolume at target_path (spec section
// NodeUnpublishVolume). Part 1 never publishes a volume on a node, so it has
// the spec's idempotent answer only: nothing is published at a target_path
// that does not exist, and unpublishing it is success (csi-sanity's cleanup
// calls this for every volume it made). A target_path that exists is part
// 2's (issue 48): Unimplemented until then.
func (n *Node) NodeUnpublishVolume(ctx context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume_id: required")
	}
	if req.GetTargetPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "target_path: required")
	}
	_, err := os.Lstat(req.GetTargetPath())
	if errors.Is(err, fs.ErrNotExist) {
		return &csi.NodeUnpublishVolumeResponse{}, nil
	}
	return nil, status.Errorf(codes.Unimplemented, "target_path %s: unpublishing a volume on a node is lesson 7's part 2", req.GetTargetPath())
}
