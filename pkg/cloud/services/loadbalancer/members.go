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
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

// Member is a control plane machine's registration with the pools of API server load balancers:
// one member per pool (the API server port and each additional port), on the same port.
type Member struct {
	// Name identifies the machine; members of that name are the machine's.
	Name    string
	Address string
	// SubnetID is the subnet of Address, given to Octavia when the load balancer's network is
	// not the machine's.
	SubnetID string
	// Disabled means the machine's members must take no new connection (admin_state_up false):
	// its zone is in maintenance (ZoneDrained).
	Disabled bool
}

// ReconcileMachine makes control plane machine name, at address in availability zone zone
// (zones.MachineZone), a member of the load balancers the zone rules give it
// (zones.MembershipFor) and of no other. Membership of the load balancers that are not targets
// is removed even when a target is missing: cross-AZ membership turned off must not wait for
// anything.
func (s *Service) ReconcileMachine(ctx context.Context, in *zones.Input, name, address, zone string) (zones.Membership, error) {
	m := zones.MembershipFor(in, zone, address)
	ids := make([]string, len(m.Targets))
	for i, t := range m.Targets {
		ids[i] = t.ID
	}
	member := Member{Name: name, Address: address, SubnetID: m.SubnetID, Disabled: m.Disabled}
	var err error
	m.Done, err = s.ReconcileMembership(ctx, in.Recorded.All(), ids, zones.Ports(in), member)
	return m, err
}

// RemoveMachine takes control plane machine name out of every load balancer of the cluster, per
// zone and single; done reports that no member of it is left. Members are the machine's by
// name; the address only matters for members to keep.
func (s *Service) RemoveMachine(ctx context.Context, in *zones.Input, name string) (done bool, err error) {
	all := in.Recorded.All()
	if len(all) == 0 {
		return true, nil
	}
	return s.ReconcileMembership(ctx, all, nil, zones.Ports(in), Member{Name: name})
}

// ReconcileMembership makes m a member of every pool of each load balancer whose ID is in
// targets, and of no pool of the other load balancers in all. It reads each load balancer's
// status tree once and makes at most one change per load balancer, since Octavia accepts one at
// a time; done reports that nothing was left to change. A load balancer Octavia is busy with
// (PENDING_*, or a 409) is left for the next call; one that no longer exists is skipped.
func (s *Service) ReconcileMembership(ctx context.Context, all []infrav1.LoadBalancer, targets []string, ports []int, m Member) (done bool, err error) {
	done = true
	for i := range all {
		lb := &all[i]
		if lb.ID == "" {
			continue
		}
		settled, err := s.reconcileMembershipOf(ctx, lb, slices.Contains(targets, lb.ID), ports, m)
		if err != nil {
			return false, err
		}
		done = done && settled
	}
	return done, nil
}

func (s *Service) reconcileMembershipOf(ctx context.Context, lb *infrav1.LoadBalancer, member bool, ports []int, m Member) (bool, error) {
	tree, err := s.lb.GetLoadBalancerStatuses(ctx, lb.ID)
	switch {
	case clients.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("reading the status of load balancer %s: %w", lb.Name, err)
	case tree.Loadbalancer == nil:
		return true, nil
	}
	if strings.HasPrefix(tree.Loadbalancer.ProvisioningStatus, "PENDING_") {
		return false, nil
	}
	// The status names the load balancer: a hint. Before a member is added or removed, its
	// mark must say it is the cluster's (read once per reconcile, and only when something
	// changes).
	verify := func() (bool, error) {
		mine, err := s.verified(ctx, lb.ID)
		if err == nil && !mine {
			err = &notMarked{fmt.Sprintf("load balancer %s (%s) does not carry the mark of %s: its members are left alone", lb.Name, lb.ID, s.owner)}
		}
		return mine, err
	}
	// Pools are found by the names the load balancer controller gives them, from the load
	// balancer's current name: a pool still under a former name (a migration under way) is left
	// alone, so that a rename never costs a member.
	name := tree.Loadbalancer.Name
	for _, port := range ports {
		p := poolNamed(tree.Loadbalancer, zones.ChildName(name, port))
		if p == nil {
			if member {
				// This port's pool is not made, or not renamed, yet.
				return false, nil
			}
			continue
		}
		for _, mb := range p.Members {
			current := mb.Address == m.Address && mb.ProtocolPort == port
			// Upstream CAPO v0.14 names a member "<pool>-<machine>".
			ours := mb.Name == m.Name || mb.Name == p.Name+"-"+m.Name || current
			keep := member && current
			if ours && !keep {
				// Not a target any more, or an old address of the machine.
				if mine, err := verify(); !mine {
					if !member && notTheClusters(err) {
						// A load balancer the status names that is not the cluster's (another's,
						// or upstream's whose takeover was not recorded) holds nothing the
						// machine may take out: its members stay, and the machine may go.
						return true, nil
					}
					return false, err
				}
				return s.deleteMember(ctx, lb, name, p, &mb)
			}
		}
	}
	if !member {
		return true, nil
	}
	for _, port := range ports {
		p := poolNamed(tree.Loadbalancer, zones.ChildName(name, port))
		if i := slices.IndexFunc(p.Members, func(mb pools.Member) bool { return mb.Address == m.Address && mb.ProtocolPort == port }); i >= 0 {
			if settled, err := s.reconcileAdminState(ctx, lb, name, p, &p.Members[i], m, verify); !settled {
				return false, err
			}
			continue
		}
		if mine, err := verify(); !mine {
			return false, err
		}
		_, err := s.lb.CreateMember(ctx, p.ID, pools.CreateMemberOpts{Name: m.Name, Address: m.Address, ProtocolPort: port, SubnetID: m.SubnetID, AdminStateUp: disabledOnly(m.Disabled)})
		switch {
		case clients.IsConflict(err):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("adding member %s (%s) to pool %s: %w", m.Name, m.Address, p.Name, err)
		}
		s.report.Changed("CreatedMember", report.Resource{Kind: "Member", Name: p.Name + "/" + m.Name, Zone: lb.AvailabilityZone}, "Added %s (%s) to pool %s of load balancer %s", m.Name, m.Address, p.Name, name)
		return false, nil
	}
	return true, nil
}

