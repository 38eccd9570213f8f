package toycloud

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/cloud-provider/api"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// ErrPoolExhausted is wrapped by EnsureLoadBalancer's error when every address of
// the pool is allocated; the message names the pool.
var ErrPoolExhausted = errors.New("no free address in the pool")

// ExhaustedRetryDelay is how soon the service controller asks again for a
// Service that waits for an address: the pool had none free, or the address it
// asks for is another Service's. EnsureLoadBalancer's error then carries an
// api.RetryError with this delay, which the controller waits instead of its
// backoff (5 s doubling to 5 min per Service; processNextServiceItem in
// k8s.io/cloud-provider controllers/service/controller.go): the controller is
// never told that an address was freed, so a Service that has waited for long
// would otherwise get it minutes late. Each waiting Service costs one attempt
// and its events per delay.
const ExhaustedRetryDelay = 30 * time.Second

// ErrOutsidePool is wrapped by EnsureLoadBalancer's error when a Service asks for
// an address (spec.loadBalancerIP) the pool does not hold; the message names the
// address and the pool.
var ErrOutsidePool = errors.New("the address is outside the pool")

// PoolLoadBalancer is the reference load balancer (--reconciler=reference), an
// implementation of cloudprovider.LoadBalancer (k8s.io/cloud-provider cloud.go):
// each Service the service controller asks for gets one address of the pool,
// written to its status.loadBalancer.ingress with the Service's ports.
//
// Where the allocations live: in memory (allocated) while the manager runs, and
// in the Services' own status, which the service controller writes from what
// EnsureLoadBalancer returns. A restarted manager has an empty memory and learns
// the addresses again from the status of the Services in its informer cache
// (Services): an address some other Service of type LoadBalancer shows is never
// handed out, and a Service showing an address of the pool keeps it. So nothing
// is allocated twice, and no store other than the API server is needed.
//
// The memory is kept true against the Services that exist: before it hands out
// an address, EnsureLoadBalancer releases every allocation whose Service the
// cache no longer holds (releaseGone). A Service deleted after its cleanup
// finalizer was removed (kubectl replace with a manifest that lacks it, say)
// goes at once, and the controller, which has no delete handler, never calls
// EnsureLoadBalancerDeleted for it.
//
// Build it with NewPoolLoadBalancer; it is safe for the service controller's
// concurrent workers (--concurrent-service-syncs).
type PoolLoadBalancer struct {
	pool Pool
	// services reads the manager's informer cache; nil means no Service is known
	// but the ones asked about (unit tests, or a manager without informers).
	services corelisters.ServiceLister

	mu sync.Mutex
	// allocated maps a load balancer's name (GetLoadBalancerName) to its
	// address and the Service it is for.
	allocated map[string]allocation
}

// allocation is one address in memory and the Service it was allocated for: its
// namespace/name, which messages name (the load balancer's own name is "a" and
// a UID, which tells a user nothing), and its UID, which tells it from a Service
// made again under the same name.
type allocation struct {
	addr    netip.Addr
	service klog.ObjectRef
	uid     types.UID
}

var _ cloudprovider.LoadBalancer = &PoolLoadBalancer{}

// NewPoolLoadBalancer returns a PoolLoadBalancer handing out pool's addresses,
// reading earlier allocations from the Services services lists (nil: none).
func NewPoolLoadBalancer(pool Pool, services corelisters.ServiceLister) *PoolLoadBalancer {
	return &PoolLoadBalancer{pool: pool, services: services, allocated: map[string]allocation{}}
}

// GetLoadBalancerName returns the name the toy cloud knows a Service's load
// balancer by: upstream's default, "a" and the Service's UID without dashes, 32
// characters at most (cloudprovider.DefaultLoadBalancerName), so a Service
// deleted and created again under the same name gets a new load balancer.
func (lb *PoolLoadBalancer) GetLoadBalancerName(_ context.Context, _ string, service *corev1.Service) string {
	return cloudprovider.DefaultLoadBalancerName(service)
}

