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
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/apiversions"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/attributestags"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
)

var ctx = context.Background()

// lbCloud is a cloud with two zones and a load balancer network with a VIP subnet.
func lbCloud(opts Options) (c *Cloud, subnet string) {
	c = New(opts)
	c.SetAvailabilityZones("az1", "az2")
	net := c.AddNetwork("lb-net", false)
	return c, c.AddSubnet(net, "lb-az1", "10.0.1.0/24")
}

func TestLoadBalancerLifecycle(t *testing.T) {
	g := NewWithT(t)
	c, subnet := lbCloud(Options{PendingReads: 2})
	lbAPI := c.LoadBalancer()

	lb, err := lbAPI.CreateLoadBalancer(ctx, loadbalancers.CreateOpts{Name: "k8s-az1-kubeapi", VipSubnetID: subnet, AvailabilityZone: "az1", Tags: []string{"t"}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(lb.ProvisioningStatus).To(Equal("PENDING_CREATE"))
	g.Expect(lb.VipAddress).To(Equal("10.0.1.2"))
	g.Expect(lb.AvailabilityZone).To(Equal("az1"))

	// While pending, every mutation answers 409, as Octavia does.
	_, err = lbAPI.CreateListener(ctx, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: listeners.ProtocolTCP, ProtocolPort: 6443})
	g.Expect(gophercloud.ResponseCodeIs(err, http.StatusConflict)).To(BeTrue(), "got %v", err)
	g.Expect(lbAPI.DeleteLoadBalancer(ctx, lb.ID, loadbalancers.DeleteOpts{Cascade: true})).To(MatchError(ContainSubstring("immutable")))

	// The second read settles it.
	got, err := lbAPI.GetLoadBalancer(ctx, lb.ID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.ProvisioningStatus).To(Equal("PENDING_CREATE"))
	got, err = lbAPI.GetLoadBalancer(ctx, lb.ID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.ProvisioningStatus).To(Equal("ACTIVE"))

	// A child puts the load balancer in PENDING_UPDATE; the children settle with it.
	listener, err := lbAPI.CreateListener(ctx, listeners.CreateOpts{LoadbalancerID: lb.ID, Name: "l-6443", Protocol: listeners.ProtocolTCP, ProtocolPort: 6443, AllowedCIDRs: []string{"10.0.0.0/8"}})
	g.Expect(err).NotTo(HaveOccurred())
	got, _ = lbAPI.GetLoadBalancer(ctx, lb.ID)
	g.Expect(got.ProvisioningStatus).To(Equal("PENDING_UPDATE"))
	_, _ = lbAPI.GetLoadBalancer(ctx, lb.ID)
	pool, err := lbAPI.CreatePool(ctx, pools.CreateOpts{ListenerID: listener.ID, Name: "p-6443", Protocol: pools.ProtocolTCP, LBMethod: pools.LBMethodRoundRobin})
	g.Expect(err).NotTo(HaveOccurred())
	settle(c, lb.ID)
	_, err = lbAPI.CreateMonitor(ctx, monitors.CreateOpts{PoolID: pool.ID, Type: monitors.TypeTCP, Delay: 10, Timeout: 5, MaxRetries: 5})
	g.Expect(err).NotTo(HaveOccurred())
	settle(c, lb.ID)
	_, err = lbAPI.CreateMember(ctx, pool.ID, pools.CreateMemberOpts{Name: "cp-0", Address: "10.6.0.5", ProtocolPort: 6443})
	g.Expect(err).NotTo(HaveOccurred())
	settle(c, lb.ID)

	tree, err := lbAPI.GetLoadBalancerStatuses(ctx, lb.ID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tree.Loadbalancer.ProvisioningStatus).To(Equal("ACTIVE"))
	g.Expect(tree.Loadbalancer.Listeners).To(HaveLen(1))
	g.Expect(tree.Loadbalancer.Listeners[0].Pools).To(HaveLen(1))
	g.Expect(tree.Loadbalancer.Listeners[0].Pools[0].Members).To(HaveLen(1))
	g.Expect(tree.Loadbalancer.Listeners[0].Pools[0].Monitor.ID).NotTo(BeEmpty())
	g.Expect(tree.Loadbalancer.Listeners[0].Pools[0].Members[0].ProvisioningStatus).To(Equal("ACTIVE"))

	// Filters: by load balancer and by name.
	ls, err := lbAPI.ListListeners(ctx, listeners.ListOpts{LoadbalancerID: lb.ID})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ls).To(HaveLen(1))
	g.Expect(ls[0].AllowedCIDRs).To(Equal([]string{"10.0.0.0/8"}))
	lbs, err := lbAPI.ListLoadBalancers(ctx, loadbalancers.ListOpts{Name: "other"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(lbs).To(BeEmpty())

	// Rename.
	_, err = lbAPI.UpdateLoadBalancer(ctx, lb.ID, loadbalancers.UpdateOpts{Name: ptr.To("renamed")})
	g.Expect(err).NotTo(HaveOccurred())
	settle(c, lb.ID)

	// Without cascade a load balancer with children is not deleted; with it, it goes through
	// PENDING_DELETE and takes its children and VIP port along.
	err = lbAPI.DeleteLoadBalancer(ctx, lb.ID, loadbalancers.DeleteOpts{})
	g.Expect(gophercloud.ResponseCodeIs(err, http.StatusBadRequest)).To(BeTrue(), "got %v", err)
	g.Expect(lbAPI.DeleteLoadBalancer(ctx, lb.ID, loadbalancers.DeleteOpts{Cascade: true})).To(Succeed())
	got, err = lbAPI.GetLoadBalancer(ctx, lb.ID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.ProvisioningStatus).To(Equal("PENDING_DELETE"))
	_, err = lbAPI.GetLoadBalancer(ctx, lb.ID)
	g.Expect(gophercloud.ResponseCodeIs(err, http.StatusNotFound)).To(BeTrue(), "got %v", err)
	ps, _ := lbAPI.ListPools(ctx, pools.ListOpts{})
	g.Expect(ps).To(BeEmpty())
	vipPorts, _ := c.Network().ListPorts(ctx, ports.ListOpts{ID: lb.VipPortID})
	g.Expect(vipPorts).To(BeEmpty())
}

// settle reads a load balancer until it is no longer pending, with a bound.
func settle(c *Cloud, id string) {
	for range 10 {
		lb, err := c.LoadBalancer().GetLoadBalancer(ctx, id)
		if err != nil || lb.ProvisioningStatus == "ACTIVE" {
			return
		}
	}
}

func TestLoadBalancerSettlesByTime(t *testing.T) {
	g := NewWithT(t)
	now := time.Unix(0, 0)
	c, subnet := lbCloud(Options{PendingDuration: 5 * time.Second, Now: func() time.Time { return now }})
	lb, err := c.LoadBalancer().CreateLoadBalancer(ctx, loadbalancers.CreateOpts{VipSubnetID: subnet})
	g.Expect(err).NotTo(HaveOccurred())
	got, _ := c.LoadBalancer().GetLoadBalancer(ctx, lb.ID)
	g.Expect(got.ProvisioningStatus).To(Equal("PENDING_CREATE"))
	now = now.Add(5 * time.Second)
	got, _ = c.LoadBalancer().GetLoadBalancer(ctx, lb.ID)
	g.Expect(got.ProvisioningStatus).To(Equal("ACTIVE"))
}

func TestLoadBalancerValidation(t *testing.T) {
	g := NewWithT(t)
	c, subnet := lbCloud(Options{})
	c.SetLoadBalancerAvailabilityZones("az1")
	c.AddProvider("ovn")
	lbAPI := c.LoadBalancer()

	_, err := lbAPI.CreateLoadBalancer(ctx, loadbalancers.CreateOpts{VipSubnetID: subnet, AvailabilityZone: "az2"})
	g.Expect(gophercloud.ResponseCodeIs(err, http.StatusBadRequest)).To(BeTrue(), "an availability zone Octavia does not know: %v", err)
	_, err = lbAPI.CreateLoadBalancer(ctx, loadbalancers.CreateOpts{VipSubnetID: subnet, Provider: "f5"})
	g.Expect(err).To(MatchError(ContainSubstring("Provider 'f5' is not enabled")))

	caps, err := lbAPI.ListAvailabilityZoneCapabilities(ctx, "ovn")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(caps).To(BeEmpty(), "ovn was added without availability zone support")
	caps, _ = lbAPI.ListAvailabilityZoneCapabilities(ctx, "amphora")
	g.Expect(caps).To(HaveLen(1))

	// allowed_cidrs needs Octavia API 2.12.
	c.SetAPIVersions(apiversions.APIVersion{ID: "v2.11", Status: "CURRENT"})
	lb, err := lbAPI.CreateLoadBalancer(ctx, loadbalancers.CreateOpts{VipSubnetID: subnet})
	g.Expect(err).NotTo(HaveOccurred())
	settle(c, lb.ID)
	_, err = lbAPI.CreateListener(ctx, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: listeners.ProtocolTCP, ProtocolPort: 6443, AllowedCIDRs: []string{"10.0.0.0/8"}})
	g.Expect(gophercloud.ResponseCodeIs(err, http.StatusBadRequest)).To(BeTrue(), "got %v", err)
	_, err = lbAPI.CreateListener(ctx, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: listeners.ProtocolTCP, ProtocolPort: 6443})
	g.Expect(err).NotTo(HaveOccurred())
	settle(c, lb.ID)
	_, err = lbAPI.CreateListener(ctx, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: listeners.ProtocolTCP, ProtocolPort: 6443})
	g.Expect(gophercloud.ResponseCodeIs(err, http.StatusConflict)).To(BeTrue(), "a second listener on the same port: %v", err)

	// A provider without allowed_cidrs support answers 501, even on a recent API.
	c.SetAPIVersions(apiversions.APIVersion{ID: "v2.27", Status: "CURRENT"})
	c.SetProviderAllowedCIDRs("ovn", false)
	ovn, err := lbAPI.CreateLoadBalancer(ctx, loadbalancers.CreateOpts{VipSubnetID: subnet, Provider: "ovn"})
	g.Expect(err).NotTo(HaveOccurred())
	settle(c, ovn.ID)
	_, err = lbAPI.CreateListener(ctx, listeners.CreateOpts{LoadbalancerID: ovn.ID, Protocol: listeners.ProtocolTCP, ProtocolPort: 6443, AllowedCIDRs: []string{"10.0.0.0/8"}})
	g.Expect(gophercloud.ResponseCodeIs(err, http.StatusNotImplemented)).To(BeTrue(), "got %v", err)
	settle(c, lb.ID)
	ls, _ := lbAPI.ListListeners(ctx, listeners.ListOpts{LoadbalancerID: lb.ID})
	updated, err := lbAPI.UpdateListener(ctx, ls[0].ID, listeners.UpdateOpts{AllowedCIDRs: &[]string{"192.0.2.0/24"}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(updated.AllowedCIDRs).To(Equal([]string{"192.0.2.0/24"}))
}

func TestNeutron(t *testing.T) {
	g := NewWithT(t)
	c := New(Options{})
	netAPI := c.Network()
	extID := c.AddNetwork("public", true)
	c.AddSubnet(extID, "public-subnet", "172.24.4.0/24")

	// Filters: external networks, tags.
	ext, err := netAPI.ListNetworks(ctx, external.ListOptsExt{ListOptsBuilder: networks.ListOpts{}, External: ptr.To(true)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ext).To(HaveLen(1))
	g.Expect(ext[0].ID).To(Equal(extID))

	n, err := netAPI.CreateNetwork(ctx, networks.CreateOpts{Name: "k8s"})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = netAPI.ReplaceAllTags(ctx, "networks", n.ID, attributestags.ReplaceAllOpts{Tags: []string{"cluster-a", "managed"}})
	g.Expect(err).NotTo(HaveOccurred())
	tagged, _ := netAPI.ListNetworks(ctx, networks.ListOpts{Tags: "cluster-a,managed"})
	g.Expect(tagged).To(HaveLen(1))
	tagged, _ = netAPI.ListNetworks(ctx, networks.ListOpts{Tags: "cluster-a,other"})
	g.Expect(tagged).To(BeEmpty())
	tagged, _ = netAPI.ListNetworks(ctx, networks.ListOpts{NotTagsAny: "managed"})
	g.Expect(tagged).To(HaveLen(1))

	s, err := netAPI.CreateSubnet(ctx, subnets.CreateOpts{NetworkID: n.ID, CIDR: "10.6.0.0/24", IPVersion: 4, Name: "k8s"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.GatewayIP).To(Equal("10.6.0.1"))

	// Ports get addresses from the subnet; a fixed IP is honoured once.
	p1, err := netAPI.CreatePort(ctx, ports.CreateOpts{NetworkID: n.ID, Name: "m-0"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p1.FixedIPs).To(Equal([]ports.IP{{SubnetID: s.ID, IPAddress: "10.6.0.2"}}))
	_, err = netAPI.CreatePort(ctx, ports.CreateOpts{NetworkID: n.ID, FixedIPs: []ports.IP{{SubnetID: s.ID, IPAddress: "10.6.0.2"}}})
	g.Expect(gophercloud.ResponseCodeIs(err, http.StatusConflict)).To(BeTrue())
	bySubnet, _ := netAPI.ListPorts(ctx, ports.ListOpts{FixedIPs: []ports.FixedIPOpts{{SubnetID: s.ID}}})
	g.Expect(bySubnet).To(HaveLen(1))

	// Router with a gateway on the external network, and an interface on the subnet.
	r, err := netAPI.CreateRouter(ctx, routers.CreateOpts{Name: "k8s", GatewayInfo: &routers.GatewayInfo{NetworkID: extID}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.GatewayInfo.ExternalFixedIPs).To(HaveLen(1))
	_, err = netAPI.AddRouterInterface(ctx, r.ID, routers.AddInterfaceOpts{SubnetID: s.ID})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(netAPI.DeleteRouter(ctx, r.ID)).To(MatchError(ContainSubstring("still has ports")))

	// A floating IP on the external network, associated to a port, then released. A port on a
	// subnet without a router to the external network cannot get one, as in Neutron.
	unrouted := c.AddNetwork("unrouted", false)
	c.AddSubnet(unrouted, "unrouted", "10.9.0.0/24")
	lonely, err := netAPI.CreatePort(ctx, ports.CreateOpts{NetworkID: unrouted})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = netAPI.CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: extID, PortID: lonely.ID})
	g.Expect(err).To(MatchError(ContainSubstring("ExternalGatewayForFloatingIPNotFound")))
	fip, err := netAPI.CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: extID, PortID: p1.ID})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fip.FixedIP).To(Equal("10.6.0.2"))
	g.Expect(fip.Status).To(Equal("ACTIVE"))
	// The router's interface stays while a floating IP goes through it.
	_, err = netAPI.RemoveRouterInterface(ctx, r.ID, routers.RemoveInterfaceOpts{SubnetID: s.ID})
	g.Expect(gophercloud.ResponseCodeIs(err, http.StatusConflict)).To(BeTrue(), "got %v", err)
	fip, err = netAPI.UpdateFloatingIP(ctx, fip.ID, floatingips.UpdateOpts{PortID: new(string)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fip.PortID).To(BeEmpty())

	// A network with ports cannot be deleted: the controller must wait.
	err = netAPI.DeleteNetwork(ctx, n.ID)
	g.Expect(gophercloud.ResponseCodeIs(err, http.StatusConflict)).To(BeTrue(), "got %v", err)
	g.Expect(netAPI.DeletePort(ctx, p1.ID)).To(Succeed())
	_, err = netAPI.RemoveRouterInterface(ctx, r.ID, routers.RemoveInterfaceOpts{SubnetID: s.ID})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(netAPI.DeleteRouter(ctx, r.ID)).To(Succeed())
	g.Expect(netAPI.DeleteNetwork(ctx, n.ID)).To(Succeed())
	err = netAPI.DeleteNetwork(ctx, n.ID)
	g.Expect(gophercloud.ResponseCodeIs(err, http.StatusNotFound)).To(BeTrue())
}

func TestNovaServers(t *testing.T) {
	g := NewWithT(t)
	c := New(Options{ServerBuildReads: 2})
	c.SetAvailabilityZones("az1", "az2")
	n := c.AddNetwork("k8s", false)
	c.AddSubnet(n, "k8s", "10.6.0.0/24")
	port, err := c.Network().CreatePort(ctx, ports.CreateOpts{NetworkID: n})
	g.Expect(err).NotTo(HaveOccurred())

	_, err = c.Compute().CreateServer(ctx, servers.CreateOpts{Name: "m", ImageRef: "image", AvailabilityZone: "az9", Networks: []servers.Network{{Port: port.ID}}}, nil)
	g.Expect(gophercloud.ResponseCodeIs(err, http.StatusBadRequest)).To(BeTrue())

	s, err := c.Compute().CreateServer(ctx, servers.CreateOpts{Name: "m", ImageRef: "image", AvailabilityZone: "az2", Networks: []servers.Network{{Port: port.ID}}}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.Status).To(BeEmpty(), "Nova's create answer has no status")
	got, _ := c.Compute().GetServer(ctx, s.ID)
	g.Expect(got.Status).To(Equal("BUILD"))
	g.Expect(got.AvailabilityZone).To(Equal("az2"))
	got, _ = c.Compute().GetServer(ctx, s.ID)
	g.Expect(got.Status).To(Equal("ACTIVE"))
	g.Expect(got.Addresses).To(HaveKey("k8s"))

	list, _ := c.Compute().ListServers(ctx, servers.ListOpts{Name: "^m$"})
	g.Expect(list).To(HaveLen(1))
	g.Expect(c.Compute().DeleteServer(ctx, s.ID)).To(Succeed())
	p, _ := c.Network().GetPort(ctx, port.ID)
	g.Expect(p.DeviceID).To(BeEmpty(), "the user's port is detached, not deleted")
}

func TestFaultsAndAccounting(t *testing.T) {
	g := NewWithT(t)
	c, subnet := lbCloud(Options{Seed: 42})
	lbAPI := c.LoadBalancer()

	// The second CreateLoadBalancer fails with 503; the first and third succeed.
	fault := c.InjectFault(Fault{Operation: "CreateLoadBalancer", Nth: 2, Status: http.StatusServiceUnavailable})
	_, err := lbAPI.CreateLoadBalancer(ctx, loadbalancers.CreateOpts{VipSubnetID: subnet})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = lbAPI.CreateLoadBalancer(ctx, loadbalancers.CreateOpts{VipSubnetID: subnet})
	g.Expect(gophercloud.ResponseCodeIs(err, http.StatusServiceUnavailable)).To(BeTrue())
	_, err = lbAPI.CreateLoadBalancer(ctx, loadbalancers.CreateOpts{VipSubnetID: subnet})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fault.Fired()).To(Equal(1))

	// Timeouts.
	c.ClearFaults()
	c.InjectFault(Fault{Operation: "ListLoadBalancers", Nth: 1, Timeout: true})
	_, err = lbAPI.ListLoadBalancers(ctx, nil)
	g.Expect(errors.Is(err, context.DeadlineExceeded)).To(BeTrue())

	// A fraction of calls, reproducibly for a seed.
	c.ClearFaults()
	c.InjectFault(Fault{Operation: "*", Probability: 0.5, Status: http.StatusInternalServerError})
	failures := 0
	for range 200 {
		if _, err := lbAPI.ListProviders(ctx); err != nil {
			failures++
		}
	}
	g.Expect(failures).To(BeNumerically("~", 100, 30))

	// A load balancer driven to ERROR.
	c.ClearFaults()
	c.InjectFault(Fault{Operation: "CreateLoadBalancer", Nth: 1, DriveToError: true})
	lb, err := lbAPI.CreateLoadBalancer(ctx, loadbalancers.CreateOpts{VipSubnetID: subnet})
	g.Expect(err).NotTo(HaveOccurred())
	got, _ := lbAPI.GetLoadBalancer(ctx, lb.ID)
	g.Expect(got.ProvisioningStatus).To(Equal("ERROR"))
	g.Expect(lbAPI.DeleteLoadBalancer(ctx, lb.ID, loadbalancers.DeleteOpts{Cascade: true})).To(Succeed(), "a load balancer in ERROR can be deleted")

	// A response lost after the cloud applied the change: the caller sees a timeout, the load
	// balancer exists.
	c.ClearFaults()
	c.InjectFault(Fault{Operation: "CreateLoadBalancer", Nth: 1, LoseResponse: true})
	_, err = lbAPI.CreateLoadBalancer(ctx, loadbalancers.CreateOpts{Name: "lost", VipSubnetID: subnet})
	g.Expect(errors.Is(err, context.DeadlineExceeded)).To(BeTrue())
	lost, _ := lbAPI.ListLoadBalancers(ctx, loadbalancers.ListOpts{Name: "lost"})
	g.Expect(lost).To(HaveLen(1), "the change was applied")

	// Accounting counts every call, failed ones included.
	calls := c.Calls()
	g.Expect(calls["CreateLoadBalancer"]).To(Equal(5))
	g.Expect(calls["ListProviders"]).To(Equal(200))
	g.Expect(c.TotalCalls()).To(BeNumerically(">=", 208))
	c.ResetCalls()
	g.Expect(c.TotalCalls()).To(BeZero())
}

