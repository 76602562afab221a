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
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// maintenanceCluster is a two-zone cluster publishing DNS with a 30 s TTL, both zones serving,
// whose zone-maintenance annotation is annotation ("" for none).
func maintenanceCluster(annotation string, dns bool) *infrav1.OpenStackCluster {
	osc := &infrav1.OpenStackCluster{}
	if annotation != "" {
		osc.Annotations = map[string]string{infrav1.ZoneMaintenanceAnnotation: annotation}
	}
	osc.Spec.APIServerLoadBalancer = &infrav1.APIServerLoadBalancer{AvailabilityZoneSubnets: []infrav1.AZSubnetMapping{{AvailabilityZone: "az1"}, {AvailabilityZone: "az2"}}}
	if dns {
		osc.Spec.APIServerLoadBalancer.DNS = &infrav1.APIServerDNS{Publish: infrav1.DNSPublishDNSEndpoint, TTL: 30}
	}
	for i, az := range []string{"az1", "az2"} {
		osc.Status.APIServerLoadBalancers = append(osc.Status.APIServerLoadBalancers, servingZone(az, "172.24.4.1"+string(rune('0'+i))))
	}
	return osc
}

// servingZone is the status entry of a zone whose load balancer serves the API.
func servingZone(az, ip string) infrav1.LoadBalancer {
	return infrav1.LoadBalancer{Name: "lb-" + az, ID: "id-" + az, AvailabilityZone: az, IP: ip, InternalIP: "10.0.0." + ip[len(ip)-1:],
		Healthy: ptr.To(true), Health: infrav1.LoadBalancerHealthy,
		Pools: []infrav1.LoadBalancerPool{{Port: 6443, Members: []infrav1.LoadBalancerMember{{Name: "cp-" + az, OperatingStatus: "ONLINE"}}}}}
}

// step runs maintain over osc's recorded entries at now, and records the result as the
// controller would.
func step(s *Service, osc *infrav1.OpenStackCluster, now time.Time) Maintenance {
	zones := make([]infrav1.LoadBalancer, len(osc.Status.APIServerLoadBalancers))
	for i := range zones {
		zones[i] = *osc.Status.APIServerLoadBalancers[i].DeepCopy()
	}
	m := s.maintain(osc, zones, now)
	osc.Status.APIServerLoadBalancers = zones
	return m
}

func TestMaintenanceWithdrawsWaitsOutTheTTLThenDrains(t *testing.T) {
	g := NewWithT(t)
	mk := newMocked(t)
	s := mk.service()
	osc := maintenanceCluster("az1", true)
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

	m := step(s, osc, now)
	g.Expect(osc.Status.APIServerLoadBalancers[0].Maintenance).To(Equal(&infrav1.ZoneMaintenance{Phase: infrav1.ZoneWithdrawing}))
	g.Expect(m.Waiting).To(Equal([]string{"az1 (waiting for ExternalDNS to take up the records without it)"}))
	g.Expect(m.RequeueAfter).To(Equal(ExternalDNSPoll))
	g.Expect(ZoneDrained(&osc.Status, "az1")).To(BeFalse(), "members keep their connections until the TTL has passed")
	pub := Publish(osc)
	g.Expect(pub.Addresses).To(Equal([]string{"172.24.4.11"}), "the zone leaves DNS first")
	g.Expect(pub.Withdrawn).To(Equal([]string{"az1 (in maintenance)"}))
	g.Expect(mk.events()).To(ContainSubstring("WithdrawingZone"))

	// ExternalDNS took the records up 10 s ago: 20 s of the TTL are left.
	MarkWithdrawn(osc.Status.APIServerLoadBalancers, now.Add(-10*time.Second))
	m = step(s, osc, now)
	g.Expect(m.RequeueAfter).To(Equal(20 * time.Second))
	g.Expect(m.Waiting[0]).To(ContainSubstring("its machines stop taking new connections at 2026-11-24T12:00:20Z"))
	g.Expect(ZoneDrained(&osc.Status, "az1")).To(BeFalse())

	m = step(s, osc, now.Add(20*time.Second))
	g.Expect(m.Out).To(Equal([]string{"az1"}))
	g.Expect(m.Waiting).To(BeEmpty())
	g.Expect(m.RequeueAfter).To(BeZero())
	g.Expect(ZoneDrained(&osc.Status, "az1")).To(BeTrue())
	g.Expect(ZoneDrained(&osc.Status, "az2")).To(BeFalse())
	g.Expect(mk.events()).To(ContainSubstring("ZoneInMaintenance"))

	// Every zone unhealthy but the one in maintenance: it still is not published.
	osc.Status.APIServerLoadBalancers[1].Healthy = ptr.To(false)
	g.Expect(Publish(osc).Addresses).To(Equal([]string{"172.24.4.11"}))
	osc.Status.APIServerLoadBalancers[1].Healthy = ptr.To(true)

	// The mark removed: the zone comes back.
	delete(osc.Annotations, infrav1.ZoneMaintenanceAnnotation)
	m = step(s, osc, now.Add(time.Minute))
	g.Expect(osc.Status.APIServerLoadBalancers[0].Maintenance).To(BeNil())
	g.Expect(m.Requested).To(BeEmpty())
	g.Expect(ZoneDrained(&osc.Status, "az1")).To(BeFalse())
	g.Expect(Publish(osc).Addresses).To(Equal([]string{"172.24.4.10", "172.24.4.11"}))
	g.Expect(mk.events()).To(ContainSubstring("ZoneReturned"))
}

