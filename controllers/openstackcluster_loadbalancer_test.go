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
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

// lbNetwork is the network the operator pre-creates for the VIPs: one subnet per zone, routed to
// the external network so that floating IPs reach the VIPs.
type lbNetwork struct {
	id      string
	subnets map[string]string
}

func addLBNetwork(t *testing.T, g *WithT, cloud *fakeopenstack.Cloud, azs ...string) lbNetwork {
	t.Helper()
	n := lbNetwork{id: cloud.AddNetwork("lb-net", false), subnets: map[string]string{}}
	public, err := cloud.Network().ListNetworks(ctx, networks.ListOpts{Name: "public"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(public).To(HaveLen(1))
	router, err := cloud.Network().CreateRouter(ctx, routers.CreateOpts{Name: "operator-router", GatewayInfo: &routers.GatewayInfo{NetworkID: public[0].ID}})
	g.Expect(err).NotTo(HaveOccurred())
	for i, az := range azs {
		n.subnets[az] = cloud.AddSubnet(n.id, "lb-"+az, fmt.Sprintf("10.20.%d.0/24", i))
		_, err := cloud.Network().AddRouterInterface(ctx, router.ID, routers.AddInterfaceOpts{SubnetID: n.subnets[az]})
		g.Expect(err).NotTo(HaveOccurred())
	}
	return n
}

func multiAZSpec(n lbNetwork, azs ...string) infrav1.OpenStackClusterSpec {
	spec := managedSpec()
	spec.ControlPlaneEndpoint = &clusterv1.APIEndpoint{Host: "api.example.com", Port: 6443}
	spec.APIServerLoadBalancer = &infrav1.APIServerLoadBalancer{
		Enabled: ptr.To(true), AdditionalPorts: []int{8132},
		Network: &infrav1.NetworkParam{ID: ptr.To(n.id)},
	}
	for _, az := range azs {
		spec.APIServerLoadBalancer.AvailabilityZoneSubnets = append(spec.APIServerLoadBalancer.AvailabilityZoneSubnets,
			infrav1.AZSubnetMapping{AvailabilityZone: az, Subnet: infrav1.SubnetParam{ID: ptr.To(n.subnets[az])}})
	}
	return spec
}

func lbsIn(cloud *fakeopenstack.Cloud) map[string]loadbalancers.LoadBalancer {
	all, _ := cloud.LoadBalancer().ListLoadBalancers(ctx, loadbalancers.ListOpts{})
	out := map[string]loadbalancers.LoadBalancer{}
	for _, lb := range all {
		out[lb.Name] = lb
	}
	return out
}

func lbReady(g Gomega, osc *infrav1.OpenStackCluster) *infrav1.OpenStackCluster {
	got := get(g, osc)
	g.Expect(conditions.IsTrue(got, infrav1.APIServerLoadBalancersReadyCondition)).To(BeTrue(), "%v", conditions.Get(got, infrav1.APIServerLoadBalancersReadyCondition))
	g.Expect(got.Status.Initialization).NotTo(BeNil())
	g.Expect(got.Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
	return got
}

func TestMultiAZClusterConvergesRebuildsRemovesAndDeletes(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("multi-az")
	cloud := newCloud(t, g, ns)
	cloud.SetAvailabilityZones("az1", "az2", "az3")
	n := addLBNetwork(t, g, cloud, "az1", "az2", "az3")
	osc := newCluster(g, ns, false, multiAZSpec(n, "az1", "az2", "az3"), true)

	var got *infrav1.OpenStackCluster
	g.Eventually(func(g Gomega) { got = lbReady(g, osc) }, eventually, poll).Should(Succeed())
	g.Expect(conditions.IsTrue(got, infrav1.ReadyCondition)).To(BeTrue())
	g.Expect(got.Spec.ControlPlaneEndpoint.Host).To(Equal("api.example.com"), "the DNS host is never replaced")

	entries := got.Status.APIServerLoadBalancers
	g.Expect(entries).To(HaveLen(3))
	lbs := lbsIn(cloud)
	g.Expect(lbs).To(HaveLen(3))
	for i, az := range []string{"az1", "az2", "az3"} {
		e := entries[i]
		name := fmt.Sprintf("k8s-clusterapi-cluster-%s-c-%s-kubeapi", ns, az)
		g.Expect(e.AvailabilityZone).To(Equal(az))
		g.Expect(e.Name).To(Equal(name))
		lb := lbs[name]
		g.Expect(e.ID).To(Equal(lb.ID))
		g.Expect(lb.VipSubnetID).To(Equal(n.subnets[az]))
		g.Expect(lb.AvailabilityZone).To(Equal(az))
		g.Expect(e.InternalIP).To(Equal(lb.VipAddress))
		g.Expect(e.IP).To(HavePrefix("172.24.4."))
		g.Expect(e.LoadBalancerNetwork.ID).To(Equal(n.id))
		g.Expect(e.LoadBalancerNetwork.Subnets[0].ID).To(Equal(n.subnets[az]))
		ls, _ := cloud.LoadBalancer().ListListeners(ctx, listeners.ListOpts{LoadbalancerID: lb.ID})
		g.Expect(ls).To(HaveLen(2))
	}
	g.Expect(got.Status.APIServerLoadBalancer).To(Equal(&entries[0]), "the mirror is the first mapping's entry")
	fips, _ := cloud.Network().ListFloatingIPs(ctx, floatingips.ListOpts{})
	g.Expect(fips).To(HaveLen(3))

	// Status wiped (a restore from backup, a move without status): rebuilt from the cloud, with
	// the same load balancers.
	wipeStatus(g, osc, func(s *infrav1.OpenStackClusterStatus) { s.APIServerLoadBalancers, s.APIServerLoadBalancer = nil, nil })
	g.Eventually(func(g Gomega) {
		again := lbReady(g, osc)
		g.Expect(again.Status.APIServerLoadBalancers).To(HaveLen(3))
		for i := range entries {
			g.Expect(again.Status.APIServerLoadBalancers[i].ID).To(Equal(entries[i].ID))
			g.Expect(again.Status.APIServerLoadBalancers[i].IP).To(Equal(entries[i].IP))
		}
	}, eventually, poll).Should(Succeed())
	g.Expect(lbsIn(cloud)).To(HaveLen(3))
	fips, _ = cloud.Network().ListFloatingIPs(ctx, floatingips.ListOpts{})
	g.Expect(fips).To(HaveLen(3))

	// az3 leaves the spec: its load balancer and floating IP go, the others stay.
	g.Eventually(func() error {
		cur := get(g, osc)
		cur.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets = cur.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets[:2]
		return env.Client.Update(ctx, cur)
	}, eventually, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		cur := lbReady(g, osc)
		g.Expect(cur.Status.APIServerLoadBalancers).To(HaveLen(2))
		g.Expect(lbsIn(cloud)).To(HaveLen(2))
		g.Expect(lbsIn(cloud)).NotTo(HaveKey(entries[2].Name))
		fips, _ := cloud.Network().ListFloatingIPs(ctx, floatingips.ListOpts{})
		g.Expect(fips).To(HaveLen(2))
	}, eventually, poll).Should(Succeed())

	// Deleting the cluster leaves only what the operator made.
	g.Expect(env.Client.Delete(ctx, get(g, osc))).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(osc), &infrav1.OpenStackCluster{})
		g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		g.Expect(err).To(HaveOccurred())
	}, eventually, poll).Should(Succeed())
	g.Expect(lbsIn(cloud)).To(BeEmpty())
	fips, _ = cloud.Network().ListFloatingIPs(ctx, floatingips.ListOpts{})
	g.Expect(fips).To(BeEmpty())
	c := countResources(cloud)
	g.Expect(c.networks).To(Equal(2), "the external network and the operator's load balancer network")
	g.Expect(c.groups).To(BeZero())
}

