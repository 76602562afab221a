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
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// APIServerFloatingIPDescription marks the floating IP the controller allocates for a cluster's
// API server, so that it is found again after a lost status and deleted with the cluster.
func APIServerFloatingIPDescription(namespace, cluster string) string {
	return apiServerMarkPrefix + namespace + "/" + cluster
}

const (
	// markPrefix begins this provider's marks of floating IPs: a cluster's API server endpoint,
	// or a load balancer's.
	markPrefix = "Cluster API OpenStack provider: "
	// ownershipMarkPrefix begins the descriptions of the other resources this provider makes.
	ownershipMarkPrefix = "Created by the Cluster API OpenStack provider"
	// apiServerMarkPrefix begins this provider's mark of a cluster's API server floating IP.
	apiServerMarkPrefix = markPrefix + "API server of "
	// upstreamMarkPrefix begins upstream CAPO v0.14's description of what it made for a cluster.
	upstreamMarkPrefix = "Created by cluster-api-provider-openstack cluster "
)

// ReconcileAPIServerFloatingIP returns the floating IP address of the API server: the user's
// address when given (allocated if it does not exist yet, never deleted), or one the controller
// allocates on the external network and finds again by its description.
func (s *Service) ReconcileAPIServerFloatingIP(ctx context.Context, description, externalNetworkID string, userAddress *string) (string, error) {
	opts := floatingips.ListOpts{FloatingNetworkID: externalNetworkID, Description: description}
	create := floatingips.CreateOpts{FloatingNetworkID: externalNetworkID, Description: description}
	if userAddress != nil {
		opts = floatingips.ListOpts{FloatingIP: *userAddress}
		create = floatingips.CreateOpts{FloatingNetworkID: externalNetworkID, FloatingIP: *userAddress}
	}
	found, err := s.client.ListFloatingIPs(ctx, opts)
	if err != nil {
		return "", fmt.Errorf("listing floating IPs: %w", err)
	}
	if len(found) > 0 {
		return found[0].FloatingIP, nil
	}
	fip, err := s.client.CreateFloatingIP(ctx, create)
	if err != nil {
		return "", fmt.Errorf("allocating the API server floating IP on network %s: %w", externalNetworkID, err)
	}
	s.report.Changed("CreatedFloatingIP", report.Resource{Kind: "FloatingIP", Name: fip.FloatingIP, ID: fip.ID}, "Allocated floating IP %s for the API server", fip.FloatingIP)
	return fip.FloatingIP, nil
}

// DeleteAPIServerFloatingIP releases the floating IP the controller allocated for the API server.
// The user's apiServerFloatingIP is never found this way: it does not carry the description.
func (s *Service) DeleteAPIServerFloatingIP(ctx context.Context, description string) error {
	found, err := s.client.ListFloatingIPs(ctx, floatingips.ListOpts{Description: description})
	if err != nil {
		return fmt.Errorf("listing floating IPs: %w", err)
	}
	for _, fip := range found {
		if err := s.client.DeleteFloatingIP(ctx, fip.ID); err != nil && !clients.IsNotFound(err) {
			return fmt.Errorf("releasing floating IP %s: %w", fip.FloatingIP, err)
		}
		s.report.Changed("DeletedFloatingIP", report.Resource{Kind: "FloatingIP", Name: fip.FloatingIP, ID: fip.ID}, "Released floating IP %s of the API server", fip.FloatingIP)
	}
	return nil
}

// UpstreamAPIServerFloatingIPDescription is the description upstream CAPO v0.14 gave the floating
// IP it allocated for the API server of a cluster without a load balancer.
func UpstreamAPIServerFloatingIPDescription(namespace, cluster string) string {
	return upstreamMarkPrefix + namespace + "-" + cluster
}

