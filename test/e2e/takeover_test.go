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
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/internal/localenv"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/takeover"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/envtestutil"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/framework"
)

// The switch of docs/switching-from-upstream.md, in place, on the real OpenStack: upstream CAPO's
// own manager (v0.14.7, built from the module proxy) creates a cluster with a single load
// balancer and a control plane machine; the management plane then stops it and runs this
// provider instead, with every object and its status left as upstream wrote them.
var _ = Describe("A cluster upstream CAPO created, taken over in place", Ordered, func() {
	const additionalPort = 9345
	var (
		name    = "upstream-" + runID
		key     client.ObjectKey
		machine string
		// fip is the floating IP upstream allocated for its load balancer, which it also made the
		// endpoint's host.
		fip string
		// bastion is upstream's bastion.
		bastion infrav1.BastionStatus
		// before is the cluster as upstream left it, in OpenStack.
		before cloudState
		legacy infrav1.LoadBalancer
	)

	BeforeAll(func(ctx SpecContext) {
		if upstream, _ := localenv.PlaneValue(mgmtDir(), "upstream"); upstream == "" {
			Skip("the management plane runs without upstream CAPO (hack/e2e.sh sets CAPO_MGMT_UPSTREAM)")
		}
		// Registered first: whatever happens, the specs that follow run this provider.
		DeferCleanup(func(ctx SpecContext) { switchProvider(ctx, "ours") }, NodeTimeout(4*time.Minute))
		switchProvider(ctx, "upstream")
		// Upstream's usual YAML: no endpoint (upstream sets it to the load balancer's floating IP,
		// and would overwrite a name), no floating IP given.
		key, _ = createCluster(ctx, name, &infrav1.APIServerLoadBalancer{
			Enabled:         ptr.To(true),
			AdditionalPorts: []int{additionalPort},
			Network:         &infrav1.NetworkParam{ID: ptr.To(lbNetwork.NetworkID)},
			Subnets:         []infrav1.SubnetParam{lbNetwork.Mapping[0].Subnet},
		}, func(spec *infrav1.OpenStackClusterSpec) {
			spec.ControlPlaneEndpoint = nil
			// Upstream's templates enable a bastion: its server, port, floating IP and group are
			// taken over with the rest.
			spec.Bastion = &infrav1.Bastion{Enabled: ptr.To(true), Spec: &infrav1.OpenStackMachineSpec{
				Flavor: ptr.To(cfg.flavor), Image: infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To(cfg.image)}}}}
		})
	}, NodeTimeout(5*time.Minute))

	It("is created by upstream CAPO: a load balancer with two ports and a control plane machine behind it, with volumes, in a server group", func(ctx SpecContext) {
		start := time.Now()
		Eventually(func(g Gomega) {
			osc := getCluster(ctx, g, key)
			g.Expect(osc.Status.Initialization).NotTo(BeNil())
			g.Expect(osc.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
			g.Expect(osc.Status.APIServerLoadBalancer).NotTo(BeNil())
			fip = osc.Status.APIServerLoadBalancer.IP
			g.Expect(fip).NotTo(BeEmpty())
			g.Expect(osc.Spec.ControlPlaneEndpoint).To(HaveValue(HaveField("Host", fip)), "upstream makes the floating IP the endpoint")
		}).WithTimeout(4 * time.Minute).WithPolling(time.Second).Should(Succeed())
		GinkgoWriter.Printf("upstream: cluster provisioned in %s\n", time.Since(start).Round(100*time.Millisecond))
		// As production clusters have them: in a server group, booted from a root volume in the
		// machine's zone, with a data volume (upstream makes the volumes, then the server).
		group := createServerGroup(ctx, name+"-cp", "soft-anti-affinity")
		machine = name + "-cp-" + cfg.zones[0]
		createMachine(ctx, namespace, name, machine, cfg.zones[0], true, func(s *infrav1.OpenStackMachineSpec) {
			s.ServerGroup = &infrav1.ServerGroupParam{ID: ptr.To(group.ID)}
			s.RootVolume = &infrav1.RootVolume{SizeGiB: 2, BlockDeviceVolume: infrav1.BlockDeviceVolume{
				AvailabilityZone: &infrav1.VolumeAvailabilityZone{From: infrav1.VolumeAZFromMachine}}}
			s.AdditionalBlockDevices = []infrav1.AdditionalBlockDevice{
				{Name: "data", SizeGiB: 1, Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice}},
			}
		})
		Eventually(func(g Gomega) {
			osm := &infrav1.OpenStackMachine{}
			g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: machine}, osm)).To(Succeed())
			g.Expect(osm.Status.Initialization).NotTo(BeNil())
			g.Expect(osm.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
			g.Expect(osm.Status.InstanceID).NotTo(BeNil())
			g.Expect(internalIP(osm)).NotTo(BeEmpty())
			o := observe(ctx, g, getCluster(ctx, g, key).Status.APIServerLoadBalancer.ID)
			g.Expect(memberAddresses(o)).To(Equal([]string{internalIP(osm)}), "upstream's members (one per pool, named <pool>-<machine>) for the machine")
		}).WithTimeout(4 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("upstream: cluster and control plane machine ready in %s\n", time.Since(start).Round(100*time.Millisecond))
		server, err := openstack.Compute.GetServer(ctx, serverOf(ctx, machine))
		Expect(err).NotTo(HaveOccurred())
		Expect(server.AttachedVolumes).To(ConsistOf(HaveField("ID", volumeNamed(ctx, machine+"-root").ID), HaveField("ID", volumeNamed(ctx, machine+"-data").ID)),
			"upstream's root and data volumes on its server")
		members, err := servergroups.Get(ctx, computeClient(ctx), group.ID).Extract()
		Expect(err).NotTo(HaveOccurred())
		Expect(members.Members).To(ConsistOf(server.ID), "upstream's server in the group")
		Eventually(func(g Gomega) {
			b := getCluster(ctx, g, key).Status.Bastion
			g.Expect(b).NotTo(BeNil())
			g.Expect(b.FloatingIP).NotTo(BeEmpty())
			bastion = *b
		}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		Expect(fixedIPOf(ctx, bastion.FloatingIP)).NotTo(BeEmpty(), "upstream's bastion floating IP is on its port")
		legacy = *getCluster(ctx, Default, key).Status.APIServerLoadBalancer
		before = takeCloudState(ctx, Default, name, legacy.ID)
		Expect(before.loadBalancer.listeners).To(HaveLen(2), "a listener per port")
	}, NodeTimeout(9*time.Minute))

	It("passes the pre-flight check while upstream runs, which records the takeover", func(ctx SpecContext) {
		cmd := exec.CommandContext(ctx, "go", "run", "./cmd/preflight", "--kubeconfig", os.Getenv("KUBECONFIG"),
			"--record-takeover", "--takeover-record", providerNamespace+"/"+takeover.DefaultName)
		cmd.Dir = envtestutil.RepoRoot()
		out, err := cmd.CombinedOutput()
		GinkgoWriter.Printf("pre-flight check:\n%s", out)
		Expect(err).NotTo(HaveOccurred(), "the pre-flight check finds nothing this cluster would lose")
		Expect(string(out)).To(ContainSubstring("OpenStackServer " + namespace + "/" + machine))
		Expect(string(out)).To(MatchRegexp(`recorded the takeover of \d+ objects in ConfigMap ` + providerNamespace + "/" + takeover.DefaultName))
		record := &corev1.ConfigMap{}
		Expect(kube.Get(ctx, client.ObjectKey{Namespace: providerNamespace, Name: takeover.DefaultName}, record)).To(Succeed())
		Expect(record.Data).To(HaveKey(takeover.Entry("OpenStackCluster", namespace, name)))
		Expect(record.Data).To(HaveKey(takeover.Entry("OpenStackMachine", namespace, machine)))
	}, NodeTimeout(3*time.Minute))

	It("is taken over by this provider with no OpenStack resource created or deleted", func(ctx SpecContext) {
		start := time.Now()
		switchProvider(ctx, "ours")
		switched := time.Since(start)
		Eventually(func(g Gomega) {
			osc := getCluster(ctx, g, key)
			g.Expect(ourCondition(osc.Status.Conditions, infrav1.ReadyCondition)).To(Succeed())
			g.Expect(ourCondition(osc.Status.Conditions, infrav1.APIServerLoadBalancersReadyCondition)).To(Succeed())
			g.Expect(ourCondition(osc.Status.Conditions, infrav1.BastionReadyCondition)).To(Succeed(), "upstream's bastion is this provider's")
			osm := &infrav1.OpenStackMachine{}
			g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: machine}, osm)).To(Succeed())
			g.Expect(ourCondition(osm.Status.Conditions, infrav1.InstanceReadyCondition)).To(Succeed())
			g.Expect(ourCondition(osm.Status.Conditions, infrav1.APIServerIngressReadyCondition)).To(Succeed())
		}).WithTimeout(3 * time.Minute).WithPolling(500 * time.Millisecond).Should(Succeed())
		tookOver := time.Since(start)
		calls := apiCalls(ctx, Default)
		var total float64
		var changes []string
		for _, op := range slices.Sorted(maps.Keys(calls)) {
			total += calls[op]
			if !strings.HasPrefix(op, "Get") && !strings.HasPrefix(op, "List") {
				changes = append(changes, fmt.Sprintf("%s x%g", op, calls[op]))
			}
		}
		GinkgoWriter.Printf("taken over: manager switched in %s, cluster and machine ready under this provider %s after the switch began; %g OpenStack calls, changes: %v\n",
			switched.Round(100*time.Millisecond), tookOver.Round(100*time.Millisecond), total, changes)
		for _, op := range changes {
			Expect(op).NotTo(Or(HavePrefix("Create"), HavePrefix("Delete"), HavePrefix("Add"), HavePrefix("Remove")),
				"the takeover creates and deletes nothing in OpenStack")
		}
		after := takeCloudState(ctx, Default, name, legacy.ID)
		Expect(after.inventory.Since(before.inventory)).To(BeEmpty(), "resources the takeover created")
		Expect(before.inventory.Since(after.inventory)).To(BeEmpty(), "resources the takeover deleted")
		Expect(after.loadBalancer.listeners).To(Equal(before.loadBalancer.listeners), "listeners, pools and monitors")
		Expect(after.loadBalancer.members).To(Equal(before.loadBalancer.members), "members")
		Expect(after.rules).To(Equal(before.rules), "security group rules")
		osc := getCluster(ctx, Default, key)
		Expect(osc.Status.Bastion.ID).To(Equal(bastion.ID))
		Expect(osc.Status.Bastion.FloatingIP).To(Equal(bastion.FloatingIP))
		Expect(osc.Status.APIServerLoadBalancer.ID).To(Equal(legacy.ID))
		Expect(osc.Status.APIServerLoadBalancer.IP).To(Equal(fip))
		Expect(osc.Status.APIServerLoadBalancer.InternalIP).To(Equal(legacy.InternalIP))

		By("removing upstream's OpenStackServer objects (step 6): nothing in OpenStack changes")
		removeUpstreamServers(ctx)
		Consistently(func(g Gomega) {
			now, err := framework.TakeInventory(ctx, openstack)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(now.Since(before.inventory)).To(BeEmpty())
			g.Expect(before.inventory.Since(now)).To(BeEmpty())
		}).WithTimeout(10 * time.Second).WithPolling(2 * time.Second).Should(Succeed())
	}, NodeTimeout(5*time.Minute))

	It("then moves in place to one load balancer per zone, keeping its VIP and floating IP", func(ctx SpecContext) {
		start := time.Now()
		// The endpoint upstream set to the floating IP becomes the DNS name the zones are published
		// under, in the same update (docs/switching-from-upstream.md).
		updateCluster(ctx, key, func(spec *infrav1.OpenStackClusterSpec) {
			spec.ControlPlaneEndpoint.Host = "api." + name + ".e2e.example.com"
			spec.APIServerLoadBalancer.Subnets = nil
			spec.APIServerLoadBalancer.AvailabilityZoneSubnets = lbNetwork.Mapping
		})
		Eventually(func(g Gomega) {
			// legacy is upstream's load balancer, its floating IP fip.
			osc := expectMigrated(ctx, g, key, name, legacy, []int{6443, additionalPort})
			first := osc.Status.APIServerLoadBalancers[0]
			g.Expect(first.IP).To(Equal(fip))
			g.Expect(memberAddresses(observe(ctx, g, first.ID))).To(Equal(memberAddresses(before.loadBalancer)), "the machine stays behind its zone's load balancer")
		}).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("taken-over cluster migrated to two zones in %s\n", time.Since(start).Round(100*time.Millisecond))
	}, NodeTimeout(6*time.Minute))
})

