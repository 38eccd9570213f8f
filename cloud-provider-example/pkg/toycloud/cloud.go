// Package toycloud is lesson 5's cloud provider: a cloud with no network of its
// own, whose services are load balancers and a list of machines. It implements
// k8s.io/cloud-provider's Interface (cloud.go there) for the cloud-controller-manager
// that main.go builds from k8s.io/cloud-provider/app, and answers "not supported"
// for everything but LoadBalancer and InstancesV2, so of the manager's
// controllers only the service controller (k8s.io/cloud-provider
// controllers/service) and the cloud-node controller (controllers/node) have
// work to do.
//
// The load balancer is the part a learner writes, chosen by --reconciler as the
// Reconciler is in the other tiers: PoolLoadBalancer is the reference (an address
// from a small pool in 192.0.2.0/24 for each Service of type LoadBalancer, written
// to its status), StubLoadBalancer the starting point (logs what it is asked).
// The machines the cloud config lists are the second part (lesson 5's second
// exercise, for the cloud-node controller, off unless --controllers names it):
// MachineInstances is the reference, StubInstances the starting point.
package toycloud

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	cloudprovider "k8s.io/cloud-provider"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"
)

// ProviderName is the name the toy cloud registers under with
// cloudprovider.RegisterCloudProvider, and what --cloud-provider takes.
const ProviderName = "toycloud"

// Config is the toy cloud's configuration file, the one --cloud-config names
// (cloudprovider.InitCloudProvider hands it to the provider's factory), such as
// config/examples/cloud-config.yaml:
//
//	pool: 192.0.2.240/28
//	machines:
//	- name: toy-node-1
//	  address: 198.51.100.11
//	  type: toy.small
//	  zone: toy-zone-a
type Config struct {
	// Pool is the prefix load-balancer addresses come from, inside 192.0.2.0/24
	// (ParsePool); empty: DefaultPool.
	Pool string `json:"pool,omitempty"`
	// Machines are the cloud's machines, whose Nodes the cloud-node controller
	// initialises; none by default.
	Machines []Machine `json:"machines,omitempty"`
}

// ReadConfig reads a Config from r; a nil r (no --cloud-config) is the default
// configuration. The error names the field at fault: an unknown field, a pool
// ParsePool refuses, or a machine validateMachines refuses.
func ReadConfig(r io.Reader) (Config, Pool, error) {
	var c Config
	if r != nil {
		data, err := io.ReadAll(r)
		if err != nil {
			return Config{}, Pool{}, fmt.Errorf("reading the cloud config: %w", err)
		}
		if err := yaml.UnmarshalStrict(bytes.TrimSpace(data), &c); err != nil {
			return Config{}, Pool{}, fmt.Errorf("the cloud config: %w (its fields are pool, such as pool: %s, and machines)", err, DefaultPool)
		}
	}
	if c.Pool == "" {
		c.Pool = DefaultPool
	}
	pool, err := ParsePool(c.Pool)
	if err != nil {
		return Config{}, Pool{}, fmt.Errorf("the cloud config's pool: %w", err)
	}
	if err := validateMachines(c.Machines); err != nil {
		return Config{}, Pool{}, fmt.Errorf("the cloud config's %w", err)
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
	pool         Pool
	machines     []Machine
	newLB        NewLoadBalancer
	newInstances NewInstances
	services     corelisters.ServiceLister
	// keeper puts the cleanup finalizer back on a Service that lost it; nil
	// until Initialize has a client.
	keeper *finalizerKeeper

	lbOnce sync.Once
	lb     cloudprovider.LoadBalancer

	instancesOnce sync.Once
	instances     cloudprovider.InstancesV2
}

var (
	_ cloudprovider.Interface    = &Cloud{}
	_ cloudprovider.InformerUser = &Cloud{}
)

// New returns the toy cloud configured by config (nil: the defaults, see
// ReadConfig), whose load balancer newLB makes and whose answers about machines
// newInstances makes. It is the body of the factory main.go registers with
// cloudprovider.RegisterCloudProvider. The error is ReadConfig's, or says which
// of the two is missing.
func New(config io.Reader, newLB NewLoadBalancer, newInstances NewInstances) (*Cloud, error) {
	if newLB == nil {
		return nil, fmt.Errorf("toycloud.New: no load balancer to run (newLB is nil)")
	}
	if newInstances == nil {
		return nil, fmt.Errorf("toycloud.New: no instances to run (newInstances is nil)")
	}
	c, pool, err := ReadConfig(config)
	if err != nil {
		return nil, err
	}
	return &Cloud{pool: pool, machines: c.Machines, newLB: newLB, newInstances: newInstances}, nil
}

// Pool returns the pool the cloud hands addresses out of.
func (c *Cloud) Pool() Pool { return c.pool }

// Machines returns the machines of the cloud config.
func (c *Cloud) Machines() []Machine { return c.machines }

// Initialize is called by the manager before any controller starts, with the
// manager's clients and a channel closed when it stops. The toy cloud starts
// one small controller of its own there, which puts the service controller's
// cleanup finalizer back on a Service that lost it (see finalizerKeeper); it
// gets the Services in SetInformers.
func (c *Cloud) Initialize(clients cloudprovider.ControllerClientBuilder, stop <-chan struct{}) {
	client, err := clients.Client(ProviderName)
	if err != nil {
		klog.ErrorS(err, "The toy cloud has no client: a Service that loses its load balancer's cleanup finalizer does not get it back")
		return
	}
	c.keeper = startFinalizerKeeper(wait.ContextForChannel(stop), client)
}

// SetInformers is called by the manager (startControllers in
// k8s.io/cloud-provider app/controllermanager.go) after Initialize and before the
// service controller asks for LoadBalancer: asking the factory for the Service
// lister here registers the same informer the service controller uses, which the
// manager starts and the controller waits for, so the load balancer reads what
// the controller reads. The finalizer keeper watches the same informer.
func (c *Cloud) SetInformers(factory informers.SharedInformerFactory) {
	services := factory.Core().V1().Services()
	c.services = services.Lister()
	if c.keeper != nil {
		if err := c.keeper.watch(services); err != nil {
			klog.ErrorS(err, "The toy cloud cannot watch Services: a Service that loses its load balancer's cleanup finalizer does not get it back")
		}
	}
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

// Instances is not supported: InstancesV2 replaces it.
func (c *Cloud) Instances() (cloudprovider.Instances, bool) { return nil, false }

// InstancesV2 returns the cloud's answers about machines, made on the first
// call, and true. The cloud-node controller asks for them when it starts (a
// false from both this and Instances makes it refuse to start), then asks them
// about every Node; the service controller never does.
func (c *Cloud) InstancesV2() (cloudprovider.InstancesV2, bool) {
	c.instancesOnce.Do(func() {
		c.instances = c.newInstances(InstancesDeps{Machines: c.machines})
	})
	return c.instances, true
}

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
