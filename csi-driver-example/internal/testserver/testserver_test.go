package testserver_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/controller-kit/controller-kit/csi-driver-example/internal/testserver"
	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/registration"
)

// TestStartRegistrationServesUntilTheTestEnds checks that the registration
// service given answers on the connection StartRegistration returns, and that
// its socket's folder is gone once the test that started it has ended.
func TestStartRegistrationServesUntilTheTestEnds(t *testing.T) {
	var socketDir string
	t.Run("serve", func(t *testing.T) {
		conn := testserver.StartRegistration(t, &registration.Service{DriverName: "test.csi.controller-kit.dev", Endpoint: "/csi.sock"})
		socketDir = filepath.Dir(strings.TrimPrefix(conn.Target(), "unix://"))
		info, err := registerapi.NewRegistrationClient(conn).GetInfo(context.Background(), &registerapi.InfoRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if info.GetName() != "test.csi.controller-kit.dev" {
			t.Errorf("GetInfo answered name %q, want the service's test.csi.controller-kit.dev", info.GetName())
		}
		if _, err := os.Stat(socketDir); err != nil {
			t.Errorf("the socket's folder %s while the test runs: %v", socketDir, err)
		}
	})
	if _, err := os.Stat(socketDir); !os.IsNotExist(err) {
		t.Errorf("the socket's folder %s after the test: %v; want it removed", socketDir, err)
	}
}
