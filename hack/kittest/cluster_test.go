package kittest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeKubeconfig writes a kubeconfig whose current context is ctx and points
// KUBECONFIG at it for the rest of the test.
func writeKubeconfig(t *testing.T, ctx string) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
current-context: ` + ctx + `
contexts:
- name: ` + ctx + `
  context: {cluster: c, user: u}
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {}
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)
}

func TestLoadKubeconfigRefusesContextsThatAreNotTheKitsOrKind(t *testing.T) {
	for _, tc := range []struct {
		context, anyContext string
		wantRefused         bool
	}{
		{context: "kwok-controller-kit", wantRefused: false},
		{context: "kwok-controller-kit-test", wantRefused: false},
		{context: "kind-controller-kit", wantRefused: false},
		{context: "prod", wantRefused: true},
		{context: "kwok-other", wantRefused: true},
		{context: "prod", anyContext: "1", wantRefused: false},
	} {
		t.Run(tc.context+"/"+tc.anyContext, func(t *testing.T) {
			writeKubeconfig(t, tc.context)
			t.Setenv(AnyContextEnv, tc.anyContext)
			_, _, err := LoadKubeconfig()
			if refused := err != nil; refused != tc.wantRefused {
				t.Fatalf("LoadKubeconfig with context %q (%s=%q): error %v; want refused=%v", tc.context, AnyContextEnv, tc.anyContext, err, tc.wantRefused)
			}
			if err != nil && !strings.Contains(err.Error(), AnyContextEnv) {
				t.Errorf("the refusal %q does not say how to override it (%s)", err, AnyContextEnv)
			}
		})
	}
}

func TestKubectlERefusesBeforeRunningAnything(t *testing.T) {
	writeKubeconfig(t, "prod")
	t.Setenv(AnyContextEnv, "")
	if _, err := KubectlE("apply", "-f", "does-not-matter.yaml"); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("KubectlE against context prod: error %v; want a refusal", err)
	}
}
