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
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/compute"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

func bastionSpec(flavor string) *infrav1.Bastion {
	return &infrav1.Bastion{Spec: &infrav1.OpenStackMachineSpec{
		Flavor: ptr.To(flavor),
		Image:  infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("ubuntu")}},
	}}
}

// updateSpec changes the OpenStackCluster's spec, retrying on conflicts with the controller.
func updateSpec(g *WithT, osc *infrav1.OpenStackCluster, change func(*infrav1.OpenStackClusterSpec)) {
	g.Eventually(func() error {
		cur := &infrav1.OpenStackCluster{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(osc), cur); err != nil {
			return err
		}
		change(&cur.Spec)
		return env.Client.Update(ctx, cur)
	}, eventually, poll).Should(Succeed())
}

// bastionReady asserts BastionReady and returns the recorded bastion.
func bastionReady(g Gomega, osc *infrav1.OpenStackCluster) *infrav1.BastionStatus {
	got := get(g, osc)
	c := conditions.Get(got, infrav1.BastionReadyCondition)
	g.Expect(c).NotTo(BeNil())
	g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "%s: %s", c.Reason, c.Message)
	g.Expect(c.Reason).To(Equal(infrav1.ReadyReason))
	g.Expect(got.Status.Bastion).NotTo(BeNil())
	g.Expect(got.Status.Bastion.State).To(Equal("ACTIVE"))
	g.Expect(got.Status.Bastion.FloatingIP).To(HavePrefix("172.24.4."))
	return got.Status.Bastion
}

// bastionServers are the servers of the fake named like cluster c's bastion.
func bastionServers(g Gomega, cloud *fakeopenstack.Cloud) []servers.Server {
	found, err := cloud.Compute().ListServers(ctx, servers.ListOpts{})
	g.Expect(err).NotTo(HaveOccurred())
	var out []servers.Server
	for _, s := range found {
		if s.Name == "c-bastion" {
			out = append(out, s)
		}
	}
	return out
}

// sshRules are the SSH rules of the group named name, by remote (prefix or group ID).
func sshRules(g Gomega, cloud *fakeopenstack.Cloud, name string) []string {
	gs, err := cloud.Network().ListSecGroups(ctx, groups.ListOpts{Name: name})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(gs).To(HaveLen(1))
	rs, err := cloud.Network().ListSecGroupRules(ctx, rules.ListOpts{SecGroupID: gs[0].ID})
	g.Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, r := range rs {
		if r.PortRangeMin == 22 && r.PortRangeMax == 22 {
			out = append(out, r.RemoteIPPrefix+r.RemoteGroupID)
		}
	}
	return out
}

