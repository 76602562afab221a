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
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/apiversions"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/providers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	. "github.com/onsi/gomega"
	"go.uber.org/mock/gomock"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients/mock"
)

// These tests pin the exact calls each path makes, with mocks at the client interfaces: a call
// that is not expected fails the test, so they also prove what is NOT done (no second create, no
// update in the steady state, no release of the user's floating IP).

var (
	err403 = gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusForbidden}
	err404 = gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusNotFound}
	err409 = gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusConflict}
	err501 = gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusNotImplemented}
)

const (
	lbID    = "11111111-1111-4111-8111-111111111111"
	vipPort = "22222222-2222-4222-8222-222222222222"
	vip     = "10.10.1.5"
	extNet  = "33333333-3333-4333-8333-333333333333"
)

type mocked struct {
	lb       *mock.MockLoadBalancerClient
	net      *mock.MockNetworkClient
	recorder *events.FakeRecorder
	memory   *Memory
}

func newMocked(t *testing.T) *mocked {
	ctrl := gomock.NewController(t)
	return &mocked{lb: mock.NewMockLoadBalancerClient(ctrl), net: mock.NewMockNetworkClient(ctrl),
		recorder: events.NewFakeRecorder(100), memory: NewMemory()}
}

func (m *mocked) service() *Service {
	return NewService(m.lb, m.net, report.NewRecorder(m.recorder, &infrav1.OpenStackCluster{}, logr.Discard()), m.memory, "cloud-a")
}

func (m *mocked) events() string {
	var out []string
	for {
		select {
		case e := <-m.recorder.Events:
			out = append(out, e)
		default:
			return strings.Join(out, "\n")
		}
	}
}

// desiredAZ is the az1 load balancer of ns/c with ports 6443 and 8132 and a managed floating IP.
func desiredAZ(az string) *Desired {
	return &Desired{
		AvailabilityZone: az, OctaviaAZ: az, Name: Name("ns", "c", az),
		Network: infrav1.NetworkStatus{ID: "lb-net"}, Subnet: &infrav1.Subnet{ID: "sub-" + az, CIDR: "10.10.1.0/24"},
		Ports:      []int{6443, 8132},
		Monitor:    infrav1.APIServerLoadBalancerMonitor{Delay: 10, Timeout: 5, MaxRetries: 5, MaxRetriesDown: 3},
		FloatingIP: &FloatingIP{ExternalNetworkID: extNet, Description: FloatingIPDescription("ns", "c", az)},
		Tags:       []string{OwnerTag("ns", "c")},
	}
}

// known is the status entry of d's load balancer as a previous reconcile recorded it.
func known(d *Desired) *infrav1.LoadBalancer {
	return &infrav1.LoadBalancer{Name: d.Name, ID: lbID, InternalIP: vip, IP: "172.24.4.10", AvailabilityZone: d.AvailabilityZone, Tags: d.Tags,
		LoadBalancerNetwork: &infrav1.NetworkStatusWithSubnets{NetworkStatus: d.Network, Subnets: []infrav1.Subnet{*d.Subnet}}}
}

// tree is the status tree of a converged load balancer named lbName, with its children named
// after childrenOf.
func tree(lbName, childrenOf, provisioning string, ports ...int) *loadbalancers.StatusTree {
	lb := &loadbalancers.LoadBalancer{ID: lbID, Name: lbName, ProvisioningStatus: provisioning, OperatingStatus: "ONLINE"}
	for _, p := range ports {
		n := ChildName(childrenOf, p)
		lb.Listeners = append(lb.Listeners, listeners.Listener{ID: "l" + n, Name: n, Pools: []pools.Pool{
			{ID: "p" + n, Name: n, Monitor: monitors.Monitor{ID: "m" + n, Name: n}},
		}})
	}
	return &loadbalancers.StatusTree{Loadbalancer: lb}
}

// listenersOf are the listeners as ListListeners returns them for tree t.
func listenersOf(t *loadbalancers.StatusTree, ports ...int) []listeners.Listener {
	out := make([]listeners.Listener, len(ports))
	for i, p := range ports {
		l := t.Loadbalancer.Listeners[i]
		out[i] = listeners.Listener{ID: l.ID, Name: l.Name, ProtocolPort: p}
	}
	return out
}

// ourFloatingIP is the managed floating IP, associated with the VIP.
func ourFloatingIP(d *Desired) floatingips.ListOpts {
	return floatingips.ListOpts{Description: d.FloatingIP.Description, FloatingNetworkID: extNet}
}

func TestSteadyStateIsThreeReadCalls(t *testing.T) {
	g := NewWithT(t)
	m := newMocked(t)
	d := desiredAZ("az1")
	tr := tree(d.Name, d.Name, "ACTIVE", 6443, 8132)
	m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tr, nil)
	m.lb.EXPECT().ListListeners(ctx, listeners.ListOpts{LoadbalancerID: lbID}).Return(listenersOf(tr, 6443, 8132), nil)
	m.net.EXPECT().ListFloatingIPs(ctx, ourFloatingIP(d)).Return([]floatingips.FloatingIP{
		{ID: "f1", FloatingIP: "172.24.4.10", FixedIP: vip, PortID: vipPort},
	}, nil)

	out := m.service().Reconcile(ctx, d, known(d))
	g.Expect(out.State).To(Equal(StateReady))
	// The entry recorded before, with what the status tree says of the load balancer's health.
	want := known(d)
	want.ProvisioningStatus, want.OperatingStatus, want.Healthy = "ACTIVE", "ONLINE", true
	want.Pools = []infrav1.LoadBalancerPool{{Name: ChildName(d.Name, 6443), Port: 6443}, {Name: ChildName(d.Name, 8132), Port: 8132}}
	g.Expect(out.Status).To(Equal(want))
	g.Expect(m.events()).To(BeEmpty(), "nothing changed, nothing to tell")
}

