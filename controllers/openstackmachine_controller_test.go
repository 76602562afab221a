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
	"slices"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	infrav1beta2 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta2"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/compute"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

// markInfrastructureProvisioned does what the Cluster controller does once the OpenStackCluster
// is provisioned.
func markInfrastructureProvisioned(g *WithT, namespace string) {
	g.Eventually(func() error {
		c := &clusterv1.Cluster{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "c"}, c); err != nil {
			return err
		}
		c.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
		return env.Client.Status().Update(ctx, c)
	}, eventually, poll).Should(Succeed())
}

// newMachine creates a Machine with its bootstrap data secret and the OpenStackMachine it owns,
// as Cluster API (KCP or a MachineDeployment) would.
func newMachine(g *WithT, namespace, name, failureDomain string, controlPlane bool, mutate ...func(*infrav1.OpenStackMachineSpec)) *infrav1.OpenStackMachine {
	return newMachineIn(g, "v1beta1", namespace, name, failureDomain, controlPlane, mutate...)
}

// newMachineIn is newMachine with the OpenStackMachine written in an API version.
func newMachineIn(g *WithT, version, namespace, name, failureDomain string, controlPlane bool, mutate ...func(*infrav1.OpenStackMachineSpec)) *infrav1.OpenStackMachine {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-bootstrap", Namespace: namespace}, Data: map[string][]byte{"value": []byte("#cloud-config for " + name)}}
	g.Expect(env.Client.Create(ctx, secret)).To(Succeed())
	labels := map[string]string{clusterv1.ClusterNameLabel: "c"}
	if controlPlane {
		labels[clusterv1.MachineControlPlaneLabel] = ""
	}
	machine := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels}, Spec: clusterv1.MachineSpec{
		ClusterName:       "c",
		Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To(secret.Name)},
		InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackMachine", Name: name},
		FailureDomain:     failureDomain,
	}}
	g.Expect(env.Client.Create(ctx, machine)).To(Succeed())
	osm := &infrav1.OpenStackMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{clusterv1.ClusterNameLabel: "c"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: machine.UID}}},
		Spec: infrav1.OpenStackMachineSpec{Flavor: ptr.To("m1.small"), Image: infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("ubuntu")}}},
	}
	for _, f := range mutate {
		f(&osm.Spec)
	}
	createIn(g, version, osm, &infrav1beta2.OpenStackMachine{})
	return osm
}

// deleteAllMachines deletes machines, every OpenStackMachine of namespace, and waits until
// their finalizers have run.
func deleteAllMachines(g *WithT, namespace string, machines ...*infrav1.OpenStackMachine) {
	for _, m := range machines {
		g.Expect(env.Client.Delete(ctx, m)).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		list := &infrav1.OpenStackMachineList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
		g.Expect(list.Items).To(BeEmpty())
	}, eventually, poll).Should(Succeed())
}

func getMachine(g Gomega, osm *infrav1.OpenStackMachine) *infrav1.OpenStackMachine {
	got := &infrav1.OpenStackMachine{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(osm), got)).To(Succeed())
	return got
}

