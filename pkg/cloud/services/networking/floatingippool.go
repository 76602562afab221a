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
	"net/http"
	"slices"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// The floating IPs of an OpenStackFloatingIPPool. The pool marks the addresses it allocates with
// its description (FloatingIPPoolMarks), finds them again by it in the credential's project
// only, and releases only those: the operator's pre-allocated addresses carry no mark and are
// never released. Which address a claim holds is Kubernetes' record (the IPAddress objects), not
// the cloud's: an address the pool allocated that no IPAddress names is free, so a crash between
// the allocation and the IPAddress's creation leaves an address the next claim takes, not a
// second one.

// FloatingIPPoolMarks are the marks of the floating IPs pool namespace/name allocates.
func FloatingIPPoolMarks(namespace, name string) ownership.FloatingIPMarks {
	return ownership.FloatingIPMarks{Ours: ownership.FloatingIPMarkPrefix + "floating IP pool " + namespace + "/" + name}
}

// PoolFloatingIPs lists the floating IPs that carry marks.Ours in the credential's project.
func (s *Service) PoolFloatingIPs(ctx context.Context, marks ownership.FloatingIPMarks) ([]floatingips.FloatingIP, error) {
	found, err := s.floatingIPs(ctx, floatingips.ListOpts{Description: marks.Ours})
	if err != nil {
		return nil, fmt.Errorf("listing floating IPs: %w", err)
	}
	return slices.DeleteFunc(found, func(f floatingips.FloatingIP) bool { return f.Description != marks.Ours }), nil
}

// PreAllocatedFloatingIP is the operator's floating IP at address, for the pool: allocated (with
// no mark) on networkID when it does not exist; one the pool allocated itself (marks.Ours) is
// handed out too. why says, when it cannot be handed out, why: it is
// on a port, or carries another object's mark. A pre-allocated address is never marked nor
// released.
func (s *Service) PreAllocatedFloatingIP(ctx context.Context, marks ownership.FloatingIPMarks, networkID, address string) (fip *floatingips.FloatingIP, why string, err error) {
	found, err := s.floatingIPs(ctx, floatingips.ListOpts{FloatingIP: address})
	if err != nil {
		return nil, "", fmt.Errorf("listing floating IPs: %w", err)
	}
	fip, claim, err := ChooseFloatingIP(found, marks, true)
	if claim == ownership.Foreign || claim == ownership.Unrecorded {
		return nil, err.Error(), nil
	}
	if err != nil {
		return nil, "", err
	}
	if fip == nil {
		fip, err = s.client.CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: networkID, FloatingIP: address})
		if refused(err) {
			// Another project's address, one outside the network's subnets, or one taken
			// meanwhile: this address cannot be handed out, the next may.
			return nil, fmt.Sprintf("Neutron refused to allocate floating IP %s on network %s: %v", address, networkID, err), nil
		}
		if err != nil {
			return nil, "", fmt.Errorf("allocating pre-allocated floating IP %s on network %s: %w", address, networkID, err)
		}
		s.report.Changed("CreatedFloatingIP", report.Resource{Kind: "FloatingIP", Name: fip.FloatingIP, ID: fip.ID}, "Allocated floating IP %s, which the pool lists as pre-allocated", fip.FloatingIP)
		return fip, "", nil
	}
	if fip.PortID != "" {
		return nil, fmt.Sprintf("floating IP %s is on port %s, and no claim of the pool holds it", address, fip.PortID), nil
	}
	return fip, "", nil
}

// AllocatePoolFloatingIP allocates a floating IP on networkID with marks.Ours.
func (s *Service) AllocatePoolFloatingIP(ctx context.Context, marks ownership.FloatingIPMarks, networkID, claim string) (*floatingips.FloatingIP, error) {
	fip, err := s.client.CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: networkID, Description: marks.Ours})
	if err != nil {
		return nil, fmt.Errorf("allocating a floating IP on network %s: %w", networkID, err)
	}
	s.report.Changed("CreatedFloatingIP", report.Resource{Kind: "FloatingIP", Name: fip.FloatingIP, ID: fip.ID}, "Allocated floating IP %s for IPAddressClaim %s", fip.FloatingIP, claim)
	return fip, nil
}

