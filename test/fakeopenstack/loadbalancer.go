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

package fakeopenstack

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/apiversions"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/providers"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
)

const (
	statusActive        = "ACTIVE"
	statusError         = "ERROR"
	statusPendingCreate = "PENDING_CREATE"
	statusPendingUpdate = "PENDING_UPDATE"
	statusPendingDelete = "PENDING_DELETE"
)

type lbEntry struct {
	lb           loadbalancers.LoadBalancer
	pendingSince time.Time
	reads        int
	// settleTo is the status the load balancer reaches when its pending operation ends.
	settleTo string
	// held: the status was set by SetLoadBalancerStatus and does not settle.
	held bool
	// hiddenLists is how many more ListLoadBalancers answers leave it out (Fault.Uncommitted).
	hiddenLists int
}

type loadBalancerState struct {
	lbs       store[lbEntry]
	listeners store[listeners.Listener]
	pools     store[pools.Pool]
	members   store[pools.Member]
	monitors  store[monitors.Monitor]

	providers    []providers.Provider
	capabilities map[string][]providers.Capability
	// noAllowedCIDRs are the providers that reject allowed_cidrs on listeners.
	noAllowedCIDRs map[string]bool
	// algorithms are, per provider, the pool algorithms it runs; a provider not listed runs all.
	algorithms map[string][]string
	azs        []clients.LoadBalancerAvailabilityZone
	flavors    []flavors.Flavor
	versions   []apiversions.APIVersion
	// stuck are the children of fully populated load balancers that stay pending until updated
	// (Options.LeavePopulatedChildrenPending).
	stuck map[string]bool
}

func (s *loadBalancerState) init() {
	s.lbs, s.listeners, s.pools = newStore[lbEntry](), newStore[listeners.Listener](), newStore[pools.Pool]()
	s.members, s.monitors = newStore[pools.Member](), newStore[monitors.Monitor]()
	s.providers = []providers.Provider{{Name: "amphora", Description: "The Octavia Amphora driver."}}
	s.capabilities = map[string][]providers.Capability{"amphora": {{Name: "compute_zone", Description: "The compute availability zone."}}}
	s.noAllowedCIDRs, s.stuck = map[string]bool{}, map[string]bool{}
	// As Octavia's amphora driver and the OVN provider say in their validation.
	s.algorithms = map[string][]string{"amphora": {"ROUND_ROBIN", "SOURCE_IP", "LEAST_CONNECTIONS"}, "ovn": {"SOURCE_IP_PORT"}}
	s.versions = []apiversions.APIVersion{{ID: "v2.0", Status: "SUPPORTED"}, {ID: "v2.27", Status: "CURRENT"}}
}

// SetAvailabilityZones sets the availability zones of Nova, Neutron and Octavia at once, as an
// operator would configure a cloud.
func (c *Cloud) SetAvailabilityZones(names ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.net.azs, c.lb.azs, c.compute.azs = nil, nil, nil
	for _, n := range names {
		c.net.azs = append(c.net.azs, clients.NetworkAvailabilityZone{Name: n, Resource: "network", State: "available"})
		c.lb.azs = append(c.lb.azs, clients.LoadBalancerAvailabilityZone{Name: n, Enabled: true})
		c.compute.addAZ(n)
	}
}

// SetLoadBalancerAvailabilityZones sets only Octavia's availability zones, for clouds whose
// Octavia knows fewer zones than Nova.
func (c *Cloud) SetLoadBalancerAvailabilityZones(names ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lb.azs = nil
	for _, n := range names {
		c.lb.azs = append(c.lb.azs, clients.LoadBalancerAvailabilityZone{Name: n, Enabled: true})
	}
}

// AddProvider adds an Octavia provider and the availability zone capabilities it reports
// (empty: it does not support availability zones).
func (c *Cloud) AddProvider(name string, azCapabilities ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lb.providers = append(c.lb.providers, providers.Provider{Name: name})
	var caps []providers.Capability
	for _, cp := range azCapabilities {
		caps = append(caps, providers.Capability{Name: cp})
	}
	c.lb.capabilities[name] = caps
}

// SetProviderAllowedCIDRs says whether a provider accepts allowed_cidrs on listeners; providers
// do unless told otherwise.
func (c *Cloud) SetProviderAllowedCIDRs(provider string, supported bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lb.noAllowedCIDRs[provider] = !supported
}

// checkAlgorithm answers as Octavia does when the load balancer's provider cannot run a pool's
// algorithm: 501, with the provider's own words.
func (c *Cloud) checkAlgorithm(e *lbEntry, algorithm any) error {
	runs, listed := c.lb.algorithms[e.lb.Provider]
	if a := fmt.Sprint(algorithm); listed && !slices.Contains(runs, a) {
		words := map[string]string{"amphora": "Amphora provider", "ovn": "OVN provider"}[e.lb.Provider]
		return httpError(http.StatusNotImplemented, "Provider '%s' does not support a requested option: %s does not support %s algorithm.", e.lb.Provider, words, a)
	}
	return nil
}

