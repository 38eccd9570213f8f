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

// startZoned serves the reference Controller service with two zones, zone-a
// of 10Mi and zone-b of 50Mi, on a fresh state folder.
func startZoned(t *testing.T) csi.ControllerClient {
	t.Helper()
	store, err := volumes.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	conn := testserver.Start(t,
		&driver.Identity{Name: "test.csi.controller-kit.dev", Topology: true},
		&controller.Service{Volumes: store, NodeID: nodeID, MaxCapacityBytes: maxBytes,
			Zones: map[string]int64{"zone-a": 10 * mi, "zone-b": 50 * mi}},
		&node.StubService{NodeID: nodeID})
	return csi.NewControllerClient(conn)
}

// inZones is the accessibility_requirements csi-provisioner sends for a
// claim whose Pod's node is in preferred[0], as it does with
// --strict-topology: requisite and preferred are the same zones.
func inZones(zones ...string) *csi.TopologyRequirement {
	req := &csi.TopologyRequirement{}
	for _, zone := range zones {
		t := &csi.Topology{Segments: map[string]string{controller.TopologyKey: zone}}
		req.Requisite = append(req.Requisite, t)
		req.Preferred = append(req.Preferred, t)
	}
	return req
}

// zoneOf returns the zone a CreateVolume answer says the volume is in.
func zoneOf(t *testing.T, resp *csi.CreateVolumeResponse) string {
	t.Helper()
	topologies := resp.GetVolume().GetAccessibleTopology()
	if len(topologies) != 1 {
		t.Fatalf("CreateVolume answered accessible_topology %v, want one segment, the volume's zone", topologies)
	}
	return topologies[0].GetSegments()[controller.TopologyKey]
}

func TestCreateVolumeGoesToThePreferredZone(t *testing.T) {
	c := startZoned(t)
	req := createReq("pvc-1", mi)
	req.AccessibilityRequirements = inZones("zone-b", "zone-a")
	resp, err := c.CreateVolume(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := zoneOf(t, resp); got != "zone-b" {
		t.Errorf("volume in %q, want zone-b, the first preferred zone (the selected node's)", got)
	}
	// The same name again is the same volume, in its zone.
	again, err := c.CreateVolume(context.Background(), req)
	if err != nil || again.GetVolume().GetVolumeId() != resp.GetVolume().GetVolumeId() {
		t.Errorf("CreateVolume again: %v, %v; want volume %s", again.GetVolume(), err, resp.GetVolume().GetVolumeId())
	}
	req.AccessibilityRequirements = inZones("zone-a")
	_, err = c.CreateVolume(context.Background(), req)
	wantCode(t, err, codes.AlreadyExists, "zone-b")
}

func TestCreateVolumeInAFullZoneIsResourceExhausted(t *testing.T) {
	c := startZoned(t)
	first := createReq("pvc-1", 8*mi)
	first.AccessibilityRequirements = inZones("zone-a")
	if _, err := c.CreateVolume(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	second := createReq("pvc-2", 4*mi)
	second.AccessibilityRequirements = inZones("zone-a")
	_, err := c.CreateVolume(context.Background(), second)
	wantCode(t, err, codes.ResourceExhausted, "zone-a has 2Mi", "no room for 4Mi")

	// Nowhere this driver has: the same code, naming its zones.
	elsewhere := createReq("pvc-3", mi)
	elsewhere.AccessibilityRequirements = inZones("zone-c")
	_, err = c.CreateVolume(context.Background(), elsewhere)
	wantCode(t, err, codes.ResourceExhausted, "zone-c", "zone-a, zone-b")

	// Requisite names a zone with room after the full one: the volume goes
	// there.
	second.AccessibilityRequirements = inZones("zone-a", "zone-b")
	resp, err := c.CreateVolume(context.Background(), second)
	if err != nil {
		t.Fatal(err)
	}
	if got := zoneOf(t, resp); got != "zone-b" {
		t.Errorf("volume in %q, want zone-b, the requisite zone with room", got)
	}
}

func TestCreateVolumeWithoutRequirementsTakesTheZoneWithMostRoom(t *testing.T) {
	c := startZoned(t)
	resp, err := c.CreateVolume(context.Background(), createReq("pvc-1", mi))
	if err != nil {
		t.Fatal(err)
	}
	if got := zoneOf(t, resp); got != "zone-b" {
		t.Errorf("volume in %q, want zone-b (50Mi free against zone-a's 10Mi)", got)
	}
}

func TestGetCapacityAnswersEachZonesFreeBytes(t *testing.T) {
	c := startZoned(t)
	caps, err := c.ControllerGetCapabilities(context.Background(), &csi.ControllerGetCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(caps.GetCapabilities(), func(c *csi.ControllerServiceCapability) bool {
		return c.GetRpc().GetType() == csi.ControllerServiceCapability_RPC_GET_CAPACITY
	}) {
		t.Errorf("ControllerGetCapabilities lists %v, want GET_CAPACITY among them (the driver has zones)", caps.GetCapabilities())
	}
	req := createReq("pvc-1", 3*mi)
	req.AccessibilityRequirements = inZones("zone-a")
	if _, err := c.CreateVolume(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	for zone, want := range map[string]int64{"zone-a": 7 * mi, "zone-b": 50 * mi, "zone-c": 0} {
		resp, err := c.GetCapacity(context.Background(), &csi.GetCapacityRequest{
			VolumeCapabilities: []*csi.VolumeCapability{mountRWO()},
			AccessibleTopology: &csi.Topology{Segments: map[string]string{controller.TopologyKey: zone}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.GetAvailableCapacity(); got != want {
			t.Errorf("GetCapacity of %s: available_capacity %d, want %d", zone, got, want)
		}
		if got := resp.GetMaximumVolumeSize().GetValue(); got != want {
			t.Errorf("GetCapacity of %s: maximum_volume_size %d, want %d", zone, got, want)
		}
	}
	all, err := c.GetCapacity(context.Background(), &csi.GetCapacityRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := all.GetAvailableCapacity(), int64(57*mi); got != want {
		t.Errorf("GetCapacity of no zone: %d, want %d, every zone's free bytes", got, want)
	}
}

func TestGetCapacityWithoutZonesIsUnimplemented(t *testing.T) {
	c := startReference(t, t.TempDir())
	_, err := c.GetCapacity(context.Background(), &csi.GetCapacityRequest{})
	wantCode(t, err, codes.Unimplemented, "--zones")
}
