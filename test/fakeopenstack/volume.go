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

package fakeopenstack

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/availabilityzones"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
)

type volumeEntry struct {
	volume   volumes.Volume
	reads    int
	settleTo string
}

type volumeState struct {
	volumes store[volumeEntry]
	// azs are Cinder's zones when set; Nova's otherwise (SetAvailabilityZones).
	azs   []string
	types []string
}

func (s *volumeState) init() {
	s.volumes = newStore[volumeEntry]()
	s.types = []string{"__DEFAULT__"}
}

// SetVolumeAvailabilityZones gives Cinder zones of its own, for clouds whose Cinder zones are not
// Nova's.
func (c *Cloud) SetVolumeAvailabilityZones(names ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.vol.azs = slices.Clone(names)
}

// AddVolumeType adds a Cinder volume type.
func (c *Cloud) AddVolumeType(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.vol.types = append(c.vol.types, name)
}

// Volumes are every volume of the cloud, as Cinder shows them to an administrator.
func (c *Cloud) Volumes() []volumes.Volume {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []volumes.Volume
	for _, e := range c.vol.volumes.all() {
		out = append(out, e.volume)
	}
	return out
}

func (c *Cloud) volumeZones() []string {
	if c.vol.azs != nil {
		return c.vol.azs
	}
	var out []string
	for _, z := range c.compute.azs {
		out = append(out, z.ZoneName)
	}
	return out
}

// settleVolume moves a volume being created to available (or error) after enough reads, as
// servers settle.
func (c *Cloud) settleVolume(e *volumeEntry) {
	if e.volume.Status != "creating" {
		return
	}
	e.reads++
	if e.reads >= c.opts.ServerBuildReads {
		e.volume.Status = e.settleTo
	}
}

type volumeAPI struct{ c *Cloud }

func (a *volumeAPI) ListVolumes(_ context.Context, opts volumes.ListOptsBuilder) ([]volumes.Volume, error) {
	return locked(a.c, "ListVolumes", func(c *Cloud) ([]volumes.Volume, error) {
		entries := c.vol.volumes.all()
		all := make([]*volumes.Volume, 0, len(entries))
		for _, e := range entries {
			c.settleVolume(e)
			all = append(all, &e.volume)
		}
		return filter(all, opts, nil)
	})
}

func (a *volumeAPI) GetVolume(_ context.Context, id string) (*volumes.Volume, error) {
	return locked(a.c, "GetVolume", func(c *Cloud) (*volumes.Volume, error) {
		e, ok := c.vol.volumes.get(id)
		if !ok {
			return nil, notFound("Volume", id)
		}
		c.settleVolume(e)
		v := e.volume
		return &v, nil
	})
}

// CreateVolume checks what Cinder checks of a machine's volume: its zone, type, size and image.
func (a *volumeAPI) CreateVolume(_ context.Context, opts volumes.CreateOptsBuilder) (*volumes.Volume, error) {
	return locked(a.c, "CreateVolume", func(c *Cloud) (*volumes.Volume, error) {
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		zones := c.volumeZones()
		az := str(body, "availability_zone")
		switch {
		case az == "" && len(zones) > 0:
			az = zones[0]
		case az != "" && !slices.Contains(zones, az):
			return nil, httpError(http.StatusBadRequest, "Invalid input received: Availability zone '%s' is invalid.", az)
		}
		kind := str(body, "volume_type")
		if kind == "" {
			kind = c.vol.types[0]
		} else if !slices.Contains(c.vol.types, kind) {
			return nil, httpError(http.StatusNotFound, "Volume type with name %s could not be found.", kind)
		}
		size, _ := body["size"].(float64)
		if size < 1 {
			return nil, httpError(http.StatusBadRequest, "Invalid input received: Volume size '%v' must be an integer and greater than 0.", body["size"])
		}
		bootable := "false"
		if image := str(body, "imageRef"); image != "" {
			if !slices.ContainsFunc(c.compute.images, func(i images.Image) bool { return i.ID == image }) {
				return nil, httpError(http.StatusBadRequest, "Invalid image identifier or unable to access requested image.")
			}
			bootable = "true"
		}
		e := &volumeEntry{settleTo: "available"}
		if c.lastCallDrivesToError {
			e.settleTo = "error"
		}
		e.volume = volumes.Volume{ID: c.newID("volume"), Name: str(body, "name"), Description: str(body, "description"), Size: int(size),
			AvailabilityZone: az, VolumeType: kind, Bootable: bootable, Status: "creating", Metadata: stringMap(body["metadata"]),
			CreatedAt: c.opts.Now().UTC().Truncate(time.Second)}
		if c.opts.ServerBuildReads == 0 {
			e.volume.Status = e.settleTo
		}
		c.vol.volumes.add(e.volume.ID, e)
		v := e.volume
		return &v, nil
	})
}

