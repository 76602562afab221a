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
	"context"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/apiversions"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/tools/events"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

var ctx = context.Background()

// world is a fake cloud with an external network, a load balancer network with one subnet per
// zone, and a router between them (so floating IPs can reach the VIPs).
type world struct {
	cloud    *fakeopenstack.Cloud
	ext      string
	network  infrav1.NetworkStatus
	subnets  map[string]*infrav1.Subnet
	recorder *events.FakeRecorder
	memory   *Memory
}

func newWorld(t *testing.T, azs ...string) *world {
	t.Helper()
	return newWorldWith(t, fakeopenstack.Options{}, azs...)
}

// newWorldWith is newWorld on a fake tuned by opts.
func newWorldWith(t *testing.T, opts fakeopenstack.Options, azs ...string) *world {
	t.Helper()
	cloud := fakeopenstack.New(opts)
	cloud.SetAvailabilityZones(azs...)
	w := &world{cloud: cloud, subnets: map[string]*infrav1.Subnet{}, recorder: events.NewFakeRecorder(1000), memory: NewMemory()}
	w.ext = cloud.AddNetwork("public", true)
	cloud.AddSubnet(w.ext, "public", "172.24.4.0/24")
	netID := cloud.AddNetwork("lb-net", false)
	w.network = infrav1.NetworkStatus{Name: "lb-net", ID: netID}
	router, err := cloud.Network().CreateRouter(ctx, routers.CreateOpts{Name: "r", GatewayInfo: &routers.GatewayInfo{NetworkID: w.ext}})
	if err != nil {
		t.Fatal(err)
	}
	for i, az := range append([]string{""}, azs...) {
		id := cloud.AddSubnet(netID, "lb-"+az, "10.10."+string(rune('0'+i))+".0/24")
		w.subnets[az] = &infrav1.Subnet{Name: "lb-" + az, ID: id, CIDR: "10.10." + string(rune('0'+i)) + ".0/24"}
		if _, err := cloud.Network().AddRouterInterface(ctx, router.ID, routers.AddInterfaceOpts{SubnetID: id}); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w *world) service() *Service {
	return NewService(w.cloud.LoadBalancer(), w.cloud.Network(), report.NewRecorder(w.recorder, &infrav1.OpenStackCluster{}, logr.Discard()), w.memory, "fake", testOwner, testOwner.Name)
}

// desired is the load balancer of az ("" for the single one) of cluster ns/c.
func (w *world) desired(az string) *zones.Desired {
	return &zones.Desired{
		AvailabilityZone: az, Name: zones.Name("ns", "c", az), Network: w.network, Subnet: w.subnets[az], OctaviaAZ: az,
		Ports: []int{6443, 8132}, Monitor: infrav1.APIServerLoadBalancerMonitor{Delay: 10, Timeout: 5, MaxRetries: 5, MaxRetriesDown: 3},
		FloatingIP: &zones.FloatingIP{ExternalNetworkID: w.ext, Description: zones.FloatingIPDescription("ns", "c", az)},
		Tags:       []string{zones.OwnerTag("ns", "c")},
	}
}

// continues makes d continue the load balancer of zone former ("" for the single one), as the
// plan does.
func continues(d *zones.Desired, former string) {
	d.FormerNames = []string{zones.Name("ns", "c", former)}
}

// converge reconciles until the load balancer is ready, as the controller's requeues would, and
// returns the last outcome and how many reconciles it took.
func converge(t *testing.T, s *Service, d *zones.Desired, known *infrav1.LoadBalancer) (zones.Outcome, int) {
	t.Helper()
	for i := 1; i <= 30; i++ {
		out := s.Reconcile(ctx, d, known)
		if out.Status != nil {
			known = out.Status
		}
		switch out.State {
		case zones.StateReady:
			return out, i
		case zones.StateWaiting:
			t.Logf("reconcile %d: %s", i, out.Message)
		default:
			t.Fatalf("reconcile %d: %s: %s (%v)", i, out.State, out.Message, out.Err)
		}
	}
	t.Fatalf("not ready after 30 reconciles")
	return zones.Outcome{}, 0
}

func (w *world) loadBalancers() []loadbalancers.LoadBalancer {
	lbs, _ := w.cloud.LoadBalancer().ListLoadBalancers(ctx, loadbalancers.ListOpts{})
	return lbs
}

func (w *world) floatingIPs() []floatingips.FloatingIP {
	fips, _ := w.cloud.Network().ListFloatingIPs(ctx, floatingips.ListOpts{})
	return fips
}

// childNames are the names of the listeners, pools and monitors of a load balancer.
func (w *world) childNames(id string) (ls, ps, ms []string) {
	all, _ := w.cloud.LoadBalancer().ListListeners(ctx, listeners.ListOpts{LoadbalancerID: id})
	for _, l := range all {
		ls = append(ls, l.Name)
	}
	pl, _ := w.cloud.LoadBalancer().ListPools(ctx, pools.ListOpts{LoadbalancerID: id})
	for _, p := range pl {
		ps = append(ps, p.Name)
		mons, _ := w.cloud.LoadBalancer().ListMonitors(ctx, monitors.ListOpts{PoolID: p.ID})
		for _, m := range mons {
			ms = append(ms, m.Name)
		}
	}
	return ls, ps, ms
}

func (w *world) events() string {
	var out []string
	for {
		select {
		case e := <-w.recorder.Events:
			out = append(out, e)
		default:
			return strings.Join(out, "\n")
		}
	}
}

func TestSingleLoadBalancerConvergesAndHoldsSteady(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	s := w.service()
	d := w.desired("")

	out, rounds := converge(t, s, d, nil)
	g.Expect(rounds).To(Equal(2), "one create, then ACTIVE with everything in place")
	st := out.Status
	g.Expect(st.Name).To(Equal("k8s-clusterapi-cluster-ns-c-kubeapi"))
	g.Expect(st.InternalIP).To(HavePrefix("10.10.0."))
	g.Expect(st.IP).To(HavePrefix("172.24.4."))
	g.Expect(st.LoadBalancerNetwork.ID).To(Equal(w.network.ID))
	g.Expect(st.LoadBalancerNetwork.Subnets[0].ID).To(Equal(w.subnets[""].ID))
	ls, ps, ms := w.childNames(st.ID)
	want := []string{"k8s-clusterapi-cluster-ns-c-kubeapi-6443", "k8s-clusterapi-cluster-ns-c-kubeapi-8132"}
	g.Expect(ls).To(ConsistOf(want))
	g.Expect(ps).To(ConsistOf(want))
	g.Expect(ms).To(ConsistOf(want))
	fips := w.floatingIPs()
	g.Expect(fips).To(HaveLen(1))
	g.Expect(fips[0].Description).To(Equal(zones.FloatingIPDescription("ns", "c", "")))
	g.Expect(fips[0].FixedIP).To(Equal(st.InternalIP))
	g.Expect(w.events()).To(ContainSubstring("CreatedLoadBalancer"))

	// The steady state: three calls, no change.
	w.cloud.ResetCalls()
	again := s.Reconcile(ctx, d, st)
	g.Expect(again.State).To(Equal(zones.StateReady))
	g.Expect(again.Status).To(Equal(st))
	g.Expect(w.cloud.Calls()).To(Equal(map[string]int{"GetLoadBalancerStatuses": 1, "ListListeners": 1, "ListFloatingIPs": 1}))

	// A lost status: found again by name, nothing created twice.
	rebuilt, _ := converge(t, s, d, nil)
	g.Expect(rebuilt.Status.ID).To(Equal(st.ID))
	g.Expect(rebuilt.Status.IP).To(Equal(st.IP))
	g.Expect(w.loadBalancers()).To(HaveLen(1))
	g.Expect(w.floatingIPs()).To(HaveLen(1))
	g.Expect(w.events()).To(ContainSubstring("AdoptedLoadBalancer"))
}

func TestNoFloatingIPMeansTheVIPIsTheAddress(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t)
	d := w.desired("")
	d.FloatingIP = nil
	out, _ := converge(t, w.service(), d, nil)
	g.Expect(out.Status.IP).To(Equal(out.Status.InternalIP))
	g.Expect(w.floatingIPs()).To(BeEmpty())
}

