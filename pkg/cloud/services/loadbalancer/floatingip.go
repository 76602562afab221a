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

package loadbalancer

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

// reconcileFloatingIP makes sure the load balancer's VIP has its floating IP: the user's address,
// or one the controller allocated and marked with its description. In the steady state this is
// one list call. It reports whether it changed something or failed.
func (s *Service) reconcileFloatingIP(ctx context.Context, d *zones.Desired, f *found, status *infrav1.LoadBalancer) (zones.Outcome, bool) {
	if a := s.memory.allocationOf(f.id, true); a != nil {
		if !a.done {
			return waiting(fmt.Sprintf("allocating a floating IP for load balancer %s", f.name)), true
		}
		if a.fip != nil {
			s.createdFloatingIP(d, f, a.fip)
		}
		// A failed allocation is tried again below, where a failure is reported.
	}
	return s.floatingIP(ctx, d, f, status, false)
}

// floatingIPs lists the floating IPs opts asks for, of the credential's project only (when
// Keystone named it), as networking's lookups do: another project's address is never the
// cluster's, whatever its description says.
func (s *Service) floatingIPs(ctx context.Context, opts floatingips.ListOpts) ([]floatingips.FloatingIP, error) {
	opts.ProjectID = s.owner.ProjectID
	return s.net.ListFloatingIPs(ctx, opts)
}

// floatingIP is reconcileFloatingIP without the background allocation's result; with
// background, a floating IP to allocate is allocated without waiting for Neutron (see
// earlyFloatingIP).
func (s *Service) floatingIP(ctx context.Context, d *zones.Desired, f *found, status *infrav1.LoadBalancer, background bool) (zones.Outcome, bool) {
	want := d.FloatingIP
	opts := floatingips.ListOpts{Description: want.Description, FloatingNetworkID: want.ExternalNetworkID}
	if want.Address != "" {
		opts = floatingips.ListOpts{FloatingIP: want.Address}
	}
	fips, err := s.floatingIPs(ctx, opts)
	if err != nil {
		return failed(fmt.Errorf("listing floating IPs: %w", err)), true
	}
	// Listed by the mark of this load balancer's floating IP, or by the user's address: one rule
	// (ownership.ChooseFloatingIP) says which may be used.
	marks := ownership.FloatingIPMarks{Ours: want.Description}.Upstream(s.owner.Takeover, want.TakenOver...)
	free, _, err := networking.ChooseFloatingIP(fips, marks, want.Address != "")
	if err != nil {
		return failed(err), true
	}
	if free != nil && free.PortID != "" && free.FixedIP == status.InternalIP && status.InternalIP != "" {
		status.IP = free.FloatingIP
		return zones.Outcome{}, false
	}
	if free != nil && free.PortID != "" {
		// Associated with something else: taking it would cut that off. Checked at create, and
		// here again for a load balancer adopted, or whose status was lost.
		return failed(inUse(d, free)), true
	}

	vipPort, err := s.vipPort(ctx, f)
	if err != nil {
		return failed(err), true
	}
	if free != nil {
		if _, err := s.net.UpdateFloatingIP(ctx, free.ID, floatingips.UpdateOpts{PortID: &vipPort}); err != nil {
			return s.floatingIPFailed(d, err, "associating floating IP "+free.FloatingIP)
		}
		s.report.Changed("AssociatedFloatingIP", report.Resource{Kind: "FloatingIP", Name: free.FloatingIP, ID: free.ID, Zone: d.AvailabilityZone}, "Associated floating IP %s with load balancer %s", free.FloatingIP, f.name)
		status.IP = free.FloatingIP
		return zones.Outcome{}, false
	}

	if want.Address == "" {
		// A floating IP this controller did not mark may already be on the VIP, the load
		// balancer's own port: one from before a migration, or from another tool. The rule
		// chooses as for an address the user named (another object's mark is refused), and the
		// one chosen is adopted and marked: it serves this load balancer already.
		onPort, err := s.floatingIPs(ctx, floatingips.ListOpts{PortID: vipPort})
		if err != nil {
			return failed(fmt.Errorf("listing floating IPs: %w", err)), true
		}
		onVIP := marks
		for _, fip := range onPort {
			if _, ours := zones.ZoneOfFloatingIP(fip.Description, s.owner.Namespace, s.cluster); ours {
				onVIP.TakenOver = append(slices.Clone(onVIP.TakenOver), fip.Description) // another of the cluster's load balancers' (a migration)
			}
		}
		fip, _, err := networking.ChooseFloatingIP(onPort, onVIP, true)
		if err != nil {
			return failed(err), true
		}
		if fip != nil {
			description := want.Description
			if _, err := s.net.UpdateFloatingIP(ctx, fip.ID, floatingips.UpdateOpts{Description: &description}); err != nil {
				return failed(fmt.Errorf("marking floating IP %s as the load balancer's: %w", fip.FloatingIP, err)), true
			}
			s.report.Changed("AdoptedFloatingIP", report.Resource{Kind: "FloatingIP", Name: fip.FloatingIP, ID: fip.ID, Zone: d.AvailabilityZone}, "Adopted floating IP %s already on load balancer %s", fip.FloatingIP, f.name)
			status.IP = fip.FloatingIP
			return zones.Outcome{}, false
		}
	}

	create := floatingips.CreateOpts{FloatingNetworkID: want.ExternalNetworkID, PortID: vipPort, FloatingIP: want.Address}
	if want.Address == "" {
		create.Description = want.Description
	}
	if background {
		s.allocate(ctx, f.id, create)
		return zones.Outcome{}, false
	}
	fip, err := s.net.CreateFloatingIP(ctx, create)
	if err != nil {
		return s.floatingIPFailed(d, err, "allocating a floating IP")
	}
	s.createdFloatingIP(d, f, fip)
	status.IP = fip.FloatingIP
	return zones.Outcome{}, false
}

