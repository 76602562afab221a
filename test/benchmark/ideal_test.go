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

package benchmark

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
)

// The ideal client does exactly the OpenStack work one cluster needs, one call at a time per
// resource as its dependencies allow, everything else concurrently, and polls every 200 ms: no
// reconciler, no status, no retry. Its time is the limit the controller is compared with.
// Each call goes through pkg/clients, which is one gophercloud call and a counter.

// idealPoll is how often the ideal client looks at what it waits for.
const idealPoll = 200 * time.Millisecond

// idealStrategy is how the ideal client builds a load balancer.
type idealStrategy string

const (
	// populated creates the load balancer with its listeners, pools and monitors in one call,
	// then settles the children an Octavia before 11.0.1 leaves in PENDING_CREATE (an update
	// that changes nothing, one at a time).
	populated idealStrategy = "populated"
	// stepwise creates the load balancer alone, then each listener, pool and monitor once the
	// one before is ACTIVE.
	stepwise idealStrategy = "stepwise"
)

// idealCluster is what the ideal client created for one cluster.
type idealCluster struct {
	network, subnet, router string
	groups                  []string
	lbs, fips               []string
}

type ideal struct {
	cl       *scope.Clients
	strategy idealStrategy
	external string
	ports    []int
	monitor  infrav1.APIServerLoadBalancerMonitor
	// verbose prints each step with its time since begin (CAPO_BENCH_VERBOSE).
	verbose bool
	begin   time.Time
	// wait bounds each wait for Octavia (a load balancer ACTIVE, or deleted).
	wait time.Duration
	// unavailable counts Octavia's 503 answers to creates, each tried again.
	unavailable atomic.Int32
}

func (x *ideal) mark(format string, args ...any) {
	if x.verbose {
		fmt.Fprintf(os.Stderr, "ideal %s at %s: %s\n", x.strategy, time.Since(x.begin).Round(time.Millisecond), fmt.Sprintf(format, args...))
	}
}

func newIdeal(ctx context.Context, cl *scope.Clients, strategy idealStrategy) (*ideal, error) {
	ext, err := cl.Network.ListNetworks(ctx, external.ListOptsExt{ListOptsBuilder: networks.ListOpts{}, External: ptr.To(true)})
	if err != nil {
		return nil, fmt.Errorf("listing external networks: %w", err)
	}
	if len(ext) != 1 {
		return nil, fmt.Errorf("want one external network, got %d", len(ext))
	}
	return &ideal{cl: cl, strategy: strategy, external: ext[0].ID, ports: []int{6443, 8132},
		monitor: infrav1.APIServerLoadBalancerMonitor{Delay: 10, Timeout: 5, MaxRetries: 5, MaxRetriesDown: 3},
		verbose: os.Getenv("CAPO_BENCH_VERBOSE") != "", wait: 3 * time.Minute}, nil
}

// group runs functions concurrently and keeps their errors; the first one calls cancel, when
// set, so that nothing waits for what will not come.
type group struct {
	wg     sync.WaitGroup
	mu     sync.Mutex
	errs   []error
	cancel context.CancelFunc
}

func (g *group) Go(f func() error) {
	g.wg.Go(func() {
		if err := f(); err != nil {
			g.mu.Lock()
			g.errs = append(g.errs, err)
			g.mu.Unlock()
			if g.cancel != nil {
				g.cancel()
			}
		}
	})
}

func (g *group) Wait() error { g.wg.Wait(); return errors.Join(g.errs...) }

