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
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// VolumeSpec is one Cinder volume the controller makes for a machine's server: its root volume
// or an additional block device of type Volume.
type VolumeSpec struct {
	// Name is <machine>-root or <machine>-<device name>.
	Name    string
	SizeGiB int
	// Type is the Cinder volume type; "" for the cloud's default.
	Type string
	// AvailabilityZone is the Cinder zone; "" for Cinder's default.
	AvailabilityZone string
	// ImageID is the image a root volume is made from; "" for other volumes.
	ImageID string
	// Path is the spec field that asks for the volume, for messages.
	Path *field.Path
}

// BlockDeviceSpec is one additional block device of a server: a volume, or local storage.
type BlockDeviceSpec struct {
	// Tag is the device's name, which Nova tags it with.
	Tag     string
	SizeGiB int
	// Volume is the device's volume; nil for local storage (a part of the flavor's ephemeral
	// disk).
	Volume *VolumeSpec
}

// VolumesPending is the answer of Create while Cinder still builds volumes of the server: the
// server is created once they are available.
type VolumesPending struct {
	// Volumes are "<name> (<status>)" for each volume that is not available yet.
	Volumes []string
}

func (e *VolumesPending) Error() string {
	return "waiting for Cinder to make volumes " + strings.Join(e.Volumes, ", ")
}

var (
	rootVolumePath   = field.NewPath("spec", "rootVolume")
	blockDevicesPath = field.NewPath("spec", "additionalBlockDevices")
)

// RootVolumeName and BlockDeviceVolumeName are the names of a machine's volumes, as upstream
// CAPO gives them: the machine's name and "root", or the device's name.
func RootVolumeName(machine string) string { return machine + "-root" }

// BlockDeviceVolumeName is the name of the volume of the additional block device device.
func BlockDeviceVolumeName(machine, device string) string { return machine + "-" + device }

// ResolveVolumes turns the spec's rootVolume and additionalBlockDevices into the volumes and
// devices of server machine, whose failure domain is failureDomain. A volume's zone is the one
// the spec names, or the failure domain (from: Machine; Cinder's default zone when the Machine
// has none, as upstream). When the spec says nothing it is the failure domain if Cinder has a
// zone of that name (Cinder's zones need not be Nova's), and Cinder's default otherwise, as
// upstream leaves it. A Local device's volume settings are ignored.
func (s *Service) ResolveVolumes(ctx context.Context, machine, imageID, failureDomain string, root *infrav1.RootVolume, devices []infrav1.AdditionalBlockDevice) (*VolumeSpec, []BlockDeviceSpec, error) {
	var cinderZones []string
	zoneOf := func(v *infrav1.BlockDeviceVolume) (string, error) {
		az := v.AvailabilityZone
		switch {
		case az != nil && az.From == infrav1.VolumeAZFromMachine:
			// A Machine without a failure domain gets Cinder's default zone, as upstream gives it.
			return failureDomain, nil
		case az != nil:
			return string(ptr.Deref(az.Name, "")), nil
		case failureDomain == "":
			return "", nil
		}
		if cinderZones == nil {
			zones, err := s.volume.ListAvailabilityZones(ctx)
			if err != nil {
				return "", fmt.Errorf("listing Cinder's availability zones: %w", err)
			}
			cinderZones = []string{}
			for _, z := range zones {
				if z.ZoneState.Available {
					cinderZones = append(cinderZones, z.ZoneName)
				}
			}
		}
		if slices.Contains(cinderZones, failureDomain) {
			return failureDomain, nil
		}
		return "", nil
	}
	var rootSpec *VolumeSpec
	if root != nil {
		az, err := zoneOf(&root.BlockDeviceVolume)
		if err != nil {
			return nil, nil, err
		}
		rootSpec = &VolumeSpec{Name: RootVolumeName(machine), SizeGiB: root.SizeGiB, Type: root.Type, AvailabilityZone: az, ImageID: imageID, Path: rootVolumePath}
	}
	var out []BlockDeviceSpec
	for i, d := range devices {
		b := BlockDeviceSpec{Tag: d.Name, SizeGiB: d.SizeGiB}
		if d.Storage.Type == infrav1.VolumeBlockDevice {
			v := ptr.Deref(d.Storage.Volume, infrav1.BlockDeviceVolume{})
			path := blockDevicesPath.Index(i)
			az, err := zoneOf(&v)
			if err != nil {
				return nil, nil, err
			}
			b.Volume = &VolumeSpec{Name: BlockDeviceVolumeName(machine, d.Name), SizeGiB: d.SizeGiB, Type: v.Type, AvailabilityZone: az, Path: path}
		}
		out = append(out, b)
	}
	return rootSpec, out, nil
}

