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
	"net/http"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/trunks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

var _ = Describe("Machines of a cluster without a load balancer, in server groups, with volumes and ORC images", Ordered, func() {
	var (
		name = "nolb-" + runID
		key  client.ObjectKey
		// endpoint is the API server floating IP the cluster allocated.
		endpoint string
	)

	BeforeAll(func(ctx SpecContext) {
		key, _ = createCluster(ctx, name, &infrav1.APIServerLoadBalancer{Enabled: ptr.To(false)}, func(s *infrav1.OpenStackClusterSpec) {
			s.ControlPlaneEndpoint = nil // the floating IP is the endpoint
			s.ManagedSubnets = []infrav1.SubnetSpec{{CIDR: "10.42.0.0/24"}}
		})
	}, NodeTimeout(time.Minute))

	It("gets a floating IP as its endpoint, held by the first control plane machine and taken by the next when it goes", func(ctx SpecContext) {
		Eventually(func(g Gomega) {
			osc := getCluster(ctx, g, key)
			g.Expect(conditionTrue(osc.Status.Conditions, infrav1.ReadyCondition)).To(Succeed())
			g.Expect(osc.Spec.ControlPlaneEndpoint).NotTo(BeNil())
			endpoint = osc.Spec.ControlPlaneEndpoint.Host
			g.Expect(endpoint).NotTo(BeEmpty())
		}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())

		first, second := name+"-cp-0", name+"-cp-1"
		createMachine(ctx, namespace, name, first, cfg.zones[0], true)
		firstIP := waitFloatingIPOn(ctx, first, endpoint, "is on this machine's address")
		createMachine(ctx, namespace, name, second, cfg.zones[1], true)
		secondIP := waitFloatingIPOn(ctx, second, endpoint, "is on address "+firstIP+", not this machine's")
		Expect(fixedIPOf(ctx, endpoint)).To(Equal(firstIP))

		start := time.Now()
		Expect(kube.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: first}})).To(Succeed())
		Eventually(func() string { return fixedIPOf(ctx, endpoint) }).WithTimeout(2*time.Minute).WithPolling(250*time.Millisecond).
			Should(Equal(secondIP), "the second control plane machine holds the endpoint once the first is gone")
		GinkgoWriter.Printf("endpoint %s moved to %s %s after the first machine's deletion\n", endpoint, second, time.Since(start).Round(100*time.Millisecond))
		waitFloatingIPOn(ctx, second, endpoint, "is on this machine's address "+secondIP)
	}, NodeTimeout(6*time.Minute))

	It("spreads a hard anti-affinity group's servers over Nova's hosts, and names the group and policy when no host is left", func(ctx SpecContext) {
		group := createServerGroup(ctx, name+"-hard", "anti-affinity")
		inGroup := func(s *infrav1.OpenStackMachineSpec) {
			s.ServerGroup = &infrav1.ServerGroupParam{Filter: &infrav1.ServerGroupFilter{Name: ptr.To(group.Name)}}
		}
		// One compute host per zone here: a member in each zone fills the hosts.
		for _, zone := range cfg.zones[:2] {
			createMachine(ctx, namespace, name, name+"-hard-"+zone, zone, false, inGroup)
		}
		hosts := map[string]bool{}
		for _, zone := range cfg.zones[:2] {
			hosts[waitActiveHost(ctx, name+"-hard-"+zone)] = true
		}
		Expect(hosts).To(HaveLen(2), "the group's servers are on different hosts")

		crowded := name + "-hard-extra"
		createMachine(ctx, namespace, name, crowded, cfg.zones[0], false, inGroup)
		Eventually(func(g Gomega) {
			osm := &infrav1.OpenStackMachine{}
			g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: crowded}, osm)).To(Succeed())
			c := condition(osm.Status.Conditions, infrav1.InstanceReadyCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(infrav1.ServerGroupPolicyUnsatisfiableReason), c.Message)
			g.Expect(c.Message).To(ContainSubstring("no host keeps the anti-affinity policy of server group " + group.Name + " (" + group.ID + "), which has 2 other members"))
		}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
		// Not recreated: the machine keeps its one server in ERROR.
		Consistently(func(g Gomega) {
			osm := &infrav1.OpenStackMachine{}
			g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: crowded}, osm)).To(Succeed())
			g.Expect(osm.Status.InstanceState).To(HaveValue(Equal(infrav1.InstanceState("ERROR"))))
		}).WithTimeout(5 * time.Second).WithPolling(time.Second).Should(Succeed())
	}, NodeTimeout(6*time.Minute))

	It("puts a soft anti-affinity group's servers on one host when it has no other", func(ctx SpecContext) {
		group := createServerGroup(ctx, name+"-soft", "soft-anti-affinity")
		inGroup := func(s *infrav1.OpenStackMachineSpec) {
			s.ServerGroup = &infrav1.ServerGroupParam{ID: ptr.To(group.ID)}
		}
		machines := []string{name + "-soft-0", name + "-soft-1"}
		for _, m := range machines {
			createMachine(ctx, namespace, name, m, cfg.zones[0], false, inGroup)
		}
		Expect(waitActiveHost(ctx, machines[0])).To(Equal(waitActiveHost(ctx, machines[1])), "the zone's one host takes both")
	}, NodeTimeout(5*time.Minute))

	It("gives a port the allowed address pairs its spec asks for (a VIP kube-vip moves between machines)", func(ctx SpecContext) {
		machine := name + "-vip"
		createMachine(ctx, namespace, name, machine, cfg.zones[0], false, func(s *infrav1.OpenStackMachineSpec) {
			s.Ports = []infrav1.PortOpts{{AllowedAddressPairs: []infrav1.AddressPair{{IPAddress: "10.42.0.250"}}}}
		})
		waitActiveHost(ctx, machine)
		found, err := openstack.Network.ListPorts(ctx, ports.ListOpts{DeviceID: serverOf(ctx, machine)})
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(HaveLen(1))
		Expect(found[0].AllowedAddressPairs).To(ConsistOf(HaveField("IPAddress", "10.42.0.250")), "as Neutron shows the port")
	}, NodeTimeout(4*time.Minute))

	It("makes a worker's port the parent of a trunk, and deletes the trunk before the port", func(ctx SpecContext) {
		machine := name + "-trunk"
		createMachine(ctx, namespace, name, machine, cfg.zones[1], false, func(s *infrav1.OpenStackMachineSpec) { s.Trunk = true })
		waitActiveHost(ctx, machine)
		found, err := openstack.Network.ListPorts(ctx, ports.ListOpts{DeviceID: serverOf(ctx, machine)})
		Expect(err).NotTo(HaveOccurred())
		Expect(found).To(HaveLen(1))
		parent := found[0].ID
		onPort, err := openstack.Network.ListTrunks(ctx, trunks.ListOpts{PortID: parent})
		Expect(err).NotTo(HaveOccurred())
		Expect(onPort).To(ConsistOf(HaveField("Name", machine+"-0")), "as Neutron shows the trunk")

		Expect(kube.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: machine}})).To(Succeed())
		Eventually(func(g Gomega) {
			left, err := openstack.Network.ListTrunks(ctx, trunks.ListOpts{PortID: parent})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(left).To(BeEmpty())
			_, err = openstack.Network.GetPort(ctx, parent)
			g.Expect(gophercloud.ResponseCodeIs(err, http.StatusNotFound)).To(BeTrue(), "the port is gone too: %v", err)
		}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
	}, NodeTimeout(4*time.Minute))

	It("boots a machine from a root volume in its zone with a data volume, gives another a local disk, and deletes the volumes with the servers", func(ctx SpecContext) {
		// m1.zero-disk has no root disk: only a root volume boots it. m1.ephemeral has the
		// ephemeral disk a local device takes (the local OpenStack's flavors).
		zone, other := cfg.zones[1], cfg.zones[0]
		booted, local := name+"-bfv", name+"-local"
		createMachine(ctx, namespace, name, booted, zone, false, func(s *infrav1.OpenStackMachineSpec) {
			s.Flavor = ptr.To("m1.zero-disk")
			s.RootVolume = &infrav1.RootVolume{SizeGiB: 2, BlockDeviceVolume: infrav1.BlockDeviceVolume{
				AvailabilityZone: &infrav1.VolumeAvailabilityZone{From: infrav1.VolumeAZFromMachine}}}
			s.AdditionalBlockDevices = []infrav1.AdditionalBlockDevice{
				{Name: "data", SizeGiB: 1, Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice}},
			}
		})
		createMachine(ctx, namespace, name, local, zone, false, func(s *infrav1.OpenStackMachineSpec) {
			s.Flavor = ptr.To("m1.ephemeral")
			s.AdditionalBlockDevices = []infrav1.AdditionalBlockDevice{
				{Name: "etcd", SizeGiB: 1, Storage: infrav1.BlockDeviceStorage{Type: infrav1.LocalBlockDevice}},
				{Name: "data", SizeGiB: 1, Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice, Volume: &infrav1.BlockDeviceVolume{
					AvailabilityZone: &infrav1.VolumeAvailabilityZone{Name: ptr.To(infrav1.VolumeAZName(other))}}}},
			}
		})
		waitActiveHost(ctx, booted)
		waitActiveHost(ctx, local)

		server, err := openstack.Compute.GetServer(ctx, serverOf(ctx, booted))
		Expect(err).NotTo(HaveOccurred())
		Expect(server.AvailabilityZone).To(Equal(zone))
		root, data := volumeNamed(ctx, booted+"-root"), volumeNamed(ctx, booted+"-data")
		mark := "Created by the Cluster API OpenStack provider for OpenStackMachine " + namespace + "/" + booted
		Expect(*root).To(And(HaveField("Size", 2), HaveField("Bootable", "true"), HaveField("AvailabilityZone", zone),
			HaveField("Status", "in-use"), HaveField("Description", mark)), "the root volume, in the machine's zone")
		Expect(*data).To(And(HaveField("Size", 1), HaveField("AvailabilityZone", zone), HaveField("Status", "in-use"),
			HaveField("Description", mark)), "no zone given: the machine's, which Cinder has")
		Expect(server.AttachedVolumes).To(ConsistOf(HaveField("ID", root.ID), HaveField("ID", data.ID)), "as Nova shows the server")
		Expect(root.Attachments).To(ConsistOf(HaveField("ServerID", server.ID)))

		localServer, err := openstack.Compute.GetServer(ctx, serverOf(ctx, local))
		Expect(err).NotTo(HaveOccurred())
		localData := volumeNamed(ctx, local+"-data")
		Expect(localData.AvailabilityZone).To(Equal(other), "the zone the spec names")
		Expect(localServer.AttachedVolumes).To(ConsistOf(HaveField("ID", localData.ID)), "the local disk is no volume")
		Expect(volumesNamed(ctx, local+"-root")).To(BeEmpty(), "no root volume asked for")

		for _, m := range []string{booted, local} {
			Expect(kube.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: m}})).To(Succeed())
		}
		Eventually(func(g Gomega) {
			for _, v := range []string{booted + "-root", booted + "-data", local + "-data"} {
				g.Expect(volumesNamed(ctx, v)).To(BeEmpty(), v)
			}
		}).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(Succeed(), "Nova deletes the volumes with the servers")
	}, NodeTimeout(5*time.Minute))

	It("makes a bastion in its own group with a floating IP, replaces it when its spec changes, and removes it when disabled", func(ctx SpecContext) {
		bastion := func(hint string) *infrav1.Bastion {
			return &infrav1.Bastion{Spec: &infrav1.OpenStackMachineSpec{
				Flavor: ptr.To(cfg.flavor), Image: infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To(cfg.image)}},
				// Nova takes a hint no filter reads: the bastion becomes ACTIVE only if the hint
				// reached Nova in a form it accepts.
				SchedulerHintAdditionalProperties: []infrav1.SchedulerHintAdditionalProperty{
					{Name: "capo_e2e", Value: infrav1.SchedulerHintAdditionalValue{Type: "String", String: ptr.To(hint)}}},
			}}
		}
		ready := func() *infrav1.OpenStackCluster {
			var osc *infrav1.OpenStackCluster
			Eventually(func(g Gomega) {
				osc = getCluster(ctx, g, key)
				g.Expect(conditionTrue(osc.Status.Conditions, infrav1.BastionReadyCondition)).To(Succeed())
				g.Expect(osc.Status.Bastion).NotTo(BeNil())
				g.Expect(osc.Status.Bastion.FloatingIP).NotTo(BeEmpty())
			}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
			return osc
		}
		updateCluster(ctx, key, func(s *infrav1.OpenStackClusterSpec) { s.Bastion = bastion("first") })
		osc := ready()
		first := *osc.Status.Bastion
		Expect(fixedIPOf(ctx, first.FloatingIP)).To(Equal(first.IP))
		Expect(conditionTrue(osc.Status.Conditions, infrav1.ReadyCondition)).To(Succeed())
		server, err := openstack.Compute.GetServer(ctx, first.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(server.Name).To(Equal(name + "-bastion"))
		Expect(server.Metadata).To(HaveKeyWithValue("capo-bastion", namespace+"/"+name))
		// SSH: from anywhere into the bastion's group; from the bastion's group into the nodes'.
		sshFrom := func(group string) []string {
			found, err := openstack.Network.ListSecGroupRules(ctx, rules.ListOpts{SecGroupID: group, PortRangeMin: 22, PortRangeMax: 22})
			Expect(err).NotTo(HaveOccurred())
			var out []string
			for _, r := range found {
				out = append(out, r.RemoteIPPrefix+r.RemoteGroupID)
			}
			return out
		}
		Expect(osc.Status.BastionSecurityGroup).NotTo(BeNil())
		Expect(sshFrom(osc.Status.BastionSecurityGroup.ID)).To(ConsistOf("0.0.0.0/0"))
		Expect(sshFrom(osc.Status.ControlPlaneSecurityGroup.ID)).To(ConsistOf(osc.Status.BastionSecurityGroup.ID))
		Expect(sshFrom(osc.Status.WorkerSecurityGroup.ID)).To(ConsistOf(osc.Status.BastionSecurityGroup.ID))

		// A changed spec: a new server, the old one and its address gone.
		updateCluster(ctx, key, func(s *infrav1.OpenStackClusterSpec) { s.Bastion = bastion("second") })
		Eventually(func(g Gomega) {
			g.Expect(ready().Status.Bastion.ID).NotTo(Equal(first.ID))
		}).WithTimeout(4 * time.Minute).WithPolling(time.Second).Should(Succeed())
		second := *getCluster(ctx, Default, key).Status.Bastion
		_, err = openstack.Compute.GetServer(ctx, first.ID)
		Expect(gophercloud.ResponseCodeIs(err, http.StatusNotFound)).To(BeTrue(), "the first bastion is deleted: %v", err)

		// Disabled: the server, its address and its group go; the nodes' groups no longer name it.
		updateCluster(ctx, key, func(s *infrav1.OpenStackClusterSpec) { s.Bastion.Enabled = ptr.To(false) })
		Eventually(func(g Gomega) {
			osc := getCluster(ctx, g, key)
			g.Expect(osc.Status.Bastion).To(BeNil())
			g.Expect(osc.Status.BastionSecurityGroup).To(BeNil())
			c := condition(osc.Status.Conditions, infrav1.BastionReadyCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(infrav1.NotRequiredReason))
		}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
		_, err = openstack.Compute.GetServer(ctx, second.ID)
		Expect(gophercloud.ResponseCodeIs(err, http.StatusNotFound)).To(BeTrue(), "the bastion is deleted: %v", err)
		left, err := openstack.Network.ListFloatingIPs(ctx, floatingips.ListOpts{FloatingIP: second.FloatingIP})
		Expect(err).NotTo(HaveOccurred())
		Expect(left).To(BeEmpty(), "the bastion's floating IP is released")
		osc = getCluster(ctx, Default, key)
		Expect(sshFrom(osc.Status.ControlPlaneSecurityGroup.ID)).To(BeEmpty())
	}, NodeTimeout(10*time.Minute))

	It("boots a machine from the Glance image an ORC Image imports, and keeps one whose Image is not available waiting", func(ctx SpecContext) {
		// ORC runs in the management plane (hack/orc.sh), with the run's identity Secret.
		ready, missing := name+"-orc", name+"-orc-missing"
		createORCImage(ctx, ready, cfg.image)
		createORCImage(ctx, missing, "capo-e2e-no-such-image-"+runID)
		booted, waiting := name+"-orc", name+"-orc-wait"
		createMachine(ctx, namespace, name, booted, cfg.zones[0], false, func(s *infrav1.OpenStackMachineSpec) {
			s.Image = infrav1.ImageParam{ImageRef: &infrav1.ResourceReference{Name: ready}}
		})
		createMachine(ctx, namespace, name, waiting, cfg.zones[0], false, func(s *infrav1.OpenStackMachineSpec) {
			s.Image = infrav1.ImageParam{ImageRef: &infrav1.ResourceReference{Name: missing}}
		})
		waitActiveHost(ctx, booted)
		glance, err := openstack.Image.ListImages(ctx, images.ListOpts{Name: cfg.image})
		Expect(err).NotTo(HaveOccurred())
		Expect(glance).To(HaveLen(1))
		server, err := openstack.Compute.GetServer(ctx, serverOf(ctx, booted))
		Expect(err).NotTo(HaveOccurred())
		Expect(server.Image["id"]).To(Equal(glance[0].ID), "the Glance image ORC reports")

		Eventually(func(g Gomega) {
			osm := &infrav1.OpenStackMachine{}
			g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: waiting}, osm)).To(Succeed())
			c := condition(osm.Status.Conditions, infrav1.InstanceReadyCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(infrav1.WaitingForImageReason), c.Message)
			g.Expect(c.Message).To(HavePrefix("spec.image.imageRef.name: waiting for ORC Image " + namespace + "/" + missing + " to be available"))
			g.Expect(osm.Status.InstanceID).To(BeNil(), "no server while the image is not there")
		}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
	}, NodeTimeout(4*time.Minute))
})