// The bastion of upstream's spec.bastion: a server on the cluster network in its own group (SSH
// from anywhere; the nodes' groups let it in), with a floating IP. A changed spec replaces it,
// enabled: false removes it with its group and address, and the cluster's deletion leaves
// nothing behind. The bastion never holds the cluster back.
func TestBastionIsMadeReplacedAndRemoved(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("bastion")
	cloud := newCloud(t, g, ns)
	addMachineImages(cloud)
	cloud.AddFlavor("m1.medium", 4, 4096)
	spec := managedSpec()
	spec.Bastion = bastionSpec("m1.small")
	osc := newCluster(g, ns, false, spec, true)
	cpGroup, workerGroup := networking.SecurityGroupNames(ns, "c")
	bastionGroup := networking.BastionSecurityGroupName(ns, "c")

	var first *infrav1.BastionStatus
	g.Eventually(func(g Gomega) {
		g.Expect(conditions.IsTrue(get(g, osc), infrav1.ReadyCondition)).To(BeTrue())
		first = bastionReady(g, osc)
	}, eventually, poll).Should(Succeed())
	got := get(g, osc)
	g.Expect(got.Status.BastionSecurityGroup).NotTo(BeNil())
	g.Expect(got.Status.BastionSecurityGroup.Name).To(Equal(bastionGroup))
	server, err := cloud.Compute().GetServer(ctx, first.ID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(server.Name).To(Equal("c-bastion"))
	g.Expect(server.Metadata).To(HaveKeyWithValue(compute.BastionMetadataKey, ns+"/c"))
	g.Expect(server.Metadata).NotTo(HaveKey(compute.OwnerMetadataKey), "no machine may take the bastion for its server")
	g.Expect(first.IP).To(HavePrefix("10.6.0."))
	g.Expect(floatingIPAt(g, cloud, first.FloatingIP).FixedIP).To(Equal(first.IP))
	g.Expect(floatingIPAt(g, cloud, first.FloatingIP).Description).To(Equal(networking.BastionFloatingIPMarks(ns, "c", true).Ours))
	g.Expect(sshRules(g, cloud, bastionGroup)).To(ConsistOf("0.0.0.0/0"))
	bastionGroupID := got.Status.BastionSecurityGroup.ID
	g.Expect(sshRules(g, cloud, cpGroup)).To(ConsistOf(bastionGroupID))
	g.Expect(sshRules(g, cloud, workerGroup)).To(ConsistOf(bastionGroupID))
	bastionPort, err := cloud.Network().ListPorts(ctx, ports.ListOpts{DeviceID: first.ID})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(bastionPort).To(HaveLen(1))
	g.Expect(bastionPort[0].Name).To(Equal("c-bastion-0"))
	g.Expect(bastionPort[0].SecurityGroups).To(ConsistOf(bastionGroupID))

	// A changed spec replaces the server; the address is allocated anew.
	updateSpec(g, osc, func(s *infrav1.OpenStackClusterSpec) { s.Bastion.Spec.Flavor = ptr.To("m1.medium") })
	g.Eventually(func(g Gomega) {
		second := bastionReady(g, osc)
		g.Expect(second.ID).NotTo(Equal(first.ID))
		g.Expect(bastionServers(g, cloud)).To(HaveLen(1))
		// The old port went before the new server was made: the new one has its own.
		left, err := cloud.Network().ListPorts(ctx, ports.ListOpts{Name: "c-bastion-0"})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(left).To(ConsistOf(HaveField("DeviceID", second.ID)))
		g.Expect(left[0].ID).NotTo(Equal(bastionPort[0].ID))
	}, eventually, poll).Should(Succeed())
	g.Expect(eventReasons(g, ns)).To(ContainElement("DeletedServer"))

	// enabled: false removes the bastion, its address, its port and its group, and the nodes'
	// groups no longer name it.
	updateSpec(g, osc, func(s *infrav1.OpenStackClusterSpec) { s.Bastion.Enabled = ptr.To(false) })
	g.Eventually(func(g Gomega) {
		got := get(g, osc)
		c := conditions.Get(got, infrav1.BastionReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.NotRequiredReason))
		g.Expect(got.Status.Bastion).To(BeNil())
		g.Expect(got.Status.BastionSecurityGroup).To(BeNil())
		g.Expect(bastionServers(g, cloud)).To(BeEmpty())
		gs, err := cloud.Network().ListSecGroups(ctx, groups.ListOpts{Name: bastionGroup})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(gs).To(BeEmpty())
		g.Expect(sshRules(g, cloud, cpGroup)).To(BeEmpty())
		fips, err := cloud.Network().ListFloatingIPs(ctx, floatingips.ListOpts{Description: networking.BastionFloatingIPMarks(ns, "c", true).Ours})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(fips).To(BeEmpty())
		left, err := cloud.Network().ListPorts(ctx, ports.ListOpts{Name: "c-bastion-0"})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(left).To(BeEmpty())
	}, eventually, poll).Should(Succeed())
	g.Expect(conditions.IsTrue(get(g, osc), infrav1.ReadyCondition)).To(BeTrue())

	// Enabled again, then the cluster is deleted with its bastion.
	updateSpec(g, osc, func(s *infrav1.OpenStackClusterSpec) { s.Bastion.Enabled = nil })
	g.Eventually(func(g Gomega) { bastionReady(g, osc) }, eventually, poll).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, osc)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(osc), &infrav1.OpenStackCluster{}))
	}, eventually, poll).Should(BeTrue())
	g.Expect(countResources(cloud)).To(Equal(counts{networks: 1}))
	g.Expect(bastionServers(g, cloud)).To(BeEmpty())
}

