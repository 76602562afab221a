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

// Resource is one object of the cloud as an inventory lists it.
type Resource struct {
	// Kind is Network, Subnet, Port, Router, SecurityGroup, FloatingIP, LoadBalancer, Listener,
	// Pool, Member, Monitor, Server, Volume or Trunk.
	Kind string
	ID   string
	Name string
	// Purpose is what tells two objects made for the same thing apart from two made for
	// different things: the name, but for a floating IP its description (what it was allocated
	// for), for a member its pool and address, for a volume its name and description (two
	// owners' volumes may share a name), and for a trunk its parent port.
	Purpose string
	// Owner is the load balancer of a listener or pool, the pool of a member, the server a
	// volume is attached to, or a trunk's parent port.
	Owner string
}

// String is "kind id name", how tests tell objects apart when they compare inventories.
func (r Resource) String() string { return r.Kind + " " + r.ID + " " + r.Name }

// Inventory lists every object of the cloud, in creation order, without counting calls or
// applying faults: for tests that check invariants while faults are injected.
func (c *Cloud) Inventory() []Resource {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Resource
	add := func(kind, id, name, purpose, owner string) {
		out = append(out, Resource{Kind: kind, ID: id, Name: name, Purpose: purpose, Owner: owner})
	}
	for _, n := range c.net.networks.all() {
		add("Network", n.ID, n.Name, n.Name, "")
	}
	for _, s := range c.net.subnets.all() {
		add("Subnet", s.ID, s.Name, s.Name, s.NetworkID)
	}
	for _, p := range c.net.ports.all() {
		add("Port", p.ID, p.Name, p.Name, p.DeviceID)
	}
	for _, r := range c.net.routers.all() {
		add("Router", r.ID, r.Name, r.Name, "")
	}
	for _, g := range c.net.groups.all() {
		add("SecurityGroup", g.ID, g.Name, g.Name, "")
	}
	for _, t := range c.net.trunks.all() {
		add("Trunk", t.ID, t.Name, t.PortID, t.PortID)
	}
	for _, f := range c.net.fips.all() {
		add("FloatingIP", f.ID, f.FloatingIP, f.Description, f.PortID)
	}
	for _, e := range c.lb.lbs.all() {
		add("LoadBalancer", e.lb.ID, e.lb.Name, e.lb.Name, "")
	}
	for _, l := range c.lb.listeners.all() {
		add("Listener", l.ID, l.Name, l.Name, lbOf(l.Loadbalancers))
	}
	for _, p := range c.lb.pools.all() {
		add("Pool", p.ID, p.Name, p.Name, poolLB(p))
	}
	for _, m := range c.lb.members.all() {
		add("Member", m.ID, m.Name, m.PoolID+"/"+m.Address, m.PoolID)
	}
	for _, m := range c.lb.monitors.all() {
		owner := ""
		if len(m.Pools) > 0 {
			owner = m.Pools[0].ID
		}
		add("Monitor", m.ID, m.Name, m.Name, owner)
	}
	for _, s := range c.compute.servers.all() {
		add("Server", s.server.ID, s.server.Name, s.server.Name, "")
	}
	for _, v := range c.vol.volumes.all() {
		server := ""
		if len(v.volume.Attachments) > 0 {
			server = v.volume.Attachments[0].ServerID
		}
		add("Volume", v.volume.ID, v.volume.Name, v.volume.Name+" "+v.volume.Description, server)
	}
	return out
}
