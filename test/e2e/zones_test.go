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
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/attributestags"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/internal/localenv"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/framework"
)

// The zone mapping as the cloud must check it (docs/multi-az.md): what only Neutron, Nova and
// Octavia know about the subnets, zones and networks a cluster names.
var _ = Describe("A multi-AZ cluster whose zones the cloud decides", Ordered, func() {
	const (
		userCIDR = "203.0.113.0/24"
		// typo is a zone Nova does not have; twin maps the first zone's subnet a second time.
		typo, twin = "az3", "az5"
	)
	var (
		name = "zones-" + runID
		key  client.ObjectKey
		// zonesNet is this spec's load balancer network: a subnet for the suite's two zones,
		// one for typo, and one that only someone else's zone tag names.
		zonesNet *localenv.LBNetwork
		netName  string
		// nodes are each zone's machine network and subnet, as the operator made them.
		nodeNets, nodeSubnets, nodeCIDRs = map[string]string{}, map[string]string{}, map[string]string{}
		machines                         []string
	)
	subnetName := func(zone string) string {
		_, sn := localenv.LBNetworkNames("capo-e2e-"+runID+"-zones", zone)
		return sn
	}
	subnetID := func(zone string) string {
		for _, m := range zonesNet.Mapping {
			if m.AvailabilityZone == zone {
				return ptr.Deref(m.Subnet.ID, "")
			}
		}
		return ""
	}

	BeforeAll(func(ctx SpecContext) {
		first, second := cfg.zones[0], cfg.zones[1]
		var err error
		zonesNet, err = localenv.EnsureLBNetwork(ctx, openstack, "capo-e2e-"+runID+"-zones", 43, []string{first, second, typo, "az4"})
		DeferCleanup(func(ctx SpecContext) { Expect(zonesNet.Delete(ctx, openstack)).To(Succeed()) }, NodeTimeout(2*time.Minute))
		Expect(err).NotTo(HaveOccurred())
		netName, _ = localenv.LBNetworkNames("capo-e2e-"+runID+"-zones", "")

		// The second zone is found by its tags: the zone's and the cluster's mark. The fourth
		// subnet carries a zone tag alone, as anyone who may make a subnet there could.
		mine := ownership.Owner{Kind: "OpenStackCluster", Namespace: namespace, Name: name}.Tag()
		_, err = openstack.Network.ReplaceAllTags(ctx, "subnets", subnetID(second), attributestags.ReplaceAllOpts{Tags: []string{infrav1.DefaultZoneTagKey + "=" + second, mine}})
		Expect(err).NotTo(HaveOccurred())
		_, err = openstack.Network.ReplaceAllTags(ctx, "subnets", subnetID("az4"), attributestags.ReplaceAllOpts{Tags: []string{infrav1.DefaultZoneTagKey + "=az4"}})
		Expect(err).NotTo(HaveOccurred())

		// Each zone's machines have a network of their own (spec.availabilityZoneMachineSubnets).
		for i, zone := range cfg.zones {
			n, err := openstack.Network.CreateNetwork(ctx, networks.CreateOpts{Name: fmt.Sprintf("capo-e2e-%s-nodes-%s", runID, zone)})
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(func(ctx SpecContext) { Expect(openstack.Network.DeleteNetwork(ctx, n.ID)).To(Succeed()) }, NodeTimeout(time.Minute))
			sn, err := openstack.Network.CreateSubnet(ctx, subnets.CreateOpts{NetworkID: n.ID, Name: n.Name, IPVersion: 4, CIDR: fmt.Sprintf("10.43.%d.0/24", 11+i)})
			Expect(err).NotTo(HaveOccurred())
			nodeNets[zone], nodeSubnets[zone], nodeCIDRs[zone] = n.ID, sn.ID, sn.CIDR
		}

		key, _ = createCluster(ctx, name, &infrav1.APIServerLoadBalancer{
			Enabled: ptr.To(true),
			Network: &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: netName}},
			AvailabilityZoneSubnets: []infrav1.AZSubnetMapping{
				{AvailabilityZone: first, Subnet: infrav1.SubnetParam{ID: ptr.To(subnetID(first))}},
				{AvailabilityZone: typo, Subnet: infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{Name: subnetName(typo)}}},
				// The first zone's subnet again, by another selector: two load balancers would
				// share a VIP subnet.
				{AvailabilityZone: twin, Subnet: infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{Name: subnetName(first)}}},
			},
			ZoneDiscovery: &infrav1.ZoneDiscovery{},
			AllowedCIDRs:  []string{userCIDR},
			DNS:           &infrav1.APIServerDNS{Publish: infrav1.DNSPublishDNSEndpoint, TTL: 30},
		}, func(spec *infrav1.OpenStackClusterSpec) {
			for _, zone := range cfg.zones {
				spec.AvailabilityZoneMachineSubnets = append(spec.AvailabilityZoneMachineSubnets, infrav1.ZoneMachineSubnet{
					AvailabilityZone: zone,
					Network:          &infrav1.NetworkParam{ID: ptr.To(nodeNets[zone])},
					Subnet:           infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{CIDR: nodeCIDRs[zone]}},
				})
			}
		})
	}, NodeTimeout(2*time.Minute))

	It("makes a load balancer for each zone it may use, found by ID, filter or tag, and says why the others get none", func(ctx SpecContext) {
		first, second := cfg.zones[0], cfg.zones[1]
		start := time.Now()
		Eventually(func(g Gomega) {
			osc := getCluster(ctx, g, key)
			g.Expect(osc.Status.Initialization).NotTo(BeNil())
			g.Expect(osc.Status.Initialization.Provisioned).To(HaveValue(BeTrue()), "machines may start once a zone is ready")
			var zones []string
			for _, e := range osc.Status.APIServerLoadBalancers {
				zones = append(zones, e.AvailabilityZone)
				g.Expect(e.ProvisioningStatus).To(Equal("ACTIVE"), "the load balancer of %s", e.AvailabilityZone)
			}
			// Entries first, in spec order, then the zones found by tag.
			g.Expect(zones).To(Equal([]string{first, typo, second}))

			lbs := conditionOf(osc, infrav1.APIServerLoadBalancersReadyCondition)
			g.Expect(lbs).NotTo(BeNil())
			g.Expect(lbs.Reason).To(Equal(infrav1.LoadBalancerConfigurationErrorReason))
			g.Expect(lbs.Message).To(ContainSubstring(fmt.Sprintf(
				"spec.apiServerLoadBalancer.availabilityZoneSubnets[2].subnet: resolves to subnet %s (%s), which availabilityZoneSubnets[0] (zone %s) already maps: each zone needs a subnet of its own",
				subnetName(first), subnetID(first), first)))
			domains := conditionOf(osc, infrav1.FailureDomainsReadyCondition)
			g.Expect(domains).NotTo(BeNil())
			g.Expect(domains.Reason).To(Equal(infrav1.LoadBalancerZoneWithoutComputeReason))
			// The twin's zone is none of Nova's either.
			g.Expect(domains.Message).To(ContainSubstring("maps zones " + typo + ", " + twin + ", which Nova does not have (its zones: " + strings.Join(cfg.zones, ", ") + ")"))
		}).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("three zones' load balancers active in %s\n", time.Since(start).Round(100*time.Millisecond))

		osc := getCluster(ctx, Default, key)
		Eventually(func(g Gomega) {
			for _, e := range osc.Status.APIServerLoadBalancers {
				want := subnetID(e.AvailabilityZone)
				// Octavia has no zone of typo's name: its load balancer is made without the hint.
				octaviaZone := e.AvailabilityZone
				if octaviaZone == typo {
					octaviaZone = ""
				}
				expectLoadBalancer(ctx, g, e, loadBalancerName(name, e.AvailabilityZone), want, octaviaZone, []int{6443})
				g.Expect(e.LoadBalancerNetwork).NotTo(BeNil())
				g.Expect(e.LoadBalancerNetwork.ID).To(Equal(zonesNet.NetworkID))
				g.Expect(e.LoadBalancerNetwork.Name).To(Equal(netName))
				g.Expect(e.LoadBalancerNetwork.Subnets).To(HaveLen(1))
				g.Expect(e.LoadBalancerNetwork.Subnets[0].ID).To(Equal(want), "the VIP subnet of %s", e.AvailabilityZone)
			}
		}).WithTimeout(time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		Expect(eventReasons(ctx, Default, name)).To(ContainElements("DiscoveredZone", "SubnetNotTaggedForCluster", "OmittedAvailabilityZoneHint"))
		// Nothing was made for the twin, nor for the zone the foreign tag names.
		for _, zone := range []string{twin, "az4"} {
			found, err := openstack.LoadBalancer.ListLoadBalancers(ctx, loadbalancers.ListOpts{Name: loadBalancerName(name, zone)})
			Expect(err).NotTo(HaveOccurred())
			Expect(found).To(BeEmpty(), "no load balancer for %s", zone)
		}
	}, NodeTimeout(7*time.Minute))

	It("puts each zone's machines on the zone's subnet, admits those subnets to the API, and publishes only zones that serve", func(ctx SpecContext) {
		start := time.Now()
		for _, zone := range cfg.zones {
			machines = append(machines, createControlPlaneMachine(ctx, name, zone))
		}
		addresses := map[string]string{}
		Eventually(func(g Gomega) {
			for i, zone := range cfg.zones {
				osm := &infrav1.OpenStackMachine{}
				g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: machines[i]}, osm)).To(Succeed())
				g.Expect(conditionTrue(osm.Status.Conditions, infrav1.APIServerIngressReadyCondition)).To(Succeed())
				found, err := openstack.Network.ListPorts(ctx, ports.ListOpts{DeviceID: ptr.Deref(osm.Status.InstanceID, "")})
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(found).To(HaveLen(1))
				g.Expect(found[0].NetworkID).To(Equal(nodeNets[zone]), "the port of %s is on its zone's network", machines[i])
				g.Expect(found[0].FixedIPs).To(HaveLen(1))
				g.Expect(found[0].FixedIPs[0].SubnetID).To(Equal(nodeSubnets[zone]))
				addresses[machines[i]] = found[0].FixedIPs[0].IPAddress
			}
			osc := getCluster(ctx, g, key)
			for _, e := range osc.Status.APIServerLoadBalancers {
				var want []string
				if i := slices.Index(cfg.zones, e.AvailabilityZone); i >= 0 {
					want = []string{machines[i]}
				}
				o := observe(ctx, g, e.ID)
				var names []string
				for member, addrs := range o.members {
					names = append(names, member)
					g.Expect(addrs).To(Equal([]string{addresses[member]}))
				}
				g.Expect(names).To(ConsistOf(want), "members of %s", e.Name)
				for _, member := range want {
					g.Expect(o.memberSubnets).To(HaveKeyWithValue(member, nodeSubnets[e.AvailabilityZone]), "Octavia reaches member %s through its zone's subnet", member)
				}
			}
		}).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("machines on their zones' subnets and members in %s\n", time.Since(start).Round(100*time.Millisecond))

		osc := getCluster(ctx, Default, key)
		Expect(osc.Status.Router).NotTo(BeNil())
		Expect(osc.Status.Network).NotTo(BeNil())
		want := []string{userCIDR, osc.Status.Network.Subnets[0].CIDR, nodeCIDRs[cfg.zones[0]], nodeCIDRs[cfg.zones[1]]}
		for _, ip := range osc.Status.Router.IPs {
			want = append(want, ip+"/32")
		}
		for _, e := range osc.Status.APIServerLoadBalancers {
			Expect(listenerCIDRs(ctx, Default, e.ID)).To(ConsistOf(want), "the allowed CIDRs of %s's listener admit the zones' machine subnets", e.AvailabilityZone)
		}

		// typo's load balancer has no member and never will: its address is not published.
		var serving []string
		for _, e := range osc.Status.APIServerLoadBalancers {
			if e.AvailabilityZone != typo {
				serving = append(serving, e.IP)
			}
		}
		record := &unstructured.Unstructured{}
		record.SetGroupVersionKind(schema.GroupVersionKind{Group: "externaldns.k8s.io", Version: "v1alpha1", Kind: "DNSEndpoint"})
		Eventually(func(g Gomega) {
			g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name + "-apiserver"}, record)).To(Succeed())
			g.Expect(endpointTargets(record)).To(ConsistOf(serving))
		}).WithTimeout(2 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	}, NodeTimeout(8*time.Minute))

	It("is deleted with nothing left when its Cluster was force-deleted first", func(ctx SpecContext) {
		for _, m := range machines {
			machine := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: m}}
			Expect(kube.Delete(ctx, machine)).To(Succeed())
			waitGone(ctx, machine)
		}
		start := time.Now()
		cluster := &clusterv1.Cluster{}
		Expect(kube.Get(ctx, key, cluster)).To(Succeed())
		Expect(kube.Patch(ctx, cluster, client.RawPatch(client.Merge.Type(), []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
		Expect(kube.Delete(ctx, cluster)).To(Succeed())
		waitGone(ctx, cluster)
		// The garbage collector deletes the OpenStackCluster its Cluster owned.
		waitGone(ctx, &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}})
		GinkgoWriter.Printf("OpenStackCluster of a force-deleted Cluster deleted in %s\n", time.Since(start).Round(100*time.Millisecond))
		// The cleanup compares the project with what it held before the cluster.
	}, NodeTimeout(8*time.Minute))
})

