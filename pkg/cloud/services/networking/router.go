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

package networking

import (
	"context"
	"fmt"
	"slices"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"k8s.io/apimachinery/pkg/util/validation/field"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

const routerInterfaceOwner = "network:router_interface"

// routerPath is spec.router, for messages.
var routerPath = field.NewPath("spec", "router")

// ReconcileRouter connects a managed cluster network to the external network: it uses the router
// spec.router selects, or creates (or adopts by name) one with its gateway on the external
// network, and gives it an interface on every subnet of the network. It returns nil when there is
// nothing to route: an existing network (spec.network) or no external network.
func (s *Service) ReconcileRouter(ctx context.Context, name string, spec *infrav1.OpenStackClusterSpec,
	network *infrav1.NetworkStatusWithSubnets, externalNetwork *infrav1.NetworkStatus,
) (*infrav1.Router, error) {
	if len(spec.ManagedSubnets) == 0 || externalNetwork == nil || network == nil {
		return nil, nil
	}
	router, err := s.findOrCreateRouter(ctx, name, spec, externalNetwork.ID)
	if err != nil {
		return nil, err
	}
	if router.GatewayInfo.NetworkID == "" {
		gateway, err := s.gatewayInfo(ctx, spec, externalNetwork.ID)
		if err != nil {
			return nil, err
		}
		updated, err := s.client.UpdateRouter(ctx, router.ID, routers.UpdateOpts{GatewayInfo: gateway})
		if err != nil {
			return nil, fmt.Errorf("setting the gateway of router %s: %w", router.ID, err)
		}
		router = updated
	}
	want := spec.Tags
	if spec.Router == nil {
		want = s.markedTags(router.Description, spec.Tags) // the user's router is the user's: never marked
	}
	tags, err := s.ensureTags(ctx, "routers", router.ID, router.Tags, want)
	if err != nil {
		return nil, err
	}

	interfaces, err := s.client.ListPorts(ctx, ports.ListOpts{DeviceID: router.ID, DeviceOwner: routerInterfaceOwner})
	if err != nil {
		return nil, fmt.Errorf("listing the interfaces of router %s: %w", router.ID, err)
	}
	for _, sn := range network.Subnets {
		attached := slices.ContainsFunc(interfaces, func(p ports.Port) bool {
			return slices.ContainsFunc(p.FixedIPs, func(ip ports.IP) bool { return ip.SubnetID == sn.ID })
		})
		if attached {
			continue
		}
		if _, err := s.client.AddRouterInterface(ctx, router.ID, routers.AddInterfaceOpts{SubnetID: sn.ID}); err != nil {
			return nil, fmt.Errorf("adding subnet %s to router %s: %w", sn.ID, router.ID, err)
		}
		s.report.Changed("AddedRouterInterface", report.Resource{Kind: "RouterInterface", Name: router.Name + "/" + sn.Name, ID: sn.ID}, "Added subnet %s to router %s", sn.Name, router.Name)
	}

	status := &infrav1.Router{Name: router.Name, ID: router.ID, Tags: tags}
	for _, ip := range router.GatewayInfo.ExternalFixedIPs {
		status.IPs = append(status.IPs, ip.IPAddress)
	}
	return status, nil
}

// ResolveRouterParam returns the router spec.router selects: by ID, or the one router its filter
// matches.
func (s *Service) ResolveRouterParam(ctx context.Context, param *infrav1.RouterParam) (*routers.Router, error) {
	if param.ID != nil {
		r, err := s.client.GetRouter(ctx, *param.ID)
		if clients.IsNotFound(err) {
			return nil, report.Refuted(infrav1.NetworkNotFoundReason, routerPath.Child("id"), "router %s does not exist", *param.ID)
		}
		if err != nil {
			return nil, fmt.Errorf("getting router %s: %w", *param.ID, err)
		}
		return r, nil
	}
	f := param.Filter
	if f == nil {
		return nil, report.Refuted(infrav1.NetworkNotFoundReason, routerPath, "set id or filter")
	}
	tags, tagsAny, notTags, notTagsAny := tagsOf(f.FilterByNeutronTags)
	found, err := s.client.ListRouters(ctx, routers.ListOpts{Name: f.Name, Description: f.Description, ProjectID: f.ProjectID,
		Tags: tags, TagsAny: tagsAny, NotTags: notTags, NotTagsAny: notTagsAny})
	if err != nil {
		return nil, fmt.Errorf("listing routers: %w", err)
	}
	if len(found) != 1 {
		return nil, report.Refuted(infrav1.NetworkNotFoundReason, routerPath.Child("filter"), "%s matches %d routers, want exactly one",
			report.Filter("name", f.Name, "description", f.Description, "projectID", f.ProjectID, "tags", tags, "tagsAny", tagsAny, "notTags", notTags, "notTagsAny", notTagsAny), len(found))
	}
	return &found[0], nil
}

func (s *Service) findOrCreateRouter(ctx context.Context, name string, spec *infrav1.OpenStackClusterSpec, externalNetworkID string) (*routers.Router, error) {
	if spec.Router != nil {
		return s.ResolveRouterParam(ctx, spec.Router)
	}

	found, err := s.client.ListRouters(ctx, routers.ListOpts{Name: name})
	if err != nil {
		return nil, fmt.Errorf("listing routers named %s: %w", name, err)
	}
	claim := func(r *routers.Router) ownership.Candidate {
		return s.claim(true, r.ID, r.Name, r.Description, r.Tags, r.ProjectID, r.CreatedAt)
	}
	return findOrCreate(s, "Router", name, found, claim, func() (*routers.Router, error) {
		gateway, err := s.gatewayInfo(ctx, spec, externalNetworkID)
		if err != nil {
			return nil, err
		}
		return s.client.CreateRouter(ctx, routers.CreateOpts{Name: name, Description: s.owner.Description(), GatewayInfo: gateway})
	})
}

// gatewayInfo is the router's gateway on the external network, with the addresses of
// spec.externalRouterIPs.
func (s *Service) gatewayInfo(ctx context.Context, spec *infrav1.OpenStackClusterSpec, externalNetworkID string) (*routers.GatewayInfo, error) {
	gateway := &routers.GatewayInfo{NetworkID: externalNetworkID}
	for i := range spec.ExternalRouterIPs {
		param := &spec.ExternalRouterIPs[i]
		sn, err := s.ResolveSubnet(ctx, &param.Subnet, externalNetworkID, field.NewPath("spec", "externalRouterIPs").Index(i).Child("subnet"))
		if err != nil {
			return nil, err
		}
		gateway.ExternalFixedIPs = append(gateway.ExternalFixedIPs, routers.ExternalFixedIP{SubnetID: sn.ID, IPAddress: param.FixedIP})
	}
	return gateway, nil
}

// DeleteManagedRouter detaches the cluster's subnets from its router and, when the controller
// created the router (no spec.router), deletes it. Routers and interfaces are found in the cloud,
// by name and device, so that a lost status does not leave them behind.
func (s *Service) DeleteManagedRouter(ctx context.Context, name string, spec *infrav1.OpenStackClusterSpec) error {
	var candidates []routers.Router
	// On the user's router only the cluster's own subnets are detached, so they are needed then.
	var clusterSubnets []string
	if spec.Router != nil {
		r, err := s.findOrCreateRouter(ctx, name, spec, "")
		if _, isSpec := report.AsSpecError(err); isSpec || clients.IsNotFound(err) {
			return nil // the user's router is gone or no longer matches: nothing of ours is on it
		}
		if err != nil {
			return err
		}
		candidates = []routers.Router{*r}
		if clusterSubnets, err = s.managedSubnetIDs(ctx, name); err != nil {
			return err
		}
	} else {
		found, err := s.client.ListRouters(ctx, routers.ListOpts{Name: name})
		if err != nil {
			return fmt.Errorf("listing routers named %s: %w", name, err)
		}
		for _, r := range found {
			if ownership.Mine(s.claim(true, r.ID, r.Name, r.Description, r.Tags, r.ProjectID, r.CreatedAt)) {
				candidates = append(candidates, r)
			}
		}
	}
	for _, r := range candidates {
		interfaces, err := s.client.ListPorts(ctx, ports.ListOpts{DeviceID: r.ID, DeviceOwner: routerInterfaceOwner})
		if err != nil {
			return fmt.Errorf("listing the interfaces of router %s: %w", r.ID, err)
		}
		for _, p := range interfaces {
			for _, ip := range p.FixedIPs {
				// On the user's router, only the cluster's own subnets are detached.
				if spec.Router != nil && !slices.Contains(clusterSubnets, ip.SubnetID) {
					continue
				}
				_, err := s.client.RemoveRouterInterface(ctx, r.ID, routers.RemoveInterfaceOpts{SubnetID: ip.SubnetID})
				if err != nil && !clients.IsNotFound(err) {
					return fmt.Errorf("removing subnet %s from router %s: %w", ip.SubnetID, r.ID, err)
				}
			}
		}
		if spec.Router != nil {
			continue
		}
		err = s.client.DeleteRouter(ctx, r.ID)
		if err != nil && !clients.IsNotFound(err) {
			return fmt.Errorf("deleting router %s: %w", r.ID, err)
		}
		if err == nil {
			s.report.Changed("DeletedRouter", report.Resource{Kind: "Router", Name: r.Name, ID: r.ID}, "Deleted router %s (%s)", r.Name, r.ID)
		}
	}
	return nil
}

// managedSubnetIDs lists the subnets of the network the controller created for the cluster: a
// network of the name that carries the cluster's mark (or that the takeover rules make the
// cluster's). Another's network of the name, whose name collides, keeps its interfaces.
func (s *Service) managedSubnetIDs(ctx context.Context, name string) ([]string, error) {
	nets, err := s.client.ListNetworks(ctx, networks.ListOpts{Name: name})
	if err != nil {
		return nil, fmt.Errorf("listing networks named %s: %w", name, err)
	}
	var ids []string
	for _, n := range nets {
		if ownership.Mine(s.claim(true, n.ID, n.Name, n.Description, n.Tags, n.ProjectID, n.CreatedAt)) {
			ids = append(ids, n.Subnets...)
		}
	}
	return ids, nil
}