// machineProvisioned asserts the v1beta2 contract fields of a machine whose server is ACTIVE.
func machineProvisioned(g Gomega, cloud *fakeopenstack.Cloud, osm *infrav1.OpenStackMachine) (*infrav1.OpenStackMachine, *servers.Server) {
	got := getMachine(g, osm)
	g.Expect(conditions.IsTrue(got, infrav1.InstanceReadyCondition)).To(BeTrue(), "%v", conditions.Get(got, infrav1.InstanceReadyCondition))
	g.Expect(got.Status.Initialization).NotTo(BeNil())
	g.Expect(got.Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
	g.Expect(got.Status.InstanceID).NotTo(BeNil())
	g.Expect(got.Spec.ProviderID).To(Equal(ptr.To("openstack:///" + *got.Status.InstanceID)))
	g.Expect(got.Status.InstanceState).To(Equal(ptr.To(infrav1.InstanceStateActive)))
	server, err := cloud.Compute().GetServer(ctx, *got.Status.InstanceID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.Status.Addresses).To(ContainElement(clusterv1.MachineAddress{Type: clusterv1.MachineInternalDNS, Address: osm.Name}))
	g.Expect(got.Status.Addresses).To(ContainElement(HaveField("Type", clusterv1.MachineInternalIP)))
	return got, server
}

// membership is, for each zone's load balancer, the names of its members. It fails unless the
// pools of every port (6443 and 8132) have the same members, each on its pool's port.
func membership(g Gomega, cloud *fakeopenstack.Cloud, namespace string, azs ...string) map[string][]string {
	out := map[string][]string{}
	for _, az := range azs {
		name := zones.Name(namespace, "c", az)
		lb := lbsIn(cloud)[name]
		tree, err := cloud.LoadBalancer().GetLoadBalancerStatuses(ctx, lb.ID)
		g.Expect(err).NotTo(HaveOccurred())
		var first []string
		for _, port := range []int{6443, 8132} {
			var names []string
			for _, l := range tree.Loadbalancer.Listeners {
				for _, p := range l.Pools {
					if p.Name != zones.ChildName(name, port) {
						continue
					}
					for _, m := range p.Members {
						g.Expect(m.ProtocolPort).To(Equal(port))
						names = append(names, m.Name)
					}
				}
			}
			slices.Sort(names)
			if port == 6443 {
				first = names
			}
			g.Expect(names).To(Equal(first), "the pools of %s have different members", name)
		}
		out[az] = first
	}
	return out
}

func setCrossAZ(g *WithT, osc *infrav1.OpenStackCluster, on bool) {
	g.Eventually(func() error {
		cur := &infrav1.OpenStackCluster{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(osc), cur); err != nil {
			return err
		}
		cur.Spec.APIServerLoadBalancer.AllowCrossAZLoadBalancerMembers = ptr.To(on)
		return env.Client.Update(ctx, cur)
	}, eventually, poll).Should(Succeed())
}

func addMachineImages(cloud *fakeopenstack.Cloud) {
	cloud.AddFlavor("m1.small", 2, 2048)
	cloud.AddImage("ubuntu")
}

func TestControlPlaneMachinesJoinTheLoadBalancersTheSpecAsksFor(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("machines-multi-az")
	azs := []string{"az1", "az2", "az3"}
	cloud := newCloud(t, g, ns)
	cloud.SetAvailabilityZones(azs...)
	addMachineImages(cloud)
	n := addLBNetwork(t, g, cloud, azs...)
	osc := newCluster(g, ns, false, multiAZSpec(n, azs...), true)
	g.Eventually(func(g Gomega) { lbReady(g, osc) }, eventually, poll).Should(Succeed())
	markInfrastructureProvisioned(g, ns)

	cps := map[string]*infrav1.OpenStackMachine{}
	for _, az := range azs {
		cps[az] = newMachine(g, ns, "cp-"+az, az, true)
	}
	worker := newMachine(g, ns, "worker", "az1", false)

	// Each server in its failure domain; each control plane machine a member of its own zone's
	// load balancer only.
	same := map[string][]string{"az1": {"cp-az1"}, "az2": {"cp-az2"}, "az3": {"cp-az3"}}
	g.Eventually(func(g Gomega) {
		for _, az := range azs {
			got, server := machineProvisioned(g, cloud, cps[az])
			g.Expect(server.AvailabilityZone).To(Equal(az))
			g.Expect(conditions.IsTrue(got, infrav1.APIServerIngressReadyCondition)).To(BeTrue(), "%v", conditions.Get(got, infrav1.APIServerIngressReadyCondition))
			g.Expect(conditions.IsTrue(got, infrav1.ReadyCondition)).To(BeTrue())
		}
		g.Expect(membership(g, cloud, ns, azs...)).To(Equal(same))
	}, eventually, poll).Should(Succeed())

	// The server carries what the spec and the bootstrap secret say.
	cp1, server := machineProvisioned(g, cloud, cps["az1"])
	g.Expect(cloud.ServerUserData(server.ID)).To(Equal("#cloud-config for cp-az1"))
	g.Expect(server.Metadata).To(HaveKeyWithValue(compute.OwnerMetadataKey, ns+"/cp-az1"))
	clusterStatus := get(g, osc).Status
	port, err := cloud.Network().ListPorts(ctx, ports.ListOpts{Name: "cp-az1-0"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(port).To(HaveLen(1))
	g.Expect(port[0].NetworkID).To(Equal(clusterStatus.Network.ID))
	g.Expect(port[0].SecurityGroups).To(ConsistOf(clusterStatus.ControlPlaneSecurityGroup.ID))
	g.Expect(conditions.Get(cp1, infrav1.APIServerIngressReadyCondition).Message).To(ContainSubstring(port[0].FixedIPs[0].IPAddress))
	// The load balancers are on their own network: the member's subnet is the cluster subnet.
	lb1 := lbsIn(cloud)[zones.Name(ns, "c", "az1")]
	tree, err := cloud.LoadBalancer().GetLoadBalancerStatuses(ctx, lb1.ID)
	g.Expect(err).NotTo(HaveOccurred())
	members, err := cloud.LoadBalancer().ListMembers(ctx, tree.Loadbalancer.Listeners[0].Pools[0].ID, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(members).To(HaveLen(1))
	g.Expect(members[0].Address).To(Equal(port[0].FixedIPs[0].IPAddress))
	g.Expect(members[0].SubnetID).To(Equal(clusterStatus.Network.Subnets[0].ID))

	// A worker is provisioned, with the worker security group, and joins no load balancer.
	g.Eventually(func(g Gomega) {
		got, _ := machineProvisioned(g, cloud, worker)
		g.Expect(conditions.Get(got, infrav1.APIServerIngressReadyCondition)).To(BeNil())
		g.Expect(conditions.IsTrue(got, infrav1.ReadyCondition)).To(BeTrue())
	}, eventually, poll).Should(Succeed())
	workerPort, err := cloud.Network().ListPorts(ctx, ports.ListOpts{Name: "worker-0"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(workerPort[0].SecurityGroups).To(ConsistOf(clusterStatus.WorkerSecurityGroup.ID))

	// Cross-AZ members on: every machine in every zone's load balancer.
	setCrossAZ(g, osc, true)
	all := []string{"cp-az1", "cp-az2", "cp-az3"}
	g.Eventually(func(g Gomega) {
		g.Expect(membership(g, cloud, ns, azs...)).To(Equal(map[string][]string{"az1": all, "az2": all, "az3": all}))
		for _, az := range azs {
			g.Expect(conditions.IsTrue(getMachine(g, cps[az]), infrav1.APIServerIngressReadyCondition)).To(BeTrue())
		}
	}, eventually, poll).Should(Succeed())

	// And off again: the extra members go.
	setCrossAZ(g, osc, false)
	g.Eventually(func(g Gomega) { g.Expect(membership(g, cloud, ns, azs...)).To(Equal(same)) }, eventually, poll).Should(Succeed())

	// Status lost: the server is found again by name and owner, not created twice.
	g.Eventually(func() error {
		cur := getMachine(g, cps["az3"])
		cur.Status.InstanceID = nil
		return env.Client.Status().Update(ctx, cur)
	}, eventually, poll).Should(Succeed())
	before, _ := machineProvisioned(g, cloud, cps["az2"])
	g.Eventually(func(g Gomega) {
		got, _ := machineProvisioned(g, cloud, cps["az3"])
		g.Expect(conditions.IsTrue(got, infrav1.APIServerIngressReadyCondition)).To(BeTrue())
	}, eventually, poll).Should(Succeed())
	list, err := cloud.Compute().ListServers(ctx, servers.ListOpts{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(list).To(HaveLen(4))

	// Deleting a machine leaves no member of it anywhere, and neither its server nor its port.
	g.Expect(env.Client.Delete(ctx, cps["az2"])).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(cps["az2"]), &infrav1.OpenStackMachine{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
	}, eventually, poll).Should(Succeed())
	g.Expect(membership(g, cloud, ns, azs...)).To(Equal(map[string][]string{"az1": {"cp-az1"}, "az2": nil, "az3": {"cp-az3"}}))
	_, err = cloud.Compute().GetServer(ctx, *before.Status.InstanceID)
	g.Expect(err).To(HaveOccurred())
	left, err := cloud.Network().ListPorts(ctx, ports.ListOpts{Name: "cp-az2-0"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(left).To(BeEmpty())
}

func TestControlPlaneMachineInAZoneWithoutLoadBalancerIsReported(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("machines-uncovered-zone")
	cloud := newCloud(t, g, ns)
	cloud.SetAvailabilityZones("az1", "az2", "az3")
	addMachineImages(cloud)
	n := addLBNetwork(t, g, cloud, "az1", "az2")
	osc := newCluster(g, ns, false, multiAZSpec(n, "az1", "az2"), true)

	// The cluster says which control plane failure domain has no load balancer.
	g.Eventually(func(g Gomega) {
		got := lbReady(g, osc)
		c := conditions.Get(got, infrav1.FailureDomainsReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(infrav1.ControlPlaneFailureDomainWithoutLoadBalancerReason))
		g.Expect(c.Message).To(HavePrefix("control plane failure domains az3 have no API server load balancer"))
	}, eventually, poll).Should(Succeed())
	markInfrastructureProvisioned(g, ns)

	cp := newMachine(g, ns, "cp-az3", "az3", true)
	g.Eventually(func(g Gomega) {
		got, _ := machineProvisioned(g, cloud, cp)
		c := conditions.Get(got, infrav1.APIServerIngressReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(infrav1.NoLoadBalancerInAvailabilityZoneReason))
		g.Expect(c.Message).To(HavePrefix(`availability zone "az3" has no API server load balancer (spec.apiServerLoadBalancer.availabilityZoneSubnets maps az1, az2)`))
		g.Expect(conditions.IsFalse(got, infrav1.ReadyCondition)).To(BeTrue())
	}, eventually, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		list := &eventsv1.EventList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		g.Expect(list.Items).To(ContainElement(And(
			HaveField("Reason", infrav1.NoLoadBalancerInAvailabilityZoneReason),
			HaveField("Type", corev1.EventTypeWarning),
			HaveField("Regarding.Name", "cp-az3"))))
	}, eventually, poll).Should(Succeed())
	g.Expect(membership(g, cloud, ns, "az1", "az2")).To(Equal(map[string][]string{"az1": nil, "az2": nil}))

	// Cross-AZ members on: the machine joins both load balancers and the cluster is satisfied.
	setCrossAZ(g, osc, true)
	both := []string{"cp-az3"}
	g.Eventually(func(g Gomega) {
		g.Expect(conditions.IsTrue(getMachine(g, cp), infrav1.APIServerIngressReadyCondition)).To(BeTrue())
		g.Expect(conditions.IsTrue(get(g, osc), infrav1.FailureDomainsReadyCondition)).To(BeTrue())
		g.Expect(membership(g, cloud, ns, "az1", "az2")).To(Equal(map[string][]string{"az1": both, "az2": both}))
	}, eventually, poll).Should(Succeed())
}

func TestMachineServerLifecycle(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("machines-lifecycle")
	cloud := newCloudWith(t, g, ns, fakeopenstack.Options{ServerBuildReads: 3})
	addMachineImages(cloud)
	osc := newCluster(g, ns, false, managedSpec(), true)
	g.Eventually(func(g Gomega) {
		g.Expect(get(g, osc).Status.Initialization).NotTo(BeNil())
	}, eventually, poll).Should(Succeed())

	// Nothing is created before the Cluster's infrastructure is provisioned.
	early := newMachine(g, ns, "w1", "az2", false)
	g.Eventually(func(g Gomega) {
		c := conditions.Get(getMachine(g, early), infrav1.InstanceReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.WaitingForClusterInfrastructureReason))
	}, eventually, poll).Should(Succeed())
	g.Expect(cloud.Calls()["CreateServer"]).To(BeZero())
	markInfrastructureProvisioned(g, ns)

	// A server that stays in BUILD for a few reads is looked at again until ACTIVE.
	g.Eventually(func(g Gomega) {
		got, server := machineProvisioned(g, cloud, early)
		g.Expect(server.AvailabilityZone).To(Equal("az2"))
		g.Expect(conditions.IsTrue(got, infrav1.ReadyCondition)).To(BeTrue())
	}, eventually, poll).Should(Succeed())

	// Nova puts a server in ERROR: reported with Nova's fault, not recreated.
	cloud.InjectFault(fakeopenstack.Fault{Operation: "CreateServer", Nth: 1, DriveToError: true})
	broken := newMachine(g, ns, "w2", "az1", false)
	g.Eventually(func(g Gomega) {
		c := conditions.Get(getMachine(g, broken), infrav1.InstanceReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.InstanceErrorReason))
		g.Expect(c.Message).To(ContainSubstring("No valid host was found."))
	}, eventually, poll).Should(Succeed())
	g.Expect(cloud.Calls()["CreateServer"]).To(Equal(2))

	// Nova finds no host that keeps the server group's policy: the condition names the group
	// and the policy, and the server is not recreated.
	group := cloud.AddServerGroup("spread", "anti-affinity")
	cloud.InjectFault(fakeopenstack.Fault{Operation: "CreateServer", Nth: 1, DriveToError: true})
	crowded := newMachine(g, ns, "w4", "az1", false, func(s *infrav1.OpenStackMachineSpec) {
		s.ServerGroup = &infrav1.ServerGroupParam{Filter: &infrav1.ServerGroupFilter{Name: ptr.To("spread")}}
	})
	g.Eventually(func(g Gomega) {
		c := conditions.Get(getMachine(g, crowded), infrav1.InstanceReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.ServerGroupPolicyUnsatisfiableReason))
		g.Expect(c.Message).To(And(ContainSubstring("No valid host was found."),
			ContainSubstring("no host keeps the anti-affinity policy of server group spread ("+group+")")))
	}, eventually, poll).Should(Succeed())
	g.Expect(cloud.Calls()["CreateServer"]).To(Equal(3))

	// A flavor that does not exist: the field and the value are named, nothing is created.
	typo := newMachine(g, ns, "w3", "az1", false, func(s *infrav1.OpenStackMachineSpec) { s.Flavor = ptr.To("m1.smal") })
	g.Eventually(func(g Gomega) {
		c := conditions.Get(getMachine(g, typo), infrav1.InstanceReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.InstanceConfigurationErrorReason))
		g.Expect(c.Message).To(Equal(`spec.flavor: 0 flavors are named "m1.smal", want exactly one [v1beta2: spec.flavor.filter.name]`),
			"the field in both versions")
	}, eventually, poll).Should(Succeed())
	g.Expect(cloud.Calls()["CreateServer"]).To(Equal(3))

	// Deletion removes the servers (the ERROR one too) and the ports, and nothing else.
	deleteAllMachines(g, ns, early, broken, crowded, typo)
	left, err := cloud.Compute().ListServers(ctx, servers.ListOpts{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(left).To(BeEmpty())
	for _, name := range []string{"w1-0", "w2-0", "w3-0", "w4-0"} {
		p, err := cloud.Network().ListPorts(ctx, ports.ListOpts{Name: name})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(p).To(BeEmpty(), name)
	}
}
