// Package registration is how the toy driver tells the kubelet of its node
// that it is there: the kubelet's plugin registration service,
// pluginregistration.v1.Registration (k8s.io/kubelet's
// pkg/apis/pluginregistration/v1), served on a socket of its own in the
// kubelet's plugins registry folder (/var/lib/kubelet/plugins_registry). It is
// the learner's part of lesson 7's part 2 with the Node service, in two
// versions that --reconciler picks in main.go:
//   - Service (reference): answers who the driver is and where its CSI
//     socket is, and stops the driver when the kubelet refuses it;
//   - StubService (stub): the starting point, which logs each call and
//     answers codes.Unimplemented.
//
// The kubelet's plugin watcher (pkg/kubelet/pluginmanager in Kubernetes)
// notices the socket file appear, dials it, calls GetInfo, checks the answer
// (the type CSIPlugin, a CSI version it speaks), hands the driver to its CSI
// volume plugin (pkg/volume/csi, RegisterPlugin), which calls the driver's
// NodeGetInfo at the endpoint GetInfo named and writes the driver and its node
// ID into the node's CSINode object, and finally calls
// NotifyRegistrationStatus with the outcome. When the socket file goes away
// (the driver stopped), the kubelet unregisters the driver.
//
// Most CSI drivers leave this to a sidecar, node-driver-registrar, which
// serves the same service beside them; the toy driver serves it itself, so
// the whole exchange is in one log.
package registration

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// SupportedVersions are the versions of the CSI spec the driver speaks, as
// GetInfo answers them. The kubelet accepts a driver when one of them is a
// version it speaks (1.x: "1.0.0" means the CSI spec's version 1).
var SupportedVersions = []string{"1.0.0"}

// Service is the reference registration service.
type Service struct {
	registerapi.UnimplementedRegistrationServer

	// DriverName is the driver's name (--driver-name), the one
	// GetPluginInfo answers: the kubelet lists it in CSINode under it.
	DriverName string
	// Endpoint is the path of the driver's CSI socket as the kubelet sees
	// it (--kubelet-endpoint), where it calls NodeGetInfo, NodeStageVolume,
	// ... In a container that mounts the node's folder at the same path,
	// it is the path the driver serves on.
	Endpoint string
	// Refused is called with the kubelet's error when it answers that the
	// registration failed; main.go then stops the driver, which exits with
	// an error, so that its container is restarted and registers again, as
	// node-driver-registrar does.
	Refused func(error)
}

// GetInfo answers what the kubelet needs to register the driver: the plugin
// type (CSIPlugin: a CSI driver, not a device plugin), the driver's name, its
// CSI socket, and the CSI versions it speaks.
func (s *Service) GetInfo(ctx context.Context, req *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	return &registerapi.PluginInfo{
		Type:              registerapi.CSIPlugin,
		Name:              s.DriverName,
		Endpoint:          s.Endpoint,
		SupportedVersions: SupportedVersions,
	}, nil
}

// NotifyRegistrationStatus is the kubelet's answer after GetInfo. Registered,
// the driver is in the node's CSINode; refused (the kubelet's error says why:
// a version it does not speak, say), the driver cannot be used on this node,
// and Refused is called.
func (s *Service) NotifyRegistrationStatus(ctx context.Context, req *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	logger := klog.FromContext(ctx)
	if req.GetPluginRegistered() {
		logger.Info("Registered with the kubelet", "driver", s.DriverName, "endpoint", s.Endpoint)
		return &registerapi.RegistrationStatusResponse{}, nil
	}
	logger.Error(nil, "The kubelet refused the registration", "driver", s.DriverName, "kubeletError", req.GetError())
	if s.Refused != nil {
		s.Refused(errors.New("the kubelet refused the registration: " + req.GetError()))
	}
	return &registerapi.RegistrationStatusResponse{}, nil
}

// notYet logs a call the stub does not implement and returns the
// Unimplemented error to answer.
func notYet(ctx context.Context, call string) error {
	klog.FromContext(ctx).Info("Stub: not implemented yet", "call", call)
	return status.Errorf(codes.Unimplemented, "%s: not implemented yet (the stub registration service, --reconciler=stub)", call)
}
