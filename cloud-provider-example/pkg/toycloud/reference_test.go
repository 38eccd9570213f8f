package toycloud

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/cloud-provider/api"
	"k8s.io/utils/ptr"
)

// lbService returns a Service of type LoadBalancer named name in namespace
// "ns", with UID "uid-<name>" (the load balancer's name derives from it) and one
// TCP port 80.
func lbService(name string, opts ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
		Spec: corev1.ServiceSpec{
			Type:  corev1.ServiceTypeLoadBalancer,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}},
		},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// withStatusIP sets the Service's status to one ingress with ip, as the service
// controller writes it from an earlier manager's answer.
func withStatusIP(ip string) func(*corev1.Service) {
	return func(s *corev1.Service) {
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip}}
	}
}

// withRequestedIP sets spec.loadBalancerIP.
func withRequestedIP(ip string) func(*corev1.Service) {
	return func(s *corev1.Service) { s.Spec.LoadBalancerIP = ip }
}

// withAnnotatedIP sets the AddressAnnotation.
func withAnnotatedIP(ip string) func(*corev1.Service) {
	return func(s *corev1.Service) { s.Annotations = map[string]string{AddressAnnotation: ip} }
}

// lister returns a Service lister over services, as the manager's informer cache
// would hold them.
func lister(t *testing.T, services ...*corev1.Service) corelisters.ServiceLister {
	t.Helper()
	l, _ := serviceCache(t, services...)
	return l
}

