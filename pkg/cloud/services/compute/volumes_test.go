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

package compute

import (
	"context"
	"net/http"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/availabilityzones"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	. "github.com/onsi/gomega"
	"go.uber.org/mock/gomock"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

var mark = ownership.Owner{Kind: "OpenStackMachine", Namespace: "ns", Name: "m1"}.Description()

func volumeInstanceSpec() *InstanceSpec {
	return &InstanceSpec{
		Name: "m1", FlavorID: "flavor-1", ImageID: "image-1", AvailabilityZone: "az2",
		RootVolume: &VolumeSpec{Name: "m1-root", SizeGiB: 25, Type: "ssd", AvailabilityZone: "az2", ImageID: "image-1", Path: rootVolumePath},
		BlockDevices: []BlockDeviceSpec{
			{Tag: "etcd", SizeGiB: 1},
			{Tag: "data", SizeGiB: 3, Volume: &VolumeSpec{Name: "m1-data", SizeGiB: 3, AvailabilityZone: "az1", Path: blockDevicesPath.Index(1)}},
		},
	}
}

// A machine's volumes are made first, each once, and the server is created only when Cinder has
// built them all; it boots from the root volume, and Nova deletes every device with it.
func TestCreateMakesTheVolumesThenBootsFromThem(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	m, svc := newMocked(t)

	gomock.InOrder(
		m.volume.EXPECT().ListVolumes(ctx, volumes.ListOpts{Name: "m1-root"}).Return(nil, nil),
		m.volume.EXPECT().CreateVolume(ctx, gomock.Any()).DoAndReturn(func(_ context.Context, opts volumes.CreateOptsBuilder) (*volumes.Volume, error) {
			v := wire(g, opts.ToVolumeCreateMap)["volume"].(map[string]any)
			g.Expect(v).To(Equal(map[string]any{"name": "m1-root", "description": mark, "size": 25.0, "availability_zone": "az2",
				"volume_type": "ssd", "imageRef": "image-1"}))
			return &volumes.Volume{ID: "root-1", Name: "m1-root", Status: "creating"}, nil
		}),
		m.volume.EXPECT().ListVolumes(ctx, volumes.ListOpts{Name: "m1-data"}).Return(nil, nil),
		m.volume.EXPECT().CreateVolume(ctx, gomock.Any()).DoAndReturn(func(_ context.Context, opts volumes.CreateOptsBuilder) (*volumes.Volume, error) {
			v := wire(g, opts.ToVolumeCreateMap)["volume"].(map[string]any)
			g.Expect(v).To(Equal(map[string]any{"name": "m1-data", "description": mark, "size": 3.0, "availability_zone": "az1"}))
			return &volumes.Volume{ID: "data-1", Name: "m1-data", Status: "creating"}, nil
		}),
	)
	_, err := svc.Create(ctx, volumeInstanceSpec())
	pending, ok := err.(*VolumesPending)
	g.Expect(ok).To(BeTrue(), "no server while Cinder builds: %v", err)
	g.Expect(pending.Volumes).To(Equal([]string{"m1-root (creating)", "m1-data (creating)"}))
	g.Expect(<-m.recorder.Events).To(ContainSubstring("Created volume m1-root (root-1, 25 GiB) in availability zone az2"))

	// The next reconcile finds them by name and mark, built: no second volume, then the server.
	gomock.InOrder(
		m.volume.EXPECT().ListVolumes(ctx, volumes.ListOpts{Name: "m1-root"}).Return([]volumes.Volume{
			{ID: "root-1", Name: "m1-root", Description: mark, Status: "available"},
		}, nil),
		m.volume.EXPECT().ListVolumes(ctx, volumes.ListOpts{Name: "m1-data"}).Return([]volumes.Volume{
			{ID: "data-1", Name: "m1-data", Description: mark, Status: "available"},
		}, nil),
		m.compute.EXPECT().CreateServer(ctx, gomock.Any(), nil).DoAndReturn(
			func(_ context.Context, opts servers.CreateOptsBuilder, _ servers.SchedulerHintOptsBuilder) (*servers.Server, error) {
				s := wire(g, opts.ToServerCreateMap)["server"].(map[string]any)
				g.Expect(s).To(HaveKeyWithValue("imageRef", ""), "a server that boots from a volume takes no image")
				g.Expect(s["block_device_mapping_v2"]).To(Equal([]any{
					map[string]any{"source_type": "volume", "destination_type": "volume", "uuid": "root-1", "boot_index": 0.0, "delete_on_termination": true},
					map[string]any{"source_type": "blank", "destination_type": "local", "volume_size": 1.0, "boot_index": -1.0, "delete_on_termination": true, "tag": "etcd"},
					map[string]any{"source_type": "volume", "destination_type": "volume", "uuid": "data-1", "boot_index": -1.0, "delete_on_termination": true, "tag": "data"},
				}))
				return &servers.Server{ID: "server-1"}, nil
			}),
	)
	server, err := svc.Create(ctx, volumeInstanceSpec())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(server.ID).To(Equal("server-1"))
}

// Without a root volume, a server with further devices boots from the image on the flavor's
// disk, which the mapping names first.
func TestCreateWithLocalDevicesOnlyBootsFromTheImage(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	m, svc := newMocked(t)
	spec := volumeInstanceSpec()
	spec.RootVolume, spec.BlockDevices = nil, spec.BlockDevices[:1]
	m.compute.EXPECT().CreateServer(ctx, gomock.Any(), nil).DoAndReturn(
		func(_ context.Context, opts servers.CreateOptsBuilder, _ servers.SchedulerHintOptsBuilder) (*servers.Server, error) {
			s := wire(g, opts.ToServerCreateMap)["server"].(map[string]any)
			g.Expect(s).To(HaveKeyWithValue("imageRef", "image-1"))
			g.Expect(s["block_device_mapping_v2"]).To(Equal([]any{
				map[string]any{"source_type": "image", "destination_type": "local", "uuid": "image-1", "boot_index": 0.0, "delete_on_termination": true},
				map[string]any{"source_type": "blank", "destination_type": "local", "volume_size": 1.0, "boot_index": -1.0, "delete_on_termination": true, "tag": "etcd"},
			}))
			return &servers.Server{ID: "server-1"}, nil
		})
	_, err := svc.Create(ctx, spec)
	g.Expect(err).NotTo(HaveOccurred())
}

// A volume of the name that another machine's mark claims, or that a server holds, is not this
// machine's: it gets its own. One of its own that Cinder failed to build is deleted, and said.
func TestEnsureVolumeTakesOnlyItsOwn(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	m, svc := newMocked(t)
	spec := &VolumeSpec{Name: "m1-root", SizeGiB: 5, ImageID: "image-1", Path: rootVolumePath}

	m.volume.EXPECT().ListVolumes(ctx, volumes.ListOpts{Name: "m1-root"}).Return([]volumes.Volume{
		{ID: "other-namespace", Name: "m1-root", Description: ownership.Owner{Kind: "OpenStackMachine", Namespace: "other", Name: "m1"}.Description(), Status: "available"},
		{ID: "held", Name: "m1-root", Description: mark, Status: "in-use", Attachments: []volumes.Attachment{{ServerID: "s"}}},
		{ID: "users", Name: "m1-root", Description: "my data", Status: "available"},
	}, nil)
	m.volume.EXPECT().CreateVolume(ctx, gomock.Any()).Return(&volumes.Volume{ID: "new", Name: "m1-root", Status: "creating"}, nil)
	v, err := svc.ensureVolume(ctx, spec, "m1")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(v.ID).To(Equal("new"))

	m.volume.EXPECT().ListVolumes(ctx, volumes.ListOpts{Name: "m1-root"}).Return([]volumes.Volume{
		{ID: "failed", Name: "m1-root", Description: mark, Status: "error", AvailabilityZone: "az1"},
	}, nil)
	m.volume.EXPECT().DeleteVolume(ctx, "failed").Return(nil)
	_, err = svc.ensureVolume(ctx, spec, "m1")
	g.Expect(err).To(MatchError(ContainSubstring("cinder failed to build volume m1-root (failed) in availability zone az1")))
}

// Cinder's refusal of the zone, type or size names the field that asked for the volume.
func TestEnsureVolumeRefusalNamesTheField(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	m, svc := newMocked(t)
	spec := &VolumeSpec{Name: "m1-data", SizeGiB: 3, Type: "gold", AvailabilityZone: "nowhere", Path: blockDevicesPath.Index(2)}
	m.volume.EXPECT().ListVolumes(ctx, gomock.Any()).Return(nil, nil)
	m.volume.EXPECT().CreateVolume(ctx, gomock.Any()).Return(nil,
		clients.WrapCall("volume", "CreateVolume", gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusBadRequest, Body: []byte("Cinder's own words")}))
	_, err := svc.ensureVolume(ctx, spec, "m1")
	specErr, ok := report.AsSpecError(err)
	g.Expect(ok).To(BeTrue())
	g.Expect(specErr.Reason).To(Equal(infrav1.InstanceConfigurationErrorReason))
	g.Expect(specErr.Message).To(HavePrefix("spec.additionalBlockDevices[2]: Cinder refuses volume m1-data (3 GiB in availability zone nowhere, type gold)"))
	g.Expect(specErr.Message).NotTo(ContainSubstring("own words"))
}

