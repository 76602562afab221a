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

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cluster-api/util/conditions"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

// Adoption only with proof: a tenant gets nothing of another's by naming its object after an
// unmarked resource in time, by sharing a marked look-alike from another project, by naming
// another's router, or by naming another's server group.

// A cluster named so that its resources' names are those of resources upstream CAPO made for
// another (the takeover window: the resources are younger than the object), and a machine named
// after a server a person has just made: neither is adopted without the operator's record, and
// nothing is changed, made beside them or deleted.
func TestUnmarkedResourcesAreAdoptedOnlyWithTheOperatorsRecord(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("window")
	cloud := newCloud(t, g, ns)
	addMachineImages(cloud)

	t.Run("a cluster", func(t *testing.T) {
		g := NewWithT(t)
		attacker := newNamedCluster(g, ns, "a-prod", false, managedSpec(), true)
		// Made after the attacker's object, named as upstream names its network: another's.
		netID := cloud.AddNetwork(networking.ResourceName(ns, "a-prod"), false)
		cloud.AddSubnet(netID, "theirs", "10.6.0.0/24")
		before := snapshot(g, cloud)
		g.Eventually(func(g Gomega) {
			c := conditions.Get(get(g, attacker), infrav1.NetworkReadyCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(infrav1.TakeoverNotRecordedReason))
			g.Expect(c.Message).To(ContainSubstring(netID))
		}, eventually, poll).Should(Succeed())
		deleteAll(g, attacker)
		g.Expect(snapshot(g, cloud)).To(Equal(before), "nothing of the network was changed or deleted, and nothing was made")
	})

	t.Run("a bastion", func(t *testing.T) {
		g := NewWithT(t)
		osc := provisioned(g, newNamedCluster(g, ns, "b", false, managedSpec(), true))
		// A server named as the bastion will be, on the cluster network, made by someone else.
		port, err := cloud.Network().CreatePort(ctx, ports.CreateOpts{Name: "theirs", NetworkID: osc.Status.Network.ID})
		g.Expect(err).NotTo(HaveOccurred())
		server, err := cloud.Compute().CreateServer(ctx, servers.CreateOpts{Name: "b-bastion", FlavorRef: "m1.small", ImageRef: "ubuntu",
			Networks: []servers.Network{{Port: port.ID}}}, nil)
		g.Expect(err).NotTo(HaveOccurred())
		updateSpec(g, osc, func(s *infrav1.OpenStackClusterSpec) { s.Bastion = bastionSpec("m1.small") })
		g.Eventually(func(g Gomega) {
			c := conditions.Get(get(g, osc), infrav1.BastionReadyCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(infrav1.TakeoverNotRecordedReason))
			g.Expect(c.Message).To(ContainSubstring(server.ID))
		}, eventually, poll).Should(Succeed())
		// The cluster's deletion leaves that server; its network waits for it to leave, and the
		// deletion finishes once its owner removes it.
		g.Expect(env.Client.Delete(ctx, osc)).To(Succeed())
		g.Eventually(func(g Gomega) {
			g.Expect(eventReasons(g, ns)).To(ContainElement("LeftUnrecordedResource"))
		}, eventually, poll).Should(Succeed())
		_, err = cloud.Compute().GetServer(ctx, server.ID)
		g.Expect(err).NotTo(HaveOccurred(), "the server is not the cluster's bastion, and stays")
		g.Expect(cloud.Compute().DeleteServer(ctx, server.ID)).To(Succeed())
		g.Expect(cloud.Network().DeletePort(ctx, port.ID)).To(Succeed())
		deleteAll(g, osc)
	})

	t.Run("a machine", func(t *testing.T) {
		g := NewWithT(t)
		cluster := provisioned(g, newCluster(g, ns, false, managedSpec(), true))
		markInfrastructureProvisioned(g, ns)
		// A person's server on the cluster network, made seconds before the machine.
		port, err := cloud.Network().CreatePort(ctx, ports.CreateOpts{Name: "person", NetworkID: cluster.Status.Network.ID})
		g.Expect(err).NotTo(HaveOccurred())
		server, err := cloud.Compute().CreateServer(ctx, servers.CreateOpts{Name: "m-window", FlavorRef: "m1.small", ImageRef: "ubuntu",
			Networks: []servers.Network{{Port: port.ID}}}, nil)
		g.Expect(err).NotTo(HaveOccurred())
		before := snapshot(g, cloud)
		m := newMachine(g, ns, "m-window", "az1", false)
		g.Eventually(func(g Gomega) {
			c := conditions.Get(getMachine(g, m), infrav1.InstanceReadyCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(infrav1.TakeoverNotRecordedReason))
			g.Expect(c.Message).To(ContainSubstring(server.ID))
			g.Expect(getMachine(g, m).Status.InstanceID).To(BeNil())
		}, eventually, poll).Should(Succeed())
		deleteAll(g, m)
		_, err = cloud.Compute().GetServer(ctx, server.ID)
		g.Expect(err).NotTo(HaveOccurred(), "the person's server is not deleted with the machine")
		g.Expect(eventReasons(g, ns)).To(ContainElement("LeftUnrecordedResource"))
		g.Expect(snapshot(g, cloud)).To(Equal(before))
	})
}

