// Package kittest holds what the kit's end-to-end suites share: finding the cluster
// the tests may use (and refusing any other), clients, throwaway namespaces, a
// kubeconfig that impersonates a controller's ServiceAccount, controller processes
// whose logs are shown when a test fails, and polling with deadlines.
//
// Every e2e suite of the kit runs against the cluster $KUBECONFIG points at, which
// `make test-e2e` sets to the kit kubeconfig (_output/kubeconfig) by default.
package kittest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// RepoRoot returns the kit's top folder: the nearest parent of the working
// directory that holds go.work. It panics when there is none, which only happens
// when a suite is run from outside the kit.
func RepoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		panic(fmt.Sprintf("kittest: cannot read the working directory: %v", err))
	}
	root, err := rootAbove(dir)
	if err != nil {
		panic("kittest: " + err.Error())
	}
	return root
}

// Kubeconfig returns the path of the kubeconfig the suites use: $KUBECONFIG when
// set, else the kit kubeconfig of the cluster $KIT_CLUSTER names (KitKubeconfig).
func Kubeconfig() string {
	if p := os.Getenv("KUBECONFIG"); p != "" {
		return p
	}
	return KitKubeconfig(RepoRoot(), os.Getenv(ClusterEnv))
}

// DefaultCluster is the name of the kit cluster when $KIT_CLUSTER is unset.
const DefaultCluster = "controller-kit"

// KitKubeconfig returns the kit kubeconfig of the cluster called name under the
// repository root: _output/kubeconfig for DefaultCluster (or an empty name),
// _output/kubeconfig-NAME for any other. It is the Go copy of the rule hack/lib.sh
// writes for the scripts and the Makefiles (KIT_KUBECONFIG); a test keeps the two
// the same.
func KitKubeconfig(root, name string) string {
	if name == "" || name == DefaultCluster {
		return filepath.Join(root, "_output", "kubeconfig")
	}
	return filepath.Join(root, "_output", "kubeconfig-"+name)
}

// LoadKubeconfig reads the kubeconfig the suites use and refuses a current context
// that is neither a local cluster this kit made (see IsKitCluster) nor a kind
// cluster (kind-*), unless AnyContextEnv is 1: the suites create and delete
// objects, and must never do so on a cluster somebody relies on. It returns the
// kubeconfig and its path, or an error that says what to do. Every helper of this
// package that reaches a cluster goes through it; TestMain code that cannot fail a
// test uses it directly.
func LoadKubeconfig() (clientcmdapi.Config, string, error) {
	path := Kubeconfig()
	raw, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return clientcmdapi.Config{}, path, fmt.Errorf("cannot read kubeconfig %s: %w\n"+
			"(start a cluster with 'make local-up', or 'KIT_CLUSTER=NAME make local-up' for one called NAME; or set KUBECONFIG)", path, err)
	}
	ctx := raw.CurrentContext
	allowed := strings.HasPrefix(ctx, "kind-")
	if dir, err := os.Getwd(); !allowed && err == nil {
		// Outside a kit tree (no go.work above) no cluster is the kit's.
		root, err := rootAbove(dir)
		allowed = err == nil && IsKitCluster(root, ctx)
	}
	if !allowed && os.Getenv(AnyContextEnv) != "1" {
		return clientcmdapi.Config{}, path, fmt.Errorf("refusing to run e2e tests against context %q from %s: the suites create and delete objects, "+
			"and this is neither a local cluster this kit made (its _output/cluster-NAME.json names it) nor a kind cluster.\n"+
			"Use the kit's cluster ('make local-up', 'KIT_CLUSTER=NAME make local-up' or 'make kind-up'), or set %s=1 if this cluster is yours to break",
			ctx, path, AnyContextEnv)
	}
	return *raw, path, nil
}

// RunningBinary returns the path of the binary the kit's local cluster called
// cluster runs its component name on (kube-apiserver, kube-controller-manager,
// kube-scheduler), as hack/cluster/cmd/kit-component answers it from the
// cluster's kwokctl configuration under _output/kwok (hack/lib/cluster.sh's
// KWOK_WORKDIR). The error says why it cannot tell: no such cluster, or no
// bin/kit-component built.
func RunningBinary(cluster, name string) (string, error) {
	root := RepoRoot()
	cmd := exec.Command(filepath.Join(root, "bin", "kit-component"), "--name", cluster, "binary", name)
	cmd.Env = append(os.Environ(), "KWOK_WORKDIR="+filepath.Join(root, "_output", "kwok"))
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if exit, ok := err.(*exec.ExitError); ok {
			stderr = strings.TrimSpace(string(exit.Stderr))
		}
		return "", fmt.Errorf("kit-component --name %s binary %s: %v %s", cluster, name, err, stderr)
	}
	return strings.TrimSpace(string(out)), nil
}

