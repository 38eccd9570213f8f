//go:build e2e

package kittest

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClusterInfoDescribesTheCluster checks the file hack/cluster/local-up.sh writes
// against the cluster itself: its kubeconfig and audit log exist, and its version
// is the one the API server reports.
func TestClusterInfoDescribesTheCluster(t *testing.T) {
	kwokCluster(t)
	info, err := CurrentClusterInfo()
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{info.Kubeconfig, info.AuditLog} {
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s names a file that is not there: %v", ClusterInfoPath(RepoRoot(), info.Name), err)
		}
	}
	v, err := Clientset(t).Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("GET /version: %v", err)
	}
	if info.KubeVersion != v.GitVersion {
		t.Errorf("kubeVersion %q; the API server reports %s", info.KubeVersion, v.GitVersion)
	}
}

// TestWritesSeesACreate makes one write and finds it, once, with Writes.
func TestWritesSeesACreate(t *testing.T) {
	kwokCluster(t)
	cs := Clientset(t)
	ns := Namespace(t, cs, "kit-audit")
	since := time.Now()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "written", Namespace: ns}}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ConfigMap: %v", err)
	}
	// kube-controller-manager writes to a new namespace too (its kube-root-ca.crt).
	ours := func(e AuditEntry) bool { return e.Namespace == ns && e.Name == "written" }
	// The API server logs a request a moment after it answers it.
	var writes []AuditEntry
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if writes = Writes(t, since, ours); len(writes) > 0 {
			break
		}
	}
	if len(writes) != 1 {
		t.Fatalf("Writes found %d writes of %s/written since the test began; want the 1 create:\n%s", len(writes), ns, entryLines(writes))
	}
	if w := writes[0]; w.Verb != "create" || w.Resource != "configmaps" || w.Name != "written" || w.Code != 201 {
		t.Errorf("Writes found %s; want the create of ConfigMap written, answered 201", w)
	}
}
