//go:build e2e

package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	webappv1 "github.com/controller-kit/controller-kit/kubebuilder-guestbook/api/v1"
	samplev1alpha1 "github.com/controller-kit/controller-kit/sample-controller/pkg/apis/samplecontroller/v1alpha1"
	"github.com/controller-kit/controller-kit/sample-controller/pkg/generated/clientset/versioned"
	"github.com/controller-kit/controller-kit/test/kittest"
)

// outage is how long the scenario keeps kube-apiserver stopped: longer than
// the leader-elected controller's renew deadline (outageLeaseTimings), shorter
// than the 40 s after which kube-controller-manager would mark kwok's nodes
// NotReady.
const outage = 20 * time.Second

// outageLeaseTimings are the leader-elected controller's Lease timings: the
// defaults' proportions, shortened so the leader gives up well inside the outage.
var outageLeaseTimings = []string{
	"--leader-elect-lease-duration=10s",
	"--leader-elect-renew-deadline=7s",
	"--leader-elect-retry-period=1s",
}

// kwokWorkdir is where hack/lib.sh has kwokctl keep its clusters
// ($KWOK_WORKDIR): each cluster's configuration, PKI, logs and pid files.
func kwokWorkdir() string { return filepath.Join(kittest.RepoRoot(), "_output", "kwok") }

// component stops or starts one component of the suite's cluster with
// bin/kit-component (hack/cluster/cmd/kit-component, kwokctl's runtime), which
// finds the cluster where hack/lib.sh has kwokctl keep it.
func component(t *testing.T, verb, name string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(kittest.RepoRoot(), "bin", "kit-component"), "--name", *clusterName, verb, name)
	cmd.Env = append(os.Environ(), "KWOK_WORKDIR="+kwokWorkdir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kit-component %s %s: %v\n%s", verb, name, err, out)
	}
}

// holdPort keeps the stopped kube-apiserver's port (server is its URL) until
// release is called, so that no other program takes it meanwhile: kwokctl
// gives each component of a new cluster a port that is free when it looks,
// and make test creates clusters beside this one. The port is bound but not
// listened on, so a client's connection is refused, exactly as by a stopped
// server. SO_REUSEADDR is on for the bind only (the stopped server's closed
// connections keep the port in TIME_WAIT for a minute) and off afterwards:
// a socket bound without it shares its port with nobody.
func holdPort(t *testing.T, server string) (release func()) {
	t.Helper()
	u, err := url.Parse(server)
	if err != nil {
		t.Fatalf("the API server's address %q: %v", server, err)
	}
	addr, err := netip.ParseAddrPort(u.Host)
	if err != nil || !addr.Addr().Is4() {
		t.Fatalf("the API server's address %q is not an IPv4 address and port: %v", u.Host, err)
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		t.Fatal(err)
	}
	// The stopped server may take a moment to let go of its port.
	kittest.Eventually(t, 30*time.Second, "kube-apiserver's port "+u.Host+" to be free", func(context.Context) (bool, error) {
		return syscall.Bind(fd, &syscall.SockaddrInet4{Port: int(addr.Port()), Addr: addr.Addr().As4()}) == nil, nil
	})
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 0); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { syscall.Close(fd) }) }
	t.Cleanup(release)
	return release
}

// compactEtcd compacts the suite's etcd up to its current revision, through
// etcd's JSON gateway (kwokctl runs etcd on plain HTTP on loopback): every
// event before now is gone from etcd's history, so no watch can resume from a
// resource version of before, and the API server answers such a watch with
// 410 Gone. It returns the revision compacted to.
func compactEtcd(t *testing.T) int64 {
	t.Helper()
	config := filepath.Join(kwokWorkdir(), "clusters", *clusterName, "kwok.yaml")
	data, err := os.ReadFile(config)
	if err != nil {
		t.Fatalf("reading kwokctl's configuration of the cluster: %v", err)
	}
	var kwok struct {
		Options struct {
			EtcdPort int `json:"etcdPort"`
		} `json:"options"`
	}
	if err := yaml.Unmarshal(data, &kwok); err != nil || kwok.Options.EtcdPort == 0 {
		t.Fatalf("%s names no etcdPort (%v)", config, err)
	}
	call := func(path, body string, out any) {
		t.Helper()
		url := fmt.Sprintf("http://127.0.0.1:%d%s", kwok.Options.EtcdPort, path)
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatalf("etcd %s: %v", path, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("etcd %s: %s", path, resp.Status)
		}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("etcd %s: %v", path, err)
		}
	}
	// Any read answers with the current revision in its header ("Lw==" is "/").
	var read struct {
		Header struct {
			Revision int64 `json:"revision,string"`
		} `json:"header"`
	}
	call("/v3/kv/range", `{"key":"Lw=="}`, &read)
	call("/v3/kv/compaction", fmt.Sprintf(`{"revision":"%d","physical":true}`, read.Header.Revision), &struct{}{})
	return read.Header.Revision
}

