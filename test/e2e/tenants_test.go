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
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
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
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/framework"
)

// victimView is what a tenant's cluster has, from outside: the project's inventory (IDs and
// names), each load balancer's listeners, pools, monitors, members and floating IP, the rules of
// its security groups, its control plane server, and its DNSEndpoint (UID and records).
type victimView struct {
	inventory     framework.Inventory
	loadBalancers []string
	rules         []string
	server        string
	dnsEndpoint   string
}

func viewVictim(ctx context.Context, g Gomega, key client.ObjectKey, machine string) victimView {
	osc := getCluster(ctx, g, key)
	inv, err := framework.TakeInventory(ctx, openstack)
	g.Expect(err).NotTo(HaveOccurred())
	v := victimView{inventory: inv}
	for _, lb := range osc.Status.APIServerLoadBalancers {
		o := observe(ctx, g, lb.ID)
		fip := ""
		if o.floatingIP != nil {
			fip = o.floatingIP.ID + " " + o.floatingIP.FloatingIP + " " + o.floatingIP.PortID
		}
		v.loadBalancers = append(v.loadBalancers, mustJSON(g, []any{o.lb.ID, o.lb.Name, o.lb.Tags, o.lb.VipPortID, o.listeners, o.members, fip}))
	}
	sgs, err := openstack.Network.ListSecGroups(ctx, groups.ListOpts{})
	g.Expect(err).NotTo(HaveOccurred())
	for _, sg := range sgs {
		if sg.ID != osc.Status.ControlPlaneSecurityGroup.ID && sg.ID != osc.Status.WorkerSecurityGroup.ID {
			continue
		}
		for _, r := range sg.Rules {
			v.rules = append(v.rules, mustJSON(g, r))
		}
	}
	slices.Sort(v.rules)
	server, err := openstack.Compute.GetServer(ctx, serverOf(ctx, machine))
	g.Expect(err).NotTo(HaveOccurred())
	v.server = mustJSON(g, []any{server.ID, server.Name, server.Status, server.Metadata, server.Addresses})
	record := &unstructured.Unstructured{}
	record.SetGroupVersionKind(schema.GroupVersionKind{Group: "externaldns.k8s.io", Version: "v1alpha1", Kind: "DNSEndpoint"})
	g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.Name + "-apiserver"}, record)).To(Succeed())
	v.dnsEndpoint = mustJSON(g, []any{record.GetUID(), record.Object["spec"]})
	return v
}

func mustJSON(g Gomega, v any) string {
	out, err := json.Marshal(v)
	g.Expect(err).NotTo(HaveOccurred())
	return string(out)
}

