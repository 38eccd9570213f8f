package kittest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
)

// ClusterInfo is what hack/cluster/local-up.sh tells programs about the local cluster it
// runs, in the JSON file that ClusterInfoPath names: local-up.sh writes the file
// each time it succeeds (for a new cluster or one already running) and
// local-down.sh removes it. Programs read the cluster's paths from here instead of
// rebuilding them.
type ClusterInfo struct {
	// Name is the cluster's name ($KIT_CLUSTER), such as "controller-kit".
	Name string `json:"name"`
	// Context is the kubeconfig context that reaches the cluster: "kwok-" + Name.
	Context string `json:"context"`
	// Kubeconfig is the absolute path of the kubeconfig local-up.sh wrote.
	Kubeconfig string `json:"kubeconfig"`
	// AuditLog is the absolute path of the cluster's kube-apiserver audit log
	// (read it with ReadAuditLog).
	AuditLog string `json:"auditLog"`
	// KubeVersion is the control plane's Kubernetes version, such as "v1.37.2".
	KubeVersion string `json:"kubeVersion"`
	// EtcdEndpoint is the URL of the cluster's etcd as its kube-apiserver reaches it
	// (--etcd-servers), such as "http://127.0.0.1:32754": plain http on loopback.
	// Empty in a file written before local-up.sh wrote it: make local-up again.
	EtcdEndpoint string `json:"etcdEndpoint,omitempty"`
	// EtcdPrefix is the prefix of every key the kube-apiserver writes (--etcd-prefix),
	// "/registry": a Foo default/x is at <prefix>/samplecontroller.k8s.io/foos/default/x.
	EtcdPrefix string `json:"etcdPrefix,omitempty"`
}

// LocalUpClusterExists is hack/cluster/local-up.sh's exit status when it runs with
// KIT_FRESH=1 and the cluster already exists: it creates a new cluster or nothing,
// and leaves the existing one as it is.
const LocalUpClusterExists = 3

// localContextPrefix starts the name kwokctl gives a cluster's kubeconfig context.
const localContextPrefix = "kwok-"

// ErrNotLocalCluster is what CurrentClusterInfo's error wraps when the suites'
// cluster is not the kit's local cluster (a kind cluster, or any other): such a
// cluster has no ClusterInfo, and no audit log the tests can read.
var ErrNotLocalCluster = errors.New("the audit log exists only on the kit's local cluster (make local-up), not on kind or other clusters")

// ClusterInfoPath returns where hack/cluster/local-up.sh writes the ClusterInfo of the
// local cluster called name, for the kit whose top folder is root:
// <root>/_output/cluster-<name>.json.
func ClusterInfoPath(root, name string) string {
	return filepath.Join(root, "_output", "cluster-"+name+".json")
}

// ReadClusterInfo reads the ClusterInfo file at path. It returns an error when the
// file cannot be read (with what to run when it does not exist), is not JSON, or
// lacks the cluster's name, kubeconfig or audit log.
func ReadClusterInfo(path string) (ClusterInfo, error) {
	var info ClusterInfo
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return info, fmt.Errorf("no %s: hack/cluster/local-up.sh writes it each time it starts or finds the cluster running; "+
			"run it again (make local-up for the cluster controller-kit)", path)
	}
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, fmt.Errorf("%s: %w", path, err)
	}
	if info.Name == "" || info.Kubeconfig == "" || info.AuditLog == "" {
		return info, fmt.Errorf("%s lacks the cluster's name, kubeconfig or audit log: %s", path, b)
	}
	return info, nil
}

// CurrentClusterInfo returns the ClusterInfo of the cluster the suites use: the
// current context of Kubeconfig() is kwok-<name> for the kit's local cluster
// <name>, whose file is ClusterInfoPath(RepoRoot(), name). For any other context
// it returns an error that wraps ErrNotLocalCluster; for a kwok- context without
// its file, ReadClusterInfo's error.
func CurrentClusterInfo() (ClusterInfo, error) {
	return clusterInfoFor(Kubeconfig(), RepoRoot())
}

// clusterInfoFor is CurrentClusterInfo for the kubeconfig at kubeconfigPath and
// the kit whose top folder is root.
func clusterInfoFor(kubeconfigPath, root string) (ClusterInfo, error) {
	raw, err := clientcmd.LoadFromFile(kubeconfigPath)
	if err != nil {
		return ClusterInfo{}, fmt.Errorf("cannot read kubeconfig %s: %w", kubeconfigPath, err)
	}
	name, ok := strings.CutPrefix(raw.CurrentContext, localContextPrefix)
	if !ok || name == "" {
		return ClusterInfo{}, fmt.Errorf("context %q of %s: %w", raw.CurrentContext, kubeconfigPath, ErrNotLocalCluster)
	}
	return ReadClusterInfo(ClusterInfoPath(root, name))
}
