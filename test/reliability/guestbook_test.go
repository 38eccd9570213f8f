//go:build e2e

package reliability

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
	"github.com/controller-kit/controller-kit/test/kittest"
)

// guestbookNamespace and guestbookServiceAccount are where the Guestbook
// operator's shipped RBAC (config/default: config/rbac with the namespace and
// name prefix config/default gives it) binds the manager's permissions; the
// manager keeps its directory there too (--operator-namespace).
const (
	guestbookNamespace      = "kubebuilder-guestbook-system"
	guestbookServiceAccount = "kubebuilder-guestbook-controller-manager"
)

// rbacKinds are the kinds installGuestbookRBAC keeps from config/default: the
// operator's namespace, its ServiceAccount and everything that grants it
// permissions. The manager runs on this machine, so its Deployment, Service
// and webhook configurations are left out.
var rbacKinds = map[string]bool{
	"Namespace": true, "ServiceAccount": true,
	"Role": true, "ClusterRole": true, "RoleBinding": true, "ClusterRoleBinding": true,
}

// installGuestbookRBAC renders kubebuilder-guestbook/config/default with
// kubectl's built-in kustomize, as `make deploy` renders it, and applies only
// the namespace, ServiceAccount and RBAC server-side.
func installGuestbookRBAC(root string) error {
	dir := filepath.Join(root, "kubebuilder-guestbook", "config", "default")
	rendered, err := kittest.KubectlE("kustomize", dir)
	if err != nil {
		return fmt.Errorf("rendering %s: %w\n%s", dir, err, rendered)
	}
	var keep []string
	for _, doc := range strings.Split(rendered, "\n---\n") {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			return fmt.Errorf("reading what %s renders: %w", dir, err)
		}
		if rbacKinds[meta.Kind] {
			keep = append(keep, doc)
		}
	}
	cmd := exec.Command(filepath.Join(root, "bin", "kubectl"), "apply", "--server-side", "-f", "-")
	cmd.Stdin = strings.NewReader(strings.Join(keep, "\n---\n"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("applying the Guestbook operator's RBAC: %w\n%s", err, out.String())
	}
	return nil
}

// startManager runs the Guestbook manager as its shipped ServiceAccount (by
// impersonation), webhooks off as in `make run`, with extra flags appended.
func startManager(t *testing.T, name string, extra ...string) *kittest.Process {
	t.Helper()
	args := append([]string{
		"--kubeconfig", kittest.ImpersonatingKubeconfig(t, guestbookNamespace, guestbookServiceAccount),
		"--enable-webhooks=false", "--operator-namespace", guestbookNamespace,
		"--health-probe-bind-address=0", "--metrics-bind-address=0",
	}, extra...)
	return kittest.StartProcess(t, name, managerBin, args...)
}

