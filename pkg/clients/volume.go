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

package clients

import (
	"context"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/availabilityzones"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
)

//go:generate mockgen -destination=mock/volume.go -package=mock -copyright_file=../../hack/boilerplate/boilerplate.mockgen.txt . VolumeClient

// VolumeClient is the part of Cinder the provider uses: the volumes of machines.
type VolumeClient interface {
	ListVolumes(ctx context.Context, opts volumes.ListOptsBuilder) ([]volumes.Volume, error)
	GetVolume(ctx context.Context, id string) (*volumes.Volume, error)
	CreateVolume(ctx context.Context, opts volumes.CreateOptsBuilder) (*volumes.Volume, error)
	DeleteVolume(ctx context.Context, id string) error
	// ListAvailabilityZones returns Cinder's availability zones, which need not be Nova's.
	ListAvailabilityZones(ctx context.Context) ([]availabilityzones.AvailabilityZone, error)
}

type volumeClient struct {
	c *gophercloud.ServiceClient
}

// NewVolumeClient wraps a Cinder service client.
func NewVolumeClient(c *gophercloud.ServiceClient) VolumeClient {
	return &volumeClient{c: c}
}

func (v *volumeClient) ListVolumes(ctx context.Context, opts volumes.ListOptsBuilder) ([]volumes.Volume, error) {
	return call(serviceVolume, "ListVolumes", func() ([]volumes.Volume, error) {
		return allPages(ctx, volumes.List(v.c, opts), volumes.ExtractVolumes)
	})
}

func (v *volumeClient) GetVolume(ctx context.Context, id string) (*volumes.Volume, error) {
	return call(serviceVolume, "GetVolume", func() (*volumes.Volume, error) { return volumes.Get(ctx, v.c, id).Extract() })
}

func (v *volumeClient) CreateVolume(ctx context.Context, opts volumes.CreateOptsBuilder) (*volumes.Volume, error) {
	return call(serviceVolume, "CreateVolume", func() (*volumes.Volume, error) {
		return volumes.Create(ctx, v.c, opts, nil).Extract()
	})
}

func (v *volumeClient) DeleteVolume(ctx context.Context, id string) error {
	return callErr(serviceVolume, "DeleteVolume", func() error { return volumes.Delete(ctx, v.c, id, nil).ExtractErr() })
}

func (v *volumeClient) ListAvailabilityZones(ctx context.Context) ([]availabilityzones.AvailabilityZone, error) {
	return call(serviceVolume, "ListVolumeAvailabilityZones", func() ([]availabilityzones.AvailabilityZone, error) {
		return allPages(ctx, availabilityzones.List(v.c), availabilityzones.ExtractAvailabilityZones)
	})
}

// NoVolumeClient is the VolumeClient of a cloud without Cinder: every call returns err.
func NoVolumeClient(err error) VolumeClient { return noVolumeClient{err} }

type noVolumeClient struct{ err error }

func (n noVolumeClient) ListVolumes(context.Context, volumes.ListOptsBuilder) ([]volumes.Volume, error) {
	return nil, n.err
}
func (n noVolumeClient) GetVolume(context.Context, string) (*volumes.Volume, error) {
	return nil, n.err
}
func (n noVolumeClient) CreateVolume(context.Context, volumes.CreateOptsBuilder) (*volumes.Volume, error) {
	return nil, n.err
}
func (n noVolumeClient) DeleteVolume(context.Context, string) error { return n.err }
func (n noVolumeClient) ListAvailabilityZones(context.Context) ([]availabilityzones.AvailabilityZone, error) {
	return nil, n.err
}
