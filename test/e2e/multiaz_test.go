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
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/collections"
	"sigs.k8s.io/cluster-api/util/failuredomains"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/framework"
)

var _ = Describe("A multi-AZ cluster with control plane machines", Ordered, func() {
	const additionalPort = 9345
	var (
		name     = "multiaz-" + runID
		baseline framework.Inventory
		key      client.ObjectKey
		// machines are the control plane machines' names, one per zone in cfg.zones' order.
		machines []string
		// zoneFIP is the floating IP the operator allocated for the second zone's load balancer.
		zoneFIP string
	)

	BeforeAll(func(ctx SpecContext) {
		// The second zone gets an address allocated beforehand (the first gets one from the
		// provider); it is the operator's, released here after the cluster is gone.
		zoneFIP = allocateFloatingIP(ctx)
		mapping := append([]infrav1.AZSubnetMapping(nil), lbNetwork.Mapping...)
		mapping[1].FloatingIP = ptr.To(zoneFIP)
		key, baseline = createCluster(ctx, name, &infrav1.APIServerLoadBalancer{
			Enabled:                 ptr.To(true),
			AdditionalPorts:         []int{additionalPort},
			Network:                 &infrav1.NetworkParam{ID: ptr.To(lbNetwork.NetworkID)},
			AvailabilityZoneSubnets: mapping,
			DNS:                     &infrav1.APIServerDNS{Publish: infrav1.DNSPublishDNSEndpoint, TTL: 30},
			WithdrawFailedZones:     ptr.To(true),
		})
	}, NodeTimeout(time.Minute))

	It("gets one load balancer per zone, each with its VIP on the zone's subnet and a floating IP", func(ctx SpecContext) {
		start := time.Now()
		osc := waitClusterReady(ctx, key, 2)
		GinkgoWriter.Printf("two-zone cluster ready in %s\n", time.Since(start).Round(100*time.Millisecond))
		Eventually(func(g Gomega) {
			lbs := getCluster(ctx, g, key).Status.APIServerLoadBalancers
			g.Expect(lbs).To(HaveLen(2))
			for i, zone := range cfg.zones {
				g.Expect(lbs[i].AvailabilityZone).To(Equal(zone))
				expectLoadBalancer(ctx, g, lbs[i], loadBalancerName(name, zone), subnetOf(zone), zone, []int{6443, additionalPort})
			}
		}).WithTimeout(time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		Expect(*osc.Status.APIServerLoadBalancer).To(Equal(osc.Status.APIServerLoadBalancers[0]), "the legacy field mirrors the first zone's entry")
		Expect(osc.Spec.ControlPlaneEndpoint.Host).To(Equal("api."+name+".e2e.example.com"), "the DNS endpoint is kept, not replaced by an address")
		Expect(osc.Status.APIServerLoadBalancers[1].IP).To(Equal(zoneFIP), "the second zone has the floating IP allocated for it")
		// Exactly two load balancers carry the cluster's name.
		now := takeInventory(ctx)
		Expect(filter(now.Since(baseline), "load balancer ")).To(HaveLen(2))
	}, NodeTimeout(6*time.Minute))

	It("shows the operator the cluster in kubectl get, and every metric the dashboard queries", func(ctx SpecContext) {
		osc := waitClusterReady(ctx, key, 2)
		Eventually(func(g Gomega) {
			expectTableRow(ctx, g, key, map[string]any{"Name": name, "Cluster": name, "Ready": "True",
				"Endpoint": osc.Spec.ControlPlaneEndpoint.Host, "Zones": "2/2"})
		}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		queried, err := framework.DashboardMetrics(dashboardPath())
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			exported := exportedMetrics(ctx, g)
			var missing []string
			for _, m := range queried {
				if !exported[m] {
					missing = append(missing, m)
				}
			}
			g.Expect(missing).To(BeEmpty(), "metrics the dashboard queries that the manager does not export")
		}).WithTimeout(time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	}, NodeTimeout(3*time.Minute))

	It("puts each zone's control plane machine in its zone, behind its zone's load balancer only", func(ctx SpecContext) {
		start := time.Now()
		for _, zone := range cfg.zones {
			machines = append(machines, createControlPlaneMachine(ctx, name, zone))
		}
		addresses := map[string]string{}
		Eventually(func(g Gomega) {
			for i, zone := range cfg.zones {
				osm := &infrav1.OpenStackMachine{}
				g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: machines[i]}, osm)).To(Succeed())
				g.Expect(osm.Status.Initialization).NotTo(BeNil())
				g.Expect(osm.Status.Initialization.Provisioned).To(HaveValue(BeTrue()), "machine %s provisioned", machines[i])
				g.Expect(conditionTrue(osm.Status.Conditions, infrav1.APIServerIngressReadyCondition)).To(Succeed())
				server, err := openstack.Compute.GetServer(ctx, ptr.Deref(osm.Status.InstanceID, ""))
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(server.AvailabilityZone).To(Equal(zone), "the server of %s is in its failure domain", machines[i])
				addresses[machines[i]] = internalIP(osm)
			}
			expectMembers(ctx, g, key, map[string][]string{
				cfg.zones[0]: {machines[0]},
				cfg.zones[1]: {machines[1]},
			}, addresses)
		}).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("two control plane machines running and members of their zone's load balancer in %s\n", time.Since(start).Round(100*time.Millisecond))

		By("allowing cross-AZ members: every load balancer gets every control plane machine")
		start = time.Now()
		updateCluster(ctx, key, func(spec *infrav1.OpenStackClusterSpec) {
			spec.APIServerLoadBalancer.AllowCrossAZLoadBalancerMembers = ptr.To(true)
		})
		Eventually(func(g Gomega) {
			expectMembers(ctx, g, key, map[string][]string{cfg.zones[0]: machines, cfg.zones[1]: machines}, addresses)
		}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("cross-AZ members on in %s\n", time.Since(start).Round(100*time.Millisecond))

		By("turning cross-AZ members off again: back to same-zone members")
		start = time.Now()
		updateCluster(ctx, key, func(spec *infrav1.OpenStackClusterSpec) {
			spec.APIServerLoadBalancer.AllowCrossAZLoadBalancerMembers = ptr.To(false)
		})
		Eventually(func(g Gomega) {
			expectMembers(ctx, g, key, map[string][]string{cfg.zones[0]: {machines[0]}, cfg.zones[1]: {machines[1]}}, addresses)
		}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("cross-AZ members off in %s\n", time.Since(start).Round(100*time.Millisecond))
	}, NodeTimeout(12*time.Minute))

	It("publishes the zones that serve in DNS, withdraws a zone whose control plane is down, and publishes it again", func(ctx SpecContext) {
		osc := getCluster(ctx, Default, key)
		host := osc.Spec.ControlPlaneEndpoint.Host
		first, second := osc.Status.APIServerLoadBalancers[0].IP, osc.Status.APIServerLoadBalancers[1].IP
		start := time.Now()
		waitDNS(ctx, host, first, second)
		GinkgoWriter.Printf("DNS answers both zones %s after the machines were ready\n", time.Since(start).Round(100*time.Millisecond))

		By("stopping the second zone's control plane server in Nova")
		server := serverOf(ctx, machines[1])
		compute := computeClient(ctx)
		Expect(servers.Stop(ctx, compute, server).ExtractErr()).To(Succeed())
		// The outage starts when Nova has stopped the server, not when it was asked to: how long
		// Nova takes is not the provider's.
		Eventually(func(g Gomega) {
			sv, err := servers.Get(ctx, compute, server).Extract()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(sv.Status).To(Equal("SHUTOFF"))
		}).WithTimeout(2 * time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())
		fault := time.Now()
		watch := watchDNS(ctx, host, first)
		timeline := failoverTimeline(ctx, key, name, 1, fault)
		waitDNS(ctx, host, first)
		withdrawn := time.Since(fault)
		detected, noticed, published := timeline()
		GinkgoWriter.Printf("failover of zone %s: Octavia reports it down %s after the stop, the status %s, the DNSEndpoint %s, the DNS server %s; clients follow within the records' TTL (%ds)\n",
			cfg.zones[1], detected.Round(100*time.Millisecond), noticed.Round(100*time.Millisecond), published.Round(100*time.Millisecond), withdrawn.Round(100*time.Millisecond), osc.Spec.APIServerLoadBalancer.DNS.TTL)
		Expect(detected).NotTo(BeZero(), "Octavia reported the zone's load balancer down")
		Expect(published).NotTo(BeZero(), "the DNSEndpoint left the zone out")
		Expect(published-detected).To(BeNumerically("<=", 30*time.Second), "from detection to withdrawal within 30 s")
		Eventually(func(g Gomega) {
			got := getCluster(ctx, g, key)
			g.Expect(got.Status.APIServerLoadBalancers[1].Healthy).To(HaveValue(BeFalse()))
			g.Expect(got.Status.ZonesReady).To(Equal("1/2"))
			g.Expect(conditionTrue(got.Status.Conditions, infrav1.APIServerLoadBalancersReadyCondition)).To(MatchError(ContainSubstring(cfg.zones[1])))
		}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		GinkgoWriter.Printf("zone %s withdrawn from DNS %s after its server was stopped\n", cfg.zones[1], withdrawn.Round(100*time.Millisecond))
		Expect(withdrawn).To(BeNumerically("<", 45*time.Second), "a dead zone leaves DNS within the health poll, ExternalDNS's sync and Octavia's health checks")

		By("withdrawing the dead zone's failure domain from control plane machines, in the Cluster too")
		var placed string
		Eventually(func(g Gomega) {
			got := getCluster(ctx, g, key)
			g.Expect(got.Status.APIServerLoadBalancers[1].FailureDomainWithdrawal).NotTo(BeNil())
			cp := controlPlaneFailureDomains(ctx, g, name)
			g.Expect(cp).To(HaveLen(1))
			g.Expect(cp[0].Name).To(Equal(cfg.zones[0]))
			// As KubeadmControlPlane replaces a remediated machine: the dead zone's machine gone,
			// the new one goes where the fewest machines are among the control plane failure
			// domains. Without the withdrawal that is the dead zone, which has none left.
			alive := &clusterv1.Machine{}
			g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: machines[0]}, alive)).To(Succeed())
			placed = failuredomains.PickFewest(ctx, cp, collections.FromMachines(alive), collections.FromMachines(alive))
		}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		GinkgoWriter.Printf("zone %s withdrawn from control plane machines %s after its server was stopped\n", cfg.zones[1], time.Since(fault).Round(100*time.Millisecond))
		Expect(placed).To(Equal(cfg.zones[0]), "a replacement control plane machine is placed in the zone that serves")

		By("creating the replacement control plane machine there: it lands in the zone that serves")
		replacement := name + "-cp-replacement"
		createMachine(ctx, namespace, name, replacement, placed, true)
		Eventually(func(g Gomega) {
			osm := &infrav1.OpenStackMachine{}
			g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: replacement}, osm)).To(Succeed())
			g.Expect(osm.Status.Initialization).NotTo(BeNil())
			g.Expect(osm.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
			sv, err := openstack.Compute.GetServer(ctx, ptr.Deref(osm.Status.InstanceID, ""))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(sv.AvailabilityZone).To(Equal(cfg.zones[0]))
			expectMembers(ctx, g, key, map[string][]string{cfg.zones[0]: {machines[0], replacement}, cfg.zones[1]: {machines[1]}}, nil)
		}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		Expect(kube.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: replacement}})).To(Succeed())
		Eventually(func(g Gomega) {
			err := kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: replacement}, &clusterv1.Machine{})
			g.Expect(client.IgnoreNotFound(err)).To(Succeed())
			g.Expect(err).To(HaveOccurred(), "the replacement Machine is gone")
			expectMembers(ctx, g, key, map[string][]string{cfg.zones[0]: {machines[0]}, cfg.zones[1]: {machines[1]}}, nil)
		}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())

		By("starting the server again")
		Expect(servers.Start(ctx, compute, server).ExtractErr()).To(Succeed())
		recovery := time.Now()
		waitDNS(ctx, host, first, second)
		GinkgoWriter.Printf("zone %s published again %s after its server was started\n", cfg.zones[1], time.Since(recovery).Round(100*time.Millisecond))
		Expect(watch()).To(BeEmpty(), "answers without the first zone's address while the second zone was down")

		By("giving the zone back to control plane machines once it has served for two minutes")
		Expect(controlPlaneFailureDomains(ctx, Default, name)).To(HaveLen(1), "not at once: a zone that just came back may fail again")
		Eventually(func(g Gomega) {
			g.Expect(controlPlaneFailureDomains(ctx, g, name)).To(HaveLen(2))
			g.Expect(getCluster(ctx, g, key).Status.APIServerLoadBalancers[1].FailureDomainWithdrawal).To(BeNil())
		}).WithTimeout(4 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("zone %s given back to control plane machines %s after its server was started\n", cfg.zones[1], time.Since(recovery).Round(100*time.Millisecond))
	}, NodeTimeout(14*time.Minute))

	It("keeps its records while another management plane's ExternalDNS syncs the same zone", func(ctx SpecContext) {
		osc := getCluster(ctx, Default, key)
		host := osc.Spec.ControlPlaneEndpoint.Host
		first, second := osc.Status.APIServerLoadBalancers[0].IP, osc.Status.APIServerLoadBalancers[1].IP
		waitDNS(ctx, host, first, second)
		// Another plane (the demo's, say) whose ExternalDNS publishes nothing of its own: with an
		// owner of its own in the zone's registry, its sync policy leaves this plane's records
		// alone. With this plane's owner it would delete them (the failure the owner fixed).
		watch := watchDNS(ctx, host, first)
		for run := 1; run <= 3; run++ {
			out := otherPlaneExternalDNS(ctx, "capo-e2e-other-plane")
			GinkgoWriter.Printf("other plane's ExternalDNS, sync %d: %s\n", run, out)
			waitDNS(ctx, host, first, second)
		}
		Expect(watch()).To(BeEmpty(), "answers without the cluster's first zone while another plane synced the zone")
	}, NodeTimeout(4*time.Minute))

	It("takes a zone out for planned maintenance: out of DNS, then, once the TTL has passed, no new connection to its machine; and back", func(ctx SpecContext) {
		osc := getCluster(ctx, Default, key)
		host := osc.Spec.ControlPlaneEndpoint.Host
		ttl := time.Duration(osc.Spec.APIServerLoadBalancer.DNS.TTL) * time.Second
		first, second := osc.Status.APIServerLoadBalancers[0].IP, osc.Status.APIServerLoadBalancers[1].IP
		zone, lbs := cfg.zones[1], osc.Status.APIServerLoadBalancers
		waitDNS(ctx, host, first, second)
		keep := watchDNS(ctx, host, first)

		// Row 9 of the tenants corpus: a zone in maintenance once cost 24 more full reconciles a
		// minute, forever. The cluster's reconciles are counted over 30 s in service, then over
		// 30 s once the zone is in maintenance.
		inService := reconcilesOver(ctx, "openstackcluster", 30*time.Second)

		By("naming the second zone in the zone-maintenance annotation")
		start := time.Now()
		setZoneMaintenance(ctx, key, zone)
		waitDNS(ctx, host, first)
		gone := time.Now()
		absent := watchDNSWithout(ctx, host, second)
		GinkgoWriter.Printf("zone %s out of DNS %s after the annotation was set\n", zone, gone.Sub(start).Round(100*time.Millisecond))
		o := observe(ctx, Default, lbs[1].ID)
		Expect(o.enabled[machines[1]]).To(HaveEach(BeTrue()), "the machine keeps its connections while the records' TTL runs")

		var drained time.Time
		Eventually(func(g Gomega) {
			o := observe(ctx, g, lbs[1].ID)
			g.Expect(o.enabled[machines[1]]).NotTo(BeEmpty())
			g.Expect(o.enabled[machines[1]]).To(HaveEach(BeFalse()), "every pool's member of %s disabled", machines[1])
		}).WithTimeout(ttl + 2*time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())
		drained = time.Now()
		got := getCluster(ctx, Default, key)
		mt := got.Status.APIServerLoadBalancers[1].Maintenance
		Expect(mt).NotTo(BeNil())
		Expect(mt.Phase).To(Equal(infrav1.ZoneInMaintenance))
		Expect(mt.WithdrawnAt).NotTo(BeNil())
		// WithdrawnAt is recorded to the second.
		Expect(drained.Sub(mt.WithdrawnAt.Time)).To(BeNumerically(">=", ttl-time.Second), "members disabled only once the TTL had passed since ExternalDNS took the records up")
		Expect(conditionTrue(got.Status.Conditions, infrav1.ZoneMaintenanceReadyCondition)).To(Succeed())
		GinkgoWriter.Printf("zone %s's machine disabled %s after the zone left DNS (TTL %s)\n", zone, drained.Sub(gone).Round(100*time.Millisecond), ttl)
		Expect(observe(ctx, Default, lbs[0].ID).enabled[machines[0]]).To(HaveEach(BeTrue()), "the other zone's machine is untouched")
		Expect(observe(ctx, Default, lbs[1].ID).members).To(HaveKey(machines[1]), "members are disabled, never deleted")
		Eventually(func(g Gomega) {
			expectTableRow(ctx, g, key, map[string]any{"Zones": "1/2 (maintenance: " + zone + ")"})
		}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		Expect(absent()).To(BeEmpty(), "answers holding the zone in maintenance after it left DNS")
		inMaintenance := reconcilesOver(ctx, "openstackcluster", 30*time.Second)
		GinkgoWriter.Printf("OpenStackCluster reconciles in 30 s: %.0f with both zones in service, %.0f with %s in maintenance\n", inService, inMaintenance, zone)
		Expect(inMaintenance).To(BeNumerically("<=", inService+6), "a zone in maintenance adds no reconcile loop (a 2 s loop would add 15; row 9 added 12)")

		By("clearing the annotation")
		back := time.Now()
		setZoneMaintenance(ctx, key, "")
		Eventually(func(g Gomega) {
			g.Expect(observe(ctx, g, lbs[1].ID).enabled[machines[1]]).To(HaveEach(BeTrue()))
		}).WithTimeout(2 * time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())
		waitDNS(ctx, host, first, second)
		GinkgoWriter.Printf("zone %s back in DNS %s after the annotation was cleared\n", zone, time.Since(back).Round(100*time.Millisecond))
		Expect(getCluster(ctx, Default, key).Status.APIServerLoadBalancers[1].Maintenance).To(BeNil())
		Expect(keep()).To(BeEmpty(), "answers without the zone that stayed in service")
	}, NodeTimeout(7*time.Minute))

	It("keeps its resources, machines and DNS name from a tenant of another namespace in the same project", func(ctx SpecContext) {
		hostileTenant(ctx, key, machines[0])
	}, NodeTimeout(10*time.Minute))

	It("keeps serving every tenant while others name hostile clouds of their own and send annotations too large to read", func(ctx SpecContext) {
		hostileToManager(ctx, key, machines[0])
	}, NodeTimeout(8*time.Minute))

	It("recreates a zone's load balancer Octavia put in ERROR with the zone's floating IP, while DNS keeps the other zone", func(ctx SpecContext) {
		faultCmd := os.Getenv("CAPO_E2E_FAULT")
		if faultCmd == "" {
			Skip("CAPO_E2E_FAULT is not set: only the local OpenStack's administrator can put a load balancer in ERROR here")
		}
		osc := getCluster(ctx, Default, key)
		host := osc.Spec.ControlPlaneEndpoint.Host
		first, second := osc.Status.APIServerLoadBalancers[0].IP, osc.Status.APIServerLoadBalancers[1].IP
		old := osc.Status.APIServerLoadBalancers[1].ID
		waitDNS(ctx, host, first, second)

		out, err := exec.CommandContext(ctx, faultCmd, "lb-error", old).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		fault := time.Now()
		watch := watchDNS(ctx, host, first)
		waitDNS(ctx, host, first)
		GinkgoWriter.Printf("zone %s withdrawn from DNS %s after its load balancer went ERROR\n", cfg.zones[1], time.Since(fault).Round(100*time.Millisecond))
		var recreated infrav1.LoadBalancer
		Eventually(func(g Gomega) {
			recreated = getCluster(ctx, g, key).Status.APIServerLoadBalancers[1]
			g.Expect(recreated.ID).NotTo(Equal(old), "the load balancer is recreated")
			g.Expect(recreated.Healthy).To(HaveValue(BeTrue()))
		}).WithTimeout(4 * time.Minute).WithPolling(time.Second).Should(Succeed())
		GinkgoWriter.Printf("zone %s's load balancer recreated and healthy %s after the fault\n", cfg.zones[1], time.Since(fault).Round(100*time.Millisecond))
		Expect(recreated.IP).To(Equal(zoneFIP), "the recreated load balancer has the zone's floating IP")
		Eventually(func(g Gomega) {
			o := observe(ctx, g, recreated.ID)
			g.Expect(o.floatingIP).NotTo(BeNil())
			g.Expect(o.floatingIP.FloatingIP).To(Equal(zoneFIP))
		}).WithTimeout(time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		waitDNS(ctx, host, first, second)
		GinkgoWriter.Printf("zone %s published again %s after the fault\n", cfg.zones[1], time.Since(fault).Round(100*time.Millisecond))
		Expect(watch()).To(BeEmpty(), "answers without the first zone's address while the second zone's load balancer was recreated")
	}, NodeTimeout(6*time.Minute))

	It("removes a deleted machine from its load balancer and deletes its server and port", func(ctx SpecContext) {
		osm := &infrav1.OpenStackMachine{}
		Expect(kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: machines[1]}, osm)).To(Succeed())
		serverID := ptr.Deref(osm.Status.InstanceID, "")
		Expect(serverID).NotTo(BeEmpty())
		start := time.Now()
		Expect(kube.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: machines[1]}})).To(Succeed())
		Eventually(func(g Gomega) {
			err := kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: machines[1]}, &clusterv1.Machine{})
			g.Expect(client.IgnoreNotFound(err)).To(Succeed())
			g.Expect(err).To(HaveOccurred(), "the Machine is gone")
			expectMembers(ctx, g, key, map[string][]string{cfg.zones[0]: {machines[0]}, cfg.zones[1]: {}}, nil)
			_, err = openstack.Compute.GetServer(ctx, serverID)
			g.Expect(err).To(HaveOccurred(), "the server is gone")
		}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("machine %s deleted in %s\n", machines[1], time.Since(start).Round(100*time.Millisecond))
	}, NodeTimeout(4*time.Minute))
})

