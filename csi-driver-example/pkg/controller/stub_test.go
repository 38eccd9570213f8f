package controller_test

import (
	"context"
	"slices"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	"github.com/controller-kit/controller-kit/csi-driver-example/internal/testserver"
	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/controller"
	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/driver"
	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/node"
	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/volumes"
)

func TestStubAnswersUnimplementedButListsTheCallsToWrite(t *testing.T) {
	testserver.SkipIfYours(t, "stub.go", "exercises 1 to 3")
	store, err := volumes.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	conn := testserver.Start(t,
		&driver.Identity{Name: "test.csi.controller-kit.dev"},
		&controller.StubService{Volumes: store, NodeID: nodeID, MaxCapacityBytes: maxBytes},
		&node.StubService{NodeID: nodeID})
	c := csi.NewControllerClient(conn)
	ctx := context.Background()

	// The sidecars ask first; without CREATE_DELETE_VOLUME csi-provisioner
	// would exit, without PUBLISH_UNPUBLISH_VOLUME csi-attacher would never
	// call ControllerPublishVolume.
	caps, err := c.ControllerGetCapabilities(ctx, &csi.ControllerGetCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var listed []csi.ControllerServiceCapability_RPC_Type
	for _, cap := range caps.GetCapabilities() {
		listed = append(listed, cap.GetRpc().GetType())
	}
	for _, want := range []csi.ControllerServiceCapability_RPC_Type{
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
		csi.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME,
	} {
		if !slices.Contains(listed, want) {
			t.Errorf("ControllerGetCapabilities lists %v, want %v among them", listed, want)
		}
	}

	for call, err := range map[string]error{
		"CreateVolume": second(c.CreateVolume(ctx, createReq("pvc-1", mi))),
		"DeleteVolume": second(c.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: "vol-0000000000000000"})),
		"ControllerPublishVolume": second(c.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{
			VolumeId: "vol-0000000000000000", NodeId: nodeID, VolumeCapability: mountRWO(),
		})),
		"ControllerUnpublishVolume": second(c.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{VolumeId: "vol-0000000000000000"})),
		"ValidateVolumeCapabilities": second(c.ValidateVolumeCapabilities(ctx, &csi.ValidateVolumeCapabilitiesRequest{
			VolumeId: "vol-0000000000000000", VolumeCapabilities: []*csi.VolumeCapability{mountRWO()},
		})),
		"ListVolumes": second(c.ListVolumes(ctx, &csi.ListVolumesRequest{})),
	} {
		t.Run(call, func(t *testing.T) {
			wantCode(t, err, codes.Unimplemented, call, "--reconciler=stub")
		})
	}
}

// second returns the error of a call's two results.
func second[T any](_ T, err error) error { return err }