func (a *volumeAPI) DeleteVolume(_ context.Context, id string) error {
	return lockedErr(a.c, "DeleteVolume", func(c *Cloud) error {
		e, ok := c.vol.volumes.get(id)
		if !ok {
			return notFound("Volume", id)
		}
		if len(e.volume.Attachments) > 0 {
			return httpError(http.StatusBadRequest, "Invalid volume: Volume status must be available or error or error_restoring or error_extending or error_managing and must not be migrating, attached, belong to a group, have snapshots, awaiting a transfer, or be disassociated from snapshots after volume transfer.")
		}
		c.vol.volumes.remove(id)
		return nil
	})
}

func (a *volumeAPI) ListAvailabilityZones(context.Context) ([]availabilityzones.AvailabilityZone, error) {
	return locked(a.c, "ListVolumeAvailabilityZones", func(c *Cloud) ([]availabilityzones.AvailabilityZone, error) {
		var out []availabilityzones.AvailabilityZone
		for _, z := range c.volumeZones() {
			az := availabilityzones.AvailabilityZone{ZoneName: z}
			az.ZoneState.Available = true
			out = append(out, az)
		}
		return out, nil
	})
}

// blockDevice is one entry of a server's block_device_mapping_v2, as Nova keeps it.
type blockDevice struct {
	volumeID            string
	deleteOnTermination bool
}

// attachBlockDevices checks a server's block device mapping as Nova's API does and attaches its
// volumes to server id: a volume must exist and be available, and a server without an image
// needs a volume to boot from.
func (c *Cloud) attachBlockDevices(id string, body map[string]any) ([]blockDevice, error) {
	mapping := asSlice(body["block_device_mapping_v2"])
	bootable := str(body, "imageRef") != ""
	var devices []blockDevice
	for _, item := range mapping {
		m, _ := item.(map[string]any)
		if str(m, "source_type") != "volume" {
			continue
		}
		e, ok := c.vol.volumes.get(str(m, "uuid"))
		if !ok {
			return nil, httpError(http.StatusBadRequest, "Block Device Mapping is Invalid: failed to get volume %s.", str(m, "uuid"))
		}
		if e.volume.Status != "available" {
			return nil, httpError(http.StatusBadRequest, "Block Device Mapping is Invalid: volume %s status must be 'available', not '%s'.", e.volume.ID, e.volume.Status)
		}
		if str(m, "boot_index") == "0" {
			if e.volume.Bootable != "true" {
				return nil, httpError(http.StatusBadRequest, "Block Device Mapping is Invalid: Volume %s is not bootable.", e.volume.ID)
			}
			bootable = true
		}
		devices = append(devices, blockDevice{volumeID: e.volume.ID, deleteOnTermination: m["delete_on_termination"] == true})
	}
	if !bootable {
		return nil, httpError(http.StatusBadRequest, "Block Device Mapping is Invalid: Boot sequence for the instance and image/block device mapping combination is not valid.")
	}
	for _, d := range devices {
		e, _ := c.vol.volumes.get(d.volumeID)
		e.volume.Status = "in-use"
		e.volume.Attachments = []volumes.Attachment{{ServerID: id, VolumeID: d.volumeID, AttachmentID: c.newID("attachment")}}
	}
	return devices, nil
}

// detachBlockDevices is what Nova does with a deleted server's volumes: deletes those marked so,
// detaches the others.
func (c *Cloud) detachBlockDevices(devices []blockDevice) {
	for _, d := range devices {
		e, ok := c.vol.volumes.get(d.volumeID)
		if !ok {
			continue
		}
		if d.deleteOnTermination {
			c.vol.volumes.remove(d.volumeID)
			continue
		}
		e.volume.Status, e.volume.Attachments = "available", nil
	}
}
