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

package zones

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// The plan's rules without a cloud: what is reused from the status, which zone gets which subnet
// and floating IP, what is refused, and what is removed.

func twoZones() *Input {
	return &Input{Namespace: "ns", Cluster: "c", APIServerPort: 6443, ExternalNetwork: &infrav1.NetworkStatus{ID: "public"},
		LoadBalancer: &infrav1.APIServerLoadBalancer{Network: &infrav1.NetworkParam{ID: ptr.To("lb-net")},
			AvailabilityZoneSubnets: []infrav1.AZSubnetMapping{
				{AvailabilityZone: "az1", Subnet: infrav1.SubnetParam{ID: ptr.To("sub-1")}},
				{AvailabilityZone: "az2", Subnet: infrav1.SubnetParam{ID: ptr.To("sub-2")}, FloatingIP: ptr.To("172.24.4.52")},
			}}}
}

func entry(az, subnet string) infrav1.LoadBalancer {
	return infrav1.LoadBalancer{Name: Name("ns", "c", az), ID: az + "-id", AvailabilityZone: az,
		LoadBalancerNetwork: &infrav1.NetworkStatusWithSubnets{NetworkStatus: infrav1.NetworkStatus{ID: "lb-net"}, Subnets: []infrav1.Subnet{{ID: subnet}}}}
}

func TestRecordedReferencesSpareNeutron(t *testing.T) {
	for _, tc := range []struct {
		name       string
		recorded   []infrav1.LoadBalancer
		specNet    string
		wantNet    bool
		wantSubnet string
	}{
		{name: "nothing recorded: ask", specNet: "lb-net"},
		{name: "recorded on the spec's network: reuse both", recorded: []infrav1.LoadBalancer{entry("az1", "sub-1")}, specNet: "lb-net", wantNet: true, wantSubnet: "sub-1"},
		{name: "the spec names another network: ask", recorded: []infrav1.LoadBalancer{entry("az1", "sub-1")}, specNet: "other"},
		{name: "the mapping names another subnet: ask for it", recorded: []infrav1.LoadBalancer{entry("az1", "sub-9")}, specNet: "lb-net", wantNet: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in := twoZones()
			in.LoadBalancer.Network.ID = ptr.To(tc.specNet)
			in.Recorded.Zones = tc.recorded
			g.Expect(RecordedNetwork(in) != nil).To(Equal(tc.wantNet))
			got := RecordedSubnet(in, &infrav1.NetworkStatus{ID: tc.specNet}, &in.LoadBalancer.AvailabilityZoneSubnets[0])
			if tc.wantSubnet == "" {
				g.Expect(got).To(BeNil())
			} else {
				g.Expect(got.ID).To(Equal(tc.wantSubnet))
			}
		})
	}
}

