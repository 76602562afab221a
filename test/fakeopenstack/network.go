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
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"slices"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/attributestags"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/trunks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
)

type networkState struct {
	networks store[networks.Network]
	external map[string]bool // network ID -> router:external
	subnets  store[subnets.Subnet]
	usedIPs  map[string]map[netip.Addr]bool // subnet ID -> allocated addresses
	ports    store[ports.Port]
	routers  store[routers.Router]
	groups   store[groups.SecGroup]
	rules    store[rules.SecGroupRule]
	fips     store[floatingips.FloatingIP]
	trunks   store[trunks.Trunk]
	azs      []clients.NetworkAvailabilityZone
	exts     []extensions.Extension
	// requests are the bodies each port was created with: what gophercloud's Port does not
	// hold (binding:*, a value spec) is checked there.
	requests map[string]map[string]any
}

func (s *networkState) init() {
	s.networks, s.subnets, s.ports = newStore[networks.Network](), newStore[subnets.Subnet](), newStore[ports.Port]()
	s.routers, s.groups, s.rules, s.fips = newStore[routers.Router](), newStore[groups.SecGroup](), newStore[rules.SecGroupRule](), newStore[floatingips.FloatingIP]()
	s.external, s.trunks = map[string]bool{}, newStore[trunks.Trunk]()
	s.usedIPs, s.requests = map[string]map[netip.Addr]bool{}, map[string]map[string]any{}
	for _, alias := range []string{"router", "external-net", "security-group", "standard-attr-tag", "availability_zone", "port-security", "allowed-address-pairs", "trunk"} {
		s.exts = append(s.exts, extensions.Extension{})
		s.exts[len(s.exts)-1].Alias = alias
		s.exts[len(s.exts)-1].Name = alias
	}
}

// Seeding, for tests: these do not count as calls.

// AddNetwork creates a network as an operator would beforehand, and returns its ID.
func (c *Cloud) AddNetwork(name string, external bool, tags ...string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.createNetwork(map[string]any{"name": name, "tags": tags})
	c.net.external[n.ID] = external
	return n.ID
}

// AddSubnet creates a subnet on a network as an operator would beforehand, and returns its ID.
func (c *Cloud) AddSubnet(networkID, name, cidr string, tags ...string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, err := c.createSubnet(map[string]any{"network_id": networkID, "name": name, "cidr": cidr, "tags": tags})
	if err != nil {
		panic(err)
	}
	return s.ID
}

// AddNetworkOfProject creates a network and its subnet as a user of another project would, and
// shares them into this one (Neutron RBAC: any user may share what they own): they list here, with
// their own project. It returns the network's and the subnet's IDs.
func (c *Cloud) AddNetworkOfProject(project, name, description, cidr string) (string, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.createNetwork(map[string]any{"name": name, "description": description, "project_id": project, "tenant_id": project})
	sn, err := c.createSubnet(map[string]any{"network_id": n.ID, "name": name, "description": description, "cidr": cidr, "project_id": project, "tenant_id": project})
	if err != nil {
		panic(err)
	}
	return n.ID, sn.ID
}

// MoveFloatingIPToProject makes floating IP id another project's, as an administrator's
// credential sees one: it lists here with that project.
func (c *Cloud) MoveFloatingIPToProject(id, project string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.net.fips.get(id)
	if !ok {
		panic("no floating IP " + id)
	}
	f.ProjectID, f.TenantID = project, project
}

func (c *Cloud) createNetwork(body map[string]any) *networks.Network {
	n := &networks.Network{}
	decodeInto(body, n)
	n.ID, n.Status, n.AdminStateUp = c.newID("network"), "ACTIVE", true
	n.Subnets, n.Tags = nil, stringsOf(body["tags"])
	c.net.networks.add(n.ID, n)
	return n
}

func (c *Cloud) createSubnet(body map[string]any) (*subnets.Subnet, error) {
	networkID := str(body, "network_id")
	n, ok := c.net.networks.get(networkID)
	if !ok {
		return nil, notFound("Network", networkID)
	}
	prefix, err := netip.ParsePrefix(str(body, "cidr"))
	if err != nil {
		return nil, httpError(http.StatusBadRequest, "Invalid input for cidr: %v", err)
	}
	s := &subnets.Subnet{}
	decodeInto(body, s)
	s.ID, s.Tags = c.newID("subnet"), stringsOf(body["tags"])
	s.CIDR = prefix.Masked().String()
	if s.IPVersion == 0 {
		s.IPVersion = 4
		if prefix.Addr().Is6() {
			s.IPVersion = 6
		}
	}
	if s.GatewayIP == "" {
		s.GatewayIP = prefix.Masked().Addr().Next().String()
	}
	c.net.subnets.add(s.ID, s)
	c.net.usedIPs[s.ID] = map[netip.Addr]bool{netip.MustParseAddr(s.GatewayIP): true}
	n.Subnets = append(slices.Clone(n.Subnets), s.ID)
	return s, nil
}

