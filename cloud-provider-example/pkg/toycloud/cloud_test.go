package toycloud

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	cloudprovider "k8s.io/cloud-provider"
	servicehelper "k8s.io/cloud-provider/service/helpers"
	"k8s.io/utils/ptr"
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

// clientsOf is a cloudprovider.ControllerClientBuilder that hands out one
// clientset, as the manager's builder hands out clients of its kubeconfig.
type clientsOf struct{ client kubernetes.Interface }

func (c clientsOf) Config(string) (*rest.Config, error)         { return &rest.Config{}, nil }
func (c clientsOf) ConfigOrDie(string) *rest.Config             { return &rest.Config{} }
func (c clientsOf) Client(string) (kubernetes.Interface, error) { return c.client, nil }
func (c clientsOf) ClientOrDie(string) kubernetes.Interface     { return c.client }

// withFinalizer gives the Service the service controller's cleanup finalizer.
func withFinalizer(s *corev1.Service) {
	s.Finalizers = append(s.Finalizers, servicehelper.LoadBalancerCleanupFinalizer)
}

func TestCloudPutsTheCleanupFinalizerBack(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Each Service had the finalizer and an address; then each is written
	// without the finalizer. Only web, which still wants its load balancer,
	// gets it back.
	web := lbService("web", withStatusIP("192.0.2.240"), withFinalizer)
	internal := lbService("internal", withStatusIP("192.0.2.241"), withFinalizer)
	going := lbService("going", withStatusIP("192.0.2.242"), withFinalizer, func(s *corev1.Service) {
		s.Finalizers = append(s.Finalizers, "example.com/hold")
		s.DeletionTimestamp = ptr.To(metav1.Now())
	})
	client := fake.NewClientset(web, internal, going)
	cloud, err := New(nil, func(d LoadBalancerDeps) cloudprovider.LoadBalancer { return NewPoolLoadBalancer(d.Pool, d.Services) }, newStubInstances)
	if err != nil {
		t.Fatal(err)
	}
	cloud.Initialize(clientsOf{client}, ctx.Done())
	factory := informers.NewSharedInformerFactory(client, 0)
	cloud.SetInformers(factory)
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())

	// What the controller does when a Service becomes ClusterIP, and what
	// a user does to a Service held by a finalizer of their own: neither is
	// undone. Then kubectl replace of web with its manifest, which has no
	// finalizers. The keeper handles them in this order.
	internal = internal.DeepCopy()
	internal.Spec.Type, internal.Finalizers = corev1.ServiceTypeClusterIP, nil
	going = going.DeepCopy()
	going.Finalizers = []string{"example.com/hold"}
	replaced := lbService("web", withStatusIP("192.0.2.240"))
	for _, s := range []*corev1.Service{internal, going, replaced} {
		if _, err := client.CoreV1().Services("ns").Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		s, err := client.CoreV1().Services("ns").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && servicehelper.HasLBFinalizer(s), nil
	})
	if err != nil {
		t.Fatal("web, replaced without the cleanup finalizer, did not get it back")
	}
	for _, name := range []string{"internal", "going"} {
		s, err := client.CoreV1().Services("ns").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if servicehelper.HasLBFinalizer(s) {
			t.Errorf("%s got the cleanup finalizer back: %v", name, s.Finalizers)
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		events, err := client.CoreV1().Events("ns").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == "web" && e.Reason == "RestoredFinalizer" && strings.Contains(e.Message, "192.0.2.240") {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Error("no RestoredFinalizer event on web naming its address")
	}
}
