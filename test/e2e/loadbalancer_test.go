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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

var _ = Describe("A cluster with a single load balancer", Ordered, func() {
	const additionalPort = 8132
	var (
		name   = "legacy-" + runID
		key    client.ObjectKey
		legacy infrav1.LoadBalancer
		// machines are a control plane machine per zone, in cfg.zones' order.
		machines []string
	)

	BeforeAll(func(ctx SpecContext) {
		// The VIP goes on the first zone's subnet of the load balancer network, as a cluster that
		// is to migrate has it (docs/migration.md).
		key, _ = createCluster(ctx, name, &infrav1.APIServerLoadBalancer{
			Enabled:         ptr.To(true),
			AdditionalPorts: []int{additionalPort},
			Network:         &infrav1.NetworkParam{ID: ptr.To(lbNetwork.NetworkID)},
			Subnets:         []infrav1.SubnetParam{lbNetwork.Mapping[0].Subnet},
		})
	}, NodeTimeout(time.Minute))

	It("gets one load balancer with a listener, pool and monitor per port and a floating IP", func(ctx SpecContext) {
		start := time.Now()
		osc := waitClusterReady(ctx, key, 0)
		GinkgoWriter.Printf("single load balancer cluster ready in %s\n", time.Since(start).Round(100*time.Millisecond))
		Expect(osc.Status.APIServerLoadBalancers).To(BeEmpty(), "no per-zone load balancers in legacy mode")
		legacy = *osc.Status.APIServerLoadBalancer
		expectLoadBalancer(ctx, Default, legacy, loadBalancerName(name, ""), subnetOf(cfg.zones[0]), "", []int{6443, additionalPort})
		Expect(osc.Spec.ControlPlaneEndpoint.Host).To(Equal("api." + name + ".e2e.example.com"))
	}, NodeTimeout(6*time.Minute))

	It("gives a running load balancer a new monitor: the API server port's probes /readyz over HTTPS, every port's monitor gets the new timing", func(ctx SpecContext) {
		start := time.Now()
		updateCluster(ctx, key, func(spec *infrav1.OpenStackClusterSpec) {
			spec.APIServerLoadBalancer.Monitor = &infrav1.APIServerLoadBalancerMonitor{Type: infrav1.MonitorHTTPS, Delay: 7, Timeout: 4, MaxRetries: 2, MaxRetriesDown: 2}
		})
		Eventually(func(g Gomega) {
			got := map[int]string{}
			for port, m := range monitorsOf(ctx, g, legacy.ID) {
				got[port] = fmt.Sprintf("%s %s %s %s %d/%d/%d/%d %s", m.Type, m.HTTPMethod, m.URLPath, m.ExpectedCodes, m.Delay, m.Timeout, m.MaxRetries, m.MaxRetriesDown, m.ProvisioningStatus)
			}
			g.Expect(got).To(Equal(map[int]string{
				6443:           "HTTPS GET /readyz 200 7/4/2/2 ACTIVE",
				additionalPort: "TCP    7/4/2/2 ACTIVE",
			}))
			g.Expect(conditionTrue(getCluster(ctx, g, key).Status.Conditions, infrav1.APIServerLoadBalancersReadyCondition)).To(Succeed())
		}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("monitors replaced and updated in %s\n", time.Since(start).Round(100*time.Millisecond))
	}, NodeTimeout(4*time.Minute))

	It("puts a control plane machine of each zone behind its single load balancer", func(ctx SpecContext) {
		for _, zone := range cfg.zones {
			machines = append(machines, createControlPlaneMachine(ctx, name, zone))
		}
		Eventually(func(g Gomega) {
			g.Expect(observe(ctx, g, legacy.ID).members).To(HaveLen(2))
			for _, m := range machines {
				g.Expect(observe(ctx, g, legacy.ID).members).To(HaveKey(m))
			}
		}).WithTimeout(4 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	}, NodeTimeout(5*time.Minute))

	It("migrates in place to one load balancer per zone: the existing one is renamed, keeps its addresses and every zone's machines until the clients have moved", func(ctx SpecContext) {
		start := time.Now()
		updateCluster(ctx, key, func(spec *infrav1.OpenStackClusterSpec) {
			spec.APIServerLoadBalancer.Subnets = nil
			spec.APIServerLoadBalancer.AvailabilityZoneSubnets = lbNetwork.Mapping
		})
		Eventually(func(g Gomega) {
			osc := expectMigrated(ctx, g, key, name, legacy, []int{6443, additionalPort})
			first := osc.Status.APIServerLoadBalancers[0]
			g.Expect(first.AvailabilityZone).To(Equal(cfg.zones[0]))
			g.Expect(first.FormerSingle).NotTo(BeNil())
			g.Expect(*osc.Status.APIServerLoadBalancer).To(Equal(first), "the legacy field mirrors the first zone's entry")
			// Clients still on the existing address reach both zones' machines.
			expectMembers(ctx, g, key, map[string][]string{cfg.zones[0]: machines, cfg.zones[1]: {machines[1]}}, nil)
		}).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("migrated to two zones in %s\n", time.Since(start).Round(100*time.Millisecond))
		Consistently(func(g Gomega) {
			expectMembers(ctx, g, key, map[string][]string{cfg.zones[0]: machines, cfg.zones[1]: {machines[1]}}, nil)
		}).WithTimeout(15*time.Second).WithPolling(time.Second).Should(Succeed(), "the second zone's machine stays behind the existing address")

		By("annotating that the clients have moved: each zone's machines behind their own zone's load balancer only")
		start = time.Now()
		Eventually(func() error {
			osc := getCluster(ctx, Default, key)
			if osc.Annotations == nil {
				osc.Annotations = map[string]string{}
			}
			osc.Annotations[infrav1.ClientsMovedAnnotation] = "true"
			return kube.Update(ctx, osc)
		}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(getCluster(ctx, g, key).Status.APIServerLoadBalancers[0].FormerSingle).To(BeNil())
			expectMembers(ctx, g, key, map[string][]string{cfg.zones[0]: {machines[0]}, cfg.zones[1]: {machines[1]}}, nil)
		}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("the second zone's machine left the former address %s after the annotation\n", time.Since(start).Round(100*time.Millisecond))
	}, NodeTimeout(10*time.Minute))

	It("deletes exactly the load balancer and floating IP of a zone whose entry is removed", func(ctx SpecContext) {
		osc := getCluster(ctx, Default, key)
		Expect(osc.Status.APIServerLoadBalancers).To(HaveLen(2))
		kept, removed := osc.Status.APIServerLoadBalancers[0], osc.Status.APIServerLoadBalancers[1]
		start := time.Now()
		updateCluster(ctx, key, func(spec *infrav1.OpenStackClusterSpec) {
			spec.APIServerLoadBalancer.AvailabilityZoneSubnets = spec.APIServerLoadBalancer.AvailabilityZoneSubnets[:1]
		})
		Eventually(func(g Gomega) {
			osc := getCluster(ctx, g, key)
			g.Expect(osc.Status.APIServerLoadBalancers).To(HaveLen(1))
			g.Expect(conditionTrue(osc.Status.Conditions, infrav1.APIServerLoadBalancersReadyCondition)).To(Succeed())
			// Nova still offers the removed zone as a control plane failure domain: the cluster
			// says that machines placed there would get no API server traffic.
			fd := meta.FindStatusCondition(osc.Status.Conditions, infrav1.FailureDomainsReadyCondition)
			g.Expect(fd).NotTo(BeNil())
			g.Expect(fd.Reason).To(Equal(infrav1.ControlPlaneFailureDomainWithoutLoadBalancerReason))
			g.Expect(fd.Message).To(ContainSubstring(removed.AvailabilityZone))
			expectGone(ctx, g, removed.ID, removed.IP)
		}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("zone %s removed in %s\n", removed.AvailabilityZone, time.Since(start).Round(100*time.Millisecond))
		osc = getCluster(ctx, Default, key)
		// The same load balancer and addresses (its members' health, read every 30 s, may differ).
		got := osc.Status.APIServerLoadBalancers[0]
		Expect([]string{got.ID, got.Name, got.InternalIP, got.IP, got.AvailabilityZone}).To(Equal([]string{kept.ID, kept.Name, kept.InternalIP, kept.IP, kept.AvailabilityZone}))
		Expect(got.LoadBalancerNetwork).To(Equal(kept.LoadBalancerNetwork))
		expectLoadBalancer(ctx, Default, kept, loadBalancerName(name, cfg.zones[0]), subnetOf(cfg.zones[0]), "", []int{6443, additionalPort})
	}, NodeTimeout(4*time.Minute))

	It("goes back to its single load balancer when the whole mapping is removed: the first zone's is renamed back and keeps its addresses", func(ctx SpecContext) {
		start := time.Now()
		updateCluster(ctx, key, func(spec *infrav1.OpenStackClusterSpec) {
			spec.APIServerLoadBalancer.AvailabilityZoneSubnets = nil
		})
		Eventually(func(g Gomega) {
			osc := getCluster(ctx, g, key)
			g.Expect(osc.Status.APIServerLoadBalancers).To(BeEmpty())
			g.Expect(osc.Status.ZonesReady).To(BeEmpty())
			g.Expect(conditionTrue(osc.Status.Conditions, infrav1.ReadyCondition)).To(Succeed())
			single := osc.Status.APIServerLoadBalancer
			g.Expect(single).NotTo(BeNil())
			g.Expect(single.ID).To(Equal(legacy.ID), "the same load balancer")
			g.Expect([]string{single.InternalIP, single.IP}).To(Equal([]string{legacy.InternalIP, legacy.IP}), "its VIP and floating IP")
			g.Expect(single.AvailabilityZone).To(BeEmpty())
			expectLoadBalancer(ctx, g, *single, loadBalancerName(name, ""), subnetOf(cfg.zones[0]), "", []int{6443, additionalPort})
			members := observe(ctx, g, single.ID).members
			g.Expect(members).To(HaveLen(2), "both zones' machines behind the one load balancer")
			for _, m := range machines {
				g.Expect(members).To(HaveKey(m))
			}
		}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("back to one load balancer in %s\n", time.Since(start).Round(100*time.Millisecond))
	}, NodeTimeout(4*time.Minute))
})

// expectMigrated checks, in the status and in Octavia, a cluster (name) that moved in place from
// its single load balancer legacy to one per zone: legacy serves the first zone under that zone's
// name, with its VIP and floating IP, and the second zone's load balancer is new, in its zone.
// It returns the cluster.
func expectMigrated(ctx context.Context, g Gomega, key client.ObjectKey, name string, legacy infrav1.LoadBalancer, ports []int) *infrav1.OpenStackCluster {
	osc := getCluster(ctx, g, key)
	g.Expect(conditionTrue(osc.Status.Conditions, infrav1.ReadyCondition)).To(Succeed())
	g.Expect(osc.Status.APIServerLoadBalancers).To(HaveLen(2))
	first, second := osc.Status.APIServerLoadBalancers[0], osc.Status.APIServerLoadBalancers[1]
	g.Expect(first.ID).To(Equal(legacy.ID), "the existing load balancer serves the first zone")
	g.Expect(first.InternalIP).To(Equal(legacy.InternalIP))
	g.Expect(first.IP).To(Equal(legacy.IP))
	// Octavia cannot move an existing load balancer to an availability zone: the renamed one
	// keeps none, the new one is created in its zone.
	expectLoadBalancer(ctx, g, first, loadBalancerName(name, cfg.zones[0]), subnetOf(cfg.zones[0]), "", ports)
	expectLoadBalancer(ctx, g, second, loadBalancerName(name, cfg.zones[1]), subnetOf(cfg.zones[1]), cfg.zones[1], ports)
	for i, e := range []infrav1.LoadBalancer{first, second} {
		g.Expect(e.LoadBalancerNetwork).NotTo(BeNil(), "the status names zone %s's load balancer network", cfg.zones[i])
		g.Expect(e.LoadBalancerNetwork.ID).To(Equal(lbNetwork.NetworkID))
		g.Expect(e.LoadBalancerNetwork.Subnets).To(HaveLen(1))
		g.Expect(e.LoadBalancerNetwork.Subnets[0].ID).To(Equal(subnetOf(cfg.zones[i])), "the status names the subnet of zone %s's VIP", cfg.zones[i])
	}
	return osc
}
