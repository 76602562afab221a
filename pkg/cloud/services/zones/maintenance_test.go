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

package zones

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/outcome"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
)

// maintenanceCluster is a two-zone cluster publishing DNS with a 30 s TTL, both zones serving,
// whose zone-maintenance annotation names zones.
func maintenanceCluster(dns bool, zones ...string) *Input {
	in := &Input{Namespace: "ns", Cluster: "c", APIServerPort: 6443, Maintenance: zones,
		LoadBalancer: &infrav1.APIServerLoadBalancer{AvailabilityZoneSubnets: []infrav1.AZSubnetMapping{{AvailabilityZone: "az1"}, {AvailabilityZone: "az2"}}}}
	if dns {
		in.LoadBalancer.DNS = &infrav1.APIServerDNS{Publish: infrav1.DNSPublishDNSEndpoint, TTL: 30}
	}
	for i, az := range []string{"az1", "az2"} {
		in.Recorded.Zones = append(in.Recorded.Zones, servingZone(az, "172.24.4.1"+string(rune('0'+i))))
	}
	return in
}

// servingZone is the status entry of a zone whose load balancer serves the API.
func servingZone(az, ip string) infrav1.LoadBalancer {
	return infrav1.LoadBalancer{Name: "lb-" + az, ID: "id-" + az, AvailabilityZone: az, IP: ip, InternalIP: "10.0.0." + ip[len(ip)-1:],
		Healthy: ptr.To(true), Health: infrav1.LoadBalancerHealthy,
		Pools: []infrav1.LoadBalancerPool{{Port: 6443, Members: []infrav1.LoadBalancerMember{{Name: "cp-" + az, OperatingStatus: "ONLINE"}}}}}
}

// step runs Maintain over in's recorded entries at now, and records the result as the
// controller would; notes gathers the reasons of its notes.
func step(notes *[]string, in *Input, now time.Time) Maintenance {
	zones := make([]infrav1.LoadBalancer, len(in.Recorded.Zones))
	for i := range zones {
		zones[i] = *in.Recorded.Zones[i].DeepCopy()
	}
	m := Maintain(in, zones, now)
	in.Recorded.Zones = zones
	for _, n := range m.Notes {
		*notes = append(*notes, n.Reason)
	}
	return m
}

func TestMaintenanceWithdrawsWaitsOutTheTTLThenDrains(t *testing.T) {
	g := NewWithT(t)
	var notes []string
	in := maintenanceCluster(true, "az1")
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

	m := step(&notes, in, now)
	g.Expect(in.Recorded.Zones[0].Maintenance).To(Equal(&infrav1.ZoneMaintenance{Phase: infrav1.ZoneWithdrawing}))
	g.Expect(m.Waiting).To(Equal([]string{"az1 (waiting for ExternalDNS to take up the records without it)"}))
	g.Expect(m.RequeueAfter).To(Equal(requeue.ExternalDNS))
	g.Expect(ZoneDrained(in.Recorded.Zones, "az1")).To(BeFalse(), "members keep their connections until the TTL has passed")
	pub := Publish(in)
	g.Expect(pub.Addresses).To(Equal([]string{"172.24.4.11"}), "the zone leaves DNS first")
	g.Expect(pub.Withdrawn).To(Equal([]string{"az1 (in maintenance)"}))
	g.Expect(notes).To(ContainElement("WithdrawingZone"))

	// ExternalDNS took the records up 10 s ago: 20 s of the TTL are left.
	MarkWithdrawn(in.Recorded.Zones, now.Add(-10*time.Second))
	m = step(&notes, in, now)
	g.Expect(m.RequeueAfter).To(Equal(20 * time.Second))
	g.Expect(m.Waiting[0]).To(ContainSubstring("its machines stop taking new connections at 2026-11-24T12:00:20Z"))
	g.Expect(ZoneDrained(in.Recorded.Zones, "az1")).To(BeFalse())

	m = step(&notes, in, now.Add(20*time.Second))
	g.Expect(m.Out).To(Equal([]string{"az1"}))
	g.Expect(m.Waiting).To(BeEmpty())
	g.Expect(m.RequeueAfter).To(BeZero())
	g.Expect(ZoneDrained(in.Recorded.Zones, "az1")).To(BeTrue())
	g.Expect(ZoneDrained(in.Recorded.Zones, "az2")).To(BeFalse())
	g.Expect(notes).To(ContainElement("ZoneInMaintenance"))

	// Every zone unhealthy but the one in maintenance: it still is not published.
	in.Recorded.Zones[1].Healthy = ptr.To(false)
	g.Expect(Publish(in).Addresses).To(Equal([]string{"172.24.4.11"}))
	in.Recorded.Zones[1].Healthy = ptr.To(true)

	// The mark removed: the zone comes back.
	in.Maintenance = nil
	m = step(&notes, in, now.Add(time.Minute))
	g.Expect(in.Recorded.Zones[0].Maintenance).To(BeNil())
	g.Expect(m.Requested).To(BeEmpty())
	g.Expect(ZoneDrained(in.Recorded.Zones, "az1")).To(BeFalse())
	g.Expect(Publish(in).Addresses).To(Equal([]string{"172.24.4.10", "172.24.4.11"}))
	g.Expect(notes).To(ContainElement("ZoneReturned"))
}

