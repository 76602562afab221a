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
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1alpha1"
	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

// fipAt is the floating IP at address in cloud; nil when there is none.
func fipAt(g Gomega, cloud *fakeopenstack.Cloud, address string) *floatingips.FloatingIP {
	found, err := cloud.Network().ListFloatingIPs(ctx, floatingips.ListOpts{FloatingIP: address})
	g.Expect(err).NotTo(HaveOccurred())
	if len(found) == 0 {
		return nil
	}
	return &found[0]
}

// machinePort is the ID of the port of the machine's server.
func machinePort(g Gomega, cloud *fakeopenstack.Cloud, osm *infrav1.OpenStackMachine) string {
	got := getMachine(g, osm)
	g.Expect(got.Status.InstanceID).NotTo(BeNil())
	found, err := cloud.Network().ListPorts(ctx, ports.ListOpts{DeviceID: *got.Status.InstanceID})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(found).NotTo(BeEmpty())
	return found[0].ID
}

// poolAddress waits for the machine's floating IP from its pool and returns it, once it is on
// the machine's port.
func poolAddress(g *WithT, cloud *fakeopenstack.Cloud, osm *infrav1.OpenStackMachine) *floatingips.FloatingIP {
	var fip *floatingips.FloatingIP
	g.Eventually(func(g Gomega) {
		got := getMachine(g, osm)
		c := conditions.Get(got, infrav1.FloatingAddressFromPoolReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "%v", c)
		g.Expect(conditions.IsTrue(got, infrav1.ReadyCondition)).To(BeTrue())
		claim := &ipamv1.IPAddressClaim{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: osm.Namespace, Name: osm.Name + "-floating-ip-address"}, claim)).To(Succeed())
		a := &ipamv1.IPAddress{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: osm.Namespace, Name: claim.Status.AddressRef.Name}, a)).To(Succeed())
		fip = fipAt(g, cloud, a.Spec.Address)
		g.Expect(fip).NotTo(BeNil())
		g.Expect(fip.PortID).To(Equal(machinePort(g, cloud, osm)))
	}, eventually, poll).Should(Succeed())
	return fip
}

