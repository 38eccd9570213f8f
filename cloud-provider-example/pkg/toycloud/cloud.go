// Package toycloud is lesson 5's cloud provider: a cloud with no machines and no
// network of its own, whose one service is load balancers. It implements
// k8s.io/cloud-provider's Interface (cloud.go there) for the cloud-controller-manager
// that main.go builds from k8s.io/cloud-provider/app, and answers "not supported"
// for everything but LoadBalancer, so of the manager's controllers only the
// service controller (k8s.io/cloud-provider controllers/service) has work to do.
//
// The load balancer is the part a learner writes, chosen by --reconciler as the
// Reconciler is in the other tiers: PoolLoadBalancer is the reference (an address
// from a small pool in 192.0.2.0/24 for each Service of type LoadBalancer, written
// to its status), StubLoadBalancer the starting point (logs what it is asked).
package toycloud

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	"sigs.k8s.io/yaml"
)

// ProviderName is the name the toy cloud registers under with
// cloudprovider.RegisterCloudProvider, and what --cloud-provider takes.
const ProviderName = "toycloud"

// Config is the toy cloud's configuration file, the one --cloud-config names
// (cloudprovider.InitCloudProvider hands it to the provider's factory):
//
//	pool: 192.0.2.240/28
type Config struct {
	// Pool is the prefix load-balancer addresses come from, inside 192.0.2.0/24
	// (ParsePool); empty: DefaultPool.
	Pool string `json:"pool,omitempty"`
}

// ReadConfig reads a Config from r; a nil r (no --cloud-config) is the default
// configuration. The error names the field at fault: an unknown field, or a pool
// ParsePool refuses.
func ReadConfig(r io.Reader) (Config, Pool, error) {
	var c Config
	if r != nil {
		data, err := io.ReadAll(r)
		if err != nil {
			return Config{}, Pool{}, fmt.Errorf("reading the cloud config: %w", err)
		}
		if err := yaml.UnmarshalStrict(bytes.TrimSpace(data), &c); err != nil {
			return Config{}, Pool{}, fmt.Errorf("the cloud config: %w (it holds one field, pool: %s)", err, DefaultPool)
		}
	}
	if c.Pool == "" {
		c.Pool = DefaultPool
	}
	pool, err := ParsePool(c.Pool)
	if err != nil {
		return Config{}, Pool{}, fmt.Errorf("the cloud config's pool: %w", err)
	}
	return c, pool, nil
}

// LoadBalancerDeps is what a load-balancer implementation may use: the pool of
// addresses, and a lister of the Services in the manager's informer cache (nil
// until the manager has handed the cloud its informers; see Cloud.SetInformers).
type LoadBalancerDeps struct {
	Pool     Pool
	Services corelisters.ServiceLister
}

// NewLoadBalancer makes the cloud's load balancer from its dependencies; main.go's
// reconcilers map holds one per --reconciler value.
type NewLoadBalancer func(LoadBalancerDeps) cloudprovider.LoadBalancer

// Cloud is the toy cloud as the cloud-controller-manager sees it
// (cloudprovider.Interface, plus cloudprovider.InformerUser so that it reads the
// manager's informer cache instead of starting a watch of its own).
type Cloud struct {
	pool     Pool
	newLB    NewLoadBalancer
	services corelisters.ServiceLister

	lbOnce sync.Once
	lb     cloudprovider.LoadBalancer
}

var (
	_ cloudprovider.Interface    = &Cloud{}
	_ cloudprovider.InformerUser = &Cloud{}
)

// New returns the toy cloud configured by config (nil: the defaults, see
// ReadConfig), whose load balancer newLB makes. It is the body of the factory
// main.go registers with cloudprovider.RegisterCloudProvider. The error is
// ReadConfig's.
func New(config io.Reader, newLB NewLoadBalancer) (*Cloud, error) {
	if newLB == nil {
		return nil, fmt.Errorf("toycloud.New: no load balancer to run (newLB is nil)")
	}
	_, pool, err := ReadConfig(config)
	if err != nil {
		return nil, err
	}
	return &Cloud{pool: pool, newLB: newLB}, nil
}

// Pool returns the pool the cloud hands addresses out of.
func (c *Cloud) Pool() Pool { return c.pool }

// Initialize is called by the manager before any controller starts. The toy cloud
// has no client to build and nothing to start.
func (c *Cloud) Initialize(cloudprovider.ControllerClientBuilder, <-chan struct{}) {}

// SetInformers is called by the manager (startControllers in
// k8s.io/cloud-provider app/controllermanager.go) after Initialize and before the
// service controller asks for LoadBalancer: asking the factory for the Service
// lister here registers the same informer the service controller uses, which the
// manager starts and the controller waits for, so the load balancer reads what
// the controller reads.
func (c *Cloud) SetInformers(factory informers.SharedInformerFactory) {
	c.services = factory.Core().V1().Services().Lister()
}

// LoadBalancer returns the cloud's load balancer, made on the first call, and
// true. The service controller calls it once, in New: a false makes the
// controller refuse to start (init in controllers/service/controller.go), so even
// the stub answers true.
func (c *Cloud) LoadBalancer() (cloudprovider.LoadBalancer, bool) {
	c.lbOnce.Do(func() {
		c.lb = c.newLB(LoadBalancerDeps{Pool: c.pool, Services: c.services})
	})
	return c.lb, true
}

// Instances is not supported: the toy cloud has no machines.
func (c *Cloud) Instances() (cloudprovider.Instances, bool) { return nil, false }

// InstancesV2 is not supported: the toy cloud has no machines.
func (c *Cloud) InstancesV2() (cloudprovider.InstancesV2, bool) { return nil, false }

// Zones is not supported (deprecated upstream in favour of InstancesV2).
func (c *Cloud) Zones() (cloudprovider.Zones, bool) { return nil, false }

// Clusters is not supported.
func (c *Cloud) Clusters() (cloudprovider.Clusters, bool) { return nil, false }

// Routes is not supported: the toy cloud has no network to route Pod traffic on.
func (c *Cloud) Routes() (cloudprovider.Routes, bool) { return nil, false }

// ProviderName returns ProviderName.
func (c *Cloud) ProviderName() string { return ProviderName }

// HasClusterID returns true: the toy cloud serves one cluster, so its resources
// need no cluster tag (a false makes the manager refuse to start unless
// --allow-untagged-cloud is set).
func (c *Cloud) HasClusterID() bool { return true }
