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
	"net/http"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/apiversions"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	. "github.com/onsi/gomega"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

func TestMigrationRenamesEachChild(t *testing.T) {
	legacy := zones.Name("ns", "c", "")

	t.Run("the load balancer itself, found under the legacy name", func(t *testing.T) {
		g := NewWithT(t)
		w := newWorld(t, "az1")
		old, err := w.cloud.LoadBalancer().CreateLoadBalancer(ctx, loadbalancers.CreateOpts{Name: legacy, VipSubnetID: w.subnets[""].ID, Tags: []string{"user-tag"}})
		g.Expect(err).NotTo(HaveOccurred())
		d := w.desired("az1")
		continues(d, "")

		out := w.service().Reconcile(ctx, d, nil)
		g.Expect(out.State).To(Equal(zones.StateWaiting))
		g.Expect(out.Status.Name).To(Equal(d.Name))
		g.Expect(out.Status.ID).To(Equal(old.ID))
		g.Expect(out.Status.InternalIP).To(Equal(old.VipAddress), "the VIP stays")
		g.Expect(out.Status.LoadBalancerNetwork.Subnets[0].ID).To(Equal(w.subnets[""].ID), "the status says where the VIP really is")
		lb, err := w.cloud.LoadBalancer().GetLoadBalancer(ctx, old.ID)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(lb.Name).To(Equal(d.Name))
		g.Expect(lb.Tags).To(ConsistOf("user-tag", zones.OwnerTag("ns", "c"), testOwner.Tag()), "the user's tags are kept, the cluster's mark added")
		ev := w.events()
		g.Expect(ev).To(ContainSubstring("RenamedLoadBalancer"))
		g.Expect(ev).To(ContainSubstring("Warning LoadBalancerVIPSubnet"))
		g.Expect(w.loadBalancers()).To(HaveLen(1))
	})

	t.Run("found by the status under a former name: its tags are read and kept", func(t *testing.T) {
		g := NewWithT(t)
		w := newWorld(t, "az1")
		az1 := w.desired("az1")
		lb, err := w.cloud.LoadBalancer().CreateLoadBalancer(ctx, loadbalancers.CreateOpts{Name: az1.Name, VipSubnetID: az1.Subnet.ID,
			Tags: []string{"user-tag", zones.OwnerTag("ns", "c")}})
		g.Expect(err).NotTo(HaveOccurred())
		w.settle(t, lb.ID)
		back := w.desired("")
		continues(back, "az1")
		k := &infrav1.LoadBalancer{Name: az1.Name, ID: lb.ID, InternalIP: lb.VipAddress, IP: lb.VipAddress, AvailabilityZone: "az1", Tags: az1.Tags,
			LoadBalancerNetwork: &infrav1.NetworkStatusWithSubnets{NetworkStatus: az1.Network, Subnets: []infrav1.Subnet{*az1.Subnet}}}

		w.cloud.ResetCalls()
		out := w.service().Reconcile(ctx, back, k)
		g.Expect(w.cloud.Calls()).NotTo(HaveKey("ListLoadBalancers"), "found by the status")
		g.Expect(out.State).To(Equal(zones.StateWaiting))
		g.Expect(out.Status.Name).To(Equal(legacy))
		g.Expect(out.Status.ID).To(Equal(lb.ID))
		renamed, err := w.cloud.LoadBalancer().GetLoadBalancer(ctx, lb.ID)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(renamed.Name).To(Equal(legacy))
		g.Expect(renamed.Tags).To(ConsistOf("user-tag", zones.OwnerTag("ns", "c"), testOwner.Tag()))
	})

	// A child of port 8132 still carries the legacy name; the load balancer already has its own.
	misnamed := func(t *testing.T, kind string) (*world, *zones.Desired, *infrav1.LoadBalancer) {
		t.Helper()
		w := newWorld(t, "az1")
		d := w.desired("az1")
		continues(d, "")
		ready, _ := converge(t, w.service(), d, nil)
		l, p, m := w.children(t, ready.Status.ID, zones.ChildName(d.Name, 8132))
		old := zones.ChildName(legacy, 8132)
		var err error
		switch kind {
		case "listener":
			_, err = w.cloud.LoadBalancer().UpdateListener(ctx, l, listeners.UpdateOpts{Name: &old})
		case "pool":
			_, err = w.cloud.LoadBalancer().UpdatePool(ctx, p, pools.UpdateOpts{Name: &old})
		case "health monitor":
			_, err = w.cloud.LoadBalancer().UpdateMonitor(ctx, m, monitors.UpdateOpts{Name: &old})
		}
		if err != nil {
			t.Fatal(err)
		}
		w.settle(t, ready.Status.ID)
		w.events()
		return w, d, ready.Status
	}
	for _, tc := range []struct{ kind, update, event string }{
		{kind: "listener", update: "UpdateListener", event: "RenamedListener"},
		{kind: "pool", update: "UpdatePool", event: "RenamedPool"},
		{kind: "health monitor", update: "UpdateMonitor", event: "RenamedHealthMonitor"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			g := NewWithT(t)
			w, d, k := misnamed(t, tc.kind)
			w.cloud.ResetCalls()
			out := w.service().Reconcile(ctx, d, k)
			g.Expect(changes(w.cloud.Calls())).To(Equal(map[string]int{tc.update: 1}))
			g.Expect(out.State).To(Equal(zones.StateWaiting), "one change per reconcile; Octavia is busy with it")
			g.Expect(out.Message).To(ContainSubstring("renamed"))
			g.Expect(w.events()).To(ContainSubstring(tc.event))
			ls, ps, ms := w.childNames(k.ID)
			want := []string{zones.ChildName(d.Name, 6443), zones.ChildName(d.Name, 8132)}
			g.Expect([][]string{ls, ps, ms}).To(HaveEach(ConsistOf(want)))
		})
	}

	t.Run("Octavia busy with the load balancer: waiting, not failing", func(t *testing.T) {
		g := NewWithT(t)
		w, d, k := misnamed(t, "pool")
		w.cloud.InjectFault(fakeopenstack.Fault{Operation: "UpdatePool", Nth: 1, Status: http.StatusConflict})
		out := w.service().Reconcile(ctx, d, k)
		g.Expect(out.State).To(Equal(zones.StateWaiting))
		g.Expect(out.Reason).To(Equal(infrav1.WaitingForLoadBalancerReason))
		g.Expect(out.Message).To(ContainSubstring("is busy"))
		g.Expect(out.Err).NotTo(HaveOccurred())
		_, ps, _ := w.childNames(k.ID)
		g.Expect(ps).To(ContainElement(zones.ChildName(legacy, 8132)), "renamed at a later look")
		converge(t, w.service(), d, k)
		_, ps, _ = w.childNames(k.ID)
		g.Expect(ps).To(ConsistOf(zones.ChildName(d.Name, 6443), zones.ChildName(d.Name, 8132)))
	})
}