// allocateIP hands out the requested address, or the next free one of the subnet.
func (c *Cloud) allocateIP(subnetID, want string) (string, error) {
	s, ok := c.net.subnets.get(subnetID)
	if !ok {
		return "", notFound("Subnet", subnetID)
	}
	used := c.net.usedIPs[subnetID]
	prefix := netip.MustParsePrefix(s.CIDR)
	if want != "" {
		addr, err := netip.ParseAddr(want)
		if err != nil || !prefix.Contains(addr) {
			return "", httpError(http.StatusBadRequest, "IP address %s is not a valid IP for the specified subnet", want)
		}
		if used[addr] {
			return "", httpError(http.StatusConflict, "IP address %s already allocated in subnet %s", want, subnetID)
		}
		used[addr] = true
		return want, nil
	}
	for addr := prefix.Masked().Addr().Next(); prefix.Contains(addr); addr = addr.Next() {
		if addr.As16()[15] == 255 && addr.Is4() {
			continue // leave the IPv4 broadcast address alone
		}
		if !used[addr] {
			used[addr] = true
			return addr.String(), nil
		}
	}
	return "", httpError(http.StatusConflict, "No more IP addresses available on network for subnet %s", subnetID)
}

func (c *Cloud) releaseIPs(fixed []ports.IP) {
	for _, ip := range fixed {
		if addr, err := netip.ParseAddr(ip.IPAddress); err == nil {
			delete(c.net.usedIPs[ip.SubnetID], addr)
		}
	}
}

// createPort allocates the port's addresses: the requested fixed IPs, or one on the network's
// first subnet.
func (c *Cloud) createPort(body map[string]any) (*ports.Port, error) {
	networkID := str(body, "network_id")
	n, ok := c.net.networks.get(networkID)
	if !ok {
		return nil, notFound("Network", networkID)
	}
	var fixed []ports.IP
	if v, set := body["fixed_ips"]; set && v == nil {
		return nil, httpError(http.StatusBadRequest, "Invalid input for fixed_ips. Reason: Invalid data format for fixed IP: 'None'.")
	}
	requested := asSlice(body["fixed_ips"])
	if len(requested) == 0 && len(n.Subnets) > 0 {
		requested = []any{map[string]any{"subnet_id": n.Subnets[0]}}
	}
	for _, r := range requested {
		m, _ := r.(map[string]any)
		subnetID := str(m, "subnet_id")
		if subnetID == "" {
			subnetID = c.subnetFor(n, str(m, "ip_address"))
		}
		if s, ok := c.net.subnets.get(subnetID); !ok || s.NetworkID != networkID {
			c.releaseIPs(fixed)
			return nil, httpError(http.StatusBadRequest, "Invalid input for fixed_ips: subnet %s is not on network %s", subnetID, networkID)
		}
		ip, err := c.allocateIP(subnetID, str(m, "ip_address"))
		if err != nil {
			c.releaseIPs(fixed)
			return nil, err
		}
		fixed = append(fixed, ports.IP{SubnetID: subnetID, IPAddress: ip})
	}
	p := &ports.Port{}
	decodeInto(body, p)
	p.ID, p.Status, p.FixedIPs = c.newID("port"), "ACTIVE", fixed
	if up, set := body["admin_state_up"].(bool); set {
		p.AdminStateUp = up
	} else {
		p.AdminStateUp = true
	}
	p.Tags = stringsOf(body["tags"])
	if p.MACAddress == "" {
		p.MACAddress = fmt.Sprintf("fa:16:3e:00:%02x:%02x", c.ids/256%256, c.ids%256)
	}
	c.net.requests[p.ID] = maps.Clone(body)
	c.net.ports.add(p.ID, p)
	return p, nil
}

// PortRequest is the body port id was created with; nil for a port the cloud made itself.
func (c *Cloud) PortRequest(id string) map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.net.requests[id])
}