// upstreamVolumeDescriptions are the descriptions upstream CAPO v0.14 gives the volumes it makes
// for the server named server.
func upstreamVolumeDescriptions(server string) []string {
	return []string{"Root volume for " + server, "Additional block device for " + server}
}

// volumeClaim is what a volume named as one of the machine's is to the machine: its mark is the
// machine's description. One attached to a server is not a volume to use or delete, whatever it
// carries: the machine's server has it already, or it is another's. Without a mark, a detached
// volume upstream described for this server, younger than the machine, is one upstream made and
// a crash left behind.
func (s *Service) volumeClaim(v *volumes.Volume, server string) ownership.Candidate {
	if len(v.Attachments) > 0 {
		return ownership.Candidate{ID: v.ID, Name: v.Name}
	}
	r := ownership.Resource{ID: v.ID, Name: v.Name, Description: v.Description, Created: v.CreatedAt,
		Legacy: slices.Contains(upstreamVolumeDescriptions(server), v.Description)}
	return notAConflict(s.owner.Claim(r))
}

// ensureVolume returns the volume of spec, creating it when the machine has none yet. A volume
// of the machine that Cinder failed to build is deleted, so that the next attempt makes a new
// one.
func (s *Service) ensureVolume(ctx context.Context, spec *VolumeSpec, server string) (*volumes.Volume, error) {
	found, err := s.volume.ListVolumes(ctx, volumes.ListOpts{Name: spec.Name})
	if err != nil {
		return nil, fmt.Errorf("listing volumes named %s: %w", spec.Name, err)
	}
	found = slices.DeleteFunc(found, func(v volumes.Volume) bool { return v.Name != spec.Name })
	v, err := ownership.Find("volume", spec.Name, found, func(v *volumes.Volume) ownership.Candidate { return s.volumeClaim(v, server) })
	if err != nil {
		return nil, err
	}
	if v != nil {
		if v.Status == "error" {
			if err := s.volume.DeleteVolume(ctx, v.ID); err != nil && !clients.IsNotFound(err) {
				return nil, fmt.Errorf("deleting volume %s (%s), which Cinder failed to build: %w", v.Name, v.ID, err)
			}
			s.report.Changed("DeletedVolume", report.Resource{Kind: "Volume", Name: v.Name, ID: v.ID, Zone: v.AvailabilityZone},
				"Deleted volume %s (%s): Cinder failed to build it (status error); the next attempt makes a new one", v.Name, v.ID)
			return nil, fmt.Errorf("cinder failed to build volume %s (%s) in %s: it is deleted, and the next attempt makes a new one", v.Name, v.ID, where(v.AvailabilityZone))
		}
		return v, nil
	}
	opts := volumes.CreateOpts{Name: spec.Name, Description: s.owner.Description(), Size: spec.SizeGiB,
		AvailabilityZone: spec.AvailabilityZone, VolumeType: spec.Type, ImageID: spec.ImageID}
	v, err = s.volume.CreateVolume(ctx, opts)
	if gophercloud.ResponseCodeIs(err, http.StatusBadRequest) || gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		// Cinder refutes what the spec asks for: a zone or a type it does not have, a size below
		// the image's. Cinder's own words stay out of the message (clients.CallError).
		what := fmt.Sprintf("%d GiB in %s", spec.SizeGiB, where(spec.AvailabilityZone))
		if spec.Type != "" {
			what += ", type " + spec.Type
		}
		return nil, report.Refuted(infrav1.InstanceConfigurationErrorReason, spec.Path, "Cinder refuses volume %s (%s): %v; check the zone, the type and that the size holds the image", spec.Name, what, err)
	}
	if err != nil {
		return nil, fmt.Errorf("creating volume %s (%d GiB) in %s: %w", spec.Name, spec.SizeGiB, where(spec.AvailabilityZone), err)
	}
	s.report.Changed("CreatedVolume", report.Resource{Kind: "Volume", Name: spec.Name, ID: v.ID, Zone: spec.AvailabilityZone},
		"Created volume %s (%s, %d GiB) in %s", spec.Name, v.ID, spec.SizeGiB, where(spec.AvailabilityZone))
	return v, nil
}