func TestNewPlanPerZone(t *testing.T) {
	g := NewWithT(t)
	in := twoZones()
	in.APIServerFloatingIP = ptr.To("172.24.4.51")
	in.Recorded.Zones = []infrav1.LoadBalancer{entry("az1", "sub-1"), entry("az3", "sub-3")}
	refused := report.Refuted(infrav1.LoadBalancerConfigurationErrorReason, SubnetPath(1), "subnet sub-2 does not exist")
	plan, err := NewPlan(in, &Resolved{Network: &infrav1.NetworkStatus{ID: "lb-net", Name: "lb"},
		Subnets: map[string]*infrav1.Subnet{"az1": {ID: "sub-1"}}, Refused: map[string]error{"az2": refused}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plan.Desired).To(HaveLen(1))
	d := plan.Desired[0]
	g.Expect(d.Name).To(Equal("k8s-clusterapi-cluster-ns-c-az1-kubeapi"))
	g.Expect(d.Subnet.ID).To(Equal("sub-1"))
	g.Expect(d.FormerNames).To(Equal([]string{Name("ns", "c", "")}), "the first zone inherits the single load balancer")
	g.Expect(d.FloatingIP.Address).To(Equal("172.24.4.51"), "apiServerFloatingIP belongs to the first zone")
	g.Expect(d.FloatingIP.Field.String()).To(Equal("spec.apiServerFloatingIP"))
	g.Expect(d.Tags).To(Equal([]string{OwnerTag("ns", "c")}))
	g.Expect(plan.Known).To(Equal([]*infrav1.LoadBalancer{&in.Recorded.Zones[0]}))
	g.Expect(plan.Invalid).To(HaveLen(1))
	g.Expect(plan.Invalid[0].AvailabilityZone).To(Equal("az2"))
	g.Expect(plan.Invalid[0].Message).To(Equal("spec.apiServerLoadBalancer.availabilityZoneSubnets[1].subnet: subnet sub-2 does not exist; nothing is provisioned for it"))
	g.Expect(plan.Stale).To(HaveLen(1))
	g.Expect(plan.Stale[0].AvailabilityZone).To(Equal("az3"))
	removal := plan.StaleRemoval(in)
	g.Expect(removal.Names).To(Equal([]string{Name("ns", "c", "az3")}))
	g.Expect(removal.KeepAddresses).To(Equal([]string{"172.24.4.51", "172.24.4.52"}), "the user's addresses are never released")

	_, err = NewPlan(in, &Resolved{})
	g.Expect(err).To(HaveOccurred(), "per zone without the load balancer network resolved")
}

func TestNewPlanSingle(t *testing.T) {
	for _, tc := range []struct {
		name        string
		in          Input
		resolved    Resolved
		wantNetwork string
		wantSubnet  string
		wantInvalid string
	}{
		{name: "on the cluster network and its first subnet",
			in:          Input{Network: &infrav1.NetworkStatusWithSubnets{NetworkStatus: infrav1.NetworkStatus{ID: "cluster-net"}, Subnets: []infrav1.Subnet{{ID: "cluster-sub"}, {ID: "second"}}}},
			wantNetwork: "cluster-net", wantSubnet: "cluster-sub"},
		{name: "the cluster network not known yet", wantInvalid: "the cluster network is not known yet; nothing is provisioned for it"},
		{name: "apiServerLoadBalancer.network resolved", resolved: Resolved{Network: &infrav1.NetworkStatus{ID: "lb-net"}, Subnets: map[string]*infrav1.Subnet{"": {ID: "lb-sub"}}},
			wantNetwork: "lb-net", wantSubnet: "lb-sub"},
		{name: "apiServerLoadBalancer.network refuted", resolved: Resolved{Refused: map[string]error{"": &report.SpecError{Message: "spec.apiServerLoadBalancer.network.id: network x does not exist"}}},
			wantInvalid: "spec.apiServerLoadBalancer.network.id: network x does not exist; nothing is provisioned for it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in := tc.in
			in.Namespace, in.Cluster, in.APIServerPort = "ns", "c", 6443
			in.LoadBalancer = &infrav1.APIServerLoadBalancer{AdditionalPorts: []int{6443, 8132}}
			in.Recorded.Zones = []infrav1.LoadBalancer{entry("az2", "sub-2")}
			plan, err := NewPlan(&in, &tc.resolved)
			g.Expect(err).NotTo(HaveOccurred())
			if tc.wantInvalid != "" {
				g.Expect(plan.Desired).To(BeEmpty())
				g.Expect(plan.Invalid).To(HaveLen(1))
				g.Expect(plan.Invalid[0].Message).To(Equal(tc.wantInvalid))
				return
			}
			g.Expect(plan.Desired).To(HaveLen(1))
			d := plan.Desired[0]
			g.Expect(d.Name).To(Equal(Name("ns", "c", "")))
			g.Expect(d.Network.ID).To(Equal(tc.wantNetwork))
			g.Expect(d.Subnet.ID).To(Equal(tc.wantSubnet))
			g.Expect(d.Ports).To(Equal([]int{6443, 8132}), "the API port once")
			g.Expect(d.FloatingIP).To(BeNil(), "no external network, no floating IP")
			g.Expect(plan.Stale).To(HaveLen(1), "the zones' load balancers go")
		})
	}
}