// createORCImage creates an ORC Image in the run's namespace that imports the Glance image called
// glanceName (ORC leaves the Glance image alone when the Image goes), deleted when the calling
// node ends.
func createORCImage(ctx context.Context, name, glanceName string) {
	image := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "openstack.k-orc.cloud/v1alpha1", "kind": "Image",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"cloudCredentialsRef": map[string]any{"secretName": "cloud", "cloudName": cfg.cloudName},
			"managementPolicy":    "unmanaged",
			"import":              map[string]any{"filter": map[string]any{"name": glanceName}},
		},
	}}
	Expect(kube.Create(ctx, image)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.IgnoreNotFound(kube.Delete(ctx, image))).To(Succeed())
	}, NodeTimeout(time.Minute))
}

// volumesNamed are Cinder's volumes of the project called name.
func volumesNamed(ctx context.Context, name string) []volumes.Volume {
	found, err := openstack.Volume.ListVolumes(ctx, volumes.ListOpts{Name: name})
	Expect(err).NotTo(HaveOccurred())
	return found
}

// volumeNamed is the one volume called name.
func volumeNamed(ctx context.Context, name string) *volumes.Volume {
	found := volumesNamed(ctx, name)
	Expect(found).To(HaveLen(1), name)
	return &found[0]
}

