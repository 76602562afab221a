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

package controllers

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

// missingID is a well-formed ID that nothing in the fake has.
const missingID = "5e1f0c3a-0000-4000-8000-00000000dead"

// decoys is what the hostile cases point at: twins (two objects of a kind with one name) that a
// filter by that name matches at once, and a network with two subnets of one name.
type decoys struct {
	network string // a network with two subnets named "twin-subnet"
	// busy is a floating IP associated with a port someone else made.
	busy floatingips.FloatingIP
}

func addDecoys(t *testing.T, g *WithT, cloud *fakeopenstack.Cloud) decoys {
	t.Helper()
	for range 2 {
		cloud.AddNetwork("twin", false)
		cloud.AddFlavor("twin", 2, 2048)
		cloud.AddImage("twin")
		cloud.AddServerGroup("twin")
		_, err := cloud.Network().CreateRouter(ctx, routers.CreateOpts{Name: "twin-router"})
		g.Expect(err).NotTo(HaveOccurred())
		_, err = cloud.Network().CreateSecGroup(ctx, groups.CreateOpts{Name: "twin-sg"})
		g.Expect(err).NotTo(HaveOccurred())
	}
	d := decoys{network: cloud.AddNetwork("vip", false)}
	cloud.AddSubnet(d.network, "twin-subnet", "10.50.1.0/24")
	cloud.AddSubnet(d.network, "twin-subnet", "10.50.2.0/24")
	public, err := cloud.Network().ListNetworks(ctx, networks.ListOpts{Name: "public"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(public).To(HaveLen(1))
	someones := cloud.AddNetwork("someone-elses", false)
	subnet := cloud.AddSubnet(someones, "someone-elses", "10.60.0.0/24")
	router, err := cloud.Network().CreateRouter(ctx, routers.CreateOpts{Name: "someone-elses", GatewayInfo: &routers.GatewayInfo{NetworkID: public[0].ID}})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = cloud.Network().AddRouterInterface(ctx, router.ID, routers.AddInterfaceOpts{SubnetID: subnet})
	g.Expect(err).NotTo(HaveOccurred())
	port, err := cloud.Network().CreatePort(ctx, ports.CreateOpts{NetworkID: someones, Name: "someone-elses-server"})
	g.Expect(err).NotTo(HaveOccurred())
	busy, err := cloud.Network().CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: public[0].ID, PortID: port.ID})
	g.Expect(err).NotTo(HaveOccurred())
	d.busy = *busy
	return d
}

// hostileCase is a spec the API server accepts (CEL and the webhooks see nothing wrong with it)
// that only the cloud shows to be wrong: the controller must say so in a condition naming the
// field and the value, and create, change and delete nothing.
type hostileCase struct {
	name string
	// cluster edits managedSpec() for a cluster case; machine edits a machine's spec otherwise.
	cluster func(d decoys, s *infrav1.OpenStackClusterSpec)
	// setup, for a cluster case, adds to the decoys.
	setup   func(cloud *fakeopenstack.Cloud)
	machine func(s *infrav1.OpenStackMachineSpec)
	// condition, reason and message are the False condition the object must end with, exactly;
	// "<vip>" in message stands for the decoys' network's ID, "<busy>" for their busy floating
	// IP's address, port and fixed IP.
	condition, reason, message string
}