func TestLegacyClusterMigratesInPlace(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("migrate")
	cloud := newCloud(t, g, ns)
	n := addLBNetwork(t, g, cloud, "az1", "az2")
	spec := multiAZSpec(n)
	spec.APIServerLoadBalancer.AvailabilityZoneSubnets = nil
	spec.APIServerLoadBalancer.Subnets = []infrav1.SubnetParam{{ID: ptr.To(n.subnets["az1"])}}
	osc := newCluster(g, ns, false, spec, true)

	var legacy *infrav1.LoadBalancer
	g.Eventually(func(g Gomega) {
		got := lbReady(g, osc)
		legacy = got.Status.APIServerLoadBalancer
		g.Expect(legacy.Name).To(Equal("k8s-clusterapi-cluster-" + ns + "-c-kubeapi"))
		g.Expect(got.Status.APIServerLoadBalancers).To(BeEmpty())
	}, eventually, poll).Should(Succeed())

	g.Eventually(func() error {
		cur := get(g, osc)
		cur.Spec.APIServerLoadBalancer.Subnets = nil
		cur.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets = multiAZSpec(n, "az1", "az2").APIServerLoadBalancer.AvailabilityZoneSubnets
		return env.Client.Update(ctx, cur)
	}, eventually, poll).Should(Succeed())

	g.Eventually(func(g Gomega) {
		got := lbReady(g, osc)
		g.Expect(got.Status.APIServerLoadBalancers).To(HaveLen(2))
		first := got.Status.APIServerLoadBalancers[0]
		g.Expect(first.AvailabilityZone).To(Equal("az1"))
		g.Expect(first.ID).To(Equal(legacy.ID), "the legacy load balancer is renamed, not replaced")
		g.Expect(first.Name).To(Equal("k8s-clusterapi-cluster-" + ns + "-c-az1-kubeapi"))
		g.Expect(first.InternalIP).To(Equal(legacy.InternalIP))
		g.Expect(first.IP).To(Equal(legacy.IP))
		g.Expect(got.Status.APIServerLoadBalancer.ID).To(Equal(legacy.ID))
	}, eventually, poll).Should(Succeed())
	lbs := lbsIn(cloud)
	g.Expect(lbs).To(HaveLen(2))
	g.Expect(lbs).To(HaveKey("k8s-clusterapi-cluster-" + ns + "-c-az2-kubeapi"))
	ls, _ := cloud.LoadBalancer().ListListeners(ctx, listeners.ListOpts{LoadbalancerID: legacy.ID})
	for _, l := range ls {
		g.Expect(l.Name).To(HavePrefix("k8s-clusterapi-cluster-" + ns + "-c-az1-kubeapi-"))
	}

	// Back to one load balancer: az2's goes, az1's is renamed back and keeps its addresses.
	g.Eventually(func() error {
		cur := get(g, osc)
		cur.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets = nil
		return env.Client.Update(ctx, cur)
	}, eventually, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		got := lbReady(g, osc)
		g.Expect(got.Status.APIServerLoadBalancers).To(BeEmpty())
		g.Expect(got.Status.APIServerLoadBalancer.ID).To(Equal(legacy.ID))
		g.Expect(got.Status.APIServerLoadBalancer.Name).To(Equal("k8s-clusterapi-cluster-" + ns + "-c-kubeapi"))
		g.Expect(got.Status.APIServerLoadBalancer.IP).To(Equal(legacy.IP))
		g.Expect(lbsIn(cloud)).To(HaveLen(1))
	}, eventually, poll).Should(Succeed())
}

