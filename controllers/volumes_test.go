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
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

// clusterReady waits for the cluster's network, then marks its infrastructure provisioned.
func clusterReady(g *WithT, osc *infrav1.OpenStackCluster) {
	g.Eventually(func(g Gomega) {
		g.Expect(get(g, osc).Status.Initialization).NotTo(BeNil())
	}, eventually, poll).Should(Succeed())
	markInfrastructureProvisioned(g, osc.Namespace)
}

// volumesNamed are the cloud's volumes called name.
func volumesNamed(cloud *fakeopenstack.Cloud, name string) []volumes.Volume {
	var out []volumes.Volume
	for _, v := range cloud.Volumes() {
		if v.Name == name {
			out = append(out, v)
		}
	}
	return out
}

func TestMachineVolumes(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("machines-volumes")
	// Cinder takes a few reads to build a volume, and Nova to build a server.
	cloud := newCloudWith(t, g, ns, fakeopenstack.Options{ServerBuildReads: 3})
	addMachineImages(cloud)
	cloud.AddVolumeType("ssd")
	clusterReady(g, newCluster(g, ns, false, managedSpec(), true))

	// A user's volume carries the name the machine's root volume will have: it is not taken.
	users, err := cloud.Volume().CreateVolume(ctx, volumes.CreateOpts{Name: "vm2-root", Size: 1, Description: "my data"})
	g.Expect(err).NotTo(HaveOccurred())
	// The first server create fails after the volumes are made, as a crash between them would
	// leave it: the next attempt takes the same volumes.
	cloud.InjectFault(fakeopenstack.Fault{Operation: "CreateServer", Nth: 1, Status: 500})

	withVolumes := func(s *infrav1.OpenStackMachineSpec) {
		s.RootVolume = &infrav1.RootVolume{SizeGiB: 10}
		s.AdditionalBlockDevices = []infrav1.AdditionalBlockDevice{
			{Name: "etcd", SizeGiB: 1, Storage: infrav1.BlockDeviceStorage{Type: infrav1.LocalBlockDevice}},
			{Name: "data", SizeGiB: 2, Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice, Volume: &infrav1.BlockDeviceVolume{
				Type: "ssd", AvailabilityZone: &infrav1.VolumeAvailabilityZone{From: infrav1.VolumeAZFromMachine}}}},
		}
	}
	vm1 := newMachine(g, ns, "vm1", "az2", false, withVolumes)
	vm2 := newMachine(g, ns, "vm2", "az1", false, withVolumes)

	for _, osm := range []*infrav1.OpenStackMachine{vm1, vm2} {
		var server *servers.Server
		g.Eventually(func(g Gomega) { _, server = machineProvisioned(g, cloud, osm) }, eventually, poll).Should(Succeed())
		root, data := volumesNamed(cloud, osm.Name+"-root"), volumesNamed(cloud, osm.Name+"-data")
		mark := ownership.Owner{Kind: "OpenStackMachine", Namespace: ns, Name: osm.Name}.Description()
		if osm == vm2 {
			g.Expect(root).To(HaveLen(2))
			g.Expect(root[0].ID).To(Equal(users.ID))
			root = root[1:]
		}
		g.Expect(root).To(HaveLen(1), "one root volume, made once")
		g.Expect(data).To(HaveLen(1), "one data volume, made once")
		g.Expect(root[0]).To(And(HaveField("Size", 10), HaveField("Bootable", "true"), HaveField("Description", mark),
			HaveField("AvailabilityZone", server.AvailabilityZone), HaveField("Status", "in-use")))
		g.Expect(data[0]).To(And(HaveField("Size", 2), HaveField("VolumeType", "ssd"), HaveField("Description", mark),
			HaveField("AvailabilityZone", server.AvailabilityZone)))
		g.Expect(cloud.ServerBlockDeviceMapping(server.ID)).To(Equal([]map[string]any{
			{"source_type": "volume", "destination_type": "volume", "uuid": root[0].ID, "boot_index": 0.0, "delete_on_termination": true},
			{"source_type": "blank", "destination_type": "local", "volume_size": 1.0, "boot_index": -1.0, "delete_on_termination": true, "tag": "etcd"},
			{"source_type": "volume", "destination_type": "volume", "uuid": data[0].ID, "boot_index": -1.0, "delete_on_termination": true, "tag": "data"},
		}))
	}
	g.Expect(cloud.Calls()["CreateVolume"]).To(Equal(5), "the user's, then two for each machine")
	g.Expect(cloud.Calls()["CreateServer"]).To(Equal(3), "one failed, then one for each machine")

	// from: Machine on a Machine without a failure domain: Cinder's default zone, as upstream
	// makes it (Azimuth's default node group).
	homeless := newMachine(g, ns, "vm3", "", false, withVolumes)
	g.Eventually(func(g Gomega) { machineProvisioned(g, cloud, homeless) }, eventually, poll).Should(Succeed())
	data := volumesNamed(cloud, "vm3-data")
	g.Expect(data).To(HaveLen(1))
	g.Expect(data[0].AvailabilityZone).To(Equal("az1"), "Cinder's default zone, its first here")

	// Deletion: Nova deletes the volumes with the servers; the user's volume stays.
	deleteAllMachines(g, ns, vm1, vm2, homeless)
	left := cloud.Volumes()
	g.Expect(left).To(HaveLen(1))
	g.Expect(left[0].ID).To(Equal(users.ID))
	g.Expect(left[0].Status).To(Equal("available"))
}