func TestPerPortChildren(t *testing.T) {
	// ready is a converged load balancer of az1 with the ports given.
	ready := func(t *testing.T, ports ...int) (*world, *zones.Desired, *infrav1.LoadBalancer) {
		t.Helper()
		w := newWorld(t, "az1")
		d := w.desired("az1")
		d.Ports = ports
		out, _ := converge(t, w.service(), d, nil)
		w.events()
		return w, d, out.Status
	}
	name := zones.ChildName(zones.Name("ns", "c", "az1"), 8132)

	t.Run("missing listener for an additional port", func(t *testing.T) {
		g := NewWithT(t)
		w, d, k := ready(t, 6443)
		d.Ports = []int{6443, 8132}
		w.cloud.ResetCalls()
		out := w.service().Reconcile(ctx, d, k)
		g.Expect(changes(w.cloud.Calls())).To(Equal(map[string]int{"CreateListener": 1}))
		g.Expect(out.State).To(Equal(zones.StateWaiting))
		g.Expect(w.events()).To(ContainSubstring("CreatedListener"))
		l := w.listenerOn(t, k.ID, 8132)
		g.Expect(l).NotTo(BeNil())
		g.Expect(l.Name).To(Equal(name))
		g.Expect(w.poolsOf(t, k.ID, l.ID)).To(BeEmpty(), "the pool follows once Octavia is done with the listener")
	})

	t.Run("missing pool", func(t *testing.T) {
		g := NewWithT(t)
		w, d, k := ready(t, 6443, 8132)
		l, p, _ := w.children(t, k.ID, name)
		g.Expect(w.cloud.LoadBalancer().DeletePool(ctx, p)).To(Succeed())
		w.settle(t, k.ID)
		w.cloud.ResetCalls()
		out := w.service().Reconcile(ctx, d, k)
		g.Expect(changes(w.cloud.Calls())).To(Equal(map[string]int{"CreatePool": 1}))
		g.Expect(out.State).To(Equal(zones.StateWaiting))
		g.Expect(w.events()).To(ContainSubstring("CreatedPool"))
		ps := w.poolsOf(t, k.ID, l)
		g.Expect(ps).To(HaveLen(1))
		g.Expect([]string{ps[0].Name, ps[0].Protocol, ps[0].LBMethod}).To(Equal([]string{name, string(pools.ProtocolTCP), string(pools.LBMethodRoundRobin)}))
	})

	t.Run("OVN: SOURCE_IP_PORT pools, created with the load balancer and one by one", func(t *testing.T) {
		g := NewWithT(t)
		w := newWorld(t, "az1")
		w.cloud.AddProvider("ovn")
		d := w.desired("az1")
		d.Provider, d.Ports = "ovn", []int{6443, 8132}
		first, _ := converge(t, w.service(), d, nil)
		l, p, _ := w.children(t, first.Status.ID, name)
		g.Expect(w.cloud.LoadBalancer().DeletePool(ctx, p)).To(Succeed())
		w.settle(t, first.Status.ID)
		converge(t, w.service(), d, first.Status)
		ps := w.poolsOf(t, first.Status.ID, l)
		g.Expect(ps).To(HaveLen(1))
		g.Expect(ps[0].LBMethod).To(Equal(string(pools.LBMethodSourceIpPort)))
		other := w.poolsOf(t, first.Status.ID, w.listenerOn(t, first.Status.ID, 6443).ID)
		g.Expect(other).To(HaveLen(1))
		g.Expect(other[0].LBMethod).To(Equal(string(pools.LBMethodSourceIpPort)), "made with the load balancer")
	})

	t.Run("missing health monitor", func(t *testing.T) {
		g := NewWithT(t)
		w, d, k := ready(t, 6443, 8132)
		_, p, m := w.children(t, k.ID, name)
		g.Expect(w.cloud.LoadBalancer().DeleteMonitor(ctx, m)).To(Succeed())
		w.settle(t, k.ID)
		w.cloud.ResetCalls()
		out := w.service().Reconcile(ctx, d, k)
		g.Expect(changes(w.cloud.Calls())).To(Equal(map[string]int{"CreateMonitor": 1}))
		g.Expect(out.State).To(Equal(zones.StateWaiting))
		g.Expect(w.events()).To(ContainSubstring("CreatedHealthMonitor"))
		mons, err := w.cloud.LoadBalancer().ListMonitors(ctx, monitors.ListOpts{PoolID: p})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(mons).To(HaveLen(1))
		mon := mons[0]
		g.Expect([]any{mon.Name, mon.Type, mon.Delay, mon.Timeout, mon.MaxRetries, mon.MaxRetriesDown}).To(Equal([]any{name, string(monitors.TypeTCP), 10, 5, 5, 3}))
	})

	t.Run("a port no longer asked for: pool first, then listener", func(t *testing.T) {
		g := NewWithT(t)
		w, d, k := ready(t, 6443, 8132)
		d.Ports = []int{6443}
		w.cloud.ResetCalls()
		out := w.service().Reconcile(ctx, d, k)
		g.Expect(changes(w.cloud.Calls())).To(Equal(map[string]int{"DeletePool": 1}))
		g.Expect(out.State).To(Equal(zones.StateWaiting))
		ls, ps, _ := w.childNames(k.ID)
		g.Expect(ls).To(ContainElement(name), "the listener goes second")
		g.Expect(ps).NotTo(ContainElement(name))

		w.cloud.ResetCalls()
		out = w.service().Reconcile(ctx, d, k)
		g.Expect(changes(w.cloud.Calls())).To(Equal(map[string]int{"DeleteListener": 1}))
		g.Expect(out.State).To(Equal(zones.StateWaiting))
		ls, _, _ = w.childNames(k.ID)
		g.Expect(ls).To(ConsistOf(zones.ChildName(d.Name, 6443)))
		ev := w.events()
		g.Expect(ev).To(ContainSubstring("DeletedPool"))
		g.Expect(ev).To(ContainSubstring("DeletedListener"))
	})

	t.Run("a listener somebody else made on another port is left alone", func(t *testing.T) {
		g := NewWithT(t)
		w, d, k := ready(t, 6443, 8132)
		_, err := w.cloud.LoadBalancer().CreateListener(ctx, listeners.CreateOpts{LoadbalancerID: k.ID, Name: "metrics", Protocol: listeners.ProtocolTCP, ProtocolPort: 9100})
		g.Expect(err).NotTo(HaveOccurred())
		w.settle(t, k.ID)
		w.cloud.ResetCalls()
		out := w.service().Reconcile(ctx, d, k)
		g.Expect(out.State).To(Equal(zones.StateReady))
		g.Expect(changes(w.cloud.Calls())).To(BeEmpty())
		g.Expect(w.listenerOn(t, k.ID, 9100)).NotTo(BeNil())
	})
}