// createServerGroup creates a Nova server group with policy, deleted when the calling node ends
// (Nova deletes a group that still has members; the cluster's deletion deletes the servers).
func createServerGroup(ctx context.Context, name, policy string) *servergroups.ServerGroup {
	nova := computeClient(ctx)
	nova.Microversion = "2.15" // soft-anti-affinity
	group, err := servergroups.Create(ctx, nova, servergroups.CreateOpts{Name: name, Policies: []string{policy}}).Extract()
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		Expect(servergroups.Delete(ctx, computeClient(ctx), group.ID).ExtractErr()).To(Succeed())
	}, NodeTimeout(time.Minute))
	return group
}

// waitActiveHost waits for the machine's server to be ACTIVE and returns Nova's host ID of it.
func waitActiveHost(ctx context.Context, machine string) string {
	var host string
	Eventually(func(g Gomega) {
		osm := &infrav1.OpenStackMachine{}
		g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: machine}, osm)).To(Succeed())
		g.Expect(conditionTrue(osm.Status.Conditions, infrav1.InstanceReadyCondition)).To(Succeed())
		server, err := openstack.Compute.GetServer(ctx, ptr.Deref(osm.Status.InstanceID, ""))
		g.Expect(err).NotTo(HaveOccurred())
		host = server.HostID
		g.Expect(host).NotTo(BeEmpty())
	}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
	return host
}

