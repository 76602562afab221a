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
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/availabilityzones"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
)

//go:generate mockgen -destination=mock/compute.go -package=mock -copyright_file=../../hack/boilerplate/boilerplate.mockgen.txt . ComputeClient

// ComputeClient is the part of Nova the provider uses.
type ComputeClient interface {
	ListServers(ctx context.Context, opts servers.ListOptsBuilder) ([]servers.Server, error)
	GetServer(ctx context.Context, id string) (*servers.Server, error)
	CreateServer(ctx context.Context, opts servers.CreateOptsBuilder, hints servers.SchedulerHintOptsBuilder) (*servers.Server, error)
	DeleteServer(ctx context.Context, id string) error

	ListFlavors(ctx context.Context, opts flavors.ListOptsBuilder) ([]flavors.Flavor, error)
	GetFlavor(ctx context.Context, id string) (*flavors.Flavor, error)

	// ListAvailabilityZones returns Nova's availability zones with their state.
	ListAvailabilityZones(ctx context.Context) ([]availabilityzones.AvailabilityZone, error)

	ListServerGroups(ctx context.Context, opts servergroups.ListOptsBuilder) ([]servergroups.ServerGroup, error)
	GetKeyPair(ctx context.Context, name string) (*keypairs.KeyPair, error)
}

type computeClient struct {
	c *gophercloud.ServiceClient
}

// NewComputeClient wraps a Nova service client.
func NewComputeClient(c *gophercloud.ServiceClient) ComputeClient {
	return &computeClient{c: c}
}

func (n *computeClient) ListServers(ctx context.Context, opts servers.ListOptsBuilder) ([]servers.Server, error) {
	return call(serviceCompute, "ListServers", func() ([]servers.Server, error) {
		return allPages(ctx, servers.List(n.c, opts), servers.ExtractServers)
	})
}

func (n *computeClient) GetServer(ctx context.Context, id string) (*servers.Server, error) {
	return call(serviceCompute, "GetServer", func() (*servers.Server, error) { return servers.Get(ctx, n.c, id).Extract() })
}

func (n *computeClient) CreateServer(ctx context.Context, opts servers.CreateOptsBuilder, hints servers.SchedulerHintOptsBuilder) (*servers.Server, error) {
	return call(serviceCompute, "CreateServer", func() (*servers.Server, error) {
		return servers.Create(ctx, n.c, opts, hints).Extract()
	})
}

func (n *computeClient) DeleteServer(ctx context.Context, id string) error {
	return callErr(serviceCompute, "DeleteServer", func() error { return servers.Delete(ctx, n.c, id).ExtractErr() })
}

func (n *computeClient) ListFlavors(ctx context.Context, opts flavors.ListOptsBuilder) ([]flavors.Flavor, error) {
	return call(serviceCompute, "ListFlavors", func() ([]flavors.Flavor, error) {
		return allPages(ctx, flavors.ListDetail(n.c, opts), flavors.ExtractFlavors)
	})
}

func (n *computeClient) GetFlavor(ctx context.Context, id string) (*flavors.Flavor, error) {
	return call(serviceCompute, "GetFlavor", func() (*flavors.Flavor, error) { return flavors.Get(ctx, n.c, id).Extract() })
}

func (n *computeClient) ListAvailabilityZones(ctx context.Context) ([]availabilityzones.AvailabilityZone, error) {
	return call(serviceCompute, "ListAvailabilityZones", func() ([]availabilityzones.AvailabilityZone, error) {
		return allPages(ctx, availabilityzones.List(n.c), availabilityzones.ExtractAvailabilityZones)
	})
}

func (n *computeClient) ListServerGroups(ctx context.Context, opts servergroups.ListOptsBuilder) ([]servergroups.ServerGroup, error) {
	return call(serviceCompute, "ListServerGroups", func() ([]servergroups.ServerGroup, error) {
		return allPages(ctx, servergroups.List(n.c, opts), servergroups.ExtractServerGroups)
	})
}

func (n *computeClient) GetKeyPair(ctx context.Context, name string) (*keypairs.KeyPair, error) {
	return call(serviceCompute, "GetKeyPair", func() (*keypairs.KeyPair, error) { return keypairs.Get(ctx, n.c, name, nil).Extract() })
}