func hostileCases() []hostileCase {
	lb := func(s *infrav1.OpenStackClusterSpec) *infrav1.APIServerLoadBalancer {
		s.APIServerLoadBalancer = &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true)}
		return s.APIServerLoadBalancer
	}
	byName := func(name string) *infrav1.NetworkParam {
		return &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: name}}
	}
	subnetByName := func(name string) infrav1.SubnetParam {
		return infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{Name: name}}
	}
	return []hostileCase{
		{name: "external network ID that does not exist", cluster: func(_ decoys, s *infrav1.OpenStackClusterSpec) {
			s.ExternalNetwork = &infrav1.NetworkParam{ID: ptr.To(missingID)}
		}, condition: infrav1.NetworkReadyCondition, reason: infrav1.ExternalNetworkNotFoundReason,
			message: "spec.externalNetwork.id: network " + missingID + " does not exist"},
		{name: "external network filter matching two networks", setup: func(cloud *fakeopenstack.Cloud) {
			// Not among the decoys: two more external networks would leave every other spec's
			// external network ambiguous.
			cloud.AddNetwork("ext-twin", true)
			cloud.AddNetwork("ext-twin", true)
		}, cluster: func(_ decoys, s *infrav1.OpenStackClusterSpec) {
			s.ExternalNetwork = byName("ext-twin")
		}, condition: infrav1.NetworkReadyCondition, reason: infrav1.ExternalNetworkNotFoundReason,
			message: "spec.externalNetwork.filter: {name=ext-twin} matches 2 external networks (ext-twin, ext-twin), want exactly one"},
		{name: "external network filter with control characters and unicode", cluster: func(_ decoys, s *infrav1.OpenStackClusterSpec) {
			s.ExternalNetwork = byName("pub\tlic\u200b☃")
		}, condition: infrav1.NetworkReadyCondition, reason: infrav1.ExternalNetworkNotFoundReason,
			message: `spec.externalNetwork.filter: {name="pub\tlic\u200b☃"} matches 0 external networks, want exactly one`},
		{name: "network ID that does not exist", cluster: func(_ decoys, s *infrav1.OpenStackClusterSpec) {
			s.ManagedSubnets, s.Network = nil, &infrav1.NetworkParam{ID: ptr.To(missingID)}
		}, condition: infrav1.NetworkReadyCondition, reason: infrav1.NetworkNotFoundReason,
			message: "spec.network.id: network " + missingID + " does not exist"},
		{name: "network filter matching two networks", cluster: func(_ decoys, s *infrav1.OpenStackClusterSpec) {
			s.ManagedSubnets, s.Network = nil, byName("twin")
		}, condition: infrav1.NetworkReadyCondition, reason: infrav1.NetworkNotFoundReason,
			message: "spec.network.filter: {name=twin} matches 2 networks, want exactly one"},
		{name: "network filter in another script", cluster: func(_ decoys, s *infrav1.OpenStackClusterSpec) {
			s.ManagedSubnets, s.Network = nil, byName("сеть-網絡")
		}, condition: infrav1.NetworkReadyCondition, reason: infrav1.NetworkNotFoundReason,
			message: "spec.network.filter: {name=сеть-網絡} matches 0 networks, want exactly one"},
		{name: "subnet filter matching two subnets", cluster: func(d decoys, s *infrav1.OpenStackClusterSpec) {
			s.ManagedSubnets, s.Network = nil, &infrav1.NetworkParam{ID: ptr.To(d.network)}
			s.Subnets = []infrav1.SubnetParam{subnetByName("twin-subnet")}
		}, condition: infrav1.NetworkReadyCondition, reason: infrav1.NetworkNotFoundReason,
			message: "spec.subnets[0].filter: {name=twin-subnet} matches 2 subnets on network <vip>, want exactly one"},
		{name: "subnet ID that does not exist", cluster: func(d decoys, s *infrav1.OpenStackClusterSpec) {
			s.ManagedSubnets, s.Network = nil, &infrav1.NetworkParam{ID: ptr.To(d.network)}
			s.Subnets = []infrav1.SubnetParam{{ID: ptr.To(missingID)}}
		}, condition: infrav1.NetworkReadyCondition, reason: infrav1.NetworkNotFoundReason,
			message: "spec.subnets[0].id: subnet " + missingID + " does not exist"},
		{name: "router ID that does not exist", cluster: func(_ decoys, s *infrav1.OpenStackClusterSpec) {
			s.Router = &infrav1.RouterParam{ID: ptr.To(missingID)}
		}, condition: infrav1.NetworkReadyCondition, reason: infrav1.NetworkNotFoundReason,
			message: "spec.router.id: router " + missingID + " does not exist"},
		{name: "router filter matching two routers", cluster: func(_ decoys, s *infrav1.OpenStackClusterSpec) {
			s.Router = &infrav1.RouterParam{Filter: &infrav1.RouterFilter{Name: "twin-router"}}
		}, condition: infrav1.NetworkReadyCondition, reason: infrav1.NetworkNotFoundReason,
			message: "spec.router.filter: {name=twin-router} matches 2 routers, want exactly one"},
		{name: "load balancer network filter matching two networks", cluster: func(_ decoys, s *infrav1.OpenStackClusterSpec) {
			lb(s).Network = byName("twin")
		}, condition: infrav1.APIServerLoadBalancersReadyCondition, reason: infrav1.LoadBalancerConfigurationErrorReason,
			message: "spec.apiServerLoadBalancer.network.filter: {name=twin} matches 2 networks, want exactly one; nothing is provisioned for it [v1beta2: spec.apiServer.managedLoadBalancer.network.filter]"},
		{name: "load balancer subnet filter matching two subnets", cluster: func(d decoys, s *infrav1.OpenStackClusterSpec) {
			l := lb(s)
			l.Network = &infrav1.NetworkParam{ID: ptr.To(d.network)}
			l.Subnets = []infrav1.SubnetParam{subnetByName("twin-subnet")}
		}, condition: infrav1.APIServerLoadBalancersReadyCondition, reason: infrav1.LoadBalancerConfigurationErrorReason,
			message: "spec.apiServerLoadBalancer.subnets[0].filter: {name=twin-subnet} matches 2 subnets on network <vip>, want exactly one; nothing is provisioned for it [v1beta2: spec.apiServer.managedLoadBalancer.subnets[0].filter]"},
		{name: "zone subnet filter matching two subnets", cluster: func(d decoys, s *infrav1.OpenStackClusterSpec) {
			l := lb(s)
			l.Network = &infrav1.NetworkParam{ID: ptr.To(d.network)}
			l.AvailabilityZoneSubnets = []infrav1.AZSubnetMapping{{AvailabilityZone: "az1", Subnet: subnetByName("twin-subnet")}}
			s.ControlPlaneEndpoint = dnsEndpoint()
		}, condition: infrav1.APIServerLoadBalancersReadyCondition, reason: infrav1.LoadBalancerConfigurationErrorReason,
			message: "az1: spec.apiServerLoadBalancer.availabilityZoneSubnets[0].subnet.filter: {name=twin-subnet} matches 2 subnets on network <vip>, want exactly one; nothing is provisioned for it [v1beta2: spec.apiServer.managedLoadBalancer.availabilityZoneSubnets[0].subnet.filter]"},
		{name: "zone subnet ID that does not exist", cluster: func(d decoys, s *infrav1.OpenStackClusterSpec) {
			l := lb(s)
			l.Network = &infrav1.NetworkParam{ID: ptr.To(d.network)}
			l.AvailabilityZoneSubnets = []infrav1.AZSubnetMapping{{AvailabilityZone: "az1", Subnet: infrav1.SubnetParam{ID: ptr.To(missingID)}}}
			s.ControlPlaneEndpoint = dnsEndpoint()
		}, condition: infrav1.APIServerLoadBalancersReadyCondition, reason: infrav1.LoadBalancerConfigurationErrorReason,
			message: "az1: spec.apiServerLoadBalancer.availabilityZoneSubnets[0].subnet.id: subnet " + missingID + " does not exist; nothing is provisioned for it [v1beta2: spec.apiServer.managedLoadBalancer.availabilityZoneSubnets[0].subnet.id]"},
		{name: "API server floating IP associated with another port", cluster: func(d decoys, s *infrav1.OpenStackClusterSpec) {
			lb(s)
			s.APIServerFloatingIP = ptr.To(d.busy.FloatingIP)
		}, condition: infrav1.APIServerLoadBalancersReadyCondition, reason: infrav1.LoadBalancerConfigurationErrorReason,
			message: "spec.apiServerFloatingIP: floating IP <busy>, not with a load balancer of this cluster; disassociate it, or give the API server another address [v1beta2: spec.apiServer.floatingIP]"},
		{name: "load balancer flavor Octavia does not have", cluster: func(_ decoys, s *infrav1.OpenStackClusterSpec) {
			lb(s).Flavor = ptr.To("amphora-ultra")
		}, condition: infrav1.APIServerLoadBalancersReadyCondition, reason: infrav1.LoadBalancerConfigurationErrorReason,
			message: `spec.apiServerLoadBalancer.flavor: Octavia has no enabled flavor "amphora-ultra" [v1beta2: spec.apiServer.managedLoadBalancer.flavor]`},

		{name: "flavor that does not exist", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.Flavor = ptr.To("m9.colossal")
		}, condition: infrav1.InstanceReadyCondition, reason: infrav1.InstanceConfigurationErrorReason,
			message: `spec.flavor: 0 flavors are named "m9.colossal", want exactly one [v1beta2: spec.flavor.filter.name]`},
		{name: "flavor name two flavors carry", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.Flavor = ptr.To("twin")
		}, condition: infrav1.InstanceReadyCondition, reason: infrav1.InstanceConfigurationErrorReason,
			message: `spec.flavor: 2 flavors are named "twin", want exactly one [v1beta2: spec.flavor.filter.name]`},
		{name: "flavor ID that does not exist", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.Flavor, s.FlavorID = nil, ptr.To(missingID)
		}, condition: infrav1.InstanceReadyCondition, reason: infrav1.InstanceConfigurationErrorReason,
			message: "spec.flavorID: flavor " + missingID + " does not exist [v1beta2: spec.flavor.id]"},
		{name: "image ID that does not exist", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.Image = infrav1.ImageParam{ID: ptr.To(missingID)}
		}, condition: infrav1.InstanceReadyCondition, reason: infrav1.InstanceConfigurationErrorReason,
			message: "spec.image.id: image " + missingID + " does not exist"},
		{name: "image filter matching two images", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.Image = infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("twin")}}
		}, condition: infrav1.InstanceReadyCondition, reason: infrav1.InstanceConfigurationErrorReason,
			message: "spec.image.filter: {name=twin} matches 2 images, want exactly one"},
		{name: "image name with a zero-width space", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.Image = infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("ubuntu\u200b")}}
		}, condition: infrav1.InstanceReadyCondition, reason: infrav1.InstanceConfigurationErrorReason,
			message: `spec.image.filter: {name="ubuntu\u200b"} matches 0 images, want exactly one`},
		{name: "server group ID that does not exist", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.ServerGroup = &infrav1.ServerGroupParam{ID: ptr.To(missingID)}
		}, condition: infrav1.InstanceReadyCondition, reason: infrav1.InstanceConfigurationErrorReason,
			message: "spec.serverGroup.id: server group " + missingID + " does not exist"},
		{name: "server group name two groups carry", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.ServerGroup = &infrav1.ServerGroupParam{Filter: &infrav1.ServerGroupFilter{Name: ptr.To("twin")}}
		}, condition: infrav1.InstanceReadyCondition, reason: infrav1.InstanceConfigurationErrorReason,
			message: `spec.serverGroup.filter.name: 2 server groups are named "twin", want exactly one`},
		{name: "SSH key pair that does not exist", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.SSHKeyName = "nobody's-key"
		}, condition: infrav1.InstanceReadyCondition, reason: infrav1.InstanceConfigurationErrorReason,
			message: `spec.sshKeyName: key pair "nobody's-key" does not exist`},
		{name: "security group filter matching two groups", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.SecurityGroups = []infrav1.SecurityGroupParam{{Filter: &infrav1.SecurityGroupFilter{Name: "twin-sg"}}}
		}, condition: infrav1.InstanceReadyCondition, reason: infrav1.InstanceConfigurationErrorReason,
			message: "spec.securityGroups[0].filter: {name=twin-sg} matches 2 security groups, want exactly one"},
		{name: "security group ID that does not exist", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.SecurityGroups = []infrav1.SecurityGroupParam{{ID: ptr.To(missingID)}}
		}, condition: infrav1.InstanceReadyCondition, reason: infrav1.InstanceConfigurationErrorReason,
			message: "spec.securityGroups[0].id: security group " + missingID + " does not exist"},
		{name: "port on a network filter matching two networks", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.Ports = []infrav1.PortOpts{{Network: byName("twin")}}
		}, condition: infrav1.InstanceReadyCondition, reason: infrav1.InstanceConfigurationErrorReason,
			message: "spec.ports[0].network.filter: {name=twin} matches 2 networks, want exactly one"},
	}
}