// GetLoadBalancer reports whether the Service has a load balancer (an address of
// the pool, in memory or, after a restart, in its status) and its status. It
// never fails.
func (lb *PoolLoadBalancer) GetLoadBalancer(ctx context.Context, clusterName string, service *corev1.Service) (*corev1.LoadBalancerStatus, bool, error) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	addr, ok := lb.addressOf(lb.GetLoadBalancerName(ctx, clusterName, service), service)
	if !ok {
		return nil, false, nil
	}
	return statusFor(addr, service), true, nil
}

// EnsureLoadBalancer gives the Service an address and returns the status the
// service controller writes: the address with the Service's ports. It is called
// for a new Service of type LoadBalancer, after a change of its ports,
// annotations or spec.loadBalancerIP, and again for every such Service when the
// manager starts; an address the Service has already keeps it. A Service asks
// for an address with the AddressAnnotation, or with spec.loadBalancerIP
// (deprecated upstream since Kubernetes 1.24 in favour of such annotations; see
// requestedAddress). The error wraps ErrOutsidePool when the address asked for
// is not in the pool (or not an address), and ErrPoolExhausted
// when no address is free; both name the pool, and the service controller turns
// them into a Warning event (SyncLoadBalancerFailed). It retries the first with
// its backoff; a Service that waits for an address (none free, or the one it
// asks for held by another Service, which the error names) after
// ExhaustedRetryDelay.
func (lb *PoolLoadBalancer) EnsureLoadBalancer(ctx context.Context, clusterName string, service *corev1.Service, nodes []*corev1.Node) (*corev1.LoadBalancerStatus, error) {
	logger := klog.FromContext(ctx)
	name := lb.GetLoadBalancerName(ctx, clusterName, service)

	// 1. An address asked for must be one of the pool's, before anything is held.
	field, ip, err := requestedAddress(service)
	if err != nil {
		return nil, err
	}
	var requested netip.Addr
	if ip != "" {
		addr, err := netip.ParseAddr(ip)
		if err != nil || !lb.pool.Contains(addr) {
			return nil, fmt.Errorf("%s %q: %w %s (%d addresses)", field, ip, ErrOutsidePool, lb.pool, lb.pool.Size())
		}
		requested = addr
	}

	lb.mu.Lock()
	defer lb.mu.Unlock()

	// 2. What memory holds for Services that are gone is free again.
	lb.releaseGone(logger)

	// 3. A load balancer that has its address already keeps it, unless the
	// Service now asks for another one.
	current, has := lb.addressOf(name, service)
	if has && (!requested.IsValid() || requested == current) {
		lb.allocated[name] = allocation{addr: current, service: klog.KObj(service), uid: service.UID}
		logger.V(2).Info("Load balancer is up to date", "service", klog.KObj(service), "loadBalancer", name, "address", current, "nodes", len(nodes))
		return statusFor(current, service), nil
	}

	// 4. Otherwise take the address asked for, or the lowest free one.
	inUse := lb.inUse(name)
	var addr netip.Addr
	switch {
	case requested.IsValid() && inUse[requested] != "":
		err := fmt.Errorf("%s %s of the pool %s is allocated to %s already (tried again in %s)", field, requested, lb.pool, inUse[requested], ExhaustedRetryDelay)
		return nil, retryAfter(err, ExhaustedRetryDelay)
	case requested.IsValid():
		addr = requested
	default:
		var ok bool
		if addr, ok = lb.pool.First(func(a netip.Addr) bool { return inUse[a] == "" }); !ok {
			err := fmt.Errorf("%w %s: all %d addresses are allocated (delete a Service of type LoadBalancer to free one; tried again in %s)", ErrPoolExhausted, lb.pool, lb.pool.Size(), ExhaustedRetryDelay)
			return nil, retryAfter(err, ExhaustedRetryDelay)
		}
	}
	lb.allocated[name] = allocation{addr: addr, service: klog.KObj(service), uid: service.UID}
	if has {
		logger.Info("Moved load balancer to the address asked for", "service", klog.KObj(service), "loadBalancer", name, "from", current, "to", addr)
	} else {
		logger.Info("Allocated address", "service", klog.KObj(service), "loadBalancer", name, "address", addr, "pool", lb.pool)
	}
	return statusFor(addr, service), nil
}