func (c *Cloud) subnetFor(n *networks.Network, ip string) string {
	addr, err := netip.ParseAddr(ip)
	for _, id := range n.Subnets {
		if s, ok := c.net.subnets.get(id); ok && err == nil && netip.MustParsePrefix(s.CIDR).Contains(addr) {
			return id
		}
	}
	return ""
}

func (c *Cloud) deletePort(id string) {
	if p, ok := c.net.ports.get(id); ok {
		c.releaseIPs(p.FixedIPs)
		c.net.ports.remove(id)
		for _, f := range c.net.fips.all() {
			if f.PortID == id {
				f.PortID, f.FixedIP, f.Status = "", "", "DOWN"
			}
		}
	}
}

func stringsOf(v any) []string {
	switch t := v.(type) {
	case []string:
		return slices.Clone(t)
	case []any:
		return toStrings(t)
	}
	return nil
}

type networkAPI struct{ c *Cloud }

func (a *networkAPI) ListNetworks(_ context.Context, opts networks.ListOptsBuilder) ([]networks.Network, error) {
	return locked(a.c, "ListNetworks", func(c *Cloud) ([]networks.Network, error) {
		return filter(c.net.networks.all(), opts, func(n *networks.Network) map[string]any {
			return map[string]any{"router:external": c.net.external[n.ID]}
		})
	})
}

func (a *networkAPI) GetNetwork(_ context.Context, id string) (*networks.Network, error) {
	return locked(a.c, "GetNetwork", func(c *Cloud) (*networks.Network, error) {
		return c.net.networks.copyOf("Network", id)
	})
}

func (a *networkAPI) CreateNetwork(_ context.Context, opts networks.CreateOptsBuilder) (*networks.Network, error) {
	return locked(a.c, "CreateNetwork", func(c *Cloud) (*networks.Network, error) {
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		n := c.createNetwork(body)
		c.net.external[n.ID] = body["router:external"] == true
		return clone(n), nil
	})
}

func (a *networkAPI) DeleteNetwork(_ context.Context, id string) error {
	return lockedErr(a.c, "DeleteNetwork", func(c *Cloud) error {
		n, ok := c.net.networks.get(id)
		if !ok {
			return notFound("Network", id)
		}
		for _, p := range c.net.ports.all() {
			if p.NetworkID == id {
				return httpError(http.StatusConflict, "Unable to complete operation on network %s. There are one or more ports still in use on the network.", id)
			}
		}
		for _, s := range n.Subnets {
			c.net.subnets.remove(s)
			delete(c.net.usedIPs, s)
		}
		c.net.networks.remove(id)
		delete(c.net.external, id)
		return nil
	})
}

func (a *networkAPI) ListSubnets(_ context.Context, opts subnets.ListOptsBuilder) ([]subnets.Subnet, error) {
	return locked(a.c, "ListSubnets", func(c *Cloud) ([]subnets.Subnet, error) {
		return filter(c.net.subnets.all(), opts, nil)
	})
}

func (a *networkAPI) GetSubnet(_ context.Context, id string) (*subnets.Subnet, error) {
	return locked(a.c, "GetSubnet", func(c *Cloud) (*subnets.Subnet, error) {
		return c.net.subnets.copyOf("Subnet", id)
	})
}

func (a *networkAPI) CreateSubnet(_ context.Context, opts subnets.CreateOptsBuilder) (*subnets.Subnet, error) {
	return locked(a.c, "CreateSubnet", func(c *Cloud) (*subnets.Subnet, error) {
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		s, err := c.createSubnet(body)
		if err != nil {
			return nil, err
		}
		return clone(s), nil
	})
}

func (a *networkAPI) DeleteSubnet(_ context.Context, id string) error {
	return lockedErr(a.c, "DeleteSubnet", func(c *Cloud) error {
		s, ok := c.net.subnets.get(id)
		if !ok {
			return notFound("Subnet", id)
		}
		for _, p := range c.net.ports.all() {
			if slices.ContainsFunc(p.FixedIPs, func(ip ports.IP) bool { return ip.SubnetID == id }) {
				return httpError(http.StatusConflict, "Unable to complete operation on subnet %s: One or more ports have an IP allocation from this subnet.", id)
			}
		}
		if n, ok := c.net.networks.get(s.NetworkID); ok {
			n.Subnets = slices.DeleteFunc(slices.Clone(n.Subnets), func(x string) bool { return x == id })
		}
		c.net.subnets.remove(id)
		delete(c.net.usedIPs, id)
		return nil
	})
}

