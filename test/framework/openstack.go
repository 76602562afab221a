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

// Package framework holds what the tests against a real OpenStack share: an inventory of a
// project's resources to prove that nothing was left behind, and small helpers. What the demo
// and the local management plane share with them is in internal/localenv.
package framework

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
)

// Inventory is every resource of the project that a cluster may create, as "kind id (name)".
type Inventory map[string]struct{}

// TakeInventory lists the project's load balancers, floating IPs, ports, networks, routers,
// security groups and servers.
func TakeInventory(ctx context.Context, cl *scope.Clients) (Inventory, error) {
	inv := Inventory{}
	err := errors.Join(
		collect(inv, "load balancer", func() ([]loadbalancers.LoadBalancer, error) {
			return cl.LoadBalancer.ListLoadBalancers(ctx, loadbalancers.ListOpts{})
		}, func(x loadbalancers.LoadBalancer) (string, string) { return x.ID, x.Name }),
		collect(inv, "floating IP", func() ([]floatingips.FloatingIP, error) {
			return cl.Network.ListFloatingIPs(ctx, floatingips.ListOpts{})
		}, func(x floatingips.FloatingIP) (string, string) { return x.ID, x.FloatingIP }),
		collect(inv, "port", func() ([]ports.Port, error) { return cl.Network.ListPorts(ctx, ports.ListOpts{}) },
			func(x ports.Port) (string, string) { return x.ID, x.Name }),
		collect(inv, "network", func() ([]networks.Network, error) { return cl.Network.ListNetworks(ctx, networks.ListOpts{}) },
			func(x networks.Network) (string, string) { return x.ID, x.Name }),
		collect(inv, "router", func() ([]routers.Router, error) { return cl.Network.ListRouters(ctx, routers.ListOpts{}) },
			func(x routers.Router) (string, string) { return x.ID, x.Name }),
		collect(inv, "security group", func() ([]groups.SecGroup, error) { return cl.Network.ListSecGroups(ctx, groups.ListOpts{}) },
			func(x groups.SecGroup) (string, string) { return x.ID, x.Name }),
		collect(inv, "server", func() ([]servers.Server, error) { return cl.Compute.ListServers(ctx, servers.ListOpts{}) },
			func(x servers.Server) (string, string) { return x.ID, x.Name }),
		collect(inv, "volume", func() ([]volumes.Volume, error) { return cl.Volume.ListVolumes(ctx, volumes.ListOpts{}) },
			func(x volumes.Volume) (string, string) { return x.ID, x.Name }),
	)
	if err != nil {
		return nil, err
	}
	return inv, nil
}

// collect adds what list returns to inv as "kind id (name)".
func collect[T any](inv Inventory, kind string, list func() ([]T, error), idName func(T) (string, string)) error {
	items, err := list()
	if err != nil {
		return fmt.Errorf("listing %ss: %w", kind, err)
	}
	for _, x := range items {
		id, name := idName(x)
		inv[fmt.Sprintf("%s %s (%s)", kind, id, name)] = struct{}{}
	}
	return nil
}

// Since lists, sorted, what inv has that before had not.
func (inv Inventory) Since(before Inventory) []string {
	var added []string
	for k := range inv {
		if _, ok := before[k]; !ok {
			added = append(added, k)
		}
	}
	sort.Strings(added)
	return added
}

// Duplicates lists, as "kind name xN", every name that more than one resource of a kind carries
// in the project, among the names that contain mark: load balancers, listeners, pools, health
// monitors, pool members (per pool), ports, servers, security groups, networks, subnets and
// routers by name, floating IPs by description. Something a controller created twice for one
// purpose shows here, since it names what it creates after the purpose.
func Duplicates(ctx context.Context, cl *scope.Clients, mark string) ([]string, error) {
	counts := map[string]int{}
	lb, net := cl.LoadBalancer, cl.Network
	err := errors.Join(
		tally(counts, "load balancer", mark, func() ([]loadbalancers.LoadBalancer, error) {
			return lb.ListLoadBalancers(ctx, loadbalancers.ListOpts{})
		}, func(x loadbalancers.LoadBalancer) string { return x.Name }),
		tally(counts, "listener", mark, func() ([]listeners.Listener, error) { return lb.ListListeners(ctx, listeners.ListOpts{}) },
			func(x listeners.Listener) string { return x.Name }),
		tally(counts, "health monitor", mark, func() ([]monitors.Monitor, error) { return lb.ListMonitors(ctx, monitors.ListOpts{}) },
			func(x monitors.Monitor) string { return x.Name }),
		tally(counts, "floating IP described", mark, func() ([]floatingips.FloatingIP, error) {
			return net.ListFloatingIPs(ctx, floatingips.ListOpts{})
		}, func(x floatingips.FloatingIP) string { return x.Description }),
		tally(counts, "port", mark, func() ([]ports.Port, error) { return net.ListPorts(ctx, ports.ListOpts{}) },
			func(x ports.Port) string { return x.Name }),
		tally(counts, "security group", mark, func() ([]groups.SecGroup, error) { return net.ListSecGroups(ctx, groups.ListOpts{}) },
			func(x groups.SecGroup) string { return x.Name }),
		tally(counts, "network", mark, func() ([]networks.Network, error) { return net.ListNetworks(ctx, networks.ListOpts{}) },
			func(x networks.Network) string { return x.Name }),
		tally(counts, "subnet", mark, func() ([]subnets.Subnet, error) { return net.ListSubnets(ctx, subnets.ListOpts{}) },
			func(x subnets.Subnet) string { return x.Name }),
		tally(counts, "router", mark, func() ([]routers.Router, error) { return net.ListRouters(ctx, routers.ListOpts{}) },
			func(x routers.Router) string { return x.Name }),
		tally(counts, "server", mark, func() ([]servers.Server, error) { return cl.Compute.ListServers(ctx, servers.ListOpts{}) },
			func(x servers.Server) string { return x.Name }),
		// Members are named after their machine: counted per pool of the cluster's.
		tally(counts, "pool", mark, func() ([]pools.Pool, error) {
			all, err := lb.ListPools(ctx, pools.ListOpts{})
			for _, p := range all {
				if err == nil && strings.Contains(p.Name, mark) {
					err = tally(counts, "member of pool "+p.Name, "", func() ([]pools.Member, error) {
						return lb.ListMembers(ctx, p.ID, pools.ListMembersOpts{})
					}, func(m pools.Member) string { return m.Name })
				}
			}
			return all, err
		}, func(x pools.Pool) string { return x.Name }),
	)
	if err != nil {
		return nil, err
	}
	var dups []string
	for k, n := range counts {
		if n > 1 {
			dups = append(dups, fmt.Sprintf("%s x%d", k, n))
		}
	}
	sort.Strings(dups)
	return dups, nil
}

// tally counts, in counts, the names (by name) of what list returns that contain mark.
func tally[T any](counts map[string]int, kind, mark string, list func() ([]T, error), name func(T) string) error {
	items, err := list()
	if err != nil {
		return fmt.Errorf("listing %ss: %w", kind, err)
	}
	for _, x := range items {
		if n := name(x); strings.Contains(n, mark) {
			counts[kind+" "+n]++
		}
	}
	return nil
}
