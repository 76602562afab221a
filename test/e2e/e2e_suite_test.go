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

// Package e2e drives the provider end to end: a real management plane (kube-apiserver, Cluster
// API's core and kubeadm managers and this provider's manager, see hack/mgmt) against a real OpenStack
// (Keystone, Neutron, Nova, Octavia: hack/local-openstack, devstack or any cloud given a
// clouds.yaml). Every scenario checks what it expects through the OpenStack APIs, not only
// through the provider's status, and every cluster it deletes must leave nothing behind.
//
// Settings (make test-e2e sets them for the local environments):
//
//	KUBECONFIG                  the management plane
//	CAPO_E2E_CLOUDS_YAML        clouds.yaml of the cloud to test against
//	CAPO_E2E_CLOUD              the cloud in it (default capo-e2e)
//	CAPO_E2E_ZONES              two availability zones known to Nova and Octavia (default az1,az2)
//	CAPO_E2E_EXTERNAL_NETWORK   the external network's name (default public)
//	CAPO_E2E_FLAVOR             flavor of the machines (default m1.tiny)
//	CAPO_E2E_IMAGE              image name of the machines (default fake-image)
//	CAPO_E2E_ARTIFACTS          where a failed spec's objects and the project inventory go
//	CAPO_E2E_FAULT              a command that causes administrator-only faults (hack/local-openstack/fault.sh,
//	                            set for the local OpenStack); without it the specs that need one are skipped
//	CAPO_MGMT_DIR               the management plane's directory: its ready file says where its
//	                            provider metrics and its DNS server (ExternalDNS publishes there) are
//	CAPO_UPSTREAM_FILES         upstream CAPO's files as SOURCES names them (default: ../shared/upstream-v1beta2
//	                            beside the work tree); the default-template spec is skipped without them
//	CAPO_E2E_RIG_RANGES         the address ranges that never leave this machine (hack/lib.sh:
//	                            RIG_RANGES, set for the local OpenStack): every subnet in the
//	                            project after a spec's body must lie in one of them
package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/internal/localenv"
	managerscheme "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scheme"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/framework"
)

// settings of the run, read once.
type settings struct {
	cloudsYAML      []byte
	cloudName       string
	zones           []string
	externalNetwork string
	flavor          string
	image           string
	artifacts       string
}

var (
	cfg       settings
	kube      client.Client
	openstack *scope.Clients
	// namespace holds every object of the run, and the identity Secret "cloud".
	namespace string
	// lbNetwork is the operator's load balancer network with one subnet per zone.
	lbNetwork *localenv.LBNetwork
	runID     = rand.String(5)
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "end-to-end against a real OpenStack")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	path := os.Getenv("CAPO_E2E_CLOUDS_YAML")
	Expect(path).NotTo(BeEmpty(), "CAPO_E2E_CLOUDS_YAML must name a clouds.yaml (make test-e2e sets it)")
	Expect(os.Getenv("KUBECONFIG")).NotTo(BeEmpty(), "KUBECONFIG must name the management plane (make test-e2e sets it)")
	var err error
	cfg.cloudsYAML, err = os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	cfg.cloudName = framework.EnvOr("CAPO_E2E_CLOUD", "capo-e2e")
	cfg.zones = strings.Split(framework.EnvOr("CAPO_E2E_ZONES", "az1,az2"), ",")
	Expect(cfg.zones).To(HaveLen(2), "CAPO_E2E_ZONES names two availability zones")
	cfg.externalNetwork = framework.EnvOr("CAPO_E2E_EXTERNAL_NETWORK", "public")
	cfg.flavor = framework.EnvOr("CAPO_E2E_FLAVOR", "m1.tiny")
	cfg.image = framework.EnvOr("CAPO_E2E_IMAGE", "fake-image")
	cfg.artifacts = framework.EnvOr("CAPO_E2E_ARTIFACTS", filepath.Join(os.TempDir(), "capo-e2e-artifacts"))

	// The API server's warnings (migration, deprecated fields) go to the spec's output.
	log.SetLogger(GinkgoLogr)
	restConfig, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	Expect(err).NotTo(HaveOccurred())
	scheme, err := managerscheme.New()
	Expect(err).NotTo(HaveOccurred())
	kube, err = client.New(restConfig, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	openstack, err = localenv.Clients(ctx, cfg.cloudsYAML, cfg.cloudName)
	Expect(err).NotTo(HaveOccurred())

	namespace = "e2e-" + runID
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	Expect(kube.Create(ctx, ns)).To(Succeed())
	// The run's namespace goes at the end, as a user deletes one: the namespace controller
	// deletes what is left in it, and nothing may hold it Terminating.
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.IgnoreNotFound(kube.Delete(ctx, ns))).To(Succeed())
		waitGone(ctx, ns)
	}, NodeTimeout(6*time.Minute))
	Expect(kube.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "cloud", Namespace: namespace},
		Data:       map[string][]byte{scope.CloudsSecretKey: cfg.cloudsYAML},
	})).To(Succeed())
	lbNetwork, err = localenv.EnsureLBNetwork(ctx, openstack, "capo-e2e-"+runID, 40, cfg.zones)
	DeferCleanup(func(ctx SpecContext) {
		Expect(lbNetwork.Delete(ctx, openstack)).To(Succeed())
	}, NodeTimeout(2*time.Minute))
	Expect(err).NotTo(HaveOccurred())
}, NodeTimeout(5*time.Minute))