// An OpenStackFloatingIPPool gives machines floating IPs: the operator's pre-allocated address
// first (one another object's mark claims is skipped and reported), then an address it allocated
// and no claim holds (what a crash between the allocation and the IPAddress leaves: taken, not
// allocated twice), then a new one, within maxIPs. Deleting a machine gives its address back:
// released when the pool allocated it and the policy is Delete, kept otherwise. Deleting the pool
// releases what it allocated and keeps the operator's addresses.
func TestFloatingIPPoolGivesMachinesAddressesAndTakesThemBack(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("fip-pool")
	cloud := newCloud(t, g, ns)
	addMachineImages(cloud)
	public, err := cloud.Network().ListNetworks(ctx, networks.ListOpts{Name: "public"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(public).To(HaveLen(1))
	ext := public[0].ID
	osc := newCluster(g, ns, false, managedSpec(), true)
	g.Eventually(func(g Gomega) {
		g.Expect(get(g, osc).Status.Initialization).NotTo(BeNil())
	}, eventually, poll).Should(Succeed())
	markInfrastructureProvisioned(g, ns)

	// The operator's address, another cluster's address listed by mistake, and an address the
	// pool allocated before a crash.
	mine, err := cloud.Network().CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: ext})
	g.Expect(err).NotTo(HaveOccurred())
	theirs, err := cloud.Network().CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: ext, Description: ownership.FloatingIPMarkPrefix + "API server of other/prod"})
	g.Expect(err).NotTo(HaveOccurred())
	marks := networking.FloatingIPPoolMarks(ns, "pool")
	left, err := cloud.Network().CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: ext, Description: marks.Ours})
	g.Expect(err).NotTo(HaveOccurred())

	pool := &infrav1alpha1.OpenStackFloatingIPPool{ObjectMeta: metav1.ObjectMeta{Name: "pool", Namespace: ns}, Spec: infrav1alpha1.OpenStackFloatingIPPoolSpec{
		IdentityRef:             infrav1.OpenStackIdentityReference{Name: "cloud-config", CloudName: "openstack"},
		PreAllocatedFloatingIPs: []string{theirs.FloatingIP, mine.FloatingIP},
		MaxIPs:                  ptr.To(3),
		ReclaimPolicy:           infrav1alpha1.ReclaimDelete,
	}}
	g.Expect(env.Client.Create(ctx, pool)).To(Succeed())
	ref := func(s *infrav1.OpenStackMachineSpec) {
		s.FloatingIPPoolRef = &corev1.TypedLocalObjectReference{APIGroup: ptr.To(infrav1alpha1.GroupVersion.Group), Kind: "OpenStackFloatingIPPool", Name: "pool"}
	}

	// The left-over address is taken first, then the operator's; the other cluster's is not.
	w1 := newMachine(g, ns, "w1", "az1", false, ref)
	g.Expect(poolAddress(g, cloud, w1).FloatingIP).To(Equal(left.FloatingIP))
	w2 := newMachine(g, ns, "w2", "az1", false, ref)
	g.Expect(poolAddress(g, cloud, w2).FloatingIP).To(Equal(mine.FloatingIP))
	addresses := &ipamv1.IPAddressList{}
	g.Expect(env.Client.List(ctx, addresses, client.InNamespace(ns))).To(Succeed())
	g.Expect(addresses.Items).To(HaveLen(2))
	for _, a := range addresses.Items {
		g.Expect(a.Spec.Address).NotTo(Equal(theirs.FloatingIP), "another object's address is never handed out")
		g.Expect(a.Finalizers).To(ContainElement(infrav1alpha1.ReleaseFloatingIPFinalizer))
	}
	allocated := cloud.Calls()["CreateFloatingIP"]

	// Then a new address, marked as the pool's.
	w3 := newMachine(g, ns, "w3", "az2", false, ref)
	fresh := poolAddress(g, cloud, w3)
	g.Expect(fresh.Description).To(Equal(marks.Ours))
	g.Expect(cloud.Calls()["CreateFloatingIP"]).To(Equal(allocated+1), "one allocation for three machines: the left-over and the operator's addresses were used")
	g.Eventually(func(g Gomega) {
		got := &infrav1alpha1.OpenStackFloatingIPPool{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pool), got)).To(Succeed())
		g.Expect(conditions.IsTrue(got, infrav1.ReadyCondition)).To(BeTrue(), "%v", got.Status.Conditions)
		g.Expect(got.Status.ClaimedIPs).To(ConsistOf(left.FloatingIP, mine.FloatingIP, fresh.FloatingIP))
		g.Expect(got.Status.FailedIPs).To(ConsistOf(theirs.FloatingIP))
		g.Expect(got.Status.FloatingIPNetwork).NotTo(BeNil())
		g.Expect(got.Status.FloatingIPNetwork.ID).To(Equal(ext))
	}, eventually, poll).Should(Succeed())

	// maxIPs: a fourth machine waits, and is told why.
	w4 := newMachine(g, ns, "w4", "az2", false, ref)
	g.Eventually(func(g Gomega) {
		c := conditions.Get(getMachine(g, w4), infrav1.FloatingAddressFromPoolReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.WaitingForPoolAddressReason))
		g.Expect(c.Message).To(ContainSubstring("at most 3 addresses (spec.maxIPs)"))
	}, eventually, poll).Should(Succeed())
	g.Expect(cloud.Calls()["CreateFloatingIP"]).To(Equal(allocated + 1))

	// Deleting w3 releases the address the pool allocated for it (Delete); w4 then gets one.
	deleteMachinesOnly(g, w3)
	g.Eventually(func(g Gomega) {
		_, err := cloud.Network().GetFloatingIP(ctx, fresh.ID)
		g.Expect(clients.IsNotFound(err)).To(BeTrue(), "%v", err)
	}, eventually, poll).Should(Succeed())
	poolAddress(g, cloud, w4)

	// Deleting w2 takes the operator's address off its port and keeps it.
	deleteMachinesOnly(g, w2)
	g.Eventually(func(g Gomega) {
		fip := fipAt(g, cloud, mine.FloatingIP)
		g.Expect(fip).NotTo(BeNil())
		g.Expect(fip.PortID).To(BeEmpty())
	}, eventually, poll).Should(Succeed())

	// A tenant of the namespace writes an IPAddress of the pool that holds another cluster's
	// address, now on a port, for a claim of its own, and deletes the claim: the address is
	// left on its port.
	net, err := cloud.Network().ListNetworks(ctx, networks.ListOpts{Name: "k8s-clusterapi-cluster-" + ns + "-c"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(net).To(HaveLen(1))
	port, err := cloud.Network().CreatePort(ctx, ports.CreateOpts{NetworkID: net[0].ID, Name: "theirs"})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = cloud.Network().UpdateFloatingIP(ctx, theirs.ID, floatingips.UpdateOpts{PortID: &port.ID})
	g.Expect(err).NotTo(HaveOccurred())
	evil := &ipamv1.IPAddressClaim{ObjectMeta: metav1.ObjectMeta{Name: "evil", Namespace: ns}, Spec: ipamv1.IPAddressClaimSpec{
		PoolRef: ipamv1.IPPoolReference{APIGroup: infrav1alpha1.GroupVersion.Group, Kind: "OpenStackFloatingIPPool", Name: "pool"}}}
	g.Expect(env.Client.Create(ctx, evil)).To(Succeed())
	forged := &ipamv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: "forged", Namespace: ns}, Spec: ipamv1.IPAddressSpec{
		ClaimRef: ipamv1.IPAddressClaimReference{Name: "evil"}, PoolRef: evil.Spec.PoolRef, Address: theirs.FloatingIP, Prefix: ptr.To(int32(32))}}
	g.Expect(env.Client.Create(ctx, forged)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, evil)).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(forged), &ipamv1.IPAddress{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the pool deletes an IPAddress whose claim is gone: %v", err)
	}, eventually, poll).Should(Succeed())
	g.Expect(fipAt(g, cloud, theirs.FloatingIP).PortID).To(Equal(port.ID), "another cluster's address stays on its port")
	g.Expect(eventReasons(g, ns)).To(ContainElement("AddressNotReleased"))

	// An address the pool allocated and kept (what Retain leaves) is released with the pool.
	spare, err := cloud.Network().CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: ext, Description: marks.Ours})
	g.Expect(err).NotTo(HaveOccurred())

	// The pool waits for its claims while deleted, then releases what it allocated and lets go.
	g.Expect(env.Client.Delete(ctx, pool)).To(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pool), &infrav1alpha1.OpenStackFloatingIPPool{})).To(Succeed())
	}, "1s", poll).Should(Succeed())
	deleteAllMachines(g, ns, w1, w4)
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(pool), &infrav1alpha1.OpenStackFloatingIPPool{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
	}, eventually, poll).Should(Succeed())
	kept, err := cloud.Network().ListFloatingIPs(ctx, floatingips.ListOpts{})
	g.Expect(err).NotTo(HaveOccurred())
	var addressesLeft []string
	for _, f := range kept {
		addressesLeft = append(addressesLeft, f.FloatingIP)
		g.Expect(f.Description).NotTo(Equal(marks.Ours), "the pool's addresses are released with it")
	}
	g.Expect(addressesLeft).To(ContainElements(mine.FloatingIP, theirs.FloatingIP))
	_, err = cloud.Network().GetFloatingIP(ctx, spare.ID)
	g.Expect(clients.IsNotFound(err)).To(BeTrue(), "the pool's kept address is released with it: %v", err)
}

