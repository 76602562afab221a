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

package networking

import (
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	. "github.com/onsi/gomega"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

// TestAgainstTheFakeCloud runs the network phases twice, as two reconciles with a lost status
// would, and then deletes: nothing is created twice and nothing is left.
// TestSteadyStateCalls pins how many OpenStack calls the network phases make once the status
// knows everything: the budget for a whole reconcile is 9, load balancers included.
func TestSteadyStateCalls(t *testing.T) {
	g := NewWithT(t)
	cloud := fakeopenstack.New(fakeopenstack.Options{})
	ext := cloud.AddNetwork("public", true)
	cloud.AddSubnet(ext, "public", "172.24.4.0/24")
	s := NewService(cloud.Network(), nil, testOwner)
	spec := &infrav1.OpenStackClusterSpec{ManagedSubnets: []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24"}},
		ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{}, Tags: []string{"team-a"}, APIServerPort: 6443}
	name := ResourceName("ns", "c")

	external, err := s.ResolveExternalNetwork(ctx, spec)
	g.Expect(err).NotTo(HaveOccurred())
	network, err := s.ReconcileNetwork(ctx, name, spec, nil)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = s.ReconcileRouter(ctx, name, spec, network, external)
	g.Expect(err).NotTo(HaveOccurred())
	groups, err := s.ReconcileSecurityGroups(ctx, "ns", "c", spec, nil, ManagedGroups{})
	g.Expect(err).NotTo(HaveOccurred())

	cloud.ResetCalls()
	again, err := s.ReconcileNetwork(ctx, name, spec, network)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(network))
	_, err = s.ReconcileRouter(ctx, name, spec, again, external)
	g.Expect(err).NotTo(HaveOccurred())
	groups2, err := s.ReconcileSecurityGroups(ctx, "ns", "c", spec, nil, groups)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(groups2).To(Equal(groups))
	g.Expect(cloud.Calls()).To(Equal(map[string]int{"GetNetwork": 1, "ListRouters": 1, "ListPorts": 1, "GetSecGroup": 2}))

	// A known network that was deleted behind our back is found missing and recreated.
	g.Expect(s.DeleteManagedRouter(ctx, name, spec)).To(Succeed())
	g.Expect(s.DeleteManagedNetwork(ctx, name)).To(Succeed())
	recreated, err := s.ReconcileNetwork(ctx, name, spec, network)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(recreated.ID).NotTo(Equal(network.ID))
}

func TestAgainstTheFakeCloud(t *testing.T) {
	g := NewWithT(t)
	cloud := fakeopenstack.New(fakeopenstack.Options{})
	ext := cloud.AddNetwork("public", true)
	cloud.AddSubnet(ext, "public", "172.24.4.0/24")
	s := NewService(cloud.Network(), nil, testOwner)
	spec := &infrav1.OpenStackClusterSpec{ManagedSubnets: []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24"}}, Tags: []string{"team-a"}}
	name := ResourceName("ns", "c")

	var network *infrav1.NetworkStatusWithSubnets
	var router *infrav1.Router
	for range 2 {
		external, err := s.ResolveExternalNetwork(ctx, spec)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(external.ID).To(Equal(ext))
		network, err = s.ReconcileNetwork(ctx, name, spec, nil) // as with a lost status, both times
		g.Expect(err).NotTo(HaveOccurred())
		router, err = s.ReconcileRouter(ctx, name, spec, network, external)
		g.Expect(err).NotTo(HaveOccurred())
	}
	nets, _ := cloud.Network().ListNetworks(ctx, networks.ListOpts{Name: name})
	g.Expect(nets).To(HaveLen(1))
	g.Expect(nets[0].Tags).To(ContainElement("team-a"))
	rs, _ := cloud.Network().ListRouters(ctx, routers.ListOpts{Name: name})
	g.Expect(rs).To(HaveLen(1))
	ifaces, _ := cloud.Network().ListPorts(ctx, ports.ListOpts{DeviceID: router.ID})
	g.Expect(ifaces).To(HaveLen(1))
	g.Expect(router.IPs).To(HaveLen(1))

	// A server port still on the network blocks its deletion; the controller waits.
	port, err := cloud.Network().CreatePort(ctx, ports.CreateOpts{NetworkID: network.ID})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.DeleteManagedRouter(ctx, name, spec)).To(Succeed())
	g.Expect(s.DeleteManagedNetwork(ctx, name)).To(MatchError(ErrWaitingForPorts))
	g.Expect(cloud.Network().DeletePort(ctx, port.ID)).To(Succeed())
	g.Expect(s.DeleteManagedNetwork(ctx, name)).To(Succeed())
	g.Expect(s.DeleteManagedNetwork(ctx, name)).To(Succeed(), "deleting again is a no-op")

	left, _ := cloud.Network().ListNetworks(ctx, networks.ListOpts{})
	g.Expect(left).To(HaveLen(1), "only the external network the operator made is left")
	rs, _ = cloud.Network().ListRouters(ctx, routers.ListOpts{})
	g.Expect(rs).To(BeEmpty())
}