// waitFloatingIPOn waits until the control plane machine is ready and its APIServerIngressReady
// message contains want, and returns the machine's internal address.
func waitFloatingIPOn(ctx context.Context, machine, endpoint, want string) string {
	var ip string
	Eventually(func(g Gomega) {
		osm := &infrav1.OpenStackMachine{}
		g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: machine}, osm)).To(Succeed())
		g.Expect(conditionTrue(osm.Status.Conditions, infrav1.InstanceReadyCondition)).To(Succeed())
		ip = internalIP(osm)
		// Seen once in CI: InstanceReady True in a status whose addresses had no InternalIP.
		g.Expect(ip).NotTo(BeEmpty(), "the machine's internal address in its status: %v", osm.Status.Addresses)
		c := condition(osm.Status.Conditions, infrav1.APIServerIngressReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
		g.Expect(c.Message).To(ContainSubstring("the API server floating IP " + endpoint + " " + want))
	}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
	return ip
}

// fixedIPOf is the fixed address the floating IP at address is on, as Neutron says.
func fixedIPOf(ctx context.Context, address string) string {
	found, err := openstack.Network.ListFloatingIPs(ctx, floatingips.ListOpts{FloatingIP: address})
	Expect(err).NotTo(HaveOccurred())
	Expect(found).To(HaveLen(1))
	return found[0].FixedIP
}

// condition is the condition of type t, nil when absent.
func condition(conditions []metav1.Condition, t string) *metav1.Condition {
	for i := range conditions {
		if conditions[i].Type == t {
			return &conditions[i]
		}
	}
	return nil
}
