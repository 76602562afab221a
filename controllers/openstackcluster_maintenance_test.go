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

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

// setMaintenance sets the zone-maintenance annotation of osc ("" removes it).
func setMaintenance(g *WithT, osc *infrav1.OpenStackCluster, zones string) {
	g.Eventually(func() error {
		cur := &infrav1.OpenStackCluster{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(osc), cur); err != nil {
			return err
		}
		if zones == "" {
			delete(cur.Annotations, infrav1.ZoneMaintenanceAnnotation)
		} else {
			if cur.Annotations == nil {
				cur.Annotations = map[string]string{}
			}
			cur.Annotations[infrav1.ZoneMaintenanceAnnotation] = zones
		}
		return env.Client.Update(ctx, cur)
	}, eventually, poll).Should(Succeed())
}

// externalDNSReads does what ExternalDNS's crd source does when it reads the cluster's
// DNSEndpoint: status.observedGeneration becomes its generation.
func externalDNSReads(g Gomega, osc *infrav1.OpenStackCluster) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(dnsEndpointGVK)
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: osc.Namespace, Name: osc.Name + "-apiserver"}, obj)).To(Succeed())
	g.Expect(unstructured.SetNestedField(obj.Object, obj.GetGeneration(), "status", "observedGeneration")).To(Succeed())
	g.Expect(env.Client.Status().Update(ctx, obj)).To(Succeed())
}

// adminStates are the admin_state_up of every member of the zone's load balancer.
func adminStates(g Gomega, cloud *fakeopenstack.Cloud, namespace, az string) []bool {
	lb := lbsIn(cloud)[zones.Name(namespace, "c", az)]
	tree, err := cloud.LoadBalancer().GetLoadBalancerStatuses(ctx, lb.ID)
	g.Expect(err).NotTo(HaveOccurred())
	var up []bool
	for _, l := range tree.Loadbalancer.Listeners {
		for _, p := range l.Pools {
			ms, err := cloud.LoadBalancer().ListMembers(ctx, p.ID, nil)
			g.Expect(err).NotTo(HaveOccurred())
			for _, m := range ms {
				up = append(up, m.AdminStateUp)
			}
		}
	}
	return up
}

// membersOnline reports every member of both zones' load balancers ONLINE, as the health
// monitors of a working control plane would.
func membersOnline(g Gomega, cloud *fakeopenstack.Cloud, osc *infrav1.OpenStackCluster, machines ...*infrav1.OpenStackMachine) {
	online := map[string]string{}
	for _, m := range machines {
		got := getMachine(g, m)
		for _, a := range got.Status.Addresses {
			online[a.Address] = "ONLINE"
		}
	}
	for _, e := range get(g, osc).Status.APIServerLoadBalancers {
		cloud.SetOperatingStatus(e.ID, "ONLINE", online)
	}
}

// twoZoneCluster is a cluster with a load balancer per zone in az1 and az2, publishing DNS with a
// 1 s TTL (its load balancers are looked at every 10 s), changed by edit, and a control plane
// machine per zone, in a namespace named after prefix.
func twoZoneCluster(t *testing.T, g *WithT, prefix string, edit func(*infrav1.OpenStackClusterSpec)) (string, *fakeopenstack.Cloud, *infrav1.OpenStackCluster, *infrav1.OpenStackMachine, *infrav1.OpenStackMachine) {
	ns := testNamespace(prefix)
	azs := []string{"az1", "az2"}
	cloud := newCloud(t, g, ns)
	cloud.SetAvailabilityZones(azs...)
	addMachineImages(cloud)
	n := addLBNetwork(t, g, cloud, azs...)
	spec := multiAZSpec(n, azs...)
	spec.APIServerLoadBalancer.DNS = &infrav1.APIServerDNS{Publish: infrav1.DNSPublishDNSEndpoint, TTL: 1}
	if edit != nil {
		edit(&spec)
	}
	osc := newCluster(g, ns, false, spec, true)
	g.Eventually(func(g Gomega) { lbReady(g, osc) }, eventually, poll).Should(Succeed())
	markInfrastructureProvisioned(g, ns)
	return ns, cloud, osc, newMachine(g, ns, "cp-az1", "az1", true), newMachine(g, ns, "cp-az2", "az2", true)
}