func TestUserFloatingIPIsUsedAndNeverReleased(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1", "az2")
	s := w.service()
	first, second := w.desired("az1"), w.desired("az2")
	first.FloatingIP.Address = "172.24.4.99"

	out1, _ := converge(t, s, first, nil)
	out2, _ := converge(t, s, second, nil)
	g.Expect(out1.Status.IP).To(Equal("172.24.4.99"))
	g.Expect(out2.Status.IP).NotTo(Equal("172.24.4.99"))
	g.Expect(w.floatingIPs()).To(HaveLen(2))

	done, err := s.Delete(ctx, &zones.Removal{Namespace: "ns", Cluster: "c", Names: []string{first.Name, second.Name}, AllTagged: true,
		KeepAddresses: []string{"172.24.4.99"}, ExternalNetworkID: w.ext})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeFalse(), "Octavia deletes asynchronously")
	g.Eventually(func() (bool, error) {
		return s.Delete(ctx, &zones.Removal{Namespace: "ns", Cluster: "c", AllTagged: true, KeepAddresses: []string{"172.24.4.99"}, ExternalNetworkID: w.ext})
	}).WithTimeout(5e9).Should(BeTrue())
	g.Expect(w.loadBalancers()).To(BeEmpty())
	fips := w.floatingIPs()
	g.Expect(fips).To(HaveLen(1), "only the user's floating IP is left")
	g.Expect(fips[0].FloatingIP).To(Equal("172.24.4.99"))
	g.Expect(fips[0].PortID).To(BeEmpty())
}

