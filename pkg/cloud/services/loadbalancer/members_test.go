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
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	. "github.com/onsi/gomega"
	"go.uber.org/mock/gomock"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

func TestMemberTargets(t *testing.T) {
	zone := func(az string) infrav1.LoadBalancer {
		return infrav1.LoadBalancer{ID: az + "-id", AvailabilityZone: az}
	}
	single := infrav1.LoadBalancer{ID: "single-id"}
	ids := func(lbs []infrav1.LoadBalancer) []string {
		var out []string
		for _, lb := range lbs {
			out = append(out, lb.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name        string
		status      infrav1.OpenStackClusterStatus
		az          string
		crossAZ     bool
		want        []string
		zoneMissing bool
	}{
		{name: "single load balancer", status: infrav1.OpenStackClusterStatus{APIServerLoadBalancer: &single}, az: "az1", want: []string{"single-id"}},
		{name: "no load balancer", az: "az1"},
		{name: "own zone only", status: infrav1.OpenStackClusterStatus{APIServerLoadBalancers: []infrav1.LoadBalancer{zone("az1"), zone("az2")}}, az: "az2", want: []string{"az2-id"}},
		{name: "cross-AZ: every zone", status: infrav1.OpenStackClusterStatus{APIServerLoadBalancers: []infrav1.LoadBalancer{zone("az1"), zone("az2")}}, az: "az2", crossAZ: true, want: []string{"az1-id", "az2-id"}},
		{name: "zone without a load balancer, the zone-less one as fallback",
			status: infrav1.OpenStackClusterStatus{APIServerLoadBalancers: []infrav1.LoadBalancer{zone("az1"), single}}, az: "az3", want: []string{"single-id"}},
		{name: "zone without a load balancer and no fallback: reported",
			status: infrav1.OpenStackClusterStatus{APIServerLoadBalancers: []infrav1.LoadBalancer{zone("az1"), zone("az2")}, APIServerLoadBalancer: ptrLB(zone("az1"))}, az: "az3", zoneMissing: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, missing := zones.MemberTargets(zones.Recorded{Single: tc.status.APIServerLoadBalancer, Zones: tc.status.APIServerLoadBalancers}, tc.az, tc.crossAZ)
			g.Expect(ids(got)).To(Equal(tc.want))
			g.Expect(missing).To(Equal(tc.zoneMissing))
		})
	}
}

func ptrLB(lb infrav1.LoadBalancer) *infrav1.LoadBalancer { return &lb }

// membersOf are the members of every pool of the load balancer, as "pool: name address:port".
func (w *world) membersOf(t *testing.T, id string) map[string][]pools.Member {
	t.Helper()
	tree, err := w.cloud.LoadBalancer().GetLoadBalancerStatuses(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]pools.Member{}
	for _, p := range poolsOf(tree.Loadbalancer) {
		out[p.Name] = p.Members
	}
	return out
}

// settle calls ReconcileMembership until it reports done, as the machine controller's requeues
// would.
func settle(t *testing.T, s *Service, all []infrav1.LoadBalancer, targets []string, m Member) {
	t.Helper()
	for range 40 {
		done, err := s.ReconcileMembership(ctx, all, targets, []int{6443, 8132}, m)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			return
		}
	}
	t.Fatal("membership not settled after 40 calls")
}

func TestMembershipFollowsTheTargets(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1", "az2", "az3")
	s := w.service()
	var all []infrav1.LoadBalancer
	for _, az := range []string{"az1", "az2", "az3"} {
		out, _ := converge(t, s, w.desired(az), nil)
		all = append(all, *out.Status)
	}
	cp1 := Member{Name: "cp-1", Address: "10.6.0.11"}
	count := func(id string) int {
		n := 0
		for _, ms := range w.membersOf(t, id) {
			for _, m := range ms {
				if m.Name == cp1.Name {
					n++
				}
			}
		}
		return n
	}

	// Same zone: both pools of az1, nothing elsewhere.
	settle(t, s, all, []string{all[0].ID}, cp1)
	g.Expect(count(all[0].ID)).To(Equal(2))
	g.Expect(count(all[1].ID) + count(all[2].ID)).To(BeZero())
	for pool, ms := range w.membersOf(t, all[0].ID) {
		g.Expect(ms).To(HaveLen(1), pool)
		g.Expect(ms[0].Address).To(Equal("10.6.0.11"))
	}
	w.cloud.ResetCalls()
	done, err := s.ReconcileMembership(ctx, all, []string{all[0].ID}, []int{6443, 8132}, cp1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeTrue())
	g.Expect(w.cloud.Calls()).To(Equal(map[string]int{"GetLoadBalancerStatuses": 3}), "settled: one read per load balancer")

	// Cross-AZ on: every load balancer; off again: back to its own zone.
	settle(t, s, all, []string{all[0].ID, all[1].ID, all[2].ID}, cp1)
	g.Expect([]int{count(all[0].ID), count(all[1].ID), count(all[2].ID)}).To(Equal([]int{2, 2, 2}))
	settle(t, s, all, []string{all[0].ID}, cp1)
	g.Expect([]int{count(all[0].ID), count(all[1].ID), count(all[2].ID)}).To(Equal([]int{2, 0, 0}))

	// A new address replaces the old one.
	moved := cp1
	moved.Address = "10.6.0.99"
	settle(t, s, all, []string{all[0].ID}, moved)
	for _, ms := range w.membersOf(t, all[0].ID) {
		g.Expect(ms).To(HaveLen(1))
		g.Expect(ms[0].Address).To(Equal("10.6.0.99"))
	}

	// A machine being deleted leaves no member anywhere; other machines' members stay.
	cp2 := Member{Name: "cp-2", Address: "10.6.0.12"}
	settle(t, s, all, []string{all[0].ID}, cp2)
	settle(t, s, all, nil, moved)
	g.Expect(count(all[0].ID)).To(BeZero())
	for _, ms := range w.membersOf(t, all[0].ID) {
		g.Expect(ms).To(HaveLen(1))
		g.Expect(ms[0].Name).To(Equal("cp-2"))
	}
	ev := w.events()
	g.Expect(ev).To(ContainSubstring("CreatedMember"))
	g.Expect(ev).To(ContainSubstring("DeletedMember"))
}

