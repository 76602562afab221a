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
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// handoverCluster is a cluster with a load balancer per zone in az1, az2 and az3, every zone
// serving, all three control plane failure domains.
func handoverCluster() *Input {
	in := &Input{Namespace: "ns", Cluster: "c", APIServerPort: 6443,
		LoadBalancer: &infrav1.APIServerLoadBalancer{AvailabilityZoneSubnets: []infrav1.AZSubnetMapping{{AvailabilityZone: "az1"}, {AvailabilityZone: "az2"}, {AvailabilityZone: "az3"}},
			WithdrawFailedZones: ptr.To(true)},
		ComputeZones: []string{"az1", "az2", "az3"}, ControlPlaneZones: []string{"az1", "az2", "az3"}}
	for i, az := range []string{"az1", "az2", "az3"} {
		in.Recorded.Zones = append(in.Recorded.Zones, servingZone(az, "172.24.4.1"+string(rune('0'+i))))
	}
	return in
}

// handOver runs HandOver over in's recorded entries at now after edit changed them (how the
// zones stand in this reconcile), records the result as the controller would, and returns the
// reasons of its notes.
func handOver(in *Input, now time.Time, edit func(zones []infrav1.LoadBalancer)) ([]string, Handover) {
	zones := make([]infrav1.LoadBalancer, len(in.Recorded.Zones))
	for i := range zones {
		zones[i] = *in.Recorded.Zones[i].DeepCopy()
	}
	if edit != nil {
		edit(zones)
	}
	h := HandOver(in, zones, now)
	in.Recorded.Zones = zones
	var notes []string
	for _, n := range h.Notes {
		notes = append(notes, n.Reason)
	}
	return notes, h
}

func unhealthy(az string) func([]infrav1.LoadBalancer) {
	return func(zones []infrav1.LoadBalancer) { SetHealth(EntryFor(zones, az), false) }
}

func withdrawnZones(in *Input) []string {
	var out []string
	for _, fd := range ControlPlaneDomains([]clusterv1.FailureDomain{{Name: "az1"}, {Name: "az2"}, {Name: "az3"}}, nil, in.Recorded.Zones) {
		if !ptr.Deref(fd.ControlPlane, true) {
			out = append(out, fd.Name)
		}
	}
	return out
}

func TestHandOverWithdrawsAFailedZoneAndGivesItBackAfterTheDelay(t *testing.T) {
	g := NewWithT(t)
	in := handoverCluster()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

	notes, _ := handOver(in, now, nil)
	g.Expect(notes).To(BeEmpty())
	g.Expect(withdrawnZones(in)).To(BeEmpty(), "every zone serves")

	notes, h := handOver(in, now.Add(time.Second), unhealthy("az2"))
	g.Expect(notes).To(Equal([]string{"ControlPlaneFailureDomainWithdrawn"}))
	g.Expect(withdrawnZones(in)).To(Equal([]string{"az2"}))
	g.Expect(in.Recorded.Zones[1].FailureDomainWithdrawal.Reason).To(Equal(infrav1.WithdrawnUnhealthy))
	g.Expect(h.RequeueAfter).To(BeZero(), "nothing is due while the zone is down")

	// Healthy again: the delay starts, and the requeue is due when it ends.
	back := now.Add(time.Minute)
	notes, h = handOver(in, back, func(zones []infrav1.LoadBalancer) { SetHealth(&zones[1], true) })
	g.Expect(notes).To(BeEmpty())
	g.Expect(withdrawnZones(in)).To(Equal([]string{"az2"}), "a zone serving again waits out the delay")
	g.Expect(in.Recorded.Zones[1].FailureDomainWithdrawal.ServingSince.Time).To(Equal(back))
	g.Expect(h.RequeueAfter).To(Equal(ControlPlaneReturnDelay))

	// A flap restarts the delay.
	_, _ = handOver(in, back.Add(time.Minute), unhealthy("az2"))
	g.Expect(in.Recorded.Zones[1].FailureDomainWithdrawal.ServingSince).To(BeNil())
	again := back.Add(90 * time.Second)
	_, _ = handOver(in, again, func(zones []infrav1.LoadBalancer) { SetHealth(&zones[1], true) })
	notes, h = handOver(in, again.Add(ControlPlaneReturnDelay-time.Second), nil)
	g.Expect(notes).To(BeEmpty())
	g.Expect(withdrawnZones(in)).To(Equal([]string{"az2"}), "the delay counts from the last time the zone came back")
	g.Expect(h.RequeueAfter).To(Equal(time.Second))

	notes, _ = handOver(in, again.Add(ControlPlaneReturnDelay), nil)
	g.Expect(notes).To(Equal([]string{"ControlPlaneFailureDomainReturned"}))
	g.Expect(withdrawnZones(in)).To(BeEmpty())
}

