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

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

// floatingIPAt is the floating IP with address, which must exist.
func floatingIPAt(g Gomega, cloud *fakeopenstack.Cloud, address string) floatingips.FloatingIP {
	found, err := cloud.Network().ListFloatingIPs(ctx, floatingips.ListOpts{FloatingIP: address})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(found).To(HaveLen(1))
	return found[0]
}

// machineInternalIP is the machine's internal address in its status.
func machineInternalIP(g Gomega, osm *infrav1.OpenStackMachine) string {
	for _, a := range getMachine(g, osm).Status.Addresses {
		if a.Type == clusterv1.MachineInternalIP {
			return a.Address
		}
	}
	g.Expect("").NotTo(BeEmpty(), "%s has no internal address", osm.Name)
	return ""
}

// ingress is the machine's APIServerIngressReady condition, which must be set.
func ingress(g Gomega, osm *infrav1.OpenStackMachine) *metav1.Condition {
	c := conditions.Get(getMachine(g, osm), infrav1.APIServerIngressReadyCondition)
	g.Expect(c).NotTo(BeNil())
	return c
}

// Without a load balancer the API server is reached at a floating IP on one control plane
// machine, as upstream did: the first holds it, the others stand by, and one of them takes it
// when the holder goes. The address outlives the machines and goes with the cluster.
func TestWithoutLoadBalancerTheFloatingIPIsOnAControlPlaneMachine(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("without-lb")
	cloud := newCloud(t, g, ns)
	addMachineImages(cloud)
	osc := newCluster(g, ns, false, managedSpec(), true)
	var address string
	g.Eventually(func(g Gomega) {
		got := get(g, osc)
		g.Expect(got.Spec.ControlPlaneEndpoint).NotTo(BeNil())
		address = got.Spec.ControlPlaneEndpoint.Host
		g.Expect(address).To(HavePrefix("172.24.4."))
	}, eventually, poll).Should(Succeed())
	g.Expect(floatingIPAt(g, cloud, address).PortID).To(BeEmpty())
	markInfrastructureProvisioned(g, ns)

	first := newMachine(g, ns, "cp1", "az1", true)
	g.Eventually(func(g Gomega) {
		machineProvisioned(g, cloud, first)
		ip := machineInternalIP(g, first)
		g.Expect(floatingIPAt(g, cloud, address).FixedIP).To(Equal(ip))
		c := ingress(g, first)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Message).To(ContainSubstring("the API server floating IP " + address + " is on this machine's address " + ip))
	}, eventually, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(eventReasons(g, ns)).To(ContainElement("AssociatedFloatingIP"))
	}, eventually, poll).Should(Succeed())

	second := newMachine(g, ns, "cp2", "az2", true)
	g.Eventually(func(g Gomega) {
		machineProvisioned(g, cloud, second)
		c := ingress(g, second)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Message).To(ContainSubstring("is on address " + machineInternalIP(g, first) + ", not this machine's"))
	}, eventually, poll).Should(Succeed())
	g.Expect(floatingIPAt(g, cloud, address).FixedIP).To(Equal(machineInternalIP(g, first)))

	// A worker has nothing to do with the address.
	worker := newMachine(g, ns, "w1", "az1", false)
	g.Eventually(func(g Gomega) { machineProvisioned(g, cloud, worker) }, eventually, poll).Should(Succeed())
	g.Expect(conditions.Get(getMachine(g, worker), infrav1.APIServerIngressReadyCondition)).To(BeNil())

	// The holder goes: the other control plane machine takes the address at once (the deletion
	// wakes it, well before its periodic look).
	secondIP := machineInternalIP(g, second)
	g.Expect(env.Client.Delete(ctx, first)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(floatingIPAt(g, cloud, address).FixedIP).To(Equal(secondIP))
		g.Expect(ingress(g, second).Message).To(ContainSubstring("is on this machine's address " + secondIP))
	}, requeue.FloatingIPStandby/2, poll).Should(Succeed())

	// Machines never release the address; the cluster does.
	deleteAllMachines(g, ns, second, worker)
	g.Expect(floatingIPAt(g, cloud, address).PortID).To(BeEmpty())
	g.Expect(env.Client.Delete(ctx, osc)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(osc), &infrav1.OpenStackCluster{}))
	}, eventually, poll).Should(BeTrue())
	g.Expect(countResources(cloud)).To(Equal(counts{networks: 1}))
}

// A cluster without a load balancer that upstream CAPO made: its floating IP, found at the
// endpoint with upstream's description, becomes the cluster's and is released with it. A floating
// IP at the endpoint with any other description is the user's, kept on deletion.
func TestWithoutLoadBalancerUpstreamsFloatingIPIsTakenOver(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("without-lb-takeover")
	cloud := newCloud(t, g, ns)
	public, err := cloud.Network().ListNetworks(ctx, networks.ListOpts{Name: "public"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(public).To(HaveLen(1))
	external := public[0].ID
	allocate := func(description string) string {
		fip, err := cloud.Network().CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: external, Description: description})
		g.Expect(err).NotTo(HaveOccurred())
		return fip.FloatingIP
	}
	upstream := allocate(networking.APIServerFloatingIPMarks(ns, "c", true).TakenOver[0])
	users := allocate("the team's reserved address")

	// c was upstream's; d's endpoint is the user's address.
	spec := managedSpec()
	spec.ControlPlaneEndpoint = &clusterv1.APIEndpoint{Host: upstream, Port: 6443}
	osc := newCluster(g, ns, false, spec, true)
	spec.ControlPlaneEndpoint = &clusterv1.APIEndpoint{Host: users, Port: 6443}
	other := newNamedCluster(g, ns, "d", false, spec, true)
	// Until the operator records the takeover, upstream's address is neither taken nor changed.
	g.Eventually(func(g Gomega) {
		g.Expect(reasonsOf(get(g, osc))).To(ContainElement(infrav1.TakeoverNotRecordedReason))
	}, eventually, poll).Should(Succeed())
	g.Expect(floatingIPAt(g, cloud, upstream).Description).To(Equal(ownership.UpstreamDescription(ns, "c")))
	recordTakeover(ctx, g, osc)
	g.Eventually(func(g Gomega) {
		g.Expect(conditions.IsTrue(get(g, osc), infrav1.ReadyCondition)).To(BeTrue())
		g.Expect(conditions.IsTrue(get(g, other), infrav1.ReadyCondition)).To(BeTrue())
		g.Expect(floatingIPAt(g, cloud, upstream).Description).To(Equal(networking.APIServerFloatingIPMarks(ns, "c", true).Ours))
		g.Expect(eventReasons(g, ns)).To(ContainElement("AdoptedFloatingIP"))
	}, eventually, poll).Should(Succeed())
	g.Expect(floatingIPAt(g, cloud, users).Description).To(Equal("the team's reserved address"))

	for _, o := range []*infrav1.OpenStackCluster{osc, other} {
		g.Expect(env.Client.Delete(ctx, o)).To(Succeed())
	}
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(osc), &infrav1.OpenStackCluster{})) &&
			apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(other), &infrav1.OpenStackCluster{}))
	}, eventually, poll).Should(BeTrue())
	left, err := cloud.Network().ListFloatingIPs(ctx, floatingips.ListOpts{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(left).To(ConsistOf(HaveField("FloatingIP", users)), "upstream's address is released with the cluster, the user's kept")
}