func TestCreateCalls(t *testing.T) {
	octaviaKnows := func(m *mocked, zones ...string) {
		var list []clients.LoadBalancerAvailabilityZone
		for _, z := range zones {
			list = append(list, clients.LoadBalancerAvailabilityZone{Name: z, Enabled: true})
		}
		list = append(list, clients.LoadBalancerAvailabilityZone{Name: "disabled", Enabled: false})
		m.lb.EXPECT().ListAvailabilityZones(ctx).Return(list, nil).Times(1)
	}
	nothingNamed := func(m *mocked, names ...string) {
		for _, n := range names {
			m.lb.EXPECT().ListLoadBalancers(ctx, loadbalancers.ListOpts{Name: n}).Return(nil, nil)
		}
	}
	created := func(m *mocked, got *loadbalancers.CreateOpts) {
		m.lb.EXPECT().CreateLoadBalancer(ctx, gomock.Any()).DoAndReturn(func(_ any, o loadbalancers.CreateOptsBuilder) (*loadbalancers.LoadBalancer, error) {
			*got = o.(loadbalancers.CreateOpts)
			return &loadbalancers.LoadBalancer{ID: lbID, Name: got.Name, VipAddress: vip, VipPortID: vipPort, VipSubnetID: got.VipSubnetID,
				ProvisioningStatus: "PENDING_CREATE", Tags: got.Tags}, nil
		})
	}

	t.Run("fully populated, with the zone hint, capabilities read once per cloud", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		octaviaKnows(m, "az1", "az2")
		m.lb.EXPECT().ListAvailabilityZoneCapabilities(ctx, "amphora").Return([]providers.Capability{{Name: "compute_zone"}}, nil).Times(1)
		for _, az := range []string{"az1", "az2"} {
			d := desiredAZ(az)
			d.Provider = "amphora"
			d.FormerNames = []string{Name("ns", "c", "")}
			nothingNamed(m, d.Name, Name("ns", "c", ""))
			var got loadbalancers.CreateOpts
			created(m, &got)
			out := m.service().Reconcile(ctx, d, nil)
			g.Expect(out.State).To(Equal(StateWaiting))
			g.Expect(out.Reason).To(Equal(infrav1.WaitingForLoadBalancerReason))
			g.Expect(out.Message).To(ContainSubstring("PENDING_CREATE"))
			g.Expect(out.RequeueAfter).To(Equal(ChangeRequeue))
			g.Expect(out.Status.ID).To(Equal(lbID), "recorded at once, so a crash now cannot make a second one")
			g.Expect(out.Status.InternalIP).To(Equal(vip))
			g.Expect(out.Status.LoadBalancerNetwork.Subnets[0].ID).To(Equal("sub-" + az))

			g.Expect(got.Name).To(Equal("k8s-clusterapi-cluster-ns-c-" + az + "-kubeapi"))
			g.Expect(got.AvailabilityZone).To(Equal(az))
			g.Expect(got.VipSubnetID).To(Equal("sub-" + az))
			g.Expect(got.VipNetworkID).To(BeEmpty(), "the subnet says it all")
			g.Expect(got.Provider).To(Equal("amphora"))
			g.Expect(got.Tags).To(ConsistOf(OwnerTag("ns", "c")))
			g.Expect(got.Listeners).To(HaveLen(2))
			for i, port := range []int{6443, 8132} {
				l := got.Listeners[i]
				name := ChildName(d.Name, port)
				g.Expect(l.Name).To(Equal(name))
				g.Expect(l.ProtocolPort).To(Equal(port))
				g.Expect(l.Protocol).To(Equal(listeners.ProtocolTCP))
				g.Expect(l.DefaultPool).NotTo(BeNil())
				g.Expect(l.DefaultPool.Name).To(Equal(name))
				g.Expect(l.DefaultPool.Monitor).To(Equal(monitors.CreateOpts{Name: name, Type: monitors.TypeTCP,
					Delay: 10, Timeout: 5, MaxRetries: 5, MaxRetriesDown: 3}))
			}
		}
		g.Expect(m.events()).NotTo(ContainSubstring("Omitted"))
	})

	type omitted struct {
		name     string
		provider string
		setup    func(m *mocked)
		why      string
	}
	for _, tc := range []omitted{
		{name: "zone Octavia does not know", setup: func(m *mocked) { octaviaKnows(m, "az2") },
			why: `Octavia has no enabled availability zone "az1"`},
		{name: "zone list forbidden to the project", setup: func(m *mocked) {
			m.lb.EXPECT().ListAvailabilityZones(ctx).Return(nil, err403)
		}, why: "Octavia does not let this project list its availability zones"},
		{name: "provider without zone capabilities", provider: "ovn", setup: func(m *mocked) {
			octaviaKnows(m, "az1")
			m.lb.EXPECT().ListAvailabilityZoneCapabilities(ctx, "ovn").Return(nil, nil)
		}, why: "Octavia provider ovn does not support availability zones"},
	} {
		t.Run("hint omitted: "+tc.name, func(t *testing.T) {
			g := NewWithT(t)
			m := newMocked(t)
			tc.setup(m)
			d := desiredAZ("az1")
			d.Provider = tc.provider
			nothingNamed(m, d.Name)
			var got loadbalancers.CreateOpts
			created(m, &got)
			out := m.service().Reconcile(ctx, d, nil)
			g.Expect(out.State).To(Equal(StateWaiting))
			g.Expect(got.AvailabilityZone).To(BeEmpty())
			g.Expect(got.VipSubnetID).To(Equal("sub-az1"), "the VIP is still placed by its subnet")
			ev := m.events()
			g.Expect(ev).To(ContainSubstring("Warning OmittedAvailabilityZoneHint"))
			g.Expect(ev).To(ContainSubstring(tc.why))
		})
	}

	t.Run("provider capabilities forbidden: the zone list is trusted", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		octaviaKnows(m, "az1")
		m.lb.EXPECT().ListAvailabilityZoneCapabilities(ctx, "amphora").Return(nil, err403)
		d := desiredAZ("az1")
		d.Provider = "amphora"
		nothingNamed(m, d.Name)
		var got loadbalancers.CreateOpts
		created(m, &got)
		m.service().Reconcile(ctx, d, nil)
		g.Expect(got.AvailabilityZone).To(Equal("az1"))
	})

	t.Run("zone list failing is an error, nothing created", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		m.lb.EXPECT().ListAvailabilityZones(ctx).Return(nil, errors.New("connection refused"))
		d := desiredAZ("az1")
		nothingNamed(m, d.Name)
		out := m.service().Reconcile(ctx, d, nil)
		g.Expect(out.State).To(Equal(StateError))
		g.Expect(out.Reason).To(Equal(infrav1.OpenStackErrorReason))
		g.Expect(out.Message).To(ContainSubstring("listing Octavia availability zones: connection refused"))
	})

	t.Run("Octavia refusing the create names the load balancer", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		octaviaKnows(m, "az1")
		d := desiredAZ("az1")
		nothingNamed(m, d.Name)
		m.lb.EXPECT().CreateLoadBalancer(ctx, gomock.Any()).Return(nil, gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusBadRequest, Body: []byte("subnet is full")})
		out := m.service().Reconcile(ctx, d, nil)
		g.Expect(out.State).To(Equal(StateInvalid))
		g.Expect(out.Reason).To(Equal(infrav1.LoadBalancerConfigurationErrorReason))
		g.Expect(out.Message).To(ContainSubstring("Octavia refused load balancer " + d.Name))
	})

	t.Run("unknown flavor is a configuration error", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		octaviaKnows(m, "az1")
		m.lb.EXPECT().ListFlavors(ctx).Return(nil, nil)
		d := desiredAZ("az1")
		d.Flavor = "gold"
		nothingNamed(m, d.Name)
		out := m.service().Reconcile(ctx, d, nil)
		g.Expect(out.State).To(Equal(StateInvalid))
		g.Expect(out.Message).To(Equal(`spec.apiServerLoadBalancer.flavor: Octavia has no enabled flavor "gold"`))
	})
}

func TestAdoptByNameCalls(t *testing.T) {
	g := NewWithT(t)
	m := newMocked(t)
	d := desiredAZ("az1")
	tr := tree(d.Name, d.Name, "ACTIVE", 6443, 8132)
	// The status was lost: the load balancer is found by its name, not created again.
	m.lb.EXPECT().ListLoadBalancers(ctx, loadbalancers.ListOpts{Name: d.Name}).Return([]loadbalancers.LoadBalancer{
		{ID: lbID, Name: d.Name, ProvisioningStatus: "ACTIVE", VipAddress: vip, VipPortID: vipPort, VipSubnetID: "sub-az1", Tags: d.Tags},
	}, nil)
	m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tr, nil)
	m.lb.EXPECT().ListListeners(ctx, gomock.Any()).Return(listenersOf(tr, 6443, 8132), nil)
	m.net.EXPECT().ListFloatingIPs(ctx, ourFloatingIP(d)).Return([]floatingips.FloatingIP{
		{ID: "f1", FloatingIP: "172.24.4.10", FixedIP: vip, PortID: vipPort},
	}, nil)

	out := m.service().Reconcile(ctx, d, nil)
	g.Expect(out.State).To(Equal(StateReady))
	g.Expect(out.Status.ID).To(Equal(lbID))
	g.Expect(out.Status.IP).To(Equal("172.24.4.10"))
	g.Expect(out.Status.InternalIP).To(Equal(vip))
	g.Expect(out.Status.LoadBalancerNetwork.Subnets[0].ID).To(Equal("sub-az1"))
	g.Expect(m.events()).To(ContainSubstring("AdoptedLoadBalancer"))
}

