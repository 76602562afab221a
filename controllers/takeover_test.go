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
	"strconv"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
	managerscheme "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scheme"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// Taking over what upstream CAPO v0.14 left.

func TestConditionsAnotherControllerLeftAreDropped(t *testing.T) {
	g := NewWithT(t)
	osc := &infrav1.OpenStackCluster{}
	osc.Status.Conditions = []metav1.Condition{
		{Type: "RouterReady", Status: metav1.ConditionTrue},                                  // upstream CAPO v0.14's, no reason
		{Type: infrav1.ReadyCondition, Status: metav1.ConditionTrue},                         // upstream's Ready: no reason either
		{Type: infrav1.NetworkReadyCondition, Status: metav1.ConditionTrue, Reason: "Ready"}, // ours
	}
	dropForeignConditions(osc, append([]string{infrav1.ReadyCondition}, clusterConditions...))
	g.Expect(osc.Status.Conditions).To(HaveLen(1))
	g.Expect(osc.Status.Conditions[0].Type).To(Equal(infrav1.NetworkReadyCondition))
}

// Upstream's CRD stored conditions without a reason, which this provider's CRD refuses: any
// status write that merges into that list fails (Cluster API's paused condition first), so the
// first reconcile writes the list without them, alone, before anything else.
func TestTheFirstReconcileWritesTheConditionsWithoutUpstreamsAlone(t *testing.T) {
	g := NewWithT(t)
	scheme, err := managerscheme.New()
	g.Expect(err).NotTo(HaveOccurred())
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", UID: "uid-cluster"}}
	osc := &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "c", UID: "uid-cluster"}}}}
	osc.Status.Conditions = []metav1.Condition{
		{Type: infrav1.ReadyCondition, Status: metav1.ConditionTrue},
		{Type: "RouterReady", Status: metav1.ConditionTrue},
		{Type: infrav1.NetworkReadyCondition, Status: metav1.ConditionTrue, Reason: "Ready"},
	}
	kube := fakeclient.NewClientBuilder().WithScheme(scheme).WithObjects(cluster, osc).WithStatusSubresource(osc).Build()
	r := &OpenStackClusterReconciler{Client: kube}

	res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(osc)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(Equal(requeue.Cache), "back once the cache shows the write")
	got := &infrav1.OpenStackCluster{}
	g.Expect(kube.Get(ctx, client.ObjectKeyFromObject(osc), got)).To(Succeed())
	g.Expect(got.Status.Conditions).To(HaveLen(1))
	g.Expect(got.Status.Conditions[0].Type).To(Equal(infrav1.NetworkReadyCondition))
	g.Expect(got.Finalizers).To(BeEmpty(), "nothing else written by that reconcile")
}

func TestAnExternallyManagedClusterIsLeftAlone(t *testing.T) {
	g := NewWithT(t)
	scheme, err := managerscheme.New()
	g.Expect(err).NotTo(HaveOccurred())
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", UID: "uid-cluster"}}
	osc := &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns",
		Annotations:     map[string]string{clusterv1.ManagedByAnnotation: "someone-else"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "c", UID: "uid-cluster"}}}}
	kube := fakeclient.NewClientBuilder().WithScheme(scheme).WithObjects(cluster, osc).WithStatusSubresource(osc).Build()
	r := &OpenStackClusterReconciler{Client: kube}

	res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(osc)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(BeZero())
	got := &infrav1.OpenStackCluster{}
	g.Expect(kube.Get(ctx, client.ObjectKeyFromObject(osc), got)).To(Succeed())
	g.Expect(got.Finalizers).To(BeEmpty(), "no finalizer: nothing of it is this provider's")
	g.Expect(got.Status.Conditions).To(BeEmpty(), "no status written")
}