// serviceCache returns a Service lister over services and the store behind it,
// in which a test adds, changes and deletes Services as the informer would.
func serviceCache(t *testing.T, services ...*corev1.Service) (corelisters.ServiceLister, cache.Indexer) {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, s := range services {
		if err := indexer.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	return corelisters.NewServiceLister(indexer), indexer
}

func mustPool(t *testing.T, s string) Pool {
	t.Helper()
	p, err := ParsePool(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ensureIP ensures s's load balancer and returns the address of its status, or
// the error.
func ensureIP(lb *PoolLoadBalancer, s *corev1.Service) (string, error) {
	status, err := lb.EnsureLoadBalancer(context.Background(), "kubernetes", s, nil)
	if err != nil {
		return "", err
	}
	if len(status.Ingress) != 1 {
		return "", errors.New("status has no single ingress")
	}
	return status.Ingress[0].IP, nil
}

// step is one event in an allocation scenario: the service controller ensures
// (or, with deleted, deletes) a Service's load balancer, or (gone) the Service
// leaves the informer cache with no call at all; and what must come out. The
// Service of an ensure is put in the cache first, as the controller only asks
// about Services it has read there.
type step struct {
	service *corev1.Service
	deleted bool
	// gone: the Service was deleted while it had no cleanup finalizer, so the
	// controller never asked the cloud to delete its load balancer.
	gone bool
	// wantIP is the address ensure must return; "" with wantErr when it fails.
	wantIP string
	// wantErr is an error the ensure's must wrap; wantText, text its message
	// holds; wantNot, text it must not hold.
	wantErr  error
	wantText []string
	wantNot  []string
}

func TestPoolLoadBalancerAllocates(t *testing.T) {
	a, b, c := lbService("a"), lbService("b"), lbService("c")
	for _, tc := range []struct {
		name  string
		pool  string
		cache []*corev1.Service // what the informer cache holds at the start
		steps []step
	}{
		{
			name:  "each Service gets the lowest free address",
			pool:  "192.0.2.240/28",
			steps: []step{{service: a, wantIP: "192.0.2.240"}, {service: b, wantIP: "192.0.2.241"}},
		},
		{
			name:  "ensuring again keeps the address",
			pool:  "192.0.2.240/28",
			steps: []step{{service: a, wantIP: "192.0.2.240"}, {service: b, wantIP: "192.0.2.241"}, {service: a, wantIP: "192.0.2.240"}},
		},
		{
			name: "a deleted Service's address is released and given to the next",
			pool: "192.0.2.240/28",
			steps: []step{
				{service: a, wantIP: "192.0.2.240"}, {service: b, wantIP: "192.0.2.241"},
				{service: a, deleted: true}, {service: c, wantIP: "192.0.2.240"},
			},
		},
		{
			name:  "deleting a Service that has no load balancer is no error",
			pool:  "192.0.2.240/28",
			steps: []step{{service: a, deleted: true}, {service: b, wantIP: "192.0.2.240"}},
		},
		{
			name: "an exhausted pool refuses the next Service, naming the pool",
			pool: "192.0.2.240/31",
			steps: []step{
				{service: a, wantIP: "192.0.2.240"}, {service: b, wantIP: "192.0.2.241"},
				{service: c, wantErr: ErrPoolExhausted, wantText: []string{"192.0.2.240/31", "all 2 addresses"}},
				{service: a, wantIP: "192.0.2.240"},
			},
		},
		{
			name: "an address is free again once its Service is deleted from an exhausted pool",
			pool: "192.0.2.240/31",
			steps: []step{
				{service: a, wantIP: "192.0.2.240"}, {service: b, wantIP: "192.0.2.241"},
				{service: c, wantErr: ErrPoolExhausted}, {service: b, deleted: true}, {service: c, wantIP: "192.0.2.241"},
			},
		},
		{
			name: "an address asked for outside the pool is refused, naming the pool",
			pool: "192.0.2.240/28",
			steps: []step{
				{service: lbService("a", withRequestedIP("10.0.0.1")), wantErr: ErrOutsidePool, wantText: []string{"spec.loadBalancerIP", "10.0.0.1", "192.0.2.240/28"}},
				{service: lbService("a", withRequestedIP("192.0.2.1")), wantErr: ErrOutsidePool, wantText: []string{"192.0.2.240/28"}},
				{service: lbService("a", withRequestedIP("not-an-ip")), wantErr: ErrOutsidePool, wantText: []string{"not-an-ip"}},
				{service: lbService("a", withAnnotatedIP("10.0.0.2")), wantErr: ErrOutsidePool, wantText: []string{AddressAnnotation, "10.0.0.2", "192.0.2.240/28"}},
				{service: b, wantIP: "192.0.2.240"},
			},
		},
		{
			name: "an address asked for inside the pool is given",
			pool: "192.0.2.240/28",
			steps: []step{
				{service: lbService("a", withRequestedIP("192.0.2.250")), wantIP: "192.0.2.250"},
				{service: b, wantIP: "192.0.2.240"},
			},
		},
		{
			name: "an address asked for with the annotation is given",
			pool: "192.0.2.240/28",
			steps: []step{
				{service: lbService("a", withAnnotatedIP("192.0.2.251")), wantIP: "192.0.2.251"},
				// The same address both ways is one request.
				{service: lbService("b", withAnnotatedIP("192.0.2.252"), withRequestedIP("192.0.2.252")), wantIP: "192.0.2.252"},
			},
		},
		{
			name: "two different addresses asked for are refused, naming both",
			pool: "192.0.2.240/28",
			steps: []step{
				{service: lbService("a", withAnnotatedIP("192.0.2.251"), withRequestedIP("192.0.2.250")), wantText: []string{AddressAnnotation, "192.0.2.251", "spec.loadBalancerIP", "192.0.2.250"}},
			},
		},
		{
			// The holder is named as its user knows it, the Service, not by
			// the load balancer's generated name ("a" and its UID: auida).
			name: "an address asked for that another Service holds is refused, naming the holder",
			pool: "192.0.2.240/28",
			steps: []step{
				{service: a, wantIP: "192.0.2.240"},
				{service: lbService("b", withRequestedIP("192.0.2.240")), wantText: []string{"192.0.2.240", "allocated to Service ns/a"}, wantNot: []string{"auida"}},
			},
		},
		{
			name:  "after a restart, an address asked for that another Service's status shows is refused, naming that Service",
			pool:  "192.0.2.240/28",
			cache: []*corev1.Service{lbService("old", withStatusIP("192.0.2.240"))},
			steps: []step{
				{service: lbService("b", withAnnotatedIP("192.0.2.240")), wantText: []string{"192.0.2.240", "allocated to Service ns/old"}},
			},
		},
		{
			// kubectl replace dropped the finalizer, then the Service was
			// deleted: the controller never calls EnsureLoadBalancerDeleted.
			name: "a Service deleted without the cleanup finalizer gives its address to the next",
			pool: "192.0.2.240/32",
			steps: []step{
				{service: a, wantIP: "192.0.2.240"}, {service: a, gone: true}, {service: b, wantIP: "192.0.2.240"},
			},
		},
		{
			name: "a Service deleted without the finalizer and made again under its name gets an address again",
			pool: "192.0.2.240/32",
			steps: []step{
				{service: a, wantIP: "192.0.2.240"}, {service: a, gone: true},
				{service: lbService("a", func(s *corev1.Service) { s.UID = "uid-a-again" }), wantIP: "192.0.2.240"},
			},
		},
		{
			name: "asking for another address moves the load balancer and frees the old one",
			pool: "192.0.2.240/28",
			steps: []step{
				{service: a, wantIP: "192.0.2.240"},
				{service: lbService("a", withRequestedIP("192.0.2.245")), wantIP: "192.0.2.245"},
				{service: b, wantIP: "192.0.2.240"},
			},
		},
		{
			name:  "after a restart, addresses in other Services' status are not handed out again",
			pool:  "192.0.2.240/28",
			cache: []*corev1.Service{lbService("old1", withStatusIP("192.0.2.240")), lbService("old2", withStatusIP("192.0.2.242"))},
			steps: []step{{service: a, wantIP: "192.0.2.241"}, {service: b, wantIP: "192.0.2.243"}},
		},
		{
			name:  "after a restart, a Service keeps the address in its status",
			pool:  "192.0.2.240/28",
			cache: []*corev1.Service{lbService("a", withStatusIP("192.0.2.247")), lbService("b", withStatusIP("192.0.2.240"))},
			steps: []step{
				{service: lbService("a", withStatusIP("192.0.2.247")), wantIP: "192.0.2.247"},
				{service: lbService("b", withStatusIP("192.0.2.240")), wantIP: "192.0.2.240"},
				{service: c, wantIP: "192.0.2.241"},
			},
		},
		{
			name:  "after a restart, an address outside the pool in a Service's status is not its load balancer",
			pool:  "192.0.2.240/28",
			cache: []*corev1.Service{lbService("a", withStatusIP("198.51.100.7"))},
			steps: []step{{service: lbService("a", withStatusIP("198.51.100.7")), wantIP: "192.0.2.240"}},
		},
		{
			name: "a Service that no longer wants this cloud's load balancer holds no address",
			pool: "192.0.2.240/31",
			cache: []*corev1.Service{
				lbService("clusterip", withStatusIP("192.0.2.240"), func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeClusterIP }),
				lbService("other-class", withStatusIP("192.0.2.241"), func(s *corev1.Service) { s.Spec.LoadBalancerClass = ptr.To("example.com/other") }),
			},
			steps: []step{{service: a, wantIP: "192.0.2.240"}, {service: b, wantIP: "192.0.2.241"}},
		},
		{
			name: "a Service being deleted holds no address in the cache",
			pool: "192.0.2.240/31",
			cache: []*corev1.Service{
				lbService("going", withStatusIP("192.0.2.240"), func(s *corev1.Service) { s.DeletionTimestamp = ptr.To(metav1.Now()) }),
			},
			steps: []step{{service: a, wantIP: "192.0.2.240"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			services, informerCache := serviceCache(t, tc.cache...)
			lb := NewPoolLoadBalancer(mustPool(t, tc.pool), services)
			for i, s := range tc.steps {
				if s.gone {
					if err := informerCache.Delete(s.service); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if s.deleted {
					if err := lb.EnsureLoadBalancerDeleted(context.Background(), "kubernetes", s.service); err != nil {
						t.Fatalf("step %d: deleting %s: %v", i, s.service.Name, err)
					}
					if _, exists, _ := lb.GetLoadBalancer(context.Background(), "kubernetes", s.service); exists {
						t.Fatalf("step %d: %s's load balancer still exists after deletion", i, s.service.Name)
					}
					if err := informerCache.Delete(s.service); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := informerCache.Update(s.service); err != nil {
					t.Fatal(err)
				}
				ip, err := ensureIP(lb, s.service)
				if s.wantErr != nil || len(s.wantText) > 0 {
					if err == nil {
						t.Fatalf("step %d: %s got %s, want an error", i, s.service.Name, ip)
					}
					if s.wantErr != nil && !errors.Is(err, s.wantErr) {
						t.Errorf("step %d: %s: error %q does not wrap %q", i, s.service.Name, err, s.wantErr)
					}
					for _, text := range s.wantText {
						if !strings.Contains(err.Error(), text) {
							t.Errorf("step %d: %s: error %q does not say %q", i, s.service.Name, err, text)
						}
					}
					for _, text := range s.wantNot {
						if strings.Contains(err.Error(), text) {
							t.Errorf("step %d: %s: error %q says %q", i, s.service.Name, err, text)
						}
					}
					continue
				}
				if err != nil {
					t.Fatalf("step %d: %s: %v", i, s.service.Name, err)
				}
				if ip != s.wantIP {
					t.Fatalf("step %d: %s got %s, want %s", i, s.service.Name, ip, s.wantIP)
				}
			}
		})
	}
}

func TestPoolLoadBalancerAsksForAnEarlyRetryWhileAServiceWaitsForAnAddress(t *testing.T) {
	// The service controller retries a failed Service with its backoff, 5 s
	// doubling to 5 min, unless the error carries an api.RetryError: then after
	// its delay. A Service waiting for an address must get one freed within a
	// minute, so the delay is at most half that.
	for _, tc := range []struct {
		name     string
		waiting  *corev1.Service
		wantErr  error
		wantText string
	}{
		{name: "the pool is exhausted", waiting: lbService("b"), wantErr: ErrPoolExhausted, wantText: "192.0.2.240/32"},
		{name: "the address asked for is another Service's", waiting: lbService("b", withAnnotatedIP("192.0.2.240")), wantText: "Service ns/a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := lbService("a")
			lb := NewPoolLoadBalancer(mustPool(t, "192.0.2.240/32"), lister(t, a, tc.waiting))
			if _, err := ensureIP(lb, a); err != nil {
				t.Fatal(err)
			}
			_, err := ensureIP(lb, tc.waiting)
			if err == nil {
				t.Fatal("b got an address; want an error")
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error %q does not wrap %q", err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("error %q does not say %q", err, tc.wantText)
			}
			var retry *api.RetryError
			if !errors.As(err, &retry) {
				t.Fatalf("error %q carries no api.RetryError: the controller would wait its growing backoff, up to 5 minutes", err)
			}
			if d := retry.RetryAfter(); d <= 0 || d > 30*time.Second {
				t.Errorf("the retry comes after %s, want at most 30 s (an address freed reaches the Service within a minute)", d)
			}
		})
	}
}

func TestPoolLoadBalancerStatusHasTheServicePortsAndIPModeVIP(t *testing.T) {
	lb := NewPoolLoadBalancer(mustPool(t, DefaultPool), nil)
	s := lbService("a", func(s *corev1.Service) {
		s.Spec.Ports = []corev1.ServicePort{{Port: 443, Protocol: corev1.ProtocolTCP}, {Port: 53, Protocol: corev1.ProtocolUDP}}
	})
	status, err := lb.EnsureLoadBalancer(context.Background(), "kubernetes", s, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := status.Ingress[0]
	if in.IPMode == nil || *in.IPMode != corev1.LoadBalancerIPModeVIP {
		t.Errorf("ipMode = %v, want VIP (else the API server's default makes every status comparison differ)", in.IPMode)
	}
	want := []corev1.PortStatus{{Port: 443, Protocol: corev1.ProtocolTCP}, {Port: 53, Protocol: corev1.ProtocolUDP}}
	if len(in.Ports) != len(want) || in.Ports[0] != want[0] || in.Ports[1] != want[1] {
		t.Errorf("ports = %v, want %v", in.Ports, want)
	}

	// A change of ports changes the status, and keeps the address.
	s.Spec.Ports = []corev1.ServicePort{{Port: 8443, Protocol: corev1.ProtocolTCP}}
	status, err = lb.EnsureLoadBalancer(context.Background(), "kubernetes", s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := status.Ingress[0]; got.IP != in.IP || len(got.Ports) != 1 || got.Ports[0].Port != 8443 {
		t.Errorf("after the port change: %+v, want %s with port 8443 only", got, in.IP)
	}
}

func TestPoolLoadBalancerGetAndUpdate(t *testing.T) {
	ctx := context.Background()
	lb := NewPoolLoadBalancer(mustPool(t, DefaultPool), nil)
	a := lbService("a")
	if _, exists, err := lb.GetLoadBalancer(ctx, "kubernetes", a); exists || err != nil {
		t.Fatalf("before ensure: exists=%v err=%v, want false and no error", exists, err)
	}
	if err := lb.UpdateLoadBalancer(ctx, "kubernetes", a, nil); err == nil {
		t.Error("updating a load balancer that does not exist gave no error")
	}
	if _, err := ensureIP(lb, a); err != nil {
		t.Fatal(err)
	}
	status, exists, err := lb.GetLoadBalancer(ctx, "kubernetes", a)
	if !exists || err != nil || status.Ingress[0].IP != "192.0.2.240" {
		t.Fatalf("after ensure: %v exists=%v err=%v, want 192.0.2.240", status, exists, err)
	}
	if err := lb.UpdateLoadBalancer(ctx, "kubernetes", a, []*corev1.Node{{}}); err != nil {
		t.Errorf("updating an existing load balancer: %v", err)
	}
	if name := lb.GetLoadBalancerName(ctx, "kubernetes", a); name != "auida" {
		t.Errorf("load balancer name = %q, want upstream's default, \"a\" and the UID without dashes: auida", name)
	}
}

func TestPoolLoadBalancerAfterRestartDeletesWhatItFindsInTheStatus(t *testing.T) {
	// A Service deleted while no manager ran: the new one's memory is empty, the
	// Service's status still shows its address, and the controller asks whether
	// the load balancer exists before it removes its finalizer.
	ctx := context.Background()
	going := lbService("a", withStatusIP("192.0.2.244"), func(s *corev1.Service) { s.DeletionTimestamp = ptr.To(metav1.Now()) })
	lb := NewPoolLoadBalancer(mustPool(t, DefaultPool), lister(t, going))
	if _, exists, _ := lb.GetLoadBalancer(ctx, "kubernetes", going); !exists {
		t.Fatal("the restarted load balancer does not find the address in the Service's status")
	}
	if err := lb.EnsureLoadBalancerDeleted(ctx, "kubernetes", going); err != nil {
		t.Fatal(err)
	}
}

func TestParsePool(t *testing.T) {
	for _, tc := range []struct {
		in       string
		wantSize int
		wantErr  string
	}{
		{in: "192.0.2.240/28", wantSize: 16},
		{in: "192.0.2.0/24", wantSize: 256},
		{in: "192.0.2.7/32", wantSize: 1},
		{in: "192.0.2.241/28", wantErr: "host bits"},
		{in: "10.0.0.0/28", wantErr: "not inside 192.0.2.0/24"},
		{in: "192.0.0.0/16", wantErr: "not inside 192.0.2.0/24"},
		{in: "2001:db8::/120", wantErr: "not inside 192.0.2.0/24"},
		{in: "192.0.2.240", wantErr: "not a prefix"},
		{in: "", wantErr: "not a prefix"},
	} {
		p, err := ParsePool(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParsePool(%q) error = %v, want one saying %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParsePool(%q): %v", tc.in, err)
			continue
		}
		if p.Size() != tc.wantSize || p.String() != tc.in {
			t.Errorf("ParsePool(%q) = %s with %d addresses, want %d", tc.in, p, p.Size(), tc.wantSize)
		}
	}
	if (Pool{}).Contains(netip.MustParseAddr("192.0.2.1")) || (Pool{}).Size() != 0 {
		t.Error("the zero Pool holds an address")
	}
}