// checkAllowedCIDRs answers as Octavia does when allowed_cidrs cannot be honoured: 400 below API
// version 2.12, 501 when the load balancer's provider does not support the option.
func (c *Cloud) checkAllowedCIDRs(e *lbEntry, cidrs []string) error {
	if len(cidrs) == 0 {
		return nil
	}
	if !c.versionAtLeast(2, 12) {
		return httpError(http.StatusBadRequest, "Invalid input for field/attribute allowed_cidrs: not supported by this API version")
	}
	if c.lb.noAllowedCIDRs[e.lb.Provider] {
		return httpError(http.StatusNotImplemented, "Provider '%s' does not support a requested option: allowed_cidrs", e.lb.Provider)
	}
	return nil
}

// SetAPIVersions replaces the Octavia API versions the cloud reports.
func (c *Cloud) SetAPIVersions(versions ...apiversions.APIVersion) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lb.versions = versions
}

// SetLoadBalancerStatus forces a load balancer's provisioning status, for example to ERROR; a
// PENDING_* status set so holds until it is set again.
func (c *Cloud) SetLoadBalancerStatus(id, status string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.lb.lbs.get(id); ok {
		e.lb.ProvisioningStatus = status
		e.settleTo, e.held = "", true
	}
}

// SetOperatingStatus sets what Octavia's health manager would report of a load balancer: its
// operating status, and that of each of its members whose address is in members.
func (c *Cloud) SetOperatingStatus(id, status string, members map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.lb.lbs.get(id)
	if !ok {
		return
	}
	e.lb.OperatingStatus = status
	for _, p := range c.lb.pools.all() {
		if poolLB(p) != id {
			continue
		}
		for _, m := range c.lb.members.all() {
			if st, ok := members[m.Address]; ok && m.PoolID == p.ID {
				m.OperatingStatus = st
			}
		}
	}
}

func (c *Cloud) markPending(e *lbEntry, status, settleTo string) {
	e.lb.ProvisioningStatus, e.settleTo, e.held = status, settleTo, false
	e.pendingSince, e.reads = c.opts.Now(), 0
}

// settle advances a pending load balancer on a read. It reports whether the load balancer is
// gone (its deletion completed).
func (c *Cloud) settle(e *lbEntry) bool {
	// A status a test set (SetLoadBalancerStatus) holds until the test changes it.
	if !strings.HasPrefix(e.lb.ProvisioningStatus, "PENDING_") || e.held {
		return false
	}
	e.reads++
	reads, wait := c.opts.PendingReads, c.opts.PendingDuration
	due := (reads == 0 && wait == 0) ||
		(reads > 0 && e.reads >= reads) ||
		(wait > 0 && c.opts.Now().Sub(e.pendingSince) >= wait)
	if !due {
		return false
	}
	if e.lb.ProvisioningStatus == statusPendingDelete {
		c.removeLoadBalancer(e.lb.ID)
		return true
	}
	e.lb.ProvisioningStatus = e.settleTo
	if e.settleTo == statusActive && e.lb.OperatingStatus == "OFFLINE" {
		// The health manager's first report; later changes keep what it reported since.
		e.lb.OperatingStatus = "ONLINE"
	}
	for _, l := range c.lb.listeners.all() {
		if lbOf(l.Loadbalancers) == e.lb.ID && !c.lb.stuck[l.ID] {
			l.ProvisioningStatus = e.settleTo
		}
	}
	for _, p := range c.lb.pools.all() {
		if poolLB(p) == e.lb.ID {
			if !c.lb.stuck[p.ID] {
				p.ProvisioningStatus = e.settleTo
			}
			for _, m := range c.lb.members.all() {
				if m.PoolID == p.ID {
					m.ProvisioningStatus = e.settleTo
				}
			}
			for _, mon := range c.lb.monitors.all() {
				if len(mon.Pools) > 0 && mon.Pools[0].ID == p.ID && !c.lb.stuck[mon.ID] {
					mon.ProvisioningStatus = e.settleTo
				}
			}
		}
	}
	return false
}

func (c *Cloud) removeLoadBalancer(id string) {
	for _, p := range c.lb.pools.all() {
		if poolLB(p) == id {
			c.removePool(p.ID)
		}
	}
	for _, l := range c.lb.listeners.all() {
		if lbOf(l.Loadbalancers) == id {
			c.lb.listeners.remove(l.ID)
		}
	}
	if e, ok := c.lb.lbs.get(id); ok {
		c.deletePort(e.lb.VipPortID)
	}
	c.lb.lbs.remove(id)
}

func (c *Cloud) removePool(id string) {
	for _, m := range c.lb.members.all() {
		if m.PoolID == id {
			c.lb.members.remove(m.ID)
		}
	}
	for _, mon := range c.lb.monitors.all() {
		if len(mon.Pools) > 0 && mon.Pools[0].ID == id {
			c.lb.monitors.remove(mon.ID)
		}
	}
	c.lb.pools.remove(id)
}

func lbOf(ids []listeners.LoadBalancerID) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[0].ID
}

