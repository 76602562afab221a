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
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	. "github.com/onsi/gomega"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

// These tests run the service against the fake cloud and check what it leaves there and what it
// reports; call counts are asserted only where the count is the point.

func TestSteadyStateIsThreeReadCalls(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	s := w.service()
	d := w.desired("az1")
	ready, _ := converge(t, s, d, nil)
	w.events()

	w.cloud.ResetCalls()
	out := s.Reconcile(ctx, d, ready.Status)
	g.Expect(w.cloud.Calls()).To(Equal(map[string]int{"GetLoadBalancerStatuses": 1, "ListListeners": 1, "ListFloatingIPs": 1}))
	g.Expect(out.State).To(Equal(zones.StateReady))
	g.Expect(out.Status).To(Equal(ready.Status), "the entry recorded before")
	// With what the status tree says of the load balancer's health.
	g.Expect(out.Status.ProvisioningStatus).To(Equal("ACTIVE"))
	g.Expect(out.Status.OperatingStatus).To(Equal("ONLINE"))
	g.Expect(out.Status.Healthy).To(HaveValue(BeTrue()))
	g.Expect(out.Status.Pools).To(HaveExactElements(
		And(HaveField("Name", zones.ChildName(d.Name, 6443)), HaveField("Port", 6443)),
		And(HaveField("Name", zones.ChildName(d.Name, 8132)), HaveField("Port", 8132))))
	g.Expect(w.events()).To(BeEmpty(), "nothing changed, nothing to tell")
}

func TestCreateIsOneFullyPopulatedLoadBalancerWithTheZoneHint(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1", "az2")
	s := w.service()
	w.cloud.ResetCalls()
	for _, az := range []string{"az1", "az2"} {
		d := w.desired(az)
		d.Provider = "amphora"
		continues(d, "")
		out := s.Reconcile(ctx, d, nil)
		g.Expect(out.State).To(Equal(zones.StateWaiting))
		g.Expect(out.Reason).To(Equal(infrav1.WaitingForLoadBalancerReason))
		g.Expect(out.Message).To(ContainSubstring("PENDING_CREATE"))
		g.Expect(out.RequeueAfter).To(Equal(requeue.Change))

		lbs, err := w.cloud.LoadBalancer().ListLoadBalancers(ctx, loadbalancers.ListOpts{Name: d.Name})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(lbs).To(HaveLen(1))
		lb := lbs[0]
		g.Expect(out.Status.ID).To(Equal(lb.ID), "recorded at once, so a crash now cannot make a second one")
		g.Expect(out.Status.InternalIP).To(Equal(lb.VipAddress))
		g.Expect(out.Status.LoadBalancerNetwork.Subnets[0].ID).To(Equal(w.subnets[az].ID))

		g.Expect(lb.Name).To(Equal("k8s-clusterapi-cluster-ns-c-" + az + "-kubeapi"))
		g.Expect(lb.AvailabilityZone).To(Equal(az))
		g.Expect(lb.VipSubnetID).To(Equal(w.subnets[az].ID))
		g.Expect(lb.Provider).To(Equal("amphora"))
		g.Expect(lb.Tags).To(ConsistOf(zones.OwnerTag("ns", "c"), testOwner.Tag()), "the cluster's mark, in the create call")
		ls, err := w.cloud.LoadBalancer().ListListeners(ctx, listeners.ListOpts{LoadbalancerID: lb.ID})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ls).To(HaveLen(2))
		for i, port := range []int{6443, 8132} {
			l := ls[i]
			name := zones.ChildName(d.Name, port)
			g.Expect(l.Name).To(Equal(name))
			g.Expect(l.ProtocolPort).To(Equal(port))
			g.Expect(l.Protocol).To(Equal(string(listeners.ProtocolTCP)))
			g.Expect(l.DefaultPoolID).NotTo(BeEmpty())
			p, err := w.cloud.LoadBalancer().GetPool(ctx, l.DefaultPoolID)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(p.Name).To(Equal(name))
			mons, err := w.cloud.LoadBalancer().ListMonitors(ctx, monitors.ListOpts{PoolID: p.ID})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(mons).To(HaveLen(1))
			m := mons[0]
			g.Expect([]any{m.Name, m.Type, m.Delay, m.Timeout, m.MaxRetries, m.MaxRetriesDown}).To(Equal([]any{name, string(monitors.TypeTCP), 10, 5, 5, 3}))
		}
	}
	calls := w.cloud.Calls()
	g.Expect(calls["ListLoadBalancerAvailabilityZones"]).To(Equal(1), "capabilities read once per cloud")
	g.Expect(calls["ListAvailabilityZoneCapabilities"]).To(Equal(1), "capabilities read once per cloud")
	g.Expect(changes(calls)).To(Equal(map[string]int{"CreateLoadBalancer": 2}), "each with its listeners, pools and monitors in the one call")
	g.Expect(w.events()).NotTo(ContainSubstring("Omitted"))
}