func dnsEndpoint() *clusterv1.APIEndpoint {
	return &clusterv1.APIEndpoint{Host: "api.hostile.example.com", Port: 6443}
}

// TestHostileSpecsOnlyTheCloudRefutesChangeNothing runs the controller-time part of the hostile
// input corpus (the admission part is test/apivalidation's testdata): specs the API server
// accepts but the cloud shows to be wrong. Each must end in a condition naming the field and the
// value, and the fake OpenStack must hold exactly what it held before the object was created.
func TestHostileSpecsOnlyTheCloudRefutesChangeNothing(t *testing.T) {
	cases := hostileCases()

	// The machine cases share one converged cluster.
	g := NewWithT(t)
	ns := testNamespace("hostile-machines")
	machineCloud := newCloud(t, g, ns)
	addMachineImages(machineCloud)
	addDecoys(t, g, machineCloud)
	provisioned(g, newCluster(g, ns, false, managedSpec(), true))
	markInfrastructureProvisioned(g, ns)
	machineBaseline := machineCloud.Inventory()

	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			var cloud *fakeopenstack.Cloud
			var d decoys
			var baseline []fakeopenstack.Resource
			var obj client.Object
			if tc.cluster != nil {
				ns := testNamespace(fmt.Sprintf("hostile-%d", i))
				cloud = newCloud(t, g, ns)
				d = addDecoys(t, g, cloud)
				if tc.setup != nil {
					tc.setup(cloud)
				}
				baseline = cloud.Inventory()
				spec := managedSpec()
				tc.cluster(d, &spec)
				obj = newCluster(g, ns, false, spec, true)
			} else {
				cloud, baseline = machineCloud, machineBaseline
				obj = newMachine(g, ns, fmt.Sprintf("m%d", i), "az1", false, tc.machine)
			}
			want := strings.NewReplacer("<vip>", d.network,
				"<busy>", fmt.Sprintf("%s is associated with port %s (fixed IP %s)", d.busy.FloatingIP, d.busy.PortID, d.busy.FixedIP)).Replace(tc.message)
			refused(g, obj, tc.condition, tc.reason, want)
			g.Expect(keys(cloud.Inventory())).To(Equal(keys(baseline)), "the cloud is as it was before the object")
		})
	}
}

// keys are an inventory's objects as sorted "kind id name" lines.
func keys(inv []fakeopenstack.Resource) []string {
	out := make([]string, 0, len(inv))
	for _, r := range inv {
		out = append(out, r.String())
	}
	slices.Sort(out)
	return out
}
