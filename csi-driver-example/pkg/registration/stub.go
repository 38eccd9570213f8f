package registration

import (
	"context"

	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// StubService is the registration service a learner starts from
// (--reconciler=stub): both calls log and answer codes.Unimplemented. The
// kubelet finds the socket, fails at GetInfo, logs it, and tries again later;
// the driver never appears in the node's CSINode, and a Pod with a volume of
// the driver waits with a FailedMount event saying the driver is not found in
// the list of registered CSI drivers. Service (service.go) is the finished
// version.
type StubService struct {
	registerapi.UnimplementedRegistrationServer

	// The fields Service has, filled the same way by main.go: what your
	// version will need.

	// DriverName is the driver's name (--driver-name).
	DriverName string
	// Endpoint is the CSI socket's path as the kubelet sees it
	// (--kubelet-endpoint).
	Endpoint string
	// Refused is to be called with the kubelet's error when it refuses
	// the registration: main.go stops the driver.
	Refused func(error)
}

// GetInfo logs the call and answers Unimplemented.
func (s *StubService) GetInfo(ctx context.Context, req *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	return nil, notYet(ctx, "GetInfo")
}

// NotifyRegistrationStatus logs the call and answers Unimplemented.
func (s *StubService) NotifyRegistrationStatus(ctx context.Context, req *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	return nil, notYet(ctx, "NotifyRegistrationStatus")
}