func TestResolveVolumesZones(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	m, svc := newMocked(t)
	cinder := func(names ...string) {
		var zones []availabilityzones.AvailabilityZone
		for _, n := range names {
			z := availabilityzones.AvailabilityZone{ZoneName: n}
			z.ZoneState.Available = true
			zones = append(zones, z)
		}
		m.volume.EXPECT().ListAvailabilityZones(ctx).Return(zones, nil)
	}
	named := &infrav1.VolumeAvailabilityZone{From: infrav1.VolumeAZFromName, Name: ptr.To(infrav1.VolumeAZName("az9"))}
	fromMachine := &infrav1.VolumeAvailabilityZone{From: infrav1.VolumeAZFromMachine}
	devices := []infrav1.AdditionalBlockDevice{
		{Name: "etcd", SizeGiB: 1, Storage: infrav1.BlockDeviceStorage{Type: infrav1.LocalBlockDevice}},
		{Name: "data", SizeGiB: 2, Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice, Volume: &infrav1.BlockDeviceVolume{AvailabilityZone: named}}},
		{Name: "logs", SizeGiB: 3, Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice, Volume: &infrav1.BlockDeviceVolume{Type: "ssd", AvailabilityZone: fromMachine}}},
	}

	// Unset: the machine's failure domain, when Cinder has that zone (asked once).
	cinder("az1", "az2")
	root, got, err := svc.ResolveVolumes(ctx, "m1", "image-1", "az2", &infrav1.RootVolume{SizeGiB: 10}, devices)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(*root).To(Equal(VolumeSpec{Name: "m1-root", SizeGiB: 10, AvailabilityZone: "az2", ImageID: "image-1", Path: rootVolumePath}))
	g.Expect(got).To(HaveLen(3))
	g.Expect(got[0]).To(Equal(BlockDeviceSpec{Tag: "etcd", SizeGiB: 1}))
	g.Expect(*got[1].Volume).To(Equal(VolumeSpec{Name: "m1-data", SizeGiB: 2, AvailabilityZone: "az9", Path: blockDevicesPath.Index(1)}))
	g.Expect(*got[2].Volume).To(Equal(VolumeSpec{Name: "m1-logs", SizeGiB: 3, Type: "ssd", AvailabilityZone: "az2", Path: blockDevicesPath.Index(2)}))

	// Unset, and Cinder has no zone of that name: Cinder's default, as upstream leaves it.
	cinder("nova")
	root, _, err = svc.ResolveVolumes(ctx, "m1", "image-1", "az2", &infrav1.RootVolume{SizeGiB: 10}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(root.AvailabilityZone).To(BeEmpty())

	// from: Machine on a Machine without a failure domain is Cinder's default zone, as upstream
	// makes it (Azimuth's default node group); a Local device's volume settings are ignored.
	devices[0].Storage.Volume = &infrav1.BlockDeviceVolume{Type: "ssd", AvailabilityZone: fromMachine}
	root, got, err = svc.ResolveVolumes(ctx, "m1", "image-1", "", &infrav1.RootVolume{SizeGiB: 10, BlockDeviceVolume: infrav1.BlockDeviceVolume{AvailabilityZone: fromMachine}}, devices)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(root.AvailabilityZone).To(BeEmpty())
	g.Expect(got[0]).To(Equal(BlockDeviceSpec{Tag: "etcd", SizeGiB: 1}))
	g.Expect(got[2].Volume.AvailabilityZone).To(BeEmpty())
}