func poolLB(p *pools.Pool) string {
	if len(p.Loadbalancers) == 0 {
		return ""
	}
	return p.Loadbalancers[0].ID
}

// mutable returns the load balancer a mutation applies to, answering 409 while it is pending,
// as Octavia does.
func (c *Cloud) mutable(id string) (*lbEntry, error) {
	e, ok := c.lb.lbs.get(id)
	if !ok {
		return nil, notFound("Load Balancer", id)
	}
	if strings.HasPrefix(e.lb.ProvisioningStatus, "PENDING_") {
		return nil, httpError(http.StatusConflict, "Load Balancer %s is immutable and cannot be updated.", id)
	}
	return e, nil
}

// view is a load balancer as the API shows it, with its listeners and pools.
func (c *Cloud) view(e *lbEntry) loadbalancers.LoadBalancer {
	lb := e.lb
	lb.Tags = slices.Clone(lb.Tags)
	lb.Listeners, lb.Pools = nil, nil
	for _, l := range c.lb.listeners.all() {
		if lbOf(l.Loadbalancers) == lb.ID {
			lb.Listeners = append(lb.Listeners, listeners.Listener{ID: l.ID})
		}
	}
	for _, p := range c.lb.pools.all() {
		if poolLB(p) == lb.ID {
			lb.Pools = append(lb.Pools, pools.Pool{ID: p.ID})
		}
	}
	return lb
}

type loadBalancerAPI struct{ c *Cloud }

func (a *loadBalancerAPI) ListLoadBalancers(_ context.Context, opts loadbalancers.ListOptsBuilder) ([]loadbalancers.LoadBalancer, error) {
	return locked(a.c, "ListLoadBalancers", func(c *Cloud) ([]loadbalancers.LoadBalancer, error) {
		var views []*loadbalancers.LoadBalancer
		for _, e := range c.lb.lbs.all() {
			if e.hiddenLists > 0 {
				e.hiddenLists--
				continue
			}
			if c.settle(e) {
				continue
			}
			v := c.view(e)
			views = append(views, &v)
		}
		return filter(views, opts, nil)
	})
}

func (a *loadBalancerAPI) GetLoadBalancer(_ context.Context, id string) (*loadbalancers.LoadBalancer, error) {
	return locked(a.c, "GetLoadBalancer", func(c *Cloud) (*loadbalancers.LoadBalancer, error) {
		e, ok := c.lb.lbs.get(id)
		if !ok || e.hiddenLists > 0 || c.settle(e) {
			return nil, notFound("Load Balancer", id)
		}
		v := c.view(e)
		return &v, nil
	})
}

func (a *loadBalancerAPI) CreateLoadBalancer(_ context.Context, opts loadbalancers.CreateOptsBuilder) (*loadbalancers.LoadBalancer, error) {
	return locked(a.c, "CreateLoadBalancer", func(c *Cloud) (*loadbalancers.LoadBalancer, error) {
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		provider := str(body, "provider")
		if provider == "" {
			provider = "amphora"
		}
		if !slices.ContainsFunc(c.lb.providers, func(p providers.Provider) bool { return p.Name == provider }) {
			return nil, httpError(http.StatusBadRequest, "Provider '%s' is not enabled.", provider)
		}
		if az := str(body, "availability_zone"); az != "" &&
			!slices.ContainsFunc(c.lb.azs, func(z clients.LoadBalancerAvailabilityZone) bool { return z.Name == az && z.Enabled }) {
			return nil, httpError(http.StatusBadRequest, "Validation failure: Invalid availability zone name: %s", az)
		}
		subnetID, networkID := str(body, "vip_subnet_id"), str(body, "vip_network_id")
		if subnetID != "" {
			s, ok := c.net.subnets.get(subnetID)
			if !ok {
				return nil, httpError(http.StatusBadRequest, "Validation failure: Subnet %s not found.", subnetID)
			}
			networkID = s.NetworkID
		}
		if networkID == "" {
			return nil, httpError(http.StatusBadRequest, "Validation failure: VIP must contain one of: vip_port_id, vip_network_id, vip_subnet_id.")
		}
		id := c.newID("lb")
		port := map[string]any{"network_id": networkID, "name": "octavia-lb-" + id, "device_owner": "Octavia", "device_id": "lb-" + id}
		if subnetID != "" || str(body, "vip_address") != "" {
			port["fixed_ips"] = []any{map[string]any{"subnet_id": subnetID, "ip_address": str(body, "vip_address")}}
		}
		vip, err := c.createPort(port)
		if err != nil {
			return nil, err
		}
		e := &lbEntry{lb: loadbalancers.LoadBalancer{
			ID: id, Name: str(body, "name"), Description: str(body, "description"), AdminStateUp: true,
			VipAddress: vip.FixedIPs[0].IPAddress, VipPortID: vip.ID, VipSubnetID: vip.FixedIPs[0].SubnetID, VipNetworkID: networkID,
			Provider: provider, FlavorID: str(body, "flavor_id"), AvailabilityZone: str(body, "availability_zone"),
			Tags: stringsOf(body["tags"]), OperatingStatus: "OFFLINE", ProjectID: "fake-project",
		}}
		settleTo := statusActive
		if c.lastCallDrivesToError {
			settleTo = statusError
		}
		c.markPending(e, statusPendingCreate, settleTo)
		e.hiddenLists = c.lastCallUncommitted
		c.lb.lbs.add(id, e)
		if err := c.populate(e, body); err != nil {
			c.removeLoadBalancer(id)
			return nil, err
		}
		v := c.view(e)
		return &v, nil
	})
}

