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
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// Upstream v0.15's primarySubnet: on a cluster network of several subnets, the single load
// balancer's VIP and the machines' default ports go on the one it names, not on the first.
func TestPrimarySubnetHoldsTheVIPAndTheMachines(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("primary-subnet")
	cloud := newCloud(t, g, ns)
	addMachineImages(cloud)
	net := cloud.AddNetwork("k8s", false)
	cloud.AddSubnet(net, "first", "10.8.0.0/24")
	primary := cloud.AddSubnet(net, "second", "10.8.1.0/24")
	spec := infrav1.OpenStackClusterSpec{
		IdentityRef:           &infrav1.OpenStackIdentityReference{Name: "cloud-config", CloudName: "openstack"},
		Network:               &infrav1.NetworkParam{ID: ptr.To(net)},
		PrimarySubnet:         &infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{Name: "second"}},
		APIServerLoadBalancer: &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true)},
		// The network has no router: the VIP is reached on the network itself.
		DisableAPIServerFloatingIP: ptr.To(true),
	}
	osc := newCluster(g, ns, false, spec, true)
	g.Eventually(func(g Gomega) {
		got := lbReady(g, osc)
		g.Expect(got.Status.Network.Subnets[0].ID).To(Equal(primary))
	}, eventually, poll).Should(Succeed())
	lbs, err := cloud.LoadBalancer().ListLoadBalancers(ctx, loadbalancers.ListOpts{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(lbs).To(HaveLen(1))
	g.Expect(lbs[0].VipSubnetID).To(Equal(primary))
	markInfrastructureProvisioned(g, ns)

	cp := newMachine(g, ns, "cp1", "az1", true)
	g.Eventually(func(g Gomega) { machineProvisioned(g, cloud, cp) }, eventually, poll).Should(Succeed())
	port, err := cloud.Network().ListPorts(ctx, ports.ListOpts{Name: "cp1-0"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(port).To(HaveLen(1))
	g.Expect(port[0].FixedIPs).To(ConsistOf(HaveField("SubnetID", primary)))
	deleteAllMachines(g, ns, cp)
}
