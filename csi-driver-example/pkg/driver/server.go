package driver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// maxSocketPath is the longest path a unix socket may have on Linux
// (sun_path holds 108 bytes with the terminating zero).
const maxSocketPath = 107

// SocketPath returns the socket file an endpoint names. An endpoint is
// unix:// followed by an absolute path (unix:///run/csi/csi.sock), the form
// CSI drivers take; the sidecars' --csi-address takes the path alone.
func SocketPath(endpoint string) (string, error) {
	p, ok := strings.CutPrefix(endpoint, "unix://")
	if !ok || !filepath.IsAbs(p) {
		return "", errors.New("want unix:// followed by an absolute path, such as unix:///tmp/csi/csi.sock")
	}
	if len(p) > maxSocketPath {
		return "", fmt.Errorf("the path is %d bytes long; a unix socket's may be %d at most: choose a shorter one", len(p), maxSocketPath)
	}
	return p, nil
}

// Listen listens on the unix socket at socketPath. A socket file left there
// by a driver that was killed (nothing accepts on it) is removed first; a
// socket something still listens on, or a file that is no socket, is an
// error naming it, and is left alone.
func Listen(socketPath string) (net.Listener, error) {
	if err := removeStaleSocket(socketPath); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(socketPath), 0o755); err != nil {
		return nil, err
	}
	return net.Listen("unix", socketPath)
}

// removeStaleSocket removes the socket file at p when nothing listens on it.
func removeStaleSocket(p string) error {
	info, err := os.Lstat(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if info.Mode().Type() != os.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket: remove it, or choose another path", p)
	}
	conn, err := net.DialTimeout("unix", p, time.Second)
	if err == nil {
		conn.Close()
		return fmt.Errorf("%s: another process listens on this socket (a driver still running?): stop it, or choose another path", p)
	}
	klog.InfoS("Removing a stale socket file: nothing listens on it", "socket", p)
	return os.Remove(p)
}

// NewServer returns a gRPC server with the three CSI services registered,
// logging every call (see logCalls).
func NewServer(identity csi.IdentityServer, controller csi.ControllerServer, node csi.NodeServer) *grpc.Server {
	srv := grpc.NewServer(grpc.UnaryInterceptor(logCalls))
	csi.RegisterIdentityServer(srv, identity)
	csi.RegisterControllerServer(srv, controller)
	csi.RegisterNodeServer(srv, node)
	return srv
}

// NewRegistrationServer returns a gRPC server with the kubelet's plugin
// registration service registered (see pkg/registration), logging every call
// as NewServer's does. It serves a socket of its own, in the kubelet's
// plugins registry folder, which the kubelet watches.
func NewRegistrationServer(registration registerapi.RegistrationServer) *grpc.Server {
	srv := grpc.NewServer(grpc.UnaryInterceptor(logCalls))
	registerapi.RegisterRegistrationServer(srv, registration)
	return srv
}

// logCalls is a gRPC interceptor, run around every call: the call's logger
// (klog.FromContext in the services) carries the call's name, and the answer's
// gRPC code is logged at -v=2 (-v=5 adds the whole response), the way the
// sidecars log the calls they make at their -v=5.
func logCalls(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	logger := klog.FromContext(ctx).WithValues("call", path.Base(info.FullMethod))
	resp, err := handler(klog.NewContext(ctx, logger), req)
	if err != nil {
		logger.V(2).Info("Answered with an error", "code", status.Code(err), "message", status.Convert(err).Message())
	} else {
		logger.V(2).Info("Answered")
		logger.V(5).Info("Response", "response", resp)
	}
	return resp, err
}
