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

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// APIServerFloatingIPMarks are the marks of the floating IP of the API server of a cluster
// without a load balancer: the description the controller gives the address it allocates, so that
// it is found again after a lost status and deleted with the cluster, and the one upstream CAPO
// v0.14 gave it, taken over when the operator recorded the cluster's takeover.
func APIServerFloatingIPMarks(namespace, cluster string, takeover bool) ownership.FloatingIPMarks {
	return ownership.FloatingIPMarks{Ours: ownership.FloatingIPMarkPrefix + "API server of " + namespace + "/" + cluster}.
		Upstream(takeover, ownership.UpstreamDescription(namespace, cluster))
}

// floatingIPs lists the floating IPs opts asks for, of the credential's project only (when
// Keystone named it): another project's address is never this owner's, whatever its description
// says, and a credential that sees several projects' addresses (an administrator's) must not
// find one there.
func (s *Service) floatingIPs(ctx context.Context, opts floatingips.ListOpts) ([]floatingips.FloatingIP, error) {
	opts.ProjectID = s.owner.ProjectID
	return s.client.ListFloatingIPs(ctx, opts)
}

// ChooseFloatingIP is ownership.ChooseFloatingIP over the floating IPs Neutron listed: every
// path that finds a floating IP chooses through it.
func ChooseFloatingIP(found []floatingips.FloatingIP, marks ownership.FloatingIPMarks, userNamed bool) (*floatingips.FloatingIP, ownership.Claim, error) {
	read := make([]ownership.FloatingIP, len(found))
	for i, fip := range found {
		read[i] = ownership.FloatingIP{ID: fip.ID, Address: fip.FloatingIP, Description: fip.Description}
	}
	i, claim, err := ownership.ChooseFloatingIP(read, marks, userNamed)
	if i < 0 || err != nil {
		return nil, claim, err
	}
	return &found[i], claim, nil
}

// ReconcileAPIServerFloatingIP returns the floating IP address of the API server: the user's
// address when given (allocated if it does not exist yet, never deleted), or one the controller
// allocates on the external network and finds again by its mark. An address another object's
// mark claims is refused.
func (s *Service) ReconcileAPIServerFloatingIP(ctx context.Context, marks ownership.FloatingIPMarks, externalNetworkID string, userAddress *string) (string, error) {
	fip, err := s.floatingIPFor(ctx, marks, externalNetworkID, userAddress, "the API server")
	if err != nil {
		return "", err
	}
	return fip.FloatingIP, nil
}

// floatingIPFor is the floating IP for what: the user's userAddress (allocated at that address
// when it does not exist, without a mark), else the one that carries marks.Ours (or one of
// marks.TakenOver), else one allocated on the external network with marks.Ours. An address
// another object's mark claims is refused (ChooseFloatingIP).
func (s *Service) floatingIPFor(ctx context.Context, marks ownership.FloatingIPMarks, externalNetworkID string, userAddress *string, what string) (*floatingips.FloatingIP, error) {
	opts := floatingips.ListOpts{FloatingNetworkID: externalNetworkID, Description: marks.Ours}
	create := floatingips.CreateOpts{FloatingNetworkID: externalNetworkID, Description: marks.Ours}
	if userAddress != nil {
		opts = floatingips.ListOpts{FloatingIP: *userAddress}
		create = floatingips.CreateOpts{FloatingNetworkID: externalNetworkID, FloatingIP: *userAddress}
	}
	found, err := s.floatingIPs(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("listing floating IPs: %w", err)
	}
	fip, _, err := ChooseFloatingIP(found, marks, userAddress != nil)
	if err != nil || fip != nil {
		return fip, err
	}
	if fip, err = s.client.CreateFloatingIP(ctx, create); err != nil {
		return nil, fmt.Errorf("allocating a floating IP for %s on network %s: %w", what, externalNetworkID, err)
	}
	s.report.Changed("CreatedFloatingIP", report.Resource{Kind: "FloatingIP", Name: fip.FloatingIP, ID: fip.ID}, "Allocated floating IP %s for %s", fip.FloatingIP, what)
	return fip, nil
}

// DeleteAPIServerFloatingIP releases the floating IP the controller allocated for the API server
// (marks.Ours). The user's apiServerFloatingIP is never found this way: it does not carry the mark.
func (s *Service) DeleteAPIServerFloatingIP(ctx context.Context, marks ownership.FloatingIPMarks) error {
	return s.ReleaseFloatingIPs(ctx, marks, "the API server")
}