// reconcileAdminState makes member mb of pool p take new connections, or not (m.Disabled). The
// status tree does not say whether a member is enabled: the pool's members are listed when the
// machine's zone is in maintenance, or when the member is OFFLINE (Octavia's word for a member
// that is administratively disabled, or not reported on yet), so that a member in any other
// state costs no request. settled is false after a change (Octavia applies it) or while the
// load balancer is busy.
func (s *Service) reconcileAdminState(ctx context.Context, lb *infrav1.LoadBalancer, lbName string, p *pools.Pool, mb *pools.Member, m Member, verify func() (bool, error)) (settled bool, err error) {
	if !m.Disabled && mb.OperatingStatus != "OFFLINE" {
		return true, nil
	}
	members, err := s.lb.ListMembers(ctx, p.ID, pools.ListMembersOpts{Address: mb.Address, ProtocolPort: mb.ProtocolPort})
	if err != nil {
		return false, fmt.Errorf("listing the members of pool %s: %w", p.Name, err)
	}
	i := slices.IndexFunc(members, func(x pools.Member) bool { return x.ID == mb.ID })
	if i < 0 || members[i].AdminStateUp == !m.Disabled {
		return true, nil
	}
	if mine, err := verify(); !mine {
		return false, err
	}
	err = s.lb.UpdateMember(ctx, p.ID, mb.ID, pools.UpdateMemberOpts{AdminStateUp: ptr.To(!m.Disabled)})
	switch {
	case clients.IsConflict(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("updating member %s (%s) of pool %s: %w", mb.Name, mb.Address, p.Name, err)
	}
	res := report.Resource{Kind: "Member", Name: p.Name + "/" + mb.Name, ID: mb.ID, Zone: lb.AvailabilityZone}
	if m.Disabled {
		s.report.Changed("DisabledMember", res, "Disabled %s (%s) in pool %s of load balancer %s: its zone is in maintenance, it takes no new connection", mb.Name, mb.Address, p.Name, lbName)
	} else {
		s.report.Changed("EnabledMember", res, "Enabled %s (%s) in pool %s of load balancer %s again", mb.Name, mb.Address, p.Name, lbName)
	}
	return false, nil
}

func (s *Service) deleteMember(ctx context.Context, lb *infrav1.LoadBalancer, lbName string, p *pools.Pool, mb *pools.Member) (bool, error) {
	err := s.lb.DeleteMember(ctx, p.ID, mb.ID)
	switch {
	case clients.IsConflict(err):
		return false, nil
	case err != nil && !clients.IsNotFound(err):
		return false, fmt.Errorf("removing member %s (%s) from pool %s: %w", mb.Name, mb.Address, p.Name, err)
	}
	s.report.Changed("DeletedMember", report.Resource{Kind: "Member", Name: p.Name + "/" + mb.Name, ID: mb.ID, Zone: lb.AvailabilityZone}, "Removed %s (%s) from pool %s of load balancer %s", mb.Name, mb.Address, p.Name, lbName)
	return false, nil
}

// poolsOf lists the pools of a status tree, through their listeners.
func poolsOf(tree *loadbalancers.LoadBalancer) []pools.Pool {
	var out []pools.Pool
	for _, l := range tree.Listeners {
		out = append(out, l.Pools...)
	}
	return out
}

func poolNamed(tree *loadbalancers.LoadBalancer, name string) *pools.Pool {
	for _, p := range poolsOf(tree) {
		if p.Name == name {
			return &p
		}
	}
	return nil
}

// disabledOnly is a new member's admin_state_up: false for a machine whose zone is in
// maintenance, left out (Octavia's default, true) otherwise.
func disabledOnly(disabled bool) *bool {
	if disabled {
		return ptr.To(false)
	}
	return nil
}

// notMarked is the error for a load balancer the status names that carries no mark of the
// cluster's, and that no recorded takeover makes the cluster's.
type notMarked struct{ message string }

func (e *notMarked) Error() string { return e.message }

// notTheClusters says whether err is that the load balancer is not the cluster's: unmarked, or
// another object's.
func notTheClusters(err error) bool {
	if _, ok := errors.AsType[*notMarked](err); ok {
		return true
	}
	specErr, ok := report.AsSpecError(err)
	return ok && specErr.Reason == infrav1.ResourceOwnedElsewhereReason
}
