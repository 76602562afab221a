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
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"go.uber.org/mock/gomock"
	"k8s.io/client-go/tools/events"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients/mock"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

// Helpers for the few tests that still pin calls with mocks (plan_test.go, members_test.go):
// a situation the fake cannot produce, or a proof that no call at all is made.

var (
	err404 = gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusNotFound}
	err409 = gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusConflict}
)

const (
	lbID   = "11111111-1111-4111-8111-111111111111"
	vip    = "10.10.1.5"
	extNet = "33333333-3333-4333-8333-333333333333"
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
	return NewService(m.lb, m.net, report.NewRecorder(m.recorder, &infrav1.OpenStackCluster{}, logr.Discard()), m.memory, "cloud-a", testOwner, testOwner.Name)
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
func desiredAZ(az string) *zones.Desired {
	return &zones.Desired{
		AvailabilityZone: az, OctaviaAZ: az, Name: zones.Name("ns", "c", az),
		Network: infrav1.NetworkStatus{ID: "lb-net"}, Subnet: &infrav1.Subnet{ID: "sub-" + az, CIDR: "10.10.1.0/24"},
		Ports:      []int{6443, 8132},
		Monitor:    infrav1.APIServerLoadBalancerMonitor{Delay: 10, Timeout: 5, MaxRetries: 5, MaxRetriesDown: 3},
		FloatingIP: &zones.FloatingIP{ExternalNetworkID: extNet, Description: zones.FloatingIPDescription("ns", "c", az)},
		Tags:       []string{zones.OwnerTag("ns", "c")},
	}
}

// known is the status entry of d's load balancer as a previous reconcile recorded it.
func known(d *zones.Desired) *infrav1.LoadBalancer {
	return &infrav1.LoadBalancer{Name: d.Name, ID: lbID, InternalIP: vip, IP: "172.24.4.10", AvailabilityZone: d.AvailabilityZone, Tags: d.Tags,
		LoadBalancerNetwork: &infrav1.NetworkStatusWithSubnets{NetworkStatus: d.Network, Subnets: []infrav1.Subnet{*d.Subnet}}}
}

// tree is the status tree of a converged load balancer named lbName, with its children named
// after childrenOf.
func tree(lbName, childrenOf, provisioning string, ports ...int) *loadbalancers.StatusTree {
	lb := &loadbalancers.LoadBalancer{ID: lbID, Name: lbName, ProvisioningStatus: provisioning, OperatingStatus: "ONLINE"}
	for _, p := range ports {
		n := zones.ChildName(childrenOf, p)
		lb.Listeners = append(lb.Listeners, listeners.Listener{ID: "l" + n, Name: n, Pools: []pools.Pool{
			{ID: "p" + n, Name: n, Monitor: monitors.Monitor{ID: "m" + n, Name: n}},
		}})
	}
	return &loadbalancers.StatusTree{Loadbalancer: lb}
}

// Helpers for the tests against the fake cloud (world, in convergence_test.go).

// changes are the calls among calls that change the cloud (creates, updates, deletes), by
// operation: what "one change per reconcile" and "nothing is called on it" are counted on.
func changes(calls map[string]int) map[string]int {
	out := map[string]int{}
	for op, n := range calls {
		if strings.HasPrefix(op, "Create") || strings.HasPrefix(op, "Update") || strings.HasPrefix(op, "Delete") {
			out[op] = n
		}
	}
	return out
}

// octavia is the fake's clock: it moves on a second at each look, so that what is pending
// settles at the next read, unless frozen (Octavia taking its time).
type octavia struct {
	mu     sync.Mutex
	now    time.Time
	frozen bool
}

func (o *octavia) Now() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.frozen {
		o.now = o.now.Add(time.Second)
	}
	return o.now
}

// freeze keeps whatever is pending pending; thaw lets it settle at its next read.
func (o *octavia) freeze() { o.mu.Lock(); o.frozen = true; o.mu.Unlock() }
func (o *octavia) thaw()   { o.mu.Lock(); o.frozen = false; o.mu.Unlock() }

// newSlowWorld is a world whose Octavia can be told to take its time.
func newSlowWorld(t *testing.T, azs ...string) (*world, *octavia) {
	t.Helper()
	o := &octavia{now: time.Now()}
	return newWorldWith(t, fakeopenstack.Options{PendingDuration: time.Second, Now: o.Now}, azs...), o
}

// deferred is the work the service hands to the background (a floating IP allocated while
// Octavia creates its load balancer), held until the test runs it: Neutron taking its time.
type deferred struct {
	mu   sync.Mutex
	work []func()
}

// deferBackground makes the world's service hand its background work to the returned queue.
func (w *world) deferBackground() *deferred {
	q := &deferred{}
	w.memory.Background = func(work func()) {
		q.mu.Lock()
		defer q.mu.Unlock()
		q.work = append(q.work, work)
	}
	return q
}

func (q *deferred) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.work)
}

// run runs the work queued so far.
func (q *deferred) run() {
	q.mu.Lock()
	work := q.work
	q.work = nil
	q.mu.Unlock()
	for _, f := range work {
		f()
	}
}

// settle reads a load balancer, which settles what Octavia was doing with it.
func (w *world) settle(t *testing.T, id string) {
	t.Helper()
	if _, err := w.cloud.LoadBalancer().GetLoadBalancerStatuses(ctx, id); err != nil {
		t.Fatal(err)
	}
}

// children are the IDs of the listener, pool and health monitor named name of load balancer id.
func (w *world) children(t *testing.T, id, name string) (listener, pool, monitor string) {
	t.Helper()
	tree, err := w.cloud.LoadBalancer().GetLoadBalancerStatuses(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range tree.Loadbalancer.Listeners {
		if l.Name != name {
			continue
		}
		listener = l.ID
		for _, p := range l.Pools {
			pool, monitor = p.ID, p.Monitor.ID
		}
	}
	return listener, pool, monitor
}

// listenerOn is the listener of load balancer id on port, nil when there is none.
func (w *world) listenerOn(t *testing.T, id string, port int) *listeners.Listener {
	t.Helper()
	all, err := w.cloud.LoadBalancer().ListListeners(ctx, listeners.ListOpts{LoadbalancerID: id})
	if err != nil {
		t.Fatal(err)
	}
	for i := range all {
		if all[i].ProtocolPort == port {
			return &all[i]
		}
	}
	return nil
}

// poolsOf are the pools of listener listenerID of load balancer id.
func (w *world) poolsOf(t *testing.T, id, listenerID string) []pools.Pool {
	t.Helper()
	all, err := w.cloud.LoadBalancer().ListPools(ctx, pools.ListOpts{LoadbalancerID: id})
	if err != nil {
		t.Fatal(err)
	}
	var out []pools.Pool
	for _, p := range all {
		if len(p.Listeners) > 0 && p.Listeners[0].ID == listenerID {
			out = append(out, p)
		}
	}
	return out
}

// unroutedSubnet adds a subnet to the load balancer network that no router joins to the external
// network.
func (w *world) unroutedSubnet() *infrav1.Subnet {
	id := w.cloud.AddSubnet(w.network.ID, "unrouted", "10.10.9.0/24")
	return &infrav1.Subnet{Name: "unrouted", ID: id, CIDR: "10.10.9.0/24"}
}

// testOwner is the OpenStackCluster the tests' load balancers are for (the cluster c of ns).
var testOwner = ownership.Owner{Kind: "OpenStackCluster", Namespace: "ns", Name: "c", Takeover: true}
