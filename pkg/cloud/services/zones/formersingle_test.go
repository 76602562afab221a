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

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// migrated is a two-zone cluster whose first zone's load balancer was its single one.
func migrated(dns bool) *Input {
	in := maintenanceCluster(dns)
	in.Recorded.Zones[0].FormerSingle = &infrav1.FormerSingleLoadBalancer{}
	return in
}

func targetNames(targets []infrav1.LoadBalancer) []string {
	var out []string
	for _, t := range targets {
		out = append(out, t.Name)
	}
	return out
}

func TestTheFormerSingleLoadBalancerKeepsEveryZonesMachines(t *testing.T) {
	g := NewWithT(t)
	in := migrated(true)
	az2, missing := MemberTargets(in.Recorded, "az2", false)
	g.Expect(missing).To(BeFalse())
	g.Expect(targetNames(az2)).To(Equal([]string{"lb-az2", "lb-az1"}), "its own zone's, and the address clients still use")
	az1, _ := MemberTargets(in.Recorded, "az1", false)
	g.Expect(targetNames(az1)).To(Equal([]string{"lb-az1"}))

	// The second zone's load balancer not made yet: the former single one keeps its machine.
	in.Recorded.Zones = in.Recorded.Zones[:1]
	az2, missing = MemberTargets(in.Recorded, "az2", false)
	g.Expect(missing).To(BeFalse())
	g.Expect(targetNames(az2)).To(Equal([]string{"lb-az1"}))

	// Released: each zone's machines behind their own zone's only.
	in = maintenanceCluster(true)
	az2, _ = MemberTargets(in.Recorded, "az2", false)
	g.Expect(targetNames(az2)).To(Equal([]string{"lb-az2"}))
}

func TestTheFormerSingleLoadBalancerLetsGoOnceDNSHasHeldEveryZoneForItsTTL(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	in := migrated(true)
	zones := in.Recorded.Zones

	r := ReleaseFormerSingle(in, zones, now)
	g.Expect(zones[0].FormerSingle).NotTo(BeNil())
	g.Expect(r.Holding).To(ContainSubstring("until the DNS records hold every zone's address and their TTL has passed"))

	// Records with one zone only do not count.
	MarkAllZonesPublished(in, zones, Publication{Zones: []string{"az1"}}, now)
	g.Expect(zones[0].FormerSingle.AllZonesPublishedAt).To(BeNil())
	MarkAllZonesPublished(in, zones, Publication{Zones: []string{"az1", "az3"}}, now)
	g.Expect(zones[0].FormerSingle.AllZonesPublishedAt).To(BeNil(), "the zones mapped, not their number")
	MarkAllZonesPublished(in, zones, Publication{Zones: []string{"az1", "az2"}}, now)
	g.Expect(zones[0].FormerSingle.AllZonesPublishedAt.Time).To(Equal(now))
	MarkAllZonesPublished(in, zones, Publication{Zones: []string{"az1", "az2"}}, now.Add(time.Minute))
	g.Expect(zones[0].FormerSingle.AllZonesPublishedAt.Time).To(Equal(now), "the first time counts")

	r = ReleaseFormerSingle(in, zones, now.Add(10*time.Second))
	g.Expect(zones[0].FormerSingle).NotTo(BeNil())
	g.Expect(r.RequeueAfter).To(Equal(20*time.Second), "due when the 30 s TTL has passed")

	r = ReleaseFormerSingle(in, zones, now.Add(30*time.Second))
	g.Expect(zones[0].FormerSingle).To(BeNil())
	g.Expect(r.Notes).To(HaveLen(1))
	g.Expect(r.Notes[0].Reason).To(Equal("ReleasedFormerLoadBalancer"))
}

func TestTheFormerSingleLoadBalancerWithoutDNSWaitsForTheOperator(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	in := migrated(false)
	zones := in.Recorded.Zones
	zones[0].FormerSingle.AllZonesPublishedAt = &metav1.Time{Time: now.Add(-time.Hour)} // not ours to trust without DNS
	r := ReleaseFormerSingle(in, zones, now)
	g.Expect(zones[0].FormerSingle).NotTo(BeNil())
	g.Expect(r.Holding).To(ContainSubstring(infrav1.ClientsMovedAnnotation))

	in.ClientsMoved = true
	_ = ReleaseFormerSingle(in, zones, now)
	g.Expect(zones[0].FormerSingle).To(BeNil())
}
