package controller

import (
	"fmt"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// singleNodeModes are the access modes a toy volume supports: it is a folder
// on one node, so it can be used on that node only. Kubernetes asks for
// SINGLE_NODE_WRITER for a ReadWriteOnce claim; ReadOnlyMany and
// ReadWriteMany become MULTI_NODE_* modes, which this driver refuses.
var singleNodeModes = map[csi.VolumeCapability_AccessMode_Mode]bool{
	csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER:        true,
	csi.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY:   true,
	csi.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER: true,
	csi.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER:  true,
}

// Unsupported returns why this driver cannot serve the capability c, or ""
// when it can (spec message VolumeCapability): the mount access type (a
// folder, not a block device) with a single-node access mode. The Node
// service (pkg/node) holds NodeStageVolume and NodePublishVolume to the same
// rule, with the codes the spec gives those calls.
func Unsupported(c *csi.VolumeCapability) string {
	if c.GetBlock() != nil {
		return "access_type block: this driver's volumes are folders; ask for access_type mount (volumeMode: Filesystem)"
	}
	if c.GetMount() == nil {
		return "access_type: required (mount)"
	}
	mode := c.GetAccessMode().GetMode()
	if !singleNodeModes[mode] {
		return fmt.Sprintf("access_mode %s: this driver's volumes live on one node; ask for a SINGLE_NODE_* mode (accessModes: [ReadWriteOnce])", mode)
	}
	return ""
}

// checkCapability returns an INVALID_ARGUMENT error naming field when this
// driver cannot serve c.
func checkCapability(field string, c *csi.VolumeCapability) error {
	if reason := Unsupported(c); reason != "" {
		return status.Errorf(codes.InvalidArgument, "%s: %s", field, reason)
	}
	return nil
}

// checkCapabilities is checkCapability for a list, which must not be empty.
func checkCapabilities(field string, caps []*csi.VolumeCapability) error {
	if len(caps) == 0 {
		return status.Errorf(codes.InvalidArgument, "%s: required", field)
	}
	for i, c := range caps {
		if err := checkCapability(fmt.Sprintf("%s[%d]", field, i), c); err != nil {
			return err
		}
	}
	return nil
}
