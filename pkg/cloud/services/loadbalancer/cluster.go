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
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/outcome"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

// A cluster's load balancers as a whole: the one door the cluster reconciler goes through
// (ReconcileCluster), the check of the spec's references before anything exists
// (CheckReferences), and deletion (DeleteCluster).

// ReconcileCluster converges every API server load balancer in asks for, in three steps: plan
// (resolve in Neutron what the zone rules need, then zones.NewPlan), converge (each availability
// zone on its own and concurrently: one zone's bad subnet, Octavia errors or ERROR state never
// hold the others back; and the removal of zones that left the spec), summarise
// (zones.Conclude). res resolves what the spec names in Neutron.
func (s *Service) ReconcileCluster(ctx context.Context, res Resolver, in *zones.Input) zones.Result {
	if !in.Enabled() {
		return zones.Result{Disabled: true, MachinesMayStart: true}
	}
	if msg := zones.EndpointProblem(in); msg != "" {
		// Admission rejects this; a cluster created before the rule, or with admission
		// bypassed, stops here rather than getting an endpoint nobody can publish.
		return zones.Result{EndpointProblem: msg, Summary: zones.Summary{Outcome: outcome.Outcome{RequeueAfter: requeue.Config}}}
	}
	in, plan, notes, err := planFor(ctx, res, in)
	if err == nil {
		err = s.findUnrecorded(ctx, in, plan)
	}
	if err != nil {
		return zones.Result{Err: err}
	}
	s.emit(notes)

	outcomes, staleDone, staleErr := s.converge(ctx, in, plan)

	outcomes = append(outcomes, plan.Invalid...)
	RecordOutcomes(in.Namespace, in.Cluster, outcomes)
	r := zones.Conclude(in, plan, outcomes, staleDone, staleErr, time.Now())
	s.emit(r.Maintenance.Notes)
	s.emit(r.Handover.Notes)
	s.emit(r.Former.Notes)
	return r
}

// converge brings each load balancer of the plan one step closer to what it wants, concurrently,
// and removes those of the zones that left the spec.
func (s *Service) converge(ctx context.Context, in *zones.Input, plan *zones.Plan) (outcomes []zones.Outcome, staleDone bool, staleErr error) {
	outcomes = make([]zones.Outcome, len(plan.Desired))
	var wg sync.WaitGroup
	for i := range plan.Desired {
		wg.Go(func() {
			if err := outcome.Run("load balancer "+plan.Desired[i].Name, func() { outcomes[i] = s.Reconcile(ctx, plan.Desired[i], plan.Known[i]) }); err != nil {
				outcomes[i] = failed(err)
				outcomes[i].AvailabilityZone = plan.Desired[i].AvailabilityZone
				outcomes[i].Message = err.Error() // as Reconcile summarises a failure
			}
		})
	}
	staleDone = true
	if len(plan.Stale) > 0 {
		wg.Go(func() {
			if err := outcome.Run("removing load balancers", func() { staleDone, staleErr = s.Delete(ctx, plan.StaleRemoval(in)) }); err != nil {
				staleDone, staleErr = false, err
			}
		})
	}
	wg.Wait()
	return outcomes, staleDone, staleErr
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
func (s *Service) findUnrecorded(ctx context.Context, in *zones.Input, p *zones.Plan) error {
	if !slices.Contains(p.Known, nil) || len(p.Desired) == 0 || p.Desired[0].AvailabilityZone == "" {
		return nil
	}
	namespace, cluster := in.Namespace, in.Cluster
	tagged, err := s.lb.ListLoadBalancers(ctx, loadbalancers.ListOpts{Tags: []string{zones.OwnerTag(namespace, cluster)}})
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
		az, ok := zones.ZoneOfName(lb.Name, namespace, cluster)
		if !ok || az == "" || planned[az] {
			continue
		}
		planned[az] = true
		p.Stale = append(p.Stale, infrav1.LoadBalancer{Name: lb.Name, ID: lb.ID, AvailabilityZone: az, InternalIP: lb.VipAddress})
	}
	var externalNetwork string
	if in.ExternalNetwork != nil {
		externalNetwork = in.ExternalNetwork.ID
	}
	fips, err := s.floatingIPs(ctx, floatingips.ListOpts{FloatingNetworkID: externalNetwork})
	if err != nil {
		return fmt.Errorf("listing floating IPs: %w", err)
	}
	for _, fip := range fips {
		az, ok := zones.ZoneOfFloatingIP(fip.Description, namespace, cluster)
		if !ok || az == "" || planned[az] {
			continue
		}
		planned[az] = true
		p.Stale = append(p.Stale, infrav1.LoadBalancer{Name: zones.Name(namespace, cluster, az), AvailabilityZone: az})
	}
	return nil
}