// AddressAnnotation is the annotation with which a Service asks the toy cloud
// for one address of the pool, such as "192.0.2.250": what upstream advises
// clouds to offer instead of spec.loadBalancerIP, which every cloud read its own
// way.
const AddressAnnotation = "toycloud.controller-kit.dev/load-balancer-ip"

// requestedAddress returns the address the Service asks for and where it asks
// ("" when it asks for none): the AddressAnnotation, else spec.loadBalancerIP.
// The error names both when they ask for different addresses.
func requestedAddress(service *corev1.Service) (field, ip string, err error) {
	annotation, spec := service.Annotations[AddressAnnotation], service.Spec.LoadBalancerIP
	switch {
	case annotation != "" && spec != "" && annotation != spec:
		return "", "", fmt.Errorf("the annotation %s asks for %q and spec.loadBalancerIP for %q: ask for one address, with the annotation (spec.loadBalancerIP is deprecated)", AddressAnnotation, annotation, spec)
	case annotation != "":
		return "metadata.annotations[" + AddressAnnotation + "]", annotation, nil
	case spec != "":
		return "spec.loadBalancerIP", spec, nil
	}
	return "", "", nil
}

// UpdateLoadBalancer is called when the set of nodes changes. The toy cloud's
// load balancers send traffic nowhere, so there is nothing to change; it fails
// only when the Service has no load balancer to update.
func (lb *PoolLoadBalancer) UpdateLoadBalancer(ctx context.Context, clusterName string, service *corev1.Service, nodes []*corev1.Node) error {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	name := lb.GetLoadBalancerName(ctx, clusterName, service)
	if _, ok := lb.addressOf(name, service); !ok {
		return fmt.Errorf("service %s has no load balancer %s to update", klog.KObj(service), name)
	}
	klog.FromContext(ctx).V(2).Info("Nodes changed; nothing to update", "service", klog.KObj(service), "loadBalancer", name, "nodes", len(nodes))
	return nil
}

// EnsureLoadBalancerDeleted releases the Service's address, if it has one: the
// Service was deleted or is no longer of type LoadBalancer. A load balancer that
// does not exist is no error.
func (lb *PoolLoadBalancer) EnsureLoadBalancerDeleted(ctx context.Context, clusterName string, service *corev1.Service) error {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	name := lb.GetLoadBalancerName(ctx, clusterName, service)
	addr, ok := lb.addressOf(name, service)
	if !ok {
		return nil
	}
	delete(lb.allocated, name)
	klog.FromContext(ctx).Info("Released address", "service", klog.KObj(service), "loadBalancer", name, "address", addr)
	return nil
}

// releaseGone releases each allocation whose Service the informer cache no
// longer holds, or holds under another UID (deleted, then made again under the
// same name): that Service went without the service controller asking for its
// load balancer to be deleted. Without a lister (unit tests) nothing is known to
// be gone. Call with lb.mu held.
func (lb *PoolLoadBalancer) releaseGone(logger klog.Logger) {
	if lb.services == nil {
		return
	}
	for name, a := range lb.allocated {
		s, err := lb.services.Services(a.service.Namespace).Get(a.service.Name)
		if err == nil && s.UID == a.uid {
			continue
		}
		if err != nil && !apierrors.IsNotFound(err) {
			// A lister reads a local cache and fails only with NotFound; keep
			// the allocation if it ever did.
			continue
		}
		delete(lb.allocated, name)
		logger.Info("Released address: its Service is gone", "service", a.service, "uid", a.uid, "loadBalancer", name, "address", a.addr)
	}
}

