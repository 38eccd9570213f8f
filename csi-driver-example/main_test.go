package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

func TestReconcilerTypoNamesTheFlagAndTheOneMeant(t *testing.T) {
	// The tier contract's check (make run's reconciler-known): refused before
	// any other flag is looked at.
	err := run(context.Background(), []string{"--reconciler=stbu", "--list-reconcilers"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil {
		t.Fatal("--reconciler=stbu accepted")
	}
	for _, want := range []string{`--reconciler="stbu"`, "reference, stub", "did you mean stub?"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestListReconcilers(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--list-reconcilers"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "reference\nstub\n" {
		t.Errorf("--list-reconcilers printed %q, want reference and stub, one a line", out.String())
	}
}

func TestBadFlagsAreNamed(t *testing.T) {
	dir := t.TempDir()
	endpoint := "--endpoint=unix://" + filepath.Join(dir, "csi.sock")
	state := "--state-dir=" + dir
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{state}, "--endpoint: required"},
		{[]string{"--endpoint=/tmp/csi.sock", state}, "--endpoint=/tmp/csi.sock: want unix://"},
		{[]string{endpoint}, "--state-dir: required"},
		{[]string{endpoint, state, "--max-volume-size=lots"}, `--max-volume-size="lots"`},
		{[]string{endpoint, state, "--max-volume-size=0"}, "--max-volume-size=0: want more than 0"},
		{[]string{endpoint, state, "--driver-name=Toy Driver"}, `--driver-name="Toy Driver"`},
		{[]string{endpoint, state, "--node-id="}, "--node-id: empty"},
		{[]string{endpoint, state, "extra"}, "unexpected arguments"},
		{[]string{endpoint, state, "--registration-dir=plugins_registry"}, "--registration-dir=plugins_registry: want an absolute path"},
		{[]string{endpoint, state, "--registration-dir=/" + strings.Repeat("d", 100)}, "--registration-dir=/ddd"},
		{[]string{endpoint, state, "--kubelet-endpoint=unix:///csi.sock"}, "--kubelet-endpoint=unix:///csi.sock: want the socket's absolute path, without unix://"},
		{[]string{endpoint, state, "--zones=zone-a"}, `"zone-a": want ZONE=QUANTITY`},
		{[]string{endpoint, state, "--zones=zone a=1Gi"}, `zone "zone a": want a label value`},
		{[]string{endpoint, state, "--zones=zone-a=1Gi,zone-a=2Gi"}, "zone zone-a comes twice"},
		{[]string{endpoint, state, "--zones=zone-a=lots"}, `zone zone-a: capacity "lots": want a quantity more than 0`},
		{[]string{endpoint, state, "--zones=zone-a=0"}, `capacity "0": want a quantity more than 0`},
		{[]string{endpoint, state, "--node-zone=zone-a"}, "--node-zone=zone-a: not one of --zones"},
		{[]string{endpoint, state, "--zones=zone-a=1Gi", "--node-zone=zone-c"}, "--node-zone=zone-c: not one of --zones"},
	} {
		// A context already done: should a check let the flags through, the
		// driver stops at once (and returns nil) instead of serving on.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := run(ctx, tc.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one saying %q", tc.args, err, tc.want)
		}
	}
}

// serve runs the driver with args until the test ends, and returns a
// connection to its socket once it serves. stop stops it and returns run's
// error.
func serve(t *testing.T, socket string, args ...string) (conn *grpc.ClientConn, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"--endpoint=unix://" + socket}, args...), &bytes.Buffer{}, &bytes.Buffer{})
	}()
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	t.Cleanup(func() { stop() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(socket); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the driver stopped before it served: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the driver did not serve its socket within 30 s")
		}
	}
	// The socket file appears when the driver binds it, a moment before it
	// listens: a call then would be refused, so calls wait for the server.
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.WaitForReady(true)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, stop
}