// create builds a cluster named name: its network, subnet and router, its two security groups
// with their rules, and a load balancer per entry of zones with a floating IP. vipSubnets[i] is
// the VIP subnet of zone i; nil puts the single load balancer on the cluster's subnet. It
// returns when every load balancer and child is ACTIVE and every floating IP associated.
func (x *ideal) create(ctx context.Context, name string, zones []string, vipSubnets []string) (*idealCluster, error) {
	x.begin = time.Now()
	out := &idealCluster{lbs: make([]string, len(zones)), fips: make([]string, len(zones))}
	subnetReady, routed := make(chan struct{}), make(chan struct{})
	// A failure leaves other goroutines waiting on channels nobody closes: the context ends them.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g := group{cancel: cancel}
	g.Go(func() error { return x.securityGroups(ctx, name, out) })
	g.Go(func() error {
		var inner group
		inner.Go(func() error {
			n, err := x.cl.Network.CreateNetwork(ctx, networks.CreateOpts{Name: name})
			if err != nil {
				return err
			}
			out.network = n.ID
			sn, err := x.cl.Network.CreateSubnet(ctx, subnets.CreateOpts{Name: name, NetworkID: n.ID, IPVersion: 4, CIDR: "10.6.0.0/24"})
			if err != nil {
				return err
			}
			out.subnet = sn.ID
			x.mark("subnet created")
			close(subnetReady)
			return nil
		})
		inner.Go(func() error {
			r, err := x.cl.Network.CreateRouter(ctx, routers.CreateOpts{Name: name, GatewayInfo: &routers.GatewayInfo{NetworkID: x.external}})
			if err == nil {
				out.router = r.ID
			}
			return err
		})
		if err := inner.Wait(); err != nil {
			return err
		}
		_, err := x.cl.Network.AddRouterInterface(ctx, out.router, routers.AddInterfaceOpts{SubnetID: out.subnet})
		if err == nil {
			x.mark("router interface added")
			close(routed)
		}
		return err
	})
	for i, az := range zones {
		g.Go(func() error {
			if vipSubnets != nil {
				// The operator's load balancer network is routed already.
				return x.loadBalancer(ctx, fmt.Sprintf("%s-%d", name, i), az, vipSubnets[i], nil, &out.lbs[i], &out.fips[i])
			}
			if !waitFor(ctx, subnetReady) {
				return ctx.Err()
			}
			return x.loadBalancer(ctx, fmt.Sprintf("%s-%d", name, i), az, out.subnet, routed, &out.lbs[i], &out.fips[i])
		})
	}
	return out, g.Wait()
}