func (a *networkAPI) ListPorts(_ context.Context, opts ports.ListOptsBuilder) ([]ports.Port, error) {
	return locked(a.c, "ListPorts", func(c *Cloud) ([]ports.Port, error) {
		return filter(c.net.ports.all(), opts, nil)
	})
}

func (a *networkAPI) GetPort(_ context.Context, id string) (*ports.Port, error) {
	return locked(a.c, "GetPort", func(c *Cloud) (*ports.Port, error) {
		return c.net.ports.copyOf("Port", id)
	})
}

func (a *networkAPI) CreatePort(_ context.Context, opts ports.CreateOptsBuilder) (*ports.Port, error) {
	return locked(a.c, "CreatePort", func(c *Cloud) (*ports.Port, error) {
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		p, err := c.createPort(body)
		if err != nil {
			return nil, err
		}
		return clone(p), nil
	})
}

func (a *networkAPI) UpdatePort(_ context.Context, id string, opts ports.UpdateOptsBuilder) (*ports.Port, error) {
	return locked(a.c, "UpdatePort", func(c *Cloud) (*ports.Port, error) {
		p, ok := c.net.ports.get(id)
		if !ok {
			return nil, notFound("Port", id)
		}
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		// The port as JSON, the keys the update sets overlaid: a Port decodes as a whole (its
		// UnmarshalJSON replaces every field), so the update goes through the whole object.
		raw, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		whole := map[string]any{}
		if err := json.Unmarshal(raw, &whole); err != nil {
			return nil, err
		}
		for _, key := range []string{"name", "description", "device_id", "device_owner", "security_groups", "allowed_address_pairs", "admin_state_up"} {
			if _, set := body[key]; set {
				whole[key] = body[key]
			}
		}
		updated := &ports.Port{}
		decodeInto(whole, updated)
		*p = *updated
		return clone(p), nil
	})
}

func (a *networkAPI) DeletePort(_ context.Context, id string) error {
	return lockedErr(a.c, "DeletePort", func(c *Cloud) error {
		if _, ok := c.net.ports.get(id); !ok {
			return notFound("Port", id)
		}
		for _, t := range c.net.trunks.all() {
			if t.PortID == id {
				return httpError(http.StatusConflict, "Port %s is currently a parent port for trunk %s.", id, t.ID)
			}
		}
		c.deletePort(id)
		return nil
	})
}

func (a *networkAPI) ListTrunks(_ context.Context, opts trunks.ListOptsBuilder) ([]trunks.Trunk, error) {
	return locked(a.c, "ListTrunks", func(c *Cloud) ([]trunks.Trunk, error) {
		return filter(c.net.trunks.all(), opts, func(t *trunks.Trunk) map[string]any { return map[string]any{"port_id": t.PortID} })
	})
}

// CreateTrunk makes a trunk with its parent port, as Neutron does: the port must exist and be
// no other trunk's parent.
func (a *networkAPI) CreateTrunk(_ context.Context, opts trunks.CreateOptsBuilder) (*trunks.Trunk, error) {
	return locked(a.c, "CreateTrunk", func(c *Cloud) (*trunks.Trunk, error) {
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		portID := str(body, "port_id")
		if _, ok := c.net.ports.get(portID); !ok {
			return nil, notFound("Port", portID)
		}
		for _, t := range c.net.trunks.all() {
			if t.PortID == portID {
				return nil, httpError(http.StatusConflict, "Port %s is currently in use and is not eligible for use as a parent port.", portID)
			}
		}
		t := trunks.Trunk{ID: c.newID("trunk"), Name: str(body, "name"), Description: str(body, "description"), PortID: portID,
			Status: "ACTIVE", AdminStateUp: true, Subports: []trunks.Subport{}, ProjectID: "fake-project", TenantID: "fake-project"}
		c.net.trunks.add(t.ID, &t)
		v := t
		return &v, nil
	})
}

func (a *networkAPI) DeleteTrunk(_ context.Context, id string) error {
	return lockedErr(a.c, "DeleteTrunk", func(c *Cloud) error {
		if _, ok := c.net.trunks.get(id); !ok {
			return notFound("Trunk", id)
		}
		c.net.trunks.remove(id)
		return nil
	})
}

func (a *networkAPI) ListRouters(_ context.Context, opts routers.ListOptsBuilder) ([]routers.Router, error) {
	return locked(a.c, "ListRouters", func(c *Cloud) ([]routers.Router, error) {
		return filter(c.net.routers.all(), opts, nil)
	})
}

func (a *networkAPI) GetRouter(_ context.Context, id string) (*routers.Router, error) {
	return locked(a.c, "GetRouter", func(c *Cloud) (*routers.Router, error) {
		return c.net.routers.copyOf("Router", id)
	})
}

