package registration_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/controller-kit/controller-kit/csi-driver-example/internal/testserver"
	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/registration"
)

const (
	driverName = "test.csi.controller-kit.dev"
	endpoint   = "/var/lib/kubelet/plugins/test.csi.controller-kit.dev/csi.sock"
)

// start serves svc on a registration socket in a temporary folder, as the
// driver does in the kubelet's plugins registry folder, and returns a client
// of it: the test calls it the way the kubelet does.
func start(t *testing.T, svc registerapi.RegistrationServer) registerapi.RegistrationClient {
	t.Helper()
	return registerapi.NewRegistrationClient(testserver.StartRegistration(t, svc))
}

func TestGetInfoNamesTheDriverItsSocketAndCSIVersion(t *testing.T) {
	reg := start(t, &registration.Service{DriverName: driverName, Endpoint: endpoint})

	info, err := reg.GetInfo(context.Background(), &registerapi.InfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.GetType() != registerapi.CSIPlugin {
		t.Errorf("type %q, want %q (else the kubelet hands the plugin to no CSI handler)", info.GetType(), registerapi.CSIPlugin)
	}
	if info.GetName() != driverName {
		t.Errorf("name %q, want %q (--driver-name)", info.GetName(), driverName)
	}
	if info.GetEndpoint() != endpoint {
		t.Errorf("endpoint %q, want %q (--kubelet-endpoint)", info.GetEndpoint(), endpoint)
	}
	if !slices.Equal(info.GetSupportedVersions(), []string{"1.0.0"}) {
		t.Errorf("supported_versions %q, want [1.0.0] (CSI 1.x, which the kubelet speaks)", info.GetSupportedVersions())
	}
}

func TestRefusedRegistrationIsReportedWithTheKubeletsError(t *testing.T) {
	// The service calls Refused in the server's goroutine: a channel hands
	// the errors over to the test's.
	refusals := make(chan error, 10)
	reg := start(t, &registration.Service{DriverName: driverName, Endpoint: endpoint, Refused: func(err error) { refusals <- err }})
	ctx := context.Background()

	if _, err := reg.NotifyRegistrationStatus(ctx, &registerapi.RegistrationStatus{PluginRegistered: true}); err != nil {
		t.Fatal(err)
	}
	if len(refusals) != 0 {
		t.Fatalf("registered: true reported as a refusal: %v", <-refusals)
	}
	const kubeletError = "RegisterPlugin error -- plugin validation failed with err: none of the versions [9.0.0] is supported"
	if _, err := reg.NotifyRegistrationStatus(ctx, &registerapi.RegistrationStatus{PluginRegistered: false, Error: kubeletError}); err != nil {
		t.Fatalf("NotifyRegistrationStatus: %v, want an answer (the kubelet is told its message arrived)", err)
	}
	if len(refusals) != 1 {
		t.Fatalf("%d refusals reported, want 1", len(refusals))
	}
	if err := <-refusals; !strings.Contains(err.Error(), kubeletError) {
		t.Errorf("refusal %q, want it to quote the kubelet's error %q", err, kubeletError)
	}
}

func TestStubAnswersUnimplemented(t *testing.T) {
	reg := start(t, &registration.StubService{DriverName: driverName, Endpoint: endpoint})
	ctx := context.Background()

	_, err := reg.GetInfo(ctx, &registerapi.InfoRequest{})
	if status.Code(err) != codes.Unimplemented || !strings.Contains(err.Error(), "--reconciler=stub") {
		t.Errorf("GetInfo: %v, want Unimplemented naming the stub", err)
	}
	_, err = reg.NotifyRegistrationStatus(ctx, &registerapi.RegistrationStatus{PluginRegistered: true})
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("NotifyRegistrationStatus: %v, want Unimplemented", err)
	}
}