// populate creates the listeners, pools and monitors given with a load balancer (Octavia's
// fully populated load balancer): listeners[].default_pool.healthmonitor.
func (c *Cloud) populate(e *lbEntry, body map[string]any) error {
	items, _ := body["listeners"].([]any)
	for _, item := range items {
		lb, _ := item.(map[string]any)
		l := &listeners.Listener{}
		decodeInto(map[string]any{"name": lb["name"], "protocol": lb["protocol"], "protocol_port": lb["protocol_port"]}, l)
		for _, other := range c.lb.listeners.all() {
			if lbOf(other.Loadbalancers) == e.lb.ID && other.ProtocolPort == l.ProtocolPort {
				return httpError(http.StatusConflict, "Another Listener on this Load Balancer is already using protocol_port %d", l.ProtocolPort)
			}
		}
		l.AllowedCIDRs = stringsOf(lb["allowed_cidrs"])
		if err := c.checkAllowedCIDRs(e, l.AllowedCIDRs); err != nil {
			return err
		}
		l.ID, l.ProvisioningStatus, l.OperatingStatus, l.AdminStateUp = c.newID("listener"), statusPendingCreate, "OFFLINE", true
		l.Loadbalancers, l.Tags = []listeners.LoadBalancerID{{ID: e.lb.ID}}, stringsOf(lb["tags"])
		c.lb.listeners.add(l.ID, l)
		c.lb.stuck[l.ID] = c.opts.LeavePopulatedChildrenPending
		pb, ok := lb["default_pool"].(map[string]any)
		if !ok {
			continue
		}
		if err := c.checkAlgorithm(e, pb["lb_algorithm"]); err != nil {
			return err
		}
		p := &pools.Pool{}
		decodeInto(map[string]any{"name": pb["name"], "protocol": pb["protocol"], "lb_algorithm": pb["lb_algorithm"]}, p)
		p.ID, p.ProvisioningStatus, p.OperatingStatus, p.AdminStateUp = c.newID("pool"), statusPendingCreate, "OFFLINE", true
		p.Loadbalancers, p.Listeners, p.Tags = []pools.LoadBalancerID{{ID: e.lb.ID}}, []pools.ListenerID{{ID: l.ID}}, stringsOf(pb["tags"])
		l.DefaultPoolID = p.ID
		c.lb.pools.add(p.ID, p)
		c.lb.stuck[p.ID] = c.opts.LeavePopulatedChildrenPending
		mb, ok := pb["healthmonitor"].(map[string]any)
		if !ok {
			continue
		}
		m := &monitors.Monitor{}
		decodeInto(mb, m)
		m.ID, m.ProvisioningStatus, m.OperatingStatus, m.AdminStateUp = c.newID("monitor"), statusPendingCreate, "OFFLINE", true
		m.Pools = []monitors.PoolID{{ID: p.ID}}
		p.MonitorID = m.ID
		c.lb.monitors.add(m.ID, m)
		c.lb.stuck[m.ID] = c.opts.LeavePopulatedChildrenPending
	}
	return nil
}

func (a *loadBalancerAPI) UpdateLoadBalancer(_ context.Context, id string, opts loadbalancers.UpdateOptsBuilder) (*loadbalancers.LoadBalancer, error) {
	return locked(a.c, "UpdateLoadBalancer", func(c *Cloud) (*loadbalancers.LoadBalancer, error) {
		e, err := c.mutable(id)
		if err != nil {
			return nil, err
		}
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		if v, ok := body["name"]; ok {
			e.lb.Name = str(map[string]any{"v": v}, "v")
		}
		if v, ok := body["description"]; ok {
			e.lb.Description = str(map[string]any{"v": v}, "v")
		}
		if v, ok := body["tags"]; ok {
			e.lb.Tags = stringsOf(v)
		}
		c.markPending(e, statusPendingUpdate, statusActive)
		v := c.view(e)
		return &v, nil
	})
}

func (a *loadBalancerAPI) DeleteLoadBalancer(_ context.Context, id string, opts loadbalancers.DeleteOptsBuilder) error {
	return lockedErr(a.c, "DeleteLoadBalancer", func(c *Cloud) error {
		e, err := c.mutable(id)
		if err != nil {
			return err
		}
		q, err := listQuery(opts)
		if err != nil {
			return err
		}
		if v := c.view(e); q.Get("cascade") != "true" && (len(v.Listeners) > 0 || len(v.Pools) > 0) {
			return httpError(http.StatusBadRequest, "Validation failure: Cannot delete Load Balancer %s - it has children", id)
		}
		c.markPending(e, statusPendingDelete, "")
		return nil
	})
}