func where(zone string) string {
	if zone == "" {
		return "Cinder's default availability zone"
	}
	return "availability zone " + zone
}

// blockDeviceMapping makes the server's volumes (each once: a later reconcile finds those an
// earlier one made) and returns the server's block device mapping, every device deleted with
// the server; a VolumesPending error while Cinder still builds any of them.
func (s *Service) blockDeviceMapping(ctx context.Context, spec *InstanceSpec) ([]servers.BlockDevice, error) {
	if spec.RootVolume == nil && len(spec.BlockDevices) == 0 {
		return nil, nil
	}
	pending := &VolumesPending{}
	volumeID := func(v *VolumeSpec) (string, error) {
		got, err := s.ensureVolume(ctx, v, spec.Name)
		if err != nil {
			return "", err
		}
		if got.Status != "available" {
			pending.Volumes = append(pending.Volumes, fmt.Sprintf("%s (%s)", got.Name, got.Status))
		}
		return got.ID, nil
	}
	// The boot device: the root volume, or else the image on the flavor's disk, which Nova needs
	// spelled out once other devices are given.
	boot := servers.BlockDevice{SourceType: servers.SourceImage, DestinationType: servers.DestinationLocal, UUID: spec.ImageID, DeleteOnTermination: true}
	if spec.RootVolume != nil {
		id, err := volumeID(spec.RootVolume)
		if err != nil {
			return nil, err
		}
		boot = servers.BlockDevice{SourceType: servers.SourceVolume, DestinationType: servers.DestinationVolume, UUID: id, DeleteOnTermination: true}
	}
	mapping := []servers.BlockDevice{boot}
	for _, d := range spec.BlockDevices {
		device := servers.BlockDevice{SourceType: servers.SourceBlank, DestinationType: servers.DestinationLocal, VolumeSize: d.SizeGiB,
			BootIndex: -1, DeleteOnTermination: true, Tag: d.Tag}
		if d.Volume != nil {
			id, err := volumeID(d.Volume)
			if err != nil {
				return nil, err
			}
			device = servers.BlockDevice{SourceType: servers.SourceVolume, DestinationType: servers.DestinationVolume, UUID: id,
				BootIndex: -1, DeleteOnTermination: true, Tag: d.Tag}
		}
		mapping = append(mapping, device)
	}
	if len(pending.Volumes) > 0 {
		return nil, pending
	}
	return mapping, nil
}

// VolumeNames are the names of the volumes the controller makes for a machine's server, from its
// spec alone, so that deletion finds them without resolving anything.
func VolumeNames(machine string, root *infrav1.RootVolume, devices []infrav1.AdditionalBlockDevice) []string {
	var names []string
	if root != nil {
		names = append(names, RootVolumeName(machine))
	}
	for _, d := range devices {
		if d.Storage.Type == infrav1.VolumeBlockDevice {
			names = append(names, BlockDeviceVolumeName(machine, d.Name))
		}
	}
	return names
}

// DeleteVolumes deletes the machine's volumes that no server holds: those made for a server that
// was never created, or that a crash left. Call it once the server is gone; Nova deletes the
// volumes of a server with it. Volumes not the machine's are left alone.
func (s *Service) DeleteVolumes(ctx context.Context, server string, names []string) error {
	for _, name := range names {
		found, err := s.volume.ListVolumes(ctx, volumes.ListOpts{Name: name})
		if err != nil {
			return fmt.Errorf("listing volumes named %s: %w", name, err)
		}
		for _, v := range found {
			if v.Name != name || v.Status == "deleting" || !ownership.Mine(s.volumeClaim(&v, server)) {
				continue
			}
			if err := s.volume.DeleteVolume(ctx, v.ID); err != nil && !clients.IsNotFound(err) {
				return fmt.Errorf("deleting volume %s (%s): %w", v.Name, v.ID, err)
			}
			s.report.Changed("DeletedVolume", report.Resource{Kind: "Volume", Name: v.Name, ID: v.ID, Zone: v.AvailabilityZone}, "Deleted volume %s (%s)", v.Name, v.ID)
		}
	}
	return nil
}