func TestCreateOmitsAZoneHintOctaviaCannotHonour(t *testing.T) {
	for _, tc := range []struct {
		name     string
		provider string
		setup    func(w *world)
		why      string
	}{
		{name: "zone Octavia does not know", setup: func(w *world) { w.cloud.SetLoadBalancerAvailabilityZones("az2") },
			why: `Octavia has no enabled availability zone "az1"`},
		{name: "zone list forbidden to the project", setup: func(w *world) {
			w.cloud.InjectFault(fakeopenstack.Fault{Operation: "ListLoadBalancerAvailabilityZones", Nth: 1, Status: http.StatusForbidden})
		}, why: "Octavia does not let this project list its availability zones"},
		{name: "provider without zone capabilities", provider: "ovn", setup: func(w *world) { w.cloud.AddProvider("ovn") },
			why: "Octavia provider ovn does not support availability zones"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			w := newWorld(t, "az1")
			tc.setup(w)
			d := w.desired("az1")
			d.Provider = tc.provider
			out := w.service().Reconcile(ctx, d, nil)
			g.Expect(out.State).To(Equal(zones.StateWaiting))
			lbs := w.loadBalancers()
			g.Expect(lbs).To(HaveLen(1))
			g.Expect(lbs[0].AvailabilityZone).To(BeEmpty())
			g.Expect(lbs[0].VipSubnetID).To(Equal(w.subnets["az1"].ID), "the VIP is still placed by its subnet")
			ev := w.events()
			g.Expect(ev).To(ContainSubstring("Warning OmittedAvailabilityZoneHint"))
			g.Expect(ev).To(ContainSubstring(tc.why))
		})
	}

	t.Run("provider capabilities forbidden: the zone list is trusted", func(t *testing.T) {
		g := NewWithT(t)
		w := newWorld(t, "az1")
		w.cloud.InjectFault(fakeopenstack.Fault{Operation: "ListAvailabilityZoneCapabilities", Nth: 1, Status: http.StatusForbidden})
		d := w.desired("az1")
		d.Provider = "amphora"
		g.Expect(w.service().Reconcile(ctx, d, nil).State).To(Equal(zones.StateWaiting))
		lbs := w.loadBalancers()
		g.Expect(lbs).To(HaveLen(1))
		g.Expect(lbs[0].AvailabilityZone).To(Equal("az1"))
	})
}