// hostileTenant is the hostile-tenant corpus on the real cloud: a tenant in another namespace,
// with its own Secret for the same project, names a cluster so that its resources are named like
// the victim's (key), publishes the victim's DNS name, points a machine's providerID at the
// victim's control plane server (machine's), and describes a port like a human's attached port.
// Each attempt ends in a condition that says so; after the tenant's objects are deleted, the
// victim's view is what it was, and DNS still answers the victim's zones.
func hostileTenant(ctx context.Context, key client.ObjectKey, machine string) {
	victim := waitClusterReady(ctx, key, 2)
	host := victim.Spec.ControlPlaneEndpoint.Host
	victimServer := serverOf(ctx, machine)
	// A human's port, named and described as the tenant's machine will name and describe its
	// own, on the victim's network and in use (its device a server of the human's elsewhere:
	// not one of the victim's, whose addresses Nova would then change).
	human, err := openstack.Network.CreatePort(ctx, ports.CreateOpts{Name: "db-" + runID + "-1", Description: "database",
		NetworkID: victim.Status.Network.ID, DeviceID: "4b1d5e0c-6f3a-4c2e-9d7b-" + strings.Repeat("0", 6) + runID + "0"})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) { Expect(openstack.Network.DeletePort(ctx, human.ID)).To(Succeed()) }, NodeTimeout(time.Minute))
	var before victimView
	Eventually(func(g Gomega) { before = viewVictim(ctx, g, key, machine) }).WithTimeout(time.Minute).Should(Succeed())

	// The victim's resources are named k8s-clusterapi-cluster-<namespace>-multiaz-<run>: so are
	// those of cluster <run> in namespace <namespace>-multiaz.
	ns := namespace + "-multiaz"
	Expect(kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	Expect(kube.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cloud", Namespace: ns},
		Data: map[string][]byte{scope.CloudsSecretKey: cfg.cloudsYAML}})).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.IgnoreNotFound(kube.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
	}, NodeTimeout(time.Minute))

	By("refusing admission to a wildcard DNS name")
	wild := clusterSpec("wild")
	wild.ControlPlaneEndpoint.Host = "*.e2e.example.com"
	wild.APIServerLoadBalancer = &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true), DNS: &infrav1.APIServerDNS{Publish: infrav1.DNSPublishDNSEndpoint}}
	err = kube.Create(ctx, &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: "wild", Namespace: ns}, Spec: wild}, client.DryRunAll)
	Expect(err).To(MatchError(ContainSubstring("spec.controlPlaneEndpoint.host")))
	Expect(err).To(MatchError(ContainSubstring("without a wildcard")))

	By("refusing the victim's network to a cluster whose names collide with the victim's, and which names the victim's router")
	collideSpec := clusterSpec(runID)
	// When it is deleted, only its own subnets may leave the router it names.
	collideSpec.Router = &infrav1.RouterParam{ID: ptr.To(victim.Status.Router.ID)}
	collide := createTenantCluster(ctx, ns, runID, collideSpec)
	owner := "OpenStackCluster " + key.Namespace + "/" + key.Name
	Eventually(func(g Gomega) {
		g.Expect(conditionTrue(tenantCluster(ctx, g, ns, runID).Status.Conditions, infrav1.NetworkReadyCondition)).To(MatchError(
			infrav1.NetworkReadyCondition + " is False: " + infrav1.ResourceOwnedElsewhereReason + ": network " + victim.Status.Network.Name +
				" (" + victim.Status.Network.ID + ") belongs to " + owner + ", not to this one: their names collide, and nothing of it is adopted, changed or deleted; rename this object"))
	}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())

	By("refusing an unmarked network named as upstream names the tenant's to a cluster whose takeover nobody recorded")
	// Made seconds before the cluster (within the clock skew the takeover rules allow): a
	// tenant naming its cluster after such a network, in time, gets nothing of it.
	window := "window-" + runID
	unmarked, err := openstack.Network.CreateNetwork(ctx, networks.CreateOpts{Name: networking.ResourceName(ns, window)})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		if err := openstack.Network.DeleteNetwork(ctx, unmarked.ID); !clients.IsNotFound(err) {
			Expect(err).NotTo(HaveOccurred())
		}
	}, NodeTimeout(time.Minute))
	windowObj := createTenantCluster(ctx, ns, window, clusterSpec(window))
	Eventually(func(g Gomega) {
		g.Expect(conditionTrue(tenantCluster(ctx, g, ns, window).Status.Conditions, infrav1.NetworkReadyCondition)).To(MatchError(
			ContainSubstring(infrav1.TakeoverNotRecordedReason + ": network " + unmarked.Name + " (" + unmarked.ID + ") carries no mark")))
	}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())

	By("refusing the victim's DNS name to a cluster of the tenant, which is provisioned otherwise")
	tenant := "tenant-" + runID
	spec := clusterSpec(tenant)
	spec.ControlPlaneEndpoint.Host = host
	spec.APIServerLoadBalancer = &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true), DNS: &infrav1.APIServerDNS{Publish: infrav1.DNSPublishDNSEndpoint, TTL: 30}}
	tenantObj := createTenantCluster(ctx, ns, tenant, spec)
	Eventually(func(g Gomega) {
		got := tenantCluster(ctx, g, ns, tenant)
		g.Expect(conditionTrue(got.Status.Conditions, infrav1.APIServerDNSReadyCondition)).To(MatchError(
			infrav1.APIServerDNSReadyCondition + " is False: " + infrav1.DNSNameTakenReason + ": " + host + " is already published by a DNSEndpoint of another namespace: a name has one holder; choose another spec.controlPlaneEndpoint.host"))
		g.Expect(got.Status.Initialization).NotTo(BeNil())
		g.Expect(got.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
	}).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())

	By("refusing the victim's server to a machine whose providerID names it")
	evil := "evil-" + runID
	createMachine(ctx, ns, tenant, evil, cfg.zones[0], false, func(s *infrav1.OpenStackMachineSpec) {
		s.ProviderID = ptr.To("openstack:///" + victimServer)
	})
	Eventually(func(g Gomega) {
		osm := &infrav1.OpenStackMachine{}
		g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: evil}, osm)).To(Succeed())
		g.Expect(conditionTrue(osm.Status.Conditions, infrav1.InstanceReadyCondition)).To(MatchError(
			infrav1.InstanceReadyCondition + " is False: " + infrav1.ResourceOwnedElsewhereReason + ": server " + machine + " (" + victimServer +
				") belongs to OpenStackMachine " + key.Namespace + "/" + machine + ", not to this one: their names collide, and nothing of it is adopted, changed or deleted; rename this object"))
	}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())

	By("refusing a person's server, made seconds before, to a machine named after it")
	person := "person-" + runID
	personServer := createPersonServer(ctx, person, tenantCluster(ctx, Default, ns, tenant).Status.Network.ID)
	createMachine(ctx, ns, tenant, person, cfg.zones[0], false)
	Eventually(func(g Gomega) {
		osm := &infrav1.OpenStackMachine{}
		g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: person}, osm)).To(Succeed())
		g.Expect(conditionTrue(osm.Status.Conditions, infrav1.InstanceReadyCondition)).To(MatchError(ContainSubstring(
			infrav1.TakeoverNotRecordedReason + ": server " + person + " (" + personServer + ")")))
		g.Expect(osm.Status.InstanceID).To(BeNil(), "the machine records no server")
	}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())

	By("refusing the victim's floating IPs to clusters that name them as their own: as the API server's, and as each zone's")
	first, second := victim.Status.APIServerLoadBalancers[0].IP, victim.Status.APIServerLoadBalancers[1].IP
	fipSingle := "fip-" + runID
	singleSpec := clusterSpec(fipSingle)
	singleSpec.APIServerFloatingIP = ptr.To(first)
	singleSpec.APIServerLoadBalancer = &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true)}
	fipSingleObj := createTenantCluster(ctx, ns, fipSingle, singleSpec)
	fipZones := "fips-" + runID
	zonesSpec := clusterSpec(fipZones)
	mapping := append([]infrav1.AZSubnetMapping(nil), lbNetwork.Mapping...)
	mapping[0].FloatingIP, mapping[1].FloatingIP = ptr.To(first), ptr.To(second)
	zonesSpec.APIServerLoadBalancer = &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true),
		Network: &infrav1.NetworkParam{ID: ptr.To(lbNetwork.NetworkID)}, AvailabilityZoneSubnets: mapping}
	fipZonesObj := createTenantCluster(ctx, ns, fipZones, zonesSpec)
	Eventually(func(g Gomega) {
		err := conditionTrue(tenantCluster(ctx, g, ns, fipSingle).Status.Conditions, infrav1.APIServerLoadBalancersReadyCondition)
		g.Expect(err).To(MatchError(ContainSubstring(infrav1.LoadBalancerConfigurationErrorReason + ": spec.apiServerFloatingIP: floating IP " + first + " is associated with port")))
		err = conditionTrue(tenantCluster(ctx, g, ns, fipZones).Status.Conditions, infrav1.APIServerLoadBalancersReadyCondition)
		g.Expect(err).To(MatchError(ContainSubstring(infrav1.LoadBalancerConfigurationErrorReason)))
		for i, ip := range []string{first, second} {
			g.Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf("spec.apiServerLoadBalancer.availabilityZoneSubnets[%d].floatingIP: floating IP %s is associated with port", i, ip))))
		}
	}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
	Consistently(func(g Gomega) {
		all, err := openstack.LoadBalancer.ListLoadBalancers(ctx, loadbalancers.ListOpts{})
		g.Expect(err).NotTo(HaveOccurred())
		for _, lb := range all {
			g.Expect(lb.Name).NotTo(ContainSubstring(ns+"-fip"), "no load balancer is made for the addresses the clusters cannot have")
		}
	}).WithTimeout(10 * time.Second).WithPolling(2 * time.Second).Should(Succeed())

	By("refusing to a cluster without a load balancer the floating IP upstream CAPO made for another namespace's cluster, whose namespace and name join as the tenant's do")
	// Upstream describes its address "... cluster <namespace>-<name>": the cluster upfip-<run> of
	// this namespace and the cluster <run> of namespace <this namespace>-upfip read the same.
	upfip := "upfip-" + runID
	externals, err := openstack.Network.ListNetworks(ctx, networks.ListOpts{Name: cfg.externalNetwork})
	Expect(err).NotTo(HaveOccurred())
	Expect(externals).To(HaveLen(1), "external network %s", cfg.externalNetwork)
	upstreams, err := openstack.Network.CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: externals[0].ID,
		Description: ownership.UpstreamDescription(ns+"-upfip", runID)})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		if err := openstack.Network.DeleteFloatingIP(ctx, upstreams.ID); !clients.IsNotFound(err) {
			Expect(err).NotTo(HaveOccurred())
		}
	}, NodeTimeout(time.Minute))
	upfipSpec := clusterSpec(upfip)
	upfipSpec.ControlPlaneEndpoint.Host = upstreams.FloatingIP
	upfipObj := createTenantCluster(ctx, ns, upfip, upfipSpec)
	Eventually(func(g Gomega) {
		var messages []string
		for _, c := range tenantCluster(ctx, g, ns, upfip).Status.Conditions {
			if c.Reason == infrav1.TakeoverNotRecordedReason {
				messages = append(messages, c.Message)
			}
		}
		g.Expect(messages).To(ContainElement(ContainSubstring(upstreams.FloatingIP)), "a condition TakeoverNotRecorded names the address")
	}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())

	By("giving a machine whose port is named and described like the human's a port of its own")
	db := "db-" + runID
	createMachine(ctx, ns, tenant, db, cfg.zones[0], false, func(s *infrav1.OpenStackMachineSpec) {
		s.Ports = []infrav1.PortOpts{{Description: ptr.To("database"), NameSuffix: ptr.To("1")}}
	})
	Eventually(func(g Gomega) {
		osm := &infrav1.OpenStackMachine{}
		g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: db}, osm)).To(Succeed())
		g.Expect(conditionTrue(osm.Status.Conditions, infrav1.InstanceReadyCondition)).To(Succeed())
		own, err := openstack.Network.ListPorts(ctx, ports.ListOpts{Name: human.Name, DeviceID: ptr.Deref(osm.Status.InstanceID, "")})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(own).To(HaveLen(1))
		g.Expect(own[0].ID).NotTo(Equal(human.ID))
	}).WithTimeout(4 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())

	By("refusing the victim's server group, named, to a machine of the tenant")
	// A hard anti-affinity group the victim's worker is in: a server that joined it would take
	// a host from the victim's machines.
	group := createServerGroup(ctx, "sg-"+runID, "anti-affinity")
	grouped := "grouped-" + runID
	createMachine(ctx, key.Namespace, key.Name, grouped, cfg.zones[0], false, func(s *infrav1.OpenStackMachineSpec) {
		s.ServerGroup = &infrav1.ServerGroupParam{ID: ptr.To(group.ID)}
	})
	Eventually(func(g Gomega) {
		osm := &infrav1.OpenStackMachine{}
		g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: grouped}, osm)).To(Succeed())
		g.Expect(conditionTrue(osm.Status.Conditions, infrav1.InstanceReadyCondition)).To(Succeed())
	}).WithTimeout(4 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	joiner := "joiner-" + runID
	createMachine(ctx, ns, tenant, joiner, cfg.zones[0], false, func(s *infrav1.OpenStackMachineSpec) {
		s.ServerGroup = &infrav1.ServerGroupParam{Filter: &infrav1.ServerGroupFilter{Name: ptr.To(group.Name)}}
	})
	Eventually(func(g Gomega) {
		osm := &infrav1.OpenStackMachine{}
		g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: joiner}, osm)).To(Succeed())
		err := conditionTrue(osm.Status.Conditions, infrav1.InstanceReadyCondition)
		g.Expect(err).To(MatchError(ContainSubstring(infrav1.InstanceReadyCondition + " is False: " + infrav1.ResourceOwnedElsewhereReason + ": ")))
		g.Expect(err).To(MatchError(ContainSubstring("server group " + group.Name + " (" + group.ID + ") holds servers of another namespace's machines")))
		g.Expect(osm.Status.InstanceID).To(BeNil(), "the machine has no server")
	}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
	members, err := servergroups.Get(ctx, computeClient(ctx), group.ID).Extract()
	Expect(err).NotTo(HaveOccurred())
	Expect(members.Members).To(HaveLen(1), "the victim's worker alone is in its group")
	Expect(kube.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: grouped}})).To(Succeed())

	By("deleting the tenant's machines and clusters")
	for _, name := range []string{evil, db, person, joiner} {
		Expect(kube.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})).To(Succeed())
	}
	for _, name := range []string{evil, db, person, joiner} {
		waitGone(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	}
	waitGone(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: grouped}})
	// The person's server outlives the machine named after it; its owner then removes it, and
	// with it its port on the tenant's network.
	server, err := openstack.Compute.GetServer(ctx, personServer)
	Expect(err).NotTo(HaveOccurred(), "the person's server outlives the machine named after it")
	Expect(server.Name).To(Equal(person))
	deleteServer(ctx, personServer)
	for _, c := range []*clusterv1.Cluster{collide, tenantObj, windowObj, fipSingleObj, fipZonesObj, upfipObj} {
		Expect(kube.Delete(ctx, c)).To(Succeed())
	}
	for _, c := range []*clusterv1.Cluster{collide, tenantObj, windowObj, fipSingleObj, fipZonesObj, upfipObj} {
		waitGone(ctx, c)
	}
	kept, err := openstack.Network.ListFloatingIPs(ctx, floatingips.ListOpts{ID: upstreams.ID})
	Expect(err).NotTo(HaveOccurred())
	Expect(kept).To(HaveLen(1), "upstream's floating IP outlives the cluster named after it")
	Expect(kept[0].Description).To(Equal(upstreams.Description))
	Expect(kept[0].PortID).To(BeEmpty())
	Expect(openstack.Network.DeleteFloatingIP(ctx, upstreams.ID)).To(Succeed())
	keptNet, err := openstack.Network.GetNetwork(ctx, unmarked.ID)
	Expect(err).NotTo(HaveOccurred(), "the unmarked network outlives the cluster named after it")
	Expect(keptNet.Name).To(Equal(unmarked.Name))
	Expect(openstack.Network.DeleteNetwork(ctx, unmarked.ID)).To(Succeed())

	By("finding the victim as it was")
	expectVictimAsBefore(ctx, key, machine, before)
}

