/*
Copyright 2026 The capo-multiaz Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package compute

import (
	"context"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// names resolves every reference to "<kind>:<its ID or filter name>", without a cloud.
type names struct{}

func (names) ResolveNetworkParam(_ context.Context, p *infrav1.NetworkParam, _ *field.Path) (*networks.Network, error) {
	return &networks.Network{ID: "net:" + ptr.Deref(p.ID, "")}, nil
}

func (names) ResolveSubnet(_ context.Context, p *infrav1.SubnetParam, networkID string, _ *field.Path) (*subnets.Subnet, error) {
	return &subnets.Subnet{ID: "subnet:" + ptr.Deref(p.ID, "") + "@" + networkID}, nil
}

func (names) ResolveSecurityGroup(_ context.Context, p *infrav1.SecurityGroupParam, _ *field.Path) (string, error) {
	return "sg:" + ptr.Deref(p.ID, ""), nil
}

func TestResolvePorts(t *testing.T) {
	machine := func(spec infrav1.OpenStackMachineSpec) *infrav1.OpenStackMachine {
		return &infrav1.OpenStackMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m"}, Spec: spec}
	}
	zoneSubnet := &infrav1.ZoneMachineSubnetStatus{AvailabilityZone: "az1", Network: infrav1.NetworkStatus{ID: "zone-net"}, Subnet: infrav1.Subnet{ID: "zone-sub"}}
	for _, tc := range []struct {
		name    string
		request PortsRequest
		check   func(Gomega, []PortSpec)
		err     string
	}{
		{name: "no ports in the spec: one on the cluster network, the managed group and the machine's",
			request: PortsRequest{Machine: machine(infrav1.OpenStackMachineSpec{SecurityGroups: []infrav1.SecurityGroupParam{{ID: ptr.To("extra")}}, Tags: []string{"t"}}),
				ManagedGroupID: "managed", ClusterNetworkID: "cluster-net"},
			check: func(g Gomega, got []PortSpec) {
				g.Expect(got).To(HaveLen(1))
				g.Expect(got[0].Name).To(Equal("m-0"))
				g.Expect(got[0].NetworkID).To(Equal("cluster-net"))
				g.Expect(got[0].SecurityGroupIDs).To(Equal([]string{"managed", "sg:extra"}))
				g.Expect(got[0].Tags).To(Equal([]string{"t"}))
			}},
		{name: "the primary subnet: the default port gets its address there, a port with fixed IPs keeps them",
			request: PortsRequest{Machine: machine(infrav1.OpenStackMachineSpec{Ports: []infrav1.PortOpts{{},
				{FixedIPs: []infrav1.FixedIP{{IPAddress: ptr.To("10.6.0.9")}}}}}), ClusterNetworkID: "cluster-net", ClusterSubnetID: "primary"},
			check: func(g Gomega, got []PortSpec) {
				g.Expect(got[0].NetworkID).To(Equal("cluster-net"))
				g.Expect(got[0].FixedIPs).To(Equal([]ports.IP{{SubnetID: "primary"}}))
				g.Expect(got[1].FixedIPs).To(Equal([]ports.IP{{IPAddress: "10.6.0.9"}}))
			}},
		{name: "the zone's machine subnet",
			request: PortsRequest{Machine: machine(infrav1.OpenStackMachineSpec{}), ClusterNetworkID: "cluster-net", Zone: "az1", ZoneMapped: true, ZoneSubnet: zoneSubnet},
			check: func(g Gomega, got []PortSpec) {
				g.Expect(got[0].NetworkID).To(Equal("zone-net"))
				g.Expect(got[0].FixedIPs).To(Equal([]ports.IP{{SubnetID: "zone-sub"}}))
			}},
		{name: "the zone's machine subnet not resolved yet",
			request: PortsRequest{Machine: machine(infrav1.OpenStackMachineSpec{}), Zone: "az1", ZoneMapped: true},
			err:     "the machine subnet of availability zone az1 is not resolved yet"},
		{name: "a port's own network, fixed IP subnet and groups, port security of the cluster",
			request: PortsRequest{Machine: machine(infrav1.OpenStackMachineSpec{Ports: []infrav1.PortOpts{{NameSuffix: ptr.To("data"),
				Network: &infrav1.NetworkParam{ID: ptr.To("n1")}, FixedIPs: []infrav1.FixedIP{{Subnet: &infrav1.SubnetParam{ID: ptr.To("s1")}}},
				SecurityGroups: []infrav1.SecurityGroupParam{{ID: ptr.To("own")}}}}}), ManagedGroupID: "managed", ZoneMapped: true},
			check: func(g Gomega, got []PortSpec) {
				g.Expect(got[0].Name).To(Equal("m-data"))
				g.Expect(got[0].NetworkID).To(Equal("net:n1"))
				g.Expect(got[0].FixedIPs).To(Equal([]ports.IP{{SubnetID: "subnet:s1@net:n1"}}))
				g.Expect(got[0].SecurityGroupIDs).To(Equal([]string{"managed", "sg:own"}))
			}},
		{name: "port security off: no group",
			request: PortsRequest{Machine: machine(infrav1.OpenStackMachineSpec{SecurityGroups: []infrav1.SecurityGroupParam{{ID: ptr.To("extra")}}}),
				ManagedGroupID: "managed", ClusterNetworkID: "cluster-net", DisablePortSecurity: ptr.To(true)},
			check: func(g Gomega, got []PortSpec) { g.Expect(got[0].SecurityGroupIDs).To(BeEmpty()) }},
		{name: "no network anywhere: the field is named",
			request: PortsRequest{Machine: machine(infrav1.OpenStackMachineSpec{})},
			err:     "spec.ports[0].network: not set, and the cluster has no network"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := ResolvePorts(context.Background(), names{}, &tc.request)
			if tc.err != "" {
				g.Expect(err).To(MatchError(tc.err))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			tc.check(g, got)
		})
	}
}

func TestArchitectureAsKubernetesNamesIt(t *testing.T) {
	g := NewWithT(t)
	for in, want := range map[any]string{"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64", "ppc64le": "ppc64le", nil: "", 7: ""} {
		g.Expect(architecture(in)).To(Equal(want), "%v", in)
	}
}