var _ = Describe("Admission", func() {
	multiAZ := func(name, host string) *infrav1.OpenStackCluster {
		spec := clusterSpec(name)
		spec.ControlPlaneEndpoint = nil
		if host != "" {
			spec.ControlPlaneEndpoint = &clusterv1.APIEndpoint{Host: host, Port: 6443}
		}
		spec.APIServerLoadBalancer = &infrav1.APIServerLoadBalancer{
			Enabled:                 ptr.To(true),
			Network:                 &infrav1.NetworkParam{ID: ptr.To(lbNetwork.NetworkID)},
			AvailabilityZoneSubnets: lbNetwork.Mapping,
		}
		return &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Spec: spec}
	}

	It("rejects a multi-AZ cluster without a DNS endpoint host", func(ctx SpecContext) {
		err := kube.Create(ctx, multiAZ("no-host-"+runID, ""))
		Expect(err).To(MatchError(ContainSubstring("controlPlaneEndpoint")))
	})

	It("rejects a multi-AZ cluster whose endpoint host is an IP address", func(ctx SpecContext) {
		err := kube.Create(ctx, multiAZ("ip-host-"+runID, "203.0.113.10"))
		Expect(err).To(MatchError(And(ContainSubstring("controlPlaneEndpoint.host"), ContainSubstring("203.0.113.10"))))
	})

	It("accepts the same cluster with a DNS endpoint host (dry run)", func(ctx SpecContext) {
		Expect(kube.Create(ctx, multiAZ("dns-host-"+runID, "api.example.com"), client.DryRunAll)).To(Succeed())
	})
})