// watchCounter is a ListerWatcher for Foos that counts what a reflector does
// with it: full lists (a LIST, or a WATCH that starts with the initial
// events, as client-go's WatchListClient does), and watches the API server
// ended with 410 Gone ("too old resource version": the server no longer has
// the history the watch asked to resume from).
type watchCounter struct {
	client    versioned.Interface
	namespace string
	lists     atomic.Int32
	expired   atomic.Int32
}

// List lists Foos, counting a full list.
func (w *watchCounter) List(options metav1.ListOptions) (runtime.Object, error) {
	w.lists.Add(1)
	return w.client.SamplecontrollerV1alpha1().Foos(w.namespace).List(context.Background(), options)
}

// Watch watches Foos, counting a watch-list as a full list and every 410 the
// stream ends with.
func (w *watchCounter) Watch(options metav1.ListOptions) (watch.Interface, error) {
	if ptr.Deref(options.SendInitialEvents, false) {
		w.lists.Add(1)
	}
	inner, err := w.client.SamplecontrollerV1alpha1().Foos(w.namespace).Watch(context.Background(), options)
	if err != nil {
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			w.expired.Add(1)
		}
		return nil, err
	}
	return watch.Filter(inner, func(ev watch.Event) (watch.Event, bool) {
		if ev.Type == watch.Error {
			if err := apierrors.FromObject(ev.Object); apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				w.expired.Add(1)
			}
		}
		return ev, true
	}), nil
}

// leaseHolder returns the holder of the Lease namespace/name, "" if it has none
// or does not exist yet.
func leaseHolder(ctx context.Context, cs kubernetes.Interface, namespace, name string) (string, error) {
	lease, err := cs.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return ptr.Deref(lease.Spec.HolderIdentity, ""), nil
}