// A migration keeps serving: clients still on the single load balancer's address reach every
// zone's control plane machine until the operator says they have moved (no DNS published here).
func TestAMigrationKeepsEveryZonesMachinesBehindTheFormerAddress(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("migrate-serving")
	azs := []string{"az1", "az2"}
	cloud := newCloud(t, g, ns)
	cloud.SetAvailabilityZones(azs...)
	addMachineImages(cloud)
	n := addLBNetwork(t, g, cloud, azs...)
	spec := multiAZSpec(n)
	spec.APIServerLoadBalancer.AvailabilityZoneSubnets = nil
	spec.APIServerLoadBalancer.Subnets = []infrav1.SubnetParam{{ID: ptr.To(n.subnets["az1"])}}
	osc := newCluster(g, ns, false, spec, true)
	g.Eventually(func(g Gomega) { lbReady(g, osc) }, eventually, poll).Should(Succeed())
	markInfrastructureProvisioned(g, ns)
	newMachine(g, ns, "cp-az1", "az1", true)
	newMachine(g, ns, "cp-az2", "az2", true)
	g.Eventually(func(g Gomega) {
		g.Expect(membership(g, cloud, ns, "")).To(Equal(map[string][]string{"": {"cp-az1", "cp-az2"}}))
	}, eventually, poll).Should(Succeed())

	g.Eventually(func() error {
		cur := get(g, osc)
		cur.Spec.APIServerLoadBalancer.Subnets = nil
		cur.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets = multiAZSpec(n, azs...).APIServerLoadBalancer.AvailabilityZoneSubnets
		return env.Client.Update(ctx, cur)
	}, eventually, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		got := lbReady(g, osc)
		g.Expect(got.Status.APIServerLoadBalancers).To(HaveLen(2))
		g.Expect(got.Status.APIServerLoadBalancers[0].FormerSingle).NotTo(BeNil())
		g.Expect(membership(g, cloud, ns, azs...)).To(Equal(map[string][]string{"az1": {"cp-az1", "cp-az2"}, "az2": {"cp-az2"}}),
			"the former address keeps both zones' machines; the new zone's has its own")
		g.Expect(conditions.Get(got, infrav1.APIServerLoadBalancersReadyCondition).Message).To(ContainSubstring(
			"keeps every zone's control plane machines until the OpenStackCluster carries the annotation " + infrav1.ClientsMovedAnnotation))
	}, eventually, poll).Should(Succeed())
	// It stays so: nothing takes the second zone's machine off the former address meanwhile.
	touch(g, osc)
	g.Consistently(func(g Gomega) {
		g.Expect(membership(g, cloud, ns, azs...)).To(Equal(map[string][]string{"az1": {"cp-az1", "cp-az2"}, "az2": {"cp-az2"}}))
	}, 3*time.Second, poll).Should(Succeed())

	g.Eventually(func() error {
		cur := get(g, osc)
		cur.Annotations = map[string]string{infrav1.ClientsMovedAnnotation: "true"}
		return env.Client.Update(ctx, cur)
	}, eventually, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(get(g, osc).Status.APIServerLoadBalancers[0].FormerSingle).To(BeNil())
		g.Expect(membership(g, cloud, ns, azs...)).To(Equal(map[string][]string{"az1": {"cp-az1"}, "az2": {"cp-az2"}}))
		g.Expect(eventReasons(g, ns)).To(ContainElement("ReleasedFormerLoadBalancer"))
	}, eventually, poll).Should(Succeed())
}

