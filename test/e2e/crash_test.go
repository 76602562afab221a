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
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/framework"
)

// leaseName is the provider's leader election Lease (main.go).
const leaseName = "controller-leader-election-capo-multiaz"

// The provider's manager SIGKILLed at random moments (as an out-of-memory kill would: its
// container, through the node's containerd), several times in each of: a two-zone cluster's
// creation with a control plane machine per zone, the in-place migration of a single load
// balancer cluster to two zones, and the deletion of both. The kubelet starts the killed
// container again; the new manager waits for the old one's lease to run out. After every kill and at
// the end, the real cloud must hold nothing twice for one purpose; each phase must converge; the
// deletion must leave the project as it was. CAPO_E2E_KILL_SEED replays a run's moments.
var _ = Describe("A manager killed at random moments", Ordered, func() {
	var (
		rng      *rand.Rand
		baseline framework.Inventory
		a        = "crash-a-" + runID
		b        = "crash-b-" + runID
		keyA     client.ObjectKey
		keyB     client.ObjectKey
		// machinesA are a's control plane machines by zone; machineB is b's, in the first zone.
		machinesA = map[string][]string{}
		machineB  string
	)

	// Both clusters are created here, so that their cleanups (delete, then check the project)
	// come after the last spec; b, the single load balancer one, is created under a's kills.
	BeforeAll(func(ctx SpecContext) {
		seed := time.Now().UnixNano()
		if s := os.Getenv("CAPO_E2E_KILL_SEED"); s != "" {
			var err error
			seed, err = strconv.ParseInt(s, 10, 64)
			Expect(err).NotTo(HaveOccurred(), "CAPO_E2E_KILL_SEED")
		}
		GinkgoWriter.Printf("kill moments: CAPO_E2E_KILL_SEED=%d\n", seed)
		rng = rand.New(rand.NewPCG(uint64(seed), 0))
		keyA, baseline = createCluster(ctx, a, &infrav1.APIServerLoadBalancer{
			Enabled:                 ptr.To(true),
			Network:                 &infrav1.NetworkParam{ID: ptr.To(lbNetwork.NetworkID)},
			AvailabilityZoneSubnets: lbNetwork.Mapping,
		})
		for _, zone := range cfg.zones {
			machinesA[zone] = []string{createControlPlaneMachine(ctx, a, zone)}
		}
		keyB, _ = createCluster(ctx, b, &infrav1.APIServerLoadBalancer{
			Enabled: ptr.To(true),
			Network: &infrav1.NetworkParam{ID: ptr.To(lbNetwork.NetworkID)},
			Subnets: []infrav1.SubnetParam{lbNetwork.Mapping[0].Subnet},
		})
		machineB = createControlPlaneMachine(ctx, b, cfg.zones[0])
	}, NodeTimeout(2*time.Minute))

	It("creates a two-zone cluster with a control plane machine per zone through kills", func(ctx SpecContext) {
		start := time.Now()
		kills := killWhile(ctx, rng, a, 3, func(g Gomega) {
			osc := getCluster(ctx, g, keyA)
			g.Expect(conditionTrue(osc.Status.Conditions, infrav1.ReadyCondition)).To(Succeed())
			g.Expect(osc.Status.APIServerLoadBalancers).To(HaveLen(2))
			expectMembers(ctx, g, keyA, machinesA, nil)
		})
		Expect(kills).To(BeNumerically(">=", 1), "the cluster was killed during its creation at least once")
		waitClusterReady(ctx, keyA, 2)
		Eventually(func(g Gomega) { expectMembers(ctx, g, keyA, machinesA, nil) }).
			WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		expectNoDuplicates(ctx, a)
		expectNoDuplicates(ctx, b)
		GinkgoWriter.Printf("two-zone cluster and two machines ready through %d kills in %s\n", kills, time.Since(start).Round(100*time.Millisecond))
	}, NodeTimeout(10*time.Minute))

	It("migrates a single load balancer cluster in place to two zones through kills", func(ctx SpecContext) {
		legacy := waitClusterReady(ctx, keyB, 0).Status.APIServerLoadBalancer.ID
		start := time.Now()
		updateCluster(ctx, keyB, func(spec *infrav1.OpenStackClusterSpec) {
			spec.APIServerLoadBalancer.Subnets = nil
			spec.APIServerLoadBalancer.AvailabilityZoneSubnets = lbNetwork.Mapping
		})
		kills := killWhile(ctx, rng, b, 3, func(g Gomega) {
			osc := getCluster(ctx, g, keyB)
			g.Expect(conditionTrue(osc.Status.Conditions, infrav1.ReadyCondition)).To(Succeed())
			g.Expect(osc.Status.APIServerLoadBalancers).To(HaveLen(2))
		})
		Expect(kills).To(BeNumerically(">=", 1), "the cluster was killed during its migration at least once")
		osc := waitClusterReady(ctx, keyB, 2)
		Expect(osc.Status.APIServerLoadBalancers[0].ID).To(Equal(legacy), "the single load balancer became the first zone's, in place")
		Eventually(func(g Gomega) { expectMembers(ctx, g, keyB, map[string][]string{cfg.zones[0]: {machineB}}, nil) }).
			WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		expectNoDuplicates(ctx, b)
		GinkgoWriter.Printf("migrated to two zones through %d kills in %s\n", kills, time.Since(start).Round(100*time.Millisecond))
	}, NodeTimeout(10*time.Minute))

	It("deletes both clusters through kills and leaves the project as it was", func(ctx SpecContext) {
		start := time.Now()
		for _, name := range []string{a, b} {
			cluster := &clusterv1.Cluster{}
			cluster.Name, cluster.Namespace = name, namespace
			Expect(client.IgnoreNotFound(kube.Delete(ctx, cluster))).To(Succeed())
		}
		gone := func(g Gomega) {
			for _, key := range []client.ObjectKey{keyA, keyB} {
				err := kube.Get(ctx, key, &clusterv1.Cluster{})
				g.Expect(err).To(HaveOccurred())
				g.Expect(client.IgnoreNotFound(err)).To(Succeed())
			}
		}
		kills := killWhile(ctx, rng, "crash-", 3, gone)
		Expect(kills).To(BeNumerically(">=", 1), "the clusters were killed during their deletion at least once")
		Eventually(gone).WithTimeout(5*time.Minute).WithPolling(time.Second).Should(Succeed(), "both Clusters are deleted")
		expectNothingLeft(ctx, baseline)
		GinkgoWriter.Printf("both clusters deleted through %d kills in %s\n", kills, time.Since(start).Round(100*time.Millisecond))
	}, NodeTimeout(10*time.Minute))
})

