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
	"encoding/json"
	"fmt"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

// The hostile-tenant corpus: two namespaces, each a tenant, share one OpenStack project (one fake
// cloud). The attacker's objects collide with the victim's by name, point at the victim's
// server, describe their port like a human's, publish the victim's DNS name: each ends in a
// condition that says so, and once the attacker's objects are deleted the cloud, and the victim's
// DNSEndpoint, are what they were before, to the byte.

// snapshot is everything the fake OpenStack holds, as JSON: two snapshots are equal when nothing
// was added, removed or changed (names, tags, descriptions, rules, associations, members).
func snapshot(g Gomega, cloud *fakeopenstack.Cloud) string {
	n, lb := cloud.Network(), cloud.LoadBalancer()
	all := map[string]any{}
	keep := func(kind string, list any, err error) {
		g.Expect(err).NotTo(HaveOccurred(), kind)
		all[kind] = list
	}
	nets, err := n.ListNetworks(ctx, networks.ListOpts{})
	keep("networks", nets, err)
	subs, err := n.ListSubnets(ctx, subnets.ListOpts{})
	keep("subnets", subs, err)
	ps, err := n.ListPorts(ctx, ports.ListOpts{})
	keep("ports", ps, err)
	rs, err := n.ListRouters(ctx, routers.ListOpts{})
	keep("routers", rs, err)
	gs, err := n.ListSecGroups(ctx, groups.ListOpts{})
	keep("groups", gs, err)
	rules, err := n.ListSecGroupRules(ctx, rules.ListOpts{})
	keep("rules", rules, err)
	fips, err := n.ListFloatingIPs(ctx, floatingips.ListOpts{})
	keep("floatingIPs", fips, err)
	lbs, err := lb.ListLoadBalancers(ctx, loadbalancers.ListOpts{})
	keep("loadBalancers", lbs, err)
	ls, err := lb.ListListeners(ctx, listeners.ListOpts{})
	keep("listeners", ls, err)
	pls, err := lb.ListPools(ctx, pools.ListOpts{})
	keep("pools", pls, err)
	for _, p := range pls {
		members, err := lb.ListMembers(ctx, p.ID, pools.ListMembersOpts{})
		keep("members of "+p.ID, members, err)
	}
	ms, err := lb.ListMonitors(ctx, monitors.ListOpts{})
	keep("monitors", ms, err)
	ss, err := cloud.Compute().ListServers(ctx, servers.ListOpts{})
	keep("servers", ss, err)
	out, err := json.MarshalIndent(all, "", " ")
	g.Expect(err).NotTo(HaveOccurred())
	return string(out)
}

// shareCloud makes namespace a tenant of cloud's project, beside the namespace it was made for.
func shareCloud(g *WithT, cloud *fakeopenstack.Cloud, namespace string) {
	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})).To(Succeed())
	clouds.set(namespace, cloud)
}

// provisioned waits until osc's infrastructure is provisioned.
func provisioned(g *WithT, osc *infrav1.OpenStackCluster) *infrav1.OpenStackCluster {
	var got *infrav1.OpenStackCluster
	g.Eventually(func(g Gomega) {
		got = get(g, osc)
		g.Expect(got.Status.Initialization).NotTo(BeNil(), "conditions: %v", got.Status.Conditions)
		g.Expect(got.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
	}, eventually, poll).Should(Succeed())
	return got
}

// refused waits until obj's condition is False with reason and message.
func refused(g *WithT, obj client.Object, condition, reason, message string) {
	g.Eventually(func(g Gomega) {
		cur := obj.DeepCopyObject().(client.Object)
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), cur)).To(Succeed())
		c := conditions.Get(cur.(conditions.Getter), condition)
		g.Expect(c).NotTo(BeNil(), "no %s condition", condition)
		g.Expect([]string{string(c.Status), c.Reason, c.Message}).To(Equal([]string{string(metav1.ConditionFalse), reason, message}))
	}, eventually, poll).Should(Succeed())
}

// deleteAll deletes objs and waits until they are gone (their finalizers removed).
func deleteAll(g *WithT, objs ...client.Object) {
	for _, obj := range objs {
		g.Expect(env.Client.Delete(ctx, obj)).To(Succeed())
	}
	for _, obj := range objs {
		cur := obj.DeepCopyObject().(client.Object)
		g.Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), cur))
		}, eventually, poll).Should(BeTrue(), func() string { return fmt.Sprintf("%s is deleted: %+v", obj.GetName(), cur) })
	}
}

// owned is the end of every message about a resource another object's mark claims.
func owned(kind, name, id, owner string) string {
	return kind + " " + name + " (" + id + ") belongs to " + owner +
		", not to this one: their names collide, and nothing of it is adopted, changed or deleted; rename this object"
}

