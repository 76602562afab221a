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
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// A cluster's load balancers as a whole: the one door the cluster reconciler goes through
// (ReconcileCluster), the check of the spec's references before anything exists
// (CheckReferences), and deletion (DeleteCluster).

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
	// Maintenance is where the planned maintenance of the zones stands (maintain).
	Maintenance Maintenance
	// MachinesMayStart says whether machines may be created as far as the load balancers go:
	// always without a load balancer, once the single one is ready, and with one per availability
	// zone as soon as one zone's is (another zone may still converge, or be broken).
	MachinesMayStart bool
}

// ReconcileCluster converges every API server load balancer osc asks for, each availability zone
// on its own and concurrently (one zone's bad subnet, Octavia errors or ERROR state never hold the
// others back), deletes those of zones that left the spec, and says where they all stand. osc
// is read, never written: its status is what was recorded last, with the network, external
// network and router as this reconcile found them; res resolves what the spec names in Neutron.
func (s *Service) ReconcileCluster(ctx context.Context, res Resolver, namespace, cluster string, osc *infrav1.OpenStackCluster) Result {
	if !osc.Spec.APIServerLoadBalancerEnabled() {
		return Result{Disabled: true, MachinesMayStart: true}
	}
	if msg := EndpointProblem(&osc.Spec); msg != "" {
		// Admission rejects this; a cluster created before the rule, or with admission
		// bypassed, stops here rather than getting an endpoint nobody can publish.
		return Result{EndpointProblem: msg, Summary: Summary{RequeueAfter: ConfigRequeue}}
	}
	found, err := s.discoverZones(ctx, res, osc)
	if err != nil {
		return Result{Err: err}
	}
	osc = found.view // the zones found by tag are entries from here on
	plan, err := NewPlan(ctx, res, namespace, cluster, osc)
	if err == nil {
		plan.Invalid = append(plan.Invalid, found.invalid...)
		err = s.findUnrecorded(ctx, plan, namespace, cluster, osc.Status.ExternalNetwork.ID)
	}
	if err != nil {
		return Result{Err: err}
	}
	for _, zone := range sortedKeys(found.found) {
		if entryFor(osc.Status.APIServerLoadBalancers, zone) == nil {
			s.report.Noted("DiscoveredZone", report.Resource{Kind: "Subnet", Zone: zone}, "Zone %s found by tag: its load balancer's VIP goes on subnet %s", zone, found.found[zone])
		}
	}

	outcomes := make([]Outcome, len(plan.Desired))
	var wg sync.WaitGroup
	for i := range plan.Desired {
		wg.Go(func() { outcomes[i] = s.Reconcile(ctx, plan.Desired[i], plan.Known[i]) })
	}
	staleDone, staleErr := true, error(nil)
	if len(plan.Stale) > 0 {
		wg.Go(func() { staleDone, staleErr = s.Delete(ctx, plan.StaleRemoval(namespace, cluster, osc)) })
	}
	wg.Wait()
	outcomes = append(outcomes, plan.Invalid...)
	RecordOutcomes(namespace, cluster, outcomes)

	r := Result{Observed: true}
	r.Zones, r.Single = plan.entries(osc, outcomes, staleDone)
	if osc.Spec.APIServerLoadBalancersPerZone() {
		r.Maintenance = s.maintain(osc, r.Zones, time.Now())
		r.Single = mirrorFirst(&osc.Spec, r.Zones, r.Single) // with the maintenance entries
		drainedAsPlanned(outcomes, r.Zones)
	}
	r.Summary = Summarize(outcomes, plan.Stale, staleDone, staleErr)
	if after := r.Maintenance.RequeueAfter; after > 0 && (r.Summary.RequeueAfter == 0 || after < r.Summary.RequeueAfter) {
		r.Summary.RequeueAfter = after
	}
	if osc.Spec.APIServerLoadBalancer.ZoneDiscovery != nil && (r.Summary.RequeueAfter == 0 || r.Summary.RequeueAfter > DiscoveryPoll) {
		r.Summary.RequeueAfter = DiscoveryPoll // nothing tells the manager that a subnet's tags changed
	}
	r.Publication = publication(osc, r.Zones, r.Single)
	if osc.Spec.APIServerLoadBalancersPerZone() {
		r.ZonesReady = fmt.Sprintf("%d/%d", len(r.Publication.Zones), len(osc.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets))
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
	} else {
		r.MachinesMayStart = r.Summary.Message == ""
	}
	return r
}

