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

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	. "github.com/onsi/gomega"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

// onVIP asserts that the cloud holds exactly one floating IP, on the VIP of the load balancer st
// records, and returns it.
func onVIP(t *testing.T, g *WithT, w *world, st *infrav1.LoadBalancer) floatingips.FloatingIP {
	t.Helper()
	fips := w.floatingIPs()
	g.Expect(fips).To(HaveLen(1), "one floating IP, never a second")
	lb, err := w.cloud.LoadBalancer().GetLoadBalancer(ctx, st.ID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fips[0].PortID).To(Equal(lb.VipPortID))
	g.Expect(fips[0].FixedIP).To(Equal(st.InternalIP))
	g.Expect(st.IP).To(Equal(fips[0].FloatingIP))
	return fips[0]
}

func TestFloatingIPOfAnActiveLoadBalancer(t *testing.T) {
	t.Run("the user's address: looked up by address and associated", func(t *testing.T) {
		g := NewWithT(t)
		w := newWorld(t, "az1")
		users, err := w.cloud.Network().CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: w.ext, FloatingIP: "172.24.4.99"})
		g.Expect(err).NotTo(HaveOccurred())
		d := w.desired("az1")
		d.FloatingIP.Address = "172.24.4.99"
		out, _ := converge(t, w.service(), d, nil)
		g.Expect(out.Status.IP).To(Equal("172.24.4.99"))
		g.Expect(onVIP(t, g, w, out.Status).ID).To(Equal(users.ID))
	})

	t.Run("the user's address not allocated yet: allocated with that address, no description", func(t *testing.T) {
		g := NewWithT(t)
		w := newWorld(t, "az1")
		d := w.desired("az1")
		d.FloatingIP.Address = "172.24.4.99"
		out, _ := converge(t, w.service(), d, nil)
		fip := onVIP(t, g, w, out.Status)
		g.Expect(fip.FloatingIP).To(Equal("172.24.4.99"))
		g.Expect(fip.Description).To(BeEmpty())
	})

	t.Run("ours, unassociated after a crash: reused, not a second one", func(t *testing.T) {
		g := NewWithT(t)
		w := newWorld(t, "az1")
		d := w.desired("az1")
		ours, err := w.cloud.Network().CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: w.ext, FloatingIP: "172.24.4.11", Description: d.FloatingIP.Description})
		g.Expect(err).NotTo(HaveOccurred())
		out, _ := converge(t, w.service(), d, nil)
		g.Expect(out.Status.IP).To(Equal("172.24.4.11"))
		g.Expect(onVIP(t, g, w, out.Status).ID).To(Equal(ours.ID))
		g.Expect(w.events()).To(ContainSubstring("AssociatedFloatingIP"))
	})

	t.Run("one already on the VIP from before the migration: adopted by marking it", func(t *testing.T) {
		g := NewWithT(t)
		w := newWorld(t, "az1")
		d := w.desired("az1")
		ready, _ := converge(t, w.service(), d, nil)
		before := onVIP(t, g, w, ready.Status)
		unmarked := ""
		_, err := w.cloud.Network().UpdateFloatingIP(ctx, before.ID, floatingips.UpdateOpts{Description: &unmarked})
		g.Expect(err).NotTo(HaveOccurred())
		w.events()

		out := w.service().Reconcile(ctx, d, ready.Status)
		g.Expect(out.State).To(Equal(zones.StateReady))
		g.Expect(out.Status.IP).To(Equal(before.FloatingIP), "existing clients keep their address")
		fip := onVIP(t, g, w, out.Status)
		g.Expect(fip.ID).To(Equal(before.ID))
		g.Expect(fip.Description).To(Equal(d.FloatingIP.Description))
		g.Expect(w.events()).To(ContainSubstring("AdoptedFloatingIP"))
	})

	t.Run("none at all: allocated with our description", func(t *testing.T) {
		g := NewWithT(t)
		w := newWorld(t, "az1")
		d := w.desired("az1")
		out, _ := converge(t, w.service(), d, nil)
		g.Expect(onVIP(t, g, w, out.Status).Description).To(Equal(d.FloatingIP.Description))
		g.Expect(w.events()).To(ContainSubstring("CreatedFloatingIP"))
	})

	t.Run("no route from the external network: a configuration error that says so", func(t *testing.T) {
		g := NewWithT(t)
		w := newWorld(t, "az1")
		s := w.service()
		d := w.desired("az1")
		d.Subnet = w.unroutedSubnet()
		var out zones.Outcome
		var k *infrav1.LoadBalancer
		for i := 0; i < 10 && (i == 0 || out.State == zones.StateWaiting); i++ {
			out = s.Reconcile(ctx, d, k)
			if out.Status != nil {
				k = out.Status
			}
		}
		g.Expect(out.State).To(Equal(zones.StateInvalid))
		g.Expect(out.Reason).To(Equal(infrav1.LoadBalancerConfigurationErrorReason))
		g.Expect(out.Message).To(ContainSubstring("needs a router to the external network"))
		g.Expect(out.Message).To(ContainSubstring("availability zone az1"))
		g.Expect(w.floatingIPs()).To(BeEmpty())
	})
}