// touch edits an annotation, which starts a reconcile.
func touch(g *WithT, osc *infrav1.OpenStackCluster) {
	g.Eventually(func() error {
		cur := get(g, osc)
		if cur.Annotations == nil {
			cur.Annotations = map[string]string{}
		}
		cur.Annotations["test.capo-multiaz.io/touched"] = time.Now().Format(time.RFC3339Nano)
		return env.Client.Update(ctx, cur)
	}, eventually, poll).Should(Succeed())
}

func TestOneZoneFailingDoesNotHoldBackTheOthers(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("one-fails")
	cloud := newCloud(t, g, ns)
	cloud.SetAvailabilityZones("az1", "az2", "az3")
	n := addLBNetwork(t, g, cloud, "az1", "az2", "az3")
	elsewhere := cloud.AddNetwork("elsewhere", false)
	wrong := cloud.AddSubnet(elsewhere, "wrong", "10.99.0.0/24")
	spec := multiAZSpec(n, "az1", "az2", "az3")
	spec.APIServerLoadBalancer.AvailabilityZoneSubnets[1].Subnet.ID = ptr.To(wrong)
	osc := newCluster(g, ns, false, spec, true)

	g.Eventually(func(g Gomega) {
		got := get(g, osc)
		g.Expect(got.Status.APIServerLoadBalancers).To(HaveLen(2))
		for _, e := range got.Status.APIServerLoadBalancers {
			g.Expect(e.IP).To(HavePrefix("172.24.4."))
		}
		c := conditions.Get(got, infrav1.APIServerLoadBalancersReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(BeEquivalentTo("False"))
		g.Expect(c.Reason).To(Equal(infrav1.LoadBalancerConfigurationErrorReason))
		g.Expect(c.Message).To(ContainSubstring("az2: spec.apiServerLoadBalancer.availabilityZoneSubnets[1].subnet.id: subnet wrong"))
		g.Expect(c.Message).To(ContainSubstring("not on network " + n.id))
		g.Expect(got.Status.Initialization).NotTo(BeNil(), "reachable through the zones that work")
	}, eventually, poll).Should(Succeed())
	g.Expect(lbsIn(cloud)).To(HaveLen(2))

	// A load balancer in ERROR in az3 is reported, then recreated; az1 stays as it is.
	got := get(g, osc)
	az1, az3 := got.Status.APIServerLoadBalancers[0], got.Status.APIServerLoadBalancers[1]
	cloud.SetLoadBalancerStatus(az3.ID, "ERROR")
	// Nothing watches the cloud: the change is noticed on the next reconcile, which an edit of
	// the object starts here rather than the sync period.
	touch(g, osc)
	g.Eventually(func(g Gomega) {
		cur := get(g, osc)
		g.Expect(cur.Status.APIServerLoadBalancers).To(HaveLen(2))
		g.Expect(cur.Status.APIServerLoadBalancers[0]).To(Equal(az1))
		g.Expect(cur.Status.APIServerLoadBalancers[1].ID).NotTo(Equal(az3.ID), "%v", conditions.Get(cur, infrav1.APIServerLoadBalancersReadyCondition))
		g.Expect(cur.Status.APIServerLoadBalancers[1].IP).To(Equal(az3.IP), "the floating IP survives the recreation")
	}, time.Minute, poll).Should(Succeed())
}

func TestTwoZoneCreateReportsEachResourceOnce(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("events-two-zones")
	cloud := newCloud(t, g, ns)
	n := addLBNetwork(t, g, cloud, "az1", "az2")
	osc := newCluster(g, ns, false, multiAZSpec(n, "az1", "az2"), true)
	g.Eventually(func(g Gomega) { lbReady(g, osc) }, eventually, poll).Should(Succeed())
	got := get(g, osc)
	g.Expect(got.Status.ZonesReady).To(Equal("2/2"))
	g.Expect(conditions.Get(got, infrav1.APIServerLoadBalancersReadyCondition).Message).To(HavePrefix("2/2 zones ready: az1 VIP "))
	g.Expect(conditions.Get(got, infrav1.ReadyCondition).Reason).To(Equal(clusterv1.ReadyReason))

	// Every creation is an event of its own that names its resource: the event library keys on
	// the resource, so two zones never fold into one series.
	want := map[string]bool{}
	for _, az := range []string{"az1", "az2"} {
		lb := fmt.Sprintf("k8s-clusterapi-cluster-%s-c-%s-kubeapi", ns, az)
		want["CreatedLoadBalancer "+lb] = true
		for _, port := range []int{6443, 8132} {
			for _, kind := range []string{"Listener", "Pool", "HealthMonitor"} {
				want[fmt.Sprintf("Created%s %s-%d", kind, lb, port)] = true
			}
		}
	}
	fips := map[string]bool{}
	for _, e := range got.Status.APIServerLoadBalancers {
		want["CreatedFloatingIP "+e.IP] = true
		fips[e.IP] = true
	}
	g.Expect(fips).To(HaveLen(2))
	g.Eventually(func(g Gomega) {
		seen := map[string]int{}
		for _, e := range eventsIn(g, ns) {
			g.Expect(e.Reason).NotTo(HavePrefix("Adopted"), "a clean create adopts nothing: %s", e.Note)
			if e.Related == nil || !strings.HasPrefix(e.Reason, "Created") {
				continue
			}
			key := e.Reason + " " + e.Related.Name
			seen[key]++
			g.Expect(e.Note).To(ContainSubstring(e.Related.Name), "the message names the resource")
			g.Expect(e.Series).To(BeNil(), "%s was recorded more than once", key)
		}
		for key := range want {
			g.Expect(seen).To(HaveKeyWithValue(key, 1), "one event for %s", key)
		}
	}, eventually, poll).Should(Succeed())
}

func TestPollsWhileOctaviaBuildsReadOnlyTheLoadBalancers(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("polls")
	// Octavia's 8 s are on a clock of the test's, which moves only when the polls were counted:
	// a busy machine cannot let the load balancers settle before the polls are seen.
	clk := fakeopenstack.NewClock(time.Now())
	cloud := newCloudWith(t, g, ns, fakeopenstack.Options{PendingDuration: 8 * time.Second, Now: clk.Now})
	n := addLBNetwork(t, g, cloud, "az1", "az2")
	osc := newCluster(g, ns, false, multiAZSpec(n, "az1", "az2"), true)
	g.Eventually(func(g Gomega) {
		got := get(g, osc)
		g.Expect(got.Status.APIServerLoadBalancers).To(HaveLen(2))
		g.Expect(conditions.GetReason(got, infrav1.APIServerLoadBalancersReadyCondition)).To(Equal(infrav1.WaitingForLoadBalancerReason))
	}, eventually, poll).Should(Succeed())

	// Octavia builds both load balancers for 8 s: the polls meanwhile read their status trees,
	// not the network, router, security groups and failure domains the first reconcile found
	// ready (at most one reconcile that began before the reset reads those).
	cloud.ResetCalls()
	g.Eventually(func(g Gomega) {
		g.Expect(cloud.Calls()["GetLoadBalancerStatuses"]).To(BeNumerically(">=", 10))
	}, eventually, poll).Should(Succeed())
	calls := cloud.Calls()
	g.Expect(lbsIn(cloud)).To(HaveEach(HaveField("ProvisioningStatus", "PENDING_CREATE")), "the polls above happened while Octavia was building")
	g.Expect(calls["GetSecGroup"]).To(BeNumerically("<=", 2), "%v", calls)
	g.Expect(calls["ListComputeAvailabilityZones"]).To(BeNumerically("<=", 1), "%v", calls)
	g.Expect(calls["GetNetwork"]).To(BeNumerically("<=", 1), "%v", calls)

	// Once both are ready, a health poll reads everything again.
	clk.Advance(8 * time.Second)
	g.Eventually(func(g Gomega) { lbReady(g, osc) }, eventually, poll).Should(Succeed())
	cloud.ResetCalls()
	touch(g, osc)
	g.Eventually(func(g Gomega) {
		g.Expect(cloud.Calls()["GetSecGroup"]).To(BeNumerically(">=", 2))
	}, eventually, poll).Should(Succeed())
}