func waitFor(ctx context.Context, ch <-chan struct{}) bool {
	if ch == nil {
		return true
	}
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// securityGroups creates the control plane and worker groups, then their rules in one request
// each: the same rules as the controller's (kube API, etcd, kubelet, the additional port;
// NodePorts and kubelet for workers).
func (x *ideal) securityGroups(ctx context.Context, name string, out *idealCluster) error {
	ids := make([]string, 2)
	var g group
	for i, role := range []string{"controlplane", "worker"} {
		g.Go(func() error {
			sg, err := x.cl.Network.CreateSecGroup(ctx, groups.CreateOpts{Name: name + "-" + role})
			if err == nil {
				ids[i] = sg.ID
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	out.groups = ids
	x.mark("security groups created")
	rule := func(group string, min, max int, prefix, remote string) rules.CreateOpts {
		return rules.CreateOpts{SecGroupID: group, Direction: rules.DirIngress, EtherType: rules.EtherType4, Protocol: rules.ProtocolTCP,
			PortRangeMin: min, PortRangeMax: max, RemoteIPPrefix: prefix, RemoteGroupID: remote}
	}
	cp, w := ids[0], ids[1]
	sets := [][]rules.CreateOpts{
		{rule(cp, 6443, 6443, "0.0.0.0/0", ""), rule(cp, 2379, 2380, "", cp), rule(cp, 10250, 10250, "", cp), rule(cp, 10250, 10250, "", w), rule(cp, 8132, 8132, "0.0.0.0/0", "")},
		{rule(w, 30000, 32767, "0.0.0.0/0", ""), rule(w, 10250, 10250, "", cp), rule(w, 10250, 10250, "", w)},
	}
	for _, set := range sets {
		g.Go(func() error { _, err := x.cl.Network.CreateSecGroupRules(ctx, set); return err })
	}
	err := g.Wait()
	x.mark("security group rules created")
	return err
}

// loadBalancer builds one load balancer with the chosen strategy and gives its VIP a floating
// IP as soon as the subnet is routed (Neutron does not wait for Octavia).
func (x *ideal) loadBalancer(ctx context.Context, name, az, vipSubnet string, routed <-chan struct{}, id, fip *string) error {
	lb, err := x.createLoadBalancer(ctx, name, az, vipSubnet)
	if err != nil {
		return err
	}
	*id = lb.ID
	x.mark("load balancer %s created", name)
	var g group
	g.Go(func() error {
		if !waitFor(ctx, routed) {
			return ctx.Err()
		}
		f, err := x.cl.Network.CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: x.external, PortID: lb.VipPortID})
		if err == nil {
			*fip = f.ID
			x.mark("floating IP of %s created", name)
		}
		return err
	})
	g.Go(func() error { return x.completeChildren(ctx, lb.ID, name) })
	return g.Wait()
}

// createLoadBalancer creates a load balancer as the strategy does: with its listeners, pools and
// monitors (populated) or alone (stepwise).
func (x *ideal) createLoadBalancer(ctx context.Context, name, az, vipSubnet string) (*loadbalancers.LoadBalancer, error) {
	opts := loadbalancers.CreateOpts{Name: name, VipSubnetID: vipSubnet, AvailabilityZone: az}
	if x.strategy == populated {
		for _, port := range x.ports {
			opts.Listeners = append(opts.Listeners, x.listener(name, port, true))
		}
	}
	var lb *loadbalancers.LoadBalancer
	err := x.whileUnavailable(ctx, func() (err error) {
		lb, err = x.cl.LoadBalancer.CreateLoadBalancer(ctx, opts)
		return err
	})
	return lb, err
}

// completeChildren waits until the load balancer and every child are ACTIVE: settling what a
// populated create left pending, or creating each child (stepwise).
func (x *ideal) completeChildren(ctx context.Context, id, name string) error {
	if x.strategy == populated {
		return x.settle(ctx, id)
	}
	return x.children(ctx, id, name)
}

func (x *ideal) listener(name string, port int, withPool bool) listeners.CreateOpts {
	child := fmt.Sprintf("%s-%d", name, port)
	l := listeners.CreateOpts{Name: child, Protocol: listeners.ProtocolTCP, ProtocolPort: port}
	if withPool {
		p := x.pool(child, "")
		p.Monitor = x.monitorOpts(child, "")
		l.DefaultPool = &p
	}
	return l
}

func (x *ideal) pool(name, listener string) pools.CreateOpts {
	return pools.CreateOpts{Name: name, ListenerID: listener, Protocol: pools.ProtocolTCP, LBMethod: pools.LBMethodRoundRobin}
}

func (x *ideal) monitorOpts(name, pool string) monitors.CreateOpts {
	m := x.monitor
	return monitors.CreateOpts{Name: name, PoolID: pool, Type: monitors.TypeTCP, Delay: m.Delay, Timeout: m.Timeout, MaxRetries: m.MaxRetries, MaxRetriesDown: m.MaxRetriesDown}
}

// whileUnavailable calls f again, as soon as the poll interval allows, while Octavia answers 503:
// with many creates at once in one project, Octavia's quota lock waits past MySQL's lock timeout
// and the create is refused having made nothing. The controller retries such an answer too.
func (x *ideal) whileUnavailable(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(x.wait)
	for {
		err := f()
		if !gophercloud.ResponseCodeIs(err, http.StatusServiceUnavailable) || time.Now().After(deadline) {
			return err
		}
		x.unavailable.Add(1)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(idealPoll):
		}
	}
}

// active polls the status tree until the load balancer is ACTIVE, and returns the tree.
func (x *ideal) active(ctx context.Context, id string) (*loadbalancers.LoadBalancer, error) {
	for deadline := time.Now().Add(x.wait); time.Now().Before(deadline); time.Sleep(idealPoll) {
		tree, err := x.cl.LoadBalancer.GetLoadBalancerStatuses(ctx, id)
		if err != nil {
			return nil, err
		}
		switch tree.Loadbalancer.ProvisioningStatus {
		case "ACTIVE":
			x.mark("load balancer %s ACTIVE", tree.Loadbalancer.Name)
			return tree.Loadbalancer, nil
		case "ERROR":
			return nil, fmt.Errorf("load balancer %s went into ERROR", id)
		}
	}
	return nil, fmt.Errorf("load balancer %s not ACTIVE after %s", id, x.wait)
}

// settle waits for the load balancer, then updates each child Octavia left pending, one at a
// time, until the whole tree is ACTIVE.
func (x *ideal) settle(ctx context.Context, id string) error {
	for {
		tree, err := x.active(ctx, id)
		if err != nil {
			return err
		}
		update := stuckChild(ctx, x.cl.LoadBalancer, tree)
		if update == nil {
			return nil
		}
		x.mark("settling a child of %s", tree.Name)
		if err := update(); err != nil {
			return err
		}
	}
}

// stuckChild returns the update that settles the first child of an ACTIVE load balancer left
// in a PENDING_* state, nil when there is none.
func stuckChild(ctx context.Context, lb clients.LoadBalancerClient, tree *loadbalancers.LoadBalancer) func() error {
	pending := func(s string) bool { return strings.HasPrefix(s, "PENDING_") }
	for _, l := range tree.Listeners {
		if pending(l.ProvisioningStatus) {
			return func() error { _, err := lb.UpdateListener(ctx, l.ID, listeners.UpdateOpts{Name: &l.Name}); return err }
		}
		for _, p := range l.Pools {
			if pending(p.ProvisioningStatus) {
				return func() error { _, err := lb.UpdatePool(ctx, p.ID, pools.UpdateOpts{Name: &p.Name}); return err }
			}
			if m := p.Monitor; m.ID != "" && pending(m.ProvisioningStatus) {
				return func() error { _, err := lb.UpdateMonitor(ctx, m.ID, monitors.UpdateOpts{Name: &m.Name}); return err }
			}
		}
	}
	return nil
}

// children creates each port's listener, pool and monitor, waiting for the load balancer to be
// ACTIVE before each.
func (x *ideal) children(ctx context.Context, id, name string) error {
	for _, port := range x.ports {
		if _, err := x.active(ctx, id); err != nil {
			return err
		}
		opts := x.listener(name, port, false)
		opts.LoadbalancerID = id
		var l *listeners.Listener
		err := x.whileUnavailable(ctx, func() (err error) {
			l, err = x.cl.LoadBalancer.CreateListener(ctx, opts)
			return err
		})
		if err != nil {
			return err
		}
		if _, err := x.active(ctx, id); err != nil {
			return err
		}
		var p *pools.Pool
		err = x.whileUnavailable(ctx, func() (err error) {
			p, err = x.cl.LoadBalancer.CreatePool(ctx, x.pool(l.Name, l.ID))
			return err
		})
		if err != nil {
			return err
		}
		if _, err := x.active(ctx, id); err != nil {
			return err
		}
		err = x.whileUnavailable(ctx, func() error {
			_, err := x.cl.LoadBalancer.CreateMonitor(ctx, x.monitorOpts(l.Name, p.ID))
			return err
		})
		if err != nil {
			return err
		}
	}
	_, err := x.active(ctx, id)
	return err
}

// delete removes what create made: the floating IPs and load balancers (a cascade delete,
// polled until gone) and the security groups at once; the router's interface once nothing of
// the load balancers holds an address on the subnet, then the router and the network.
func (x *ideal) delete(ctx context.Context, c *idealCluster, lbsOnSubnet bool) error {
	lbsGone := make(chan struct{})
	var g group
	for i := range c.lbs {
		g.Go(func() error {
			if c.fips[i] != "" {
				if err := x.cl.Network.DeleteFloatingIP(ctx, c.fips[i]); err != nil && !clients.IsNotFound(err) {
					return err
				}
			}
			return nil
		})
	}
	var lbs group
	for _, id := range c.lbs {
		if id == "" {
			continue
		}
		lbs.Go(func() error {
			if err := x.cl.LoadBalancer.DeleteLoadBalancer(ctx, id, loadbalancers.DeleteOpts{Cascade: true}); err != nil && !clients.IsNotFound(err) {
				return err
			}
			for deadline := time.Now().Add(x.wait); time.Now().Before(deadline); time.Sleep(idealPoll) {
				if _, err := x.cl.LoadBalancer.GetLoadBalancer(ctx, id); clients.IsNotFound(err) {
					return nil
				}
			}
			return fmt.Errorf("load balancer %s not deleted after %s", id, x.wait)
		})
	}
	g.Go(func() error { err := lbs.Wait(); close(lbsGone); return err })
	for _, id := range c.groups {
		g.Go(func() error { return ignoreNotFound(x.cl.Network.DeleteSecGroup(ctx, id)) })
	}
	g.Go(func() error {
		if lbsOnSubnet {
			<-lbsGone
		}
		if c.router != "" && c.subnet != "" {
			if _, err := x.cl.Network.RemoveRouterInterface(ctx, c.router, routers.RemoveInterfaceOpts{SubnetID: c.subnet}); err != nil && !clients.IsNotFound(err) {
				return err
			}
		}
		var inner group
		if c.router != "" {
			inner.Go(func() error { return ignoreNotFound(x.cl.Network.DeleteRouter(ctx, c.router)) })
		}
		if c.network != "" {
			inner.Go(func() error { return ignoreNotFound(x.cl.Network.DeleteNetwork(ctx, c.network)) })
		}
		return inner.Wait()
	})
	return g.Wait()
}

// alone is Octavia alone, the floor under both the controller and the ideal client: with the
// ideal client's strategy and nothing else running, it builds a load balancer in each of zones
// at once (the i-th with its VIP on subnetIDs[i], on a network that exists already) until it
// and every child are ACTIVE, then deletes them (a cascade delete each, polled until gone), and
// returns how long each took. An Octavia that leaves the children of a fully populated load
// balancer pending gets them settled, as the controller must before it may add a member.
func (x *ideal) alone(ctx context.Context, name string, subnetIDs, zones []string) (active, deleted time.Duration, err error) {
	start := time.Now()
	ids := make([]string, len(zones))
	var g group
	for i, az := range zones {
		g.Go(func() error {
			lbName := name + "-" + az
			lb, err := x.createLoadBalancer(ctx, lbName, az, subnetIDs[i])
			if err != nil {
				return err
			}
			ids[i] = lb.ID
			return x.completeChildren(ctx, lb.ID, lbName)
		})
	}
	err = g.Wait()
	active = time.Since(start)
	start = time.Now()
	err = errors.Join(err, x.delete(ctx, &idealCluster{lbs: ids, fips: make([]string, len(ids))}, false))
	return active, time.Since(start), err
}

// ignoreNotFound is err, unless it says the resource is gone already (a delete retried).
func ignoreNotFound(err error) error {
	if clients.IsNotFound(err) {
		return nil
	}
	return err
}

// migrate turns a single load balancer (zones[0]'s, built by create with vipSubnets[:1]) into
// one per zone: it renames the load balancer and each child after the first zone, one at a
// time, while it builds the other zones' load balancers.
func (x *ideal) migrate(ctx context.Context, c *idealCluster, name string, zones, vipSubnets []string) error {
	var g group
	g.Go(func() error {
		id := c.lbs[0]
		newName := name + "-az-" + zones[0]
		if _, err := x.cl.LoadBalancer.UpdateLoadBalancer(ctx, id, loadbalancers.UpdateOpts{Name: &newName}); err != nil {
			return err
		}
		tree, err := x.active(ctx, id)
		if err != nil {
			return err
		}
		var renames []func() error
		for _, l := range tree.Listeners {
			n := strings.Replace(l.Name, tree.Name, newName, 1)
			renames = append(renames, func() error {
				_, err := x.cl.LoadBalancer.UpdateListener(ctx, l.ID, listeners.UpdateOpts{Name: &n})
				return err
			})
			for _, p := range l.Pools {
				renames = append(renames, func() error {
					_, err := x.cl.LoadBalancer.UpdatePool(ctx, p.ID, pools.UpdateOpts{Name: &n})
					return err
				})
				if p.Monitor.ID != "" {
					renames = append(renames, func() error {
						_, err := x.cl.LoadBalancer.UpdateMonitor(ctx, p.Monitor.ID, monitors.UpdateOpts{Name: &n})
						return err
					})
				}
			}
		}
		for _, rename := range renames {
			if err := rename(); err != nil {
				return err
			}
			if _, err := x.active(ctx, id); err != nil {
				return err
			}
		}
		return nil
	})
	c.lbs = append(c.lbs, make([]string, len(zones)-1)...)
	c.fips = append(c.fips, make([]string, len(zones)-1)...)
	for i := 1; i < len(zones); i++ {
		g.Go(func() error {
			return x.loadBalancer(ctx, fmt.Sprintf("%s-az-%s", name, zones[i]), zones[i], vipSubnets[i], nil, &c.lbs[i], &c.fips[i])
		})
	}
	return g.Wait()
}