// OnKind reports whether the cluster the suites use is a kind cluster: the
// current context of its kubeconfig is kind-NAME, as kind names it (a refused
// or missing kubeconfig is no kind cluster). The checks marked kindOnly run
// there, those marked localClusterOnly everywhere else (Check.NotHere).
func OnKind() bool {
	config, _, err := LoadKubeconfig()
	return err == nil && strings.HasPrefix(config.CurrentContext, "kind-")
}

// IsKitCluster reports whether context is the kubeconfig context of a local
// cluster the kit under root made, whatever its name: hack/cluster/local-up.sh
// names the context kwok-NAME for KIT_CLUSTER=NAME and writes
// ClusterInfoPath(root, NAME), whose context must be this one. A file that is
// missing or unreadable means no.
func IsKitCluster(root, context string) bool {
	name, ok := strings.CutPrefix(context, localContextPrefix)
	if !ok || name == "" {
		return false
	}
	info, err := ReadClusterInfo(ClusterInfoPath(root, name))
	return err == nil && info.Context == context
}

// loadRaw is LoadKubeconfig for tests: a refusal fails the test at once.
func loadRaw(t testing.TB) (clientcmdapi.Config, string) {
	t.Helper()
	raw, path, err := LoadKubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	return raw, path
}

// Config returns a REST config for the cluster under test, with client-side rate
// limits raised (QPS 200, burst 400) so a test's own requests never wait on them.
// It fails the test when the kubeconfig is missing or its context is refused.
func Config(t testing.TB) *rest.Config {
	t.Helper()
	raw, path := loadRaw(t)
	cfg, err := clientcmd.NewDefaultClientConfig(raw, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		t.Fatalf("cannot build a client config from %s: %v", path, err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	return cfg
}

// Clientset returns a typed clientset for the cluster under test (see Config).
func Clientset(t testing.TB) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(Config(t))
	if err != nil {
		t.Fatalf("cannot create a clientset: %v", err)
	}
	return cs
}

// Namespace creates a namespace with a unique name starting with prefix and returns
// the name. At cleanup it prints the namespace's events when the test failed (and
// keeps the controllers' refused requests in it for `make check`, see
// APIErrorsFile), then deletes the namespace (without waiting for it to be
// gone). Set KeepEnv (KIT_E2E_KEEP) to 1 to keep the namespace of a failed test for a look
// with kubectl.
func Namespace(t testing.TB, cs kubernetes.Interface, prefix string) string {
	t.Helper()
	ns, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-", Labels: map[string]string{"controller-kit.dev/e2e": "true"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("cannot create a test namespace: %v", err)
	}
	created := time.Now()
	t.Cleanup(func() {
		ctx := context.Background()
		if t.Failed() {
			DumpEvents(t, cs, ns.Name)
			recordAPIErrors(t, ns.Name, created)
			if os.Getenv(KeepEnv) == "1" {
				t.Logf("keeping namespace %s (KIT_E2E_KEEP=1)", ns.Name)
				return
			}
		}
		if err := cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
			t.Logf("cannot delete namespace %s: %v", ns.Name, err)
		}
	})
	WaitDefaultServiceAccount(t, cs, ns.Name)
	return ns.Name
}