func TestTwoLoadBalancersWithOneNameAreRefused(t *testing.T) {
	g := NewWithT(t)
	m := newMocked(t)
	d := desiredAZ("az1")
	m.lb.EXPECT().ListLoadBalancers(ctx, loadbalancers.ListOpts{Name: d.Name}).Return([]loadbalancers.LoadBalancer{{ID: "a"}, {ID: "b"}}, nil)
	out := m.service().Reconcile(ctx, d, nil)
	g.Expect(out.State).To(Equal(StateInvalid))
	g.Expect(out.Message).To(Equal("2 load balancers named " + d.Name + " (a, b) are all this object's: delete all but one"))
}

func TestMigrationRenamesEachChild(t *testing.T) {
	legacy := Name("ns", "c", "")
	d := desiredAZ("az1")
	d.FormerNames = []string{legacy}

	t.Run("the load balancer itself, found under the legacy name", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		m.lb.EXPECT().ListLoadBalancers(ctx, loadbalancers.ListOpts{Name: d.Name}).Return(nil, nil)
		m.lb.EXPECT().ListLoadBalancers(ctx, loadbalancers.ListOpts{Name: legacy}).Return([]loadbalancers.LoadBalancer{
			{ID: lbID, Name: legacy, ProvisioningStatus: "ACTIVE", VipAddress: vip, VipSubnetID: "sub-old", Tags: []string{"user-tag"}},
		}, nil)
		m.lb.EXPECT().UpdateLoadBalancer(ctx, lbID, gomock.Any()).DoAndReturn(func(_ any, _ string, o loadbalancers.UpdateOptsBuilder) (*loadbalancers.LoadBalancer, error) {
			opts := o.(loadbalancers.UpdateOpts)
			g.Expect(*opts.Name).To(Equal(d.Name))
			g.Expect(*opts.Tags).To(ConsistOf("user-tag", OwnerTag("ns", "c")), "the user's tags are kept")
			return &loadbalancers.LoadBalancer{}, nil
		})
		out := m.service().Reconcile(ctx, d, nil)
		g.Expect(out.State).To(Equal(StateWaiting))
		g.Expect(out.Status.Name).To(Equal(d.Name))
		g.Expect(out.Status.InternalIP).To(Equal(vip), "the VIP stays")
		g.Expect(out.Status.LoadBalancerNetwork.Subnets[0].ID).To(Equal("sub-old"), "the status says where the VIP really is")
		ev := m.events()
		g.Expect(ev).To(ContainSubstring("RenamedLoadBalancer"))
		g.Expect(ev).To(ContainSubstring("Warning LoadBalancerVIPSubnet"))
	})

	t.Run("found by the status under a former name: its tags are read and kept", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		back := desiredAZ("")
		back.FormerNames = []string{d.Name}
		m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tree(d.Name, d.Name, "ACTIVE", 6443, 8132), nil)
		m.lb.EXPECT().GetLoadBalancer(ctx, lbID).Return(&loadbalancers.LoadBalancer{ID: lbID, Name: d.Name, Tags: []string{"user-tag", OwnerTag("ns", "c")}}, nil)
		m.lb.EXPECT().UpdateLoadBalancer(ctx, lbID, gomock.Any()).DoAndReturn(func(_ any, _ string, o loadbalancers.UpdateOptsBuilder) (*loadbalancers.LoadBalancer, error) {
			opts := o.(loadbalancers.UpdateOpts)
			g.Expect(*opts.Name).To(Equal(legacy))
			g.Expect(*opts.Tags).To(ConsistOf("user-tag", OwnerTag("ns", "c")))
			return &loadbalancers.LoadBalancer{}, nil
		})
		k := known(d)
		out := m.service().Reconcile(ctx, back, k)
		g.Expect(out.State).To(Equal(StateWaiting))
		g.Expect(out.Status.Name).To(Equal(legacy))
		g.Expect(out.Status.ID).To(Equal(lbID))
	})

	type childCase struct {
		name   string
		mutate func(tr *loadbalancers.StatusTree, ls []listeners.Listener)
		expect func(m *mocked, want string)
		event  string
	}
	want := ChildName(d.Name, 8132)
	for _, tc := range []childCase{
		{name: "listener", mutate: func(tr *loadbalancers.StatusTree, ls []listeners.Listener) {
			ls[1].Name = ChildName(legacy, 8132)
		}, expect: func(m *mocked, want string) {
			m.lb.EXPECT().UpdateListener(ctx, "l"+want, listeners.UpdateOpts{Name: &want}).Return(&listeners.Listener{}, nil)
		}, event: "RenamedListener"},
		{name: "pool", mutate: func(tr *loadbalancers.StatusTree, _ []listeners.Listener) {
			tr.Loadbalancer.Listeners[1].Pools[0].Name = ChildName(legacy, 8132)
		}, expect: func(m *mocked, want string) {
			m.lb.EXPECT().UpdatePool(ctx, "p"+want, pools.UpdateOpts{Name: &want}).Return(&pools.Pool{}, nil)
		}, event: "RenamedPool"},
		{name: "health monitor", mutate: func(tr *loadbalancers.StatusTree, _ []listeners.Listener) {
			tr.Loadbalancer.Listeners[1].Pools[0].Monitor.Name = ChildName(legacy, 8132)
		}, expect: func(m *mocked, want string) {
			m.lb.EXPECT().UpdateMonitor(ctx, "m"+want, monitors.UpdateOpts{Name: &want}).Return(&monitors.Monitor{}, nil)
		}, event: "RenamedHealthMonitor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			m := newMocked(t)
			tr := tree(d.Name, d.Name, "ACTIVE", 6443, 8132)
			ls := listenersOf(tr, 6443, 8132)
			tc.mutate(tr, ls)
			m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tr, nil)
			m.lb.EXPECT().ListListeners(ctx, gomock.Any()).Return(ls, nil)
			tc.expect(m, want)
			out := m.service().Reconcile(ctx, d, known(d))
			g.Expect(out.State).To(Equal(StateWaiting), "one change per reconcile; Octavia is busy with it")
			g.Expect(out.Message).To(ContainSubstring("renamed"))
			g.Expect(m.events()).To(ContainSubstring(tc.event))
		})
	}

	t.Run("Octavia busy with the load balancer: waiting, not failing", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		tr := tree(d.Name, d.Name, "ACTIVE", 6443, 8132)
		tr.Loadbalancer.Listeners[0].Pools[0].Name = ChildName(legacy, 6443)
		m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tr, nil)
		m.lb.EXPECT().ListListeners(ctx, gomock.Any()).Return(listenersOf(tr, 6443, 8132), nil)
		m.lb.EXPECT().UpdatePool(ctx, gomock.Any(), gomock.Any()).Return(nil, err409)
		out := m.service().Reconcile(ctx, d, known(d))
		g.Expect(out.State).To(Equal(StateWaiting))
		g.Expect(out.Reason).To(Equal(infrav1.WaitingForLoadBalancerReason))
		g.Expect(out.Message).To(ContainSubstring("is busy"))
		g.Expect(out.Err).NotTo(HaveOccurred())
	})
}

