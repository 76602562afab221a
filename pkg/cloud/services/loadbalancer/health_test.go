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

package loadbalancer

import (
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

func TestHealthRules(t *testing.T) {
	pool := func(port int, members ...string) infrav1.LoadBalancerPool {
		p := infrav1.LoadBalancerPool{Name: "p", Port: port}
		for i := 0; i+1 < len(members); i += 2 {
			p.Members = append(p.Members, infrav1.LoadBalancerMember{Name: members[i], OperatingStatus: members[i+1]})
		}
		return p
	}
	for _, tc := range []struct {
		name                    string
		provisioning, operating string
		pools                   []infrav1.LoadBalancerPool
		healthy                 bool
		why                     string
	}{
		{name: "ACTIVE and ONLINE", provisioning: "ACTIVE", operating: "ONLINE", healthy: true},
		{name: "ONLINE with no member yet (a pool without members is up)", provisioning: "ACTIVE", operating: "ONLINE", pools: []infrav1.LoadBalancerPool{pool(6443)}, healthy: true},
		{name: "DEGRADED with a member ONLINE on the API port", provisioning: "ACTIVE", operating: "DEGRADED",
			pools: []infrav1.LoadBalancerPool{pool(6443, "cp-0", "ERROR", "cp-1", "ONLINE"), pool(8132, "cp-0", "ERROR", "cp-1", "ERROR")}, healthy: true},
		{name: "DEGRADED with members ONLINE only on another port", provisioning: "ACTIVE", operating: "DEGRADED",
			pools: []infrav1.LoadBalancerPool{pool(6443, "cp-0", "ERROR"), pool(8132, "cp-0", "ONLINE")},
			why:   "load balancer lb is DEGRADED with no member ONLINE on port 6443 (members on port 6443: cp-0 ERROR)"},
		{name: "ERROR: every member down", provisioning: "ACTIVE", operating: "ERROR", pools: []infrav1.LoadBalancerPool{pool(6443, "cp-0", "ERROR")},
			why: "load balancer lb is ERROR (members on port 6443: cp-0 ERROR)"},
		{name: "OFFLINE: no report from its amphora yet, or disabled", provisioning: "ACTIVE", operating: "OFFLINE", why: "load balancer lb is OFFLINE"},
		{name: "being updated (a member added): it serves on", provisioning: "PENDING_UPDATE", operating: "ONLINE", healthy: true},
		{name: "being created", provisioning: "PENDING_CREATE", operating: "OFFLINE", why: "load balancer lb is PENDING_CREATE"},
		{name: "being deleted", provisioning: "PENDING_DELETE", operating: "ONLINE", why: "load balancer lb is PENDING_DELETE"},
		{name: "in ERROR", provisioning: "ERROR", operating: "ONLINE", why: "load balancer lb is ERROR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			healthy, why := zones.Healthy(&infrav1.LoadBalancer{Name: "lb", ProvisioningStatus: tc.provisioning, OperatingStatus: tc.operating, Pools: tc.pools}, 6443)
			g.Expect(healthy).To(Equal(tc.healthy))
			g.Expect(why).To(Equal(tc.why))
		})
	}
}