// Namespace team-N with cluster a-prod and namespace team-N-a with cluster prod get the same
// names: the attacker's network, security groups and load balancer are the victim's by name, and
// by nothing else.
func TestTenantsWhoseNamesCollide(t *testing.T) {
	g := NewWithT(t)
	victimNS := testNamespace("team")
	cloud := newCloud(t, g, victimNS)
	tenantNet := cloud.AddNetwork("tenant-net", false)
	cloud.AddSubnet(tenantNet, "tenant-subnet", "10.70.0.0/24")
	spec := managedSpec()
	spec.APIServerLoadBalancer = &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true)}
	victim := provisioned(g, newNamedCluster(g, victimNS, "a-prod", false, spec, true))
	before := snapshot(g, cloud)
	name := networking.ResourceName(victimNS, "a-prod")
	victimOwner := "OpenStackCluster " + victimNS + "/a-prod"

	t.Run("a managed network", func(t *testing.T) {
		g := NewWithT(t)
		ns := victimNS + "-a"
		shareCloud(g, cloud, ns)
		attacker := newNamedCluster(g, ns, "prod", false, spec, true)
		g.Expect(networking.ResourceName(ns, "prod")).To(Equal(name))
		refused(g, attacker, infrav1.NetworkReadyCondition, infrav1.ResourceOwnedElsewhereReason,
			owned("network", name, victim.Status.Network.ID, victimOwner))
		// The OpenStackCluster goes first, as Cluster API deletes them: the controller needs its
		// Cluster to delete it.
		deleteAll(g, attacker)
		deleteAll(g, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prod"}})
		g.Expect(snapshot(g, cloud)).To(Equal(before))
	})

	t.Run("security groups and a load balancer on the tenant's own network", func(t *testing.T) {
		g := NewWithT(t)
		own := spec
		own.ManagedSubnets = nil
		own.Network = &infrav1.NetworkParam{ID: ptr.To(tenantNet)}
		attacker := newNamedCluster(g, victimNS+"-a", "prod", false, own, true)
		refused(g, attacker, infrav1.SecurityGroupsReadyCondition, infrav1.ResourceOwnedElsewhereReason,
			owned("security group", "k8s-cluster-"+victimNS+"-a-prod-secgroup-controlplane", victim.Status.ControlPlaneSecurityGroup.ID, victimOwner))
		lb := victim.Status.APIServerLoadBalancer
		refused(g, attacker, infrav1.APIServerLoadBalancersReadyCondition, infrav1.ResourceOwnedElsewhereReason,
			owned("load balancer", lb.Name, lb.ID, "another object of this provider"))
		deleteAll(g, attacker)
		g.Expect(snapshot(g, cloud)).To(Equal(before))
	})
}

// Cluster foo's load balancer in zone az1 is named like cluster foo-az1's single one, in one
// namespace: foo's az1 is refused, its az2 is served, and foo-az1 keeps its load balancer.
func TestZoneNameCollidesWithAnotherClusters(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("zones")
	cloud := newCloud(t, g, ns)
	n := addLBNetwork(t, g, cloud, "az1", "az2")
	single := managedSpec()
	single.APIServerLoadBalancer = &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true)}
	victim := provisioned(g, newNamedCluster(g, ns, "foo-az1", false, single, true))
	before := snapshot(g, cloud)
	lb := victim.Status.APIServerLoadBalancer
	g.Expect(zones.Name(ns, "foo", "az1")).To(Equal(lb.Name))

	attacker := newNamedCluster(g, ns, "foo", false, multiAZSpec(n, "az1", "az2"), true)
	refused(g, attacker, infrav1.APIServerLoadBalancersReadyCondition, infrav1.ResourceOwnedElsewhereReason,
		"az1: "+owned("load balancer", lb.Name, lb.ID, "another object of this provider"))
	g.Eventually(func(g Gomega) {
		got := get(g, attacker)
		g.Expect(got.Status.ZonesReady).To(Equal("1/2"))
		g.Expect(got.Status.APIServerLoadBalancers).To(ConsistOf(HaveField("AvailabilityZone", "az2")))
	}, eventually, poll).Should(Succeed())
	deleteAll(g, attacker)
	g.Expect(snapshot(g, cloud)).To(Equal(before))
}