// A volume made for a server that never came (its machine deleted while Cinder built it, or a
// server create Nova refused) is deleted with the machine.
func TestMachineVolumesWithoutAServerAreDeleted(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("machines-volumes-orphans")
	cloud := newCloudWith(t, g, ns, fakeopenstack.Options{})
	addMachineImages(cloud)
	clusterReady(g, newCluster(g, ns, false, managedSpec(), true))
	// Nova refuses every create: the volume stays, detached.
	cloud.InjectFault(fakeopenstack.Fault{Operation: "CreateServer", Probability: 1, Status: 400})
	osm := newMachine(g, ns, "vm1", "az1", false, func(s *infrav1.OpenStackMachineSpec) { s.RootVolume = &infrav1.RootVolume{SizeGiB: 4} })
	g.Eventually(func(g Gomega) {
		g.Expect(cloud.Calls()["CreateServer"]).To(BeNumerically(">=", 2))
	}, eventually, poll).Should(Succeed())
	g.Expect(volumesNamed(cloud, "vm1-root")).To(HaveLen(1), "each attempt takes the same volume")
	deleteAllMachines(g, ns, osm)
	g.Expect(cloud.Volumes()).To(BeEmpty())
}

// A machine that asks for a trunk has one on its port, named like it; deleting the machine deletes
// the trunk, then the port.
func TestMachineTrunk(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("machines-trunk")
	cloud := newCloudWith(t, g, ns, fakeopenstack.Options{})
	addMachineImages(cloud)
	clusterReady(g, newCluster(g, ns, false, managedSpec(), true))
	osm := newMachine(g, ns, "vm1", "az1", false, func(s *infrav1.OpenStackMachineSpec) {
		s.Trunk = true
		s.Ports = []infrav1.PortOpts{{}, {Trunk: ptr.To(false)}}
	})
	g.Eventually(func(g Gomega) { machineProvisioned(g, cloud, osm) }, eventually, poll).Should(Succeed())
	found, err := cloud.Network().ListTrunks(ctx, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(found).To(HaveLen(1), "the first port's; the second says no")
	parent, err := cloud.Network().GetPort(ctx, found[0].PortID)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(parent.Name).To(Equal("vm1-0"))
	g.Expect(found[0].Name).To(Equal("vm1-0"))
	deleteAllMachines(g, ns, osm)
	found, err = cloud.Network().ListTrunks(ctx, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(found).To(BeEmpty())
	left, err := cloud.Network().ListPorts(ctx, ports.ListOpts{Name: "vm1-0"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(left).To(BeEmpty())
}