func TestPublishedAddressesAreTheServingZonesAndNeverNone(t *testing.T) {
	g := NewWithT(t)
	zone := func(ip string, healthy bool, member string) infrav1.LoadBalancer {
		lb := infrav1.LoadBalancer{IP: ip, Healthy: ptr.To(healthy), Pools: []infrav1.LoadBalancerPool{{Port: 9345}, {Port: 6443}}}
		if member != "" {
			lb.Pools[1].Members = []infrav1.LoadBalancerMember{{Name: "cp", OperatingStatus: member}}
			lb.Pools[0].Members = []infrav1.LoadBalancerMember{{Name: "cp", OperatingStatus: "ONLINE"}}
		}
		return lb
	}
	publish := func(lbs ...infrav1.LoadBalancer) ([]string, bool) { return zones.PublishedAddresses(lbs, 6443) }

	got, none := publish(zone("172.24.4.11", true, "ONLINE"), zone("172.24.4.10", true, "ONLINE"))
	g.Expect(got).To(Equal([]string{"172.24.4.10", "172.24.4.11"}))
	g.Expect(none).To(BeFalse())

	got, none = publish(zone("172.24.4.10", true, "ONLINE"), zone("172.24.4.11", false, "ERROR"))
	g.Expect(got).To(Equal([]string{"172.24.4.10"}), "the unhealthy zone is withdrawn")
	g.Expect(none).To(BeFalse())

	got, _ = publish(zone("172.24.4.10", true, "ONLINE"), zone("172.24.4.11", true, ""))
	g.Expect(got).To(Equal([]string{"172.24.4.10"}), "a healthy zone with no control plane machine behind it serves nothing")

	got, _ = publish(zone("172.24.4.10", true, "ONLINE"), zone("172.24.4.11", true, "OFFLINE"))
	g.Expect(got).To(Equal([]string{"172.24.4.10"}), "only an ONLINE member on the API server port counts")

	got, none = publish(zone("172.24.4.10", true, ""), zone("172.24.4.11", true, ""))
	g.Expect(got).To(Equal([]string{"172.24.4.10", "172.24.4.11"}), "no machine anywhere yet: every healthy zone")
	g.Expect(none).To(BeFalse())

	got, none = publish(zone("172.24.4.10", false, ""), zone("172.24.4.11", false, "ERROR"), zone("", false, ""))
	g.Expect(got).To(Equal([]string{"172.24.4.10", "172.24.4.11"}), "with no healthy zone, every address rather than none")
	g.Expect(none).To(BeTrue())

	got, none = publish(zone("", false, ""))
	g.Expect(got).To(BeEmpty(), "nothing to publish yet")
	g.Expect(none).To(BeFalse())
}

// healthyZone is one zone of a cluster that publishes DNS, converged and healthy.
func healthyZone(t *testing.T, g *WithT) (*world, *Service, *zones.Desired, zones.Outcome) {
	t.Helper()
	w := newWorld(t, "az1")
	s := w.service()
	d := w.desired("az1")
	d.HealthPoll = requeue.DNSHealth
	ready, _ := converge(t, s, d, nil)
	g.Expect(ready.Status.Healthy).To(HaveValue(BeTrue()))
	return w, s, d, ready
}

func TestZoneHealthFollowsOctaviaAndIsReported(t *testing.T) {
	g := NewWithT(t)
	w, s, d, ready := healthyZone(t, g)
	g.Expect(ready.RequeueAfter).To(Equal(requeue.DNSHealth), "a ready zone of a cluster publishing DNS is polled")
	g.Expect(ready.Status.ProvisioningStatus).To(Equal("ACTIVE"))
	g.Expect(ready.Status.OperatingStatus).To(Equal("ONLINE"))
	g.Expect(ready.Status.Pools).To(HaveLen(2))
	w.events()

	// Two control plane machines join; then both go down, as the health monitors see it.
	tree, err := w.cloud.LoadBalancer().GetLoadBalancerStatuses(ctx, ready.Status.ID)
	g.Expect(err).NotTo(HaveOccurred())
	for _, addr := range []string{"10.6.0.10", "10.6.0.11"} {
		for _, p := range poolsOf(tree.Loadbalancer) {
			_, err := w.cloud.LoadBalancer().CreateMember(ctx, p.ID, pools.CreateMemberOpts{Name: "cp-" + addr, Address: addr, ProtocolPort: 6443})
			g.Expect(err).NotTo(HaveOccurred())
			_ = s.Reconcile(ctx, d, ready.Status) // reads the load balancer, which settles the change
		}
	}
	w.cloud.SetOperatingStatus(ready.Status.ID, "ERROR", map[string]string{"10.6.0.10": "ERROR", "10.6.0.11": "ERROR"})
	down := s.Reconcile(ctx, d, ready.Status)
	g.Expect(down.State).To(Equal(zones.StateUnhealthy))
	g.Expect(down.Reason).To(Equal(infrav1.LoadBalancerUnhealthyReason))
	g.Expect(down.RequeueAfter).To(Equal(requeue.Health))
	g.Expect(down.Status.Healthy).To(HaveValue(BeFalse()))
	g.Expect(down.Message).To(ContainSubstring("is ERROR (members on port 6443: cp-10.6.0.10 ERROR, cp-10.6.0.11 ERROR)"))
	g.Expect(w.events()).To(ContainSubstring("LoadBalancerUnhealthy"))

	// One comes back: DEGRADED with a member ONLINE on the API port is healthy again.
	w.cloud.SetOperatingStatus(ready.Status.ID, "DEGRADED", map[string]string{"10.6.0.11": "ONLINE"})
	up := s.Reconcile(ctx, d, down.Status)
	g.Expect(up.State).To(Equal(zones.StateReady))
	g.Expect(up.Status.Healthy).To(HaveValue(BeTrue()))
	g.Expect(w.events()).To(ContainSubstring("LoadBalancerHealthy"))
	again := s.Reconcile(ctx, d, up.Status)
	g.Expect(again.State).To(Equal(zones.StateReady))
	g.Expect(w.events()).To(BeEmpty(), "no transition, no event")
}

