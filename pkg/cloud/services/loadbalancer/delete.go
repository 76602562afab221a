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
	"strings"
	"sync"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	kerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/outcome"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

// Delete deletes the load balancers r names (with their listeners, pools, monitors and
// members, by cascade) and the floating IPs the controller allocated for them. It never waits:
// it reports done only once Octavia no longer lists any of them, and the caller comes back while
// they are PENDING_*. A load balancer is found by name and tag, not only by the status, so that a
// lost status leaves nothing behind.
func (s *Service) Delete(ctx context.Context, r *zones.Removal) (done bool, err error) {
	done, _, err = s.deleteReporting(ctx, r)
	return done, err
}

// deleteReporting is Delete, and also says whether no load balancer it found of the removal has
// a floating IP left on its VIP (vipsClear): none was PENDING_CREATE or PENDING_UPDATE (skipped
// until Octavia lets it, its floating IPs untouched), and none holds a floating IP that is kept
// (the user's, or another's).
func (s *Service) deleteReporting(ctx context.Context, r *zones.Removal) (done, vipsClear bool, err error) {
	all, err := s.lb.ListLoadBalancers(ctx, loadbalancers.ListOpts{})
	if err != nil {
		return false, false, fmt.Errorf("listing load balancers: %w", err)
	}
	owner := zones.OwnerTag(r.Namespace, r.Cluster)
	// The load balancers are removed at once: Octavia gets every delete without waiting for
	// Neutron to release the floating IP of the one before.
	var wg sync.WaitGroup
	errs := make([]error, len(all))
	// clear[i]: no floating IP left on the VIP of all[i], when this pass removes it.
	clear := make([]bool, len(all))
	for i := range clear {
		clear[i] = true
	}
	done = true
	for i := range all {
		lb := &all[i]
		tagged := r.AllTagged && slices.Contains(lb.Tags, owner)
		if !tagged && !slices.Contains(r.Names, lb.Name) && !slices.Contains(r.IDs, lb.ID) {
			continue
		}
		if !ownership.Mine(s.claim(lb)) {
			continue // named, tagged or recorded as the cluster's, but another's or nobody's: never deleted
		}
		done = false
		wg.Go(func() {
			if err := outcome.Run("deleting load balancer "+lb.Name, func() { clear[i], errs[i] = s.remove(ctx, lb, r) }); err != nil {
				errs[i] = err
			}
		})
	}
	wg.Wait()
	if err := kerrors.NewAggregate(errs); err != nil {
		return false, false, err
	}
	if !done {
		return false, !slices.Contains(clear, false), nil
	}
	if s.memory.allocating(func(description string) bool { return s.releasable(description, r) }) {
		// A floating IP allocated in the background for a load balancer now gone would be
		// released before it exists: wait for it.
		return false, false, nil
	}
	// Done only once the floating IPs are released too: a removal dropped from the status with
	// an address still allocated would leave it behind.
	if err := s.releaseFloatingIPs(ctx, r); err != nil {
		return false, false, err
	}
	return true, true, nil
}

