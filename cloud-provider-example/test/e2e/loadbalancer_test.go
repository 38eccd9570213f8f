//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/controller-kit/controller-kit/test/kittest"
)

func TestLoadBalancerServiceGetsAnAddressFinalizerAndEvents(t *testing.T) {
	cs := clients(t)
	ns := kittest.Namespace(t, cs, "cloud-address")
	startManager(t, cs, "manager", ns, "")

	createService(t, cs, newLoadBalancer(ns, "web"))

	waitForAddress(t, cs, ns, "web", defaultPool)
	s := getService(t, cs, ns, "web")
	if !hasFinalizer(s) {
		t.Errorf("Service web has the finalizers %v, want %s among them", s.Finalizers, cleanupFinalizer)
	}
	in := s.Status.LoadBalancer.Ingress[0]
	if len(in.Ports) != 1 || in.Ports[0].Port != 80 || in.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Errorf("the ingress lists the ports %v, want the Service's port 80/TCP", in.Ports)
	}
	waitForEvent(t, cs, ns, "web", corev1.EventTypeNormal, "EnsuringLoadBalancer")
	waitForEvent(t, cs, ns, "web", corev1.EventTypeNormal, "EnsuredLoadBalancer")
}

func TestChangingPortsUpdatesTheLoadBalancer(t *testing.T) {
	cs := clients(t)
	ns := kittest.Namespace(t, cs, "cloud-ports")
	startManager(t, cs, "manager", ns, "")
	createService(t, cs, newLoadBalancer(ns, "web"))
	ip := waitForAddress(t, cs, ns, "web", defaultPool)

	// A merge patch replaces the list (a strategic one would add 443 to 80).
	patch := []byte(`{"spec":{"ports":[{"name":"https","port":443,"targetPort":8443,"protocol":"TCP"}]}}`)
	if _, err := cs.CoreV1().Services(ns).Patch(context.Background(), "web", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("changing Service web's port to 443: %v", err)
	}

	kittest.Eventually(t, deadline, "Service web's ingress to list port 443 only, at the same address", func(ctx context.Context) (bool, error) {
		s, err := cs.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil || len(s.Status.LoadBalancer.Ingress) != 1 {
			return false, err
		}
		in := s.Status.LoadBalancer.Ingress[0]
		if in.IP != ip {
			t.Fatalf("the port change moved Service web from %s to %s; a load balancer keeps its address", ip, in.IP)
		}
		return len(in.Ports) == 1 && in.Ports[0].Port == 443, nil
	})
}