// memberAddresses are the addresses of a load balancer's members over every pool, sorted.
func memberAddresses(o observedLB) []string {
	var out []string
	for _, addrs := range o.members {
		for _, a := range addrs {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	slices.Sort(out)
	return out
}

// planeTool is a path the management cluster's ready file names (hack/mgmt/up.sh).
func planeTool(key string) string {
	v, err := localenv.PlaneValue(mgmtDir(), key)
	Expect(err).NotTo(HaveOccurred())
	Expect(v).NotTo(BeEmpty(), "the management cluster's ready file names %s", key)
	return v
}

// run runs a command as the operator would type it, and returns its output.
func run(ctx context.Context, stdin string, name string, args ...string) string {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "CLUSTERCTL_DISABLE_VERSIONCHECK=true")
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	GinkgoWriter.Printf("$ %s %s\n%s", filepath.Base(name), strings.Join(args, " "), out)
	Expect(err).NotTo(HaveOccurred(), "%s %s: %s", name, strings.Join(args, " "), out)
	return string(out)
}

// installedImage is the image the provider's Deployment runs, "" when there is none.
func installedImage(ctx context.Context) string {
	d := &appsv1.Deployment{}
	err := kube.Get(ctx, client.ObjectKey{Namespace: providerNamespace, Name: providerDeployment}, d)
	if apierrors.IsNotFound(err) {
		return ""
	}
	Expect(err).NotTo(HaveOccurred())
	return d.Spec.Template.Spec.Containers[0].Image
}

// upstreamRuns says whether the provider's Deployment runs upstream CAPO's image.
func upstreamRuns(ctx context.Context) bool {
	return strings.Contains(installedImage(ctx), "/capi-openstack/")
}

// switchProvider makes the management cluster run upstream CAPO ("upstream") or this provider
// ("ours"), and returns once its manager is ready. To upstream, as upstream's users have it:
// this provider's components and CRDs are deleted with clusterctl, and `clusterctl init`
// installs upstream's release. To this provider, docs/switching-from-upstream.md
// section 3, step by step: pause the clusters, scale upstream's manager to zero and delete its
// webhook configuration, apply this provider's components, wait for its manager, unpause.
func switchProvider(ctx context.Context, to string) {
	clusterctl, kubectl := planeTool("clusterctl"), planeTool("kubectl")
	config := planeTool("clusterctl_config")
	kubeconfig := os.Getenv("KUBECONFIG")
	start := time.Now()
	if installedImage(ctx) == "" {
		// A switch that failed half way left no provider: install the one asked for.
		cfgFile, version := config, releaseVersion()
		if to == "upstream" {
			cfgFile, version = planeTool("clusterctl_config_upstream"), planeTool("upstream_version")
		}
		run(ctx, "", clusterctl, "init", "--infrastructure", "openstack:"+version, "--config", cfgFile,
			"--kubeconfig", kubeconfig, "--wait-providers", "--wait-provider-timeout", "180")
		waitProviderReady(ctx)
		return
	}
	if (to == "upstream") == upstreamRuns(ctx) {
		return
	}
	if to == "upstream" {
		// With its CRDs (no object of theirs exists between specs): upstream's users never had
		// this provider's, whose contract label would outlive a merge of upstream's.
		run(ctx, "", clusterctl, "delete", "--infrastructure", "openstack", "--include-crd", "--config", config, "--kubeconfig", kubeconfig)
		run(ctx, "", clusterctl, "init", "--infrastructure", "openstack:"+planeTool("upstream_version"), "--config", planeTool("clusterctl_config_upstream"),
			"--kubeconfig", kubeconfig, "--wait-providers", "--wait-provider-timeout", "180")
		waitProviderReady(ctx)
		GinkgoWriter.Printf("upstream CAPO installed in %s\n", time.Since(start).Round(100*time.Millisecond))
		return
	}
	clusters := &clusterv1.ClusterList{}
	Expect(kube.List(ctx, clusters, client.InNamespace(namespace))).To(Succeed())
	for _, c := range clusters.Items {
		run(ctx, "", kubectl, "-n", namespace, "patch", "cluster", c.Name, "--type", "merge", "-p", `{"spec":{"paused":true}}`)
	}
	run(ctx, "", kubectl, "-n", providerNamespace, "scale", "deployment", providerDeployment, "--replicas", "0")
	run(ctx, "", kubectl, "delete", "validatingwebhookconfiguration", "capo-validating-webhook-configuration")
	// The release's components with its clusterctl variables set, as clusterctl would apply them.
	components := run(ctx, "", clusterctl, "generate", "yaml", "--from", planeTool("components"), "--config", config)
	run(ctx, components, kubectl, "apply", "-f", "-")
	waitProviderReady(ctx)
	Expect(upstreamRuns(ctx)).To(BeFalse(), "the Deployment runs this provider's image")
	for _, c := range clusters.Items {
		run(ctx, "", kubectl, "-n", namespace, "patch", "cluster", c.Name, "--type", "merge", "-p", `{"spec":{"paused":false}}`)
	}
	GinkgoWriter.Printf("switched to this provider in %s\n", time.Since(start).Round(100*time.Millisecond))
}

// ourCondition checks that condition t is True as this provider writes it: with a reason
// (upstream's True conditions have none), so that the provider has reconciled the object.
func ourCondition(conditions []metav1.Condition, t string) error {
	if err := conditionTrue(conditions, t); err != nil {
		return err
	}
	for _, c := range conditions {
		if c.Type == t && c.Reason == "" {
			return fmt.Errorf("%s is upstream's (no reason)", t)
		}
	}
	return nil
}

// cloudState is what a cluster has in OpenStack, by ID: the project's inventory, the load
// balancer's listeners, pools, monitors and members, and the rules of the cluster's groups.
type cloudState struct {
	inventory    framework.Inventory
	loadBalancer observedLB
	rules        []string
}

func takeCloudState(ctx context.Context, g Gomega, cluster, lbID string) cloudState {
	inv, err := framework.TakeInventory(ctx, openstack)
	g.Expect(err).NotTo(HaveOccurred())
	sgs, err := openstack.Network.ListSecGroups(ctx, groups.ListOpts{})
	g.Expect(err).NotTo(HaveOccurred())
	var rules []string
	for _, sg := range sgs {
		if !strings.Contains(sg.Name, "-"+namespace+"-"+cluster+"-") {
			continue
		}
		for _, r := range sg.Rules {
			rules = append(rules, sg.Name+" "+r.ID)
		}
	}
	g.Expect(rules).NotTo(BeEmpty(), "the cluster's security groups have rules")
	slices.Sort(rules)
	o := observe(ctx, g, lbID)
	o.lb, o.floatingIP = nil, nil
	return cloudState{inventory: inv, loadBalancer: o, rules: rules}
}

// apiCalls reads this provider's OpenStack API call counters, by operation (every status class).
func apiCalls(ctx context.Context, g Gomega) map[string]float64 {
	calls := map[string]float64{}
	for _, line := range providerMetrics(ctx, g) {
		line, ok := strings.CutPrefix(line, "capo_openstack_api_requests_total{")
		if !ok {
			continue
		}
		labels, value, _ := strings.Cut(line, "} ")
		_, op, _ := strings.Cut(labels, `operation="`)
		op, _, _ = strings.Cut(op, `"`)
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		g.Expect(err).NotTo(HaveOccurred())
		calls[op] += v
	}
	return calls
}

// removeUpstreamServers removes the finalizer of upstream's OpenStackServer objects in the
// namespace and deletes them, as docs/switching-from-upstream.md has the operator do.
func removeUpstreamServers(ctx context.Context) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: infrav1.GroupVersion.Group, Version: "v1alpha1", Kind: "OpenStackServerList"})
	Expect(kube.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
	Expect(list.Items).NotTo(BeEmpty(), "upstream keeps an OpenStackServer per machine")
	for i := range list.Items {
		s := &list.Items[i]
		patch := client.MergeFrom(s.DeepCopy())
		s.SetFinalizers(nil)
		Expect(kube.Patch(ctx, s, patch)).To(Succeed())
		Expect(client.IgnoreNotFound(kube.Delete(ctx, s))).To(Succeed())
	}
	Eventually(func(g Gomega) {
		g.Expect(kube.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
		g.Expect(list.Items).To(BeEmpty())
	}).WithTimeout(30 * time.Second).WithPolling(time.Second).Should(Succeed())
}