func TestTheServerIDComesFromTheStatusElseTheProviderID(t *testing.T) {
	g := NewWithT(t)
	const id = "8d8e5d2a-8a3b-4b4e-9f3f-5b2a1c0d9e7f"
	osm := func(instanceID, providerID string) *infrav1.OpenStackMachine {
		m := &infrav1.OpenStackMachine{}
		if instanceID != "" {
			m.Status.InstanceID = &instanceID
		}
		if providerID != "" {
			m.Spec.ProviderID = &providerID
		}
		return m
	}
	g.Expect(knownServerID(osm(id, "openstack:///other"))).To(Equal(id))
	g.Expect(knownServerID(osm("", "openstack:///"+id))).To(Equal(id), "after clusterctl move")
	g.Expect(knownServerID(osm("", "openstack://RegionOne/"+id))).To(Equal(id), "as upstream CAPO writes it with a region")
	g.Expect(knownServerID(osm("", "aws:///"+id))).To(BeEmpty())
	g.Expect(knownServerID(osm("", "openstack:///not-a-server-id"))).To(BeEmpty())
	g.Expect(knownServerID(osm("", ""))).To(BeEmpty())
}

// upstreamCluster makes in the fake what upstream CAPO v0.14 makes for managedSpec() with a
// single load balancer on ports 6443 and 9345, as its documentation and code say: the network,
// subnet and router named k8s-clusterapi-cluster-<ns>-c, its security groups (description
// "Cluster API managed group") with its rule set, the load balancer built step by step with its
// listeners, pools and monitors named <lb>-<port>, and a floating IP with upstream's description
// on the VIP.
func upstreamCluster(t *testing.T, g *WithT, cloud *fakeopenstack.Cloud, ns string) {
	t.Helper()
	n, lbs := cloud.Network(), cloud.LoadBalancer()
	name := "k8s-clusterapi-cluster-" + ns + "-c"
	desc := "Created by cluster-api-provider-openstack cluster " + ns + "-c"
	net, err := n.CreateNetwork(ctx, networks.CreateOpts{Name: name, AdminStateUp: ptr.To(true)})
	g.Expect(err).NotTo(HaveOccurred())
	sub, err := n.CreateSubnet(ctx, subnets.CreateOpts{NetworkID: net.ID, Name: name, Description: desc, CIDR: "10.6.0.0/24", IPVersion: gophercloud.IPv4})
	g.Expect(err).NotTo(HaveOccurred())
	exts, err := n.ListNetworks(ctx, networks.ListOpts{Name: "public"})
	g.Expect(err).NotTo(HaveOccurred())
	router, err := n.CreateRouter(ctx, routers.CreateOpts{Name: name, Description: desc, GatewayInfo: &routers.GatewayInfo{NetworkID: exts[0].ID}})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = n.AddRouterInterface(ctx, router.ID, routers.AddInterfaceOpts{SubnetID: sub.ID})
	g.Expect(err).NotTo(HaveOccurred())

	cp, err := n.CreateSecGroup(ctx, groups.CreateOpts{Name: "k8s-cluster-" + ns + "-c-secgroup-controlplane", Description: "Cluster API managed group"})
	g.Expect(err).NotTo(HaveOccurred())
	w, err := n.CreateSecGroup(ctx, groups.CreateOpts{Name: "k8s-cluster-" + ns + "-c-secgroup-worker", Description: "Cluster API managed group"})
	g.Expect(err).NotTo(HaveOccurred())
	in := func(group, protocol string, min, max int, prefix, remote string) rules.CreateOpts {
		return rules.CreateOpts{SecGroupID: group, Direction: "ingress", EtherType: "IPv4", Protocol: rules.RuleProtocol(protocol),
			PortRangeMin: min, PortRangeMax: max, RemoteIPPrefix: prefix, RemoteGroupID: remote}
	}
	egress := func(group, etherType string) rules.CreateOpts {
		return rules.CreateOpts{SecGroupID: group, Direction: "egress", EtherType: rules.RuleEtherType(etherType)}
	}
	_, err = n.CreateSecGroupRules(ctx, []rules.CreateOpts{
		egress(cp.ID, "IPv4"), egress(cp.ID, "IPv6"), egress(w.ID, "IPv4"), egress(w.ID, "IPv6"),
		in(cp.ID, "tcp", 6443, 6443, "", ""), in(cp.ID, "tcp", 9345, 9345, "", ""),
		in(cp.ID, "tcp", 2379, 2380, "", cp.ID), in(cp.ID, "tcp", 10250, 10250, "", cp.ID), in(cp.ID, "tcp", 10250, 10250, "", w.ID),
		in(w.ID, "tcp", 30000, 32767, "10.6.0.0/24", ""), in(w.ID, "udp", 30000, 32767, "10.6.0.0/24", ""),
		in(w.ID, "tcp", 30000, 32767, "", w.ID), in(w.ID, "udp", 30000, 32767, "", w.ID),
		in(w.ID, "tcp", 30000, 32767, "", cp.ID), in(w.ID, "udp", 30000, 32767, "", cp.ID),
		in(w.ID, "tcp", 10250, 10250, "", w.ID), in(w.ID, "tcp", 10250, 10250, "", cp.ID),
	})
	g.Expect(err).NotTo(HaveOccurred())

	lbName := name + "-kubeapi"
	lb, err := lbs.CreateLoadBalancer(ctx, loadbalancers.CreateOpts{Name: lbName, Description: desc, VipSubnetID: sub.ID, Tags: []string{"e2e"}})
	g.Expect(err).NotTo(HaveOccurred())
	settle := func() {
		g.Eventually(func(g Gomega) {
			got, err := lbs.GetLoadBalancer(ctx, lb.ID)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got.ProvisioningStatus).To(Equal("ACTIVE"))
		}, eventually, poll).Should(Succeed())
	}
	settle()
	for _, port := range []int{6443, 9345} {
		child := fmt.Sprintf("%s-%d", lbName, port)
		l, err := lbs.CreateListener(ctx, listeners.CreateOpts{Name: child, LoadbalancerID: lb.ID, Protocol: listeners.ProtocolTCP, ProtocolPort: port, Tags: []string{"e2e"}})
		g.Expect(err).NotTo(HaveOccurred())
		settle()
		p, err := lbs.CreatePool(ctx, pools.CreateOpts{Name: child, ListenerID: l.ID, Protocol: pools.ProtocolTCP, LBMethod: pools.LBMethodRoundRobin, Tags: []string{"e2e"}})
		g.Expect(err).NotTo(HaveOccurred())
		settle()
		_, err = lbs.CreateMonitor(ctx, monitors.CreateOpts{Name: child, PoolID: p.ID, Type: monitors.TypeTCP, Delay: 10, Timeout: 5, MaxRetries: 5, MaxRetriesDown: 3})
		g.Expect(err).NotTo(HaveOccurred())
		settle()
	}
	_, err = n.CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: exts[0].ID, PortID: lb.VipPortID, Description: desc})
	g.Expect(err).NotTo(HaveOccurred())
}