// setGateway gives a router its external gateway addresses on the external network.
func (c *Cloud) setGateway(r *routers.Router, gw map[string]any) error {
	networkID := str(gw, "network_id")
	n, ok := c.net.networks.get(networkID)
	if !ok || !c.net.external[networkID] {
		return httpError(http.StatusBadRequest, "Network %s is not a valid external network", networkID)
	}
	requested := asSlice(gw["external_fixed_ips"])
	if len(requested) == 0 && len(n.Subnets) > 0 {
		requested = []any{map[string]any{"subnet_id": n.Subnets[0]}}
	}
	info := routers.GatewayInfo{NetworkID: networkID}
	for _, r := range requested {
		m, _ := r.(map[string]any)
		ip, err := c.allocateIP(str(m, "subnet_id"), str(m, "ip_address"))
		if err != nil {
			return err
		}
		info.ExternalFixedIPs = append(info.ExternalFixedIPs, routers.ExternalFixedIP{SubnetID: str(m, "subnet_id"), IPAddress: ip})
	}
	r.GatewayInfo = info
	return nil
}

func (a *networkAPI) CreateRouter(_ context.Context, opts routers.CreateOptsBuilder) (*routers.Router, error) {
	return locked(a.c, "CreateRouter", func(c *Cloud) (*routers.Router, error) {
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		r := &routers.Router{}
		decodeInto(map[string]any{"name": body["name"], "description": body["description"]}, r)
		r.ID, r.Status, r.AdminStateUp, r.Tags = c.newID("router"), "ACTIVE", true, stringsOf(body["tags"])
		if gw, ok := body["external_gateway_info"].(map[string]any); ok {
			if err := c.setGateway(r, gw); err != nil {
				return nil, err
			}
		}
		c.net.routers.add(r.ID, r)
		return clone(r), nil
	})
}

func (a *networkAPI) UpdateRouter(_ context.Context, id string, opts routers.UpdateOptsBuilder) (*routers.Router, error) {
	return locked(a.c, "UpdateRouter", func(c *Cloud) (*routers.Router, error) {
		r, ok := c.net.routers.get(id)
		if !ok {
			return nil, notFound("Router", id)
		}
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		if name, ok := body["name"]; ok {
			r.Name = fmt.Sprint(name)
		}
		if gw, ok := body["external_gateway_info"].(map[string]any); ok {
			if err := c.setGateway(r, gw); err != nil {
				return nil, err
			}
		}
		return clone(r), nil
	})
}

func (a *networkAPI) DeleteRouter(_ context.Context, id string) error {
	return lockedErr(a.c, "DeleteRouter", func(c *Cloud) error {
		r, ok := c.net.routers.get(id)
		if !ok {
			return notFound("Router", id)
		}
		for _, p := range c.net.ports.all() {
			if p.DeviceID == id && p.DeviceOwner == "network:router_interface" {
				return httpError(http.StatusConflict, "Router %s still has ports", id)
			}
		}
		for _, ip := range r.GatewayInfo.ExternalFixedIPs {
			c.releaseIPs([]ports.IP{{SubnetID: ip.SubnetID, IPAddress: ip.IPAddress}})
		}
		c.net.routers.remove(id)
		return nil
	})
}

func (a *networkAPI) AddRouterInterface(_ context.Context, id string, opts routers.AddInterfaceOptsBuilder) (*routers.InterfaceInfo, error) {
	return locked(a.c, "AddRouterInterface", func(c *Cloud) (*routers.InterfaceInfo, error) {
		if _, ok := c.net.routers.get(id); !ok {
			return nil, notFound("Router", id)
		}
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		subnetID := str(body, "subnet_id")
		s, ok := c.net.subnets.get(subnetID)
		if !ok {
			return nil, notFound("Subnet", subnetID)
		}
		// The interface takes the subnet's gateway address, which the subnet already reserved.
		delete(c.net.usedIPs[subnetID], netip.MustParseAddr(s.GatewayIP))
		p, err := c.createPort(map[string]any{
			"network_id": s.NetworkID, "device_id": id, "device_owner": "network:router_interface",
			"fixed_ips": []any{map[string]any{"subnet_id": subnetID, "ip_address": s.GatewayIP}},
		})
		if err != nil {
			return nil, err
		}
		return &routers.InterfaceInfo{SubnetID: subnetID, PortID: p.ID, ID: id}, nil
	})
}