// ReturnPoolFloatingIP takes back the floating IP at address from a claim that is gone. Only an
// address that is the pool's is acted on: one that carries marks.Ours is released when release
// is set, else taken off its port; an unmarked one the operator listed as pre-allocated
// (preAllocated) is taken off its port and kept. Any other address (another object's, or one
// nobody listed) is left as it is, whatever IPAddress named it: it says so in what it returns
// ("" when it acted, or had nothing to do).
func (s *Service) ReturnPoolFloatingIP(ctx context.Context, marks ownership.FloatingIPMarks, address string, release bool, preAllocated []string) (string, error) {
	found, err := s.floatingIPs(ctx, floatingips.ListOpts{FloatingIP: address})
	if err != nil {
		return "", fmt.Errorf("listing floating IPs: %w", err)
	}
	for _, fip := range found {
		if fip.FloatingIP != address {
			continue
		}
		res := report.Resource{Kind: "FloatingIP", Name: fip.FloatingIP, ID: fip.ID}
		ours := fip.Description == marks.Ours
		if !ours && (fip.Description != "" || !slices.Contains(preAllocated, address)) {
			return fmt.Sprintf("floating IP %s is not the pool's (neither its mark nor a pre-allocated address without a mark): left as it is", address), nil
		}
		if release && ours {
			if err := s.client.DeleteFloatingIP(ctx, fip.ID); err != nil && !clients.IsNotFound(err) {
				return "", fmt.Errorf("releasing floating IP %s: %w", address, err)
			}
			s.report.Changed("DeletedFloatingIP", res, "Released floating IP %s, whose claim is gone", address)
			continue
		}
		if fip.PortID == "" {
			continue
		}
		if _, err := s.client.UpdateFloatingIP(ctx, fip.ID, floatingips.UpdateOpts{PortID: new(string)}); err != nil && !clients.IsNotFound(err) {
			return "", fmt.Errorf("taking floating IP %s off port %s: %w", address, fip.PortID, err)
		}
		s.report.Changed("DisassociatedFloatingIP", res, "Took floating IP %s off port %s: its claim is gone, the pool keeps it", address, fip.PortID)
	}
	return "", nil
}

// refused says whether Neutron refused a request as a client's mistake (400, 403, 404 or 409):
// asking again the same way fails the same way.
func refused(err error) bool {
	for _, code := range []int{http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusConflict} {
		if gophercloud.ResponseCodeIs(err, code) {
			return true
		}
	}
	return false
}

// AssociateClaimedFloatingIP puts the floating IP at address, which an IP address pool gave the
// machine, on the port of server serverID that holds fixedIP. The address must be a floating IP
// of the credential's project, unmarked or carrying marks.Ours (the pool's mark), and on no other
// port: anything else is an error that names it, and nothing changes.
func (s *Service) AssociateClaimedFloatingIP(ctx context.Context, marks ownership.FloatingIPMarks, address, serverID, fixedIP string) (*floatingips.FloatingIP, error) {
	found, err := s.floatingIPs(ctx, floatingips.ListOpts{FloatingIP: address})
	if err != nil {
		return nil, fmt.Errorf("listing floating IPs: %w", err)
	}
	found = slices.DeleteFunc(found, func(f floatingips.FloatingIP) bool { return f.FloatingIP != address })
	fip, _, err := ChooseFloatingIP(found, marks, true)
	if err != nil {
		return nil, err
	}
	if fip == nil {
		return nil, fmt.Errorf("address %s from the pool is not a floating IP of the project", address)
	}
	port, err := s.serverPort(ctx, serverID, fixedIP)
	if err != nil {
		return nil, err
	}
	switch fip.PortID {
	case port:
		return fip, nil
	case "":
	default:
		return nil, fmt.Errorf("floating IP %s from the pool is on port %s, not on the port of server %s: it is not moved", address, fip.PortID, serverID)
	}
	updated, err := s.client.UpdateFloatingIP(ctx, fip.ID, floatingips.UpdateOpts{PortID: &port, FixedIP: fixedIP})
	if err != nil {
		return nil, fmt.Errorf("associating floating IP %s with port %s (%s): %w", address, port, fixedIP, err)
	}
	s.report.Changed("AssociatedFloatingIP", report.Resource{Kind: "FloatingIP", Name: address, ID: fip.ID},
		"Associated floating IP %s from the pool with port %s (%s) of server %s", address, port, fixedIP, serverID)
	return updated, nil
}