func TestDeletingServiceReleasesItsAddress(t *testing.T) {
	// A pool of one address: the next Service can only get it once it is released.
	const pool = "192.0.2.100/32"
	cs := clients(t)
	ns := kittest.Namespace(t, cs, "cloud-release")
	startManager(t, cs, "manager", ns, pool)
	createService(t, cs, newLoadBalancer(ns, "first"))
	ip := waitForAddress(t, cs, ns, "first", pool)

	if err := cs.CoreV1().Services(ns).Delete(context.Background(), "first", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, deadline, "Service first to be gone (the manager deletes its load balancer, then removes the finalizer)", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Services(ns).Get(ctx, "first", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	createService(t, cs, newLoadBalancer(ns, "second"))
	if got := waitForAddress(t, cs, ns, "second", pool); got != ip {
		t.Errorf("Service second got %s, want the released %s", got, ip)
	}
}

func TestServiceThatStopsBeingLoadBalancerReleasesItsAddress(t *testing.T) {
	const pool = "192.0.2.101/32"
	cs := clients(t)
	ns := kittest.Namespace(t, cs, "cloud-type-change")
	startManager(t, cs, "manager", ns, pool)
	createService(t, cs, newLoadBalancer(ns, "first"))
	ip := waitForAddress(t, cs, ns, "first", pool)

	patch := []byte(`{"spec":{"type":"ClusterIP"}}`)
	if _, err := cs.CoreV1().Services(ns).Patch(context.Background(), "first", types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("changing Service first to ClusterIP: %v", err)
	}
	kittest.Eventually(t, deadline, "Service first, now ClusterIP, to lose its address and the finalizer", func(ctx context.Context) (bool, error) {
		s, err := cs.CoreV1().Services(ns).Get(ctx, "first", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return len(s.Status.LoadBalancer.Ingress) == 0 && !hasFinalizer(s), nil
	})
	createService(t, cs, newLoadBalancer(ns, "second"))
	if got := waitForAddress(t, cs, ns, "second", pool); got != ip {
		t.Errorf("Service second got %s, want the released %s", got, ip)
	}
}

func TestClusterIPAndOtherClassServicesAreLeftAlone(t *testing.T) {
	cs := clients(t)
	ns := kittest.Namespace(t, cs, "cloud-alone")
	startManager(t, cs, "manager", ns, "")
	clusterIP := newLoadBalancer(ns, "internal")
	clusterIP.Spec.Type = corev1.ServiceTypeClusterIP
	createService(t, cs, clusterIP)
	otherClass := newLoadBalancer(ns, "other-class")
	otherClass.Spec.LoadBalancerClass = ptr.To("example.com/another-load-balancer")
	createService(t, cs, otherClass)

	// A Service of this cloud created after them: once the manager has
	// started on it, it has seen the other two.
	createService(t, cs, newLoadBalancer(ns, "canary"))
	waitForEvent(t, cs, ns, "canary", corev1.EventTypeNormal, "EnsuringLoadBalancer")

	for _, name := range []string{"internal", "other-class"} {
		s := getService(t, cs, ns, name)
		if hasFinalizer(s) || len(s.Status.LoadBalancer.Ingress) > 0 {
			t.Errorf("Service %s was touched: finalizers %v, ingress %v", name, s.Finalizers, s.Status.LoadBalancer.Ingress)
		}
		if got := events(t, cs, ns, name, "EnsuringLoadBalancer"); len(got) > 0 {
			t.Errorf("Service %s has %d EnsuringLoadBalancer events, want none", name, len(got))
		}
	}
}

func TestRestartedManagerAllocatesNothingTwice(t *testing.T) {
	cs := clients(t)
	ns := kittest.Namespace(t, cs, "cloud-restart")
	first := startManager(t, cs, "manager-1", ns, "")
	createService(t, cs, newLoadBalancer(ns, "a"))
	createService(t, cs, newLoadBalancer(ns, "b"))
	ipA := waitForAddress(t, cs, ns, "a", defaultPool)
	ipB := waitForAddress(t, cs, ns, "b", defaultPool)
	if ipA == ipB {
		t.Fatalf("Services a and b share the address %s", ipA)
	}
	if code, err := first.Stop(30 * time.Second); err != nil || code != 0 {
		t.Fatalf("stopping the first manager: exit code %d, %v; want a clean exit on SIGTERM", code, err)
	}

	// The new manager's memory is empty: what it knows is in the Services.
	startManager(t, cs, "manager-2", ns, "")
	createService(t, cs, newLoadBalancer(ns, "c"))
	ipC := waitForAddress(t, cs, ns, "c", defaultPool)
	if ipC == ipA || ipC == ipB {
		t.Errorf("after the restart Service c got %s, which a (%s) or b (%s) holds", ipC, ipA, ipB)
	}
	for name, want := range map[string]string{"a": ipA, "b": ipB} {
		got, err := ingressIP(getService(t, cs, ns, name))
		if err != nil || got != want {
			t.Errorf("after the restart Service %s has the address %q (%v), want the one it had, %s", name, got, err, want)
		}
	}
}

func TestExhaustedPoolGivesWarningAndNoAddress(t *testing.T) {
	// Two addresses, three Services.
	const pool = "192.0.2.102/31"
	cs := clients(t)
	ns := kittest.Namespace(t, cs, "cloud-exhausted")
	startManager(t, cs, "manager", ns, pool)
	createService(t, cs, newLoadBalancer(ns, "a"))
	createService(t, cs, newLoadBalancer(ns, "b"))
	waitForAddress(t, cs, ns, "a", pool)
	waitForAddress(t, cs, ns, "b", pool)

	createService(t, cs, newLoadBalancer(ns, "c"))
	warning := waitForEvent(t, cs, ns, "c", corev1.EventTypeWarning, "SyncLoadBalancerFailed")
	if !strings.Contains(warning.Message, pool) {
		t.Errorf("the Warning event says %q; want it to name the pool %s", warning.Message, pool)
	}

	// No hot retry loop: the service controller retries a failed Service with
	// its backoff (5 s, doubling, up to 5 min). A generous bound after a while,
	// not a timing: a loop without backoff makes hundreds of attempts meanwhile.
	time.Sleep(15 * time.Second)
	attempts := 0
	for _, e := range events(t, cs, ns, "c", "SyncLoadBalancerFailed") {
		attempts += int(max(e.Count, 1))
	}
	if attempts > 10 {
		t.Errorf("Service c failed %d times within about 15 s: a hot retry loop, not the controller's backoff", attempts)
	}
	if ip, err := ingressIP(getService(t, cs, ns, "c")); ip != "" || err != nil {
		t.Errorf("Service c got the address %q (%v) from an exhausted pool", ip, err)
	}
}

func TestAddressOutsideThePoolGivesWarningNamingThePool(t *testing.T) {
	cs := clients(t)
	ns := kittest.Namespace(t, cs, "cloud-outside")
	startManager(t, cs, "manager", ns, "")
	// Two ways to ask for an address: the deprecated field, and the toy cloud's
	// annotation (toycloud.AddressAnnotation).
	web := newLoadBalancer(ns, "web")
	web.Spec.LoadBalancerIP = "198.51.100.7"
	api := newLoadBalancer(ns, "api")
	api.Annotations = map[string]string{"toycloud.controller-kit.dev/load-balancer-ip": "198.51.100.8"}
	for _, s := range []*corev1.Service{web, api} {
		createService(t, cs, s)
	}

	for name, address := range map[string]string{"web": "198.51.100.7", "api": "198.51.100.8"} {
		warning := waitForEvent(t, cs, ns, name, corev1.EventTypeWarning, "SyncLoadBalancerFailed")
		if !strings.Contains(warning.Message, defaultPool) || !strings.Contains(warning.Message, address) {
			t.Errorf("the Warning event on Service %s says %q; want it to name the address asked for, %s, and the pool %s", name, warning.Message, address, defaultPool)
		}
		if ip, err := ingressIP(getService(t, cs, ns, name)); ip != "" || err != nil {
			t.Errorf("Service %s got the address %q (%v) though it asked for one outside the pool", name, ip, err)
		}
	}
}

func TestFinalizerDroppedByReplaceIsPutBack(t *testing.T) {
	// A pool of one address: the next Service gets it only once it is released.
	const pool = "192.0.2.104/32"
	cs := clients(t)
	ns := kittest.Namespace(t, cs, "cloud-replace")
	startManager(t, cs, "manager", ns, pool)
	createService(t, cs, newLoadBalancer(ns, "leak-a"))
	ip := waitForAddress(t, cs, ns, "leak-a", pool)
	waitForFinalizer(t, cs, ns, "leak-a")

	// kubectl replace with the manifest it was made from, as a GitOps tool
	// that replaces objects sends it: the finalizer is not in the manifest,
	// so the API server drops it.
	manifest := filepath.Join(t.TempDir(), "leak-a.yaml")
	if err := os.WriteFile(manifest, []byte(loadBalancerManifest(ns, "leak-a")), 0o644); err != nil {
		t.Fatal(err)
	}
	kittest.Kubectl(t, "replace", "-f", manifest)
	replaced := time.Now()

	waitForFinalizer(t, cs, ns, "leak-a")
	t.Logf("the finalizer was back %s after the replace", time.Since(replaced).Round(10*time.Millisecond))
	waitForEvent(t, cs, ns, "leak-a", corev1.EventTypeNormal, "RestoredFinalizer")
	if got, err := ingressIP(getService(t, cs, ns, "leak-a")); got != ip || err != nil {
		t.Errorf("after the replace Service leak-a has the address %q (%v), want the one it had, %s", got, err, ip)
	}

	// Deleted now, it goes through the finalizer: its address is released.
	if err := cs.CoreV1().Services(ns).Delete(context.Background(), "leak-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForEvent(t, cs, ns, "leak-a", corev1.EventTypeNormal, "DeletingLoadBalancer")
	waitGone(t, cs, ns, "leak-a")
	createService(t, cs, newLoadBalancer(ns, "leak-b"))
	created := time.Now()
	if got := waitForAddress(t, cs, ns, "leak-b", pool); got != ip {
		t.Errorf("Service leak-b got %s, want the released %s", got, ip)
	}
	t.Logf("Service leak-b got %s %s after it was created", ip, time.Since(created).Round(100*time.Millisecond))
}

func TestServiceDeletedWithoutItsFinalizerReleasesItsAddress(t *testing.T) {
	const pool = "192.0.2.105/32"
	cs := clients(t)
	ns := kittest.Namespace(t, cs, "cloud-gone")
	manager := startManager(t, cs, "manager", ns, pool)
	createService(t, cs, newLoadBalancer(ns, "first"))
	ip := waitForAddress(t, cs, ns, "first", pool)
	waitForFinalizer(t, cs, ns, "first")

	// The manager paused (SIGSTOP) while the Service loses its finalizer and
	// is deleted, so it has no time to put the finalizer back: what it sees
	// of a replace followed at once by a delete when it is busy. The service
	// controller never asks the cloud to delete this load balancer.
	manager.Signal(syscall.SIGSTOP)
	t.Cleanup(func() { manager.Signal(syscall.SIGCONT) })
	if _, err := cs.CoreV1().Services(ns).Update(context.Background(), newLoadBalancer(ns, "first"), metav1.UpdateOptions{}); err != nil {
		t.Fatalf("replacing Service first without its finalizer: %v", err)
	}
	if err := cs.CoreV1().Services(ns).Delete(context.Background(), "first", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, cs, ns, "first")
	manager.Signal(syscall.SIGCONT)

	createService(t, cs, newLoadBalancer(ns, "second"))
	created := time.Now()
	if got := waitForAddress(t, cs, ns, "second", pool); got != ip {
		t.Errorf("Service second got %s, want %s, which Service first held until it was deleted", got, ip)
	}
	t.Logf("Service second got %s %s after it was created", ip, time.Since(created).Round(100*time.Millisecond))
}

func TestFreedAddressReachesAWaitingServiceWithinAMinute(t *testing.T) {
	const pool = "192.0.2.106/32"
	cs := clients(t)
	ns := kittest.Namespace(t, cs, "cloud-waiting")
	startManager(t, cs, "manager", ns, pool)
	createService(t, cs, newLoadBalancer(ns, "a"))
	ip := waitForAddress(t, cs, ns, "a", pool)
	createService(t, cs, newLoadBalancer(ns, "b"))
	waitForEvent(t, cs, ns, "b", corev1.EventTypeWarning, "SyncLoadBalancerFailed")

	// b waits, as a Service does until someone frees an address. After 80 s
	// the service controller's backoff for it has grown to 80 s (attempts
	// at 0, 5, 15, 35 and 75 s): with nothing else, an address freed now
	// would reach b at 155 s, over a minute later. The minute below is the
	// behaviour checked, not a measure of speed: the reference asks again
	// every 30 s (toycloud.ExhaustedRetryDelay).
	time.Sleep(80 * time.Second)
	if err := cs.CoreV1().Services(ns).Delete(context.Background(), "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, cs, ns, "a")
	freed := time.Now()
	kittest.Eventually(t, time.Minute, "Service b to get the address a freed, within a minute", func(ctx context.Context) (bool, error) {
		s, err := cs.CoreV1().Services(ns).Get(ctx, "b", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got, err := ingressIP(s)
		return got != "", err
	})
	if got, _ := ingressIP(getService(t, cs, ns, "b")); got != ip {
		t.Errorf("Service b got %s, want %s, which a freed", got, ip)
	}
	t.Logf("Service b got %s %s after a was gone", ip, time.Since(freed).Round(100*time.Millisecond))
}

func TestWarningsNameTheServiceNotItsLoadBalancer(t *testing.T) {
	cs := clients(t)
	ns := kittest.Namespace(t, cs, "cloud-names")
	startManager(t, cs, "manager", ns, "")
	a := createService(t, cs, newLoadBalancer(ns, "a"))
	ip := waitForAddress(t, cs, ns, "a", defaultPool)
	b := newLoadBalancer(ns, "b")
	b.Annotations = map[string]string{"toycloud.controller-kit.dev/load-balancer-ip": ip}
	createService(t, cs, b)

	warning := waitForEvent(t, cs, ns, "b", corev1.EventTypeWarning, "SyncLoadBalancerFailed")
	t.Logf("the Warning on Service b: %s", warning.Message)
	if !strings.Contains(warning.Message, ns+"/a") {
		t.Errorf("the Warning event on Service b says %q; want it to name the Service that holds %s, %s/a", warning.Message, ip, ns)
	}
	// The load balancer's name in the cloud, upstream's default
	// (cloudprovider.DefaultLoadBalancerName): a user never sees it.
	lbName := "a" + strings.ReplaceAll(string(a.UID), "-", "")
	lbName = lbName[:min(len(lbName), 32)]
	all, err := cs.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range all.Items {
		if strings.Contains(e.Message, lbName) {
			t.Errorf("the %s event on %s %s names the load balancer %s: %q; name the Service", e.Reason, e.InvolvedObject.Kind, e.InvolvedObject.Name, lbName, e.Message)
		}
	}
}

func TestBadFlagsExitNamingTheFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{name: "unknown provider", args: []string{"--kubeconfig=" + kittest.Kubeconfig(), "--cloud-provider=aws"}, want: "--cloud-provider"},
		{name: "missing kubeconfig", args: []string{"--kubeconfig=" + t.TempDir() + "/missing"}, want: "--kubeconfig"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := kittest.StartProcess(t, "manager", suite.Bin, append(tc.args, "--reconciler="+kittest.Reconciler())...)
			code, err := p.Wait(deadline)
			if err != nil {
				t.Fatalf("the manager did not exit: %v", err)
			}
			if code == 0 {
				t.Errorf("the manager exited 0, want an error")
			}
			if len(p.Lines(tc.want)) == 0 {
				t.Errorf("the manager's output does not name %s:\n%s", tc.want, p.Logs())
			}
		})
	}
}
