// Package testserver starts the driver's gRPC servers for a test, each on a unix
// socket in a temporary folder, and returns a client connection to it: the
// tests call the services the way the sidecars and the kubelet do, through
// gRPC, so what they see (codes, messages, answers) is what those would see.
package testserver

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/controller-kit/controller-kit/csi-driver-example/pkg/driver"
)

// Start serves identity, controller and node on a fresh socket until the test
// ends, and returns a connection to it.
func Start(t testing.TB, identity csi.IdentityServer, controller csi.ControllerServer, node csi.NodeServer) *grpc.ClientConn {
	t.Helper()
	return serve(t, driver.NewServer(identity, controller, node))
}

// StartRegistration serves registration on a fresh socket until the test ends,
// as the driver does in the kubelet's plugins registry folder, and returns a
// connection to it.
func StartRegistration(t testing.TB, registration registerapi.RegistrationServer) *grpc.ClientConn {
	t.Helper()
	return serve(t, driver.NewRegistrationServer(registration))
}

// serve serves srv on a socket in a fresh temporary folder until the test ends,
// and returns a connection to it.
func serve(t testing.TB, srv *grpc.Server) *grpc.ClientConn {
	t.Helper()
	// Not t.TempDir(): a test's name makes that path long, and a unix
	// socket's path may be 107 bytes at most.
	dir, err := os.MkdirTemp("", "csi-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "csi.sock")
	listener, err := driver.Listen(socket)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(listener)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// SkipIfYours skips the test when the file stub (a stub's source, relative to
// the test's package folder) differs from the one git has committed: the
// lesson's exercises write the stub, and a test that holds the stub as shipped
// (every call to write answering Unimplemented) would fail the learner's own
// go test once they have. Outside a git checkout, or with git missing, the test
// runs, as in a clean clone and in CI.
func SkipIfYours(t testing.TB, stub, exercises string) {
	t.Helper()
	out, err := exec.Command("git", "status", "--porcelain", "--", stub).Output()
	if err == nil && len(bytes.TrimSpace(out)) > 0 {
		t.Skipf("%s is yours now (%s write it): this test holds the stub as shipped, Unimplemented where you write the calls, and steps aside; make check LESSON=7 grades yours", stub, exercises)
	}
}