// findUnrecorded adds to the plan's Stale the cluster's load balancers of zones that left the
// spec and that the status does not record: a status lost in the middle of a zone's removal (a
// restore or a move without status) would otherwise leave that zone's load balancer behind for
// good. It looks only while the status misses a zone of the spec, as it does once lost (and on
// a cluster's or a zone's first reconciles): one list, by the cluster's tag. A cluster with one
// load balancer is left out: its former zones' load balancers are its own former names. A zone
// whose load balancer is gone but whose floating IP is not (its release failed, then the status
// was lost) is found by the floating IP's description, in one more list of the external
// network's floating IPs.
func (s *Service) findUnrecorded(ctx context.Context, p *Plan, namespace, cluster, externalNetwork string) error {
	if !slices.Contains(p.Known, nil) || len(p.Desired) == 0 || p.Desired[0].AvailabilityZone == "" {
		return nil
	}
	tagged, err := s.lb.ListLoadBalancers(ctx, loadbalancers.ListOpts{Tags: []string{OwnerTag(namespace, cluster)}})
	if err != nil {
		return fmt.Errorf("listing the load balancers of the cluster: %w", err)
	}
	planned := map[string]bool{}
	for _, d := range p.Desired {
		planned[d.AvailabilityZone] = true
	}
	for _, o := range p.Invalid {
		planned[o.AvailabilityZone] = true
	}
	for _, e := range p.Stale {
		planned[e.AvailabilityZone] = true
	}
	for _, lb := range tagged {
		if !ownership.Mine(s.claim(&lb)) {
			continue // the tag collides between clusters: the mark says whose it is
		}
		az, ok := zoneOfName(lb.Name, namespace, cluster)
		if !ok || az == "" || planned[az] {
			continue
		}
		planned[az] = true
		p.Stale = append(p.Stale, infrav1.LoadBalancer{Name: lb.Name, ID: lb.ID, AvailabilityZone: az, InternalIP: lb.VipAddress})
	}
	fips, err := s.net.ListFloatingIPs(ctx, floatingips.ListOpts{FloatingNetworkID: externalNetwork})
	if err != nil {
		return fmt.Errorf("listing floating IPs: %w", err)
	}
	for _, fip := range fips {
		az, ok := zoneOfFloatingIP(fip.Description, namespace, cluster)
		if !ok || az == "" || planned[az] {
			continue
		}
		planned[az] = true
		p.Stale = append(p.Stale, infrav1.LoadBalancer{Name: Name(namespace, cluster, az), AvailabilityZone: az})
	}
	return nil
}

// CheckReferences resolves what the spec's load balancer section points at in the cloud (its
// network, the single load balancer's subnet or the zones', its Octavia flavor) without creating
// anything. The cluster reconciler calls it before the cluster's first resource is created, so
// that a spec that cannot give any load balancer changes nothing. It returns nil when at least
// one load balancer can be made (the other zones are then reported by ReconcileCluster, one by
// one); otherwise what ReconcileCluster would return for the same spec, with nothing observed:
// so the condition reads the same whichever finds the problem first.
func (s *Service) CheckReferences(ctx context.Context, res Resolver, namespace, cluster string, osc *infrav1.OpenStackCluster) *Result {
	spec := osc.Spec.APIServerLoadBalancer
	// The single load balancer's VIP goes on the cluster network when spec.network is not set:
	// there is nothing of it to resolve before the network exists, besides its flavor and
	// floating IP.
	desired := []*Desired{{FloatingIP: floatingIPOf(namespace, cluster, osc, "", osc.Spec.APIServerFloatingIP, field.NewPath("spec", "apiServerFloatingIP"))}}
	var invalid []Outcome
	if osc.Spec.APIServerLoadBalancersPerZone() || spec.Network != nil {
		found, err := s.discoverZones(ctx, res, osc)
		if err != nil {
			return &Result{Err: err}
		}
		osc, spec = found.view, found.view.Spec.APIServerLoadBalancer
		plan, err := NewPlan(ctx, res, namespace, cluster, osc)
		if err != nil {
			return &Result{Err: err}
		}
		desired, invalid = plan.Desired, append(plan.Invalid, found.invalid...)
	}
	var flavorErr error
	if name := ptr.Deref(spec.Flavor, ""); name != "" && len(desired) > 0 {
		if _, flavorErr = s.flavorID(ctx, name); flavorErr != nil {
			if _, isSpec := report.AsSpecError(flavorErr); !isSpec {
				return &Result{Err: flavorErr}
			}
		}
	}
	// What Reconcile returns for each zone it would create the load balancer of, in its order:
	// the flavor, then the user's floating IP, associated with another port.
	var refuted []Outcome
	for _, d := range desired {
		err := flavorErr
		if err == nil {
			if err = s.checkUserFloatingIP(ctx, d); err != nil {
				if _, isSpec := report.AsSpecError(err); !isSpec {
					return &Result{Err: err}
				}
			}
		}
		if err == nil {
			return nil // this zone can be provisioned: the others are reported one by one
		}
		o := failed(err)
		o.AvailabilityZone = d.AvailabilityZone
		refuted = append(refuted, o)
	}
	r := &Result{Summary: Summarize(append(refuted, invalid...), nil, true, nil)}
	if osc.Spec.APIServerLoadBalancersPerZone() {
		r.ZonesReady = fmt.Sprintf("0/%d", len(spec.AvailabilityZoneSubnets))
	}
	return r
}

// Deletion is where the deletion of a cluster's load balancers stands.
type Deletion struct {
	// Done means no load balancer of the cluster is left, nor a floating IP allocated for one.
	Done bool
	// NetworkFree means no load balancer the status records has its VIP on the cluster network,
	// so that the network may be deleted while Octavia deletes them. When in doubt, false.
	NetworkFree bool
}

// DeleteCluster deletes every API server load balancer of the cluster (the status's, the spec's
// and any carrying the cluster's tag) and the floating IPs the controller allocated for them,
// keeping the user's. It never waits: the caller comes back until Done.
func (s *Service) DeleteCluster(ctx context.Context, namespace, cluster string, osc *infrav1.OpenStackCluster) (Deletion, error) {
	done, err := s.Delete(ctx, ClusterRemoval(namespace, cluster, osc))
	if err != nil {
		return Deletion{}, err
	}
	if done {
		ForgetCluster(namespace, cluster)
	}
	return Deletion{Done: done, NetworkFree: VIPsOffClusterNetwork(osc)}, nil
}