// The provider's Deployment runs two replicas, as its components ask, with a disruption budget
// that keeps one: the leader's pod is deleted at once (grace period 0: its manager is SIGKILLed,
// as when its node is lost) while a two-zone cluster is being created; the other replica must
// take the lease within its duration (plus one retry), and the cluster converge with nothing
// twice.
var _ = Describe("Two managers with leader election", Ordered, func() {
	name := "leader-" + runID

	BeforeAll(func(ctx SpecContext) {
		d := &appsv1.Deployment{}
		Expect(kube.Get(ctx, client.ObjectKey{Namespace: providerNamespace, Name: providerDeployment}, d)).To(Succeed())
		Expect(d.Spec.Replicas).To(HaveValue(BeNumerically("==", 2)), "the components ask for two replicas")
		pdb := &policyv1.PodDisruptionBudget{}
		Expect(kube.Get(ctx, client.ObjectKey{Namespace: providerNamespace, Name: providerPDB}, pdb)).To(Succeed())
		Expect(pdb.Spec.MinAvailable).To(HaveValue(Equal(intstr.FromInt32(1))), "a voluntary disruption keeps one replica")
		waitProviderReady(ctx)
		DeferCleanup(func(ctx SpecContext) {
			// Both replicas back, one of them holding the lease, for the specs that follow.
			waitProviderReady(ctx)
			Eventually(func(g Gomega) {
				holder, _ := leaseHolder(ctx, g)
				pods := providerPods(ctx, g)
				g.Expect(pods).To(HaveLen(2))
				g.Expect([]string{pods[0].Name, pods[1].Name}).To(ContainElement(podOf(holder)))
			}).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(Succeed(), "one of the two replicas leads")
		}, NodeTimeout(4*time.Minute))
	}, NodeTimeout(4*time.Minute))

	It("hands the cluster's creation over to the standby when the leader is killed, within the lease", func(ctx SpecContext) {
		leader, _ := leaseHolder(ctx, Default)
		GinkgoWriter.Printf("leader: %s\n", leader)
		key, _ := createCluster(ctx, name, &infrav1.APIServerLoadBalancer{
			Enabled:                 ptr.To(true),
			Network:                 &infrav1.NetworkParam{ID: ptr.To(lbNetwork.NetworkID)},
			AvailabilityZoneSubnets: lbNetwork.Mapping,
		})
		// Mid-creation: once the first load balancer exists in Octavia.
		Eventually(func(g Gomega) {
			g.Expect(getCluster(ctx, g, key).Status.APIServerLoadBalancers).NotTo(BeEmpty())
		}).WithTimeout(time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())
		killed := time.Now()
		Expect(kube.Delete(ctx, providerPod(ctx, Default, podOf(leader)), client.GracePeriodSeconds(0))).To(Succeed())
		var (
			duration time.Duration
			acquired time.Time
		)
		Eventually(func(g Gomega) {
			holder, lease := leaseHolder(ctx, g)
			g.Expect(holder).NotTo(Equal(leader))
			g.Expect(podOf(holder)).NotTo(Equal(podOf(leader)), "a replica other than the deleted pod")
			g.Expect(lease.Spec.AcquireTime).NotTo(BeNil(), "the new holder records when it acquired the lease")
			duration = time.Duration(ptr.Deref(lease.Spec.LeaseDurationSeconds, 0)) * time.Second
			acquired = lease.Spec.AcquireTime.Time
		}).WithTimeout(time.Minute).WithPolling(200*time.Millisecond).Should(Succeed(), "another replica takes the lease")
		// The takeover's moment is the one the new holder wrote into the Lease (the same clock as
		// the kill's, on this machine): how soon this poll happens to see it does not count.
		took := acquired.Sub(killed)
		GinkgoWriter.Printf("the standby took the lease %s after the leader's kill (lease %s)\n", took.Round(100*time.Millisecond), duration)
		// The standby counts the lease's duration from when it last saw the leader renew it (the
		// leader renews every retry period, 2 s by default), and tries every retry period,
		// jittered by up to 1.2 more by client-go: so at most two of its tries past the duration.
		Expect(took).To(BeNumerically("<=", duration+2*4400*time.Millisecond+time.Second), "taken over within the lease")
		waitClusterReady(ctx, key, 2)
		expectNoDuplicates(ctx, name)
		GinkgoWriter.Printf("cluster ready %s after the leader's kill\n", time.Since(killed).Round(100*time.Millisecond))
	}, NodeTimeout(8*time.Minute))
})