func TestMembershipCalls(t *testing.T) {
	d := desiredAZ("az1")
	lb := infrav1.LoadBalancer{ID: lbID, Name: d.Name, AvailabilityZone: "az1"}
	m := Member{Name: "cp-1", Address: "10.6.0.11", SubnetID: "cluster-subnet"}
	ports := []int{6443, 8132}

	t.Run("Octavia busy: nothing called, not done", func(t *testing.T) {
		g := NewWithT(t)
		mk := newMocked(t)
		mk.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tree(d.Name, d.Name, "PENDING_UPDATE", 6443, 8132), nil)
		done, err := mk.service().ReconcileMembership(ctx, []infrav1.LoadBalancer{lb}, []string{lbID}, ports, m)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(done).To(BeFalse())
	})

	t.Run("one member created per call, with the subnet, and 409 is waiting", func(t *testing.T) {
		g := NewWithT(t)
		mk := newMocked(t)
		tr := tree(d.Name, d.Name, "ACTIVE", 6443, 8132)
		mk.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tr, nil).Times(2)
		// Its mark is read once: a member is added only to a load balancer of the cluster's.
		mk.lb.EXPECT().GetLoadBalancer(ctx, lbID).Return(&loadbalancers.LoadBalancer{ID: lbID, Name: d.Name, Tags: []string{testOwner.Tag()}}, nil)
		mk.lb.EXPECT().CreateMember(ctx, "p"+zones.ChildName(d.Name, 6443), pools.CreateMemberOpts{Name: "cp-1", Address: "10.6.0.11", ProtocolPort: 6443, SubnetID: "cluster-subnet"}).
			Return(&pools.Member{}, nil)
		done, err := mk.service().ReconcileMembership(ctx, []infrav1.LoadBalancer{lb}, []string{lbID}, ports, m)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(done).To(BeFalse())

		tr.Loadbalancer.Listeners[0].Pools[0].Members = []pools.Member{{Name: "cp-1", Address: "10.6.0.11", ProtocolPort: 6443}}
		mk.lb.EXPECT().CreateMember(ctx, "p"+zones.ChildName(d.Name, 8132), gomock.Any()).Return(nil, err409)
		done, err = mk.service().ReconcileMembership(ctx, []infrav1.LoadBalancer{lb}, []string{lbID}, ports, m)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(done).To(BeFalse())
		g.Expect(mk.events()).To(ContainSubstring("CreatedMember"))
	})

	t.Run("a member of the machine's address under another name is kept", func(t *testing.T) {
		g := NewWithT(t)
		mk := newMocked(t)
		tr := tree(d.Name, d.Name, "ACTIVE", 6443, 8132)
		for i, port := range ports {
			tr.Loadbalancer.Listeners[i].Pools[0].Members = []pools.Member{{ID: "x", Name: "added-by-hand", Address: "10.6.0.11", ProtocolPort: port}}
		}
		mk.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tr, nil)
		done, err := mk.service().ReconcileMembership(ctx, []infrav1.LoadBalancer{lb}, []string{lbID}, ports, m)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(done).To(BeTrue())
	})

	t.Run("a migration under way: pools under the former name are left alone", func(t *testing.T) {
		g := NewWithT(t)
		mk := newMocked(t)
		legacy := zones.Name("ns", "c", "")
		tr := tree(d.Name, legacy, "ACTIVE", 6443, 8132)
		for i, port := range ports {
			tr.Loadbalancer.Listeners[i].Pools[0].Members = []pools.Member{{ID: "mine", Name: "cp-1", Address: "10.6.0.11", ProtocolPort: port}}
		}
		mk.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tr, nil).Times(2)
		done, err := mk.service().ReconcileMembership(ctx, []infrav1.LoadBalancer{lb}, []string{lbID}, ports, m)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(done).To(BeFalse(), "settles once the pools carry the new name")
		// Not a target either: still nothing deleted from pools the controller is renaming.
		done, err = mk.service().ReconcileMembership(ctx, []infrav1.LoadBalancer{lb}, nil, ports, m)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(done).To(BeTrue())
	})

	t.Run("a load balancer gone is skipped", func(t *testing.T) {
		g := NewWithT(t)
		mk := newMocked(t)
		mk.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(nil, err404)
		done, err := mk.service().ReconcileMembership(ctx, []infrav1.LoadBalancer{lb}, nil, ports, m)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(done).To(BeTrue())
	})
}