// newGuestbookClient returns a controller-runtime client that knows Guestbooks,
// with the test's own (admin) identity.
func newGuestbookClient(t *testing.T) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := webappv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(kittest.Config(t), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// guestbookName is the name of a burst's i-th Guestbook.
func guestbookName(i int) string { return fmt.Sprintf("gb-%03d", i) }

// newGuestbook is a burst's Guestbook: one frontend Pod, the Redis leader and
// one follower (guestbookPods Pods in all).
func newGuestbook(namespace, name string) *webappv1.Guestbook {
	return &webappv1.Guestbook{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: webappv1.GuestbookSpec{
			Frontend: webappv1.FrontendSpec{Replicas: ptr.To[int32](1)},
			Redis:    webappv1.RedisSpec{FollowerReplicas: ptr.To[int32](1)},
		},
	}
}

// guestbookConverged reports whether the manager has seen gb's latest spec and
// says it is Available.
func guestbookConverged(gb *webappv1.Guestbook) bool {
	available := apimeta.FindStatusCondition(gb.Status.Conditions, webappv1.ConditionAvailable)
	return available != nil && available.Status == metav1.ConditionTrue && available.ObservedGeneration == gb.Generation
}

// childCounts counts, per Guestbook UID, the Deployments and Services of
// namespace that a Guestbook controls; children with no Guestbook controller
// are counted under "".
func childCounts(ctx context.Context, cs kubernetes.Interface, namespace string) (deployments, services map[types.UID]int, err error) {
	deployments, services = map[types.UID]int{}, map[types.UID]int{}
	owner := func(obj metav1.Object) types.UID {
		if ref := metav1.GetControllerOf(obj); ref != nil && ref.Kind == "Guestbook" {
			return ref.UID
		}
		return ""
	}
	ds, err := cs.AppsV1().Deployments(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	for i := range ds.Items {
		deployments[owner(&ds.Items[i])]++
	}
	ss, err := cs.CoreV1().Services(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	for i := range ss.Items {
		services[owner(&ss.Items[i])]++
	}
	return deployments, services, nil
}

// TestGuestbookBurstSurvivesManagerCrash is the crash scenario for tier 3: a
// burst of Guestbooks, the manager SIGKILLed once about a third of their
// Deployments exist, a new manager started. controller-runtime's cache lists
// Guestbooks, Deployments and Services afresh, and the Reconciler's
// CreateOrUpdate finds the children the first manager made by name and owner:
// every Guestbook ends with exactly one set of children (three Deployments,
// three Services), all controlled by it, and Available; no Guestbook reports a
// child conflict, which would mean the manager took its own earlier work for
// someone else's.
func TestGuestbookBurstSurvivesManagerCrash(t *testing.T) {
	scenario(t)
	n := *guestbooks
	cs := kittest.Clientset(t)
	c := newGuestbookClient(t)
	ns := kittest.Namespace(t, cs, "crash-guestbook")
	ctx := context.Background()

	first := startManager(t, "manager-killed")
	third := deploymentsReach(t, cs, ns, max(n, 1)) // three Deployments per Guestbook: a third of them
	if err := kittest.ForEach(ctx, n, createWorkers, func(ctx context.Context, i int) error {
		return c.Create(ctx, newGuestbook(ns, guestbookName(i)))
	}); err != nil {
		t.Fatalf("creating %d Guestbooks: %v", n, err)
	}
	select {
	case <-third:
	case <-time.After(deadline):
		t.Fatalf("timed out after %s waiting for a third of the %d Guestbooks' Deployments", deadline, n)
	}
	first.Signal(syscall.SIGKILL)
	if _, err := first.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	record(t, "Guestbooks in the burst", float64(n), "")
	if d, _, err := childCounts(ctx, cs, ns); err == nil {
		total := 0
		for _, count := range d {
			total += count
		}
		record(t, "Deployments when the manager was killed", float64(total), "")
	}

	restarted := time.Now()
	startManager(t, "manager-restarted")
	kittest.Eventually(t, deadline, fmt.Sprintf("all %d Guestbooks to be Available", n), func(ctx context.Context) (bool, error) {
		var list webappv1.GuestbookList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		converged := 0
		for i := range list.Items {
			if guestbookConverged(&list.Items[i]) {
				converged++
			}
		}
		return converged == n, nil
	})
	record(t, "converged after restart", time.Since(restarted).Seconds(), "s")

	// Exactly one set of children per Guestbook, each controlled by it.
	var list webappv1.GuestbookList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	deployments, services, err := childCounts(ctx, cs, ns)
	if err != nil {
		t.Fatal(err)
	}
	if deployments[""] > 0 || services[""] > 0 {
		t.Errorf("%d Deployments and %d Services are controlled by no Guestbook", deployments[""], services[""])
	}
	for _, gb := range list.Items {
		if deployments[gb.UID] != 3 || services[gb.UID] != 3 {
			t.Errorf("Guestbook %s controls %d Deployments and %d Services; want 3 of each", gb.Name, deployments[gb.UID], services[gb.UID])
		}
		for _, cond := range gb.Status.Conditions {
			// ChildConflict is the manager's ReasonChildConflict
			// (internal/controller, which this module cannot import).
			if cond.Reason == "ChildConflict" {
				t.Errorf("Guestbook %s reports a child it does not own: %s", gb.Name, cond.Message)
			}
		}
	}
}
