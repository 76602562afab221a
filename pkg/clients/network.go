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
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/attributestags"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/trunks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
)

//go:generate mockgen -destination=mock/network.go -package=mock -copyright_file=../../hack/boilerplate/boilerplate.mockgen.txt . NetworkClient

// NetworkClient is the part of Neutron the provider uses.
type NetworkClient interface {
	ListNetworks(ctx context.Context, opts networks.ListOptsBuilder) ([]networks.Network, error)
	GetNetwork(ctx context.Context, id string) (*networks.Network, error)
	CreateNetwork(ctx context.Context, opts networks.CreateOptsBuilder) (*networks.Network, error)
	DeleteNetwork(ctx context.Context, id string) error

	ListSubnets(ctx context.Context, opts subnets.ListOptsBuilder) ([]subnets.Subnet, error)
	GetSubnet(ctx context.Context, id string) (*subnets.Subnet, error)
	CreateSubnet(ctx context.Context, opts subnets.CreateOptsBuilder) (*subnets.Subnet, error)
	DeleteSubnet(ctx context.Context, id string) error

	ListPorts(ctx context.Context, opts ports.ListOptsBuilder) ([]ports.Port, error)
	GetPort(ctx context.Context, id string) (*ports.Port, error)
	CreatePort(ctx context.Context, opts ports.CreateOptsBuilder) (*ports.Port, error)
	UpdatePort(ctx context.Context, id string, opts ports.UpdateOptsBuilder) (*ports.Port, error)
	DeletePort(ctx context.Context, id string) error

	// ListTrunks, CreateTrunk and DeleteTrunk are Neutron's trunk extension: a machine's port
	// that asks for it is a trunk's parent.
	ListTrunks(ctx context.Context, opts trunks.ListOptsBuilder) ([]trunks.Trunk, error)
	CreateTrunk(ctx context.Context, opts trunks.CreateOptsBuilder) (*trunks.Trunk, error)
	DeleteTrunk(ctx context.Context, id string) error

	ListRouters(ctx context.Context, opts routers.ListOptsBuilder) ([]routers.Router, error)
	GetRouter(ctx context.Context, id string) (*routers.Router, error)
	CreateRouter(ctx context.Context, opts routers.CreateOptsBuilder) (*routers.Router, error)
	UpdateRouter(ctx context.Context, id string, opts routers.UpdateOptsBuilder) (*routers.Router, error)
	DeleteRouter(ctx context.Context, id string) error
	AddRouterInterface(ctx context.Context, id string, opts routers.AddInterfaceOptsBuilder) (*routers.InterfaceInfo, error)
	RemoveRouterInterface(ctx context.Context, id string, opts routers.RemoveInterfaceOptsBuilder) (*routers.InterfaceInfo, error)

	ListSecGroups(ctx context.Context, opts groups.ListOpts) ([]groups.SecGroup, error)
	GetSecGroup(ctx context.Context, id string) (*groups.SecGroup, error)
	CreateSecGroup(ctx context.Context, opts groups.CreateOptsBuilder) (*groups.SecGroup, error)
	DeleteSecGroup(ctx context.Context, id string) error
	ListSecGroupRules(ctx context.Context, opts rules.ListOpts) ([]rules.SecGroupRule, error)
	// CreateSecGroupRules creates several rules in one request; Neutron creates all or none.
	CreateSecGroupRules(ctx context.Context, opts []rules.CreateOpts) ([]rules.SecGroupRule, error)
	DeleteSecGroupRule(ctx context.Context, id string) error

	ListFloatingIPs(ctx context.Context, opts floatingips.ListOptsBuilder) ([]floatingips.FloatingIP, error)
	GetFloatingIP(ctx context.Context, id string) (*floatingips.FloatingIP, error)
	CreateFloatingIP(ctx context.Context, opts floatingips.CreateOptsBuilder) (*floatingips.FloatingIP, error)
	UpdateFloatingIP(ctx context.Context, id string, opts floatingips.UpdateOptsBuilder) (*floatingips.FloatingIP, error)
	DeleteFloatingIP(ctx context.Context, id string) error

	// ReplaceAllTags sets the tags of a resource; resourceType is Neutron's collection name
	// ("networks", "subnets", "ports", "routers", "security-groups", "floatingips").
	ReplaceAllTags(ctx context.Context, resourceType, id string, opts attributestags.ReplaceAllOptsBuilder) ([]string, error)

	ListAvailabilityZones(ctx context.Context) ([]NetworkAvailabilityZone, error)
	ListExtensions(ctx context.Context) ([]extensions.Extension, error)
}