func (s *Service) createdFloatingIP(d *zones.Desired, f *found, fip *floatingips.FloatingIP) {
	s.report.Changed("CreatedFloatingIP", report.Resource{Kind: "FloatingIP", Name: fip.FloatingIP, ID: fip.ID, Zone: d.AvailabilityZone}, "Allocated floating IP %s for load balancer %s", fip.FloatingIP, f.name)
}

// allocationTimeout bounds a floating IP allocation made in the background.
const allocationTimeout = 2 * time.Minute

// allocate creates a floating IP for load balancer id in the background: Neutron takes seconds
// to allocate one on a port, and meanwhile the reconcile goes on. Only Neutron is called there;
// the reconcile that takes the result reports it. The memory holds one allocation per load
// balancer at a time, so that none is made twice, and a removal waits for those of its load
// balancers (Delete); after a restart, the address is found by its description.
func (s *Service) allocate(ctx context.Context, id string, create floatingips.CreateOpts) {
	if !s.memory.startAllocation(id, create.Description) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), allocationTimeout)
	s.memory.background(func() {
		var fip *floatingips.FloatingIP
		// Finished even when the call panics: a failed allocation is tried again, and
		// reported, once the load balancer is ACTIVE.
		defer func() { s.memory.finishAllocation(id, fip) }()
		defer cancel()
		if got, err := s.net.CreateFloatingIP(ctx, create); err == nil {
			fip = got
		}
	})
}

func (s *Service) floatingIPFailed(d *zones.Desired, err error, what string) (zones.Outcome, bool) {
	if clients.IsNotFound(err) {
		// Neutron answers 404 when the external network cannot reach the VIP's subnet.
		return failed(&report.SpecError{Reason: infrav1.LoadBalancerConfigurationErrorReason, Message: fmt.Sprintf("%s for %s: %v; the load balancer network needs a router to the external network, "+
			"or set spec.disableAPIServerFloatingIP", what, zones.ZoneWords(d.AvailabilityZone), err)}), true
	}
	return failed(fmt.Errorf("%s for %s: %w", what, zones.ZoneWords(d.AvailabilityZone), err)), true
}

// vipPort returns the ID of the load balancer's VIP port, reading the load balancer when only its
// status tree was read.
func (s *Service) vipPort(ctx context.Context, f *found) (string, error) {
	if f.lb == nil {
		lb, err := s.lb.GetLoadBalancer(ctx, f.id)
		if err != nil {
			return "", fmt.Errorf("reading load balancer %s: %w", f.name, err)
		}
		f.lb = lb
	}
	return f.lb.VipPortID, nil
}

// checkUserFloatingIP refuses, before a load balancer is created, a floating IP address the user
// gave it that is associated with a port already: it serves something else (another cluster,
// another load balancer), and taking it would cut that off. An address not allocated yet is
// allocated later, with that address.
func (s *Service) checkUserFloatingIP(ctx context.Context, d *zones.Desired) error {
	if d.FloatingIP == nil || d.FloatingIP.Address == "" {
		return nil
	}
	fips, err := s.floatingIPs(ctx, floatingips.ListOpts{FloatingIP: d.FloatingIP.Address})
	if err != nil {
		return fmt.Errorf("listing floating IP %s: %w", d.FloatingIP.Address, err)
	}
	for _, fip := range fips {
		if fip.PortID != "" {
			return inUse(d, &fip)
		}
	}
	return nil
}

// inUse is the error for a floating IP d would take that is associated with another port: the
// user's address (naming the field that gives it), or one with the controller's description.
func inUse(d *zones.Desired, fip *floatingips.FloatingIP) error {
	const what = "floating IP %s is associated with port %s (fixed IP %s), not with a load balancer of this cluster; disassociate it, or give %s another address"
	args := []any{fip.FloatingIP, fip.PortID, fip.FixedIP, zones.ZoneWords(d.AvailabilityZone)}
	if d.FloatingIP.Field != nil {
		return report.Refuted(infrav1.LoadBalancerConfigurationErrorReason, d.FloatingIP.Field, what, args...)
	}
	return &report.SpecError{Reason: infrav1.LoadBalancerConfigurationErrorReason, Message: fmt.Sprintf(what, args...)}
}