func (a *loadBalancerAPI) GetLoadBalancerStatuses(_ context.Context, id string) (*loadbalancers.StatusTree, error) {
	return locked(a.c, "GetLoadBalancerStatuses", func(c *Cloud) (*loadbalancers.StatusTree, error) {
		e, ok := c.lb.lbs.get(id)
		if !ok || c.settle(e) {
			return nil, notFound("Load Balancer", id)
		}
		tree := &loadbalancers.LoadBalancer{ID: e.lb.ID, Name: e.lb.Name, ProvisioningStatus: e.lb.ProvisioningStatus, OperatingStatus: e.lb.OperatingStatus}
		for _, l := range c.lb.listeners.all() {
			if lbOf(l.Loadbalancers) != id {
				continue
			}
			lv := listeners.Listener{ID: l.ID, Name: l.Name, ProvisioningStatus: l.ProvisioningStatus, OperatingStatus: l.OperatingStatus}
			for _, p := range c.lb.pools.all() {
				if len(p.Listeners) == 0 || p.Listeners[0].ID != l.ID {
					continue
				}
				pv := pools.Pool{ID: p.ID, Name: p.Name, ProvisioningStatus: p.ProvisioningStatus, OperatingStatus: p.OperatingStatus}
				for _, m := range c.lb.members.all() {
					if m.PoolID == p.ID {
						pv.Members = append(pv.Members, pools.Member{ID: m.ID, Name: m.Name, Address: m.Address, ProtocolPort: m.ProtocolPort,
							ProvisioningStatus: m.ProvisioningStatus, OperatingStatus: m.OperatingStatus})
					}
				}
				for _, mon := range c.lb.monitors.all() {
					if len(mon.Pools) > 0 && mon.Pools[0].ID == p.ID {
						pv.Monitor = monitors.Monitor{ID: mon.ID, Name: mon.Name, Type: mon.Type, ProvisioningStatus: mon.ProvisioningStatus}
					}
				}
				lv.Pools = append(lv.Pools, pv)
			}
			tree.Listeners = append(tree.Listeners, lv)
		}
		return &loadbalancers.StatusTree{Loadbalancer: tree}, nil
	})
}

func (a *loadBalancerAPI) ListListeners(_ context.Context, opts listeners.ListOptsBuilder) ([]listeners.Listener, error) {
	return locked(a.c, "ListListeners", func(c *Cloud) ([]listeners.Listener, error) {
		return filter(c.lb.listeners.all(), opts, func(l *listeners.Listener) map[string]any {
			return map[string]any{"loadbalancer_id": lbOf(l.Loadbalancers)}
		})
	})
}

func (a *loadBalancerAPI) GetListener(_ context.Context, id string) (*listeners.Listener, error) {
	return locked(a.c, "GetListener", func(c *Cloud) (*listeners.Listener, error) {
		return c.lb.listeners.copyOf("Listener", id)
	})
}

func (a *loadBalancerAPI) CreateListener(_ context.Context, opts listeners.CreateOptsBuilder) (*listeners.Listener, error) {
	return locked(a.c, "CreateListener", func(c *Cloud) (*listeners.Listener, error) {
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		lbID := str(body, "loadbalancer_id")
		e, err := c.mutable(lbID)
		if err != nil {
			return nil, err
		}
		l := &listeners.Listener{}
		decodeInto(body, l)
		for _, other := range c.lb.listeners.all() {
			if lbOf(other.Loadbalancers) == lbID && other.ProtocolPort == l.ProtocolPort {
				return nil, httpError(http.StatusConflict, "Another Listener on this Load Balancer is already using protocol_port %d", l.ProtocolPort)
			}
		}
		if err := c.checkAllowedCIDRs(e, l.AllowedCIDRs); err != nil {
			return nil, err
		}
		l.ID, l.ProvisioningStatus, l.OperatingStatus, l.AdminStateUp = c.newID("listener"), statusPendingCreate, "OFFLINE", true
		l.Loadbalancers = []listeners.LoadBalancerID{{ID: lbID}}
		l.Tags = stringsOf(body["tags"])
		c.lb.listeners.add(l.ID, l)
		c.markPending(e, statusPendingUpdate, statusActive)
		return clone(l), nil
	})
}

func (a *loadBalancerAPI) UpdateListener(_ context.Context, id string, opts listeners.UpdateOptsBuilder) (*listeners.Listener, error) {
	return locked(a.c, "UpdateListener", func(c *Cloud) (*listeners.Listener, error) {
		l, ok := c.lb.listeners.get(id)
		if !ok {
			return nil, notFound("Listener", id)
		}
		e, err := c.mutable(lbOf(l.Loadbalancers))
		if err != nil {
			return nil, err
		}
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		if cidrs, set := body["allowed_cidrs"]; set {
			if err := c.checkAllowedCIDRs(e, stringsOf(cidrs)); err != nil {
				return nil, err
			}
			l.AllowedCIDRs = stringsOf(cidrs)
		}
		for _, key := range []string{"name", "description", "default_pool_id"} {
			if _, set := body[key]; set {
				decodeInto(map[string]any{key: body[key]}, l)
			}
		}
		if v, set := body["tags"]; set {
			l.Tags = stringsOf(v)
		}
		l.ProvisioningStatus = statusPendingUpdate
		delete(c.lb.stuck, l.ID)
		c.markPending(e, statusPendingUpdate, statusActive)
		return clone(l), nil
	})
}