// AdoptAPIServerFloatingIP marks as the cluster's (description) the floating IP at host that
// upstream CAPO allocated for the API server of a cluster without a load balancer, so that it
// is released with the cluster like one this provider allocated. A floating IP at host with any
// other description is left as it is: the user's, or someone else's.
func (s *Service) AdoptAPIServerFloatingIP(ctx context.Context, description, upstreamDescription, host string) error {
	found, err := s.client.ListFloatingIPs(ctx, floatingips.ListOpts{FloatingIP: host})
	if err != nil {
		return fmt.Errorf("listing floating IPs: %w", err)
	}
	for _, fip := range found {
		if fip.Description != upstreamDescription {
			continue
		}
		if _, err := s.client.UpdateFloatingIP(ctx, fip.ID, floatingips.UpdateOpts{Description: &description}); err != nil {
			return fmt.Errorf("marking floating IP %s as the cluster's API server address: %w", fip.FloatingIP, err)
		}
		s.report.Changed("AdoptedFloatingIP", report.Resource{Kind: "FloatingIP", Name: fip.FloatingIP, ID: fip.ID}, "Adopted floating IP %s, which upstream CAPO allocated for the API server", fip.FloatingIP)
	}
	return nil
}

// EndpointFloatingIP is where the API server floating IP of a cluster without a load balancer is.
type EndpointFloatingIP struct {
	// Address is the floating IP; "" when the cluster has none yet.
	Address string
	// FixedIP is the fixed address it is on; "" when on no port.
	FixedIP string
	// Associated: this call put it on the machine's port.
	Associated bool
}

// HoldAPIServerFloatingIP puts the cluster's API server floating IP on a control plane machine's
// port, unless it is on a port already: the first control plane machine holds it, as upstream
// did, and another takes it once that machine's port is gone. The floating IP is the one the
// controller allocated (description), else the one at address (the user's apiServerFloatingIP or
// endpoint host; "" for none) unless it carries another cluster's mark. serverID and fixedIP
// select the port: the server's on its cluster network address.
func (s *Service) HoldAPIServerFloatingIP(ctx context.Context, description, upstreamDescription, address, serverID, fixedIP string) (*EndpointFloatingIP, error) {
	found, err := s.client.ListFloatingIPs(ctx, floatingips.ListOpts{Description: description})
	if err != nil {
		return nil, fmt.Errorf("listing floating IPs: %w", err)
	}
	if len(found) == 0 && address != "" {
		if found, err = s.client.ListFloatingIPs(ctx, floatingips.ListOpts{FloatingIP: address}); err != nil {
			return nil, fmt.Errorf("listing floating IPs: %w", err)
		}
		for _, fip := range found {
			if markedForAnother(fip.Description, description, upstreamDescription) {
				return nil, fmt.Errorf("floating IP %s carries the mark of something else a provider made (description %q): it is not taken", fip.FloatingIP, fip.Description)
			}
		}
	}
	if len(found) == 0 {
		return &EndpointFloatingIP{}, nil
	}
	fip := found[0]
	if fip.PortID != "" {
		return &EndpointFloatingIP{Address: fip.FloatingIP, FixedIP: fip.FixedIP}, nil
	}
	onServer, err := s.client.ListPorts(ctx, ports.ListOpts{DeviceID: serverID, FixedIPs: []ports.FixedIPOpts{{IPAddress: fixedIP}}})
	if err != nil {
		return nil, fmt.Errorf("listing the ports of server %s: %w", serverID, err)
	}
	if len(onServer) == 0 {
		return nil, fmt.Errorf("server %s has no port with address %s", serverID, fixedIP)
	}
	port := onServer[0].ID
	if _, err := s.client.UpdateFloatingIP(ctx, fip.ID, floatingips.UpdateOpts{PortID: &port, FixedIP: fixedIP}); err != nil {
		return nil, fmt.Errorf("associating floating IP %s with port %s (%s): %w", fip.FloatingIP, port, fixedIP, err)
	}
	s.report.Changed("AssociatedFloatingIP", report.Resource{Kind: "FloatingIP", Name: fip.FloatingIP, ID: fip.ID},
		"Associated the API server floating IP %s with control plane port %s (%s)", fip.FloatingIP, port, fixedIP)
	return &EndpointFloatingIP{Address: fip.FloatingIP, FixedIP: fixedIP, Associated: true}, nil
}

// markedForAnother says whether a floating IP's description is a mark this provider or upstream
// CAPO gives what it makes (for any cluster, and any purpose: an API server endpoint, a zone's
// load balancer, ...) other than ours and upstreams, this cluster's API server marks.
func markedForAnother(description, ours, upstreams string) bool {
	if description == ours || description == upstreams {
		return false
	}
	for _, prefix := range []string{markPrefix, ownershipMarkPrefix, upstreamMarkPrefix} {
		if strings.HasPrefix(description, prefix) {
			return true
		}
	}
	return false
}
