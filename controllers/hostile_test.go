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

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	fakeopenstack "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients/fake"
)

// missingID is a well-formed ID that nothing in the fake has.
const missingID = "5e1f0c3a-0000-4000-8000-00000000dead"

// decoys is what the hostile cases point at: twins (two objects of a kind with one name) that a
// filter by that name matches at once, and a network with two subnets of one name.
type decoys struct {
	network string // a network with two subnets named "twin-subnet"
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
	// want are what one condition's message must all contain: the field and the value.
	want []string
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
		}, want: []string{"spec.externalNetwork.id", missingID}},
		{name: "external network filter matching two networks", setup: func(cloud *fakeopenstack.Cloud) {
			// Not among the decoys: two more external networks would leave every other spec's
			// external network ambiguous.
			cloud.AddNetwork("ext-twin", true)
			cloud.AddNetwork("ext-twin", true)
		}, cluster: func(_ decoys, s *infrav1.OpenStackClusterSpec) {
			s.ExternalNetwork = byName("ext-twin")
		}, want: []string{"spec.externalNetwork", "ext-twin", "2"}},
		{name: "external network filter with control characters and unicode", cluster: func(_ decoys, s *infrav1.OpenStackClusterSpec) {
			s.ExternalNetwork = byName("pub\tlic\u200b☃")
		}, want: []string{"spec.externalNetwork", "pub\\tlic\\u200b☃"}},
		{name: "network ID that does not exist", cluster: func(_ decoys, s *infrav1.OpenStackClusterSpec) {
			s.ManagedSubnets, s.Network = nil, &infrav1.NetworkParam{ID: ptr.To(missingID)}
		}, want: []string{"spec.network.id", missingID}},
		{name: "network filter matching two networks", cluster: func(_ decoys, s *infrav1.OpenStackClusterSpec) {
			s.ManagedSubnets, s.Network = nil, byName("twin")
		}, want: []string{"spec.network", "twin", "2 networks"}},
		{name: "network filter in another script", cluster: func(_ decoys, s *infrav1.OpenStackClusterSpec) {
			s.ManagedSubnets, s.Network = nil, byName("сеть-網絡")
		}, want: []string{"spec.network", "сеть-網絡", "0 networks"}},
		{name: "subnet filter matching two subnets", cluster: func(d decoys, s *infrav1.OpenStackClusterSpec) {
			s.ManagedSubnets, s.Network = nil, &infrav1.NetworkParam{ID: ptr.To(d.network)}
			s.Subnets = []infrav1.SubnetParam{subnetByName("twin-subnet")}
		}, want: []string{"spec.subnets[0]", "twin-subnet", "2"}},
		{name: "subnet ID that does not exist", cluster: func(d decoys, s *infrav1.OpenStackClusterSpec) {
			s.ManagedSubnets, s.Network = nil, &infrav1.NetworkParam{ID: ptr.To(d.network)}
			s.Subnets = []infrav1.SubnetParam{{ID: ptr.To(missingID)}}
		}, want: []string{"spec.subnets[0].id", missingID}},
		{name: "router ID that does not exist", cluster: func(_ decoys, s *infrav1.OpenStackClusterSpec) {
			s.Router = &infrav1.RouterParam{ID: ptr.To(missingID)}
		}, want: []string{"spec.router.id", missingID}},
		{name: "router filter matching two routers", cluster: func(_ decoys, s *infrav1.OpenStackClusterSpec) {
			s.Router = &infrav1.RouterParam{Filter: &infrav1.RouterFilter{Name: "twin-router"}}
		}, want: []string{"spec.router.filter", "twin-router", "2 routers"}},
		{name: "load balancer network filter matching two networks", cluster: func(_ decoys, s *infrav1.OpenStackClusterSpec) {
			lb(s).Network = byName("twin")
		}, want: []string{"spec.apiServerLoadBalancer.network", "twin", "2 networks"}},
		{name: "load balancer subnet filter matching two subnets", cluster: func(d decoys, s *infrav1.OpenStackClusterSpec) {
			l := lb(s)
			l.Network = &infrav1.NetworkParam{ID: ptr.To(d.network)}
			l.Subnets = []infrav1.SubnetParam{subnetByName("twin-subnet")}
		}, want: []string{"spec.apiServerLoadBalancer.subnets[0]", "twin-subnet", "2"}},
		{name: "zone subnet filter matching two subnets", cluster: func(d decoys, s *infrav1.OpenStackClusterSpec) {
			l := lb(s)
			l.Network = &infrav1.NetworkParam{ID: ptr.To(d.network)}
			l.AvailabilityZoneSubnets = []infrav1.AZSubnetMapping{{AvailabilityZone: "az1", Subnet: subnetByName("twin-subnet")}}
			s.ControlPlaneEndpoint = dnsEndpoint()
		}, want: []string{"spec.apiServerLoadBalancer.availabilityZoneSubnets[0].subnet", "twin-subnet", "2"}},
		{name: "zone subnet ID that does not exist", cluster: func(d decoys, s *infrav1.OpenStackClusterSpec) {
			l := lb(s)
			l.Network = &infrav1.NetworkParam{ID: ptr.To(d.network)}
			l.AvailabilityZoneSubnets = []infrav1.AZSubnetMapping{{AvailabilityZone: "az1", Subnet: infrav1.SubnetParam{ID: ptr.To(missingID)}}}
			s.ControlPlaneEndpoint = dnsEndpoint()
		}, want: []string{"spec.apiServerLoadBalancer.availabilityZoneSubnets[0].subnet.id", missingID}},
		{name: "load balancer flavor Octavia does not have", cluster: func(_ decoys, s *infrav1.OpenStackClusterSpec) {
			lb(s).Flavor = ptr.To("amphora-ultra")
		}, want: []string{"spec.apiServerLoadBalancer.flavor", "amphora-ultra"}},

		{name: "flavor that does not exist", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.Flavor = ptr.To("m9.colossal")
		}, want: []string{"spec.flavor", "m9.colossal"}},
		{name: "flavor name two flavors carry", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.Flavor = ptr.To("twin")
		}, want: []string{"spec.flavor", "twin", "2 flavors"}},
		{name: "flavor ID that does not exist", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.Flavor, s.FlavorID = nil, ptr.To(missingID)
		}, want: []string{"spec.flavorID", missingID}},
		{name: "image ID that does not exist", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.Image = infrav1.ImageParam{ID: ptr.To(missingID)}
		}, want: []string{"spec.image.id", missingID}},
		{name: "image filter matching two images", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.Image = infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("twin")}}
		}, want: []string{"spec.image.filter", "twin", "2 images"}},
		{name: "image name with a zero-width space", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.Image = infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("ubuntu\u200b")}}
		}, want: []string{"spec.image.filter", "0 images"}},
		{name: "server group ID that does not exist", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.ServerGroup = &infrav1.ServerGroupParam{ID: ptr.To(missingID)}
		}, want: []string{"spec.serverGroup.id", missingID}},
		{name: "server group name two groups carry", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.ServerGroup = &infrav1.ServerGroupParam{Filter: &infrav1.ServerGroupFilter{Name: ptr.To("twin")}}
		}, want: []string{"spec.serverGroup.filter.name", "twin", "2 server groups"}},
		{name: "SSH key pair that does not exist", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.SSHKeyName = "nobody's-key"
		}, want: []string{"spec.sshKeyName", "nobody's-key"}},
		{name: "security group filter matching two groups", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.SecurityGroups = []infrav1.SecurityGroupParam{{Filter: &infrav1.SecurityGroupFilter{Name: "twin-sg"}}}
		}, want: []string{"spec.securityGroups[0]", "twin-sg", "2 security groups"}},
		{name: "security group ID that does not exist", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.SecurityGroups = []infrav1.SecurityGroupParam{{ID: ptr.To(missingID)}}
		}, want: []string{"spec.securityGroups[0].id", missingID}},
		{name: "port on a network filter matching two networks", machine: func(s *infrav1.OpenStackMachineSpec) {
			s.Ports = []infrav1.PortOpts{{Network: byName("twin")}}
		}, want: []string{"spec.ports[0].network", "twin", "2 networks"}},
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
	ns := "hostile-machines"
	machineCloud := newCloud(t, g, ns)
	addMachineImages(machineCloud)
	addDecoys(t, g, machineCloud)
	osc := newCluster(g, ns, false, managedSpec(), true)
	g.Eventually(func(g Gomega) {
		got := get(g, osc)
		g.Expect(got.Status.Initialization).NotTo(BeNil(), "conditions: %v", got.Status.Conditions)
		g.Expect(got.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
	}, eventually, poll).Should(Succeed())
	markInfrastructureProvisioned(g, ns)
	machineBaseline := machineCloud.Inventory()

	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			var cloud *fakeopenstack.Cloud
			var baseline []fakeopenstack.Resource
			var conds func(Gomega) []metav1.Condition
			if tc.cluster != nil {
				ns := fmt.Sprintf("hostile-%d", i)
				cloud = newCloud(t, g, ns)
				d := addDecoys(t, g, cloud)
				if tc.setup != nil {
					tc.setup(cloud)
				}
				baseline = cloud.Inventory()
				spec := managedSpec()
				tc.cluster(d, &spec)
				osc := newCluster(g, ns, false, spec, true)
				conds = func(g Gomega) []metav1.Condition { return get(g, osc).Status.Conditions }
			} else {
				cloud, baseline = machineCloud, machineBaseline
				osm := newMachine(g, ns, fmt.Sprintf("m%d", i), "az1", false, tc.machine)
				conds = func(g Gomega) []metav1.Condition { return getMachine(g, osm).Status.Conditions }
			}
			g.Eventually(func(g Gomega) {
				var messages []string
				for _, c := range conds(g) {
					if c.Status == metav1.ConditionFalse && containsAll(c.Message, tc.want) {
						return
					}
					messages = append(messages, c.Type+": "+c.Message)
				}
				g.Expect(messages).To(BeEmpty(), "no False condition names %q", tc.want)
			}, eventually, poll).Should(Succeed())
			g.Expect(keys(cloud.Inventory())).To(Equal(keys(baseline)), "the cloud is as it was before the object")
		})
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
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