// NetworkAvailabilityZone is one entry of Neutron's availability_zones list, which gophercloud
// does not model.
type NetworkAvailabilityZone struct {
	Name     string `json:"name"`
	Resource string `json:"resource"`
	State    string `json:"state"`
}

type networkClient struct {
	c *gophercloud.ServiceClient
}

// NewNetworkClient wraps a Neutron service client.
func NewNetworkClient(c *gophercloud.ServiceClient) NetworkClient {
	return &networkClient{c: c}
}

func (n *networkClient) ListNetworks(ctx context.Context, opts networks.ListOptsBuilder) ([]networks.Network, error) {
	return call(serviceNetwork, "ListNetworks", func() ([]networks.Network, error) {
		return allPages(ctx, networks.List(n.c, opts), networks.ExtractNetworks)
	})
}

func (n *networkClient) GetNetwork(ctx context.Context, id string) (*networks.Network, error) {
	return call(serviceNetwork, "GetNetwork", func() (*networks.Network, error) { return networks.Get(ctx, n.c, id).Extract() })
}

func (n *networkClient) CreateNetwork(ctx context.Context, opts networks.CreateOptsBuilder) (*networks.Network, error) {
	return call(serviceNetwork, "CreateNetwork", func() (*networks.Network, error) { return networks.Create(ctx, n.c, opts).Extract() })
}

func (n *networkClient) DeleteNetwork(ctx context.Context, id string) error {
	return callErr(serviceNetwork, "DeleteNetwork", func() error { return networks.Delete(ctx, n.c, id).ExtractErr() })
}

func (n *networkClient) ListSubnets(ctx context.Context, opts subnets.ListOptsBuilder) ([]subnets.Subnet, error) {
	return call(serviceNetwork, "ListSubnets", func() ([]subnets.Subnet, error) {
		return allPages(ctx, subnets.List(n.c, opts), subnets.ExtractSubnets)
	})
}

func (n *networkClient) GetSubnet(ctx context.Context, id string) (*subnets.Subnet, error) {
	return call(serviceNetwork, "GetSubnet", func() (*subnets.Subnet, error) { return subnets.Get(ctx, n.c, id).Extract() })
}

func (n *networkClient) CreateSubnet(ctx context.Context, opts subnets.CreateOptsBuilder) (*subnets.Subnet, error) {
	return call(serviceNetwork, "CreateSubnet", func() (*subnets.Subnet, error) { return subnets.Create(ctx, n.c, opts).Extract() })
}

func (n *networkClient) DeleteSubnet(ctx context.Context, id string) error {
	return callErr(serviceNetwork, "DeleteSubnet", func() error { return subnets.Delete(ctx, n.c, id).ExtractErr() })
}

func (n *networkClient) ListPorts(ctx context.Context, opts ports.ListOptsBuilder) ([]ports.Port, error) {
	return call(serviceNetwork, "ListPorts", func() ([]ports.Port, error) {
		return allPages(ctx, ports.List(n.c, opts), ports.ExtractPorts)
	})
}

func (n *networkClient) GetPort(ctx context.Context, id string) (*ports.Port, error) {
	return call(serviceNetwork, "GetPort", func() (*ports.Port, error) { return ports.Get(ctx, n.c, id).Extract() })
}

func (n *networkClient) CreatePort(ctx context.Context, opts ports.CreateOptsBuilder) (*ports.Port, error) {
	return call(serviceNetwork, "CreatePort", func() (*ports.Port, error) { return ports.Create(ctx, n.c, opts).Extract() })
}