// createControlPlaneMachine creates a control plane Machine in zone with its bootstrap data
// Secret and OpenStackMachine, as a control plane provider would, and returns its name.
// controlPlaneFailureDomains are the failure domains Cluster API's Cluster clusterName reports
// for control plane machines: what KubeadmControlPlane places them in.
func controlPlaneFailureDomains(ctx context.Context, g Gomega, clusterName string) []clusterv1.FailureDomain {
	cluster := &clusterv1.Cluster{}
	g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: clusterName}, cluster)).To(Succeed())
	var out []clusterv1.FailureDomain
	for _, fd := range cluster.Status.FailureDomains {
		if ptr.Deref(fd.ControlPlane, false) {
			out = append(out, fd)
		}
	}
	return out
}

func createControlPlaneMachine(ctx context.Context, clusterName, zone string) string {
	name := clusterName + "-cp-" + zone
	createMachine(ctx, namespace, clusterName, name, zone, true)
	return name
}

// createMachine creates a Machine with its bootstrap data Secret and OpenStackMachine (the
// suite's flavor and image, then edits) in namespace ns, as Cluster API would.
func createMachine(ctx context.Context, ns, clusterName, name, zone string, controlPlane bool, edits ...func(*infrav1.OpenStackMachineSpec)) {
	secret := createBootstrapSecret(ctx, ns, name)
	osm := &infrav1.OpenStackMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName}},
		Spec: infrav1.OpenStackMachineSpec{
			Flavor: ptr.To(cfg.flavor),
			Image:  infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To(cfg.image)}},
		},
	}
	for _, edit := range edits {
		edit(&osm.Spec)
	}
	Expect(kube.Create(ctx, osm)).To(Succeed())
	labels := map[string]string{clusterv1.ClusterNameLabel: clusterName}
	if controlPlane {
		labels[clusterv1.MachineControlPlaneLabel] = ""
	}
	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: clusterv1.MachineSpec{
			ClusterName:       clusterName,
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To(secret.Name)},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackMachine", Name: name},
			FailureDomain:     zone,
		},
	}
	Expect(kube.Create(ctx, machine)).To(Succeed())
}