func TestPerPortChildrenCalls(t *testing.T) {
	d := desiredAZ("az1")
	name := ChildName(d.Name, 8132)

	t.Run("missing listener for an additional port", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		tr := tree(d.Name, d.Name, "ACTIVE", 6443)
		m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tr, nil)
		m.lb.EXPECT().ListListeners(ctx, gomock.Any()).Return(listenersOf(tr, 6443), nil)
		m.lb.EXPECT().CreateListener(ctx, gomock.Any()).DoAndReturn(func(_ any, o listeners.CreateOptsBuilder) (*listeners.Listener, error) {
			opts := o.(listeners.CreateOpts)
			g.Expect(opts.Name).To(Equal(name))
			g.Expect(opts.LoadbalancerID).To(Equal(lbID))
			g.Expect(opts.ProtocolPort).To(Equal(8132))
			g.Expect(opts.DefaultPool).To(BeNil(), "the pool follows once Octavia is done with the listener")
			return &listeners.Listener{ID: "new"}, nil
		})
		out := m.service().Reconcile(ctx, d, known(d))
		g.Expect(out.State).To(Equal(StateWaiting))
		g.Expect(m.events()).To(ContainSubstring("CreatedListener"))
	})

	t.Run("missing pool", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		tr := tree(d.Name, d.Name, "ACTIVE", 6443, 8132)
		tr.Loadbalancer.Listeners[1].Pools = nil
		m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tr, nil)
		m.lb.EXPECT().ListListeners(ctx, gomock.Any()).Return(listenersOf(tr, 6443, 8132), nil)
		m.lb.EXPECT().CreatePool(ctx, pools.CreateOpts{Name: name, ListenerID: "l" + name, Protocol: pools.ProtocolTCP, LBMethod: pools.LBMethodRoundRobin}).
			Return(&pools.Pool{ID: "p"}, nil)
		out := m.service().Reconcile(ctx, d, known(d))
		g.Expect(out.State).To(Equal(StateWaiting))
		g.Expect(m.events()).To(ContainSubstring("CreatedPool"))
	})

	t.Run("missing health monitor", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		tr := tree(d.Name, d.Name, "ACTIVE", 6443, 8132)
		tr.Loadbalancer.Listeners[1].Pools[0].Monitor = monitors.Monitor{}
		m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tr, nil)
		m.lb.EXPECT().ListListeners(ctx, gomock.Any()).Return(listenersOf(tr, 6443, 8132), nil)
		m.lb.EXPECT().CreateMonitor(ctx, monitors.CreateOpts{Name: name, PoolID: "p" + name, Type: monitors.TypeTCP,
			Delay: 10, Timeout: 5, MaxRetries: 5, MaxRetriesDown: 3}).Return(&monitors.Monitor{ID: "m"}, nil)
		out := m.service().Reconcile(ctx, d, known(d))
		g.Expect(out.State).To(Equal(StateWaiting))
		g.Expect(m.events()).To(ContainSubstring("CreatedHealthMonitor"))
	})

	t.Run("a port no longer asked for: pool first, then listener", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		d := desiredAZ("az1")
		d.Ports = []int{6443}
		tr := tree(d.Name, d.Name, "ACTIVE", 6443, 8132)
		m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tr, nil)
		m.lb.EXPECT().ListListeners(ctx, gomock.Any()).Return(listenersOf(tr, 6443, 8132), nil)
		m.lb.EXPECT().DeletePool(ctx, "p"+name).Return(nil)
		out := m.service().Reconcile(ctx, d, known(d))
		g.Expect(out.State).To(Equal(StateWaiting))

		tr.Loadbalancer.Listeners[1].Pools = nil
		m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tr, nil)
		m.lb.EXPECT().ListListeners(ctx, gomock.Any()).Return(listenersOf(tr, 6443, 8132), nil)
		m.lb.EXPECT().DeleteListener(ctx, "l"+name).Return(nil)
		out = m.service().Reconcile(ctx, d, known(d))
		g.Expect(out.State).To(Equal(StateWaiting))
		ev := m.events()
		g.Expect(ev).To(ContainSubstring("DeletedPool"))
		g.Expect(ev).To(ContainSubstring("DeletedListener"))
	})

	t.Run("a listener somebody else made on another port is left alone", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		tr := tree(d.Name, d.Name, "ACTIVE", 6443, 8132)
		ls := append(listenersOf(tr, 6443, 8132), listeners.Listener{ID: "theirs", Name: "metrics", ProtocolPort: 9100})
		m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tr, nil)
		m.lb.EXPECT().ListListeners(ctx, gomock.Any()).Return(ls, nil)
		m.net.EXPECT().ListFloatingIPs(ctx, ourFloatingIP(d)).Return([]floatingips.FloatingIP{{FloatingIP: "172.24.4.10", FixedIP: vip, PortID: vipPort}}, nil)
		out := m.service().Reconcile(ctx, d, known(d))
		g.Expect(out.State).To(Equal(StateReady))
	})
}

func TestChildrenLeftPendingAreSettled(t *testing.T) {
	d := desiredAZ("az1")
	name := ChildName(d.Name, 6443)
	for _, tc := range []struct {
		child  string
		stick  func(tr *loadbalancers.StatusTree, ls []listeners.Listener)
		expect func(m *mocked)
	}{
		{child: "listener", stick: func(_ *loadbalancers.StatusTree, ls []listeners.Listener) {
			ls[0].ProvisioningStatus = "PENDING_CREATE"
		},
			expect: func(m *mocked) {
				m.lb.EXPECT().UpdateListener(ctx, "l"+name, listeners.UpdateOpts{Name: &name}).Return(&listeners.Listener{}, nil)
			}},
		{child: "pool", stick: func(tr *loadbalancers.StatusTree, _ []listeners.Listener) {
			tr.Loadbalancer.Listeners[0].Pools[0].ProvisioningStatus = "PENDING_CREATE"
		}, expect: func(m *mocked) {
			m.lb.EXPECT().UpdatePool(ctx, "p"+name, pools.UpdateOpts{Name: &name}).Return(&pools.Pool{}, nil)
		}},
		{child: "health monitor", stick: func(tr *loadbalancers.StatusTree, _ []listeners.Listener) {
			tr.Loadbalancer.Listeners[0].Pools[0].Monitor.ProvisioningStatus = "PENDING_CREATE"
		}, expect: func(m *mocked) {
			m.lb.EXPECT().UpdateMonitor(ctx, "m"+name, monitors.UpdateOpts{Name: &name}).Return(&monitors.Monitor{}, nil)
		}},
	} {
		t.Run(tc.child, func(t *testing.T) {
			g := NewWithT(t)
			m := newMocked(t)
			tr := tree(d.Name, d.Name, "ACTIVE", 6443, 8132)
			ls := listenersOf(tr, 6443, 8132)
			tc.stick(tr, ls)
			m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tr, nil)
			m.lb.EXPECT().ListListeners(ctx, gomock.Any()).Return(ls, nil)
			tc.expect(m)
			out := m.service().Reconcile(ctx, d, known(d))
			g.Expect(out.State).To(Equal(StateWaiting), "not ready while a pool would refuse members")
			g.Expect(out.Message).To(ContainSubstring("settling " + tc.child))
			g.Expect(m.events()).To(ContainSubstring("Octavia left " + tc.child + " " + name + " PENDING_CREATE although load balancer " + d.Name + " is ACTIVE"))
		})
	}
}

