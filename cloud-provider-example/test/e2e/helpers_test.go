//go:build e2e

// Package e2e is cloud-provider-example's conformance suite: each test starts the
// cloud-controller-manager as a real process against the kit cluster
// ($KUBECONFIG), running as the ServiceAccount bound to the RBAC in config/rbac
// (by impersonation), and checks one behaviour a user would notice on a Service.
// Run it with `make -C cloud-provider-example test-e2e`; RECONCILER=stub shows
// which behaviours your own load balancer still lacks.
//
// Unlike the tiers' suites, the tests run one at a time: the service controller
// has no namespace flag, so every manager answers every Service of type
// LoadBalancer in the cluster, and two at once would hand out one pool twice.
// Each test starts a manager of its own (no leader election) and, before it
// stops it, deletes its Services and waits until they are gone, so the manager
// removes its finalizer and the next test starts from a clean cluster.
package e2e

import (
	"context"
	_ "embed"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/controller-kit/controller-kit/test/kittest"
)

const (
	// controllerNamespace and serviceAccount are where config/rbac binds the
	// manager's RBAC; the tests impersonate that ServiceAccount.
	controllerNamespace = "cloud-provider-example-system"
	serviceAccount      = "cloud-provider-example"
	// cleanupFinalizer is the finalizer the service controller puts on each
	// Service it makes a load balancer for (servicehelper.LoadBalancerCleanupFinalizer).
	cleanupFinalizer = "service.kubernetes.io/load-balancer-cleanup"
	// defaultPool is the manager's pool when no --cloud-config names one
	// (toycloud.DefaultPool).
	defaultPool = "192.0.2.240/28"
	// e2eLabel marks the namespaces kittest.Namespace makes.
	e2eLabel = "controller-kit.dev/e2e"
)

// lessonFile is this suite's row of the lesson table: which lesson it checks, the
// manager to build and one row per check (kittest.Lesson).
//
//go:embed lesson.yaml
var lessonFile []byte

var (
	// deadline bounds every poll: long enough for a loaded 2-core machine, and
	// only reached when a test is going to fail anyway. `make check` shortens it
	// through $KIT_E2E_TIMEOUT.
	deadline = kittest.Deadline(90 * time.Second)
	// suite builds the manager once for every test (suite.Bin).
	suite = &kittest.Suite{File: lessonFile}
)

func TestMain(m *testing.M) {
	// Set here, not in suite's declaration: prepareCluster reads suite.TierDir.
	suite.Setup = prepareCluster
	os.Exit(suite.Run(m))
}