func TestHandOverWithdrawsAFailedZoneOnlyWhenAsked(t *testing.T) {
	g := NewWithT(t)
	in := handoverCluster()
	in.LoadBalancer.WithdrawFailedZones = nil
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	_, _ = handOver(in, now, unhealthy("az2"))
	g.Expect(withdrawnZones(in)).To(BeEmpty(), "one machine down takes a one-machine zone's load balancer down too")
	_, _ = handOver(in, now, func(zones []infrav1.LoadBalancer) {
		zones[0].Maintenance = &infrav1.ZoneMaintenance{Phase: infrav1.ZoneWithdrawing}
	})
	g.Expect(withdrawnZones(in)).To(Equal([]string{"az1"}), "planned maintenance withdraws a zone either way")

	// Turned off while a failed zone is withdrawn: it is offered again at once.
	in = handoverCluster()
	_, _ = handOver(in, now, unhealthy("az2"))
	g.Expect(withdrawnZones(in)).To(Equal([]string{"az2"}))
	in.LoadBalancer.WithdrawFailedZones = ptr.To(false)
	_, _ = handOver(in, now.Add(time.Second), nil)
	g.Expect(withdrawnZones(in)).To(BeEmpty())
}

func TestHandOverWithdrawsAZoneInMaintenance(t *testing.T) {
	g := NewWithT(t)
	in := handoverCluster()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	_, _ = handOver(in, now, func(zones []infrav1.LoadBalancer) {
		zones[0].Maintenance = &infrav1.ZoneMaintenance{Phase: infrav1.ZoneWithdrawing}
	})
	g.Expect(withdrawnZones(in)).To(Equal([]string{"az1"}))
	g.Expect(in.Recorded.Zones[0].FailureDomainWithdrawal.Reason).To(Equal(infrav1.WithdrawnMaintenance))

	// Out of maintenance and healthy: back after the delay like any other zone.
	_, _ = handOver(in, now.Add(time.Minute), func(zones []infrav1.LoadBalancer) { zones[0].Maintenance = nil })
	g.Expect(withdrawnZones(in)).To(Equal([]string{"az1"}))
	_, _ = handOver(in, now.Add(time.Minute+ControlPlaneReturnDelay), nil)
	g.Expect(withdrawnZones(in)).To(BeEmpty())
}

func TestHandOverKeepsTheLastControlPlaneFailureDomain(t *testing.T) {
	g := NewWithT(t)
	in := handoverCluster()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	_, _ = handOver(in, now, unhealthy("az1"))
	_, _ = handOver(in, now.Add(time.Second), unhealthy("az2"))
	g.Expect(withdrawnZones(in)).To(Equal([]string{"az1", "az2"}))

	notes, _ := handOver(in, now.Add(2*time.Second), unhealthy("az3"))
	g.Expect(notes).To(BeEmpty())
	g.Expect(withdrawnZones(in)).To(Equal([]string{"az1", "az2"}), "az3 is the last control plane failure domain: it stays")
	g.Expect(in.Recorded.Zones[2].FailureDomainWithdrawal.Deferred).To(BeTrue(), "out of service, kept")

	// It stays out of service while az1 comes back; once az1 is given back, az3 is withdrawn.
	back := now.Add(time.Minute)
	_, _ = handOver(in, back, func(zones []infrav1.LoadBalancer) { SetHealth(&zones[0], true) })
	g.Expect(withdrawnZones(in)).To(Equal([]string{"az1", "az2"}))
	notes, _ = handOver(in, back.Add(ControlPlaneReturnDelay), nil)
	g.Expect(notes).To(Equal([]string{"ControlPlaneFailureDomainReturned", "ControlPlaneFailureDomainWithdrawn"}))
	g.Expect(withdrawnZones(in)).To(Equal([]string{"az2", "az3"}))
	g.Expect(in.Recorded.Zones[2].FailureDomainWithdrawal.Deferred).To(BeFalse())

	// A zone kept out of service that serves again is simply offered.
	in = handoverCluster()
	_, _ = handOver(in, now, unhealthy("az1"))
	_, _ = handOver(in, now, unhealthy("az2"))
	_, _ = handOver(in, now, unhealthy("az3"))
	g.Expect(in.Recorded.Zones[2].FailureDomainWithdrawal.Deferred).To(BeTrue())
	notes, _ = handOver(in, now.Add(time.Second), func(zones []infrav1.LoadBalancer) { SetHealth(&zones[2], true) })
	g.Expect(notes).To(BeEmpty())
	g.Expect(in.Recorded.Zones[2].FailureDomainWithdrawal).To(BeNil())

	// A Nova zone without a load balancer takes no API traffic: it does not count as one left.
	in = handoverCluster()
	in.LoadBalancer.AvailabilityZoneSubnets = in.LoadBalancer.AvailabilityZoneSubnets[:2]
	in.Recorded.Zones = in.Recorded.Zones[:2]
	_, _ = handOver(in, now, unhealthy("az1"))
	g.Expect(withdrawnZones(in)).To(Equal([]string{"az1"}))
	_, _ = handOver(in, now, unhealthy("az2"))
	g.Expect(withdrawnZones(in)).To(Equal([]string{"az1"}), "az2 is the last zone with a load balancer")

	// A zone the spec keeps from control plane machines is not counted as one left.
	in = handoverCluster()
	in.ControlPlaneZones = []string{"az1", "az2"}
	_, _ = handOver(in, now, unhealthy("az1"))
	g.Expect(withdrawnZones(in)).To(Equal([]string{"az1"}))
	_, _ = handOver(in, now.Add(time.Second), unhealthy("az2"))
	g.Expect(withdrawnZones(in)).To(Equal([]string{"az1"}), "az2 is the last zone the spec gives control plane machines")
	_, _ = handOver(in, now.Add(2*time.Second), unhealthy("az3"))
	g.Expect(in.Recorded.Zones[2].FailureDomainWithdrawal).To(BeNil(), "az3 is no control plane failure domain: nothing to withdraw")
}