// clusterSpec is what every scenario's OpenStackCluster starts from: a managed network and
// security groups, the external network, the identity Secret, a DNS endpoint host.
func clusterSpec(name string) infrav1.OpenStackClusterSpec {
	return infrav1.OpenStackClusterSpec{
		IdentityRef:           &infrav1.OpenStackIdentityReference{Name: "cloud", CloudName: cfg.cloudName},
		ManagedSubnets:        []infrav1.SubnetSpec{{CIDR: "10.41.0.0/24"}},
		ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{},
		ExternalNetwork:       &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: cfg.externalNetwork}},
		ControlPlaneEndpoint:  &clusterv1.APIEndpoint{Host: "api." + name + ".e2e.example.com", Port: 6443},
		Tags:                  []string{"capo-e2e"},
	}
}

// createCluster creates a Cluster and its OpenStackCluster (clusterSpec with lb, then edits), as
// a user applying YAML would, after taking the project's inventory; the cleanup of the calling
// node deletes the Cluster and checks that the project is back to that inventory, which it returns.
func createCluster(ctx context.Context, name string, lb *infrav1.APIServerLoadBalancer, edits ...func(*infrav1.OpenStackClusterSpec)) (client.ObjectKey, framework.Inventory) {
	baseline := takeInventory(ctx)
	spec := clusterSpec(name)
	spec.APIServerLoadBalancer = lb
	for _, edit := range edits {
		edit(&spec)
	}
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: clusterv1.ClusterSpec{
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackCluster", Name: name},
		},
	}
	Expect(kube.Create(ctx, cluster)).To(Succeed())
	osc := &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Spec: spec}
	Expect(kube.Create(ctx, osc)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { deleteCluster(ctx, cluster, baseline) }, NodeTimeout(8*time.Minute))
	return client.ObjectKeyFromObject(osc), baseline
}

func getCluster(ctx context.Context, g Gomega, key client.ObjectKey) *infrav1.OpenStackCluster {
	osc := &infrav1.OpenStackCluster{}
	g.Expect(kube.Get(ctx, key, osc)).To(Succeed())
	return osc
}

// updateCluster changes the OpenStackCluster's spec, retrying on conflicts with the controller.
func updateCluster(ctx context.Context, key client.ObjectKey, change func(*infrav1.OpenStackClusterSpec)) {
	Eventually(func(g Gomega) {
		osc := getCluster(ctx, g, key)
		change(&osc.Spec)
		g.Expect(kube.Update(ctx, osc)).To(Succeed())
	}).WithTimeout(30 * time.Second).Should(Succeed())
}

// conditionTrue reports condition t of conditions, for messages.
func conditionTrue(conditions []metav1.Condition, t string) error {
	for _, c := range conditions {
		if c.Type == t {
			if c.Status == metav1.ConditionTrue {
				return nil
			}
			return fmt.Errorf("%s is %s: %s: %s", t, c.Status, c.Reason, c.Message)
		}
	}
	return fmt.Errorf("no %s condition", t)
}