// createBootstrapSecret creates the Secret <name>-bootstrap in namespace ns with bootstrap data
// that does nothing, as a bootstrap provider would for machine name, and returns it.
func createBootstrapSecret(ctx context.Context, ns, name string) *corev1.Secret {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-bootstrap", Namespace: ns},
		Data: map[string][]byte{"value": []byte("#cloud-config\n"), "format": []byte("cloud-config")}}
	Expect(kube.Create(ctx, secret)).To(Succeed())
	return secret
}

func internalIP(osm *infrav1.OpenStackMachine) string {
	for _, a := range osm.Status.Addresses {
		if a.Type == clusterv1.MachineInternalIP {
			return a.Address
		}
	}
	return ""
}

// expectMembers checks, in Octavia, that each zone's load balancer has exactly the named machines
// as members of every pool, at their addresses (when addresses is given).
func expectMembers(ctx context.Context, g Gomega, key client.ObjectKey, want map[string][]string, addresses map[string]string) {
	osc := getCluster(ctx, g, key)
	for _, lb := range osc.Status.APIServerLoadBalancers {
		o := observe(ctx, g, lb.ID)
		var names []string
		for member, addrs := range o.members {
			names = append(names, member)
			if addresses != nil {
				g.Expect(addrs).To(Equal([]string{addresses[member]}), "address of member %s of %s", member, lb.Name)
			}
		}
		g.Expect(names).To(ConsistOf(want[lb.AvailabilityZone]), "members of %s", lb.Name)
	}
}

// filter keeps the inventory lines starting with prefix.
func filter(lines []string, prefix string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// setZoneMaintenance sets the cluster's zone-maintenance annotation ("" removes it), as an
// operator would with kubectl annotate.
func setZoneMaintenance(ctx context.Context, key client.ObjectKey, zones string) {
	Eventually(func(g Gomega) {
		osc := getCluster(ctx, g, key)
		if zones == "" {
			delete(osc.Annotations, infrav1.ZoneMaintenanceAnnotation)
		} else {
			if osc.Annotations == nil {
				osc.Annotations = map[string]string{}
			}
			osc.Annotations[infrav1.ZoneMaintenanceAnnotation] = zones
		}
		g.Expect(kube.Update(ctx, osc)).To(Succeed())
	}).WithTimeout(30 * time.Second).Should(Succeed())
}