// On an Octavia that leaves the children of a fully populated load balancer PENDING_CREATE, each
// is settled by an update, one per reconcile, and the load balancer is not ready meanwhile.
func TestChildrenLeftPendingAreSettled(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	w.cloud.SetLeavePopulatedChildrenPending(true)
	s := w.service()
	d := w.desired("az1")
	name := zones.ChildName(d.Name, 6443)
	created := s.Reconcile(ctx, d, nil)
	g.Expect(created.State).To(Equal(zones.StateWaiting))
	k := created.Status
	w.events()
	for _, tc := range []struct{ child, update string }{
		{"listener", "UpdateListener"}, {"pool", "UpdatePool"}, {"health monitor", "UpdateMonitor"},
	} {
		w.cloud.ResetCalls()
		out := s.Reconcile(ctx, d, k)
		k = out.Status
		g.Expect(changes(w.cloud.Calls())).To(Equal(map[string]int{tc.update: 1}), tc.child)
		g.Expect(out.State).To(Equal(zones.StateWaiting), "not ready while a pool would refuse members")
		g.Expect(out.Message).To(ContainSubstring("settling " + tc.child))
		g.Expect(w.events()).To(ContainSubstring("Octavia left " + tc.child + " " + name + " PENDING_CREATE although load balancer " + d.Name + " is ACTIVE"))
	}
	tree, err := w.cloud.LoadBalancer().GetLoadBalancerStatuses(ctx, k.ID)
	g.Expect(err).NotTo(HaveOccurred())
	l := tree.Loadbalancer.Listeners[0]
	g.Expect(l.Name).To(Equal(name))
	g.Expect([]string{l.ProvisioningStatus, l.Pools[0].ProvisioningStatus, l.Pools[0].Monitor.ProvisioningStatus}).To(HaveEach("ACTIVE"))
}

