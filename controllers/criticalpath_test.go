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
	"net/http"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

// The critical path of a cluster is Octavia's: what else a cluster needs runs beside it.

// clusterNetworks lists the networks named as the controller names cluster c of namespace.
func clusterNetworks(g Gomega, cloud *fakeopenstack.Cloud, namespace string) []networks.Network {
	found, err := cloud.Network().ListNetworks(ctx, networks.ListOpts{Name: networking.ResourceName(namespace, "c")})
	g.Expect(err).NotTo(HaveOccurred())
	return found
}

func TestLoadBalancersOnTheirOwnNetworkDoNotWaitForTheClusterNetwork(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("lb-apart")
	cloud := newCloud(t, g, ns)
	n := addLBNetwork(t, g, cloud, "az1", "az2")
	// Neutron refuses the cluster network: each zone's load balancer, on the operator's load
	// balancer network, is built all the same.
	refused := cloud.InjectFault(fakeopenstack.Fault{Operation: "CreateNetwork", Probability: 1, Status: http.StatusInternalServerError})
	osc := newCluster(g, ns, false, multiAZSpec(n, "az1", "az2"), true)
	g.Eventually(func(g Gomega) {
		g.Expect(refused.Fired()).To(BeNumerically(">=", 1))
		g.Expect(lbsIn(cloud)).To(HaveLen(2))
	}, eventually, poll).Should(Succeed())
	g.Expect(clusterNetworks(g, cloud, ns)).To(BeEmpty())
	// The status is written once the reconcile ends: the network is reported as failing.
	g.Eventually(func(g Gomega) {
		got := get(g, osc)
		g.Expect(conditions.IsFalse(got, infrav1.NetworkReadyCondition)).To(BeTrue(), "%v", conditions.Get(got, infrav1.NetworkReadyCondition))
	}, eventually, poll).Should(Succeed())

	cloud.RemoveFault(refused)
	g.Eventually(func(g Gomega) {
		lbReady(g, osc)
		g.Expect(conditions.IsTrue(get(g, osc), infrav1.ReadyCondition)).To(BeTrue())
	}, eventually, poll).Should(Succeed())
	g.Expect(lbsIn(cloud)).To(HaveLen(2), "nothing was made twice")
	g.Expect(clusterNetworks(g, cloud, ns)).To(HaveLen(1))
}

func TestTheSingleLoadBalancerWaitsForTheClusterNetwork(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("lb-single-waits")
	cloud := newCloud(t, g, ns)
	refused := cloud.InjectFault(fakeopenstack.Fault{Operation: "CreateNetwork", Probability: 1, Status: http.StatusInternalServerError})
	spec := managedSpec()
	spec.APIServerLoadBalancer = &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true)}
	osc := newCluster(g, ns, false, spec, true)
	// Two reconciles met the refusal: the single load balancer's VIP goes on the cluster
	// network, so none was created.
	g.Eventually(refused.Fired, eventually, poll).Should(BeNumerically(">=", 2))
	g.Expect(lbsIn(cloud)).To(BeEmpty())

	cloud.RemoveFault(refused)
	g.Eventually(func(g Gomega) { lbReady(g, osc) }, eventually, poll).Should(Succeed())
	g.Expect(lbsIn(cloud)).To(HaveLen(1))
}

func TestDeletionRemovesTheRouterWhileOctaviaDeletesTheLoadBalancer(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("delete-router-early")
	cloud := newCloud(t, g, ns)
	spec := managedSpec()
	spec.APIServerLoadBalancer = &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true)}
	osc := newCluster(g, ns, false, spec, true)
	g.Eventually(func(g Gomega) { lbReady(g, osc) }, eventually, poll).Should(Succeed())
	lbs := lbsIn(cloud)
	g.Expect(lbs).To(HaveLen(1))

	// Octavia is slow to take the delete (409 while busy): the load balancer stays, its VIP on
	// the cluster network. Its floating IP is released, and then the router goes meanwhile; the
	// network waits for the load balancer.
	busy := cloud.InjectFault(fakeopenstack.Fault{Operation: "DeleteLoadBalancer", Probability: 1, Status: http.StatusConflict})
	g.Expect(env.Client.Delete(ctx, osc)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(busy.Fired()).To(BeNumerically(">=", 1))
		found, err := cloud.Network().ListRouters(ctx, routers.ListOpts{Name: networking.ResourceName(ns, "c")})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(found).To(BeEmpty())
	}, eventually, poll).Should(Succeed())
	g.Expect(lbsIn(cloud)).To(HaveLen(1))
	g.Expect(clusterNetworks(g, cloud, ns)).To(HaveLen(1), "the load balancer's VIP is still on it")

	cloud.RemoveFault(busy)
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(osc), &infrav1.OpenStackCluster{}))
	}, eventually, poll).Should(BeTrue())
	g.Expect(countResources(cloud)).To(Equal(counts{networks: 1}), "only the external network the operator made is left")
	all, err := cloud.LoadBalancer().ListLoadBalancers(ctx, loadbalancers.ListOpts{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(all).To(BeEmpty())
}

func TestDeletionKeepsTheRouterWhileTheUsersFloatingIPGoesThroughIt(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("delete-router-user-fip")
	cloud := newCloud(t, g, ns)
	spec := managedSpec()
	spec.APIServerLoadBalancer = &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true)}
	public, err := cloud.Network().ListNetworks(ctx, networks.ListOpts{Name: "public"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(public).To(HaveLen(1))
	users, err := cloud.Network().CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: public[0].ID})
	g.Expect(err).NotTo(HaveOccurred())
	spec.APIServerFloatingIP = ptr.To(users.FloatingIP)
	osc := newCluster(g, ns, false, spec, true)
	g.Eventually(func(g Gomega) { lbReady(g, osc) }, eventually, poll).Should(Succeed())

	// The user's address stays on the VIP until Octavia deletes the port: Neutron keeps the
	// router's interface, and the deletion goes on once the load balancer is gone.
	busy := cloud.InjectFault(fakeopenstack.Fault{Operation: "DeleteLoadBalancer", Probability: 1, Status: http.StatusConflict})
	g.Expect(env.Client.Delete(ctx, osc)).To(Succeed())
	g.Eventually(busy.Fired, eventually, poll).Should(BeNumerically(">=", 2))
	found, err := cloud.Network().ListRouters(ctx, routers.ListOpts{Name: networking.ResourceName(ns, "c")})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(found).To(HaveLen(1), "the router was not touched while the user's floating IP goes through it")
	g.Expect(cloud.Calls()["RemoveRouterInterface"]).To(BeZero(), "not even tried: the user's floating IP is on the VIP")
	cloud.RemoveFault(busy)
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(osc), &infrav1.OpenStackCluster{}))
	}, eventually, poll).Should(BeTrue())
	g.Expect(countResources(cloud).routers).To(BeZero())
	kept, err := cloud.Network().ListFloatingIPs(ctx, floatingips.ListOpts{FloatingIP: users.FloatingIP})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(kept).To(HaveLen(1), "the user's floating IP is kept")
}
