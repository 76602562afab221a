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
	"sort"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

// What Octavia's status tree says of a load balancer, and the events of its health changing;
// what the health means is the zone rules' (zones.Healthy).

// observeTree records in status what the status tree says: Octavia's statuses of the load
// balancer, and its pools (those named after d's ports) with their members.
func observeTree(tree *loadbalancers.LoadBalancer, d *zones.Desired, status *infrav1.LoadBalancer) {
	status.ProvisioningStatus, status.OperatingStatus = tree.ProvisioningStatus, tree.OperatingStatus
	status.Pools = nil
	for _, port := range d.Ports {
		p := poolNamed(tree, zones.ChildName(tree.Name, port))
		if p == nil {
			continue
		}
		pool := infrav1.LoadBalancerPool{Name: p.Name, Port: port, OperatingStatus: p.OperatingStatus}
		for _, m := range p.Members {
			pool.Members = append(pool.Members, infrav1.LoadBalancerMember{Name: m.Name, Address: m.Address, OperatingStatus: m.OperatingStatus})
		}
		sort.Slice(pool.Members, func(i, j int) bool { return pool.Members[i].Name < pool.Members[j].Name })
		status.Pools = append(status.Pools, pool)
	}
}

// reportHealthTransition records an event when a load balancer's health changed since the last
// reconcile: a warning when it can no longer take traffic, a normal event when it can again.
func (s *Service) reportHealthTransition(d *zones.Desired, known *infrav1.LoadBalancer, out zones.Outcome) {
	if known == nil || out.Status == nil || known.ID != out.Status.ID || (out.State != zones.StateReady && out.State != zones.StateUnhealthy) ||
		known.IsHealthy() == out.Status.IsHealthy() || known.ProvisioningStatus == "" {
		return
	}
	if mt := known.Maintenance; mt != nil && mt.Phase == infrav1.ZoneInMaintenance {
		return // its members are disabled on purpose: what its pools report is no news
	}
	res := report.Resource{Kind: "LoadBalancer", Name: out.Status.Name, ID: out.Status.ID, Zone: d.AvailabilityZone}
	if out.Status.IsHealthy() {
		s.report.Noted("LoadBalancerHealthy", res, "Load balancer %s of %s is healthy again: Octavia reports it %s", out.Status.Name, zones.ZoneWords(d.AvailabilityZone), out.Status.OperatingStatus)
		return
	}
	s.report.Warn(infrav1.LoadBalancerUnhealthyReason, res, "Load balancer %s of %s can no longer take traffic: %s", out.Status.Name, zones.ZoneWords(d.AvailabilityZone), out.Message)
}