func TestAllowedCIDRsCalls(t *testing.T) {
	steady := func(m *mocked, d *Desired, have ...[]string) {
		tr := tree(d.Name, d.Name, "ACTIVE", 6443, 8132)
		ls := listenersOf(tr, 6443, 8132)
		for i := range ls {
			ls[i].AllowedCIDRs = have[i]
		}
		m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tr, nil)
		m.lb.EXPECT().ListListeners(ctx, gomock.Any()).Return(ls, nil)
	}
	withFloatingIP := func(m *mocked, d *Desired) {
		m.net.EXPECT().ListFloatingIPs(ctx, ourFloatingIP(d)).Return([]floatingips.FloatingIP{{FloatingIP: "172.24.4.10", FixedIP: vip, PortID: vipPort}}, nil)
	}
	version := func(m *mocked, v string) {
		m.lb.EXPECT().ListAPIVersions(ctx).Return([]apiversions.APIVersion{{ID: "v2.0"}, {ID: v}}, nil).Times(1)
	}

	t.Run("the same set written differently is not updated", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		version(m, "v2.26")
		d := desiredAZ("az1")
		d.AllowedCIDRs = CanonicalCIDRs([]string{"192.168.0.0/16", "10.0.0.0/8"}, nil)
		steady(m, d, []string{"10.0.0.0/8", "192.168.0.0/16"}, []string{"192.168.0.0/16", "10.0.0.0/8"})
		withFloatingIP(m, d)
		out := m.service().Reconcile(ctx, d, known(d))
		g.Expect(out.State).To(Equal(StateReady))
		g.Expect(out.Status.AllowedCIDRs).To(Equal([]string{"10.0.0.0/8", "192.168.0.0/16"}))
	})

	t.Run("a change is applied to every listener, one per reconcile", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		version(m, "v2.26")
		d := desiredAZ("az1")
		d.AllowedCIDRs = []string{"10.0.0.0/8"}
		steady(m, d, []string{"10.0.0.0/8"}, nil)
		m.lb.EXPECT().UpdateListener(ctx, "l"+ChildName(d.Name, 8132), listeners.UpdateOpts{AllowedCIDRs: &[]string{"10.0.0.0/8"}}).Return(&listeners.Listener{}, nil)
		out := m.service().Reconcile(ctx, d, known(d))
		g.Expect(out.State).To(Equal(StateWaiting))
		g.Expect(m.events()).To(ContainSubstring("Set the allowed CIDRs of listener " + ChildName(d.Name, 8132)))
	})

	t.Run("emptied: every listener opened", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		d := desiredAZ("az1")
		steady(m, d, []string{"10.0.0.0/8"}, nil)
		m.lb.EXPECT().UpdateListener(ctx, "l"+ChildName(d.Name, 6443), listeners.UpdateOpts{AllowedCIDRs: &[]string{}}).Return(&listeners.Listener{}, nil)
		out := m.service().Reconcile(ctx, d, known(d))
		g.Expect(out.State).To(Equal(StateWaiting))
	})

	t.Run("Octavia older than 2.12: not applied, said why, no update", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		version(m, "v2.11")
		d := desiredAZ("az1")
		d.AllowedCIDRs = []string{"10.0.0.0/8"}
		steady(m, d, nil, nil)
		withFloatingIP(m, d)
		out := m.service().Reconcile(ctx, d, known(d))
		g.Expect(out.State).To(Equal(StateReady))
		g.Expect(out.Status.AllowedCIDRs).To(BeEmpty())
		g.Expect(m.events()).To(ContainSubstring("Octavia's API is version 2.11; allowed CIDRs need 2.12"))
	})

	t.Run("provider answering 501: remembered, not retried", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		version(m, "v2.26")
		d := desiredAZ("az1")
		d.Provider = "ovn"
		d.AllowedCIDRs = []string{"10.0.0.0/8"}
		steady(m, d, nil, nil)
		m.lb.EXPECT().UpdateListener(ctx, gomock.Any(), gomock.Any()).Return(nil, err501).Times(1)
		withFloatingIP(m, d)
		out := m.service().Reconcile(ctx, d, known(d))
		g.Expect(out.State).To(Equal(StateReady))
		g.Expect(m.events()).To(ContainSubstring("Octavia provider ovn does not support allowed CIDRs"))

		steady(m, d, nil, nil)
		withFloatingIP(m, d)
		out = m.service().Reconcile(ctx, d, known(d))
		g.Expect(out.State).To(Equal(StateReady), "no second update, no loop")
	})
}

