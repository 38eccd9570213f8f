package toycloud

import (
	"fmt"
	"net/netip"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	cloudprovider "k8s.io/cloud-provider"
)

// TestNet2 is 198.51.100.0/24, the second documentation block of RFC 5737
// (TEST-NET-2): the private addresses of the toy cloud's machines. Like the load
// balancers' TestNet1, nothing listens on them.
var TestNet2 = netip.MustParsePrefix("198.51.100.0/24")

// Region is the toy cloud's one region: every machine's Node gets it as its
// topology.kubernetes.io/region label.
const Region = "toy-region-1"

// ProviderIDPrefix starts the provider ID of every machine of the toy cloud:
// "toycloud://" and the machine's name. A Node's spec.providerID says which
// cloud and which machine it is; the cloud-node controller sets it once, when it
// initialises the Node, and it cannot change afterwards.
const ProviderIDPrefix = ProviderName + "://"

// Machine is one machine of the toy cloud, as the cloud config lists it under
// machines. The Node of the same name is that machine's: a kubelet registers its
// Node under the machine's host name.
type Machine struct {
	// Name is the machine's host name and the name of its Node: a DNS subdomain.
	Name string `json:"name"`
	// Address is the machine's private IPv4 address, inside TestNet2; its Node
	// gets it as its InternalIP.
	Address string `json:"address"`
	// Type is the machine's instance type, such as "toy.small": its Node's
	// node.kubernetes.io/instance-type label. Optional.
	Type string `json:"type,omitempty"`
	// Zone is the machine's zone, such as "toy-zone-a": its Node's
	// topology.kubernetes.io/zone label. Optional.
	Zone string `json:"zone,omitempty"`
}

// ProviderID returns the machine's provider ID, ProviderIDPrefix and its name.
func (m Machine) ProviderID() string { return ProviderIDPrefix + m.Name }

// validateMachines checks the cloud config's machines: each with a name that is
// a DNS subdomain (a Node's name), no name twice, and an address inside
// TestNet2. The error names the entry and the field, such as
// "machines[1].address".
func validateMachines(machines []Machine) error {
	seen := map[string]int{}
	for i, m := range machines {
		field := fmt.Sprintf("machines[%d]", i)
		if errs := validation.IsDNS1123Subdomain(m.Name); len(errs) > 0 {
			return fmt.Errorf("%s.name %q is not a Node name: %s", field, m.Name, strings.Join(errs, "; "))
		}
		if j, ok := seen[m.Name]; ok {
			return fmt.Errorf("%s.name %q is machines[%d]'s name too; each machine has a name of its own", field, m.Name, j)
		}
		seen[m.Name] = i
		addr, err := netip.ParseAddr(m.Address)
		if err != nil || !addr.Is4() || !TestNet2.Contains(addr) {
			return fmt.Errorf("%s.address %q is not an IPv4 address inside %s (TEST-NET-2, the toy cloud's machine network), for example 198.51.100.11", field, m.Address, TestNet2)
		}
	}
	return nil
}

// InstancesDeps is what an InstancesV2 implementation may use: the machines of
// the cloud config.
type InstancesDeps struct {
	Machines []Machine
}

// NewInstances makes the cloud's InstancesV2 from its dependencies; main.go's
// instances map holds one per --reconciler value (StubInstances for the others).
type NewInstances func(InstancesDeps) cloudprovider.InstancesV2
