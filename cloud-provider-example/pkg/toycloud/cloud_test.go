package toycloud

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	cloudprovider "k8s.io/cloud-provider"
)

func TestReadConfig(t *testing.T) {
	for _, tc := range []struct {
		name         string
		config       *string // nil: no --cloud-config
		wantPool     string
		wantMachines int
		wantErr      []string
	}{
		{name: "no file: the default pool", wantPool: DefaultPool},
		{name: "an empty file: the default pool", config: new(""), wantPool: DefaultPool},
		{name: "a pool of its own", config: new("pool: 192.0.2.0/30\n"), wantPool: "192.0.2.0/30"},
		{name: "a pool outside TEST-NET-1", config: new("pool: 10.0.0.0/28\n"), wantErr: []string{"pool", "10.0.0.0/28", "192.0.2.0/24"}},
		{name: "an unknown field", config: new("pools: 192.0.2.0/30\n"), wantErr: []string{"pools", "pool:"}},
		{name: "not YAML", config: new("pool: [\n"), wantErr: []string{"cloud config"}},
		{name: "machines", config: new("machines:\n- name: toy-node-1\n  address: 198.51.100.11\n- name: toy-node-2\n  address: 198.51.100.12\n"), wantPool: DefaultPool, wantMachines: 2},
		{name: "a machine outside TEST-NET-2", config: new("machines:\n- name: toy-node-1\n  address: 10.0.0.1\n"), wantErr: []string{"machines[0].address", "10.0.0.1", "198.51.100.0/24"}},
		{name: "a machine without an address", config: new("machines:\n- name: toy-node-1\n"), wantErr: []string{"machines[0].address"}},
		{name: "a machine whose name is no Node name", config: new("machines:\n- name: Toy_Node\n  address: 198.51.100.11\n"), wantErr: []string{"machines[0].name", "Toy_Node"}},
		{name: "two machines of one name", config: new("machines:\n- name: a\n  address: 198.51.100.11\n- name: a\n  address: 198.51.100.12\n"), wantErr: []string{"machines[1].name", "machines[0]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cloud *Cloud
			var err error
			if tc.config == nil {
				cloud, err = New(nil, newStub, newStubInstances)
			} else {
				cloud, err = New(strings.NewReader(*tc.config), newStub, newStubInstances)
			}
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("got pool %s, want an error", cloud.Pool())
				}
				for _, text := range tc.wantErr {
					if !strings.Contains(err.Error(), text) {
						t.Errorf("error %q does not say %q", err, text)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cloud.Pool().String(); got != tc.wantPool {
				t.Errorf("pool = %s, want %s", got, tc.wantPool)
			}
			if got := len(cloud.Machines()); got != tc.wantMachines {
				t.Errorf("%d machines, want %d", got, tc.wantMachines)
			}
		})
	}
}

func newStub(d LoadBalancerDeps) cloudprovider.LoadBalancer { return &StubLoadBalancer{Pool: d.Pool} }

func newStubInstances(d InstancesDeps) cloudprovider.InstancesV2 {
	return &StubInstances{Machines: d.Machines}
}

func TestCloudOffersLoadBalancersAndInstancesOnly(t *testing.T) {
	for name, newLB := range map[string]NewLoadBalancer{
		"reference": func(d LoadBalancerDeps) cloudprovider.LoadBalancer { return NewPoolLoadBalancer(d.Pool, d.Services) },
		"stub":      newStub,
	} {
		t.Run(name, func(t *testing.T) {
			cloud, err := New(nil, newLB, newStubInstances)
			if err != nil {
				t.Fatal(err)
			}
			cloud.SetInformers(informers.NewSharedInformerFactory(fake.NewClientset(), 0))
			// The service controller refuses to start on a false here.
			if lb, ok := cloud.LoadBalancer(); !ok || lb == nil {
				t.Fatalf("LoadBalancer() = %v, %v; want the load balancer and true", lb, ok)
			}
			if _, ok := cloud.Instances(); ok {
				t.Error("Instances() answers true")
			}
			// The cloud-node controller refuses to start on a false here.
			if in, ok := cloud.InstancesV2(); !ok || in == nil {
				t.Errorf("InstancesV2() = %v, %v; want the instances and true", in, ok)
			}
			if _, ok := cloud.Zones(); ok {
				t.Error("Zones() answers true")
			}
			if _, ok := cloud.Clusters(); ok {
				t.Error("Clusters() answers true")
			}
			if _, ok := cloud.Routes(); ok {
				t.Error("Routes() answers true")
			}
			if cloud.ProviderName() != ProviderName || !cloud.HasClusterID() {
				t.Errorf("ProviderName() = %q, HasClusterID() = %v; want %q and true", cloud.ProviderName(), cloud.HasClusterID(), ProviderName)
			}
		})
	}
	if _, err := New(nil, nil, newStubInstances); err == nil {
		t.Error("New with no load balancer gave no error")
	}
	if _, err := New(nil, newStub, nil); err == nil {
		t.Error("New with no instances gave no error")
	}
}

func TestStubLogsAndRefusesButLetsServicesGo(t *testing.T) {
	ctx := context.Background()
	stub := &StubLoadBalancer{Pool: Pool{}}
	s := lbService("a")
	if _, err := stub.EnsureLoadBalancer(ctx, "kubernetes", s, nil); !errors.Is(err, ErrStubNotImplemented) {
		t.Errorf("EnsureLoadBalancer error = %v, want ErrStubNotImplemented", err)
	}
	if err := stub.UpdateLoadBalancer(ctx, "kubernetes", s, nil); !errors.Is(err, ErrStubNotImplemented) {
		t.Errorf("UpdateLoadBalancer error = %v, want ErrStubNotImplemented", err)
	}
	// The cleanup answers must not fail, or the controller could never remove
	// its finalizer and the Service could not be deleted.
	if _, exists, err := stub.GetLoadBalancer(ctx, "kubernetes", s); exists || err != nil {
		t.Errorf("GetLoadBalancer = exists %v, error %v; want false and nil", exists, err)
	}
	if err := stub.EnsureLoadBalancerDeleted(ctx, "kubernetes", s); err != nil {
		t.Errorf("EnsureLoadBalancerDeleted: %v", err)
	}
}