func TestMigrationRenamesTheLegacyLoadBalancerKeepingItsAddresses(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1", "az2")
	s := w.service()
	legacy, _ := converge(t, s, w.desired(""), nil)
	w.events()

	// availabilityZoneSubnets with az1 first: az1 inherits the legacy load balancer. Its VIP is
	// on the legacy subnet, which is what the status must say.
	az1 := w.desired("az1")
	continues(az1, "")
	out, rounds := converge(t, s, az1, legacy.Status)
	g.Expect(rounds).To(Equal(8), "the load balancer, then listener, pool and monitor of two ports, one change per reconcile")
	g.Expect(out.Status.ID).To(Equal(legacy.Status.ID))
	g.Expect(out.Status.Name).To(Equal("k8s-clusterapi-cluster-ns-c-az1-kubeapi"))
	g.Expect(out.Status.InternalIP).To(Equal(legacy.Status.InternalIP))
	g.Expect(out.Status.IP).To(Equal(legacy.Status.IP))
	g.Expect(out.Status.AvailabilityZone).To(Equal("az1"))
	g.Expect(out.Status.FormerSingle).NotTo(BeNil(), "the address clients know: it keeps every zone's machines for now")
	ls, ps, ms := w.childNames(out.Status.ID)
	want := []string{"k8s-clusterapi-cluster-ns-c-az1-kubeapi-6443", "k8s-clusterapi-cluster-ns-c-az1-kubeapi-8132"}
	g.Expect(ls).To(ConsistOf(want))
	g.Expect(ps).To(ConsistOf(want))
	g.Expect(ms).To(ConsistOf(want))
	fips := w.floatingIPs()
	g.Expect(fips).To(HaveLen(1))
	g.Expect(fips[0].Description).To(Equal(zones.FloatingIPDescription("ns", "c", "az1")), "the floating IP now carries the zone's mark")
	ev := w.events()
	for _, reason := range []string{"RenamedLoadBalancer", "RenamedListener", "RenamedPool", "RenamedHealthMonitor", "AdoptedFloatingIP"} {
		g.Expect(ev).To(ContainSubstring(reason))
	}
	g.Expect(w.loadBalancers()).To(HaveLen(1))

	// The status written before the rename lost: the recorded single entry still says where
	// clients are.
	g.Expect(s.Reconcile(ctx, az1, legacy.Status).Status.FormerSingle).NotTo(BeNil())

	// An interrupted migration (status lost mid-way) resumes by name: nothing is created.
	rebuilt, _ := converge(t, s, az1, nil)
	g.Expect(rebuilt.Status.ID).To(Equal(legacy.Status.ID))
	g.Expect(w.loadBalancers()).To(HaveLen(1))

	// Back to a single load balancer: the first zone's becomes the legacy one again.
	single := w.desired("")
	continues(single, out.Status.AvailabilityZone)
	back, _ := converge(t, s, single, out.Status)
	g.Expect(back.Status.ID).To(Equal(legacy.Status.ID))
	g.Expect(back.Status.Name).To(Equal(zones.Name("ns", "c", "")))
	g.Expect(back.Status.FormerSingle).To(BeNil())
	g.Expect(back.Status.IP).To(Equal(legacy.Status.IP))
	ls, _, _ = w.childNames(back.Status.ID)
	g.Expect(ls).To(ConsistOf("k8s-clusterapi-cluster-ns-c-kubeapi-6443", "k8s-clusterapi-cluster-ns-c-kubeapi-8132"))
}