func (n *networkClient) UpdatePort(ctx context.Context, id string, opts ports.UpdateOptsBuilder) (*ports.Port, error) {
	return call(serviceNetwork, "UpdatePort", func() (*ports.Port, error) { return ports.Update(ctx, n.c, id, opts).Extract() })
}

func (n *networkClient) DeletePort(ctx context.Context, id string) error {
	return callErr(serviceNetwork, "DeletePort", func() error { return ports.Delete(ctx, n.c, id).ExtractErr() })
}

func (n *networkClient) ListTrunks(ctx context.Context, opts trunks.ListOptsBuilder) ([]trunks.Trunk, error) {
	return call(serviceNetwork, "ListTrunks", func() ([]trunks.Trunk, error) {
		return allPages(ctx, trunks.List(n.c, opts), trunks.ExtractTrunks)
	})
}

func (n *networkClient) CreateTrunk(ctx context.Context, opts trunks.CreateOptsBuilder) (*trunks.Trunk, error) {
	return call(serviceNetwork, "CreateTrunk", func() (*trunks.Trunk, error) { return trunks.Create(ctx, n.c, opts).Extract() })
}

func (n *networkClient) DeleteTrunk(ctx context.Context, id string) error {
	return callErr(serviceNetwork, "DeleteTrunk", func() error { return trunks.Delete(ctx, n.c, id).ExtractErr() })
}

func (n *networkClient) ListRouters(ctx context.Context, opts routers.ListOptsBuilder) ([]routers.Router, error) {
	return call(serviceNetwork, "ListRouters", func() ([]routers.Router, error) {
		return allPages(ctx, routers.List(n.c, opts), routers.ExtractRouters)
	})
}

func (n *networkClient) GetRouter(ctx context.Context, id string) (*routers.Router, error) {
	return call(serviceNetwork, "GetRouter", func() (*routers.Router, error) { return routers.Get(ctx, n.c, id).Extract() })
}

func (n *networkClient) CreateRouter(ctx context.Context, opts routers.CreateOptsBuilder) (*routers.Router, error) {
	return call(serviceNetwork, "CreateRouter", func() (*routers.Router, error) { return routers.Create(ctx, n.c, opts).Extract() })
}

func (n *networkClient) UpdateRouter(ctx context.Context, id string, opts routers.UpdateOptsBuilder) (*routers.Router, error) {
	return call(serviceNetwork, "UpdateRouter", func() (*routers.Router, error) { return routers.Update(ctx, n.c, id, opts).Extract() })
}

func (n *networkClient) DeleteRouter(ctx context.Context, id string) error {
	return callErr(serviceNetwork, "DeleteRouter", func() error { return routers.Delete(ctx, n.c, id).ExtractErr() })
}

func (n *networkClient) AddRouterInterface(ctx context.Context, id string, opts routers.AddInterfaceOptsBuilder) (*routers.InterfaceInfo, error) {
	return call(serviceNetwork, "AddRouterInterface", func() (*routers.InterfaceInfo, error) {
		return routers.AddInterface(ctx, n.c, id, opts).Extract()
	})
}

func (n *networkClient) RemoveRouterInterface(ctx context.Context, id string, opts routers.RemoveInterfaceOptsBuilder) (*routers.InterfaceInfo, error) {
	return call(serviceNetwork, "RemoveRouterInterface", func() (*routers.InterfaceInfo, error) {
		return routers.RemoveInterface(ctx, n.c, id, opts).Extract()
	})
}

func (n *networkClient) ListSecGroups(ctx context.Context, opts groups.ListOpts) ([]groups.SecGroup, error) {
	return call(serviceNetwork, "ListSecGroups", func() ([]groups.SecGroup, error) {
		return allPages(ctx, groups.List(n.c, opts), groups.ExtractGroups)
	})
}

func (n *networkClient) GetSecGroup(ctx context.Context, id string) (*groups.SecGroup, error) {
	return call(serviceNetwork, "GetSecGroup", func() (*groups.SecGroup, error) { return groups.Get(ctx, n.c, id).Extract() })
}

func (n *networkClient) CreateSecGroup(ctx context.Context, opts groups.CreateOptsBuilder) (*groups.SecGroup, error) {
	return call(serviceNetwork, "CreateSecGroup", func() (*groups.SecGroup, error) { return groups.Create(ctx, n.c, opts).Extract() })
}