// retryError is an error the service controller retries after a delay of the
// cloud's choosing: its message is err's, and it wraps err (so errors.Is finds
// err's sentinel) and an api.RetryError with the delay, which is what the
// controller looks for (errors.As in processNextServiceItem).
type retryError struct {
	err   error
	retry *api.RetryError
}

// retryAfter returns err marked for a retry after delay (see retryError).
func retryAfter(err error, delay time.Duration) error {
	return &retryError{err: err, retry: api.NewRetryError(err.Error(), delay)}
}

// Error returns err's message.
func (e *retryError) Error() string { return e.err.Error() }

// Unwrap returns err and the api.RetryError, for errors.Is and errors.As.
func (e *retryError) Unwrap() []error { return []error{e.err, e.retry} }

// addressOf returns the address of the load balancer called name: the one in
// memory, else (after a restart) the first address of the pool in the Service's
// status that no other load balancer holds. Call with lb.mu held.
func (lb *PoolLoadBalancer) addressOf(name string, service *corev1.Service) (netip.Addr, bool) {
	if a, ok := lb.allocated[name]; ok {
		return a.addr, true
	}
	inUse := lb.inUse(name)
	for _, addr := range statusAddresses(service) {
		if lb.pool.Contains(addr) && inUse[addr] == "" {
			return addr, true
		}
	}
	return netip.Addr{}, false
}

// inUse returns the addresses held by load balancers other than the one called
// except, each with the Service that holds it ("Service namespace/name", as
// messages name it): the ones in memory, and the pool addresses in the status
// of every other Service that wants a load balancer of this cloud and is not
// being deleted (what a restarted manager knows before its memory fills again).
// Call with lb.mu held.
func (lb *PoolLoadBalancer) inUse(except string) map[netip.Addr]string {
	held := map[netip.Addr]string{}
	for name, a := range lb.allocated {
		if name != except {
			held[a.addr] = "Service " + a.service.String()
		}
	}
	if lb.services == nil {
		return held
	}
	services, err := lb.services.List(labels.Everything())
	if err != nil {
		// A lister reads a local cache and does not fail; if it ever did, the
		// addresses in memory would still be honoured.
		return held
	}
	for _, s := range services {
		if !wantsLoadBalancer(s) || s.DeletionTimestamp != nil || cloudprovider.DefaultLoadBalancerName(s) == except {
			continue
		}
		for _, addr := range statusAddresses(s) {
			if lb.pool.Contains(addr) && held[addr] == "" {
				held[addr] = "Service " + klog.KObj(s).String()
			}
		}
	}
	return held
}

// wantsLoadBalancer reports whether the service controller asks this cloud for
// the Service's load balancer: type LoadBalancer and no spec.loadBalancerClass
// (a class means another implementation's; the controller skips those, see
// wantsLoadBalancer in controllers/service/controller.go).
func wantsLoadBalancer(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.LoadBalancerClass == nil
}

// statusAddresses returns the IP addresses in a Service's
// status.loadBalancer.ingress, in order, skipping what does not parse.
func statusAddresses(s *corev1.Service) []netip.Addr {
	var addrs []netip.Addr
	for _, in := range s.Status.LoadBalancer.Ingress {
		if addr, err := netip.ParseAddr(in.IP); err == nil {
			addrs = append(addrs, addr)
		}
	}
	return addrs
}

// statusFor returns the load-balancer status of a Service given addr: one ingress
// with the address, ipMode VIP (what the API server would default it to, set here
// so the status the controller compares never differs from the stored one) and
// the Service's ports, in the Service's order.
func statusFor(addr netip.Addr, service *corev1.Service) *corev1.LoadBalancerStatus {
	ports := make([]corev1.PortStatus, 0, len(service.Spec.Ports))
	for _, p := range service.Spec.Ports {
		ports = append(ports, corev1.PortStatus{Port: p.Port, Protocol: p.Protocol})
	}
	return &corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{
		IP:     addr.String(),
		IPMode: ptr.To(corev1.LoadBalancerIPModeVIP),
		Ports:  ports,
	}}}
}