// A machine whose floatingIPPoolRef names no API group is told which field to set, and claims
// nothing.
func TestFloatingIPPoolRefWithoutAPIGroupIsReported(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("fip-pool-ref")
	cloud := newCloud(t, g, ns)
	addMachineImages(cloud)
	osc := newCluster(g, ns, false, managedSpec(), true)
	g.Eventually(func(g Gomega) {
		g.Expect(get(g, osc).Status.Initialization).NotTo(BeNil())
	}, eventually, poll).Should(Succeed())
	markInfrastructureProvisioned(g, ns)
	w := newMachine(g, ns, "w", "az1", false, func(s *infrav1.OpenStackMachineSpec) {
		s.FloatingIPPoolRef = &corev1.TypedLocalObjectReference{Kind: "OpenStackFloatingIPPool", Name: "pool"}
	})
	g.Eventually(func(g Gomega) {
		c := conditions.Get(getMachine(g, w), infrav1.FloatingAddressFromPoolReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.FloatingIPPoolRefErrorReason))
		g.Expect(c.Message).To(HavePrefix("spec.floatingIPPoolRef.apiGroup: not set"))
	}, eventually, poll).Should(Succeed())
	claims := &ipamv1.IPAddressClaimList{}
	g.Expect(env.Client.List(ctx, claims, client.InNamespace(ns))).To(Succeed())
	g.Expect(claims.Items).To(BeEmpty())
	deleteAllMachines(g, ns, w)
}

// deleteMachinesOnly deletes machines and waits until their finalizers have run, leaving the
// namespace's other machines.
func deleteMachinesOnly(g *WithT, machines ...*infrav1.OpenStackMachine) {
	for _, m := range machines {
		g.Expect(env.Client.Delete(ctx, m)).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		for _, m := range machines {
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(m), &infrav1.OpenStackMachine{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s: %v", m.Name, err)
		}
	}, eventually, poll).Should(Succeed())
}