func (a *networkAPI) RemoveRouterInterface(_ context.Context, id string, opts routers.RemoveInterfaceOptsBuilder) (*routers.InterfaceInfo, error) {
	return locked(a.c, "RemoveRouterInterface", func(c *Cloud) (*routers.InterfaceInfo, error) {
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		subnetID := str(body, "subnet_id")
		for _, p := range c.net.ports.all() {
			if p.DeviceID == id && p.DeviceOwner == "network:router_interface" &&
				(subnetID == "" || slices.ContainsFunc(p.FixedIPs, func(ip ports.IP) bool { return ip.SubnetID == subnetID })) {
				// As Neutron: an interface a floating IP goes through (one on a port of its
				// subnets) stays (RouterInterfaceInUseByFloatingIP, 409).
				for _, fip := range c.net.fips.all() {
					fp, ok := c.net.ports.get(fip.PortID)
					if ok && fip.PortID != "" && slices.ContainsFunc(fp.FixedIPs, func(ip ports.IP) bool {
						return slices.ContainsFunc(p.FixedIPs, func(own ports.IP) bool { return own.SubnetID == ip.SubnetID })
					}) {
						return nil, httpError(http.StatusConflict, "Router interface for subnet %s on router %s cannot be deleted, as it is required by one or more floating IPs.", subnetID, id)
					}
				}
				c.deletePort(p.ID)
				if s, ok := c.net.subnets.get(subnetID); ok {
					c.net.usedIPs[subnetID][netip.MustParseAddr(s.GatewayIP)] = true
				}
				return &routers.InterfaceInfo{SubnetID: subnetID, PortID: p.ID, ID: id}, nil
			}
		}
		return nil, httpError(http.StatusNotFound, "Router %s has no interface on subnet %s", id, subnetID)
	})
}

func (a *networkAPI) ListSecGroups(_ context.Context, opts groups.ListOpts) ([]groups.SecGroup, error) {
	return locked(a.c, "ListSecGroups", func(c *Cloud) ([]groups.SecGroup, error) {
		return filter(c.net.groups.all(), opts, nil)
	})
}

func (a *networkAPI) GetSecGroup(_ context.Context, id string) (*groups.SecGroup, error) {
	return locked(a.c, "GetSecGroup", func(c *Cloud) (*groups.SecGroup, error) {
		if g, ok := c.net.groups.get(id); ok {
			out := clone(g)
			for _, r := range c.net.rules.all() {
				if r.SecGroupID == id {
					out.Rules = append(out.Rules, *r)
				}
			}
			return out, nil
		}
		return nil, notFound("Security group", id)
	})
}

func (a *networkAPI) CreateSecGroup(_ context.Context, opts groups.CreateOptsBuilder) (*groups.SecGroup, error) {
	return locked(a.c, "CreateSecGroup", func(c *Cloud) (*groups.SecGroup, error) {
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		g := &groups.SecGroup{}
		decodeInto(map[string]any{"name": body["name"], "description": body["description"]}, g)
		g.ID, g.Tags = c.newID("secgroup"), stringsOf(body["tags"])
		c.net.groups.add(g.ID, g)
		return clone(g), nil
	})
}

func (a *networkAPI) DeleteSecGroup(_ context.Context, id string) error {
	return lockedErr(a.c, "DeleteSecGroup", func(c *Cloud) error {
		if _, ok := c.net.groups.get(id); !ok {
			return notFound("Security group", id)
		}
		for _, p := range c.net.ports.all() {
			if slices.Contains(p.SecurityGroups, id) {
				return httpError(http.StatusConflict, "Security Group %s in use.", id)
			}
		}
		for _, r := range c.net.rules.all() {
			if r.SecGroupID == id {
				c.net.rules.remove(r.ID)
			}
		}
		c.net.groups.remove(id)
		return nil
	})
}

func (a *networkAPI) ListSecGroupRules(_ context.Context, opts rules.ListOpts) ([]rules.SecGroupRule, error) {
	return locked(a.c, "ListSecGroupRules", func(c *Cloud) ([]rules.SecGroupRule, error) {
		return filter(c.net.rules.all(), opts, nil)
	})
}