// A load balancer Octavia is still creating gets its floating IP meanwhile, allocated in the
// background (Neutron takes its time too: the test runs that work when it chooses).
func TestFloatingIPWhileOctaviaCreates(t *testing.T) {
	creating := func(t *testing.T, w *world) (*Service, *zones.Desired, *deferred, *infrav1.LoadBalancer) {
		t.Helper()
		q := w.deferBackground()
		s := w.service()
		d := w.desired("az1")
		out := s.Reconcile(ctx, d, nil)
		if out.State != zones.StateWaiting || out.Status.IP != out.Status.InternalIP {
			t.Fatalf("not created without a floating IP: %+v", out)
		}
		w.events()
		return s, d, q, out.Status
	}

	t.Run("allocated on the VIP port in the background before the load balancer is ACTIVE", func(t *testing.T) {
		g := NewWithT(t)
		w, octavia := newSlowWorld(t, "az1")
		octavia.freeze()
		s, d, q, k := creating(t, w)
		out := s.Reconcile(ctx, d, k)
		g.Expect(out.State).To(Equal(zones.StateWaiting))
		g.Expect(out.Message).To(ContainSubstring("PENDING_CREATE"))
		g.Expect(out.Status.IP).To(Equal(k.InternalIP), "the reconcile does not wait for Neutron")
		g.Expect(q.len()).To(Equal(1))
		q.run()
		fips := w.floatingIPs()
		g.Expect(fips).To(HaveLen(1))
		g.Expect(fips[0].Description).To(Equal(d.FloatingIP.Description))
		g.Expect(fips[0].FixedIP).To(Equal(k.InternalIP))
		lb, err := w.cloud.LoadBalancer().GetLoadBalancer(ctx, k.ID)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(lb.ProvisioningStatus).To(Equal("PENDING_CREATE"))
		g.Expect(fips[0].PortID).To(Equal(lb.VipPortID))

		w.cloud.ResetCalls()
		out = s.Reconcile(ctx, d, out.Status)
		g.Expect(w.cloud.Calls()).To(Equal(map[string]int{"GetLoadBalancerStatuses": 1}))
		g.Expect(out.State).To(Equal(zones.StateWaiting))
		g.Expect(out.Status.IP).To(Equal(fips[0].FloatingIP), "recorded, so the next pending reconcile costs one call")
		g.Expect(w.events()).To(ContainSubstring("CreatedFloatingIP Allocated floating IP " + fips[0].FloatingIP))
	})

	t.Run("one allocation at a time: the polls meanwhile allocate nothing", func(t *testing.T) {
		g := NewWithT(t)
		w, octavia := newSlowWorld(t, "az1")
		octavia.freeze()
		s, d, q, k := creating(t, w)
		s.Reconcile(ctx, d, k)
		w.cloud.ResetCalls()
		for range 3 {
			out := s.Reconcile(ctx, d, k)
			g.Expect(out.Status.IP).To(Equal(k.InternalIP))
		}
		g.Expect(w.cloud.Calls()).To(Equal(map[string]int{"GetLoadBalancerStatuses": 3}), "polls while PENDING read only the status tree")
		g.Expect(q.len()).To(Equal(1))
		q.run()
		g.Expect(w.floatingIPs()).To(HaveLen(1))
	})

	t.Run("a failure is left for the ACTIVE load balancer to report", func(t *testing.T) {
		g := NewWithT(t)
		w, octavia := newSlowWorld(t, "az1")
		octavia.freeze()
		q := w.deferBackground()
		s := w.service()
		d := w.desired("az1")
		d.Subnet = w.unroutedSubnet()
		k := s.Reconcile(ctx, d, nil).Status
		w.events()
		out := s.Reconcile(ctx, d, k)
		g.Expect(out.State).To(Equal(zones.StateWaiting))
		q.run() // Neutron answers 404: no route to the VIP
		w.cloud.ResetCalls()
		out = s.Reconcile(ctx, d, out.Status)
		g.Expect(out.State).To(Equal(zones.StateWaiting))
		g.Expect(out.Status.IP).To(Equal(k.InternalIP))
		g.Expect(w.cloud.Calls()).NotTo(HaveKey("CreateFloatingIP"), "not tried again while Octavia creates")
		g.Expect(w.events()).To(BeEmpty())

		octavia.thaw()
		out = s.Reconcile(ctx, d, out.Status)
		g.Expect(out.State).To(Equal(zones.StateInvalid))
		g.Expect(out.Message).To(ContainSubstring("needs a router to the external network"))
		g.Expect(w.floatingIPs()).To(BeEmpty())
	})

	t.Run("recorded already: only the status tree is read", func(t *testing.T) {
		g := NewWithT(t)
		w := newWorld(t, "az1")
		s := w.service()
		d := w.desired("az1")
		ready, _ := converge(t, s, d, nil)
		w.cloud.SetLoadBalancerStatus(ready.Status.ID, "PENDING_CREATE")
		w.cloud.ResetCalls()
		out := s.Reconcile(ctx, d, ready.Status)
		g.Expect(out.State).To(Equal(zones.StateWaiting))
		g.Expect(w.cloud.Calls()).To(Equal(map[string]int{"GetLoadBalancerStatuses": 1}))
	})
}

