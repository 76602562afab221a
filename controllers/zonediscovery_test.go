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
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/attributestags"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cluster-api/util/conditions"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

// retag replaces the tags of a subnet, and touches the OpenStackCluster so that its reconcile
// reads them now rather than at the next poll (requeue.Discovery).
func retag(g *WithT, cloud *fakeopenstack.Cloud, osc *infrav1.OpenStackCluster, subnet string, tags ...string) {
	_, err := cloud.Network().ReplaceAllTags(ctx, "subnets", subnet, attributestags.ReplaceAllOpts{Tags: append([]string{}, tags...)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() error {
		cur := get(g, osc)
		if cur.Annotations == nil {
			cur.Annotations = map[string]string{}
		}
		cur.Annotations["test/retagged"] = subnet + "=" + strings.Join(tags, ",")
		return env.Client.Update(ctx, cur)
	}, eventually, poll).Should(Succeed())
}

func TestZonesFoundByTagFollowTheTags(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("zone-discovery")
	cloud := newCloud(t, g, ns)
	cloud.SetAvailabilityZones("az1", "az2", "az3", "az4")
	n := addLBNetwork(t, g, cloud, "az1")
	zoneTag := func(az string) string { return infrav1.DefaultZoneTagKey + "=" + az }
	// A subnet is the cluster's to use when it carries the cluster's tag beside the zone's.
	mine := ownership.Owner{Kind: "OpenStackCluster", Namespace: ns, Name: "c"}.Tag()
	// az1 is an entry: its subnet's tag, naming another zone, is not looked at.
	_, err := cloud.Network().ReplaceAllTags(ctx, "subnets", n.subnets["az1"], attributestags.ReplaceAllOpts{Tags: []string{zoneTag("az9")}})
	g.Expect(err).NotTo(HaveOccurred())
	az2 := cloud.AddSubnet(n.id, "lb-az2", "10.20.2.0/24", zoneTag("az2"), mine)
	az3a := cloud.AddSubnet(n.id, "lb-az3a", "10.20.3.0/24", zoneTag("az3"), mine)
	az3b := cloud.AddSubnet(n.id, "lb-az3b", "10.20.4.0/24", zoneTag("az3"), "unrelated", mine)
	cloud.AddSubnet(n.id, "lb-other", "10.20.5.0/24", "team=a")
	// Anyone who may make a subnet on the network may tag it for a zone: without the cluster's
	// tag it is never used.
	cloud.AddSubnet(n.id, "lb-az4-someone", "10.20.6.0/24", zoneTag("az4"))

	spec := multiAZSpec(n, "az1")
	spec.APIServerLoadBalancer.ZoneDiscovery = &infrav1.ZoneDiscovery{}
	spec.DisableAPIServerFloatingIP = ptr.To(true) // the new subnets have no router to the external network
	osc := newCluster(g, ns, false, spec, true)

	// az2 is found; az3 is tagged twice: an error naming both subnets, and nothing for az3.
	g.Eventually(func(g Gomega) {
		got := get(g, osc)
		var azs []string
		for _, e := range got.Status.APIServerLoadBalancers {
			azs = append(azs, e.AvailabilityZone)
			if e.AvailabilityZone == "az2" {
				g.Expect(e.LoadBalancerNetwork.Subnets[0].ID).To(Equal(az2))
				g.Expect(e.ProvisioningStatus).To(Equal("ACTIVE"))
			}
		}
		c := conditions.Get(got, infrav1.APIServerLoadBalancersReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.LoadBalancerConfigurationErrorReason))
		g.Expect(c.Message).To(ContainSubstring(fmt.Sprintf(
			"spec.apiServerLoadBalancer.zoneDiscovery: subnets lb-az3a (%s) and lb-az3b (%s) of network lb-net are all tagged topology.kubernetes.io/zone=az3: "+
				"remove the tag from all but one, or map the zone in availabilityZoneSubnets", az3a, az3b)))
		g.Expect(eventReasons(g, ns)).To(ContainElements("DiscoveredZone", "SubnetNotTaggedForCluster"))
		g.Expect(azs).To(Equal([]string{"az1", "az2"}))
	}, eventually, poll).Should(Succeed())
	g.Expect(lbsIn(cloud)).NotTo(HaveKey(zones.Name(ns, "c", "az4")))
	g.Expect(lbsIn(cloud)).NotTo(HaveKey(zones.Name(ns, "c", "az3")))
	g.Expect(lbsIn(cloud)).NotTo(HaveKey(zones.Name(ns, "c", "az9")))

	// One tag removed: az3 is found on the other subnet.
	retag(g, cloud, osc, az3a)
	g.Eventually(func(g Gomega) {
		got := lbReady(g, osc)
		g.Expect(got.Status.APIServerLoadBalancers).To(HaveLen(3))
		g.Expect(got.Status.APIServerLoadBalancers[2].AvailabilityZone).To(Equal("az3"))
		g.Expect(got.Status.APIServerLoadBalancers[2].LoadBalancerNetwork.Subnets[0].ID).To(Equal(az3b))
		g.Expect(got.Status.ZonesReady).To(HaveSuffix("/3"))
	}, eventually, poll).Should(Succeed())

	// A second tag for a zone that runs keeps it where its load balancer is.
	retag(g, cloud, osc, az3a, zoneTag("az3"), mine)
	g.Consistently(func(g Gomega) {
		got := lbReady(g, osc)
		g.Expect(got.Status.APIServerLoadBalancers).To(HaveLen(3))
		g.Expect(got.Status.APIServerLoadBalancers[2].LoadBalancerNetwork.Subnets[0].ID).To(Equal(az3b))
	}, "2s", poll).Should(Succeed())
	retag(g, cloud, osc, az3a)

	// The tag is the mapping: az2's tag removed removes az2, as removing an entry would.
	retag(g, cloud, osc, az2)
	g.Eventually(func(g Gomega) {
		got := lbReady(g, osc)
		var azs []string
		for _, e := range got.Status.APIServerLoadBalancers {
			azs = append(azs, e.AvailabilityZone)
		}
		g.Expect(azs).To(Equal([]string{"az1", "az3"}))
		g.Expect(lbsIn(cloud)).NotTo(HaveKey(zones.Name(ns, "c", "az2")))
	}, eventually, poll).Should(Succeed())
}

func TestZoneDiscoveryAloneWithEveryZoneRefusedIsReported(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("zone-discovery-refused")
	cloud := newCloud(t, g, ns)
	cloud.SetAvailabilityZones("az1")
	n := addLBNetwork(t, g, cloud)
	tag := infrav1.DefaultZoneTagKey + "=az1"
	mine := ownership.Owner{Kind: "OpenStackCluster", Namespace: ns, Name: "c"}.Tag()
	a := cloud.AddSubnet(n.id, "lb-a", "10.20.1.0/24", tag, mine)
	b := cloud.AddSubnet(n.id, "lb-b", "10.20.2.0/24", tag, mine)
	spec := multiAZSpec(n)
	spec.APIServerLoadBalancer.ZoneDiscovery = &infrav1.ZoneDiscovery{}
	spec.DisableAPIServerFloatingIP = ptr.To(true)
	osc := newCluster(g, ns, false, spec, true)
	g.Eventually(func(g Gomega) {
		c := conditions.Get(get(g, osc), infrav1.APIServerLoadBalancersReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.LoadBalancerConfigurationErrorReason))
		g.Expect(c.Message).To(ContainSubstring(fmt.Sprintf("subnets lb-a (%s) and lb-b (%s)", a, b)))
	}, eventually, poll).Should(Succeed())
	g.Expect(lbsIn(cloud)).To(BeEmpty())
}