func TestMembersUpstreamCAPOAddedAreRecognised(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	s := w.service()
	out, _ := converge(t, s, w.desired("az1"), nil)
	all := []infrav1.LoadBalancer{*out.Status}
	// Upstream CAPO v0.14 added cp-1 as "<pool>-cp-1", at an address the machine no longer has.
	tree, err := w.cloud.LoadBalancer().GetLoadBalancerStatuses(ctx, out.Status.ID)
	g.Expect(err).NotTo(HaveOccurred())
	for _, p := range poolsOf(tree.Loadbalancer) {
		port := 6443
		if strings.HasSuffix(p.Name, "-8132") {
			port = 8132
		}
		_, err := w.cloud.LoadBalancer().CreateMember(ctx, p.ID, pools.CreateMemberOpts{Name: p.Name + "-cp-1", Address: "10.6.0.50", ProtocolPort: port})
		g.Expect(err).NotTo(HaveOccurred())
		_, _ = s.ReconcileMembership(ctx, all, nil, nil, Member{Name: "other", Address: "10.6.0.1"}) // settles the change
	}

	settle(t, s, all, []string{out.Status.ID}, Member{Name: "cp-1", Address: "10.6.0.11"})
	for pool, ms := range w.membersOf(t, out.Status.ID) {
		g.Expect(ms).To(HaveLen(1), pool)
		g.Expect(ms[0].Address).To(Equal("10.6.0.11"), "upstream's member at the old address is the machine's, and goes")
	}
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

// A control plane machine leaves the load balancers of its cluster; one the status names that is
// not the cluster's (upstream's whose takeover was not recorded, or another's) holds nothing the
// machine may take out: the removal is done, and its members stay.
func TestRemovingAMachineLeavesALoadBalancerThatIsNotTheClusters(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	out, _ := converge(t, w.service(), w.desired("az1"), nil)
	all := []infrav1.LoadBalancer{*out.Status}
	settle(t, w.service(), all, []string{out.Status.ID}, Member{Name: "cp-1", Address: "10.6.0.11"})
	before := w.membersOf(t, out.Status.ID)

	for _, owner := range []ownership.Owner{
		{Kind: "OpenStackCluster", Namespace: "ns", Name: "c"},       // the takeover not recorded: the mark is not its
		{Kind: "OpenStackCluster", Namespace: "other", Name: "c"},    // another cluster's
		{Kind: "OpenStackCluster", Namespace: "ns", Name: "c-other"}, // another cluster's, same namespace
	} {
		fresh := NewMemory()
		s := NewService(w.cloud.LoadBalancer(), w.cloud.Network(), report.NewRecorder(w.recorder, &infrav1.OpenStackCluster{}, logr.Discard()), fresh, "fake", owner, "c")
		if owner.Name == "c" && owner.Namespace == "ns" {
			// The load balancer carries the mark of c in ns: strip it, as upstream's has none.
			_, err := w.cloud.LoadBalancer().UpdateLoadBalancer(ctx, out.Status.ID, loadbalancers.UpdateOpts{Tags: &[]string{}})
			g.Expect(err).NotTo(HaveOccurred())
			g.Eventually(func() string {
				lb, err := w.cloud.LoadBalancer().GetLoadBalancer(ctx, out.Status.ID)
				g.Expect(err).NotTo(HaveOccurred())
				return lb.ProvisioningStatus
			}).WithTimeout(10 * time.Second).Should(Equal("ACTIVE"))
		}
		// What RemoveMachine asks: the machine's membership of no load balancer.
		done, err := s.ReconcileMembership(ctx, all, nil, []int{6443, 8132}, Member{Name: "cp-1"})
		g.Expect(err).NotTo(HaveOccurred(), "%v", owner)
		g.Expect(done).To(BeTrue(), "%v", owner)
		g.Expect(w.membersOf(t, out.Status.ID)).To(Equal(before), "%v: nothing of it is changed", owner)
	}
}