// CheckReferences resolves what the spec's load balancer section points at in the cloud (its
// network, the single load balancer's subnet or the zones', its Octavia flavor) without creating
// anything. The cluster reconciler calls it before the cluster's first resource is created, so
// that a spec that cannot give any load balancer changes nothing. It returns nil when at least
// one load balancer can be made (the other zones are then reported by ReconcileCluster, one by
// one); otherwise what ReconcileCluster would return for the same spec, with nothing observed
// (zones.Refuted).
func (s *Service) CheckReferences(ctx context.Context, res Resolver, in *zones.Input) *zones.Result {
	// The single load balancer's VIP goes on the cluster network when spec.network is not set:
	// there is nothing of it to resolve before the network exists, besides its flavor and
	// floating IP.
	desired := []*zones.Desired{{FloatingIP: zones.SingleFloatingIP(in)}}
	var invalid []zones.Outcome
	if in.PerZone() || in.LoadBalancer.Network != nil {
		var (
			plan  *zones.Plan
			notes []zones.Note
			err   error
		)
		in, plan, notes, err = planFor(ctx, res, in)
		if err != nil {
			return &zones.Result{Err: err}
		}
		for _, n := range notes {
			if n.Warning {
				s.emit([]zones.Note{n})
			}
		}
		desired, invalid = plan.Desired, plan.Invalid
	}
	var flavorErr error
	if name := ptr.Deref(in.LoadBalancer.Flavor, ""); name != "" && len(desired) > 0 {
		if _, flavorErr = s.flavorID(ctx, name); flavorErr != nil {
			if _, isSpec := report.AsSpecError(flavorErr); !isSpec {
				return &zones.Result{Err: flavorErr}
			}
		}
	}
	// What Reconcile returns for each zone it would create the load balancer of, in its order:
	// the flavor, then the user's floating IP, associated with another port.
	var refuted []zones.Outcome
	for _, d := range desired {
		err := flavorErr
		if err == nil {
			if err = s.checkUserFloatingIP(ctx, d); err != nil {
				if _, isSpec := report.AsSpecError(err); !isSpec {
					return &zones.Result{Err: err}
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
	return zones.Refuted(in, append(refuted, invalid...))
}

// Deletion is where the deletion of a cluster's load balancers stands.
type Deletion struct {
	// Done means no load balancer of the cluster is left, nor a floating IP allocated for one.
	Done bool
	// RouterFree means no floating IP is left on the VIP of a load balancer Octavia is deleting
	// (the controller's are released, and none of the user's or another's is kept on one): none
	// goes through the cluster's router any more, which may then be deleted while Octavia
	// deletes them. Neutron has the last word (it refuses to remove a router interface a
	// floating IP uses).
	RouterFree bool
}

// DeleteCluster deletes every API server load balancer of the cluster (the status's, the spec's
// and any carrying the cluster's tag) and the floating IPs the controller allocated for them,
// keeping the user's. It never waits: the caller comes back until Done.
func (s *Service) DeleteCluster(ctx context.Context, in *zones.Input) (Deletion, error) {
	done, vipsClear, err := s.deleteReporting(ctx, zones.ClusterRemoval(in))
	if err != nil {
		return Deletion{}, err
	}
	if done {
		ForgetCluster(in.Namespace, in.Cluster)
	}
	return Deletion{Done: done, RouterFree: vipsClear}, nil
}
