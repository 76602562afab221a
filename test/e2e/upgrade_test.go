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
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/internal/localenv"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/storagemigration"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/framework"
)

// This provider's previous release (built from its tag by hack/previous-release.sh) installed
// with `clusterctl init`, a two-zone cluster with a control plane machine per zone made Ready
// under it, then `clusterctl upgrade apply` to this release, as an operator upgrades: nothing in
// OpenStack is created, deleted or changed by the upgrade (the project's resources by ID, the
// load balancers' listeners, pools, monitors and members, and this release's API calls, reads
// only), the cluster stays Ready throughout, the new manager moves what etcd holds from the
// previous release's storage version (v1beta1) to this one's (v1beta2), and the objects stored
// before it still decode, in both API versions. Installing the previous release over the objects
// the earlier specs stored in v1beta2 is the documented downgrade.
var _ = Describe("An upgrade from the previous release with clusterctl", Ordered, func() {
	var (
		name     = "upgrade-" + runID
		key      client.ObjectKey
		previous string
		machines = map[string][]string{}
	)

	BeforeAll(func(ctx SpecContext) {
		if previous, _ = localenv.PlaneValue(mgmtDir(), "previous_version"); previous == "" {
			Skip("the management cluster has no previous release in its repository (hack/e2e.sh sets CAPO_MGMT_PREVIOUS)")
		}
		// Registered first: whatever happens, the specs that follow run this release.
		DeferCleanup(func(ctx SpecContext) { installRelease(ctx, releaseVersion()) }, NodeTimeout(4*time.Minute))
		installRelease(ctx, previous)
		key, _ = createCluster(ctx, name, &infrav1.APIServerLoadBalancer{
			Enabled:                 ptr.To(true),
			Network:                 &infrav1.NetworkParam{ID: ptr.To(lbNetwork.NetworkID)},
			AvailabilityZoneSubnets: lbNetwork.Mapping,
		})
		for _, zone := range cfg.zones {
			machines[zone] = []string{createControlPlaneMachine(ctx, name, zone)}
		}
	}, NodeTimeout(5*time.Minute))

	It("is upgraded in place while a two-zone cluster runs: nothing in OpenStack changes, the cluster stays Ready", func(ctx SpecContext) {
		osc := waitClusterReady(ctx, key, 2)
		Eventually(func(g Gomega) { expectMembers(ctx, g, key, machines, nil) }).
			WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		Expect(providerImage(ctx)).To(HaveSuffix(":"+previous), "the previous release runs")
		before := upgradeState(ctx, Default, osc)
		// What the previous release wrote is stored as v1beta1.
		for _, name := range storagemigration.CRDs[:2] {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			Expect(kube.Get(ctx, client.ObjectKey{Name: name}, crd)).To(Succeed())
			Expect(crd.Status.StoredVersions).To(ContainElement("v1beta1"), "%s: status.storedVersions under the previous release", name)
		}

		// Ready all along: watched from the upgrade's start until the new manager has reconciled.
		stop := make(chan struct{})
		notReady := make(chan string, 1)
		go func() {
			defer GinkgoRecover()
			for {
				select {
				case <-stop:
					close(notReady)
					return
				case <-time.After(500 * time.Millisecond):
				}
				o := &infrav1.OpenStackCluster{}
				if err := kube.Get(ctx, key, o); err == nil {
					if err := conditionTrue(o.Status.Conditions, infrav1.ReadyCondition); err != nil {
						select {
						case notReady <- err.Error():
						default:
						}
					}
				}
			}
		}()
		start := time.Now()
		run(ctx, "", planeTool("clusterctl"), "upgrade", "apply", "--config", planeTool("clusterctl_config"),
			"--kubeconfig", os.Getenv("KUBECONFIG"), "--infrastructure", providerNamespace+"/openstack:"+releaseVersion(),
			"--wait-providers", "--wait-provider-timeout", "180")
		waitProviderReady(ctx)
		Expect(providerImage(ctx)).To(HaveSuffix(":"+releaseVersion()), "this release runs")
		upgraded := time.Since(start)
		// The new manager has reconciled the cluster and its machines: its conditions are
		// written again after the upgrade began.
		Eventually(func(g Gomega) {
			o := getCluster(ctx, g, key)
			g.Expect(conditionTrue(o.Status.Conditions, infrav1.ReadyCondition)).To(Succeed())
			for _, c := range o.Status.Conditions {
				if c.Type == infrav1.ReadyCondition {
					g.Expect(c.LastTransitionTime.Time).To(BeTemporally("<", start), "Ready since before the upgrade")
				}
			}
			g.Expect(apiCalls(ctx, g)).NotTo(BeEmpty(), "this release's manager has called OpenStack")
		}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
		Eventually(func(g Gomega) { expectMembers(ctx, g, key, machines, nil) }).
			WithTimeout(time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		close(stop)
		Expect(<-notReady).To(BeEmpty(), "the cluster stayed Ready during the upgrade")

		calls := apiCalls(ctx, Default)
		var changes []string
		for _, op := range slices.Sorted(maps.Keys(calls)) {
			if !strings.HasPrefix(op, "Get") && !strings.HasPrefix(op, "List") {
				changes = append(changes, fmt.Sprintf("%s x%g", op, calls[op]))
			}
		}
		GinkgoWriter.Printf("upgraded from %s to %s in %s; this release's OpenStack calls that are not reads: %v\n",
			previous, releaseVersion(), upgraded.Round(100*time.Millisecond), changes)
		Expect(changes).To(BeEmpty(), "the upgrade changes nothing in OpenStack")
		after := upgradeState(ctx, Default, getCluster(ctx, Default, key))
		Expect(after.inventory.Since(before.inventory)).To(BeEmpty(), "resources the upgrade created")
		Expect(before.inventory.Since(after.inventory)).To(BeEmpty(), "resources the upgrade deleted")
		Expect(after.loadBalancers).To(Equal(before.loadBalancers), "load balancers, listeners, pools, monitors and members")
		Expect(after.servers).To(Equal(before.servers), "the machines' servers")

		By("moving what etcd holds to v1beta2, this release's storage version")
		// The previous release stores v1beta1: every CRD lists it until the new leader has
		// rewritten each object (pkg/storagemigration) and trimmed the list.
		Eventually(func(g Gomega) {
			for _, name := range storagemigration.CRDs {
				crd := &apiextensionsv1.CustomResourceDefinition{}
				g.Expect(kube.Get(ctx, client.ObjectKey{Name: name}, crd)).To(Succeed())
				g.Expect(crd.Status.StoredVersions).To(Equal([]string{"v1beta2"}), "%s: status.storedVersions", name)
			}
		}).WithTimeout(2 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		Expect(conditionTrue(getCluster(ctx, Default, key).Status.Conditions, infrav1.ReadyCondition)).To(Succeed())

		By("reading the objects stored before the upgrade in both API versions")
		for _, version := range []string{"v1beta1", "v1beta2"} {
			for _, kind := range []string{"OpenStackClusterList", "OpenStackMachineList"} {
				list := &unstructured.UnstructuredList{}
				list.SetAPIVersion(infrav1.GroupVersion.Group + "/" + version)
				list.SetKind(kind)
				Expect(kube.List(ctx, list, client.InNamespace(namespace))).To(Succeed(), "%s %s", version, kind)
				Expect(list.Items).NotTo(BeEmpty(), "%s %s", version, kind)
			}
		}
	}, NodeTimeout(10*time.Minute))
})

// releaseVersion is the version of the release under test, as the local repository holds it.
func releaseVersion() string {
	components := planeTool("components")
	parts := strings.Split(components, string(os.PathSeparator))
	Expect(len(parts)).To(BeNumerically(">", 2))
	return parts[len(parts)-2]
}

// providerImage is the image the provider's Deployment runs.
func providerImage(ctx context.Context) string {
	image := installedImage(ctx)
	Expect(image).NotTo(BeEmpty(), "the provider's Deployment exists")
	return image
}

// installRelease makes version of this provider the one installed, as an operator replaces a
// provider with clusterctl: `clusterctl delete` of the one installed (its CRDs and every object
// stay), then `clusterctl init` of version. Nothing when it runs already.
func installRelease(ctx context.Context, version string) {
	image := installedImage(ctx)
	if strings.HasSuffix(image, ":"+version) && !upstreamRuns(ctx) {
		return
	}
	config, kubeconfig := planeTool("clusterctl_config"), os.Getenv("KUBECONFIG")
	if image != "" {
		run(ctx, "", planeTool("clusterctl"), "delete", "--infrastructure", "openstack", "--config", config, "--kubeconfig", kubeconfig)
	}
	run(ctx, "", planeTool("clusterctl"), "init", "--infrastructure", "openstack:"+version, "--config", config,
		"--kubeconfig", kubeconfig, "--wait-providers", "--wait-provider-timeout", "180")
	waitProviderReady(ctx)
}

// clusterCloudState is what the upgrade must not change: the project's resources by ID, each
// zone's load balancer as observed (listeners, pools, monitors, members), the machines' servers.
type clusterCloudState struct {
	inventory     framework.Inventory
	loadBalancers []observedLB
	servers       []string
}

func upgradeState(ctx context.Context, g Gomega, osc *infrav1.OpenStackCluster) clusterCloudState {
	inv, err := framework.TakeInventory(ctx, openstack)
	g.Expect(err).NotTo(HaveOccurred())
	// Ports without a name are the cloud's own plumbing, made as its agents work whatever a
	// manager does: Neutron's (DHCP, router interfaces) and Octavia's, which plugs its amphorae
	// into the members' subnets through Nova (device owner compute:<zone>, on an amphora).
	// Every port this provider makes has a name.
	for k := range inv {
		if strings.HasPrefix(k, "port ") && strings.HasSuffix(k, " ()") {
			delete(inv, k)
		}
	}
	s := clusterCloudState{inventory: inv}
	for _, lb := range osc.Status.APIServerLoadBalancers {
		o := observe(ctx, g, lb.ID)
		o.lb, o.floatingIP = nil, nil
		s.loadBalancers = append(s.loadBalancers, o)
	}
	list := &infrav1.OpenStackMachineList{}
	g.Expect(kube.List(ctx, list, client.InNamespace(osc.Namespace), client.MatchingLabels{"cluster.x-k8s.io/cluster-name": osc.Name})).To(Succeed())
	for _, m := range list.Items {
		s.servers = append(s.servers, m.Name+" "+ptr.Deref(m.Status.InstanceID, ""))
	}
	slices.Sort(s.servers)
	return s
}