// WaitDefaultServiceAccount waits until namespace has its ServiceAccount
// "default". A Pod can be created only once it exists (ServiceAccount
// admission), and kube-controller-manager adds it a moment after the namespace,
// later still when make test's jobs hold the CPU; so the deadline is 2 minutes,
// which $KIT_E2E_TIMEOUT does not cut, since it does not depend on the
// Reconciler under test. Namespace calls it; a test that makes a namespace of a
// fixed name calls it itself.
func WaitDefaultServiceAccount(t testing.TB, cs kubernetes.Interface, namespace string) {
	t.Helper()
	Eventually(t, 2*time.Minute, "the ServiceAccount default of namespace "+namespace, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(namespace).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
}

// DumpEvents prints every Event of a namespace to the test log, oldest first: the
// first thing to read when an e2e test fails.
func DumpEvents(t testing.TB, cs kubernetes.Interface, namespace string) {
	t.Helper()
	list, err := cs.CoreV1().Events(namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Logf("cannot list events in %s: %v", namespace, err)
		return
	}
	var b strings.Builder
	for _, e := range list.Items {
		// Events written through the events.k8s.io API (controller-runtime's recorder)
		// carry EventTime and Series instead of LastTimestamp and Count.
		when, count := e.LastTimestamp.Time, e.Count
		if when.IsZero() {
			when = e.EventTime.Time
		}
		if e.Series != nil {
			when, count = e.Series.LastObservedTime.Time, e.Series.Count
		}
		fmt.Fprintf(&b, "  %s %s %s/%s %s: %s (x%d)\n", when.Format(time.TimeOnly), e.Type,
			e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message, max(count, 1))
	}
	t.Logf("events in namespace %s:\n%s", namespace, b.String())
}

// ImpersonatingKubeconfig writes a kubeconfig (in the test's temp folder) that
// reaches the cluster under test as the ServiceAccount namespace/serviceAccount and
// returns its path. A controller started with --kubeconfig set to it has exactly the
// RBAC bound to that ServiceAccount, so a verb missing from the shipped manifests
// shows up as "forbidden" in the test instead of in a learner's cluster. The
// identity the test itself uses must be allowed to impersonate (cluster admins are).
func ImpersonatingKubeconfig(t testing.TB, namespace, serviceAccount string) string {
	t.Helper()
	return impersonatingKubeconfig(t, "kubeconfig-"+serviceAccount,
		"system:serviceaccount:"+namespace+":"+serviceAccount,
		"system:serviceaccounts", "system:serviceaccounts:"+namespace, "system:authenticated")
}

// ImpersonatingUserKubeconfig is ImpersonatingKubeconfig for a user that is no
// ServiceAccount, in groups: a component of the cluster's own, such as
// system:kube-scheduler, whose RBAC the cluster's roles grant by that name.
func ImpersonatingUserKubeconfig(t testing.TB, user string, groups ...string) string {
	t.Helper()
	return impersonatingKubeconfig(t, "kubeconfig-"+strings.ReplaceAll(user, ":", "-"), user, groups...)
}

// impersonatingKubeconfig writes the kubeconfig under test, its current user
// impersonating user in groups, to the file called name in the test's temp
// folder, and returns its path.
func impersonatingKubeconfig(t testing.TB, name, user string, groups ...string) string {
	t.Helper()
	raw, _ := loadRaw(t)
	ctx, ok := raw.Contexts[raw.CurrentContext]
	if !ok || raw.AuthInfos[ctx.AuthInfo] == nil {
		t.Fatalf("kubeconfig context %q has no user to impersonate from", raw.CurrentContext)
	}
	auth := raw.AuthInfos[ctx.AuthInfo].DeepCopy()
	auth.Impersonate = user
	auth.ImpersonateGroups = groups
	raw.AuthInfos = map[string]*clientcmdapi.AuthInfo{"impersonated": auth}
	ctx = ctx.DeepCopy()
	ctx.AuthInfo = "impersonated"
	raw.Contexts = map[string]*clientcmdapi.Context{raw.CurrentContext: ctx}
	// Certificate and key paths in the kit kubeconfig are absolute; flatten anyway
	// so a relative path in a learner's kubeconfig still resolves from the temp folder.
	if err := clientcmdapi.FlattenConfig(&raw); err != nil {
		t.Fatalf("cannot inline the kubeconfig's files: %v", err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := clientcmd.WriteToFile(raw, path); err != nil {
		t.Fatalf("cannot write %s: %v", path, err)
	}
	return path
}

// Eventually polls cond every 250 ms until it returns true, and fails the test with
// "timed out after <timeout> waiting for <what>" (plus cond's last error, if any)
// when timeout passes first. An error from cond does not stop the polling: API
// errors during a rollout are often passing ones. Each call of cond gets its own
// 10 s context, so the error reported on a timeout is the real one, not the
// deadline's. Use generous timeouts: they bound a failing test, they do not
// measure a passing one.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, timeout, true,
		func(context.Context) (bool, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			done, err := cond(ctx)
			if err != nil {
				last = err
				return false, nil
			}
			return done, nil
		})
	if err != nil {
		if last != nil {
			t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, last)
		}
		t.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}

// Kubectl runs the kit's kubectl (bin/kubectl) against the cluster under test and
// returns its standard output; the test fails with kubectl's error output when it
// exits non-zero. Tests use it for what a learner would type, such as applying the
// manifests a tier ships.
func Kubectl(t testing.TB, args ...string) string {
	t.Helper()
	out, err := KubectlE(args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// KubectlE is Kubectl for commands that are expected to fail: it returns the
// standard output and an error that carries kubectl's error output.
func KubectlE(args ...string) (string, error) {
	if _, _, err := LoadKubeconfig(); err != nil {
		return "", err
	}
	bin := filepath.Join(RepoRoot(), "bin", "kubectl")
	cmd := exec.Command(bin, append([]string{"--kubeconfig", Kubeconfig()}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// WaitAuthorized waits until the API server's authorizer lets the ServiceAccount
// namespace/name do verb on resource (of the core group) in inNamespace, as a
// SubjectAccessReview answers it. Roles and bindings just applied take effect
// a moment later, when the authorizer's own cache has them: a controller
// started before then is refused its first requests. It fails the test after
// the deadline.
func WaitAuthorized(t testing.TB, cs kubernetes.Interface, timeout time.Duration, namespace, name, verb, resource, inNamespace string) {
	t.Helper()
	user := "system:serviceaccount:" + namespace + ":" + name
	Eventually(t, timeout, fmt.Sprintf("%s to be allowed to %s %s in %s", user, verb, resource, inNamespace), func(ctx context.Context) (bool, error) {
		review, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{
				User:   user,
				Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: inNamespace, Verb: verb, Resource: resource,
				},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return review.Status.Allowed, nil
	})
}