// prepareCluster is the suite's Setup: once, before any test, it installs the
// manager's namespace and shipped RBAC and makes sure no Service of type
// LoadBalancer outside the suite's namespaces would take addresses from the
// tests' pools. Its error stops the suite with one message (make check prints
// it instead of a failure per check). LoadKubeconfig refuses clusters other
// than the kit's first.
func prepareCluster() error {
	raw, path, err := kittest.LoadKubeconfig()
	if err != nil {
		return err
	}
	cfg, err := clientcmd.NewDefaultClientConfig(raw, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return fmt.Errorf("cannot build a client config from %s: %w", path, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	rbac, err := filepath.Glob(filepath.Join(suite.TierDir, "config/rbac/*.yaml"))
	if err != nil {
		return err
	}
	for _, manifest := range append([]string{filepath.Join(suite.TierDir, "config/manager/namespace.yaml")}, rbac...) {
		path, err := kittest.File(manifest)
		if err != nil {
			return err
		}
		if _, err := kittest.KubectlE("apply", "--server-side", "-f", path); err != nil {
			return fmt.Errorf("applying %s: %w", path, err)
		}
	}
	if err := noRunningManager(cs); err != nil {
		return err
	}
	return noForeignLoadBalancers(cs)
}

// noRunningManager returns an error when a manager elected through the Lease
// make run-cloud uses (cloud-provider-example in cloud-provider-example-system)
// has renewed it lately: that manager would answer the tests' Services too,
// with a pool of its own, and fail checks that have nothing to do with the
// load balancer under test. The tests' own managers run without leader
// election, so they never hold it.
func noRunningManager(cs kubernetes.Interface) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lease, err := cs.CoordinationV1().Leases(controllerNamespace).Get(ctx, "cloud-provider-example", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" || lease.Spec.RenewTime == nil || lease.Spec.LeaseDurationSeconds == nil {
		return nil
	}
	if since := time.Since(lease.Spec.RenewTime.Time); since < time.Duration(*lease.Spec.LeaseDurationSeconds)*time.Second {
		return fmt.Errorf("a cloud-provider-example manager runs on this cluster (it renewed its Lease %s/cloud-provider-example %s ago; holder %s): it would answer the tests' Services too. "+
			"Stop it first (Ctrl-C in the terminal of make run-cloud), deleting make run-cloud's example Service before you do (kubectl delete -f cloud-provider-example/config/examples/service.yaml), or use a cluster of its own (KIT_CLUSTER=NAME make local-up). "+
			"A manager stopped a moment ago looks running until its Lease expires (%d s after its last renewal: upstream's manager does not release it): then run the check again",
			controllerNamespace, since.Round(time.Second), *lease.Spec.HolderIdentity, *lease.Spec.LeaseDurationSeconds)
	}
	return nil
}

// clients returns a clientset as the test's own (admin) user; prepareCluster
// has prepared the cluster.
func clients(t *testing.T) kubernetes.Interface {
	t.Helper()
	return kittest.Clientset(t)
}

// noForeignLoadBalancers returns an error naming the Services of type
// LoadBalancer (of the default class, not being deleted) that lie outside the
// e2e namespaces: every manager the tests start would answer them too and give
// them addresses of the tests' pools.
func noForeignLoadBalancers(cs kubernetes.Interface) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	services, err := cs.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	var foreign []string
	for _, s := range services.Items {
		if s.Spec.Type != corev1.ServiceTypeLoadBalancer || s.Spec.LoadBalancerClass != nil || s.DeletionTimestamp != nil {
			continue
		}
		ns, err := cs.CoreV1().Namespaces().Get(ctx, s.Namespace, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ns.Labels[e2eLabel] != "true" {
			foreign = append(foreign, s.Namespace+"/"+s.Name)
		}
	}
	if len(foreign) > 0 {
		return fmt.Errorf("the cluster has Services of type LoadBalancer outside the suite's namespaces (%s): each manager the tests start would give them addresses of the tests' pools. "+
			"Delete them (make run-cloud's example: kubectl delete -f cloud-provider-example/config/examples/service.yaml; a manager must run to remove their finalizer) or use a cluster of their own (KIT_CLUSTER=NAME make local-up)",
			strings.Join(foreign, ", "))
	}
	return nil
}

// startManager runs the manager as the shipped ServiceAccount, with the
// Reconciler under test, the pool (a prefix such as 192.0.2.100/31; "" for the
// default) and no leader election. At cleanup, before the manager stops, every
// Service in namespace is deleted and waited for (the manager removes their
// finalizers), and the test fails if the manager was ever refused an API call.
func startManager(t *testing.T, cs kubernetes.Interface, name, namespace, pool string, extraArgs ...string) *kittest.Process {
	t.Helper()
	args := []string{
		"--kubeconfig=" + kittest.ImpersonatingKubeconfig(t, controllerNamespace, serviceAccount),
		"--controllers=service-lb-controller",
		"--leader-elect=false",
		"--reconciler=" + kittest.Reconciler(),
		"-v=2",
	}
	if pool != "" {
		config := filepath.Join(t.TempDir(), name+"-cloud-config.yaml")
		if err := os.WriteFile(config, []byte("pool: "+pool+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--cloud-config="+config)
	}
	p := kittest.StartProcess(t, name, suite.Bin, append(args, extraArgs...)...)
	t.Cleanup(func() {
		deleteServices(t, cs, namespace)
		p.RequireNoLine(t, `Started "service-lb-controller"`, forbiddenMeaning(p.Lines("forbidden")), "forbidden")
	})
	return p
}

// refusedVerb is the API server's forbidden message, which names the verb and
// the resource RBAC refused: `cannot patch resource "services/status" in API group ""`.
var refusedVerb = regexp.MustCompile(`cannot (\w+) resource \\?"([^"\\]+)\\?"`)

// forbiddenMeaning says what the manager's forbidden answers mean, naming each
// verb and resource the API server refused (from its message in lines, the
// manager's log lines that report them) and how to put back the shipped role.
func forbiddenMeaning(lines []string) string {
	var refused []string
	for _, line := range lines {
		for _, m := range refusedVerb.FindAllStringSubmatch(line, -1) {
			if r := m[1] + " on " + m[2]; !slices.Contains(refused, r) {
				refused = append(refused, r)
			}
		}
	}
	what := "a request of the manager (forbidden): config/rbac/role.yaml does not grant its verb or resource"
	if len(refused) > 0 {
		what = "the manager's " + strings.Join(refused, ", ") + " (forbidden): config/rbac/role.yaml does not grant it"
	}
	return "the API server refused " + what + " (git checkout cloud-provider-example/config/rbac/role.yaml puts back the shipped rules)"
}

// deleteServices deletes every Service in namespace and waits until they are
// gone, which needs a manager running: the service controller removes its
// cleanup finalizer only after the load balancer is deleted.
func deleteServices(t *testing.T, cs kubernetes.Interface, namespace string) {
	t.Helper()
	ctx := context.Background()
	// Services have no deletecollection: one delete each.
	list, err := cs.CoreV1().Services(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Errorf("listing the Services of %s: %v", namespace, err)
		return
	}
	for _, s := range list.Items {
		if err := cs.CoreV1().Services(namespace).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting Service %s: %v", s.Name, err)
		}
	}
	kittest.Eventually(t, deadline, "every Service of "+namespace+" to be gone (the manager removes its finalizer)", func(ctx context.Context) (bool, error) {
		list, err := cs.CoreV1().Services(namespace).List(ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == 0, err
	})
}

// newLoadBalancer returns a Service of type LoadBalancer named name with one TCP
// port, 80.
func newLoadBalancer(namespace, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app.kubernetes.io/name": name},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}},
		},
	}
}

func createService(t *testing.T, cs kubernetes.Interface, s *corev1.Service) *corev1.Service {
	t.Helper()
	created, err := cs.CoreV1().Services(s.Namespace).Create(context.Background(), s, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating Service %s: %v", s.Name, err)
	}
	return created
}

func getService(t *testing.T, cs kubernetes.Interface, namespace, name string) *corev1.Service {
	t.Helper()
	s, err := cs.CoreV1().Services(namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading Service %s: %v", name, err)
	}
	return s
}

// ingressIP returns the one address of a Service's status.loadBalancer.ingress,
// "" when it has none, and an error when it has several.
func ingressIP(s *corev1.Service) (string, error) {
	switch in := s.Status.LoadBalancer.Ingress; len(in) {
	case 0:
		return "", nil
	case 1:
		return in[0].IP, nil
	default:
		return "", fmt.Errorf("service %s has %d ingress entries, want one", s.Name, len(in))
	}
}

// waitForAddress waits until Service name has an address in its status and
// returns it; the test fails when the address is not in pool.
func waitForAddress(t *testing.T, cs kubernetes.Interface, namespace, name, pool string) string {
	t.Helper()
	var ip string
	kittest.Eventually(t, deadline, fmt.Sprintf("Service %s to get an address in status.loadBalancer.ingress", name), func(ctx context.Context) (bool, error) {
		s, err := cs.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ip, err = ingressIP(s)
		return ip != "", err
	})
	addr, err := netip.ParseAddr(ip)
	if err != nil || !netip.MustParsePrefix(pool).Contains(addr) {
		t.Fatalf("Service %s got the address %q, want one of the pool %s", name, ip, pool)
	}
	return ip
}

// waitForEvent waits for an event with the given type and reason on the named
// Service and returns it.
func waitForEvent(t *testing.T, cs kubernetes.Interface, namespace, service, eventType, reason string) corev1.Event {
	t.Helper()
	var event corev1.Event
	selector := fields.Set{"involvedObject.kind": "Service", "involvedObject.name": service, "type": eventType, "reason": reason}.String()
	kittest.Eventually(t, deadline, fmt.Sprintf("a %s %s event on Service %s", eventType, reason, service), func(ctx context.Context) (bool, error) {
		events, err := cs.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: selector})
		if err != nil || len(events.Items) == 0 {
			return false, err
		}
		event = events.Items[0]
		return true, nil
	})
	return event
}

