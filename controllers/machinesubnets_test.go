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

package controllers

import (
	"fmt"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cluster-api/util/conditions"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

func TestMachinesGetTheirZonesSubnetAndJoinThroughIt(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("machine-subnets")
	azs := []string{"az1", "az2"}
	cloud := newCloud(t, g, ns)
	cloud.SetAvailabilityZones(azs...)
	addMachineImages(cloud)
	n := addLBNetwork(t, g, cloud, azs...)
	spec := multiAZSpec(n, azs...)
	nets, subnets := map[string]string{}, map[string]string{}
	for i, az := range azs {
		nets[az] = cloud.AddNetwork("nodes-"+az, false)
		subnets[az] = cloud.AddSubnet(nets[az], "nodes-"+az, fmt.Sprintf("10.30.%d.0/24", i+1))
		spec.AvailabilityZoneMachineSubnets = append(spec.AvailabilityZoneMachineSubnets, infrav1.ZoneMachineSubnet{
			AvailabilityZone: az, Network: &infrav1.NetworkParam{ID: ptr.To(nets[az])},
			Subnet: infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{Name: "nodes-" + az}},
		})
	}
	osc := newCluster(g, ns, false, spec, true)
	g.Eventually(func(g Gomega) {
		got := lbReady(g, osc)
		g.Expect(got.Status.AvailabilityZoneMachineSubnets).To(HaveLen(2))
		g.Expect(got.Status.MachineSubnetOf("az2").Subnet.ID).To(Equal(subnets["az2"]))
		g.Expect(got.Status.MachineSubnetOf("az2").Network).To(Equal(infrav1.NetworkStatus{Name: "nodes-az2", ID: nets["az2"]}))
		g.Expect(conditions.Get(got, infrav1.NetworkReadyCondition).Message).To(ContainSubstring(
			fmt.Sprintf("machine subnets az1 10.30.1.0/24 (%s), az2 10.30.2.0/24 (%s)", subnets["az1"], subnets["az2"])))
	}, eventually, poll).Should(Succeed())
	markInfrastructureProvisioned(g, ns)

	cp := map[string]*infrav1.OpenStackMachine{}
	for _, az := range azs {
		cp[az] = newMachine(g, ns, "cp-"+az, az, true)
	}
	// A port that names its network keeps it; a machine of no mapped zone stays on the cluster
	// network.
	pinned := newMachine(g, ns, "pinned", "az1", false, func(s *infrav1.OpenStackMachineSpec) {
		s.Ports = []infrav1.PortOpts{{Network: &infrav1.NetworkParam{ID: ptr.To(nets["az2"])}}}
	})
	elsewhere := newMachine(g, ns, "elsewhere", "", false)
	g.Eventually(func(g Gomega) {
		for _, m := range []*infrav1.OpenStackMachine{cp["az1"], cp["az2"], pinned, elsewhere} {
			machineProvisioned(g, cloud, m)
		}
		g.Expect(membership(g, cloud, ns, azs...)).To(Equal(map[string][]string{"az1": {"cp-az1"}, "az2": {"cp-az2"}}))
	}, eventually, poll).Should(Succeed())

	portOf := func(name string) ports.Port {
		found, err := cloud.Network().ListPorts(ctx, ports.ListOpts{Name: name})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(found).To(HaveLen(1))
		return found[0]
	}
	for _, az := range azs {
		p := portOf("cp-" + az + "-0")
		g.Expect(p.NetworkID).To(Equal(nets[az]), "the zone's network")
		g.Expect(p.FixedIPs).To(HaveLen(1))
		g.Expect(p.FixedIPs[0].SubnetID).To(Equal(subnets[az]), "the zone's subnet")
		// The load balancers are on their own network: the member is reached through the
		// machine's zone subnet.
		lb := lbsIn(cloud)[zones.Name(ns, "c", az)]
		tree, err := cloud.LoadBalancer().GetLoadBalancerStatuses(ctx, lb.ID)
		g.Expect(err).NotTo(HaveOccurred())
		members, err := cloud.LoadBalancer().ListMembers(ctx, tree.Loadbalancer.Listeners[0].Pools[0].ID, nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(members).To(HaveLen(1))
		g.Expect(members[0].Address).To(Equal(p.FixedIPs[0].IPAddress))
		g.Expect(members[0].SubnetID).To(Equal(subnets[az]))
	}
	g.Expect(portOf("pinned-0").NetworkID).To(Equal(nets["az2"]), "a port that names its network keeps it")
	clusterNet := get(g, osc).Status.Network.ID
	g.Expect(portOf("elsewhere-0").NetworkID).To(Equal(clusterNet), "a machine of no mapped zone is on the cluster network")
}