func TestZoneMaintenanceWithdrawsWaitsDrainsAndReturns(t *testing.T) {
	g := NewWithT(t)
	azs := []string{"az1", "az2"}
	ns, cloud, osc, cp1, cp2 := twoZoneCluster(t, g, "maintenance", nil)

	var entries []infrav1.LoadBalancer
	g.Eventually(func(g Gomega) {
		for _, m := range []*infrav1.OpenStackMachine{cp1, cp2} {
			g.Expect(conditions.IsTrue(getMachine(g, m), infrav1.APIServerIngressReadyCondition)).To(BeTrue())
		}
		membersOnline(g, cloud, osc, cp1, cp2)
		got := get(g, osc)
		entries = got.Status.APIServerLoadBalancers
		g.Expect(got.Status.ZonesReady).To(Equal("2/2"))
		targets, _, _ := publishedTargets(g, got)
		g.Expect(targets).To(ConsistOf(entries[0].IP, entries[1].IP))
		c := conditions.Get(got, infrav1.ZoneMaintenanceReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.NotRequiredReason))
		for _, e := range entries {
			g.Expect(e.Health).To(Equal(infrav1.LoadBalancerHealthy))
		}
	}, eventually, poll).Should(Succeed())

	// az1 is taken out: it leaves DNS first, and its machine keeps its connections while
	// ExternalDNS has not taken the records up.
	setMaintenance(g, osc, "az1")
	g.Eventually(func(g Gomega) {
		got := get(g, osc)
		targets, _, _ := publishedTargets(g, got)
		g.Expect(targets).To(Equal([]string{entries[1].IP}))
		g.Expect(got.Status.APIServerLoadBalancers[0].Maintenance).To(Equal(&infrav1.ZoneMaintenance{Phase: infrav1.ZoneWithdrawing}))
		c := conditions.Get(got, infrav1.ZoneMaintenanceReadyCondition)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(infrav1.ZoneWithdrawingReason))
		g.Expect(c.Message).To(Equal("taking out of service: az1 (waiting for ExternalDNS to take up the records without it)"))
		g.Expect(conditions.Get(got, infrav1.APIServerDNSReadyCondition).Message).To(HaveSuffix("withdrawn: az1 (in maintenance)"))
		g.Expect(got.Status.ZonesReady).To(Equal("1/2 (maintenance: az1)"))
		g.Expect(conditions.IsTrue(got, infrav1.ReadyCondition)).To(BeTrue(), "maintenance does not make the cluster unready")
		g.Expect(controlPlaneDomains(got)).To(Equal(map[string]bool{"az1": false, "az2": true}), "control plane machines leave a zone in maintenance")
		g.Expect(got.Status.APIServerLoadBalancers[0].FailureDomainWithdrawal.Reason).To(Equal(infrav1.WithdrawnMaintenance))
	}, eventually, poll).Should(Succeed())
	g.Expect(adminStates(g, cloud, ns, "az1")).To(Equal([]bool{true, true}))

	// ExternalDNS reads the records; after their 1 s TTL, az1's machine is disabled.
	g.Eventually(func(g Gomega) { externalDNSReads(g, osc) }, eventually, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		got := get(g, osc)
		mt := got.Status.APIServerLoadBalancers[0].Maintenance
		g.Expect(mt).NotTo(BeNil())
		g.Expect(mt.Phase).To(Equal(infrav1.ZoneInMaintenance))
		g.Expect(mt.WithdrawnAt).NotTo(BeNil())
		c := conditions.Get(got, infrav1.ZoneMaintenanceReadyCondition)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Message).To(HavePrefix("in maintenance: az1"))
		g.Expect(adminStates(g, cloud, ns, "az1")).To(Equal([]bool{false, false}))
		g.Expect(conditions.Get(getMachine(g, cp1), infrav1.APIServerIngressReadyCondition).Message).To(ContainSubstring("disabled member"))
	}, eventually, poll).Should(Succeed())
	g.Expect(adminStates(g, cloud, ns, "az2")).To(Equal([]bool{true, true}), "the other zone's machine is untouched")
	g.Expect(membership(g, cloud, ns, azs...)).To(Equal(map[string][]string{"az1": {"cp-az1"}, "az2": {"cp-az2"}}), "members are never deleted")

	// az2 too: it is the last zone that serves, and stays.
	setMaintenance(g, osc, "az1,az2")
	g.Eventually(func(g Gomega) {
		got := get(g, osc)
		c := conditions.Get(got, infrav1.ZoneMaintenanceReadyCondition)
		g.Expect(c.Reason).To(Equal(infrav1.LastServingZoneReason))
		g.Expect(c.Message).To(Equal("zone az2 is not taken out of service: it is the last zone that serves the API (az1 is in maintenance); " +
			"it stays published and its machines keep their connections"))
		g.Expect(got.Status.APIServerLoadBalancers[1].Maintenance).To(BeNil())
		targets, _, _ := publishedTargets(g, got)
		g.Expect(targets).To(Equal([]string{entries[1].IP}))
		g.Expect(eventReasons(g, ns)).To(ContainElements("WithdrawingZone", "ZoneInMaintenance", "DisabledMember", infrav1.LastServingZoneReason))
	}, eventually, poll).Should(Succeed())

	// The mark cleared: az1's machine is enabled again, and az1 is published once it serves.
	setMaintenance(g, osc, "")
	g.Eventually(func(g Gomega) {
		g.Expect(adminStates(g, cloud, ns, "az1")).To(Equal([]bool{true, true}))
		membersOnline(g, cloud, osc, cp1, cp2)
		got := get(g, osc)
		g.Expect(got.Status.APIServerLoadBalancers[0].Maintenance).To(BeNil())
		targets, _, _ := publishedTargets(g, got)
		g.Expect(targets).To(ConsistOf(entries[0].IP, entries[1].IP))
		g.Expect(conditions.Get(got, infrav1.ZoneMaintenanceReadyCondition).Reason).To(Equal(infrav1.NotRequiredReason))
		g.Expect(eventReasons(g, ns)).To(ContainElements("ZoneReturned", "EnabledMember", "ControlPlaneFailureDomainWithdrawn"))
		// Serving again, az1 waits out the return delay before control plane machines may go
		// there again.
		w := got.Status.APIServerLoadBalancers[0].FailureDomainWithdrawal
		g.Expect(w).NotTo(BeNil())
		g.Expect(w.ServingSince).NotTo(BeNil())
		g.Expect(controlPlaneDomains(got)).To(Equal(map[string]bool{"az1": false, "az2": true}))
		g.Expect(conditions.Get(got, infrav1.FailureDomainsReadyCondition).Message).To(ContainSubstring("az1 (withdrawn from control plane machines: in maintenance since "))
	}, eventually, poll).Should(Succeed())
}

