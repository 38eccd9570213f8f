package controller

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/volumes"
)

// TopologyKey is the key of the driver's one topology segment, the zone a
// volume lives in. A Node carries it as a label, put there by the kubelet
// when the driver's NodeGetInfo reports the node's accessible_topology (on
// the kit's local cluster, where kwok's nodes have no kubelet, lesson 7 writes
// the label and the Node's CSINode by hand). csi-provisioner reads the keys
// from the selected Node's CSINode (spec.drivers[].topologyKeys) and the
// values from the Node's labels to build CreateVolume's
// accessibility_requirements; the volume's answer comes back as its
// PersistentVolume's node affinity. Compare with topology.hostpath.csi/node,
// csi-driver-host-path's key (pkg/hostpath).
const TopologyKey = "topology.toy.csi.controller-kit.dev/zone"

// zoneFor picks the zone a new volume of sizeBytes goes to, or returns the
// gRPC error to answer (spec section CreateVolume, field
// accessibility_requirements). The zones are taken in the order the CO gives
// them, preferred first, then requisite; the first zone of this driver with
// room wins. csi-provisioner puts the selected node's zone first in preferred
// for a WaitForFirstConsumer claim, and, run with --strict-topology as the kit
// runs it, offers nothing else: a volume is made in the Pod's zone or not at
// all. No requirements at all lets the driver choose: the zone with the most
// room. Neither a zone of this driver nor room in one is RESOURCE_EXHAUSTED,
// the spec's "unable to provision in accessible_topology", on which
// csi-provisioner hands a WaitForFirstConsumer claim back to the scheduler.
// The caller holds s.mu.
func (s *Service) zoneFor(req *csi.TopologyRequirement, sizeBytes int64) (string, error) {
	free, err := s.freeBytes()
	if err != nil {
		return "", err
	}
	var asked []string
	for _, t := range append(slices.Clone(req.GetPreferred()), req.GetRequisite()...) {
		if zone, ok := t.GetSegments()[TopologyKey]; ok && !slices.Contains(asked, zone) {
			asked = append(asked, zone)
		}
	}
	if len(req.GetPreferred())+len(req.GetRequisite()) == 0 {
		// The zone with the most room; of equals, the first by name.
		for _, zone := range slices.Sorted(maps.Keys(free)) {
			if len(asked) == 0 || free[zone] > free[asked[0]] {
				asked = []string{zone}
			}
		}
	}
	var full []string
	for _, zone := range asked {
		room, ours := free[zone]
		switch {
		case !ours:
			continue
		case room >= sizeBytes:
			return zone, nil
		default:
			full = append(full, fmt.Sprintf("%s has %s free", zone, quantity(room)))
		}
	}
	if len(full) == 0 {
		return "", status.Errorf(codes.ResourceExhausted,
			"accessibility_requirements: they name no zone of this driver (%s %v; its zones are %s, --zones)",
			TopologyKey, asked, strings.Join(slices.Sorted(maps.Keys(s.Zones)), ", "))
	}
	return "", status.Errorf(codes.ResourceExhausted, "accessibility_requirements: no room for %s: %s", quantity(sizeBytes), strings.Join(full, ", "))
}

// freeBytes returns each zone's free bytes: its capacity (--zones) less the
// sizes of the volumes made in it. The caller holds s.mu.
func (s *Service) freeBytes() (map[string]int64, error) {
	vols, err := s.Volumes.List()
	if err != nil {
		return nil, status.Errorf(codes.Internal, "reading the volumes: %v", err)
	}
	free := maps.Clone(s.Zones)
	for _, v := range vols {
		if _, ok := free[v.Zone]; ok {
			free[v.Zone] -= v.CapacityBytes
		}
	}
	return free, nil
}

// inRequisite reports whether v may answer a request whose requisite
// topologies are req's (spec section CreateVolume: an existing volume of the
// name must be accessible from one of them): always with no requisite, or for
// a driver without zones.
func (s *Service) inRequisite(v volumes.Volume, req *csi.TopologyRequirement) bool {
	if len(s.Zones) == 0 || len(req.GetRequisite()) == 0 {
		return true
	}
	return slices.ContainsFunc(req.GetRequisite(), func(t *csi.Topology) bool {
		return t.GetSegments()[TopologyKey] == v.Zone
	})
}

// GetCapacity answers how many bytes are free (spec section GetCapacity):
// csi-provisioner's capacity controller (--enable-capacity) asks once per
// StorageClass and topology segment, and publishes each answer as a
// CSIStorageCapacity object, which the scheduler's VolumeBinding plugin reads
// to keep a Pod off the nodes whose zone has no room for its claim. The answer
// for a zone is its free bytes; for no zone, the free bytes of all of them;
// for a zone this driver lacks, or capabilities it does not serve, 0.
// maximum_volume_size is the largest volume CreateVolume would make there now
// (the scheduler prefers it to available_capacity when it is set). A driver
// without zones offers no GET_CAPACITY and answers Unimplemented.
func (s *Service) GetCapacity(ctx context.Context, req *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
	if len(s.Zones) == 0 {
		return nil, status.Error(codes.Unimplemented, "GetCapacity: this driver runs without zones (--zones), so it does not track capacity")
	}
	for _, c := range req.GetVolumeCapabilities() {
		if Unsupported(c) != "" {
			return &csi.GetCapacityResponse{AvailableCapacity: 0, MaximumVolumeSize: wrapperspb.Int64(0)}, nil
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()

	free, err := s.freeBytes()
	if err != nil {
		return nil, err
	}
	var available, largest int64
	if zone, ok := req.GetAccessibleTopology().GetSegments()[TopologyKey]; ok {
		available = max(free[zone], 0)
		largest = available
	} else {
		for _, room := range free {
			available += max(room, 0)
			largest = max(largest, room)
		}
	}
	return &csi.GetCapacityResponse{
		AvailableCapacity: available,
		MaximumVolumeSize: wrapperspb.Int64(min(largest, s.MaxCapacityBytes)),
	}, nil
}
