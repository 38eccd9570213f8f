// Package driver is the part of the toy CSI driver a learner does not change:
// the Identity service, and the gRPC server on the unix socket that serves it
// beside the Controller and Node services (pkg/controller and pkg/node, the
// learner's parts). The sidecars and the kubelet need Identity to be right
// before they call anything else, so it answers the same whichever Controller
// and Node services run.
//
// Compare with pkg/hostpath/identityserver.go in
// github.com/kubernetes-csi/csi-driver-host-path; the rules are the CSI spec's
// (v1.14.0, spec.md), whose sections each method names.
package driver

import (
	"context"

	"github.com/container-storage-interface/spec/lib/go/csi"
)

// Version is the driver's vendor_version in GetPluginInfo.
const Version = "0.1.0"

// Identity is the Identity service (spec section "Identity Service RPC"):
// which driver this is and what it offers. csi-provisioner and csi-attacher
// call it once at start; csi-provisioner's --csi-address socket answering
// another driver's name would make it serve that driver's StorageClasses.
type Identity struct {
	csi.UnimplementedIdentityServer

	// Name is the driver's name (--driver-name): what a StorageClass's
	// provisioner and a PV's spec.csi.driver say.
	Name string
	// Topology says the driver's volumes live in zones (--zones), so that
	// the CO must say where a volume is wanted.
	Topology bool
}

// GetPluginInfo answers the driver's name and version (spec section
// GetPluginInfo).
func (i *Identity) GetPluginInfo(ctx context.Context, req *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: i.Name, VendorVersion: Version}, nil
}

// GetPluginCapabilities says the driver has a Controller service (spec section
// GetPluginCapabilities); without it, csi-attacher would mark every volume
// attached without calling ControllerPublishVolume. With Topology it also
// lists VOLUME_ACCESSIBILITY_CONSTRAINTS, on which csi-provisioner sends
// CreateVolume the accessibility_requirements it builds from the Nodes'
// CSINodes and labels; without, the volumes carry no topology.
func (i *Identity) GetPluginCapabilities(ctx context.Context, req *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	resp := &csi.GetPluginCapabilitiesResponse{
		Capabilities: []*csi.PluginCapability{{
			Type: &csi.PluginCapability_Service_{
				Service: &csi.PluginCapability_Service{Type: csi.PluginCapability_Service_CONTROLLER_SERVICE},
			},
		}},
	}
	if i.Topology {
		resp.Capabilities = append(resp.Capabilities, &csi.PluginCapability{
			Type: &csi.PluginCapability_Service_{
				Service: &csi.PluginCapability_Service{Type: csi.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS},
			},
		})
	}
	return resp, nil
}

// Probe says the driver is ready (spec section Probe): it is, once it serves
// the socket, since it has nothing else to wait for.
func (i *Identity) Probe(ctx context.Context, req *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{}, nil
}