func TestZoneFloatingIPIsKeptAcrossRecreationAndNeverReleased(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1", "az2")
	s := w.service()
	d := w.desired("az2")
	d.FloatingIP.Address, d.FloatingIP.Field = "172.24.4.77", zones.LBPath.Child("availabilityZoneSubnets").Index(1).Child("floatingIP")
	first, _ := converge(t, s, d, nil)
	g.Expect(first.Status.IP).To(Equal("172.24.4.77"), "the zone gets exactly the operator's address")

	// In ERROR, deleted and recreated: the address follows.
	w.memory.ErrorInterval = 0
	w.cloud.SetLoadBalancerStatus(first.Status.ID, "ERROR")
	var out zones.Outcome
	for range ErrorObservations {
		out = s.Reconcile(ctx, d, first.Status)
	}
	g.Expect(out.Message).To(ContainSubstring("recreated"))
	again, _ := converge(t, s, d, out.Status)
	g.Expect(again.Status.ID).NotTo(Equal(first.Status.ID))
	g.Expect(again.Status.IP).To(Equal("172.24.4.77"))

	// The zone's removal, and the cluster's deletion, leave the address allocated.
	spec := &zones.Input{LoadBalancer: &infrav1.APIServerLoadBalancer{AvailabilityZoneSubnets: []infrav1.AZSubnetMapping{
		{AvailabilityZone: "az1"}, {AvailabilityZone: "az2", FloatingIP: ptr.To("172.24.4.77")}}}}
	g.Expect(zones.UserFloatingIPs(spec)).To(Equal([]string{"172.24.4.77"}))
	// The fake settles a deletion at its next read: a few calls, counted rather than timed.
	done := false
	for i := 0; i < 10 && !done; i++ {
		var err error
		done, err = s.Delete(ctx, &zones.Removal{Namespace: "ns", Cluster: "c", AllTagged: true, KeepAddresses: zones.UserFloatingIPs(spec), ExternalNetworkID: w.ext})
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(done).To(BeTrue())
	g.Expect(w.loadBalancers()).To(BeEmpty())
	fips := w.floatingIPs()
	g.Expect(fips).To(HaveLen(1))
	g.Expect(fips[0].FloatingIP).To(Equal("172.24.4.77"))
}

func TestZoneFloatingIPInUseElsewhereIsRefusedBeforeCreating(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	s := w.service()
	// Someone else's server holds the address.
	p, err := w.cloud.Network().CreatePort(ctx, ports.CreateOpts{NetworkID: w.network.ID, Name: "someone-else"})
	g.Expect(err).NotTo(HaveOccurred())
	port := p.ID
	_, err = w.cloud.Network().CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: w.ext, FloatingIP: "172.24.4.88", PortID: port})
	g.Expect(err).NotTo(HaveOccurred())
	d := w.desired("az1")
	d.FloatingIP.Address, d.FloatingIP.Field = "172.24.4.88", zones.LBPath.Child("availabilityZoneSubnets").Index(0).Child("floatingIP")

	out := s.Reconcile(ctx, d, nil)
	g.Expect(out.State).To(Equal(zones.StateInvalid))
	g.Expect(out.Reason).To(Equal(infrav1.LoadBalancerConfigurationErrorReason))
	g.Expect(out.Message).To(HavePrefix("spec.apiServerLoadBalancer.availabilityZoneSubnets[0].floatingIP: floating IP 172.24.4.88 is associated with port " + port))
	g.Expect(w.loadBalancers()).To(BeEmpty(), "nothing is created")
}