func TestMaintenanceRefusesTheLastServingZone(t *testing.T) {
	g := NewWithT(t)
	var notes []string
	now := time.Now()

	// Both named: the first goes, the second is the last that serves.
	in := maintenanceCluster(true, "az1", "az2")
	m := step(&notes, in, now)
	g.Expect(m.Refused).To(Equal([]string{"az2"}))
	g.Expect(in.Recorded.Zones[1].Maintenance).To(BeNil())
	g.Expect(Publish(in).Addresses).To(Equal([]string{"172.24.4.11"}))
	g.Expect(m.RefusalMessage(in, in.Recorded.Zones)).To(Equal(
		"zone az2 is not taken out of service: it is the last zone that serves the API (az1 is in maintenance); it stays published and its machines keep their connections"))

	// The other zone is down: the serving one stays.
	in = maintenanceCluster(true, "az2")
	in.Recorded.Zones[0].Healthy = ptr.To(false)
	m = step(&notes, in, now)
	g.Expect(m.Refused).To(Equal([]string{"az2"}))
	g.Expect(m.RefusalMessage(in, in.Recorded.Zones)).To(ContainSubstring("(az1 does not serve)"))

	// A zone that does not serve may always be taken out.
	in = maintenanceCluster(true, "az1")
	in.Recorded.Zones[0].Healthy = ptr.To(false)
	m = step(&notes, in, now)
	g.Expect(m.Refused).To(BeEmpty())
	g.Expect(in.Recorded.Zones[0].Maintenance).NotTo(BeNil())

	// A zone the spec does not map, or not made yet, is not counted.
	in = maintenanceCluster(true, "az9")
	m = step(&notes, in, now)
	g.Expect(m.Requested).To(BeEmpty())
}

func TestMaintenanceWithoutDNSDrainsAtOnce(t *testing.T) {
	g := NewWithT(t)
	var notes []string
	in := maintenanceCluster(false, "az2")
	m := step(&notes, in, time.Now())
	g.Expect(m.Out).To(Equal([]string{"az2"}))
	g.Expect(ZoneDrained(in.Recorded.Zones, "az2")).To(BeTrue())
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

func TestAZoneInMaintenanceIsNotUnhealthy(t *testing.T) {
	g := NewWithT(t)
	zones := []infrav1.LoadBalancer{
		{AvailabilityZone: "az1", Maintenance: &infrav1.ZoneMaintenance{Phase: infrav1.ZoneInMaintenance}},
		{AvailabilityZone: "az2", Maintenance: &infrav1.ZoneMaintenance{Phase: infrav1.ZoneWithdrawing}},
		{AvailabilityZone: "az3"},
	}
	unhealthy := func(az string) Outcome {
		return Outcome{AvailabilityZone: az, State: StateUnhealthy, Outcome: outcome.Outcome{Reason: infrav1.LoadBalancerUnhealthyReason, Message: "load balancer is ERROR"}}
	}
	outcomes := []Outcome{unhealthy("az1"), unhealthy("az2"), unhealthy("az3")}
	DrainedAsPlanned(outcomes, zones)
	g.Expect(outcomes[0].State).To(Equal(StateReady), "its members are disabled on purpose")
	g.Expect(outcomes[1].State).To(Equal(StateUnhealthy), "still taking connections: its health matters")
	g.Expect(outcomes[2].State).To(Equal(StateUnhealthy))
}

func TestTheSingleEntryMirrorsTheFirstZoneOnceItExists(t *testing.T) {
	g := NewWithT(t)
	spec := &Input{LoadBalancer: &infrav1.APIServerLoadBalancer{
		AvailabilityZoneSubnets: []infrav1.AZSubnetMapping{{AvailabilityZone: "az1"}, {AvailabilityZone: "az2"}}}}
	legacy := &infrav1.LoadBalancer{Name: "legacy", ID: "legacy-id"}
	// A migration's first reconciles: no zone entry for az1 yet, the legacy one stays recorded
	// (it is the first zone's known load balancer until then).
	g.Expect(MirrorFirst(spec, []infrav1.LoadBalancer{{AvailabilityZone: "az2", ID: "b"}}, legacy)).To(Equal(legacy))
	first := MirrorFirst(spec, []infrav1.LoadBalancer{{AvailabilityZone: "az2", ID: "b"}, {AvailabilityZone: "az1", ID: "legacy-id", Name: "renamed"}}, legacy)
	g.Expect(first).To(Equal(&infrav1.LoadBalancer{AvailabilityZone: "az1", ID: "legacy-id", Name: "renamed"}))
	// Zone discovery alone with every zone refused: nothing to mirror.
	g.Expect(MirrorFirst(&Input{LoadBalancer: &infrav1.APIServerLoadBalancer{}}, nil, nil)).To(BeNil())
}

// A zone waiting for ExternalDNS is looked at often for a minute, then once a minute: a wait that
// does not end costs the shared manager no more than any other stalled step. With DNS publishing
// refused there are no records to wait for.
func TestWaitingForExternalDNSSlowsDownAndRefusedDNSIsNoWait(t *testing.T) {
	g := NewWithT(t)
	var notes []string
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	in := maintenanceCluster(true, "az1")
	in.WithdrawingSince = now.Add(-10 * time.Second)
	g.Expect(step(&notes, in, now).RequeueAfter).To(Equal(requeue.ExternalDNS))
	in.WithdrawingSince = now.Add(-2 * ExternalDNSPatience)
	g.Expect(step(&notes, in, now).RequeueAfter).To(Equal(requeue.Config), "no faster than once a minute after a minute")

	in = maintenanceCluster(true, "az1")
	in.DNSRefused = true
	m := step(&notes, in, now)
	g.Expect(m.Out).To(Equal([]string{"az1"}), "refused DNS: nothing to wait for")
	g.Expect(m.Waiting).To(BeEmpty())
}