func TestMaintenanceRefusesTheLastServingZone(t *testing.T) {
	g := NewWithT(t)
	mk := newMocked(t)
	s := mk.service()
	now := time.Now()

	// Both named: the first goes, the second is the last that serves.
	osc := maintenanceCluster("az1, az2", true)
	m := step(s, osc, now)
	g.Expect(m.Refused).To(Equal([]string{"az2"}))
	g.Expect(osc.Status.APIServerLoadBalancers[1].Maintenance).To(BeNil())
	g.Expect(Publish(osc).Addresses).To(Equal([]string{"172.24.4.11"}))
	g.Expect(m.RefusalMessage(osc, osc.Status.APIServerLoadBalancers)).To(Equal(
		"zone az2 is not taken out of service: it is the last zone that serves the API (az1 is in maintenance); it stays published and its machines keep their connections"))

	// The other zone is down: the serving one stays.
	osc = maintenanceCluster("az2", true)
	osc.Status.APIServerLoadBalancers[0].Healthy = ptr.To(false)
	m = step(s, osc, now)
	g.Expect(m.Refused).To(Equal([]string{"az2"}))
	g.Expect(m.RefusalMessage(osc, osc.Status.APIServerLoadBalancers)).To(ContainSubstring("(az1 does not serve)"))

	// A zone that does not serve may always be taken out.
	osc = maintenanceCluster("az1", true)
	osc.Status.APIServerLoadBalancers[0].Healthy = ptr.To(false)
	m = step(s, osc, now)
	g.Expect(m.Refused).To(BeEmpty())
	g.Expect(osc.Status.APIServerLoadBalancers[0].Maintenance).NotTo(BeNil())

	// A zone the spec does not map, or not made yet, is not counted.
	osc = maintenanceCluster("az9", true)
	m = step(s, osc, now)
	g.Expect(m.Requested).To(BeEmpty())
}

func TestMaintenanceWithoutDNSDrainsAtOnce(t *testing.T) {
	g := NewWithT(t)
	s := newMocked(t).service()
	osc := maintenanceCluster("az2", false)
	m := step(s, osc, time.Now())
	g.Expect(m.Out).To(Equal([]string{"az2"}))
	g.Expect(ZoneDrained(&osc.Status, "az2")).To(BeTrue())
}

func TestMarkWithdrawnKeepsTheFirstTime(t *testing.T) {
	g := NewWithT(t)
	first := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	zones := []infrav1.LoadBalancer{
		{AvailabilityZone: "az1", Maintenance: &infrav1.ZoneMaintenance{Phase: infrav1.ZoneWithdrawing, WithdrawnAt: &first}},
		{AvailabilityZone: "az2", Maintenance: &infrav1.ZoneMaintenance{Phase: infrav1.ZoneWithdrawing}},
		{AvailabilityZone: "az3"},
	}
	MarkWithdrawn(zones, first.Add(time.Hour))
	g.Expect(zones[0].Maintenance.WithdrawnAt.Time).To(Equal(first.Time))
	g.Expect(zones[1].Maintenance.WithdrawnAt.Time).To(Equal(first.Add(time.Hour)))
	g.Expect(zones[2].Maintenance).To(BeNil())
}