func TestTheDriverStartedAgainServesItsVolumes(t *testing.T) {
	sockets, err := os.MkdirTemp("", "csi-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockets)
	socket := filepath.Join(sockets, "csi.sock")
	state := "--state-dir=" + t.TempDir()
	ctx := context.Background()

	conn, stop := serve(t, socket, state, "--driver-name=restart.csi.controller-kit.dev", "--node-id=node-1")
	info, err := csi.NewIdentityClient(conn).GetPluginInfo(ctx, &csi.GetPluginInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.GetName() != "restart.csi.controller-kit.dev" {
		t.Errorf("GetPluginInfo: name %q, want --driver-name's", info.GetName())
	}
	created, err := csi.NewControllerClient(conn).CreateVolume(ctx, &csi.CreateVolumeRequest{
		Name:          "pvc-1",
		CapacityRange: &csi.CapacityRange{RequiredBytes: 1 << 20},
		VolumeCapabilities: []*csi.VolumeCapability{{
			AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
			AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatalf("stopped: %v, want no error", err)
	}
	if _, err := os.Stat(socket); !os.IsNotExist(err) {
		t.Errorf("the socket file is still there after the stop (%v)", err)
	}

	conn, _ = serve(t, socket, state, "--node-id=node-1")
	list, err := csi.NewControllerClient(conn).ListVolumes(ctx, &csi.ListVolumesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.GetEntries()) != 1 || list.GetEntries()[0].GetVolume().GetVolumeId() != created.GetVolume().GetVolumeId() {
		t.Errorf("ListVolumes after the restart: %v, want the volume %s", list.GetEntries(), created.GetVolume().GetVolumeId())
	}
}

func TestTheDriverRegistersWithTheKubeletAndStopsWhenRefused(t *testing.T) {
	sockets, err := os.MkdirTemp("", "csi-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockets)
	socket := filepath.Join(sockets, "csi.sock")
	registry := filepath.Join(sockets, "plugins_registry")
	args := []string{"--state-dir=" + t.TempDir(), "--node-id=node-1", "--registration-dir=" + registry}
	ctx := context.Background()

	// dial connects to the registration socket, as the kubelet does when
	// the socket appears in its plugins registry folder.
	dial := func() registerapi.RegistrationClient {
		conn, err := grpc.NewClient("unix://"+filepath.Join(registry, DefaultDriverName+"-reg.sock"),
			grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithDefaultCallOptions(grpc.WaitForReady(true)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return registerapi.NewRegistrationClient(conn)
	}

	_, stop := serve(t, socket, args...)
	reg := dial()
	info, err := reg.GetInfo(ctx, &registerapi.InfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.GetName() != DefaultDriverName || info.GetEndpoint() != socket {
		t.Errorf("GetInfo: name %q, endpoint %q; want %q and --endpoint's path %q", info.GetName(), info.GetEndpoint(), DefaultDriverName, socket)
	}
	const kubeletError = "RegisterPlugin error -- plugin validation failed with err: none of the versions is supported"
	if _, err := reg.NotifyRegistrationStatus(ctx, &registerapi.RegistrationStatus{Error: kubeletError}); err != nil {
		t.Fatal(err)
	}
	// Refused, the driver stops by itself: its sockets go away.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(socket); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the driver still serves 30 s after the kubelet refused its registration")
		}
	}
	if err := stop(); err == nil || !strings.Contains(err.Error(), kubeletError) {
		t.Errorf("run returned %v, want an error (the driver exits non-zero) quoting the kubelet's %q", err, kubeletError)
	}

	// --kubelet-endpoint is what GetInfo answers, when the kubelet sees the
	// socket under another path.
	const seen = "/var/lib/kubelet/plugins/toy.csi.controller-kit.dev/csi.sock"
	serve(t, socket, append(args, "--kubelet-endpoint="+seen)...)
	info, err = dial().GetInfo(ctx, &registerapi.InfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.GetEndpoint() != seen {
		t.Errorf("GetInfo: endpoint %q, want --kubelet-endpoint's %q", info.GetEndpoint(), seen)
	}
}