func TestHandOverLeavesNewLoadBalancersAndSingleLoadBalancersAlone(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	in := handoverCluster()
	_, _ = handOver(in, now, func(zones []infrav1.LoadBalancer) {
		zones[1].Healthy, zones[1].Health = nil, infrav1.LoadBalancerHealthUnknown // being built
	})
	g.Expect(withdrawnZones(in)).To(BeEmpty(), "a load balancer whose health was never read is not out of service")

	// A withdrawn zone whose load balancer is built again stays withdrawn, and its delay has
	// not started.
	in = handoverCluster()
	_, _ = handOver(in, now, unhealthy("az2"))
	_, _ = handOver(in, now.Add(time.Minute), func(zones []infrav1.LoadBalancer) {
		zones[1].ID, zones[1].Healthy, zones[1].Health = "new", nil, infrav1.LoadBalancerHealthUnknown
	})
	g.Expect(withdrawnZones(in)).To(Equal([]string{"az2"}))
	g.Expect(in.Recorded.Zones[1].FailureDomainWithdrawal.ServingSince).To(BeNil())

	// A zone that never served (its first machine boots behind it) has not failed.
	in = handoverCluster()
	in.Recorded.Zones[2].Pools[0].Members = nil
	_, _ = handOver(in, now, func(zones []infrav1.LoadBalancer) {
		zones[2].Pools[0].Members = []infrav1.LoadBalancerMember{{Name: "cp-az3", OperatingStatus: "ERROR"}}
		SetHealth(&zones[2], false)
	})
	g.Expect(withdrawnZones(in)).To(BeEmpty(), "a zone whose first machine boots is not out of service")
	// Once it has served, it has.
	_, _ = handOver(in, now.Add(time.Minute), func(zones []infrav1.LoadBalancer) {
		zones[2].Pools[0].Members[0].OperatingStatus = "ONLINE"
		SetHealth(&zones[2], true)
	})
	_, _ = handOver(in, now.Add(2*time.Minute), unhealthy("az3"))
	g.Expect(withdrawnZones(in)).To(Equal([]string{"az3"}))

	// Back to one load balancer: nothing is withdrawn.
	in.LoadBalancer.AvailabilityZoneSubnets = nil
	_, _ = handOver(in, now.Add(2*time.Minute), nil)
	g.Expect(withdrawnZones(in)).To(BeEmpty())
}

func TestControlPlaneDomainsFollowTheSpecAndTheWithdrawals(t *testing.T) {
	g := NewWithT(t)
	fds := []clusterv1.FailureDomain{{Name: "az1", ControlPlane: ptr.To(false)}, {Name: "az2", ControlPlane: ptr.To(false)}, {Name: "az3"}}
	zones := []infrav1.LoadBalancer{{AvailabilityZone: "az3", FailureDomainWithdrawal: &infrav1.FailureDomainWithdrawal{Reason: infrav1.WithdrawnUnhealthy}}}
	got := ControlPlaneDomains(fds, []string{"az1", "az3"}, zones)
	g.Expect(got).To(Equal([]clusterv1.FailureDomain{{Name: "az1", ControlPlane: ptr.To(true)}, {Name: "az2", ControlPlane: ptr.To(false)}, {Name: "az3", ControlPlane: ptr.To(false)}}))
	g.Expect(fds[0].ControlPlane).To(HaveValue(BeFalse()), "the input is not changed")
	g.Expect(ControlPlaneDomains(nil, nil, zones)).To(BeNil())
}