func TestDiscover(t *testing.T) {
	network := &infrav1.NetworkStatus{ID: "lb-net", Name: "lb"}
	tagged := func(id string, tags ...string) infrav1.Subnet {
		return infrav1.Subnet{ID: id, Name: "n-" + id, Tags: tags}
	}
	tag := func(az string) string { return infrav1.DefaultZoneTagKey + "=" + az }
	const mine = "capo-owner-0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name     string
		subnets  []infrav1.Subnet
		recorded []infrav1.LoadBalancer
		want     []string // zone=subnet
		invalid  []string // zones
		warning  bool
		err      bool
		foreign  []string // subnets a third project made
	}{
		{name: "one subnet per zone", subnets: []infrav1.Subnet{tagged("a", tag("az2"), mine), tagged("b", mine, tag("az3")), tagged("c", "team=x", mine)}, want: []string{"az2=a", "az3=b"}},
		{name: "a mapped zone and a mapped subnet are not discovered", subnets: []infrav1.Subnet{tagged("sub-1", tag("az9"), mine), tagged("d", tag("az1"), mine)}},
		{name: "two subnets for a zone: refused", subnets: []infrav1.Subnet{tagged("a", tag("az2"), mine), tagged("b", tag("az2"), mine)}, invalid: []string{"az2"}},
		{name: "two subnets for a running zone: it stays, with a warning", subnets: []infrav1.Subnet{tagged("a", tag("az2"), mine), tagged("b", tag("az2"), mine)},
			recorded: []infrav1.LoadBalancer{entry("az2", "b")}, want: []string{"az2=b"}, warning: true},
		{name: "a name no zone can have", subnets: []infrav1.Subnet{tagged("a", tag("-bad"), mine)}, invalid: []string{"-bad"}},
		{name: "the zone tag without the cluster's: not used, with a warning", subnets: []infrav1.Subnet{tagged("a", tag("az2"), mine), tagged("x", tag("az3"))},
			want: []string{"az2=a"}, warning: true},
		{name: "another cluster's tag: not used", subnets: []infrav1.Subnet{tagged("x", tag("az2"), "capo-owner-ffffffffffffffffffffffffffffffff")}, warning: true},
		{name: "a running zone on a subnet with the zone tag alone stays, with a warning", subnets: []infrav1.Subnet{tagged("b", tag("az2"))},
			recorded: []infrav1.LoadBalancer{entry("az2", "b")}, want: []string{"az2=b"}, warning: true},
		{name: "a third project's subnet with both tags: not used", subnets: []infrav1.Subnet{tagged("a", tag("az2"), mine), tagged("f", tag("az3"), mine)}, foreign: []string{"f"},
			want: []string{"az2=a"}, warning: true},
		{name: "a running zone on a third project's subnet stays, with a warning", subnets: []infrav1.Subnet{tagged("f", tag("az2"), mine)}, foreign: []string{"f"},
			recorded: []infrav1.LoadBalancer{entry("az2", "f")}, want: []string{"az2=f"}, warning: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			foreign := map[string]bool{}
			for _, id := range tc.foreign {
				foreign[id] = true
			}
			in := &Input{Namespace: "ns", Cluster: "c", ClusterTag: mine, ForeignSubnets: foreign, Recorded: Recorded{Zones: tc.recorded},
				LoadBalancer: &infrav1.APIServerLoadBalancer{ZoneDiscovery: &infrav1.ZoneDiscovery{},
					AvailabilityZoneSubnets: []infrav1.AZSubnetMapping{{AvailabilityZone: "az1", Subnet: infrav1.SubnetParam{ID: ptr.To("sub-1")}}}}}
			d, err := Discover(in, network, tc.subnets)
			g.Expect(err != nil).To(Equal(tc.err))
			if err != nil {
				return
			}
			var got, invalid []string
			for _, m := range d.Mappings {
				got = append(got, m.AvailabilityZone+"="+*m.Subnet.ID)
			}
			for _, o := range d.Invalid {
				invalid = append(invalid, o.AvailabilityZone)
				g.Expect(o.State).To(Equal(StateInvalid))
			}
			g.Expect(got).To(Equal(tc.want))
			g.Expect(invalid).To(Equal(tc.invalid))
			warned := false
			for _, n := range d.Notes {
				warned = warned || n.Warning
			}
			g.Expect(warned).To(Equal(tc.warning))
		})
	}

	// zoneDiscovery alone, no subnet tagged: the spec error names the field.
	in := &Input{LoadBalancer: &infrav1.APIServerLoadBalancer{ZoneDiscovery: &infrav1.ZoneDiscovery{}}}
	_, err := Discover(in, network, nil)
	specErr, ok := report.AsSpecError(err)
	NewWithT(t).Expect(ok).To(BeTrue())
	NewWithT(t).Expect(specErr.Field).To(Equal("spec.apiServerLoadBalancer.zoneDiscovery"))
}