// A cluster taken over from upstream CAPO keeps upstream's bastion: the server upstream named
// after the cluster on its network, and the floating IP upstream put on it, which becomes the
// cluster's. A server of that name that another cluster's bastion mark claims, or a machine's
// mark, is never taken. Both of the cluster's go with it; the others stay.
func TestUpstreamsBastionIsTakenOver(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("bastion-takeover")
	cloud := newCloud(t, g, ns)
	addMachineImages(cloud)
	osc := newCluster(g, ns, false, managedSpec(), true)
	recordTakeover(ctx, g, osc)
	var network *infrav1.NetworkStatusWithSubnets
	g.Eventually(func(g Gomega) {
		got := get(g, osc)
		g.Expect(conditions.IsTrue(got, infrav1.ReadyCondition)).To(BeTrue())
		network = got.Status.Network
		g.Expect(network).NotTo(BeNil())
	}, eventually, poll).Should(Succeed())

	// What upstream made: a port and a server named c-bastion on the cluster network, and its
	// floating IP on that port.
	port, err := cloud.Network().CreatePort(ctx, ports.CreateOpts{Name: "c-bastion-0", NetworkID: network.ID, Description: compute.UpstreamPortDescription("c")})
	g.Expect(err).NotTo(HaveOccurred())
	upstream, err := cloud.Compute().CreateServer(ctx, servers.CreateOpts{Name: "c-bastion", FlavorRef: "m1.small", ImageRef: "ubuntu",
		Networks: []servers.Network{{Port: port.ID}}}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	public, err := cloud.Network().ListNetworks(ctx, networks.ListOpts{Name: "public"})
	g.Expect(err).NotTo(HaveOccurred())
	fip, err := cloud.Network().CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: public[0].ID, PortID: port.ID,
		Description: ownership.UpstreamDescription(ns, "c")})
	g.Expect(err).NotTo(HaveOccurred())
	// Another namespace's cluster c has a bastion of the same name in the same project.
	otherPort, err := cloud.Network().CreatePort(ctx, ports.CreateOpts{Name: "other-c-bastion-0", NetworkID: public[0].ID})
	g.Expect(err).NotTo(HaveOccurred())
	foreign, err := cloud.Compute().CreateServer(ctx, servers.CreateOpts{Name: "c-bastion", FlavorRef: "m1.small", ImageRef: "ubuntu",
		Networks: []servers.Network{{Port: otherPort.ID}}, Metadata: map[string]string{compute.BastionMetadataKey: "other-team/c"}}, nil)
	g.Expect(err).NotTo(HaveOccurred())

	// A machine of the same namespace named c-bastion whose spec's metadata claims the bastion's
	// mark (the schema refuses the key; this one got past it): the machine's mark wins.
	machinePort, err := cloud.Network().CreatePort(ctx, ports.CreateOpts{Name: "c-bastion-machine-0", NetworkID: public[0].ID})
	g.Expect(err).NotTo(HaveOccurred())
	machine, err := cloud.Compute().CreateServer(ctx, servers.CreateOpts{Name: "c-bastion", FlavorRef: "m1.small", ImageRef: "ubuntu",
		Networks: []servers.Network{{Port: machinePort.ID}}, Metadata: map[string]string{compute.BastionMetadataKey: ns + "/c", compute.OwnerMetadataKey: ns + "/c-bastion"}}, nil)
	g.Expect(err).NotTo(HaveOccurred())

	updateSpec(g, osc, func(s *infrav1.OpenStackClusterSpec) { s.Bastion = bastionSpec("m1.small") })
	g.Eventually(func(g Gomega) {
		st := bastionReady(g, osc)
		g.Expect(st.ID).To(Equal(upstream.ID))
		g.Expect(st.FloatingIP).To(Equal(fip.FloatingIP))
		g.Expect(floatingIPAt(g, cloud, fip.FloatingIP).Description).To(Equal(networking.BastionFloatingIPMarks(ns, "c", true).Ours))
	}, eventually, poll).Should(Succeed())
	g.Expect(bastionServers(g, cloud)).To(HaveLen(3), "no server is created beside upstream's")

	g.Expect(env.Client.Delete(ctx, osc)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(osc), &infrav1.OpenStackCluster{}))
	}, eventually, poll).Should(BeTrue())
	g.Expect(bastionServers(g, cloud)).To(ConsistOf(HaveField("ID", foreign.ID), HaveField("ID", machine.ID)))
	fips, err := cloud.Network().ListFloatingIPs(ctx, floatingips.ListOpts{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fips).To(BeEmpty(), "upstream's bastion address goes with the cluster")
	left, err := cloud.Network().ListPorts(ctx, ports.ListOpts{Name: "c-bastion-0"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(left).To(BeEmpty(), "upstream's bastion port goes with the cluster")
}