// A machine whose providerID names another tenant's server is refused, and its deletion leaves
// that server alone; a machine whose port is named and described like a human's attached port
// makes its own, and its deletion leaves the human's.
func TestTenantMachinesNeverTakeAnotherServerOrPort(t *testing.T) {
	g := NewWithT(t)
	victimNS := testNamespace("victim")
	cloud := newCloud(t, g, victimNS)
	addMachineImages(cloud)
	provisioned(g, newCluster(g, victimNS, false, managedSpec(), true))
	markInfrastructureProvisioned(g, victimNS)
	var victim *infrav1.OpenStackMachine
	var server *servers.Server
	m := newMachine(g, victimNS, "m", "az1", false)
	g.Eventually(func(g Gomega) { victim, server = machineProvisioned(g, cloud, m) }, eventually, poll).Should(Succeed())
	// A human adds a port of their own to the victim's server.
	human, err := cloud.Network().CreatePort(ctx, ports.CreateOpts{Name: "db-1", Description: "database", NetworkID: get(g, newClusterKey(victimNS)).Status.Network.ID, DeviceID: server.ID})
	g.Expect(err).NotTo(HaveOccurred())
	before := snapshot(g, cloud)

	ns := testNamespace("attacker")
	shareCloud(g, cloud, ns)
	attackerCluster := provisioned(g, newCluster(g, ns, false, managedSpec(), true))
	markInfrastructureProvisioned(g, ns)
	evil := newMachine(g, ns, "evil", "az1", false, func(s *infrav1.OpenStackMachineSpec) { s.ProviderID = victim.Spec.ProviderID })
	refused(g, evil, infrav1.InstanceReadyCondition, infrav1.ResourceOwnedElsewhereReason,
		owned("server", "m", server.ID, "OpenStackMachine "+victimNS+"/m"))
	db := newMachine(g, ns, "db", "az1", false, func(s *infrav1.OpenStackMachineSpec) {
		s.Ports = []infrav1.PortOpts{{Description: ptr.To("database"), NameSuffix: ptr.To("1")}}
	})
	g.Eventually(func(g Gomega) {
		_, own := machineProvisioned(g, cloud, db)
		mine, err := cloud.Network().ListPorts(ctx, ports.ListOpts{Name: "db-1", DeviceID: own.ID})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(mine).To(HaveLen(1))
		g.Expect(mine[0].ID).NotTo(Equal(human.ID))
	}, eventually, poll).Should(Succeed())
	deleteAll(g, evil, db)
	deleteAll(g, attackerCluster)
	g.Expect(snapshot(g, cloud)).To(Equal(before))
}

// A cluster may publish neither a wildcard (admission refuses it) nor a name another tenant's
// cluster publishes: the victim's DNSEndpoint is never written, and stays after the attacker goes.
func TestTenantsCannotTakeADNSName(t *testing.T) {
	g := NewWithT(t)
	victimNS := testNamespace("dns-victim")
	cloud := newCloud(t, g, victimNS)
	n := addLBNetwork(t, g, cloud, "az1", "az2")
	spec := multiAZSpec(n, "az1", "az2")
	spec.APIServerLoadBalancer.DNS = &infrav1.APIServerDNS{Publish: infrav1.DNSPublishDNSEndpoint, TTL: 30}
	// A name of this run's own: the name is held cluster-wide, by every namespace's DNSEndpoints.
	host := "api." + victimNS + ".example.com"
	spec.ControlPlaneEndpoint.Host = host
	victim := newCluster(g, victimNS, false, spec, true)
	g.Eventually(func(g Gomega) {
		g.Expect(conditions.IsTrue(get(g, victim), infrav1.APIServerDNSReadyCondition)).To(BeTrue())
	}, eventually, poll).Should(Succeed())
	defer deleteAll(g, victim)
	record := func(g Gomega) string {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(dnsEndpointGVK)
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: victimNS, Name: "c-apiserver"}, obj)).To(Succeed())
		out, err := json.Marshal([]any{obj.GetUID(), obj.GetResourceVersion(), obj.Object["spec"]})
		g.Expect(err).NotTo(HaveOccurred())
		return string(out)
	}
	before, published := snapshot(g, cloud), record(g)

	ns := testNamespace("dns-attacker")
	shareCloud(g, cloud, ns)
	wildcard := *spec.DeepCopy()
	wildcard.ControlPlaneEndpoint = &clusterv1.APIEndpoint{Host: "*.example.com", Port: 6443}
	err := env.Client.Create(ctx, &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: "wild", Namespace: ns}, Spec: wildcard})
	g.Expect(err).To(MatchError(ContainSubstring("spec.controlPlaneEndpoint.host: Invalid value")))
	g.Expect(err).To(MatchError(ContainSubstring("without a wildcard, when spec.apiServerLoadBalancer.dns is set: got *.example.com")))

	attacker := newCluster(g, ns, false, spec, true)
	refused(g, attacker, infrav1.APIServerDNSReadyCondition, infrav1.DNSNameTakenReason,
		host+" is already published by a DNSEndpoint of another namespace: a name has one holder; choose another spec.controlPlaneEndpoint.host")
	deleteAll(g, attacker)
	g.Expect(record(g)).To(Equal(published))
	g.Expect(snapshot(g, cloud)).To(Equal(before))
}

// newClusterKey is the OpenStackCluster newCluster makes in namespace.
func newClusterKey(namespace string) *infrav1.OpenStackCluster {
	return &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: namespace}}
}