// ReleaseFloatingIPs releases the floating IPs that carry marks.Ours, allocated (or taken over)
// for what. An address the user gave is never found this way: it does not carry the mark.
func (s *Service) ReleaseFloatingIPs(ctx context.Context, marks ownership.FloatingIPMarks, what string) error {
	found, err := s.floatingIPs(ctx, floatingips.ListOpts{Description: marks.Ours})
	if err != nil {
		return fmt.Errorf("listing floating IPs: %w", err)
	}
	for _, fip := range found {
		if fip.Description != marks.Ours {
			continue
		}
		if err := s.client.DeleteFloatingIP(ctx, fip.ID); err != nil && !clients.IsNotFound(err) {
			return fmt.Errorf("releasing floating IP %s: %w", fip.FloatingIP, err)
		}
		s.report.Changed("DeletedFloatingIP", report.Resource{Kind: "FloatingIP", Name: fip.FloatingIP, ID: fip.ID}, "Released floating IP %s of %s", fip.FloatingIP, what)
	}
	return nil
}

// AdoptAPIServerFloatingIP marks as the cluster's (marks.Ours) the floating IP at host that
// upstream CAPO allocated for the API server of a cluster without a load balancer (marks.TakenOver),
// so that it is released with the cluster like one this provider allocated. An unmarked floating
// IP at host is the user's, and is left as it is; one another object's mark claims is refused.
func (s *Service) AdoptAPIServerFloatingIP(ctx context.Context, marks ownership.FloatingIPMarks, host string) error {
	found, err := s.floatingIPs(ctx, floatingips.ListOpts{FloatingIP: host})
	if err != nil {
		return fmt.Errorf("listing floating IPs: %w", err)
	}
	fip, claim, err := ChooseFloatingIP(found, marks, true)
	if err != nil || claim != ownership.Upstream {
		return err
	}
	description := marks.Ours
	if _, err := s.client.UpdateFloatingIP(ctx, fip.ID, floatingips.UpdateOpts{Description: &description}); err != nil {
		return fmt.Errorf("marking floating IP %s as the cluster's API server address: %w", fip.FloatingIP, err)
	}
	s.report.Changed("AdoptedFloatingIP", report.Resource{Kind: "FloatingIP", Name: fip.FloatingIP, ID: fip.ID}, "Adopted floating IP %s, which upstream CAPO allocated for the API server", fip.FloatingIP)
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
// controller allocated (marks.Ours), else the one at address (the user's apiServerFloatingIP or
// endpoint host; "" for none), as ownership.ChooseFloatingIP chooses: never one another object's
// mark claims. serverID and fixedIP select the port: the server's on its cluster network address.
func (s *Service) HoldAPIServerFloatingIP(ctx context.Context, marks ownership.FloatingIPMarks, address, serverID, fixedIP string) (*EndpointFloatingIP, error) {
	found, err := s.floatingIPs(ctx, floatingips.ListOpts{Description: marks.Ours})
	if err != nil {
		return nil, fmt.Errorf("listing floating IPs: %w", err)
	}
	fip, _, err := ChooseFloatingIP(found, marks, false)
	if err != nil {
		return nil, err
	}
	if fip == nil && address != "" {
		if found, err = s.floatingIPs(ctx, floatingips.ListOpts{FloatingIP: address}); err != nil {
			return nil, fmt.Errorf("listing floating IPs: %w", err)
		}
		if fip, _, err = ChooseFloatingIP(found, marks, true); err != nil {
			return nil, err
		}
	}
	if fip == nil {
		return &EndpointFloatingIP{}, nil
	}
	if fip.PortID != "" {
		return &EndpointFloatingIP{Address: fip.FloatingIP, FixedIP: fip.FixedIP}, nil
	}
	port, err := s.serverPort(ctx, serverID, fixedIP)
	if err != nil {
		return nil, err
	}
	if _, err := s.client.UpdateFloatingIP(ctx, fip.ID, floatingips.UpdateOpts{PortID: &port, FixedIP: fixedIP}); err != nil {
		return nil, fmt.Errorf("associating floating IP %s with port %s (%s): %w", fip.FloatingIP, port, fixedIP, err)
	}
	s.report.Changed("AssociatedFloatingIP", report.Resource{Kind: "FloatingIP", Name: fip.FloatingIP, ID: fip.ID},
		"Associated the API server floating IP %s with control plane port %s (%s)", fip.FloatingIP, port, fixedIP)
	return &EndpointFloatingIP{Address: fip.FloatingIP, FixedIP: fixedIP, Associated: true}, nil
}

// BastionFloatingIPMarks are the marks of the floating IP the controller allocates for the
// bastion of a cluster, and of the one upstream CAPO v0.14 allocated for it (upstream describes
// the bastion's address as it describes the API server's; it is taken over only where it is, on
// the bastion's port, and when the operator recorded the cluster's takeover).
func BastionFloatingIPMarks(namespace, cluster string, takeover bool) ownership.FloatingIPMarks {
	return ownership.FloatingIPMarks{Ours: ownership.FloatingIPMarkPrefix + "bastion of " + namespace + "/" + cluster}.
		Upstream(takeover, ownership.UpstreamDescription(namespace, cluster))
}

// ReconcileServerFloatingIP puts a floating IP on the port of server serverID that holds
// fixedIP, and returns its address. A floating IP already on that port stays: one of
// marks.TakenOver is marked marks.Ours (so that it is released with the server), an unmarked one
// is the user's and stays as it is, and one another object's mark claims is an error. Otherwise
// the floating IP is the user's userAddress (allocated at that address when it does not exist,
// never marked nor released), else the one the controller allocated (marks.Ours), else a new one
// on the external network. A floating IP already on another port is never moved.
func (s *Service) ReconcileServerFloatingIP(ctx context.Context, marks ownership.FloatingIPMarks, externalNetworkID string, userAddress *string, serverID, fixedIP string) (string, error) {
	port, err := s.serverPort(ctx, serverID, fixedIP)
	if err != nil {
		return "", err
	}
	there, err := s.floatingIPs(ctx, floatingips.ListOpts{PortID: port})
	if err != nil {
		return "", fmt.Errorf("listing the floating IPs of port %s: %w", port, err)
	}
	if len(there) > 0 {
		fip, claim, err := ChooseFloatingIP(there[:1], marks, true)
		if err != nil {
			return "", err
		}
		if claim == ownership.Upstream {
			description := marks.Ours
			if _, err := s.client.UpdateFloatingIP(ctx, fip.ID, floatingips.UpdateOpts{Description: &description}); err != nil {
				return "", fmt.Errorf("marking floating IP %s as the cluster's: %w", fip.FloatingIP, err)
			}
			s.report.Changed("AdoptedFloatingIP", report.Resource{Kind: "FloatingIP", Name: fip.FloatingIP, ID: fip.ID}, "Adopted floating IP %s, which upstream CAPO allocated for server %s", fip.FloatingIP, serverID)
		}
		return fip.FloatingIP, nil
	}
	fip, err := s.floatingIPFor(ctx, marks, externalNetworkID, userAddress, "server "+serverID)
	if err != nil {
		return "", err
	}
	if fip.PortID != "" && fip.PortID != port {
		return "", fmt.Errorf("floating IP %s is on port %s, not on the port of server %s: it is not moved", fip.FloatingIP, fip.PortID, serverID)
	}
	if _, err := s.client.UpdateFloatingIP(ctx, fip.ID, floatingips.UpdateOpts{PortID: &port, FixedIP: fixedIP}); err != nil {
		return "", fmt.Errorf("associating floating IP %s with port %s (%s): %w", fip.FloatingIP, port, fixedIP, err)
	}
	s.report.Changed("AssociatedFloatingIP", report.Resource{Kind: "FloatingIP", Name: fip.FloatingIP, ID: fip.ID},
		"Associated floating IP %s with port %s (%s) of server %s", fip.FloatingIP, port, fixedIP, serverID)
	return fip.FloatingIP, nil
}

// serverPort is the ID of the port of server serverID that holds fixedIP.
func (s *Service) serverPort(ctx context.Context, serverID, fixedIP string) (string, error) {
	onServer, err := s.client.ListPorts(ctx, ports.ListOpts{DeviceID: serverID, FixedIPs: []ports.FixedIPOpts{{IPAddress: fixedIP}}})
	if err != nil {
		return "", fmt.Errorf("listing the ports of server %s: %w", serverID, err)
	}
	if len(onServer) == 0 {
		return "", fmt.Errorf("server %s has no port with address %s", serverID, fixedIP)
	}
	return onServer[0].ID, nil
}