// foosConverged reports whether every Foo of namespace has seen its latest spec
// and has all its replicas available.
func foosConverged(ctx context.Context, c versioned.Interface, namespace string) (bool, error) {
	list, err := c.SamplecontrollerV1alpha1().Foos(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	for _, foo := range list.Items {
		if foo.Status.ObservedGeneration != foo.Generation || foo.Status.AvailableReplicas != ptr.Deref(foo.Spec.Replicas, 1) {
			return false, nil
		}
	}
	return len(list.Items) > 0, nil
}

// TestControllersRideOutAnAPIServerOutage stops the cluster's kube-apiserver
// for 20 s under three running controllers, then changes objects the moment it
// is back (a Foo and a Guestbook scaled, a Deployment of each deleted by hand).
//
//   - sample-controller and the Guestbook manager without leader election keep
//     running through the outage: their reflectors retry with back-off, and when
//     the API server is back they resume their watches or, if the server no
//     longer has the history (410 Gone: a restarted API server's watch cache
//     starts at the current revision), list again. Either way the changes made
//     after the outage are seen and reconciled, with no restart;
//   - a sample-controller with leader election cannot renew its Lease: it stops
//     leading within its renew deadline and exits non-zero, as
//     kube-controller-manager does, so that a supervisor (the kubelet, in a
//     cluster) restarts it; a replica started after the outage takes the Lease
//     and converges what changed.
//
// A Foo informer of the test's own, watching through the outage beside the
// controllers, counts the 410s and its full lists: the proof that its watch
// was not resumed but repaired by a list, as the controllers' informers are.
func TestControllersRideOutAnAPIServerOutage(t *testing.T) {
	scenario(t)
	const perNamespace = 5
	cs, fooClient, dyn := fooClients(t)
	gbClient := newGuestbookClient(t)
	ctx := context.Background()
	plainNS := kittest.Namespace(t, cs, "outage-foo")
	electedNS := kittest.Namespace(t, cs, "outage-elected")
	gbNS := kittest.Namespace(t, cs, "outage-guestbook")
	leaseName := "outage-" + electedNS

	plain := startSampleController(t, "controller-plain", plainNS)
	electedArgs := append([]string{"--leader-elect", "--leader-elect-resource-namespace=" + sampleControllerNamespace,
		"--leader-elect-resource-name=" + leaseName}, outageLeaseTimings...)
	elected := startSampleController(t, "controller-elected", electedNS, electedArgs...)
	manager := startManager(t, "manager-plain")

	for _, ns := range []string{plainNS, electedNS} {
		if _, err := kittest.CreateFoos(ctx, dyn, ns, perNamespace, 1, createWorkers); err != nil {
			t.Fatal(err)
		}
	}
	for i := range perNamespace {
		if err := gbClient.Create(ctx, newGuestbook(gbNS, guestbookName(i))); err != nil {
			t.Fatal(err)
		}
	}
	allConverged := func(ctx context.Context) (bool, error) {
		for _, ns := range []string{plainNS, electedNS} {
			if ok, err := foosConverged(ctx, fooClient, ns); !ok || err != nil {
				return false, err
			}
		}
		var list webappv1.GuestbookList
		if err := gbClient.List(ctx, &list, client.InNamespace(gbNS)); err != nil {
			return false, err
		}
		for i := range list.Items {
			if !guestbookConverged(&list.Items[i]) {
				return false, nil
			}
		}
		return len(list.Items) == perNamespace, nil
	}
	kittest.Eventually(t, deadline, "every Foo and Guestbook to converge before the outage", allConverged)

	// The test's own informer, to see what the outage does to a watch.
	counter := &watchCounter{client: fooClient, namespace: plainNS}
	informer := cache.NewSharedIndexInformer(&cache.ListWatch{ListFunc: counter.List, WatchFunc: counter.Watch},
		&samplev1alpha1.Foo{}, 0, cache.Indexers{})
	informerCtx, stopInformer := context.WithCancel(ctx)
	defer stopInformer()
	go informer.RunWithContext(informerCtx)
	if !cache.WaitForCacheSync(informerCtx.Done(), informer.HasSynced) {
		t.Fatal("the test's Foo informer did not sync")
	}
	listsBefore := counter.lists.Load()

	// The Lease keeps the old leader's name after it exits: the restarted
	// replica has led once the name changes.
	oldLeader, err := leaseHolder(ctx, cs, sampleControllerNamespace, leaseName)
	if err != nil || oldLeader == "" {
		t.Fatalf("the leader-elected sample-controller holds no Lease %s/%s before the outage (holder %q, %v)", sampleControllerNamespace, leaseName, oldLeader, err)
	}

	stopped := time.Now()
	component(t, "stop", "kube-apiserver")
	release := holdPort(t, kittest.Config(t).Host)
	// The leader-elected controller must give up at its renew deadline (7 s),
	// plus whatever the request in flight then takes. The outage lasts until
	// it has exited (at least 20 s), so that a slow machine cannot turn
	// "exits" into "still leads".
	code, err := elected.Wait(time.Minute)
	if err != nil {
		t.Errorf("the leader-elected sample-controller was still running a minute into the outage: it must stop leading at its renew deadline and exit")
	} else {
		record(t, "leader exited after the API server stopped", time.Since(stopped).Seconds(), "s")
		if code == 0 {
			t.Errorf("the leader-elected sample-controller exited with code 0 on losing its Lease; want non-zero, so its supervisor restarts it")
		}
	}
	// Whatever the restarted API server could resume a watch from is gone:
	// as after a long outage, when etcd has compacted its history.
	record(t, "etcd compacted to revision", float64(compactEtcd(t)), "")
	time.Sleep(time.Until(stopped.Add(outage)))
	release()
	component(t, "start", "kube-apiserver")
	back := time.Now()
	// kube-controller-manager and kube-scheduler run with leader election
	// too, and exit for the same reason; in a cluster the kubelet restarts
	// them (static Pods). Here the test is their supervisor.
	for _, name := range []string{"kube-controller-manager", "kube-scheduler"} {
		component(t, "start", name)
	}
	record(t, "API server stopped for", back.Sub(stopped).Seconds(), "s")
	kittest.Eventually(t, deadline, "kube-apiserver to serve again", func(ctx context.Context) (bool, error) {
		_, err := cs.Discovery().ServerVersion()
		return err == nil, nil
	})

	// Change things the moment the API server is back: the controllers may not
	// have re-established their watches yet.
	scale := func(ns string) {
		t.Helper()
		if _, err := fooClient.SamplecontrollerV1alpha1().Foos(ns).Patch(ctx, kittest.FooName(0), "application/merge-patch+json",
			[]byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{}); err != nil {
			t.Fatalf("scaling Foo %s/%s: %v", ns, kittest.FooName(0), err)
		}
		if err := cs.AppsV1().Deployments(ns).Delete(ctx, kittest.FooName(1), metav1.DeleteOptions{}); err != nil {
			t.Fatalf("deleting Deployment %s/%s: %v", ns, kittest.FooName(1), err)
		}
	}
	scale(plainNS)
	scale(electedNS)
	if err := gbClient.Patch(ctx, newGuestbook(gbNS, guestbookName(0)), client.RawPatch("application/merge-patch+json",
		[]byte(`{"spec":{"frontend":{"replicas":3}}}`))); err != nil {
		t.Fatal(err)
	}
	if err := cs.AppsV1().Deployments(gbNS).Delete(ctx, guestbookName(1)+webappv1.FrontendSuffix, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// The leader-elected replica is restarted, as its supervisor would.
	restarted := time.Now()
	startSampleController(t, "controller-elected-restarted", electedNS, electedArgs...)
	kittest.Eventually(t, deadline, "the restarted replica to take the Lease", func(ctx context.Context) (bool, error) {
		holder, err := leaseHolder(ctx, cs, sampleControllerNamespace, leaseName)
		return holder != "" && holder != oldLeader, err
	})
	record(t, "restarted replica took the Lease after", time.Since(restarted).Seconds(), "s")

	kittest.Eventually(t, deadline, "every change made after the outage to be reconciled", allConverged)
	record(t, "converged after the API server came back", time.Since(back).Seconds(), "s")

	for _, p := range []*kittest.Process{plain, manager} {
		if p.Exited() {
			t.Errorf("%s exited during or after the outage (%v); without leader election it must ride it out", p.Name, p.State())
		}
	}
	// The scaled Foo's Deployment has 3 replicas, the deleted one is back.
	for _, ns := range []string{plainNS, electedNS} {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, kittest.FooName(0), metav1.GetOptions{})
		if err != nil || ptr.Deref(d.Spec.Replicas, 0) != 3 {
			t.Errorf("Deployment %s/%s after scaling its Foo to 3: %v, replicas %v", ns, kittest.FooName(0), err, d.Spec.Replicas)
		}
		if _, err := cs.AppsV1().Deployments(ns).Get(ctx, kittest.FooName(1), metav1.GetOptions{}); err != nil {
			t.Errorf("Deployment %s/%s deleted by hand after the outage was not recreated: %v", ns, kittest.FooName(1), err)
		}
	}

	record(t, "410 Gone seen by a watching Foo informer", float64(counter.expired.Load()), "")
	record(t, "lists by that informer after the outage", float64(counter.lists.Load()-listsBefore), "")
	// Which comes first after the restart is a race: a watch retried from the
	// old resource version (answered 410 Gone, since etcd was compacted), or an
	// error from the API server while its caches fill (503), after which the
	// reflector lists at once. Either way it must list again.
	if counter.lists.Load() == listsBefore {
		t.Errorf("the test's Foo informer did not list again after the outage (it saw %d 410 Gone): its watch was resumed from before the outage, which etcd's compaction should have made impossible",
			counter.expired.Load())
	}
}