func TestFloatingIPCalls(t *testing.T) {
	// converged returns a load balancer whose children are right, located by its status.
	converged := func(m *mocked, d *Desired) {
		tr := tree(d.Name, d.Name, "ACTIVE", 6443, 8132)
		m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tr, nil)
		m.lb.EXPECT().ListListeners(ctx, gomock.Any()).Return(listenersOf(tr, 6443, 8132), nil)
	}
	vipPortRead := func(m *mocked) {
		m.lb.EXPECT().GetLoadBalancer(ctx, lbID).Return(&loadbalancers.LoadBalancer{ID: lbID, VipPortID: vipPort, VipAddress: vip}, nil)
	}

	t.Run("the user's address: looked up by address and associated", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		d := desiredAZ("az1")
		d.FloatingIP.Address = "172.24.4.99"
		converged(m, d)
		m.net.EXPECT().ListFloatingIPs(ctx, floatingips.ListOpts{FloatingIP: "172.24.4.99"}).Return([]floatingips.FloatingIP{{ID: "users", FloatingIP: "172.24.4.99"}}, nil)
		vipPortRead(m)
		m.net.EXPECT().UpdateFloatingIP(ctx, "users", floatingips.UpdateOpts{PortID: ptr.To(vipPort)}).Return(&floatingips.FloatingIP{}, nil)
		out := m.service().Reconcile(ctx, d, known(d))
		g.Expect(out.State).To(Equal(StateReady))
		g.Expect(out.Status.IP).To(Equal("172.24.4.99"))
	})

	t.Run("the user's address not allocated yet: allocated with that address, no description", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		d := desiredAZ("az1")
		d.FloatingIP.Address = "172.24.4.99"
		converged(m, d)
		m.net.EXPECT().ListFloatingIPs(ctx, floatingips.ListOpts{FloatingIP: "172.24.4.99"}).Return(nil, nil)
		vipPortRead(m)
		m.net.EXPECT().CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: extNet, PortID: vipPort, FloatingIP: "172.24.4.99"}).
			Return(&floatingips.FloatingIP{FloatingIP: "172.24.4.99"}, nil)
		out := m.service().Reconcile(ctx, d, known(d))
		g.Expect(out.State).To(Equal(StateReady))
	})

	t.Run("ours, unassociated after a crash: reused, not a second one", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		d := desiredAZ("az1")
		converged(m, d)
		m.net.EXPECT().ListFloatingIPs(ctx, ourFloatingIP(d)).Return([]floatingips.FloatingIP{{ID: "ours", FloatingIP: "172.24.4.11"}}, nil)
		vipPortRead(m)
		m.net.EXPECT().UpdateFloatingIP(ctx, "ours", floatingips.UpdateOpts{PortID: ptr.To(vipPort)}).Return(&floatingips.FloatingIP{}, nil)
		out := m.service().Reconcile(ctx, d, known(d))
		g.Expect(out.State).To(Equal(StateReady))
		g.Expect(out.Status.IP).To(Equal("172.24.4.11"))
		g.Expect(m.events()).To(ContainSubstring("AssociatedFloatingIP"))
	})

	t.Run("one already on the VIP from before the migration: adopted by marking it", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		d := desiredAZ("az1")
		converged(m, d)
		m.net.EXPECT().ListFloatingIPs(ctx, ourFloatingIP(d)).Return(nil, nil)
		vipPortRead(m)
		m.net.EXPECT().ListFloatingIPs(ctx, floatingips.ListOpts{PortID: vipPort}).Return([]floatingips.FloatingIP{{ID: "old", FloatingIP: "172.24.4.12", PortID: vipPort}}, nil)
		m.net.EXPECT().UpdateFloatingIP(ctx, "old", floatingips.UpdateOpts{Description: ptr.To(d.FloatingIP.Description)}).Return(&floatingips.FloatingIP{}, nil)
		out := m.service().Reconcile(ctx, d, known(d))
		g.Expect(out.State).To(Equal(StateReady))
		g.Expect(out.Status.IP).To(Equal("172.24.4.12"), "existing clients keep their address")
		g.Expect(m.events()).To(ContainSubstring("AdoptedFloatingIP"))
	})

	t.Run("none at all: allocated with our description", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		d := desiredAZ("az1")
		converged(m, d)
		m.net.EXPECT().ListFloatingIPs(ctx, ourFloatingIP(d)).Return(nil, nil)
		vipPortRead(m)
		m.net.EXPECT().ListFloatingIPs(ctx, floatingips.ListOpts{PortID: vipPort}).Return(nil, nil)
		m.net.EXPECT().CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: extNet, PortID: vipPort, Description: d.FloatingIP.Description}).
			Return(&floatingips.FloatingIP{FloatingIP: "172.24.4.13"}, nil)
		out := m.service().Reconcile(ctx, d, known(d))
		g.Expect(out.State).To(Equal(StateReady))
		g.Expect(out.Status.IP).To(Equal("172.24.4.13"))
		g.Expect(m.events()).To(ContainSubstring("CreatedFloatingIP"))
	})

	t.Run("no route from the external network: a configuration error that says so", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		d := desiredAZ("az1")
		converged(m, d)
		m.net.EXPECT().ListFloatingIPs(ctx, ourFloatingIP(d)).Return(nil, nil)
		vipPortRead(m)
		m.net.EXPECT().ListFloatingIPs(ctx, floatingips.ListOpts{PortID: vipPort}).Return(nil, nil)
		m.net.EXPECT().CreateFloatingIP(ctx, gomock.Any()).Return(nil, err404)
		out := m.service().Reconcile(ctx, d, known(d))
		g.Expect(out.State).To(Equal(StateInvalid))
		g.Expect(out.Message).To(ContainSubstring("needs a router to the external network"))
		g.Expect(out.Message).To(ContainSubstring("availability zone az1"))
	})

	t.Run("floating IPs disabled: the VIP is the address", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		d := desiredAZ("az1")
		d.FloatingIP = nil
		converged(m, d)
		out := m.service().Reconcile(ctx, d, known(d))
		g.Expect(out.State).To(Equal(StateReady))
		g.Expect(out.Status.IP).To(Equal(vip))
	})
}

func TestErrorRecoveryCalls(t *testing.T) {
	g := NewWithT(t)
	m := newMocked(t)
	m.memory.ErrorInterval = 0
	d := desiredAZ("az1")
	inError := tree(d.Name, d.Name, "ERROR", 6443, 8132)
	m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(inError, nil).Times(ErrorObservations)
	for i := 1; i < ErrorObservations; i++ {
		out := m.service().Reconcile(ctx, d, known(d))
		g.Expect(out.State).To(Equal(StateError))
		g.Expect(out.Reason).To(Equal(infrav1.LoadBalancerErrorReason))
		g.Expect(out.ProvisioningStatus).To(Equal("ERROR"))
	}
	m.lb.EXPECT().DeleteLoadBalancer(ctx, lbID, loadbalancers.DeleteOpts{Cascade: true}).Return(nil)
	out := m.service().Reconcile(ctx, d, known(d))
	g.Expect(out.State).To(Equal(StateWaiting))
	g.Expect(out.Reason).To(Equal(infrav1.LoadBalancerErrorReason))
	ev := m.events()
	g.Expect(strings.Count(ev, "Warning LoadBalancerError")).To(Equal(ErrorObservations - 1))
	g.Expect(ev).To(ContainSubstring("Warning DeletedLoadBalancer"))

	// Deleted: the next reconcile finds nothing under the recorded ID or the name, and creates.
	m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(nil, err404)
	m.lb.EXPECT().ListLoadBalancers(ctx, loadbalancers.ListOpts{Name: d.Name}).Return(nil, nil)
	m.lb.EXPECT().ListAvailabilityZones(ctx).Return([]clients.LoadBalancerAvailabilityZone{{Name: "az1", Enabled: true}}, nil)
	m.lb.EXPECT().CreateLoadBalancer(ctx, gomock.Any()).Return(&loadbalancers.LoadBalancer{ID: "new", Name: d.Name, ProvisioningStatus: "PENDING_CREATE"}, nil)
	out = m.service().Reconcile(ctx, d, known(d))
	g.Expect(out.Status.ID).To(Equal("new"))
}

func TestPendingIsWaitedForWithoutBlocking(t *testing.T) {
	g := NewWithT(t)
	m := newMocked(t)
	d := desiredAZ("az1")
	m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tree(d.Name, d.Name, "PENDING_UPDATE"), nil)
	out := m.service().Reconcile(ctx, d, known(d))
	g.Expect(out.State).To(Equal(StateWaiting))
	g.Expect(out.Message).To(Equal("load balancer " + d.Name + " is PENDING_UPDATE"))
	g.Expect(out.RequeueAfter).To(Equal(ChangeRequeue), "a fresh change is looked at again soon")

	// A load balancer pending for long (an amphora booting) is looked at less often.
	m.memory.pendingSince[lbID] = time.Now().Add(-time.Minute)
	m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tree(d.Name, d.Name, "PENDING_CREATE"), nil)
	out = m.service().Reconcile(ctx, d, known(d))
	g.Expect(out.RequeueAfter).To(Equal(5 * time.Second))

	// Once it settles, the clock starts again for its next change.
	m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tree(d.Name, d.Name, "ERROR"), nil)
	m.service().Reconcile(ctx, d, known(d))
	g.Expect(m.memory.pendingSince).NotTo(HaveKey(lbID))
}

func TestPendingInterval(t *testing.T) {
	g := NewWithT(t)
	for _, tc := range []struct{ pending, want time.Duration }{
		{0, ChangeRequeue}, {1999 * time.Millisecond, ChangeRequeue},
		{2 * time.Second, PendingRequeue}, {9 * time.Second, PendingRequeue},
		{10 * time.Second, time.Second}, {29 * time.Second, time.Second},
		{30 * time.Second, 5 * time.Second}, {2 * time.Minute, 15 * time.Second},
	} {
		g.Expect(pendingInterval(tc.pending)).To(Equal(tc.want), "pending for %s", tc.pending)
	}
}