// controlPlaneDomains are the failure domains osc reports, with whether each is for control
// plane machines.
func controlPlaneDomains(osc *infrav1.OpenStackCluster) map[string]bool {
	out := map[string]bool{}
	for _, fd := range osc.Status.FailureDomains {
		out[fd.Name] = ptr.Deref(fd.ControlPlane, false)
	}
	return out
}

func TestFailureDomainOfAZoneThatCannotTakeTrafficIsWithdrawnFromControlPlaneMachines(t *testing.T) {
	g := NewWithT(t)
	ns, cloud, osc, cp1, cp2 := twoZoneCluster(t, g, "handover", func(spec *infrav1.OpenStackClusterSpec) {
		spec.APIServerLoadBalancer.WithdrawFailedZones = ptr.To(true)
	})
	var entries []infrav1.LoadBalancer
	g.Eventually(func(g Gomega) {
		membersOnline(g, cloud, osc, cp1, cp2)
		got := get(g, osc)
		entries = got.Status.APIServerLoadBalancers
		g.Expect(got.Status.ZonesReady).To(Equal("2/2"))
		for _, e := range entries {
			g.Expect(zones.Serves(&e, 6443)).To(BeTrue(), "zone %s serves", e.AvailabilityZone)
		}
		g.Expect(controlPlaneDomains(got)).To(Equal(map[string]bool{"az1": true, "az2": true}))
	}, eventually, poll).Should(Succeed())

	// az2's control plane stops answering its health monitor.
	address := internalAddress(g, cp2)
	cloud.SetOperatingStatus(entries[1].ID, "ERROR", map[string]string{address: "ERROR"})
	g.Eventually(func(g Gomega) {
		got := get(g, osc)
		g.Expect(got.Status.APIServerLoadBalancers[1].Health).To(Equal(infrav1.LoadBalancerUnhealthy))
		g.Expect(controlPlaneDomains(got)).To(Equal(map[string]bool{"az1": true, "az2": false}))
		g.Expect(got.Status.APIServerLoadBalancers[1].FailureDomainWithdrawal.Reason).To(Equal(infrav1.WithdrawnUnhealthy))
		g.Expect(conditions.Get(got, infrav1.FailureDomainsReadyCondition).Message).To(ContainSubstring("az2 (withdrawn from control plane machines: its load balancer cannot take traffic since "))
		g.Expect(eventReasons(g, ns)).To(ContainElement("ControlPlaneFailureDomainWithdrawn"))
	}, eventually, poll).Should(Succeed())

	// Then az1's too: it is the last control plane failure domain and stays one.
	cloud.SetOperatingStatus(entries[0].ID, "ERROR", map[string]string{internalAddress(g, cp1): "ERROR"})
	g.Eventually(func(g Gomega) {
		got := get(g, osc)
		g.Expect(got.Status.APIServerLoadBalancers[0].Health).To(Equal(infrav1.LoadBalancerUnhealthy))
	}, eventually, poll).Should(Succeed())
	g.Expect(controlPlaneDomains(get(g, osc))).To(Equal(map[string]bool{"az1": true, "az2": false}))

	// Both serve again: az2 comes back only after the return delay.
	membersOnline(g, cloud, osc, cp1, cp2)
	g.Eventually(func(g Gomega) {
		got := get(g, osc)
		g.Expect(got.Status.ZonesReady).To(Equal("2/2"))
		w := got.Status.APIServerLoadBalancers[1].FailureDomainWithdrawal
		g.Expect(w).NotTo(BeNil())
		g.Expect(w.ServingSince).NotTo(BeNil())
		g.Expect(conditions.Get(got, infrav1.FailureDomainsReadyCondition).Message).To(ContainSubstring("serving again, given back at "))
	}, eventually, poll).Should(Succeed())
	g.Expect(controlPlaneDomains(get(g, osc))).To(Equal(map[string]bool{"az1": true, "az2": false}))
}

// internalAddress is the machine's first address, as its status records it.
func internalAddress(g Gomega, m *infrav1.OpenStackMachine) string {
	var address string
	g.Eventually(func(g Gomega) {
		got := getMachine(g, m)
		g.Expect(got.Status.Addresses).NotTo(BeEmpty())
		address = got.Status.Addresses[0].Address
	}, eventually, poll).Should(Succeed())
	return address
}