// remove deletes one load balancer and releases the controller's floating IP on its VIP. The
// delete goes first, so that Octavia works on it while Neutron releases the address. clear says
// that no floating IP is left on its VIP (for one Octavia is already deleting, that the pass
// which sent the delete released them).
func (s *Service) remove(ctx context.Context, lb *loadbalancers.LoadBalancer, r *zones.Removal) (clear bool, err error) {
	if strings.HasPrefix(lb.ProvisioningStatus, "PENDING_") {
		// Octavia is busy with it: PENDING_DELETE was sent by an earlier pass, which released
		// the controller's floating IPs (the user's stay on the VIP until Octavia deletes its
		// port); any other state waits for the next look.
		return lb.ProvisioningStatus == "PENDING_DELETE" && len(r.KeepAddresses) == 0, nil
	}
	err = s.lb.DeleteLoadBalancer(ctx, lb.ID, loadbalancers.DeleteOpts{Cascade: true})
	switch {
	case err == nil:
		s.report.Changed("DeletedLoadBalancer", report.Resource{Kind: "LoadBalancer", Name: lb.Name, ID: lb.ID, Zone: r.ZoneOf(lb.Name)}, "Deleted load balancer %s (%s) with its listeners, pools and monitors", lb.Name, lb.ID)
		s.memory.forgetError(lb.ID)
		s.memory.forgetPending(lb.ID)
		s.memory.forgetMonitors(lb.ID)
		s.memory.allocationOf(lb.ID, true)
	case clients.IsNotFound(err), clients.IsConflict(err):
		// Gone already, or Octavia is busy with it: the next look tells.
	default:
		return false, fmt.Errorf("deleting load balancer %s: %w", lb.Name, err)
	}
	if lb.VipPortID == "" {
		return true, nil
	}
	fips, err := s.floatingIPs(ctx, floatingips.ListOpts{PortID: lb.VipPortID})
	if err != nil {
		return false, fmt.Errorf("listing the floating IPs of load balancer %s: %w", lb.Name, err)
	}
	clear = true
	for _, fip := range fips {
		if slices.Contains(r.KeepAddresses, fip.FloatingIP) || !zones.OwnsFloatingIP(fip.Description, r.Namespace, r.Cluster) {
			clear = false
			continue // the user's, or anyone's but the controller's: kept
		}
		if err := s.net.DeleteFloatingIP(ctx, fip.ID); err != nil && !clients.IsNotFound(err) {
			return false, fmt.Errorf("releasing floating IP %s of load balancer %s: %w", fip.FloatingIP, lb.Name, err)
		}
		s.report.Changed("ReleasedFloatingIP", report.Resource{Kind: "FloatingIP", Name: fip.FloatingIP, ID: fip.ID, Zone: r.ZoneOf(lb.Name)}, "Released floating IP %s of load balancer %s", fip.FloatingIP, lb.Name)
	}
	return clear, nil
}

// releaseFloatingIPs releases the floating IPs the controller allocated for the cluster's load
// balancers that are still allocated once the load balancers are gone (a load balancer deleted
// by someone else leaves its floating IP unassociated).
func (s *Service) releaseFloatingIPs(ctx context.Context, r *zones.Removal) error {
	// Without the external network (a status lost before the deletion), every floating IP of the
	// project is looked at: the description tells the controller's.
	fips, err := s.floatingIPs(ctx, floatingips.ListOpts{FloatingNetworkID: r.ExternalNetworkID})
	if err != nil {
		return fmt.Errorf("listing floating IPs: %w", err)
	}
	for _, fip := range fips {
		if slices.Contains(r.KeepAddresses, fip.FloatingIP) || !s.releasable(fip.Description, r) {
			continue
		}
		if err := s.net.DeleteFloatingIP(ctx, fip.ID); err != nil && !clients.IsNotFound(err) {
			return fmt.Errorf("releasing floating IP %s: %w", fip.FloatingIP, err)
		}
		s.report.Changed("ReleasedFloatingIP", report.Resource{Kind: "FloatingIP", Name: fip.FloatingIP, ID: fip.ID}, "Released floating IP %s (%s)", fip.FloatingIP, fip.Description)
	}
	return nil
}

// releasable says whether a floating IP with this description belongs to one of the load
// balancers being removed: any of the cluster's on cluster deletion, else only those of the named
// availability zones.
func (s *Service) releasable(description string, r *zones.Removal) bool {
	if r.AllTagged {
		return zones.OwnsFloatingIP(description, r.Namespace, r.Cluster)
	}
	for _, name := range r.Names {
		if az, ok := zones.ZoneOfName(name, r.Namespace, r.Cluster); ok && description == zones.FloatingIPDescription(r.Namespace, r.Cluster, az) {
			return true
		}
	}
	return false
}