func TestFloatingIPWhileOctaviaCreatesCalls(t *testing.T) {
	creating := func(m *mocked, d *Desired) *infrav1.LoadBalancer {
		k := known(d)
		k.IP = k.InternalIP // no floating IP recorded yet
		m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tree(d.Name, d.Name, "PENDING_CREATE"), nil)
		m.net.EXPECT().ListFloatingIPs(ctx, ourFloatingIP(d)).Return(nil, nil)
		m.lb.EXPECT().GetLoadBalancer(ctx, lbID).Return(&loadbalancers.LoadBalancer{ID: lbID, VipPortID: vipPort, VipAddress: vip}, nil)
		m.net.EXPECT().ListFloatingIPs(ctx, floatingips.ListOpts{PortID: vipPort}).Return(nil, nil)
		return k
	}

	// settled waits for the background allocation of lbID to finish.
	settled := func(g *WithT, m *mocked) {
		g.Eventually(func() bool {
			a := m.memory.allocationOf(lbID, false)
			return a != nil && a.done
		}, 5*time.Second, 10*time.Millisecond).Should(BeTrue())
	}
	stillPending := func(m *mocked, d *Desired, ip string) *infrav1.LoadBalancer {
		k := known(d)
		k.IP = ip
		m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tree(d.Name, d.Name, "PENDING_CREATE"), nil)
		return k
	}

	t.Run("allocated on the VIP port in the background before the load balancer is ACTIVE", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		d := desiredAZ("az1")
		k := creating(m, d)
		m.net.EXPECT().CreateFloatingIP(gomock.Any(), floatingips.CreateOpts{FloatingNetworkID: extNet, PortID: vipPort, Description: d.FloatingIP.Description}).
			Return(&floatingips.FloatingIP{ID: "fip-1", FloatingIP: "172.24.4.20"}, nil)
		out := m.service().Reconcile(ctx, d, k)
		g.Expect(out.State).To(Equal(StateWaiting))
		g.Expect(out.Message).To(ContainSubstring("PENDING_CREATE"))
		g.Expect(out.Status.IP).To(Equal(vip), "the reconcile does not wait for Neutron")
		settled(g, m)

		out = m.service().Reconcile(ctx, d, stillPending(m, d, vip))
		g.Expect(out.State).To(Equal(StateWaiting))
		g.Expect(out.Status.IP).To(Equal("172.24.4.20"), "recorded, so the next pending reconcile costs one call")
		g.Expect(m.events()).To(ContainSubstring("CreatedFloatingIP Allocated floating IP 172.24.4.20"))
	})

	t.Run("one allocation at a time: the polls meanwhile allocate nothing", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		d := desiredAZ("az1")
		k := creating(m, d)
		release := make(chan struct{})
		m.net.EXPECT().CreateFloatingIP(gomock.Any(), gomock.Any()).DoAndReturn(func(context.Context, floatingips.CreateOptsBuilder) (*floatingips.FloatingIP, error) {
			<-release
			return &floatingips.FloatingIP{ID: "fip-1", FloatingIP: "172.24.4.20"}, nil
		})
		m.service().Reconcile(ctx, d, k)
		for range 3 {
			out := m.service().Reconcile(ctx, d, stillPending(m, d, vip))
			g.Expect(out.Status.IP).To(Equal(vip))
		}
		close(release)
		settled(g, m)
	})

	t.Run("a failure is left for the ACTIVE load balancer to report", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		d := desiredAZ("az1")
		k := creating(m, d)
		m.net.EXPECT().CreateFloatingIP(gomock.Any(), gomock.Any()).Return(nil, err404)
		out := m.service().Reconcile(ctx, d, k)
		g.Expect(out.State).To(Equal(StateWaiting))
		settled(g, m)
		out = m.service().Reconcile(ctx, d, stillPending(m, d, vip))
		g.Expect(out.State).To(Equal(StateWaiting))
		g.Expect(out.Status.IP).To(Equal(vip), "not tried again while Octavia creates")
		g.Expect(m.events()).To(BeEmpty())
	})

	t.Run("recorded already: only the status tree is read", func(t *testing.T) {
		g := NewWithT(t)
		m := newMocked(t)
		d := desiredAZ("az1")
		m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tree(d.Name, d.Name, "PENDING_CREATE"), nil)
		out := m.service().Reconcile(ctx, d, known(d))
		g.Expect(out.State).To(Equal(StateWaiting))
	})
}

func TestRemovalOfAnAvailabilityZoneCalls(t *testing.T) {
	az1, az3 := desiredAZ("az1"), desiredAZ("az3")
	r := &Removal{Namespace: "ns", Cluster: "c", Names: []string{az3.Name}, IDs: []string{"az3-id"}, KeepAddresses: []string{"172.24.4.99"}, ExternalNetworkID: extNet}
	listed := []loadbalancers.LoadBalancer{
		{ID: "az1-id", Name: az1.Name, ProvisioningStatus: "ACTIVE", VipPortID: "az1-vip", Tags: az1.Tags},
		{ID: "az3-id", Name: az3.Name, ProvisioningStatus: "ACTIVE", VipPortID: "az3-vip", Tags: az3.Tags},
		{ID: "other", Name: "somebody-elses", ProvisioningStatus: "ACTIVE", VipPortID: "other-vip"},
	}

	g := NewWithT(t)
	m := newMocked(t)
	// Only the removed zone's load balancer and floating IP go; the user's address stays.
	m.lb.EXPECT().ListLoadBalancers(ctx, loadbalancers.ListOpts{}).Return(listed, nil)
	m.net.EXPECT().ListFloatingIPs(ctx, floatingips.ListOpts{PortID: "az3-vip"}).Return([]floatingips.FloatingIP{
		{ID: "fip-az3", FloatingIP: "172.24.4.30"}, {ID: "users", FloatingIP: "172.24.4.99"},
	}, nil)
	m.net.EXPECT().DeleteFloatingIP(ctx, "fip-az3").Return(nil)
	m.lb.EXPECT().DeleteLoadBalancer(ctx, "az3-id", loadbalancers.DeleteOpts{Cascade: true}).Return(nil)
	done, err := m.service().Delete(ctx, r)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeFalse(), "done only once Octavia no longer lists it")

	// Octavia is deleting it: nothing is called on it.
	listed[1].ProvisioningStatus = "PENDING_DELETE"
	m.lb.EXPECT().ListLoadBalancers(ctx, loadbalancers.ListOpts{}).Return(listed, nil)
	done, err = m.service().Delete(ctx, r)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeFalse())

	// Gone: a floating IP of the zone left unassociated is released; az1's is not.
	m.lb.EXPECT().ListLoadBalancers(ctx, loadbalancers.ListOpts{}).Return([]loadbalancers.LoadBalancer{listed[0], listed[2]}, nil)
	m.net.EXPECT().ListFloatingIPs(ctx, floatingips.ListOpts{FloatingNetworkID: extNet}).Return([]floatingips.FloatingIP{
		{ID: "fip-az1", FloatingIP: "172.24.4.10", Description: FloatingIPDescription("ns", "c", "az1")},
		{ID: "fip-az3-leftover", FloatingIP: "172.24.4.31", Description: FloatingIPDescription("ns", "c", "az3")},
		{ID: "users", FloatingIP: "172.24.4.99", Description: FloatingIPDescription("ns", "c", "az3")},
	}, nil)
	m.net.EXPECT().DeleteFloatingIP(ctx, "fip-az3-leftover").Return(nil)
	done, err = m.service().Delete(ctx, r)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeTrue())
	ev := m.events()
	g.Expect(ev).To(ContainSubstring("DeletedLoadBalancer"))
	g.Expect(strings.Count(ev, "ReleasedFloatingIP")).To(Equal(2))
}

