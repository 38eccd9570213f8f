//go:build e2e

package e2e

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// newEmptyAPIServer starts an HTTP server that answers 404 to every request:
// to discovery it looks like a cluster where the Foo CRD is not installed.
func newEmptyAPIServer(t *testing.T) *httptest.Server {
	t.Helper()
	server := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(server.Close)
	return server
}

// writeKubeconfig writes a kubeconfig for an unauthenticated server at url.
func writeKubeconfig(t *testing.T, url string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["empty"] = &clientcmdapi.Cluster{Server: url}
	cfg.AuthInfos["anonymous"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["empty"] = &clientcmdapi.Context{Cluster: "empty", AuthInfo: "anonymous"}
	cfg.CurrentContext = "empty"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}
