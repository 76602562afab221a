//go:build e2e

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

package e2e

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
)

// observedLB is a load balancer as Octavia and Neutron describe it.
type observedLB struct {
	lb *loadbalancers.LoadBalancer
	// listeners maps each listener's port to its name, its pool's name and its monitor's name.
	listeners map[int][3]string
	// members maps each member's name to its address, over every pool.
	members map[string][]string
	// enabled maps each member's name to its admin_state_up in every pool, in pool order.
	enabled map[string][]bool
	// memberSubnets maps each member's name to the subnet Octavia reaches it through, if any.
	memberSubnets map[string]string
	// floatingIP is the floating IP on the VIP port, if any.
	floatingIP *floatingips.FloatingIP
}

// observe reads load balancer id from Octavia (its status tree, listeners for their ports,
// members of every pool) and the floating IP on its VIP port from Neutron.
func observe(ctx context.Context, g Gomega, id string) observedLB {
	out := observedLB{listeners: map[int][3]string{}, members: map[string][]string{}, enabled: map[string][]bool{}, memberSubnets: map[string]string{}}
	lb, err := openstack.LoadBalancer.GetLoadBalancer(ctx, id)
	g.Expect(err).NotTo(HaveOccurred())
	out.lb = lb
	tree, err := openstack.LoadBalancer.GetLoadBalancerStatuses(ctx, id)
	g.Expect(err).NotTo(HaveOccurred())
	for _, l := range tree.Loadbalancer.Listeners {
		listener, err := openstack.LoadBalancer.GetListener(ctx, l.ID)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(l.Pools).To(HaveLen(1), "listener %s has one pool", l.Name)
		p := l.Pools[0]
		out.listeners[listener.ProtocolPort] = [3]string{l.Name, p.Name, p.Monitor.Name}
		members, err := openstack.LoadBalancer.ListMembers(ctx, p.ID, pools.ListMembersOpts{})
		g.Expect(err).NotTo(HaveOccurred())
		for _, m := range members {
			out.enabled[m.Name] = append(out.enabled[m.Name], m.AdminStateUp)
			if m.SubnetID != "" {
				out.memberSubnets[m.Name] = m.SubnetID
			}
			if !slices.Contains(out.members[m.Name], m.Address) {
				out.members[m.Name] = append(out.members[m.Name], m.Address)
			}
		}
	}
	fips, err := openstack.Network.ListFloatingIPs(ctx, floatingips.ListOpts{PortID: lb.VipPortID})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(len(fips)).To(BeNumerically("<=", 1), "at most one floating IP on the VIP port")
	if len(fips) == 1 {
		out.floatingIP = &fips[0]
	}
	return out
}

// expectLoadBalancer checks a load balancer of the cluster against Octavia and Neutron: its name,
// its VIP and floating IP as the status says, a listener, pool and TCP monitor named after it for
// every port, and (when subnet is set) its VIP subnet and Octavia availability zone.
func expectLoadBalancer(ctx context.Context, g Gomega, status infrav1.LoadBalancer, wantName, subnetID, zone string, ports []int) {
	o := observe(ctx, g, status.ID)
	g.Expect(o.lb.Name).To(Equal(wantName))
	g.Expect(status.Name).To(Equal(wantName))
	g.Expect(o.lb.ProvisioningStatus).To(Equal("ACTIVE"))
	g.Expect(o.lb.VipAddress).To(Equal(status.InternalIP), "the status has the VIP")
	if subnetID != "" {
		g.Expect(o.lb.VipSubnetID).To(Equal(subnetID), "the VIP is on the zone's subnet")
	}
	g.Expect(o.lb.AvailabilityZone).To(Equal(zone), "Octavia availability zone")
	var got []int
	for port, names := range o.listeners {
		got = append(got, port)
		want := fmt.Sprintf("%s-%d", wantName, port)
		g.Expect(names).To(Equal([3]string{want, want, want}), "listener, pool and monitor of port %d", port)
	}
	sort.Ints(got)
	g.Expect(got).To(Equal(ports))
	g.Expect(o.floatingIP).NotTo(BeNil(), "a floating IP on the VIP port")
	g.Expect(o.floatingIP.FloatingIP).To(Equal(status.IP), "the status has the floating IP")
}

// expectGone checks that Octavia no longer has load balancer id and Neutron no floating IP address.
func expectGone(ctx context.Context, g Gomega, id, address string) {
	lb, err := openstack.LoadBalancer.GetLoadBalancer(ctx, id)
	if err == nil {
		g.Expect(lb.ProvisioningStatus).To(Equal("DELETED"), "load balancer %s", id)
	} else {
		g.Expect(clients.IsNotFound(err)).To(BeTrue(), "load balancer %s: %v", id, err)
	}
	fips, err := openstack.Network.ListFloatingIPs(ctx, floatingips.ListOpts{FloatingIP: address})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fips).To(BeEmpty(), "floating IP %s", address)
}

// loadBalancerName is the name of a cluster's load balancer, in zone zone or the single one.
func loadBalancerName(cluster, zone string) string {
	if zone == "" {
		return fmt.Sprintf("k8s-clusterapi-cluster-%s-%s-kubeapi", namespace, cluster)
	}
	return fmt.Sprintf("k8s-clusterapi-cluster-%s-%s-%s-kubeapi", namespace, cluster, zone)
}

func subnetOf(zone string) string {
	for _, m := range lbNetwork.Mapping {
		if m.AvailabilityZone == zone {
			return ptr.Deref(m.Subnet.ID, "")
		}
	}
	return ""
}

// monitorsOf are the health monitors of load balancer id's pools, by their listener's port.
func monitorsOf(ctx context.Context, g Gomega, id string) map[int]monitors.Monitor {
	out := map[int]monitors.Monitor{}
	tree, err := openstack.LoadBalancer.GetLoadBalancerStatuses(ctx, id)
	g.Expect(err).NotTo(HaveOccurred())
	for _, l := range tree.Loadbalancer.Listeners {
		listener, err := openstack.LoadBalancer.GetListener(ctx, l.ID)
		g.Expect(err).NotTo(HaveOccurred())
		for _, p := range l.Pools {
			if p.Monitor.ID == "" {
				continue
			}
			found, err := openstack.LoadBalancer.ListMonitors(ctx, monitors.ListOpts{ID: p.Monitor.ID})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(found).To(HaveLen(1))
			out[listener.ProtocolPort] = found[0]
		}
	}
	return out
}
