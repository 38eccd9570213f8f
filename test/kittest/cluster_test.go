package kittest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"
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
		{context: "kind-controller-kit", wantRefused: false},
		{context: "prod", wantRefused: true},
		{context: "kwok-no-such-kit-cluster", wantRefused: true},
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

// writeClusterInfo writes the ClusterInfo file local-up.sh would write for the
// cluster called name under root, with the given context.
func writeClusterInfo(t *testing.T, root, name, context string) {
	t.Helper()
	path := ClusterInfoPath(root, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	b := `{"name": "` + name + `", "context": "` + context + `", "kubeconfig": "/k", "auditLog": "/a", "kubeVersion": "v1.37.2"}`
	if err := os.WriteFile(path, []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestIsKitClusterAcceptsEveryLocalClusterTheKitMadeWhateverItsName(t *testing.T) {
	root := t.TempDir()
	writeClusterInfo(t, root, "controller-kit", "kwok-controller-kit")
	writeClusterInfo(t, root, "newcomer", "kwok-newcomer")
	writeClusterInfo(t, root, "renamed", "kwok-something-else")
	for _, tc := range []struct {
		context string
		want    bool
	}{
		{"kwok-controller-kit", true},
		{"kwok-newcomer", true},             // KIT_CLUSTER=newcomer make local-up
		{"kwok-controller-kit-test", false}, // no cluster file: not made by this kit (or deleted)
		{"kwok-renamed", false},             // its file names another context
		{"kwok-", false},
		{"newcomer", false},
		{"kind-controller-kit", false}, // kind is LoadKubeconfig's to allow, not a local cluster
	} {
		if got := IsKitCluster(root, tc.context); got != tc.want {
			t.Errorf("IsKitCluster(%q) = %v, want %v", tc.context, got, tc.want)
		}
	}
}

func TestKubectlERefusesBeforeRunningAnything(t *testing.T) {
	writeKubeconfig(t, "prod")
	t.Setenv(AnyContextEnv, "")
	if _, err := KubectlE("apply", "-f", "does-not-matter.yaml"); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("KubectlE against context prod: error %v; want a refusal", err)
	}
}

func TestNamespaceReturnsOnceItsDefaultServiceAccountExists(t *testing.T) {
	cs := fake.NewClientset()
	// The fake tracker does not generate names; the API server would.
	cs.PrependReactor("create", "namespaces", func(action k8stesting.Action) (bool, runtime.Object, error) {
		ns := action.(k8stesting.CreateAction).GetObject().(*corev1.Namespace)
		if ns.Name == "" {
			ns.Name = ns.GenerateName + "abcde"
		}
		return false, nil, nil
	})
	// kube-controller-manager's ServiceAccount controller, a moment late.
	go func() {
		time.Sleep(700 * time.Millisecond)
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "wq-abcde"}}
		if _, err := cs.CoreV1().ServiceAccounts("wq-abcde").Create(context.Background(), sa, metav1.CreateOptions{}); err != nil {
			t.Errorf("creating the ServiceAccount: %v", err)
		}
	}()

	name := Namespace(t, cs, "wq")

	if name != "wq-abcde" {
		t.Fatalf("Namespace returned %q, want wq-abcde", name)
	}
	if _, err := cs.CoreV1().ServiceAccounts(name).Get(context.Background(), "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("Namespace returned before the namespace's ServiceAccount default existed: %v", err)
	}
}

func TestLoadKubeconfigOutsideAKitTreeRefusesALocalContextWithoutPanicking(t *testing.T) {
	writeKubeconfig(t, "kwok-controller-kit")
	t.Setenv(AnyContextEnv, "")
	t.Chdir(t.TempDir()) // no go.work above: no cluster file to vouch for the context
	if _, _, err := LoadKubeconfig(); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("LoadKubeconfig outside a kit tree with context kwok-controller-kit: error %v; want a refusal", err)
	}
}

// TestWaitAuthorizedAsksUntilAllowed checks that WaitAuthorized asks the API
// server again until a SubjectAccessReview allows the ServiceAccount, and asks
// about the user, verb, resource and namespace it was given.
func TestWaitAuthorizedAsksUntilAllowed(t *testing.T) {
	cs := fake.NewClientset()
	asked := 0
	cs.PrependReactor("create", "subjectaccessreviews", func(action k8stesting.Action) (bool, runtime.Object, error) {
		review := action.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
		if a := review.Spec.ResourceAttributes; review.Spec.User != "system:serviceaccount:sys:ctl" || a.Verb != "list" || a.Resource != "pods" || a.Namespace != "work" {
			t.Errorf("asked about %s %+v, want system:serviceaccount:sys:ctl list pods in work", review.Spec.User, a)
		}
		asked++
		review.Status.Allowed = asked >= 3
		return true, review, nil
	})
	WaitAuthorized(t, cs, 30*time.Second, "sys", "ctl", "list", "pods", "work")
	if asked != 3 {
		t.Errorf("asked %d times, want 3 (until allowed)", asked)
	}
}

// TestImpersonatingKubeconfigsActAsTheirUserWithTheSameCluster checks both
// impersonating kubeconfigs: the cluster and context of the kubeconfig under
// test, its user impersonating a ServiceAccount (in its groups) or a user of the
// cluster's own (in the groups given).
func TestImpersonatingKubeconfigsActAsTheirUserWithTheSameCluster(t *testing.T) {
	writeKubeconfig(t, "prod")
	t.Setenv(AnyContextEnv, "1")
	for _, tc := range []struct {
		path, user string
		groups     []string
	}{{
		ImpersonatingKubeconfig(t, "csi", "csi-attacher"),
		"system:serviceaccount:csi:csi-attacher",
		[]string{"system:serviceaccounts", "system:serviceaccounts:csi", "system:authenticated"},
	}, {
		ImpersonatingUserKubeconfig(t, "system:kube-scheduler", "system:authenticated"),
		"system:kube-scheduler",
		[]string{"system:authenticated"},
	}} {
		cfg, err := clientcmd.LoadFromFile(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		ctx := cfg.Contexts[cfg.CurrentContext]
		if cfg.CurrentContext != "prod" || ctx == nil || cfg.Clusters[ctx.Cluster] == nil || cfg.Clusters[ctx.Cluster].Server != "https://127.0.0.1:1" {
			t.Errorf("%s: context %q (%+v), want prod on the kubeconfig's cluster", tc.path, cfg.CurrentContext, ctx)
			continue
		}
		auth := cfg.AuthInfos[ctx.AuthInfo]
		if auth == nil || auth.Impersonate != tc.user || !slices.Equal(auth.ImpersonateGroups, tc.groups) {
			t.Errorf("%s: user %+v, want it to impersonate %s in %q", tc.path, auth, tc.user, tc.groups)
		}
	}
}