func TestAllowedCIDRsFollowTheSpec(t *testing.T) {
	// ready is a converged load balancer of az1 restricted to cidrs.
	ready := func(t *testing.T, w *world, cidrs ...string) (*zones.Desired, *infrav1.LoadBalancer) {
		t.Helper()
		d := w.desired("az1")
		d.AllowedCIDRs = cidrs
		out, _ := converge(t, w.service(), d, nil)
		w.events()
		return d, out.Status
	}
	// setCIDRs sets the allowed CIDRs of the listener on port as somebody else would.
	setCIDRs := func(t *testing.T, w *world, id string, port int, cidrs []string) {
		t.Helper()
		if _, err := w.cloud.LoadBalancer().UpdateListener(ctx, w.listenerOn(t, id, port).ID, listeners.UpdateOpts{AllowedCIDRs: &cidrs}); err != nil {
			t.Fatal(err)
		}
		w.settle(t, id)
	}

	t.Run("the same set written differently is not updated", func(t *testing.T) {
		g := NewWithT(t)
		w := newWorld(t, "az1")
		d, k := ready(t, w, zones.CanonicalCIDRs([]string{"192.168.0.0/16", "10.0.0.0/8"})...)
		for _, port := range d.Ports {
			setCIDRs(t, w, k.ID, port, []string{"192.168.0.0/16", "10.0.0.0/8"})
		}
		w.cloud.ResetCalls()
		out := w.service().Reconcile(ctx, d, k)
		g.Expect(changes(w.cloud.Calls())).To(BeEmpty())
		g.Expect(out.State).To(Equal(zones.StateReady))
		g.Expect(out.Status.AllowedCIDRs).To(Equal([]string{"10.0.0.0/8", "192.168.0.0/16"}))
	})

	t.Run("a change is applied to every listener, one per reconcile", func(t *testing.T) {
		g := NewWithT(t)
		w := newWorld(t, "az1")
		d, k := ready(t, w, "10.0.0.0/8")
		setCIDRs(t, w, k.ID, 8132, []string{})
		w.cloud.ResetCalls()
		out := w.service().Reconcile(ctx, d, k)
		g.Expect(changes(w.cloud.Calls())).To(Equal(map[string]int{"UpdateListener": 1}))
		g.Expect(out.State).To(Equal(zones.StateWaiting))
		g.Expect(w.events()).To(ContainSubstring("Set the allowed CIDRs of listener " + zones.ChildName(d.Name, 8132)))
		g.Expect(w.listenerOn(t, k.ID, 8132).AllowedCIDRs).To(Equal([]string{"10.0.0.0/8"}))
	})

	t.Run("emptied: every listener opened", func(t *testing.T) {
		g := NewWithT(t)
		w := newWorld(t, "az1")
		d, k := ready(t, w, "10.0.0.0/8")
		d.AllowedCIDRs = nil
		w.cloud.ResetCalls()
		out := w.service().Reconcile(ctx, d, k)
		g.Expect(changes(w.cloud.Calls())).To(Equal(map[string]int{"UpdateListener": 1}))
		g.Expect(out.State).To(Equal(zones.StateWaiting))
		g.Expect(w.listenerOn(t, k.ID, 6443).AllowedCIDRs).To(BeEmpty())
		g.Expect(w.listenerOn(t, k.ID, 8132).AllowedCIDRs).To(Equal([]string{"10.0.0.0/8"}), "the next reconcile opens it")
		opened, _ := converge(t, w.service(), d, out.Status)
		g.Expect(opened.Status.AllowedCIDRs).To(BeEmpty())
		g.Expect(w.listenerOn(t, k.ID, 8132).AllowedCIDRs).To(BeEmpty())
	})

	t.Run("Octavia older than 2.12: not applied, said why, no update", func(t *testing.T) {
		g := NewWithT(t)
		w := newWorld(t, "az1")
		w.cloud.SetAPIVersions(apiversions.APIVersion{ID: "v2.0"}, apiversions.APIVersion{ID: "v2.11"})
		d, k := ready(t, w)
		d.AllowedCIDRs = []string{"10.0.0.0/8"}
		w.cloud.ResetCalls()
		out := w.service().Reconcile(ctx, d, k)
		g.Expect(changes(w.cloud.Calls())).To(BeEmpty())
		g.Expect(out.State).To(Equal(zones.StateReady))
		g.Expect(out.Status.AllowedCIDRs).To(BeEmpty())
		g.Expect(w.events()).To(ContainSubstring("Octavia's API is version 2.11; allowed CIDRs need 2.12"))
	})

	t.Run("provider answering 501: remembered, not retried", func(t *testing.T) {
		g := NewWithT(t)
		w := newWorld(t, "az1")
		w.cloud.AddProvider("ovn")
		w.cloud.SetProviderAllowedCIDRs("ovn", false)
		d := w.desired("az1")
		d.Provider = "ovn"
		first, _ := converge(t, w.service(), d, nil)
		d.AllowedCIDRs = []string{"10.0.0.0/8"}
		w.cloud.ResetCalls()
		out := w.service().Reconcile(ctx, d, first.Status)
		g.Expect(changes(w.cloud.Calls())).To(Equal(map[string]int{"UpdateListener": 1}), "tried once")
		g.Expect(out.State).To(Equal(zones.StateReady))
		g.Expect(w.events()).To(ContainSubstring("Octavia provider ovn does not support allowed CIDRs"))

		w.cloud.ResetCalls()
		out = w.service().Reconcile(ctx, d, out.Status)
		g.Expect(out.State).To(Equal(zones.StateReady))
		g.Expect(changes(w.cloud.Calls())).To(BeEmpty(), "no second update, no loop")
	})
}

