package driver_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/controller-kit/controller-kit/csi-driver-example/internal/testserver"
	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/controller"
	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/driver"
	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/node"
)

const driverName = "test.csi.controller-kit.dev"

// start serves Identity, beside the stub Controller and Node services: it
// answers the same whichever of them run.
func start(t *testing.T) csi.IdentityClient {
	t.Helper()
	conn := testserver.Start(t, &driver.Identity{Name: driverName}, &controller.StubService{}, &node.StubService{NodeID: "node-1"})
	return csi.NewIdentityClient(conn)
}

func TestIdentityNamesTheDriverAndItsControllerService(t *testing.T) {
	identity := start(t)
	ctx := context.Background()

	info, err := identity.GetPluginInfo(ctx, &csi.GetPluginInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.GetName() != driverName || info.GetVendorVersion() == "" {
		t.Errorf("GetPluginInfo: name %q, vendor_version %q; want %q and a version", info.GetName(), info.GetVendorVersion(), driverName)
	}

	caps, err := identity.GetPluginCapabilities(ctx, &csi.GetPluginCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(caps.GetCapabilities()) != 1 || caps.GetCapabilities()[0].GetService().GetType() != csi.PluginCapability_Service_CONTROLLER_SERVICE {
		t.Errorf("GetPluginCapabilities: %v, want CONTROLLER_SERVICE alone", caps.GetCapabilities())
	}

	if _, err := identity.Probe(ctx, &csi.ProbeRequest{}); err != nil {
		t.Errorf("Probe: %v", err)
	}
}

// socketDir returns a short temporary folder for a socket (see testserver).
func socketDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "csi-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestListenRemovesAStaleSocket(t *testing.T) {
	socket := filepath.Join(socketDir(t), "csi.sock")
	// A socket file nobody listens on, as a killed driver leaves it.
	stale, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()
	if _, err := os.Stat(socket); err != nil {
		t.Fatalf("no stale socket to test with: %v", err)
	}

	l, err := driver.Listen(socket)
	if err != nil {
		t.Fatalf("Listen on a stale socket: %v, want it removed and listened on", err)
	}
	l.Close()
}

func TestListenRefusesASocketInUse(t *testing.T) {
	socket := filepath.Join(socketDir(t), "csi.sock")
	live, err := driver.Listen(socket)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()

	_, err = driver.Listen(socket)
	if err == nil || !strings.Contains(err.Error(), socket) || !strings.Contains(err.Error(), "another process listens") {
		t.Errorf("Listen on a socket in use: %v, want an error naming it", err)
	}
	if _, statErr := os.Stat(socket); statErr != nil {
		t.Errorf("the socket in use was removed: %v", statErr)
	}
}

func TestListenRefusesAFileThatIsNoSocket(t *testing.T) {
	file := filepath.Join(socketDir(t), "csi.sock")
	if err := os.WriteFile(file, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := driver.Listen(file)
	if err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("Listen on a plain file: %v, want an error saying it is not a socket", err)
	}
	if data, _ := os.ReadFile(file); string(data) != "keep me" {
		t.Errorf("the file was changed or removed")
	}
}

func TestSocketPath(t *testing.T) {
	for _, tc := range []struct {
		endpoint, want, wantErr string
	}{
		{endpoint: "unix:///run/csi/csi.sock", want: "/run/csi/csi.sock"},
		{endpoint: "/run/csi/csi.sock", wantErr: "want unix://"},
		{endpoint: "unix://csi.sock", wantErr: "absolute path"},
		{endpoint: "tcp://127.0.0.1:10000", wantErr: "want unix://"},
		{endpoint: "unix:///" + strings.Repeat("d", 120) + "/csi.sock", wantErr: "107"},
	} {
		got, err := driver.SocketPath(tc.endpoint)
		switch {
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("SocketPath(%q) = %q, %v; want %q", tc.endpoint, got, err, tc.want)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("SocketPath(%q): error %v, want one saying %q", tc.endpoint, err, tc.wantErr)
		}
	}
}