// expectVictimAsBefore waits until the victim (key, with machine) looks as before did: the
// project's inventory, its load balancers, security group rules, server and DNSEndpoint; then
// checks that DNS answers its zones' addresses and that it is Ready.
func expectVictimAsBefore(ctx context.Context, key client.ObjectKey, machine string, before victimView) {
	Eventually(func(g Gomega) {
		now := viewVictim(ctx, g, key, machine)
		g.Expect(now.inventory.Since(before.inventory)).To(BeEmpty(), "resources the tenants left")
		g.Expect(before.inventory.Since(now.inventory)).To(BeEmpty(), "resources the tenants removed")
		g.Expect(now.loadBalancers).To(Equal(before.loadBalancers))
		g.Expect(now.rules).To(Equal(before.rules))
		g.Expect(now.server).To(Equal(before.server))
		g.Expect(now.dnsEndpoint).To(Equal(before.dnsEndpoint))
	}).WithTimeout(2 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	victim := getCluster(ctx, Default, key)
	waitDNS(ctx, victim.Spec.ControlPlaneEndpoint.Host, victim.Status.APIServerLoadBalancers[0].IP, victim.Status.APIServerLoadBalancers[1].IP)
	Expect(conditionTrue(victim.Status.Conditions, infrav1.ReadyCondition)).To(Succeed())
}

// createTenantCluster creates a Cluster and its OpenStackCluster in namespace ns.
func createTenantCluster(ctx context.Context, ns, name string, spec infrav1.OpenStackClusterSpec) *clusterv1.Cluster {
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: clusterv1.ClusterSpec{
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackCluster", Name: name},
		},
	}
	Expect(kube.Create(ctx, cluster)).To(Succeed())
	Expect(kube.Create(ctx, &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: spec})).To(Succeed())
	return cluster
}