func (a *loadBalancerAPI) DeleteListener(_ context.Context, id string) error {
	return lockedErr(a.c, "DeleteListener", func(c *Cloud) error {
		l, ok := c.lb.listeners.get(id)
		if !ok {
			return notFound("Listener", id)
		}
		e, err := c.mutable(lbOf(l.Loadbalancers))
		if err != nil {
			return err
		}
		for _, p := range c.lb.pools.all() {
			if len(p.Listeners) > 0 && p.Listeners[0].ID == id {
				p.Listeners = nil
			}
		}
		c.lb.listeners.remove(id)
		c.markPending(e, statusPendingUpdate, statusActive)
		return nil
	})
}

func (a *loadBalancerAPI) ListPools(_ context.Context, opts pools.ListOptsBuilder) ([]pools.Pool, error) {
	return locked(a.c, "ListPools", func(c *Cloud) ([]pools.Pool, error) {
		return filter(c.lb.pools.all(), opts, func(p *pools.Pool) map[string]any {
			extra := map[string]any{"loadbalancer_id": poolLB(p)}
			if len(p.Listeners) > 0 {
				extra["listener_id"] = p.Listeners[0].ID
			}
			return extra
		})
	})
}

func (a *loadBalancerAPI) GetPool(_ context.Context, id string) (*pools.Pool, error) {
	return locked(a.c, "GetPool", func(c *Cloud) (*pools.Pool, error) {
		return c.lb.pools.copyOf("Pool", id)
	})
}

func (a *loadBalancerAPI) CreatePool(_ context.Context, opts pools.CreateOptsBuilder) (*pools.Pool, error) {
	return locked(a.c, "CreatePool", func(c *Cloud) (*pools.Pool, error) {
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		lbID, listenerID := str(body, "loadbalancer_id"), str(body, "listener_id")
		if listenerID != "" {
			l, ok := c.lb.listeners.get(listenerID)
			if !ok {
				return nil, notFound("Listener", listenerID)
			}
			lbID = lbOf(l.Loadbalancers)
		}
		e, err := c.mutable(lbID)
		if err != nil {
			return nil, err
		}
		if err := c.checkAlgorithm(e, body["lb_algorithm"]); err != nil {
			return nil, err
		}
		p := &pools.Pool{}
		decodeInto(map[string]any{"name": body["name"], "protocol": body["protocol"], "lb_algorithm": body["lb_algorithm"], "description": body["description"]}, p)
		p.ID, p.ProvisioningStatus, p.OperatingStatus, p.AdminStateUp = c.newID("pool"), statusPendingCreate, "OFFLINE", true
		p.Loadbalancers = []pools.LoadBalancerID{{ID: lbID}}
		p.Tags = stringsOf(body["tags"])
		if listenerID != "" {
			p.Listeners = []pools.ListenerID{{ID: listenerID}}
			if l, _ := c.lb.listeners.get(listenerID); l.DefaultPoolID == "" {
				l.DefaultPoolID = p.ID
			}
		}
		c.lb.pools.add(p.ID, p)
		c.markPending(e, statusPendingUpdate, statusActive)
		return clone(p), nil
	})
}

func (a *loadBalancerAPI) UpdatePool(_ context.Context, id string, opts pools.UpdateOptsBuilder) (*pools.Pool, error) {
	return locked(a.c, "UpdatePool", func(c *Cloud) (*pools.Pool, error) {
		p, ok := c.lb.pools.get(id)
		if !ok {
			return nil, notFound("Pool", id)
		}
		e, err := c.mutable(poolLB(p))
		if err != nil {
			return nil, err
		}
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		if v, set := body["name"]; set {
			p.Name = str(map[string]any{"v": v}, "v")
		}
		p.ProvisioningStatus = statusPendingUpdate
		delete(c.lb.stuck, p.ID)
		c.markPending(e, statusPendingUpdate, statusActive)
		return clone(p), nil
	})
}

func (a *loadBalancerAPI) DeletePool(_ context.Context, id string) error {
	return lockedErr(a.c, "DeletePool", func(c *Cloud) error {
		p, ok := c.lb.pools.get(id)
		if !ok {
			return notFound("Pool", id)
		}
		e, err := c.mutable(poolLB(p))
		if err != nil {
			return err
		}
		for _, l := range c.lb.listeners.all() {
			if l.DefaultPoolID == id {
				l.DefaultPoolID = ""
			}
		}
		c.removePool(id)
		c.markPending(e, statusPendingUpdate, statusActive)
		return nil
	})
}