func TestMembersOfAZoneInMaintenanceAreDisabledNeverDeleted(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1", "az2")
	s := w.service()
	var all []infrav1.LoadBalancer
	for _, az := range []string{"az1", "az2"} {
		out, _ := converge(t, s, w.desired(az), nil)
		all = append(all, *out.Status)
	}
	targets := []string{all[0].ID, all[1].ID} // cross-AZ: the machine is in both
	// listed are the members of every pool of both load balancers, as Octavia lists them
	// (the status tree does not say whether a member is enabled).
	listed := func() (out []pools.Member) {
		for _, lb := range all {
			tree, err := w.cloud.LoadBalancer().GetLoadBalancerStatuses(ctx, lb.ID)
			g.Expect(err).NotTo(HaveOccurred())
			for _, p := range poolsOf(tree.Loadbalancer) {
				ms, err := w.cloud.LoadBalancer().ListMembers(ctx, p.ID, nil)
				g.Expect(err).NotTo(HaveOccurred())
				out = append(out, ms...)
			}
		}
		return out
	}
	adminUp := func() (up []bool) {
		for _, mb := range listed() {
			up = append(up, mb.AdminStateUp)
		}
		return up
	}
	cp := Member{Name: "cp-1", Address: "10.6.0.11"}
	settle(t, s, all, targets, cp)
	g.Expect(adminUp()).To(Equal([]bool{true, true, true, true}))
	ids := func() (out []string) {
		for _, mb := range listed() {
			out = append(out, mb.ID)
		}
		return out
	}
	before := ids()

	drained := cp
	drained.Disabled = true
	settle(t, s, all, targets, drained)
	g.Expect(adminUp()).To(Equal([]bool{false, false, false, false}), "disabled in every load balancer")
	g.Expect(ids()).To(Equal(before), "never deleted and recreated")
	g.Expect(w.events()).To(ContainSubstring("DisabledMember"))

	settle(t, s, all, targets, cp)
	g.Expect(adminUp()).To(Equal([]bool{true, true, true, true}))
	g.Expect(ids()).To(Equal(before))
	g.Expect(w.events()).To(ContainSubstring("EnabledMember"))

	// A new machine of a zone in maintenance joins disabled.
	late := Member{Name: "cp-2", Address: "10.6.0.12", Disabled: true}
	settle(t, s, all, targets, late)
	joined := 0
	for _, mb := range listed() {
		if mb.Name == "cp-2" {
			joined++
			g.Expect(mb.AdminStateUp).To(BeFalse())
			g.Expect(mb.OperatingStatus).To(Equal("OFFLINE"))
		}
	}
	g.Expect(joined).To(Equal(4), "both pools of both load balancers")

	// Settled and not in maintenance: no member is listed.
	w.cloud.ResetCalls()
	done, err := s.ReconcileMembership(ctx, all, targets, []int{6443, 8132}, cp)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeTrue())
	g.Expect(w.cloud.Calls()).To(Equal(map[string]int{"GetLoadBalancerStatuses": 2}))
}

func TestAZoneInMaintenanceIsNotUnhealthy(t *testing.T) {
	g := NewWithT(t)
	zones := []infrav1.LoadBalancer{
		{AvailabilityZone: "az1", Maintenance: &infrav1.ZoneMaintenance{Phase: infrav1.ZoneInMaintenance}},
		{AvailabilityZone: "az2", Maintenance: &infrav1.ZoneMaintenance{Phase: infrav1.ZoneWithdrawing}},
		{AvailabilityZone: "az3"},
	}
	unhealthy := func(az string) Outcome {
		return Outcome{AvailabilityZone: az, State: StateUnhealthy, Reason: infrav1.LoadBalancerUnhealthyReason, Message: "load balancer is ERROR"}
	}
	outcomes := []Outcome{unhealthy("az1"), unhealthy("az2"), unhealthy("az3")}
	drainedAsPlanned(outcomes, zones)
	g.Expect(outcomes[0].State).To(Equal(StateReady), "its members are disabled on purpose")
	g.Expect(outcomes[1].State).To(Equal(StateUnhealthy), "still taking connections: its health matters")
	g.Expect(outcomes[2].State).To(Equal(StateUnhealthy))
}

func TestTheSingleEntryMirrorsTheFirstZoneOnceItExists(t *testing.T) {
	g := NewWithT(t)
	spec := &infrav1.OpenStackClusterSpec{APIServerLoadBalancer: &infrav1.APIServerLoadBalancer{
		AvailabilityZoneSubnets: []infrav1.AZSubnetMapping{{AvailabilityZone: "az1"}, {AvailabilityZone: "az2"}}}}
	legacy := &infrav1.LoadBalancer{Name: "legacy", ID: "legacy-id"}
	// A migration's first reconciles: no zone entry for az1 yet, the legacy one stays recorded
	// (it is the first zone's known load balancer until then).
	g.Expect(mirrorFirst(spec, []infrav1.LoadBalancer{{AvailabilityZone: "az2", ID: "b"}}, legacy)).To(Equal(legacy))
	first := mirrorFirst(spec, []infrav1.LoadBalancer{{AvailabilityZone: "az2", ID: "b"}, {AvailabilityZone: "az1", ID: "legacy-id", Name: "renamed"}}, legacy)
	g.Expect(first).To(Equal(&infrav1.LoadBalancer{AvailabilityZone: "az1", ID: "legacy-id", Name: "renamed"}))
	// Zone discovery alone with every zone refused: nothing to mirror.
	g.Expect(mirrorFirst(&infrav1.OpenStackClusterSpec{APIServerLoadBalancer: &infrav1.APIServerLoadBalancer{}}, nil, nil)).To(BeNil())
}