func TestCorrectlyNamedResourcesAreAdoptedNotRenamed(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	s := w.service()
	made, _ := converge(t, s, w.desired("az1"), nil)
	w.events()
	// A legacy load balancer appears too (restored by someone): the zone keeps its own, and
	// the legacy one is not renamed over it.
	d := w.desired("az1")
	continues(d, "")
	out, rounds := converge(t, s, d, nil)
	g.Expect(rounds).To(Equal(1))
	g.Expect(out.Status.ID).To(Equal(made.Status.ID))
	g.Expect(w.events()).To(ContainSubstring("AdoptedLoadBalancer"))
}

func TestLoadBalancerInErrorIsRecreatedAfterBoundedObservations(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	s := w.service()
	d := w.desired("az1")
	first, _ := converge(t, s, d, nil)
	w.cloud.SetLoadBalancerStatus(first.Status.ID, "ERROR")

	// Reconciles in quick succession (status updates trigger them) count as one observation.
	for range 2 * ErrorObservations {
		out := s.Reconcile(ctx, d, first.Status)
		g.Expect(out.State).To(Equal(zones.StateError))
		g.Expect(out.RequeueAfter).To(Equal(requeue.Error), "the next observation that counts")
		g.Expect(out.Message).To(ContainSubstring("(1 so far)"))
	}
	g.Expect(w.loadBalancers()).To(HaveLen(1))

	// Observations far enough apart count each.
	w.memory.ErrorInterval = 0
	for i := 2; i < ErrorObservations; i++ {
		out := s.Reconcile(ctx, d, first.Status)
		g.Expect(out.State).To(Equal(zones.StateError))
		g.Expect(out.Reason).To(Equal(infrav1.LoadBalancerErrorReason))
		g.Expect(out.Message).To(ContainSubstring("ERROR"))
	}
	out := s.Reconcile(ctx, d, first.Status)
	g.Expect(out.State).To(Equal(zones.StateWaiting))
	g.Expect(out.Message).To(ContainSubstring("recreated"))
	g.Expect(w.events()).To(ContainSubstring("DeletedLoadBalancer"))

	again, _ := converge(t, s, d, out.Status)
	g.Expect(again.Status.ID).NotTo(Equal(first.Status.ID))
	g.Expect(again.Status.IP).To(Equal(first.Status.IP), "the floating IP moves to the new load balancer")
	g.Expect(w.loadBalancers()).To(HaveLen(1))
	g.Expect(w.floatingIPs()).To(HaveLen(1))
}

func TestAvailabilityZoneHint(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1", "az2")
	w.cloud.SetLoadBalancerAvailabilityZones("az1")
	w.cloud.AddProvider("ovn")
	s := w.service()

	converge(t, s, w.desired("az1"), nil)
	converge(t, s, w.desired("az2"), nil)
	byName := map[string]string{}
	for _, lb := range w.loadBalancers() {
		byName[lb.Name] = lb.AvailabilityZone
	}
	g.Expect(byName).To(Equal(map[string]string{zones.Name("ns", "c", "az1"): "az1", zones.Name("ns", "c", "az2"): ""}))
	ev := w.events()
	g.Expect(ev).To(ContainSubstring(`OmittedAvailabilityZoneHint`))
	g.Expect(ev).To(ContainSubstring(`Octavia has no enabled availability zone "az2"`))
	g.Expect(w.cloud.Calls()["ListLoadBalancerAvailabilityZones"]).To(Equal(1), "listed once, then cached")

	// A provider without availability zone capabilities gets no hint.
	d := w.desired("az1")
	d.Name, d.Provider, d.FloatingIP = "ovn-lb", "ovn", nil // az1's floating IP is az1's load balancer's
	converge(t, s, d, nil)
	lbs, _ := w.cloud.LoadBalancer().ListLoadBalancers(ctx, loadbalancers.ListOpts{Name: "ovn-lb"})
	g.Expect(lbs[0].AvailabilityZone).To(BeEmpty())
	g.Expect(w.events()).To(ContainSubstring("Octavia provider ovn does not support availability zones"))
}