// The objects arrive as upstream's v0.14 stores them (v1beta1) or as its v0.15 does (v1beta2):
// clusterctl move writes them in the version the source stores, and the API server converts a
// v1beta2 object through the provider's webhook.
func TestAClusterUpstreamCAPOCreatedIsTakenOverWithoutCreatingOrDeleting(t *testing.T) {
	for _, version := range []string{"v1beta1", "v1beta2"} {
		t.Run("written in "+version, func(t *testing.T) { takeOverUpstreamCluster(t, version) })
	}
}

func takeOverUpstreamCluster(t *testing.T, version string) {
	g := NewWithT(t)
	ns := testNamespace("takeover")
	cloud := newCloud(t, g, ns)
	upstreamCluster(t, g, cloud, ns)
	before := countResources(cloud)
	cloud.ResetCalls()

	// The OpenStackCluster as upstream's YAML had it, with no status: what clusterctl move to a
	// management cluster running this provider gives (status does not travel).
	spec := managedSpec()
	spec.APIServerLoadBalancer = &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true), AdditionalPorts: []int{9345}}
	osc := newNamedClusterIn(g, version, ns, "c", false, spec, true)
	// Until the operator records the takeover, nothing of upstream's is adopted or changed, and
	// nothing is made beside it.
	g.Eventually(func(g Gomega) {
		g.Expect(reasonsOf(get(g, osc))).To(ContainElement(infrav1.TakeoverNotRecordedReason))
	}, eventually, poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		for call := range cloud.Calls() {
			g.Expect(call).To(Or(HavePrefix("Get"), HavePrefix("List")), "no change before the takeover is recorded")
		}
	}, "1s", poll).Should(Succeed())
	recordTakeover(ctx, g, osc)
	g.Eventually(func(g Gomega) {
		got := lbReady(g, osc)
		g.Expect(got.Status.APIServerLoadBalancer).NotTo(BeNil())
		g.Expect(got.Status.APIServerLoadBalancer.Name).To(Equal("k8s-clusterapi-cluster-" + ns + "-c-kubeapi"))
	}, eventually, poll).Should(Succeed())

	t.Logf("OpenStack calls while taking over: %v", cloud.Calls())
	var changes []string
	for call := range cloud.Calls() {
		if strings.HasPrefix(call, "Create") || strings.HasPrefix(call, "Delete") || strings.HasPrefix(call, "Add") || strings.HasPrefix(call, "Remove") {
			changes = append(changes, call)
		}
	}
	g.Expect(changes).To(BeEmpty(), "taking over creates and deletes nothing (calls: %v)", cloud.Calls())
	g.Expect(countResources(cloud)).To(Equal(before))
	g.Eventually(func(g Gomega) {
		g.Expect(eventReasons(g, ns)).To(ContainElements("AdoptedNetwork", "AdoptedRouter", "AdoptedSecurityGroup"))
	}, eventually, poll).Should(Succeed())

	// Its control plane machines, as upstream made them: a server named after the machine with
	// no metadata, its port "<machine>-0" described with the Cluster's name, and a member named
	// "<pool>-<machine>" in each pool. One OpenStackMachine still has the provider ID upstream
	// wrote (with a region); the other has none (its server was not ACTIVE when it moved).
	addMachineImages(cloud)
	got := get(g, osc)
	serverIDs := map[string]string{}
	for _, machine := range []string{"c-cp-0", "c-cp-1"} {
		port, err := cloud.Network().CreatePort(ctx, ports.CreateOpts{Name: machine + "-0", NetworkID: got.Status.Network.ID,
			Description: "Created by cluster-api-provider-openstack cluster c", SecurityGroups: &[]string{got.Status.ControlPlaneSecurityGroup.ID}})
		g.Expect(err).NotTo(HaveOccurred())
		flavors, _ := cloud.Compute().ListFlavors(ctx, nil)
		server, err := cloud.Compute().CreateServer(ctx, servers.CreateOpts{Name: machine, FlavorRef: flavors[0].ID, ImageRef: "upstream-image", AvailabilityZone: "az1",
			Networks: []servers.Network{{Port: port.ID}}}, nil)
		g.Expect(err).NotTo(HaveOccurred())
		serverIDs[machine] = server.ID
		tree, err := cloud.LoadBalancer().GetLoadBalancerStatuses(ctx, got.Status.APIServerLoadBalancer.ID)
		g.Expect(err).NotTo(HaveOccurred())
		for _, l := range tree.Loadbalancer.Listeners {
			for _, p := range l.Pools {
				poolPort, err := strconv.Atoi(p.Name[strings.LastIndex(p.Name, "-")+1:])
				g.Expect(err).NotTo(HaveOccurred())
				_, err = cloud.LoadBalancer().CreateMember(ctx, p.ID, pools.CreateMemberOpts{Name: p.Name + "-" + machine,
					Address: port.FixedIPs[0].IPAddress, ProtocolPort: poolPort})
				g.Expect(err).NotTo(HaveOccurred())
				g.Eventually(func(g Gomega) {
					lb, err := cloud.LoadBalancer().GetLoadBalancer(ctx, got.Status.APIServerLoadBalancer.ID)
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(lb.ProvisioningStatus).To(Equal("ACTIVE"))
				}, eventually, poll).Should(Succeed())
			}
		}
	}
	g.Eventually(func(g Gomega) {
		for _, id := range serverIDs {
			s, err := cloud.Compute().GetServer(ctx, id)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s.Status).To(Equal("ACTIVE"))
		}
	}, eventually, poll).Should(Succeed())
	beforeMachines := countResources(cloud)
	cloud.ResetCalls()
	markInfrastructureProvisioned(g, ns)
	byName := newMachineIn(g, version, ns, "c-cp-0", "az1", true)
	upstreamID := "openstack://RegionOne/" + serverIDs["c-cp-1"]
	byProviderID := newMachineIn(g, version, ns, "c-cp-1", "az1", true, func(s *infrav1.OpenStackMachineSpec) { s.ProviderID = &upstreamID })
	// Until their takeover is recorded, upstream's servers are not the machines'.
	g.Eventually(func(g Gomega) {
		for _, osm := range []*infrav1.OpenStackMachine{byName, byProviderID} {
			c := conditions.Get(getMachine(g, osm), infrav1.InstanceReadyCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Or(Equal(infrav1.TakeoverNotRecordedReason), Equal(infrav1.ResourceOwnedElsewhereReason)), "%s: %s", osm.Name, c.Message)
		}
	}, eventually, poll).Should(Succeed())
	recordTakeover(ctx, g, byName, byProviderID)
	g.Eventually(func(g Gomega) {
		for _, osm := range []*infrav1.OpenStackMachine{byName, byProviderID} {
			m := getMachine(g, osm)
			g.Expect(conditions.IsTrue(m, infrav1.InstanceReadyCondition)).To(BeTrue(), "%v", conditions.Get(m, infrav1.InstanceReadyCondition))
			g.Expect(conditions.IsTrue(m, infrav1.APIServerIngressReadyCondition)).To(BeTrue(), "%v", conditions.Get(m, infrav1.APIServerIngressReadyCondition))
			g.Expect(m.Status.InstanceID).To(Equal(ptr.To(serverIDs[m.Name])), "upstream's server of %s", m.Name)
		}
	}, eventually, poll).Should(Succeed())
	g.Expect(getMachine(g, byProviderID).Spec.ProviderID).To(Equal(&upstreamID), "the provider ID the Machine copied stays")
	g.Expect(getMachine(g, byName).Spec.ProviderID).To(Equal(ptr.To("openstack:///" + serverIDs["c-cp-0"])))
	t.Logf("OpenStack calls while taking over two machines: %v", cloud.Calls())
	for call := range cloud.Calls() {
		g.Expect(call).NotTo(Or(HavePrefix("Create"), HavePrefix("Delete")), "taking over machines creates and deletes nothing (calls: %v)", cloud.Calls())
	}
	g.Expect(countResources(cloud)).To(Equal(beforeMachines))

	// Deleting a machine takes its server, upstream's port and upstream's members with it.
	g.Expect(env.Client.Delete(ctx, byName)).To(Succeed())
	g.Eventually(func(g Gomega) {
		_, err := cloud.Compute().GetServer(ctx, serverIDs["c-cp-0"])
		g.Expect(err).To(HaveOccurred(), "the server is deleted")
		left, err := cloud.Network().ListPorts(ctx, ports.ListOpts{Name: "c-cp-0-0"})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(left).To(BeEmpty(), "upstream's port is deleted")
		tree, err := cloud.LoadBalancer().GetLoadBalancerStatuses(ctx, got.Status.APIServerLoadBalancer.ID)
		g.Expect(err).NotTo(HaveOccurred())
		for _, l := range tree.Loadbalancer.Listeners {
			for _, p := range l.Pools {
				g.Expect(p.Members).To(HaveLen(1), "only c-cp-1 is left in %s", p.Name)
			}
		}
	}, eventually, poll).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, byProviderID)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(byProviderID), &infrav1.OpenStackMachine{}))
	}, eventually, poll).Should(BeTrue())

	// Deleting it leaves nothing but the external network the operator made.
	g.Expect(env.Client.Delete(ctx, osc)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(osc), &infrav1.OpenStackCluster{}))
	}, eventually, poll).Should(BeTrue())
	g.Expect(countResources(cloud)).To(Equal(counts{networks: 1}))
}