// CreateSecGroupRules creates every rule or, as Neutron's bulk create, none.
func (a *networkAPI) CreateSecGroupRules(_ context.Context, opts []rules.CreateOpts) ([]rules.SecGroupRule, error) {
	return locked(a.c, "CreateSecGroupRules", func(c *Cloud) ([]rules.SecGroupRule, error) {
		made := make([]*rules.SecGroupRule, len(opts))
		for i := range opts {
			r, err := c.secGroupRule(opts[i])
			if err != nil {
				return nil, err
			}
			made[i] = r
		}
		out := make([]rules.SecGroupRule, len(made))
		for i, r := range made {
			r.ID = c.newID("rule")
			c.net.rules.add(r.ID, r)
			out[i] = *clone(r)
		}
		return out, nil
	})
}

// secGroupRule checks a rule request and builds the rule, without storing it.
func (c *Cloud) secGroupRule(opts rules.CreateOpts) (*rules.SecGroupRule, error) {
	body, err := requestBody(opts)
	if err != nil {
		return nil, err
	}
	if _, ok := c.net.groups.get(str(body, "security_group_id")); !ok {
		return nil, notFound("Security group", str(body, "security_group_id"))
	}
	r := &rules.SecGroupRule{}
	decodeInto(body, r)
	return r, nil
}

func (a *networkAPI) DeleteSecGroupRule(_ context.Context, id string) error {
	return lockedErr(a.c, "DeleteSecGroupRule", func(c *Cloud) error {
		if _, ok := c.net.rules.get(id); !ok {
			return notFound("Security group rule", id)
		}
		c.net.rules.remove(id)
		return nil
	})
}

func (a *networkAPI) ListFloatingIPs(_ context.Context, opts floatingips.ListOptsBuilder) ([]floatingips.FloatingIP, error) {
	return locked(a.c, "ListFloatingIPs", func(c *Cloud) ([]floatingips.FloatingIP, error) {
		return filter(c.net.fips.all(), opts, nil)
	})
}

func (a *networkAPI) GetFloatingIP(_ context.Context, id string) (*floatingips.FloatingIP, error) {
	return locked(a.c, "GetFloatingIP", func(c *Cloud) (*floatingips.FloatingIP, error) {
		return c.net.fips.copyOf("Floating IP", id)
	})
}

// associate points a floating IP at a port (or detaches it when portID is empty).
func (c *Cloud) associate(f *floatingips.FloatingIP, portID, fixedIP string) error {
	if portID == "" {
		f.PortID, f.FixedIP, f.Status = "", "", "DOWN"
		return nil
	}
	p, ok := c.net.ports.get(portID)
	if !ok {
		return notFound("Port", portID)
	}
	if fixedIP == "" && len(p.FixedIPs) > 0 {
		fixedIP = p.FixedIPs[0].IPAddress
	}
	if !c.routedToExternal(p, f.FloatingNetworkID) {
		// Neutron's answer when no router joins the port's subnet to the external network.
		return httpError(http.StatusNotFound, "ExternalGatewayForFloatingIPNotFound: External network %s is not reachable from the subnet of port %s. Therefore, cannot associate Port %s with a Floating IP.",
			f.FloatingNetworkID, portID, portID)
	}
	for _, other := range c.net.fips.all() {
		if other.ID != f.ID && other.PortID == portID && other.FixedIP == fixedIP {
			return httpError(http.StatusConflict, "Cannot associate floating IP %s with port %s using fixed IP %s, as that fixed IP already has a floating IP on external network %s.",
				f.FloatingIP, portID, fixedIP, other.FloatingNetworkID)
		}
	}
	f.PortID, f.FixedIP, f.Status = portID, fixedIP, "ACTIVE"
	return nil
}

// routedToExternal reports whether a router with a gateway on the external network has an
// interface on one of the port's subnets.
func (c *Cloud) routedToExternal(p *ports.Port, externalNetworkID string) bool {
	for _, r := range c.net.routers.all() {
		if r.GatewayInfo.NetworkID != externalNetworkID {
			continue
		}
		for _, iface := range c.net.ports.all() {
			if iface.DeviceID != r.ID || iface.DeviceOwner != "network:router_interface" {
				continue
			}
			for _, ip := range iface.FixedIPs {
				if slices.ContainsFunc(p.FixedIPs, func(x ports.IP) bool { return x.SubnetID == ip.SubnetID }) {
					return true
				}
			}
		}
	}
	return false
}