func TestCreateRefusals(t *testing.T) {
	t.Run("zone list failing is an error, nothing created", func(t *testing.T) {
		g := NewWithT(t)
		w := newWorld(t, "az1")
		w.cloud.InjectFault(fakeopenstack.Fault{Operation: "ListLoadBalancerAvailabilityZones", Nth: 1, Timeout: true})
		out := w.service().Reconcile(ctx, w.desired("az1"), nil)
		g.Expect(out.State).To(Equal(zones.StateError))
		g.Expect(out.Reason).To(Equal(infrav1.OpenStackErrorReason))
		g.Expect(out.Message).To(HavePrefix("listing Octavia availability zones: "))
		g.Expect(out.Message).To(ContainSubstring("context deadline exceeded"))
		g.Expect(w.loadBalancers()).To(BeEmpty())
	})

	t.Run("Octavia refusing the create names the load balancer", func(t *testing.T) {
		g := NewWithT(t)
		w := newWorld(t, "az1")
		w.cloud.InjectFault(fakeopenstack.Fault{Operation: "CreateLoadBalancer", Nth: 1, Status: http.StatusBadRequest})
		d := w.desired("az1")
		out := w.service().Reconcile(ctx, d, nil)
		g.Expect(out.State).To(Equal(zones.StateInvalid))
		g.Expect(out.Reason).To(Equal(infrav1.LoadBalancerConfigurationErrorReason))
		g.Expect(out.Message).To(ContainSubstring("Octavia refused load balancer " + d.Name))
		g.Expect(w.loadBalancers()).To(BeEmpty())
	})

	t.Run("unknown flavor is a configuration error", func(t *testing.T) {
		g := NewWithT(t)
		w := newWorld(t, "az1")
		d := w.desired("az1")
		d.Flavor = "gold"
		out := w.service().Reconcile(ctx, d, nil)
		g.Expect(out.State).To(Equal(zones.StateInvalid))
		g.Expect(out.Reason).To(Equal(infrav1.LoadBalancerConfigurationErrorReason))
		g.Expect(out.Message).To(Equal(`spec.apiServerLoadBalancer.flavor: Octavia has no enabled flavor "gold"`))
		g.Expect(w.loadBalancers()).To(BeEmpty())
	})
}

func TestALostStatusIsFoundAgainByName(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	s := w.service()
	d := w.desired("az1")
	first, _ := converge(t, s, d, nil)
	w.events()

	out := s.Reconcile(ctx, d, nil)
	g.Expect(out.State).To(Equal(zones.StateReady), "found by its name and ready in one reconcile")
	g.Expect(out.Status.ID).To(Equal(first.Status.ID))
	g.Expect(out.Status.IP).To(Equal(first.Status.IP))
	g.Expect(out.Status.InternalIP).To(Equal(first.Status.InternalIP))
	g.Expect(out.Status.LoadBalancerNetwork.Subnets[0].ID).To(Equal(w.subnets["az1"].ID))
	g.Expect(w.events()).To(ContainSubstring("AdoptedLoadBalancer"))
	g.Expect(w.loadBalancers()).To(HaveLen(1), "not created again")
	g.Expect(w.floatingIPs()).To(HaveLen(1))
}

// A create that got no answer may still be carried out: an Octavia busy with many creates commits
// one well after the client gave up (measured on the local Octavia with ten clusters at once).
// It is not sent again while its load balancer may appear, and once it appears it is taken.
func TestAnUnansweredCreateIsNotSentAgainWhileItsLoadBalancerMayAppear(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	s := w.service()
	d := w.desired("az1")
	w.cloud.InjectFault(fakeopenstack.Fault{Operation: "CreateLoadBalancer", Nth: 1, LoseResponse: true, Uncommitted: 3})
	out := s.Reconcile(ctx, d, nil)
	g.Expect(out.State).To(Equal(zones.StateError))
	for range 3 {
		out = s.Reconcile(ctx, d, nil)
		g.Expect(out.State).To(Equal(zones.StateWaiting))
		g.Expect(out.Message).To(ContainSubstring("the create of load balancer " + d.Name + " sent at "))
		g.Expect(out.Message).To(ContainSubstring("got no answer; looking for it until"))
		g.Expect(out.RequeueAfter).To(Equal(requeue.UnansweredLook))
	}
	ready, _ := converge(t, s, d, nil)
	g.Expect(ready.State).To(Equal(zones.StateReady))
	g.Expect(w.cloud.Calls()["CreateLoadBalancer"]).To(Equal(1), "never sent twice")
	g.Expect(w.loadBalancers()).To(HaveLen(1))
	_, awaited := w.memory.awaitsUnanswered("fake", d.Name, time.Now())
	g.Expect(awaited).To(BeFalse(), "forgotten once found: a later recreation (after ERROR) does not wait")

	// Past the wait, nothing having appeared, the create is sent again.
	other := w.desired("az1")
	other.Name = "other"
	w.cloud.InjectFault(fakeopenstack.Fault{Operation: "CreateLoadBalancer", Nth: 1, Timeout: true})
	g.Expect(s.Reconcile(ctx, other, nil).State).To(Equal(zones.StateError))
	w.memory.createUnanswered("fake", other.Name, time.Now().Add(-UnansweredCreateWait))
	g.Expect(s.Reconcile(ctx, other, nil).State).To(Equal(zones.StateWaiting))
	g.Expect(w.cloud.Calls()["CreateLoadBalancer"]).To(Equal(3))
}