func TestAllowedCIDRs(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	s := w.service()
	d := w.desired("az1")
	d.AllowedCIDRs = zones.CanonicalCIDRs([]string{"192.0.2.7/24", "198.51.100.1"})
	out, _ := converge(t, s, d, nil)
	g.Expect(out.Status.AllowedCIDRs).To(Equal([]string{"192.0.2.0/24", "198.51.100.1/32"}))
	all, _ := w.cloud.LoadBalancer().ListListeners(ctx, listeners.ListOpts{LoadbalancerID: out.Status.ID})
	for _, l := range all {
		g.Expect(l.AllowedCIDRs).To(Equal([]string{"192.0.2.0/24", "198.51.100.1/32"}))
	}

	// Canonical forms compare equal: no update loop.
	w.cloud.ResetCalls()
	g.Expect(s.Reconcile(ctx, d, out.Status).State).To(Equal(zones.StateReady))
	g.Expect(w.cloud.Calls()).NotTo(HaveKey("UpdateListener"))

	// A change reaches every listener, one per reconcile.
	d.AllowedCIDRs = zones.CanonicalCIDRs([]string{"203.0.113.0/24"})
	changed, rounds := converge(t, s, d, out.Status)
	g.Expect(rounds).To(Equal(3))
	g.Expect(changed.Status.AllowedCIDRs).To(Equal([]string{"203.0.113.0/24"}))

	// Removing the restriction opens the listeners again.
	d.AllowedCIDRs = nil
	opened, _ := converge(t, s, d, changed.Status)
	g.Expect(opened.Status.AllowedCIDRs).To(BeEmpty())
}

func TestAllowedCIDRsWhereOctaviaCannot(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	w.cloud.SetAPIVersions(apiversions.APIVersion{ID: "v2.0"}, apiversions.APIVersion{ID: "v2.10", Status: "CURRENT"})
	s := w.service()
	d := w.desired("az1")
	d.AllowedCIDRs = []string{"192.0.2.0/24"}
	out, _ := converge(t, s, d, nil)
	g.Expect(out.Status.AllowedCIDRs).To(BeEmpty())
	g.Expect(w.events()).To(ContainSubstring("allowed CIDRs need 2.12"))

	// A provider that answers 501 is remembered: it is not asked again.
	w2 := newWorld(t, "az1")
	w2.cloud.SetProviderAllowedCIDRs("amphora", false)
	s2 := w2.service()
	d2 := w2.desired("az1")
	out2, _ := converge(t, s2, d2, nil)
	d2.AllowedCIDRs = []string{"192.0.2.0/24"}
	out3 := s2.Reconcile(ctx, d2, out2.Status)
	g.Expect(out3.State).To(Equal(zones.StateReady))
	g.Expect(w2.events()).To(ContainSubstring("does not support allowed CIDRs"))
	w2.cloud.ResetCalls()
	g.Expect(s2.Reconcile(ctx, d2, out3.Status).State).To(Equal(zones.StateReady))
	g.Expect(w2.cloud.Calls()).NotTo(HaveKey("UpdateListener"))
}

func TestPortsFollowTheSpec(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	s := w.service()
	d := w.desired("az1")
	out, _ := converge(t, s, d, nil)

	d.Ports = []int{6443, 9345}
	out, rounds := converge(t, s, d, out.Status)
	g.Expect(rounds).To(Equal(6), "listener, pool and monitor of 9345, then pool and listener of 8132")
	ls, ps, ms := w.childNames(out.Status.ID)
	want := []string{"k8s-clusterapi-cluster-ns-c-az1-kubeapi-6443", "k8s-clusterapi-cluster-ns-c-az1-kubeapi-9345"}
	g.Expect(ls).To(ConsistOf(want))
	g.Expect(ps).To(ConsistOf(want))
	g.Expect(ms).To(ConsistOf(want))
}

func TestDuplicateNamesAreReportedNotGuessed(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	s := w.service()
	d := w.desired("az1")
	for range 2 {
		_, err := w.cloud.LoadBalancer().CreateLoadBalancer(ctx, loadbalancers.CreateOpts{Name: d.Name, VipSubnetID: d.Subnet.ID})
		g.Expect(err).NotTo(HaveOccurred())
	}
	out := s.Reconcile(ctx, d, nil)
	g.Expect(out.State).To(Equal(zones.StateInvalid))
	g.Expect(out.Reason).To(Equal(infrav1.DuplicateResourcesReason), "the same policy as for every kind the provider names")
	g.Expect(out.Message).To(ContainSubstring("2 load balancers named " + d.Name))
}