// A network and subnet of another project, named as the victim's network will be and described
// with the victim's mark, shared into the victim's project: the victim makes its own, and its
// router never reaches the other project's subnet.
func TestAnotherProjectsLookAlikeIsNeverAdopted(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("shared-in")
	cloud := newCloud(t, g, ns)
	victimOwner := ownership.Owner{Kind: "OpenStackCluster", Namespace: ns, Name: "c"}
	foreignNet, foreignSubnet := cloud.AddNetworkOfProject("attacker-project", networking.ResourceName(ns, "c"), victimOwner.Description(), "10.6.0.0/24")
	victim := provisioned(g, newCluster(g, ns, false, managedSpec(), true))
	g.Expect(victim.Status.Network.ID).NotTo(Equal(foreignNet))
	g.Expect(eventReasons(g, ns)).NotTo(ContainElement("AdoptedNetwork"))
	g.Expect(eventReasons(g, ns)).To(ContainElement("CreatedNetwork"))
	interfaces, err := cloud.Network().ListPorts(ctx, ports.ListOpts{DeviceID: victim.Status.Router.ID})
	g.Expect(err).NotTo(HaveOccurred())
	for _, p := range interfaces {
		for _, ip := range p.FixedIPs {
			g.Expect(ip.SubnetID).NotTo(Equal(foreignSubnet), "the router has no interface on the other project's subnet")
		}
	}
	deleteAll(g, victim)
	left, err := cloud.Network().ListNetworks(ctx, networks.ListOpts{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(left).To(ContainElement(HaveField("ID", foreignNet)), "the other project's network is not deleted")
}

// A cluster whose name collides with the victim's gives the victim's router as spec.router: when
// it is deleted, the victim's subnet keeps its interface on the router.
func TestAnotherClustersRouterKeepsItsInterfaces(t *testing.T) {
	g := NewWithT(t)
	victimNS := testNamespace("router")
	cloud := newCloud(t, g, victimNS)
	victim := provisioned(g, newNamedCluster(g, victimNS, "a-prod", false, managedSpec(), true))
	before := snapshot(g, cloud)

	ns := victimNS + "-a"
	shareCloud(g, cloud, ns)
	spec := managedSpec()
	spec.Router = &infrav1.RouterParam{ID: ptr.To(victim.Status.Router.ID)}
	attacker := newNamedCluster(g, ns, "prod", false, spec, true)
	refused(g, attacker, infrav1.NetworkReadyCondition, infrav1.ResourceOwnedElsewhereReason,
		owned("network", networking.ResourceName(ns, "prod"), victim.Status.Network.ID, "OpenStackCluster "+victimNS+"/a-prod"))
	deleteAll(g, attacker)
	router, err := cloud.Network().GetRouter(ctx, victim.Status.Router.ID)
	g.Expect(err).NotTo(HaveOccurred())
	interfaces, err := cloud.Network().ListPorts(ctx, ports.ListOpts{DeviceID: router.ID})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(interfaces).To(ContainElement(HaveField("FixedIPs", ContainElement(HaveField("SubnetID", victim.Status.Network.Subnets[0].ID)))))
	g.Expect(snapshot(g, cloud)).To(Equal(before))
}

// A machine whose serverGroup names, by name, a group that holds another namespace's machine
// is refused before any server is made; given by ID, the group is the user's choice.
func TestAServerGroupFoundByNameMustBeThisNamespaces(t *testing.T) {
	g := NewWithT(t)
	victimNS := testNamespace("group-victim")
	cloud := newCloud(t, g, victimNS)
	addMachineImages(cloud)
	group := cloud.AddServerGroup("db-anti-affinity")
	provisioned(g, newCluster(g, victimNS, false, managedSpec(), true))
	markInfrastructureProvisioned(g, victimNS)
	inGroup := func(s *infrav1.OpenStackMachineSpec) {
		s.ServerGroup = &infrav1.ServerGroupParam{Filter: &infrav1.ServerGroupFilter{Name: ptr.To("db-anti-affinity")}}
	}
	victim := newMachine(g, victimNS, "db-0", "az1", false, inGroup)
	g.Eventually(func(g Gomega) { machineProvisioned(g, cloud, victim) }, eventually, poll).Should(Succeed())

	ns := testNamespace("group-attacker")
	shareCloud(g, cloud, ns)
	provisioned(g, newCluster(g, ns, false, managedSpec(), true))
	markInfrastructureProvisioned(g, ns)
	before := cloud.Calls()["CreateServer"]
	attacker := newMachine(g, ns, "db-1", "az1", false, inGroup)
	refused(g, attacker, infrav1.InstanceReadyCondition, infrav1.ResourceOwnedElsewhereReason,
		"spec.serverGroup.filter.name: server group db-anti-affinity ("+group+") holds servers of another namespace's machines: a group found by name is used only when it is this namespace's; give its id to use it")
	g.Expect(cloud.Calls()["CreateServer"]).To(Equal(before), "no server is made in the group")
	// The same namespace's next machine joins its own group by name.
	again := newMachine(g, victimNS, "db-2", "az1", false, inGroup)
	g.Eventually(func(g Gomega) { machineProvisioned(g, cloud, again) }, eventually, poll).Should(Succeed())
	deleteAll(g, attacker, again, victim)
}

// A floating IP of another project that carries the cluster's description, as a credential that
// sees several projects' addresses (an administrator's) lists it: the cluster's load balancer
// gets an address of its own, and the other project's is left as it was.
func TestAnotherProjectsFloatingIPIsNeverTheClusters(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("fip-project")
	cloud := newCloud(t, g, ns)
	n := addLBNetwork(t, g, cloud, "az1")
	public, err := cloud.Network().ListNetworks(ctx, networks.ListOpts{Name: "public"})
	g.Expect(err).NotTo(HaveOccurred())
	lookalike, err := cloud.Network().CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: public[0].ID,
		Description: zones.FloatingIPDescription(ns, "c", "az1")})
	g.Expect(err).NotTo(HaveOccurred())
	cloud.MoveFloatingIPToProject(lookalike.ID, "attacker-project")

	osc := newCluster(g, ns, false, multiAZSpec(n, "az1"), true)
	g.Eventually(func(g Gomega) {
		got := lbReady(g, osc)
		g.Expect(got.Status.APIServerLoadBalancers).To(HaveLen(1))
		g.Expect(got.Status.APIServerLoadBalancers[0].IP).NotTo(BeEmpty())
		g.Expect(got.Status.APIServerLoadBalancers[0].IP).NotTo(Equal(lookalike.FloatingIP), "another project's address is not the cluster's")
	}, eventually, poll).Should(Succeed())
	after, err := cloud.Network().GetFloatingIP(ctx, lookalike.ID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after.PortID).To(BeEmpty(), "the other project's address is not associated")
	g.Expect(after.Description).To(Equal(lookalike.Description))
	deleteAll(g, osc)
	_, err = cloud.Network().GetFloatingIP(ctx, lookalike.ID)
	g.Expect(err).NotTo(HaveOccurred(), "the other project's address is not released with the cluster")
}