func (n *networkClient) DeleteSecGroup(ctx context.Context, id string) error {
	return callErr(serviceNetwork, "DeleteSecGroup", func() error { return groups.Delete(ctx, n.c, id).ExtractErr() })
}

func (n *networkClient) ListSecGroupRules(ctx context.Context, opts rules.ListOpts) ([]rules.SecGroupRule, error) {
	return call(serviceNetwork, "ListSecGroupRules", func() ([]rules.SecGroupRule, error) {
		return allPages(ctx, rules.List(n.c, opts), rules.ExtractRules)
	})
}

func (n *networkClient) CreateSecGroupRules(ctx context.Context, opts []rules.CreateOpts) ([]rules.SecGroupRule, error) {
	return call(serviceNetwork, "CreateSecGroupRules", func() ([]rules.SecGroupRule, error) { return rules.CreateBulk(ctx, n.c, opts).Extract() })
}

func (n *networkClient) DeleteSecGroupRule(ctx context.Context, id string) error {
	return callErr(serviceNetwork, "DeleteSecGroupRule", func() error { return rules.Delete(ctx, n.c, id).ExtractErr() })
}

func (n *networkClient) ListFloatingIPs(ctx context.Context, opts floatingips.ListOptsBuilder) ([]floatingips.FloatingIP, error) {
	return call(serviceNetwork, "ListFloatingIPs", func() ([]floatingips.FloatingIP, error) {
		return allPages(ctx, floatingips.List(n.c, opts), floatingips.ExtractFloatingIPs)
	})
}

func (n *networkClient) GetFloatingIP(ctx context.Context, id string) (*floatingips.FloatingIP, error) {
	return call(serviceNetwork, "GetFloatingIP", func() (*floatingips.FloatingIP, error) { return floatingips.Get(ctx, n.c, id).Extract() })
}

func (n *networkClient) CreateFloatingIP(ctx context.Context, opts floatingips.CreateOptsBuilder) (*floatingips.FloatingIP, error) {
	return call(serviceNetwork, "CreateFloatingIP", func() (*floatingips.FloatingIP, error) {
		return floatingips.Create(ctx, n.c, opts).Extract()
	})
}

func (n *networkClient) UpdateFloatingIP(ctx context.Context, id string, opts floatingips.UpdateOptsBuilder) (*floatingips.FloatingIP, error) {
	return call(serviceNetwork, "UpdateFloatingIP", func() (*floatingips.FloatingIP, error) {
		return floatingips.Update(ctx, n.c, id, opts).Extract()
	})
}

func (n *networkClient) DeleteFloatingIP(ctx context.Context, id string) error {
	return callErr(serviceNetwork, "DeleteFloatingIP", func() error { return floatingips.Delete(ctx, n.c, id).ExtractErr() })
}

func (n *networkClient) ReplaceAllTags(ctx context.Context, resourceType, id string, opts attributestags.ReplaceAllOptsBuilder) ([]string, error) {
	return call(serviceNetwork, "ReplaceAllTags", func() ([]string, error) {
		return attributestags.ReplaceAll(ctx, n.c, resourceType, id, opts).Extract()
	})
}

func (n *networkClient) ListAvailabilityZones(ctx context.Context) ([]NetworkAvailabilityZone, error) {
	return call(serviceNetwork, "ListAvailabilityZones", func() ([]NetworkAvailabilityZone, error) {
		var body struct {
			AvailabilityZones []NetworkAvailabilityZone `json:"availability_zones"`
		}
		// gophercloud closes the response body itself when it decodes into a JSON response.
		_, err := n.c.Get(ctx, n.c.ServiceURL("availability_zones"), &body, nil) //nolint:bodyclose
		return body.AvailabilityZones, err
	})
}

func (n *networkClient) ListExtensions(ctx context.Context) ([]extensions.Extension, error) {
	return call(serviceNetwork, "ListExtensions", func() ([]extensions.Extension, error) {
		return allPages(ctx, extensions.List(n.c), extensions.ExtractExtensions)
	})
}