// The same refusal holds for a load balancer found again without its status (a restore, a move)
// or adopted: the address is never taken from where it is associated.
func TestZoneFloatingIPInUseElsewhereIsNeverTakenFromThere(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	s := w.service()
	d := w.desired("az1")
	d.FloatingIP = nil
	converge(t, s, d, nil)
	p, err := w.cloud.Network().CreatePort(ctx, ports.CreateOpts{NetworkID: w.network.ID, Name: "someone-else"})
	g.Expect(err).NotTo(HaveOccurred())
	fip, err := w.cloud.Network().CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: w.ext, FloatingIP: "172.24.4.88", PortID: p.ID})
	g.Expect(err).NotTo(HaveOccurred())

	d = w.desired("az1")
	d.FloatingIP.Address, d.FloatingIP.Field = "172.24.4.88", zones.LBPath.Child("availabilityZoneSubnets").Index(0).Child("floatingIP")
	out := s.Reconcile(ctx, d, nil)
	g.Expect(out.State).To(Equal(zones.StateInvalid))
	g.Expect(out.Message).To(HavePrefix("spec.apiServerLoadBalancer.availabilityZoneSubnets[0].floatingIP: floating IP 172.24.4.88 is associated with port " + p.ID))
	after, err := w.cloud.Network().ListFloatingIPs(ctx, floatingips.ListOpts{ID: fip.ID})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after[0].PortID).To(Equal(p.ID), "still where its owner put it")
}

func TestAZoneStaysHealthyWhileOctaviaAppliesAChange(t *testing.T) {
	g := NewWithT(t)
	w, s, d, ready := healthyZone(t, g)
	w.events()

	// A member is being added: Octavia says PENDING_UPDATE, and the load balancer serves on.
	w.cloud.SetLoadBalancerStatus(ready.Status.ID, "PENDING_UPDATE")
	busy := s.Reconcile(ctx, d, ready.Status)
	g.Expect(busy.State).To(Equal(zones.StateWaiting))
	g.Expect(busy.Status.Healthy).To(HaveValue(BeTrue()), "a change being applied is no outage")
	g.Expect(busy.Status.Pools).To(HaveLen(2), "what the status tree says is kept")
	w.cloud.SetLoadBalancerStatus(ready.Status.ID, "ACTIVE")
	after := s.Reconcile(ctx, d, busy.Status)
	g.Expect(after.State).To(Equal(zones.StateReady))
	g.Expect(w.events()).To(BeEmpty(), "no transition, no event")

	// Being created or deleted, or in ERROR, it takes no traffic.
	for _, status := range []string{"PENDING_DELETE", "ERROR"} {
		w.cloud.SetLoadBalancerStatus(ready.Status.ID, status)
		out := s.Reconcile(ctx, d, after.Status)
		g.Expect(out.Status.Healthy).To(HaveValue(BeFalse()), status)
	}
}

func TestOnlyFinalAddressesArePublishable(t *testing.T) {
	g := NewWithT(t)
	osc := &infrav1.OpenStackCluster{}
	osc.Spec.APIServerLoadBalancer = &infrav1.APIServerLoadBalancer{AvailabilityZoneSubnets: []infrav1.AZSubnetMapping{{AvailabilityZone: "az1"}, {AvailabilityZone: "az2"}}}
	osc.Status.ExternalNetwork = &infrav1.NetworkStatus{ID: "ext"}
	osc.Status.APIServerLoadBalancers = []infrav1.LoadBalancer{
		{AvailabilityZone: "az1", ID: "1", InternalIP: "10.50.0.5", IP: "172.24.4.10"},
		{AvailabilityZone: "az2", ID: "2", InternalIP: "10.50.1.5", IP: "10.50.1.5"}, // floating IP not attached yet
		{AvailabilityZone: "az3", ID: "3"},
	}
	pub := zones.Publish(RecordedInput(osc, "c"))
	g.Expect(pub.Addresses).To(Equal([]string{"172.24.4.10"}), "a VIP standing in for a floating IP to come is not published")
	g.Expect(pub.Withdrawn).To(Equal([]string{"az2 (no public address yet)", "az3 (no public address yet)"}))

	osc.Spec.DisableAPIServerFloatingIP = ptr.To(true)
	g.Expect(zones.Publish(RecordedInput(osc, "c")).Addresses).To(Equal([]string{"10.50.1.5", "172.24.4.10"}), "without floating IPs the VIPs are the addresses")

	single := &infrav1.OpenStackCluster{}
	single.Status.APIServerLoadBalancer = &infrav1.LoadBalancer{ID: "s", InternalIP: "10.0.0.5", IP: "172.24.4.20"}
	single.Status.ExternalNetwork = &infrav1.NetworkStatus{ID: "ext"}
	g.Expect(zones.Publish(RecordedInput(single, "c")).Addresses).To(Equal([]string{"172.24.4.20"}))
}