// Two mappings whose different selectors resolve to one subnet: the later zone is refused,
// naming the earlier one; the first zone goes on.
func TestTwoZonesOnOneSubnetAreRefused(t *testing.T) {
	g := NewWithT(t)
	in := twoZones()
	in.LoadBalancer.AvailabilityZoneSubnets[1].Subnet = infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{Name: "lb-az1"}}
	plan, err := NewPlan(in, &Resolved{Network: &infrav1.NetworkStatus{ID: "lb-net"},
		Subnets: map[string]*infrav1.Subnet{"az1": {ID: "sub-1", Name: "lb-az1"}, "az2": {ID: "sub-1", Name: "lb-az1"}}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plan.Desired).To(HaveLen(1))
	g.Expect(plan.Desired[0].AvailabilityZone).To(Equal("az1"))
	g.Expect(plan.Invalid).To(HaveLen(1))
	g.Expect(plan.Invalid[0].AvailabilityZone).To(Equal("az2"))
	g.Expect(plan.Invalid[0].Message).To(Equal("spec.apiServerLoadBalancer.availabilityZoneSubnets[1].subnet: resolves to subnet lb-az1 (sub-1), " +
		"which availabilityZoneSubnets[0] (zone az1) already maps: each zone needs a subnet of its own; nothing is provisioned for it"))
}

// allowedCIDRs never lock the cluster's own machines out: the cluster subnets, the zones' machine
// subnets and the router's addresses are added to what the spec allows.
func TestAllowedCIDRsAdmitTheClustersOwnMachines(t *testing.T) {
	g := NewWithT(t)
	in := twoZones()
	in.LoadBalancer.AllowedCIDRs = []string{"192.0.2.0/24"}
	in.Network = &infrav1.NetworkStatusWithSubnets{Subnets: []infrav1.Subnet{{CIDR: "10.6.0.0/24"}}}
	in.MachineSubnets = []infrav1.ZoneMachineSubnetStatus{{AvailabilityZone: "az1", Subnet: infrav1.Subnet{CIDR: "10.7.1.0/24"}}, {AvailabilityZone: "az2", Subnet: infrav1.Subnet{CIDR: "10.7.2.0/24"}}}
	in.Router = &infrav1.Router{IPs: []string{"172.24.4.3"}}
	plan, err := NewPlan(in, &Resolved{Network: &infrav1.NetworkStatus{ID: "lb-net"}, Subnets: map[string]*infrav1.Subnet{"az1": {ID: "a"}, "az2": {ID: "b"}}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plan.Desired[0].AllowedCIDRs).To(Equal([]string{"10.6.0.0/24", "10.7.1.0/24", "10.7.2.0/24", "172.24.4.3/32", "192.0.2.0/24"}))
}