// events returns the events of the named Service with the given reason.
func events(t *testing.T, cs kubernetes.Interface, namespace, service, reason string) []corev1.Event {
	t.Helper()
	selector := fields.Set{"involvedObject.kind": "Service", "involvedObject.name": service, "reason": reason}.String()
	list, err := cs.CoreV1().Events(namespace).List(context.Background(), metav1.ListOptions{FieldSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// loadBalancerManifest returns newLoadBalancer's Service as a manifest, the
// file a user would apply or replace.
func loadBalancerManifest(namespace, name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: %[2]s
  namespace: %[1]s
spec:
  type: LoadBalancer
  selector:
    app.kubernetes.io/name: %[2]s
  ports:
  - name: http
    port: 80
    targetPort: 8080
    protocol: TCP
`, namespace, name)
}

// waitForFinalizer waits until Service name carries the cleanup finalizer.
func waitForFinalizer(t *testing.T, cs kubernetes.Interface, namespace, name string) {
	t.Helper()
	kittest.Eventually(t, deadline, fmt.Sprintf("Service %s to carry the finalizer %s", name, cleanupFinalizer), func(ctx context.Context) (bool, error) {
		s, err := cs.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
		return err == nil && hasFinalizer(s), err
	})
}

// waitGone waits until Service name is gone from the API server.
func waitGone(t *testing.T, cs kubernetes.Interface, namespace, name string) {
	t.Helper()
	kittest.Eventually(t, deadline, fmt.Sprintf("Service %s to be gone", name), func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// hasFinalizer reports whether the Service carries the service controller's
// cleanup finalizer.
func hasFinalizer(s *corev1.Service) bool {
	for _, f := range s.Finalizers {
		if f == cleanupFinalizer {
			return true
		}
	}
	return false
}