func (a *loadBalancerAPI) ListMembers(_ context.Context, poolID string, opts pools.ListMembersOptsBuilder) ([]pools.Member, error) {
	return locked(a.c, "ListMembers", func(c *Cloud) ([]pools.Member, error) {
		if _, ok := c.lb.pools.get(poolID); !ok {
			return nil, notFound("Pool", poolID)
		}
		var inPool []*pools.Member
		for _, m := range c.lb.members.all() {
			if m.PoolID == poolID {
				inPool = append(inPool, m)
			}
		}
		return filter(inPool, opts, nil)
	})
}

func (a *loadBalancerAPI) CreateMember(_ context.Context, poolID string, opts pools.CreateMemberOptsBuilder) (*pools.Member, error) {
	return locked(a.c, "CreateMember", func(c *Cloud) (*pools.Member, error) {
		p, ok := c.lb.pools.get(poolID)
		if !ok {
			return nil, notFound("Pool", poolID)
		}
		e, err := c.mutable(poolLB(p))
		if err != nil {
			return nil, err
		}
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		m := &pools.Member{}
		decodeInto(body, m)
		for _, other := range c.lb.members.all() {
			if other.PoolID == poolID && other.Address == m.Address && other.ProtocolPort == m.ProtocolPort {
				return nil, httpError(http.StatusConflict, "Duplicate member %s:%d in pool %s", m.Address, m.ProtocolPort, poolID)
			}
		}
		m.ID, m.PoolID, m.ProvisioningStatus, m.OperatingStatus, m.AdminStateUp = c.newID("member"), poolID, statusPendingCreate, "NO_MONITOR", true
		if up, ok := body["admin_state_up"].(bool); ok && !up {
			m.AdminStateUp, m.OperatingStatus = false, "OFFLINE"
		}
		m.Tags = stringsOf(body["tags"])
		c.lb.members.add(m.ID, m)
		c.markPending(e, statusPendingUpdate, statusActive)
		return clone(m), nil
	})
}

// UpdateMember changes a member's admin_state_up (the one attribute the controller updates). A
// disabled member is OFFLINE, as Octavia's health manager reports a member in maintenance; one
// enabled again is NO_MONITOR until a test reports its health (SetOperatingStatus).
func (a *loadBalancerAPI) UpdateMember(_ context.Context, poolID, memberID string, opts pools.UpdateMemberOptsBuilder) error {
	return lockedErr(a.c, "UpdateMember", func(c *Cloud) error {
		m, e, err := c.mutableMember(poolID, memberID)
		if err != nil {
			return err
		}
		body, err := requestBody(opts)
		if err != nil {
			return err
		}
		if up, ok := body["admin_state_up"].(bool); ok && up != m.AdminStateUp {
			m.AdminStateUp, m.OperatingStatus = up, "OFFLINE"
			if up {
				m.OperatingStatus = "NO_MONITOR"
			}
		}
		c.markPending(e, statusPendingUpdate, statusActive)
		return nil
	})
}

func (a *loadBalancerAPI) DeleteMember(_ context.Context, poolID, memberID string) error {
	return lockedErr(a.c, "DeleteMember", func(c *Cloud) error {
		_, e, err := c.mutableMember(poolID, memberID)
		if err != nil {
			return err
		}
		c.lb.members.remove(memberID)
		c.markPending(e, statusPendingUpdate, statusActive)
		return nil
	})
}

// mutableMember is member memberID of pool poolID with its load balancer, which must accept a
// change (409 while it is PENDING_*).
func (c *Cloud) mutableMember(poolID, memberID string) (*pools.Member, *lbEntry, error) {
	m, ok := c.lb.members.get(memberID)
	if !ok || m.PoolID != poolID {
		return nil, nil, notFound("Member", memberID)
	}
	p, _ := c.lb.pools.get(poolID)
	e, err := c.mutable(poolLB(p))
	if err != nil {
		return nil, nil, err
	}
	return m, e, nil
}

func (a *loadBalancerAPI) ListMonitors(_ context.Context, opts monitors.ListOptsBuilder) ([]monitors.Monitor, error) {
	return locked(a.c, "ListMonitors", func(c *Cloud) ([]monitors.Monitor, error) {
		return filter(c.lb.monitors.all(), opts, func(m *monitors.Monitor) map[string]any {
			if len(m.Pools) == 0 {
				return nil
			}
			return map[string]any{"pool_id": m.Pools[0].ID}
		})
	})
}