// A manager that starts while a create may still be carried out (the one that sent it restarted)
// learns of it from the status entry the failed create left, and waits as well.
func TestAnUnansweredCreateIsRememberedInTheStatusAcrossARestart(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	d := w.desired("az1")
	w.cloud.InjectFault(fakeopenstack.Fault{Operation: "CreateLoadBalancer", Nth: 1, LoseResponse: true, Uncommitted: 2})
	out := w.service().Reconcile(ctx, d, nil)
	g.Expect(out.State).To(Equal(zones.StateError))
	g.Expect(out.Status).NotTo(BeNil(), "the status records the create")
	g.Expect(out.Status.Name).To(Equal(d.Name))
	g.Expect(out.Status.ID).To(BeEmpty())
	g.Expect(out.Status.CreateSentAt).NotTo(BeNil())
	recorded := out.Status

	w.memory = NewMemory() // a restart
	s := w.service()
	for range 2 {
		out = s.Reconcile(ctx, d, recorded)
		g.Expect(out.State).To(Equal(zones.StateWaiting))
		g.Expect(out.Message).To(ContainSubstring("got no answer; looking for it until"))
	}
	ready, _ := converge(t, s, d, recorded)
	g.Expect(ready.State).To(Equal(zones.StateReady))
	g.Expect(ready.Status.CreateSentAt).To(BeNil(), "found: nothing left to wait for")
	g.Expect(w.cloud.Calls()["CreateLoadBalancer"]).To(Equal(1), "never sent twice")
	g.Expect(w.loadBalancers()).To(HaveLen(1))

	// A recorded create past the wait, or one far in the future, holds nothing back.
	for _, sent := range []time.Time{time.Now().Add(-UnansweredCreateWait), time.Now().Add(time.Hour)} {
		other := w.desired("az1")
		other.Name = "other-" + sent.Format("150405")
		_, waits := NewService(nil, nil, nil, NewMemory(), "fake", testOwner, testOwner.Name).awaitsUnanswered(other,
			&infrav1.LoadBalancer{Name: other.Name, CreateSentAt: &metav1.Time{Time: sent}}, time.Now())
		g.Expect(waits).To(BeFalse())
	}
}

func TestTwoLoadBalancersWithOneNameAreRefused(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	d := w.desired("az1")
	var ids []string
	for range 2 {
		lb, err := w.cloud.LoadBalancer().CreateLoadBalancer(ctx, loadbalancers.CreateOpts{Name: d.Name, VipSubnetID: d.Subnet.ID})
		g.Expect(err).NotTo(HaveOccurred())
		ids = append(ids, lb.ID)
	}
	out := w.service().Reconcile(ctx, d, nil)
	g.Expect(out.State).To(Equal(zones.StateInvalid))
	g.Expect(out.Message).To(Equal("2 load balancers named " + d.Name + " (" + strings.Join(ids, ", ") + ") are all this object's: delete all but one"))
	g.Expect(w.loadBalancers()).To(HaveLen(2), "neither is guessed at, nor a third created")
}