func TestSecurityGroupFilters(t *testing.T) {
	g := NewWithT(t)
	c := New(Options{})
	sg, err := c.Network().CreateSecGroup(ctx, groups.CreateOpts{Name: "cp"})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = c.Network().CreateSecGroup(ctx, groups.CreateOpts{Name: "worker"})
	g.Expect(err).NotTo(HaveOccurred())
	found, err := c.Network().ListSecGroups(ctx, groups.ListOpts{Name: "cp"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(found).To(HaveLen(1), "untagged Name fields filter too")
	_, err = c.Network().CreateSecGroupRules(ctx, []rules.CreateOpts{{SecGroupID: sg.ID, Direction: "ingress", EtherType: "IPv4"}})
	g.Expect(err).NotTo(HaveOccurred())
	rs, err := c.Network().ListSecGroupRules(ctx, rules.ListOpts{SecGroupID: sg.ID})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rs).To(HaveLen(1))
}

func TestSecurityGroupRulesInBulkAreAllOrNothing(t *testing.T) {
	g := NewWithT(t)
	c := New(Options{})
	sg, err := c.Network().CreateSecGroup(ctx, groups.CreateOpts{Name: "cp"})
	g.Expect(err).NotTo(HaveOccurred())
	made, err := c.Network().CreateSecGroupRules(ctx, []rules.CreateOpts{
		{SecGroupID: sg.ID, Direction: "ingress", EtherType: "IPv4", Protocol: "tcp", PortRangeMin: 6443, PortRangeMax: 6443},
		{SecGroupID: sg.ID, Direction: "ingress", EtherType: "IPv4", Protocol: "tcp", PortRangeMin: 10250, PortRangeMax: 10250},
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(made).To(HaveLen(2))
	g.Expect(made[0].ID).NotTo(Equal(made[1].ID))
	g.Expect(made[1].PortRangeMin).To(Equal(10250))

	_, err = c.Network().CreateSecGroupRules(ctx, []rules.CreateOpts{
		{SecGroupID: sg.ID, Direction: "ingress", EtherType: "IPv4"},
		{SecGroupID: "missing", Direction: "ingress", EtherType: "IPv4"},
	})
	g.Expect(err).To(HaveOccurred())
	rs, err := c.Network().ListSecGroupRules(ctx, rules.ListOpts{SecGroupID: sg.ID})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rs).To(HaveLen(2), "a failed bulk request creates nothing")
}

func TestFactory(t *testing.T) {
	g := NewWithT(t)
	c := New(Options{})
	_, err := c.Factory().NewClients(ctx, "ns", nil)
	g.Expect(err).To(MatchError(scope.ErrNoIdentityRef))
	clients, err := c.Factory().NewClients(ctx, "ns", &infrav1.OpenStackIdentityReference{Name: "x", CloudName: "y"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(clients.Network).NotTo(BeNil())
}