// waitClusterReady waits for the OpenStackCluster to be provisioned and Ready with one load
// balancer per zone (zones > 0) or a single one, and for the Cluster to see it.
func waitClusterReady(ctx context.Context, key client.ObjectKey, zones int) *infrav1.OpenStackCluster {
	var osc *infrav1.OpenStackCluster
	Eventually(func(g Gomega) {
		osc = getCluster(ctx, g, key)
		g.Expect(conditionTrue(osc.Status.Conditions, infrav1.ReadyCondition)).To(Succeed())
		g.Expect(osc.Status.Initialization).NotTo(BeNil())
		g.Expect(osc.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
		if zones > 0 {
			g.Expect(osc.Status.APIServerLoadBalancers).To(HaveLen(zones))
		}
		g.Expect(osc.Status.APIServerLoadBalancer).NotTo(BeNil())
		cluster := &clusterv1.Cluster{}
		g.Expect(kube.Get(ctx, key, cluster)).To(Succeed())
		g.Expect(cluster.Status.Initialization.InfrastructureProvisioned).To(HaveValue(BeTrue()), "the Cluster sees the infrastructure as provisioned")
	}).WithTimeout(5 * time.Minute).WithPolling(time.Second).Should(Succeed())
	return osc
}

// deleteCluster deletes the Cluster (Cluster API deletes its machines and the OpenStackCluster),
// waits until it is gone, then checks that the project holds nothing that baseline had not.
func deleteCluster(ctx context.Context, cluster *clusterv1.Cluster, baseline framework.Inventory) {
	start := time.Now()
	Expect(client.IgnoreNotFound(kube.Delete(ctx, cluster))).To(Succeed())
	waitGone(ctx, cluster)
	GinkgoWriter.Printf("cluster %s deleted in %s\n", cluster.Name, time.Since(start).Round(100*time.Millisecond))
	// The cluster's DNSEndpoint (owned by its OpenStackCluster) goes with it.
	record := &unstructured.Unstructured{}
	record.SetGroupVersionKind(schema.GroupVersionKind{Group: "externaldns.k8s.io", Version: "v1alpha1", Kind: "DNSEndpoint"})
	record.SetNamespace(cluster.Namespace)
	record.SetName(cluster.Name + "-apiserver")
	waitGone(ctx, record)
	expectNothingLeft(ctx, baseline)
}

// waitGone waits until obj is deleted (its finalizers removed).
func waitGone(ctx context.Context, obj client.Object) {
	Eventually(func() bool {
		err := kube.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
		return client.IgnoreNotFound(err) == nil && err != nil
	}).WithTimeout(5*time.Minute).WithPolling(time.Second).Should(BeTrue(), "%T %s is deleted", obj, obj.GetName())
}

// expectNothingLeft waits (Octavia frees VIP ports after the load balancer is gone) until the
// project has nothing that baseline had not.
func expectNothingLeft(ctx context.Context, baseline framework.Inventory) {
	Eventually(func(g Gomega) []string {
		now, err := framework.TakeInventory(ctx, openstack)
		g.Expect(err).NotTo(HaveOccurred())
		return now.Since(baseline)
	}).WithTimeout(2*time.Minute).WithPolling(2*time.Second).Should(BeEmpty(), "resources left in the project")
}

func takeInventory(ctx context.Context) framework.Inventory {
	inv, err := framework.TakeInventory(ctx, openstack)
	Expect(err).NotTo(HaveOccurred())
	return inv
}

// After each spec's body, before its cleanup deletes what it made: every subnet in the project
// lies in the rig's ranges, which are routed on this machine and never leave it (hack/lib.sh:
// RIG_RANGES, docs/e2e.md), so that a spec that makes a network elsewhere fails.
var _ = JustAfterEach(func(ctx SpecContext) {
	ranges := strings.Fields(os.Getenv("CAPO_E2E_RIG_RANGES"))
	if len(ranges) == 0 {
		return
	}
	sns, err := openstack.Network.ListSubnets(ctx, subnets.ListOpts{})
	Expect(err).NotTo(HaveOccurred())
	for _, sn := range sns {
		Expect(inRanges(sn.CIDR, ranges)).To(BeTrue(), "subnet %s (%s) lies outside the rig's ranges %v: add its range to RIG_RANGES in hack/lib.sh", sn.Name, sn.CIDR, ranges)
	}
})

// inRanges says whether the CIDR lies inside one of ranges.
func inRanges(cidr string, ranges []string) bool {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return false
	}
	for _, r := range ranges {
		if rp, err := netip.ParsePrefix(r); err == nil && rp.Bits() <= p.Bits() && rp.Contains(p.Masked().Addr()) {
			return true
		}
	}
	return false
}

// A failed spec leaves its objects and the project's inventory in the artifacts folder.
var _ = AfterEach(func(ctx SpecContext) {
	if !CurrentSpecReport().Failed() {
		return
	}
	dir := filepath.Join(cfg.artifacts, strings.ReplaceAll(CurrentSpecReport().FullText(), "/", "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	lists := map[string]client.ObjectList{
		"clusters.yaml":          &clusterv1.ClusterList{},
		"machines.yaml":          &clusterv1.MachineList{},
		"openstackclusters.yaml": &infrav1.OpenStackClusterList{},
		"openstackmachines.yaml": &infrav1.OpenStackMachineList{},
		"events.yaml":            &corev1.EventList{},
	}
	for file, list := range lists {
		if kube.List(ctx, list, client.InNamespace(namespace)) == nil {
			if data, err := yaml.Marshal(list); err == nil {
				_ = os.WriteFile(filepath.Join(dir, file), data, 0o644)
			}
		}
	}
	if inv, err := framework.TakeInventory(ctx, openstack); err == nil {
		var lines []string
		for k := range inv {
			lines = append(lines, k)
		}
		_ = os.WriteFile(filepath.Join(dir, "openstack-inventory.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	}
	GinkgoWriter.Printf("artifacts of the failed spec: %s\n", dir)
})