var _ = Describe("A multi-AZ cluster naming an external network for its load balancers", func() {
	It("is refused with the network named, and makes no load balancer", func(ctx SpecContext) {
		name := "extlb-" + runID
		key, baseline := createCluster(ctx, name, &infrav1.APIServerLoadBalancer{
			Enabled:                 ptr.To(true),
			Network:                 &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: cfg.externalNetwork}},
			AvailabilityZoneSubnets: lbNetwork.Mapping,
		})
		Eventually(func(g Gomega) {
			c := conditionOf(getCluster(ctx, g, key), infrav1.APIServerLoadBalancersReadyCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(infrav1.LoadBalancerConfigurationErrorReason))
			g.Expect(c.Message).To(MatchRegexp(`spec\.apiServerLoadBalancer\.network: network %s \([0-9a-f-]+\) is an external network \(router:external\)`, cfg.externalNetwork))
		}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		Consistently(func(g Gomega) {
			now, err := framework.TakeInventory(ctx, openstack)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(filter(now.Since(baseline), "load balancer ")).To(BeEmpty())
			g.Expect(filter(now.Since(baseline), "floating IP ")).To(BeEmpty())
		}).WithTimeout(10 * time.Second).WithPolling(2 * time.Second).Should(Succeed())
	}, NodeTimeout(6*time.Minute))
})

func conditionOf(osc *infrav1.OpenStackCluster, t string) *metav1.Condition {
	for i := range osc.Status.Conditions {
		if osc.Status.Conditions[i].Type == t {
			return &osc.Status.Conditions[i]
		}
	}
	return nil
}

// eventReasons are the reasons of the events about the OpenStackCluster called name.
func eventReasons(ctx context.Context, g Gomega, name string) []string {
	list := &corev1.EventList{}
	g.Expect(kube.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "OpenStackCluster" && e.InvolvedObject.Name == name {
			out = append(out, e.Reason)
		}
	}
	return out
}

// listenerCIDRs are the allowed CIDRs of the listener of load balancer id (it has one).
func listenerCIDRs(ctx context.Context, g Gomega, id string) []string {
	tree, err := openstack.LoadBalancer.GetLoadBalancerStatuses(ctx, id)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tree.Loadbalancer.Listeners).To(HaveLen(1))
	l, err := openstack.LoadBalancer.GetListener(ctx, tree.Loadbalancer.Listeners[0].ID)
	g.Expect(err).NotTo(HaveOccurred())
	return l.AllowedCIDRs
}
