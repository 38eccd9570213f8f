package driver

import (
	"context"

	"github.com/container-storage-interface/spec/lib/go/csi"
)

// Node is the Node service (spec section "Node Service RPC"), the half of a
// driver the kubelet calls on the node where a Pod runs. Part 1 of lesson 7
// has no kubelet (the local cluster's nodes are kwok's), so it answers only
// who the node is; NodeStageVolume and NodePublishVolume (mounting a volume's
// folder into a Pod) are part 2's, on kind (issue 48), and answer
// codes.Unimplemented until then.
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
