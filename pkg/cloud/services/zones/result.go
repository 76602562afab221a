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

package zones

import (
	"fmt"
	"strings"
	"time"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
)

// Result is what one reconcile of a cluster's API server load balancers found: the status
// entries to record, how the zones stand, and what DNS publishes.
type Result struct {
	// Disabled means the cluster has no API server load balancer: nothing was done.
	Disabled bool
	// EndpointProblem says why the spec's control plane endpoint cannot be published (see
	// EndpointProblem): nothing was done.
	EndpointProblem string
	// Err is what stopped the reconcile before any load balancer was looked at: the load
	// balancer network the spec names (a report.SpecError), or an OpenStack failure. Nothing was
	// done, and the status entries are as they were.
	Err error
	// Observed means the load balancers were looked at: Zones and Single are the status entries
	// to record (apiServerLoadBalancers and apiServerLoadBalancer), and ZonesReady the Zones
	// column. Otherwise the status keeps what it recorded.
	Observed bool
	Zones    []infrav1.LoadBalancer
	Single   *infrav1.LoadBalancer
	// Summary sums up the load balancers; its Err gathers the OpenStack failures of single zones.
	Summary Summary
	// Publication is what the endpoint's DNS records publish, from the entries above.
	Publication Publication
	// ZonesReady is the Zones column (status.zonesReady): "<zones that serve>/<zones mapped>" with
	// availabilityZoneSubnets, where a zone serves when DNS publishes it because it can take
	// traffic (Publication.Zones), followed by " (maintenance: az1, ...)" while zones are taken
	// out for planned maintenance; empty otherwise.
	ZonesReady string
	// Maintenance is where the planned maintenance of the zones stands (Maintain).
	Maintenance Maintenance
	// Handover is which zones' failure domains are withdrawn from control plane machines
	// (HandOver).
	Handover Handover
	// Former is whether the former single load balancer still keeps every zone's machines
	// (ReleaseFormerSingle).
	Former FormerRelease
	// MachinesMayStart says whether machines may be created as far as the load balancers go:
	// always without a load balancer, once the single one is ready, and with one per availability
	// zone as soon as one zone's is (another zone may still converge, or be broken).
	MachinesMayStart bool
}

// Conclude is the Result of one reconcile, at now: the plan p converged into outcomes (one per
// desired load balancer, then the plan's invalid zones), and the removal of the stale zones
// (staleDone, staleErr).
func Conclude(in *Input, p *Plan, outcomes []Outcome, staleDone bool, staleErr error, now time.Time) Result {
	r := Result{Observed: true}
	r.Zones, r.Single = p.Entries(in, outcomes, staleDone)
	if in.PerZone() {
		r.Maintenance = Maintain(in, r.Zones, now)
		r.Former = ReleaseFormerSingle(in, r.Zones, now)
	}
	// After Maintain: a zone in maintenance is out of service. Without per-zone load balancers,
	// the entries still being deleted lose their withdrawals.
	r.Handover = HandOver(in, r.Zones, now)
	if in.PerZone() {
		r.Single = MirrorFirst(in, r.Zones, r.Single) // with the maintenance entries
		DrainedAsPlanned(outcomes, r.Zones)
	}
	r.Summary = Summarize(outcomes, p.Stale, staleDone, staleErr)
	for _, after := range []time.Duration{r.Maintenance.RequeueAfter, r.Handover.RequeueAfter, r.Former.RequeueAfter} {
		if after > 0 && (r.Summary.RequeueAfter == 0 || after < r.Summary.RequeueAfter) {
			r.Summary.RequeueAfter = after
		}
	}
	if in.section().ZoneDiscovery != nil && (r.Summary.RequeueAfter == 0 || r.Summary.RequeueAfter > requeue.Discovery) {
		r.Summary.RequeueAfter = requeue.Discovery // nothing tells the manager that a subnet's tags changed
	}
	r.Publication = PublicationOf(in, r.Zones, r.Single)
	if !in.PerZone() {
		r.MachinesMayStart = r.Summary.Message == ""
		return r
	}
	r.ZonesReady = fmt.Sprintf("%d/%d", len(r.Publication.Zones), len(in.Mappings()))
	var out []string
	for _, e := range r.Zones {
		if e.Maintenance != nil {
			out = append(out, e.AvailabilityZone)
		}
	}
	switch words := strings.Join(out, ", "); {
	case len(out) == 0:
	case len(words) > 200:
		r.ZonesReady += fmt.Sprintf(" (maintenance: %d zones)", len(out))
	default:
		r.ZonesReady += " (maintenance: " + words + ")"
	}
	r.MachinesMayStart = r.Summary.Ready > 0
	return r
}

// Refuted is the Result of a check of the spec's references that found no load balancer can be
// made: what Conclude would say of the same outcomes, with nothing observed, so that the
// condition reads the same whichever finds the problem first.
func Refuted(in *Input, outcomes []Outcome) *Result {
	r := &Result{Summary: Summarize(outcomes, nil, true, nil)}
	if in.PerZone() {
		r.ZonesReady = fmt.Sprintf("0/%d", len(in.Mappings()))
	}
	return r
}