func (a *loadBalancerAPI) CreateMonitor(_ context.Context, opts monitors.CreateOptsBuilder) (*monitors.Monitor, error) {
	return locked(a.c, "CreateMonitor", func(c *Cloud) (*monitors.Monitor, error) {
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		poolID := str(body, "pool_id")
		p, ok := c.lb.pools.get(poolID)
		if !ok {
			return nil, notFound("Pool", poolID)
		}
		e, err := c.mutable(poolLB(p))
		if err != nil {
			return nil, err
		}
		if p.MonitorID != "" {
			return nil, httpError(http.StatusConflict, "Pool %s already has a health monitor", poolID)
		}
		m := &monitors.Monitor{}
		decodeInto(body, m)
		m.ID, m.ProvisioningStatus, m.OperatingStatus, m.AdminStateUp = c.newID("monitor"), statusPendingCreate, "OFFLINE", true
		m.Pools = []monitors.PoolID{{ID: poolID}}
		m.Tags = stringsOf(body["tags"])
		p.MonitorID = m.ID
		c.lb.monitors.add(m.ID, m)
		c.markPending(e, statusPendingUpdate, statusActive)
		return clone(m), nil
	})
}

func (a *loadBalancerAPI) UpdateMonitor(_ context.Context, id string, opts monitors.UpdateOptsBuilder) (*monitors.Monitor, error) {
	return locked(a.c, "UpdateMonitor", func(c *Cloud) (*monitors.Monitor, error) {
		m, ok := c.lb.monitors.get(id)
		if !ok {
			return nil, notFound("Health Monitor", id)
		}
		p, _ := c.lb.pools.get(m.Pools[0].ID)
		e, err := c.mutable(poolLB(p))
		if err != nil {
			return nil, err
		}
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		// Monitor's own JSON decoding replaces the whole struct: decode aside, copy what is set.
		var upd monitors.Monitor
		decodeInto(body, &upd)
		for key, field := range map[string]func(){
			"name": func() { m.Name = upd.Name }, "delay": func() { m.Delay = upd.Delay }, "timeout": func() { m.Timeout = upd.Timeout },
			"max_retries": func() { m.MaxRetries = upd.MaxRetries }, "max_retries_down": func() { m.MaxRetriesDown = upd.MaxRetriesDown },
			"url_path": func() { m.URLPath = upd.URLPath }, "expected_codes": func() { m.ExpectedCodes = upd.ExpectedCodes },
			"http_method": func() { m.HTTPMethod = upd.HTTPMethod },
		} {
			if _, set := body[key]; set {
				field()
			}
		}
		m.ProvisioningStatus = statusPendingUpdate
		delete(c.lb.stuck, m.ID)
		c.markPending(e, statusPendingUpdate, statusActive)
		return clone(m), nil
	})
}

func (a *loadBalancerAPI) DeleteMonitor(_ context.Context, id string) error {
	return lockedErr(a.c, "DeleteMonitor", func(c *Cloud) error {
		m, ok := c.lb.monitors.get(id)
		if !ok {
			return notFound("Health Monitor", id)
		}
		p, _ := c.lb.pools.get(m.Pools[0].ID)
		e, err := c.mutable(poolLB(p))
		if err != nil {
			return err
		}
		p.MonitorID = ""
		c.lb.monitors.remove(id)
		c.markPending(e, statusPendingUpdate, statusActive)
		return nil
	})
}

func (a *loadBalancerAPI) ListProviders(context.Context) ([]providers.Provider, error) {
	return locked(a.c, "ListProviders", func(c *Cloud) ([]providers.Provider, error) {
		return slices.Clone(c.lb.providers), nil
	})
}

func (a *loadBalancerAPI) ListAvailabilityZoneCapabilities(_ context.Context, provider string) ([]providers.Capability, error) {
	return locked(a.c, "ListAvailabilityZoneCapabilities", func(c *Cloud) ([]providers.Capability, error) {
		caps, ok := c.lb.capabilities[provider]
		if !ok {
			return nil, httpError(http.StatusBadRequest, "Provider '%s' is not enabled.", provider)
		}
		return slices.Clone(caps), nil
	})
}

func (a *loadBalancerAPI) ListFlavors(context.Context) ([]flavors.Flavor, error) {
	return locked(a.c, "ListLoadBalancerFlavors", func(c *Cloud) ([]flavors.Flavor, error) {
		return slices.Clone(c.lb.flavors), nil
	})
}

func (a *loadBalancerAPI) ListAvailabilityZones(context.Context) ([]clients.LoadBalancerAvailabilityZone, error) {
	return locked(a.c, "ListLoadBalancerAvailabilityZones", func(c *Cloud) ([]clients.LoadBalancerAvailabilityZone, error) {
		return slices.Clone(c.lb.azs), nil
	})
}

func (a *loadBalancerAPI) ListAPIVersions(context.Context) ([]apiversions.APIVersion, error) {
	return locked(a.c, "ListAPIVersions", func(c *Cloud) ([]apiversions.APIVersion, error) {
		return slices.Clone(c.lb.versions), nil
	})
}

// versionAtLeast reports whether the newest API version the cloud reports is at least
// major.minor (allowed CIDRs need 2.12).
func (c *Cloud) versionAtLeast(major, minor int) bool {
	for _, v := range c.lb.versions {
		var vmaj, vmin int
		if _, err := fmtSscanf(v.ID, &vmaj, &vmin); err == nil && (vmaj > major || (vmaj == major && vmin >= minor)) {
			return true
		}
	}
	return false
}