func TestActiveLoadBalancerWaitsForItsFloatingIPBeingAllocated(t *testing.T) {
	g := NewWithT(t)
	w, octavia := newSlowWorld(t, "az1")
	q := w.deferBackground()
	s := w.service()
	d := w.desired("az1")
	octavia.freeze()
	created := s.Reconcile(ctx, d, nil)
	pending := s.Reconcile(ctx, d, created.Status)
	g.Expect(q.len()).To(Equal(1), "Neutron allocates it")

	// Octavia is done first.
	octavia.thaw()
	w.cloud.ResetCalls()
	out := s.Reconcile(ctx, d, pending.Status)
	g.Expect(out.State).To(Equal(zones.StateWaiting), "no second allocation while Neutron makes the first")
	g.Expect(out.Message).To(ContainSubstring("allocating a floating IP"))
	g.Expect(w.cloud.Calls()).NotTo(HaveKey("CreateFloatingIP"))
	g.Expect(w.floatingIPs()).To(BeEmpty())

	// Once allocated, it is reported and found on the VIP.
	q.run()
	w.events()
	out = s.Reconcile(ctx, d, out.Status)
	g.Expect(out.State).To(Equal(zones.StateReady))
	fip := onVIP(t, g, w, out.Status)
	g.Expect(w.events()).To(ContainSubstring("CreatedFloatingIP Allocated floating IP " + fip.FloatingIP))
}