func (a *networkAPI) CreateFloatingIP(_ context.Context, opts floatingips.CreateOptsBuilder) (*floatingips.FloatingIP, error) {
	return locked(a.c, "CreateFloatingIP", func(c *Cloud) (*floatingips.FloatingIP, error) {
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		networkID := str(body, "floating_network_id")
		n, ok := c.net.networks.get(networkID)
		if !ok || !c.net.external[networkID] || len(n.Subnets) == 0 {
			return nil, httpError(http.StatusBadRequest, "Network %s is not a valid external network", networkID)
		}
		subnetID := str(body, "subnet_id")
		if subnetID == "" {
			subnetID = n.Subnets[0]
		}
		ip, err := c.allocateIP(subnetID, str(body, "floating_ip_address"))
		if err != nil {
			return nil, err
		}
		f := &floatingips.FloatingIP{ID: c.newID("fip"), FloatingNetworkID: networkID, FloatingIP: ip, Status: "DOWN",
			Description: str(body, "description"), Tags: stringsOf(body["tags"]), ProjectID: "fake-project", TenantID: "fake-project"}
		if err := c.associate(f, str(body, "port_id"), str(body, "fixed_ip_address")); err != nil {
			c.releaseIPs([]ports.IP{{SubnetID: subnetID, IPAddress: ip}})
			return nil, err
		}
		c.net.fips.add(f.ID, f)
		return clone(f), nil
	})
}

func (a *networkAPI) UpdateFloatingIP(_ context.Context, id string, opts floatingips.UpdateOptsBuilder) (*floatingips.FloatingIP, error) {
	return locked(a.c, "UpdateFloatingIP", func(c *Cloud) (*floatingips.FloatingIP, error) {
		f, ok := c.net.fips.get(id)
		if !ok {
			return nil, notFound("Floating IP", id)
		}
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		if _, set := body["port_id"]; set {
			if err := c.associate(f, str(body, "port_id"), str(body, "fixed_ip_address")); err != nil {
				return nil, err
			}
		}
		if d, set := body["description"]; set {
			f.Description = fmt.Sprint(d)
		}
		return clone(f), nil
	})
}

func (a *networkAPI) DeleteFloatingIP(_ context.Context, id string) error {
	return lockedErr(a.c, "DeleteFloatingIP", func(c *Cloud) error {
		f, ok := c.net.fips.get(id)
		if !ok {
			return notFound("Floating IP", id)
		}
		if n, ok := c.net.networks.get(f.FloatingNetworkID); ok {
			if subnetID := c.subnetFor(n, f.FloatingIP); subnetID != "" {
				c.releaseIPs([]ports.IP{{SubnetID: subnetID, IPAddress: f.FloatingIP}})
			}
		}
		c.net.fips.remove(id)
		return nil
	})
}

func (a *networkAPI) ReplaceAllTags(_ context.Context, resourceType, id string, opts attributestags.ReplaceAllOptsBuilder) ([]string, error) {
	return locked(a.c, "ReplaceAllTags", func(c *Cloud) ([]string, error) {
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		tags := stringsOf(body["tags"])
		set := func(found bool, target *[]string) ([]string, error) {
			if !found {
				return nil, notFound(resourceType, id)
			}
			*target = slices.Clone(tags)
			return slices.Clone(tags), nil
		}
		switch resourceType {
		case "networks":
			n, ok := c.net.networks.get(id)
			if !ok {
				return set(false, nil)
			}
			return set(true, &n.Tags)
		case "subnets":
			s, ok := c.net.subnets.get(id)
			if !ok {
				return set(false, nil)
			}
			return set(true, &s.Tags)
		case "ports":
			p, ok := c.net.ports.get(id)
			if !ok {
				return set(false, nil)
			}
			return set(true, &p.Tags)
		case "routers":
			r, ok := c.net.routers.get(id)
			if !ok {
				return set(false, nil)
			}
			return set(true, &r.Tags)
		case "security-groups":
			g, ok := c.net.groups.get(id)
			if !ok {
				return set(false, nil)
			}
			return set(true, &g.Tags)
		case "floatingips":
			f, ok := c.net.fips.get(id)
			if !ok {
				return set(false, nil)
			}
			return set(true, &f.Tags)
		}
		return nil, httpError(http.StatusNotFound, "resource type %s does not support tags", resourceType)
	})
}

func (a *networkAPI) ListAvailabilityZones(context.Context) ([]clients.NetworkAvailabilityZone, error) {
	return locked(a.c, "ListNetworkAvailabilityZones", func(c *Cloud) ([]clients.NetworkAvailabilityZone, error) {
		return slices.Clone(c.net.azs), nil
	})
}

func (a *networkAPI) ListExtensions(context.Context) ([]extensions.Extension, error) {
	return locked(a.c, "ListExtensions", func(c *Cloud) ([]extensions.Extension, error) {
		return slices.Clone(c.net.exts), nil
	})
}