func TestPendingIsWaitedForWithoutBlocking(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	s := w.service()
	d := w.desired("az1")
	ready, _ := converge(t, s, d, nil)
	id := ready.Status.ID

	w.cloud.SetLoadBalancerStatus(id, "PENDING_UPDATE")
	out := s.Reconcile(ctx, d, ready.Status)
	g.Expect(out.State).To(Equal(zones.StateWaiting))
	g.Expect(out.Message).To(Equal("load balancer " + d.Name + " is PENDING_UPDATE"))
	g.Expect(out.RequeueAfter).To(Equal(requeue.Change), "a fresh change is looked at again soon")

	// A load balancer pending for long (an amphora booting) is looked at less often.
	w.memory.pendingSince[id] = time.Now().Add(-time.Minute)
	w.cloud.SetLoadBalancerStatus(id, "PENDING_CREATE")
	out = s.Reconcile(ctx, d, ready.Status)
	g.Expect(out.RequeueAfter).To(Equal(5 * time.Second))

	// Once it settles, the clock starts again for its next change.
	w.cloud.SetLoadBalancerStatus(id, "ERROR")
	s.Reconcile(ctx, d, ready.Status)
	g.Expect(w.memory.pendingSince).NotTo(HaveKey(id))
}

func TestPendingInterval(t *testing.T) {
	g := NewWithT(t)
	for _, tc := range []struct{ pending, want time.Duration }{
		{0, requeue.Change}, {1999 * time.Millisecond, requeue.Change},
		{2 * time.Second, requeue.Pending}, {9 * time.Second, requeue.Pending},
		{10 * time.Second, time.Second}, {29 * time.Second, time.Second},
		{30 * time.Second, 5 * time.Second}, {2 * time.Minute, 15 * time.Second},
	} {
		g.Expect(pendingInterval(tc.pending)).To(Equal(tc.want), "pending for %s", tc.pending)
	}
}

func TestErrorRecoveryDeletesAndCreatesAgain(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	w.memory.ErrorInterval = 0
	s := w.service()
	d := w.desired("az1")
	first, _ := converge(t, s, d, nil)
	w.events()
	w.cloud.SetLoadBalancerStatus(first.Status.ID, "ERROR")

	for i := 1; i < ErrorObservations; i++ {
		out := s.Reconcile(ctx, d, first.Status)
		g.Expect(out.State).To(Equal(zones.StateError))
		g.Expect(out.Reason).To(Equal(infrav1.LoadBalancerErrorReason))
		g.Expect(out.ProvisioningStatus).To(Equal("ERROR"))
	}
	g.Expect(w.loadBalancers()).To(HaveLen(1), "not deleted before the last observation")
	out := s.Reconcile(ctx, d, first.Status)
	g.Expect(out.State).To(Equal(zones.StateWaiting))
	g.Expect(out.Reason).To(Equal(infrav1.LoadBalancerErrorReason))
	ev := w.events()
	g.Expect(strings.Count(ev, "Warning LoadBalancerError")).To(Equal(ErrorObservations - 1))
	g.Expect(ev).To(ContainSubstring("Warning DeletedLoadBalancer"))

	// Deleted with its children: the next reconcile finds nothing under the recorded ID or the
	// name, and creates.
	again := s.Reconcile(ctx, d, out.Status)
	g.Expect(again.State).To(Equal(zones.StateWaiting))
	g.Expect(again.Status.ID).NotTo(Equal(first.Status.ID))
	for _, r := range w.cloud.Inventory() {
		g.Expect(r.ID).NotTo(Equal(first.Status.ID))
		g.Expect(r.Owner).NotTo(Equal(first.Status.ID), "%s left behind", r)
	}
	lbs := w.loadBalancers()
	g.Expect(lbs).To(HaveLen(1))
	g.Expect(lbs[0].ID).To(Equal(again.Status.ID))
}