// killWhile SIGKILLs the leading manager up to n times while done fails, each at a random moment
// 0.5 to 6 s after a manager took the lease (the first after the call), and after each checks that
// the project holds nothing twice among the names containing mark. It returns the kills made.
func killWhile(ctx context.Context, rng *rand.Rand, mark string, n int, done func(Gomega)) int {
	kills := 0
	leader, _ := leaseHolder(ctx, Default)
	for kills < n {
		delay := 500*time.Millisecond + time.Duration(rng.Int64N(int64(5500*time.Millisecond)))
		select {
		case <-ctx.Done():
			Fail("interrupted")
		case <-time.After(delay):
		}
		if InterceptGomegaFailures(func() { done(Default) }) == nil {
			break
		}
		killManager(ctx, providerPod(ctx, Default, podOf(leader)))
		kills++
		since := "the phase began"
		if kills > 1 {
			since = "it took the lease"
		}
		GinkgoWriter.Printf("kill %d: pod %s's manager SIGKILLed %s after %s\n", kills, podOf(leader), delay.Round(10*time.Millisecond), since)
		expectNoDuplicates(ctx, mark)
		old := leader
		Eventually(func(g Gomega) {
			leader, _ = leaseHolder(ctx, g)
			g.Expect(leader).NotTo(Equal(old))
		}).WithTimeout(time.Minute).WithPolling(200*time.Millisecond).Should(Succeed(), "the restarted manager takes the lease")
	}
	return kills
}

// expectNoDuplicates checks that the project holds nothing twice among the names containing mark.
func expectNoDuplicates(ctx context.Context, mark string) {
	dups, err := framework.Duplicates(ctx, openstack, mark)
	Expect(err).NotTo(HaveOccurred())
	Expect(dups).To(BeEmpty(), "resources that exist twice for one purpose")
}

// leaseHolder returns the holder of the provider's leader election Lease, and the Lease.
func leaseHolder(ctx context.Context, g Gomega) (string, *coordinationv1.Lease) {
	leases := &coordinationv1.LeaseList{}
	g.Expect(kube.List(ctx, leases)).To(Succeed())
	for i := range leases.Items {
		if l := &leases.Items[i]; l.Name == leaseName {
			holder := ptr.Deref(l.Spec.HolderIdentity, "")
			g.Expect(holder).NotTo(BeEmpty(), "the lease has a holder")
			return holder, l
		}
	}
	g.Expect(leaseName).To(BeEmpty(), "no Lease %s: is the manager run with --leader-elect?", leaseName)
	return "", nil
}