func TestClusterDeletionFindsEverythingTaggedCalls(t *testing.T) {
	g := NewWithT(t)
	m := newMocked(t)
	r := &Removal{Namespace: "ns", Cluster: "c", Names: []string{Name("ns", "c", "")}, AllTagged: true}
	m.lb.EXPECT().ListLoadBalancers(ctx, loadbalancers.ListOpts{}).Return([]loadbalancers.LoadBalancer{
		{ID: "legacy", Name: Name("ns", "c", ""), ProvisioningStatus: "ACTIVE"},
		{ID: "renamed-by-hand", Name: "whatever", ProvisioningStatus: "ERROR", Tags: []string{OwnerTag("ns", "c")}},
		{ID: "other-cluster", Name: Name("ns", "d", "az1"), ProvisioningStatus: "ACTIVE", Tags: []string{OwnerTag("ns", "d")}},
	}, nil)
	m.lb.EXPECT().DeleteLoadBalancer(ctx, "legacy", loadbalancers.DeleteOpts{Cascade: true}).Return(nil)
	m.lb.EXPECT().DeleteLoadBalancer(ctx, "renamed-by-hand", loadbalancers.DeleteOpts{Cascade: true}).Return(err409)
	done, err := m.service().Delete(ctx, r)
	g.Expect(err).NotTo(HaveOccurred(), "a busy load balancer is looked at again, not an error")
	g.Expect(done).To(BeFalse())
}

func TestClusterDeletionDeletesEveryLoadBalancerAtOnceCalls(t *testing.T) {
	g := NewWithT(t)
	m := newMocked(t)
	az1, az2 := desiredAZ("az1"), desiredAZ("az2")
	r := &Removal{Namespace: "ns", Cluster: "c", AllTagged: true}
	m.lb.EXPECT().ListLoadBalancers(ctx, loadbalancers.ListOpts{}).Return([]loadbalancers.LoadBalancer{
		{ID: "az1-id", Name: az1.Name, ProvisioningStatus: "ACTIVE", VipPortID: "az1-vip", Tags: az1.Tags},
		{ID: "az2-id", Name: az2.Name, ProvisioningStatus: "ACTIVE", VipPortID: "az2-vip", Tags: az2.Tags},
	}, nil)
	// Each zone's floating IP is released only once Octavia has both deletes: a removal that
	// waited for one zone's floating IP before deleting the next load balancer would time out.
	var deleted sync.WaitGroup
	deleted.Add(2)
	bothDeleted := make(chan struct{})
	go func() { deleted.Wait(); close(bothDeleted) }()
	for _, az := range []string{"az1", "az2"} {
		m.lb.EXPECT().DeleteLoadBalancer(ctx, az+"-id", loadbalancers.DeleteOpts{Cascade: true}).
			DoAndReturn(func(context.Context, string, loadbalancers.DeleteOptsBuilder) error { deleted.Done(); return nil })
		m.net.EXPECT().ListFloatingIPs(ctx, floatingips.ListOpts{PortID: az + "-vip"}).
			DoAndReturn(func(context.Context, floatingips.ListOptsBuilder) ([]floatingips.FloatingIP, error) {
				select {
				case <-bothDeleted:
					return []floatingips.FloatingIP{{ID: az + "-fip", FloatingIP: "172.24.4.1" + az[2:]}}, nil
				case <-time.After(5 * time.Second):
					return nil, errors.New("the other zone's load balancer was not deleted meanwhile")
				}
			})
		m.net.EXPECT().DeleteFloatingIP(ctx, az+"-fip").Return(nil)
	}
	done, err := m.service().Delete(ctx, r)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeFalse(), "Octavia is deleting them")
}

func TestRemovalWaitsForAFloatingIPBeingAllocatedCalls(t *testing.T) {
	g := NewWithT(t)
	m := newMocked(t)
	r := &Removal{Namespace: "ns", Cluster: "c", AllTagged: true, ExternalNetworkID: extNet}
	// A floating IP of the cluster's az1 load balancer is still being allocated in the
	// background when the load balancer is already gone: releasing now would miss it.
	g.Expect(m.memory.startAllocation("az1-id", FloatingIPDescription("ns", "c", "az1"))).To(BeTrue())
	g.Expect(m.memory.startAllocation("other-id", FloatingIPDescription("ns", "d", "az1"))).To(BeTrue())
	m.lb.EXPECT().ListLoadBalancers(ctx, loadbalancers.ListOpts{}).Return(nil, nil).Times(2)
	done, err := m.service().Delete(ctx, r)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeFalse())

	m.memory.finishAllocation("az1-id", &floatingips.FloatingIP{ID: "fip-1", FloatingIP: "172.24.4.20"})
	fip := floatingips.FloatingIP{ID: "fip-1", FloatingIP: "172.24.4.20", Description: FloatingIPDescription("ns", "c", "az1")}
	m.net.EXPECT().ListFloatingIPs(ctx, floatingips.ListOpts{FloatingNetworkID: extNet}).Return([]floatingips.FloatingIP{fip}, nil)
	m.net.EXPECT().DeleteFloatingIP(ctx, "fip-1").Return(nil)
	done, err = m.service().Delete(ctx, r)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeTrue(), "another cluster's allocation does not hold this one back")
	g.Expect(m.memory.allocationOf("az1-id", false)).To(BeNil(), "forgotten with its load balancer")
}

func TestActiveLoadBalancerWaitsForItsFloatingIPBeingAllocated(t *testing.T) {
	g := NewWithT(t)
	m := newMocked(t)
	d := desiredAZ("az1")
	tr := tree(d.Name, d.Name, "ACTIVE", 6443, 8132)
	g.Expect(m.memory.startAllocation(lbID, d.FloatingIP.Description)).To(BeTrue())
	m.lb.EXPECT().GetLoadBalancerStatuses(ctx, lbID).Return(tr, nil).Times(2)
	m.lb.EXPECT().ListListeners(ctx, listeners.ListOpts{LoadbalancerID: lbID}).Return(listenersOf(tr, 6443, 8132), nil).Times(2)
	k := known(d)
	k.IP = vip
	out := m.service().Reconcile(ctx, d, k)
	g.Expect(out.State).To(Equal(StateWaiting), "no second allocation while Neutron makes the first")
	g.Expect(out.Message).To(ContainSubstring("allocating a floating IP"))

	// Once allocated, it is reported and found on the VIP.
	m.memory.finishAllocation(lbID, &floatingips.FloatingIP{ID: "f1", FloatingIP: "172.24.4.10"})
	m.net.EXPECT().ListFloatingIPs(ctx, ourFloatingIP(d)).Return([]floatingips.FloatingIP{
		{ID: "f1", FloatingIP: "172.24.4.10", FixedIP: vip, PortID: vipPort},
	}, nil)
	out = m.service().Reconcile(ctx, d, k)
	g.Expect(out.State).To(Equal(StateReady))
	g.Expect(out.Status.IP).To(Equal("172.24.4.10"))
	g.Expect(m.events()).To(ContainSubstring("CreatedFloatingIP Allocated floating IP 172.24.4.10"))
}
