package kittest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfigWithContext writes a kubeconfig whose current context is ctx.
func kubeconfigWithContext(t *testing.T, ctx string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ctx] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443"}
	cfg.AuthInfos[ctx] = &clientcmdapi.AuthInfo{}
	cfg.Contexts[ctx] = &clientcmdapi.Context{Cluster: ctx, AuthInfo: ctx}
	cfg.CurrentContext = ctx
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// clusterInfoJSON is a file as hack/cluster/local-up.sh writes it.
const clusterInfoJSON = `{
  "name": "controller-kit-test",
  "context": "kwok-controller-kit-test",
  "kubeconfig": "/kit/_output/kubeconfig-controller-kit-test",
  "auditLog": "/kit/_output/kwok/clusters/controller-kit-test/logs/audit.log",
  "kubeVersion": "v1.37.2",
  "etcdEndpoint": "http://127.0.0.1:32754",
  "etcdPrefix": "/registry"
}
`

func TestClusterInfoForALocalClusterReadsItsFile(t *testing.T) {
	root := t.TempDir()
	path := ClusterInfoPath(root, "controller-kit-test")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(clusterInfoJSON), 0o644); err != nil {
		t.Fatal(err)
	}

	got, err := clusterInfoFor(kubeconfigWithContext(t, "kwok-controller-kit-test"), root)

	want := ClusterInfo{
		Name:         "controller-kit-test",
		Context:      "kwok-controller-kit-test",
		Kubeconfig:   "/kit/_output/kubeconfig-controller-kit-test",
		AuditLog:     "/kit/_output/kwok/clusters/controller-kit-test/logs/audit.log",
		KubeVersion:  "v1.37.2",
		EtcdEndpoint: "http://127.0.0.1:32754",
		EtcdPrefix:   "/registry",
	}
	if err != nil || got != want {
		t.Errorf("clusterInfoFor = %+v, %v; want %+v, nil", got, err, want)
	}
	if wantPath := filepath.Join(root, "_output", "cluster-controller-kit-test.json"); path != wantPath {
		t.Errorf("ClusterInfoPath = %s; want %s", path, wantPath)
	}
}

func TestClusterInfoForAKindClusterIsErrNotLocalCluster(t *testing.T) {
	_, err := clusterInfoFor(kubeconfigWithContext(t, "kind-controller-kit"), t.TempDir())

	if !errors.Is(err, ErrNotLocalCluster) {
		t.Errorf("clusterInfoFor(kind-controller-kit) = %v; want an error wrapping ErrNotLocalCluster", err)
	}
}

func TestClusterInfoForALocalClusterWithoutItsFileIsAnotherError(t *testing.T) {
	_, err := clusterInfoFor(kubeconfigWithContext(t, "kwok-controller-kit"), t.TempDir())

	if err == nil || errors.Is(err, ErrNotLocalCluster) {
		t.Errorf("clusterInfoFor(kwok-controller-kit) without its file = %v; want an error that is not ErrNotLocalCluster", err)
	}
}

func TestReadClusterInfoRejectsAFileWithoutPaths(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cluster-x.json")
	if err := os.WriteFile(path, []byte(`{"name": "x"}`), 0o644); err != nil {
		t.Fatal(err)
	}

	if _, err := ReadClusterInfo(path); err == nil {
		t.Error("ReadClusterInfo of a file without kubeconfig and auditLog returned no error")
	}
}