// Deletion takes the machine's volumes no server holds, and leaves every other volume of the
// name alone.
func TestDeleteVolumes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	m, svc := newMocked(t)
	m.volume.EXPECT().ListVolumes(ctx, volumes.ListOpts{Name: "m1-root"}).Return([]volumes.Volume{
		{ID: "mine", Name: "m1-root", Description: mark, Status: "available"},
		{ID: "upstreams", Name: "m1-root", Description: "Root volume for m1", Status: "available"},
		{ID: "held", Name: "m1-root", Description: mark, Status: "in-use", Attachments: []volumes.Attachment{{ServerID: "s"}}},
		{ID: "going", Name: "m1-root", Description: mark, Status: "deleting"},
		{ID: "users", Name: "m1-root", Description: "my data", Status: "available"},
		{ID: "other-namespace", Name: "m1-root", Description: ownership.Owner{Kind: "OpenStackMachine", Namespace: "other", Name: "m1"}.Description()},
	}, nil)
	m.volume.EXPECT().DeleteVolume(ctx, "mine").Return(nil)
	m.volume.EXPECT().DeleteVolume(ctx, "upstreams").Return(nil)
	m.volume.EXPECT().ListVolumes(ctx, volumes.ListOpts{Name: "m1-data"}).Return(nil, nil)
	g.Expect(svc.DeleteVolumes(ctx, "m1", []string{"m1-root", "m1-data"})).To(Succeed())
	g.Expect(VolumeNames("m1", &infrav1.RootVolume{SizeGiB: 1}, []infrav1.AdditionalBlockDevice{
		{Name: "etcd", Storage: infrav1.BlockDeviceStorage{Type: infrav1.LocalBlockDevice}},
		{Name: "data", Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice}},
	})).To(Equal([]string{"m1-root", "m1-data"}))
}