// spec.apiServerLoadBalancer.monitor changed on a running cluster reaches Octavia: every port's
// monitor gets the new settings, once; the steady state reads nothing more, and a restarted
// manager reads each monitor once and changes nothing.
func TestMonitorSettingsChangeDayTwo(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	s := w.service()
	d := w.desired("az1")
	ready, _ := converge(t, s, d, nil)
	w.events()

	d.Monitor = infrav1.APIServerLoadBalancerMonitor{Delay: 3, Timeout: 2, MaxRetries: 2, MaxRetriesDown: 1}
	again, rounds := converge(t, s, d, ready.Status)
	g.Expect(rounds).To(Equal(3), "one monitor per reconcile, then ready")
	mons, err := w.cloud.LoadBalancer().ListMonitors(ctx, monitors.ListOpts{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(mons).To(HaveLen(2))
	for _, m := range mons {
		g.Expect([]int{m.Delay, m.Timeout, m.MaxRetries, m.MaxRetriesDown}).To(Equal([]int{3, 2, 2, 1}), m.Name)
	}
	g.Expect(w.events()).To(ContainSubstring("UpdatedHealthMonitor"))

	w.cloud.ResetCalls()
	s.Reconcile(ctx, d, again.Status)
	g.Expect(w.cloud.Calls()).NotTo(HaveKey("ListMonitors"), "the steady state reads nothing more")

	w.memory = NewMemory() // a restart
	restarted := w.service()
	w.cloud.ResetCalls()
	out := restarted.Reconcile(ctx, d, again.Status)
	g.Expect(out.State).To(Equal(zones.StateReady))
	g.Expect(w.cloud.Calls()["ListMonitors"]).To(Equal(2), "each monitor read once")
	g.Expect(w.cloud.Calls()).NotTo(HaveKey("UpdateMonitor"))
}

// A monitor type changed to HTTPS on a running cluster: the API server port's monitor is deleted
// and made again as HTTPS on /readyz (Octavia cannot change a monitor's type); the additional
// port's stays TCP. Back to TCP the same way; a path change is an update.
func TestMonitorTypeChangeDayTwo(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	s := w.service()
	d := w.desired("az1")
	ready, _ := converge(t, s, d, nil)
	w.events()

	byPort := func() map[string]monitors.Monitor {
		mons, err := w.cloud.LoadBalancer().ListMonitors(ctx, monitors.ListOpts{})
		g.Expect(err).NotTo(HaveOccurred())
		out := map[string]monitors.Monitor{}
		for _, m := range mons {
			out[m.Name[len(m.Name)-4:]] = m
		}
		return out
	}
	before := byPort()
	d.Monitor.Type, d.Monitor.URLPath, d.Monitor.ExpectedCodes = infrav1.MonitorHTTPS, "/readyz", "200"
	w.cloud.ResetCalls()
	again, _ := converge(t, s, d, ready.Status)
	g.Expect(w.cloud.Calls()["DeleteMonitor"]).To(Equal(1))
	g.Expect(w.cloud.Calls()["CreateMonitor"]).To(Equal(1))
	after := byPort()
	g.Expect(after["6443"].Type).To(Equal("HTTPS"))
	g.Expect([]string{after["6443"].HTTPMethod, after["6443"].URLPath, after["6443"].ExpectedCodes}).To(Equal([]string{"GET", "/readyz", "200"}))
	g.Expect(after["6443"].ID).NotTo(Equal(before["6443"].ID))
	g.Expect(after["8132"]).To(Equal(before["8132"]), "the additional port's monitor is untouched")
	g.Expect(w.events()).To(ContainSubstring("ReplacingHealthMonitor"))

	d.Monitor.URLPath, d.Monitor.ExpectedCodes = "/livez", "200-204"
	w.cloud.ResetCalls()
	again, _ = converge(t, s, d, again.Status)
	g.Expect(changes(w.cloud.Calls())).To(Equal(map[string]int{"UpdateMonitor": 1}))
	g.Expect([]string{byPort()["6443"].URLPath, byPort()["6443"].ExpectedCodes}).To(Equal([]string{"/livez", "200-204"}))

	// A restarted manager reads the HTTPS monitor and finds nothing to change.
	w.memory = NewMemory()
	w.cloud.ResetCalls()
	g.Expect(w.service().Reconcile(ctx, d, again.Status).State).To(Equal(zones.StateReady))
	g.Expect(changes(w.cloud.Calls())).To(BeEmpty())

	d.Monitor = infrav1.APIServerLoadBalancerMonitor{Delay: 10, Timeout: 5, MaxRetries: 5, MaxRetriesDown: 3}
	_, _ = converge(t, w.service(), d, again.Status)
	g.Expect(byPort()["6443"].Type).To(Equal("TCP"))
}

func TestAnHTTPSMonitorIsCreatedWithTheLoadBalancer(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	d := w.desired("az1")
	d.Monitor.Type, d.Monitor.URLPath, d.Monitor.ExpectedCodes = infrav1.MonitorHTTPS, "/readyz", "200"
	_, _ = converge(t, w.service(), d, nil)
	mons, err := w.cloud.LoadBalancer().ListMonitors(ctx, monitors.ListOpts{})
	g.Expect(err).NotTo(HaveOccurred())
	types := map[string]string{}
	for _, m := range mons {
		types[m.Name[len(m.Name)-4:]] = m.Type + " " + m.URLPath
	}
	g.Expect(types).To(Equal(map[string]string{"6443": "HTTPS /readyz", "8132": "TCP "}))
}

func TestAnHTTPSMonitorIsRefusedOnOVNWithoutTouchingTheTCPOne(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	w.cloud.AddProvider("ovn")
	d := w.desired("az1")
	d.Provider = "ovn"
	ready, _ := converge(t, w.service(), d, nil)
	d.Monitor.Type = infrav1.MonitorHTTPS
	w.cloud.ResetCalls()
	out := w.service().Reconcile(ctx, d, ready.Status)
	g.Expect(out.State).To(Equal(zones.StateReady), "the zone's health goes on with its TCP monitor")
	g.Expect(w.events()).To(ContainSubstring("spec.apiServerLoadBalancer.monitor.type: HTTPS is not available on load balancer " + d.Name + " of provider ovn"))
	g.Expect(changes(w.cloud.Calls())).To(BeEmpty(), "the TCP monitor stays")
}