func TestDeleteWaitsForPendingLoadBalancersAndFindsThemByTag(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1", "az2")
	s := w.service()
	converge(t, s, w.desired("az1"), nil)
	pending := s.Reconcile(ctx, w.desired("az2"), nil) // PENDING_CREATE, with a status nobody kept
	g.Expect(pending.State).To(Equal(zones.StateWaiting))

	r := &zones.Removal{Namespace: "ns", Cluster: "c", AllTagged: true, ExternalNetworkID: w.ext}
	var done bool
	for i := 0; i < 10 && !done; i++ {
		var err error
		done, err = s.Delete(ctx, r)
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(done).To(BeTrue())
	g.Expect(w.loadBalancers()).To(BeEmpty())
	g.Expect(w.floatingIPs()).To(BeEmpty())
}

func TestCanonicalCIDRs(t *testing.T) {
	g := NewWithT(t)
	g.Expect(zones.CanonicalCIDRs([]string{"10.0.0.1/8", "10.0.0.0/8", "192.0.2.1", "2001:db8::1/32", "junk"}, []string{"10.1.2.3/8"})).
		To(Equal([]string{"10.0.0.0/8", "192.0.2.1/32", "2001:db8::/32"}))
	g.Expect(zones.CanonicalCIDRs()).To(BeEmpty())
}

func TestNames(t *testing.T) {
	g := NewWithT(t)
	g.Expect(zones.Name("ns", "c", "")).To(Equal("k8s-clusterapi-cluster-ns-c-kubeapi"))
	g.Expect(zones.Name("ns", "c", "az1")).To(Equal("k8s-clusterapi-cluster-ns-c-az1-kubeapi"))
	for _, az := range []string{"az-1", ""} {
		got, ok := zones.ZoneOfName(zones.Name("ns", "c", az), "ns", "c")
		g.Expect(ok).To(BeTrue())
		g.Expect(got).To(Equal(az))
	}
	for _, other := range []string{"other", zones.Name("ns", "c2", ""), zones.Name("ns", "c", "") + "-x", "k8s-clusterapi-cluster-ns-c--kubeapi"} {
		_, ok := zones.ZoneOfName(other, "ns", "c")
		g.Expect(ok).To(BeFalse(), other)
	}
	g.Expect(zones.OwnsFloatingIP(zones.FloatingIPDescription("ns", "c", "az1"), "ns", "c")).To(BeTrue())
	g.Expect(zones.OwnsFloatingIP(zones.FloatingIPDescription("ns", "c2", "az1"), "ns", "c")).To(BeFalse())
}

// On an Octavia that leaves the children of a fully populated load balancer pending (11.0.0),
// the first load balancer is settled child by child and the cloud is remembered: its next load
// balancers are created alone, their children one by one. Another cloud keeps the single call.
func TestCreationStrategyIsLearntPerCloud(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1", "az2")
	w.cloud.SetLeavePopulatedChildrenPending(true)
	settles := func(calls map[string]int) int {
		return calls["UpdateListener"] + calls["UpdatePool"] + calls["UpdateMonitor"]
	}
	creates := func(calls map[string]int) int {
		return calls["CreateListener"] + calls["CreatePool"] + calls["CreateMonitor"]
	}

	converge(t, w.service(), w.desired("az1"), nil)
	calls := w.cloud.Calls()
	g.Expect(settles(calls)).To(Equal(6), "each of the six children settled by an update")
	g.Expect(creates(calls)).To(BeZero())
	g.Expect(strings.Count(w.events(), "OctaviaLeavesChildrenPending")).To(Equal(1), "said once per cloud")

	converge(t, w.service(), w.desired("az2"), nil)
	after := w.cloud.Calls()
	g.Expect(creates(after)).To(Equal(6), "created alone, then a listener, pool and monitor per port")
	g.Expect(settles(after)).To(Equal(6), "nothing left to settle")
	g.Expect(w.events()).NotTo(ContainSubstring("OctaviaLeavesChildrenPending"))
	lbs := w.loadBalancers()
	g.Expect(lbs).To(HaveLen(2))
	for _, lb := range lbs {
		ls, ps, ms := w.childNames(lb.ID)
		g.Expect([][]string{ls, ps, ms}).To(HaveEach(HaveLen(2)), "%s has a listener, pool and monitor per port", lb.Name)
	}

	healthy := newWorld(t, "az1")
	s := NewService(healthy.cloud.LoadBalancer(), healthy.cloud.Network(), report.NewRecorder(healthy.recorder, &infrav1.OpenStackCluster{}, logr.Discard()), w.memory, "another cloud", testOwner, testOwner.Name)
	converge(t, s, healthy.desired("az1"), nil)
	g.Expect(creates(healthy.cloud.Calls())).To(BeZero(), "fully populated in one call")
	g.Expect(settles(healthy.cloud.Calls())).To(BeZero())
}