func tenantCluster(ctx context.Context, g Gomega, ns, name string) *infrav1.OpenStackCluster {
	return getCluster(ctx, g, client.ObjectKey{Namespace: ns, Name: name})
}

// createPersonServer makes a server the way a person would, with Nova's API (the suite's flavor
// and image, a port on network), and returns its ID; the cleanup deletes it if it still exists.
func createPersonServer(ctx context.Context, name, network string) string {
	all, err := openstack.Compute.ListFlavors(ctx, flavors.ListOpts{})
	Expect(err).NotTo(HaveOccurred())
	i := slices.IndexFunc(all, func(f flavors.Flavor) bool { return f.Name == cfg.flavor })
	Expect(i).To(BeNumerically(">=", 0), "flavor %s", cfg.flavor)
	found, err := openstack.Image.ListImages(ctx, images.ListOpts{Name: cfg.image})
	Expect(err).NotTo(HaveOccurred())
	Expect(found).To(HaveLen(1), "image %s", cfg.image)
	server, err := openstack.Compute.CreateServer(ctx, servers.CreateOpts{Name: name, FlavorRef: all[i].ID, ImageRef: found[0].ID,
		Networks: []servers.Network{{UUID: network}}}, nil)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		if _, err := openstack.Compute.GetServer(ctx, server.ID); err == nil {
			deleteServer(ctx, server.ID)
		}
	}, NodeTimeout(2*time.Minute))
	// Running, with its address on the network, as upstream's server of a machine would be.
	Eventually(func(g Gomega) {
		got, err := openstack.Compute.GetServer(ctx, server.ID)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got.Status).To(Equal("ACTIVE"))
		g.Expect(got.Addresses).NotTo(BeEmpty())
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
	return server.ID
}

// deleteServer deletes server id and waits until Nova no longer has it.
func deleteServer(ctx context.Context, id string) {
	Expect(openstack.Compute.DeleteServer(ctx, id)).To(Succeed())
	Eventually(func() bool {
		_, err := openstack.Compute.GetServer(ctx, id)
		return clients.IsNotFound(err)
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(BeTrue(), "server %s is deleted", id)
}
