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

package controllers

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/cluster-api/util/conditions"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// ownedPhase is a phase of an OpenStackCluster's reconcile and what of the object it owns: the
// status fields it writes (copied by status) and its conditions. Phases of one stage run at
// once, each on its own copy of the object, so that none sees what another writes while they
// run; what each owns is copied back once all are done.
type ownedPhase struct {
	run        func(c *clusterScope) phaseResult
	status     func(to, from *infrav1.OpenStackClusterStatus)
	conditions []string
}

// alone is a phase that runs by itself in its stage, on the object itself.
func alone(run func(c *clusterScope) phaseResult) ownedPhase { return ownedPhase{run: run} }

// concurrently runs the phases of a stage and returns their results, in order.
func (c *clusterScope) concurrently(stage []ownedPhase) []phaseResult {
	results := make([]phaseResult, len(stage))
	if len(stage) == 1 {
		results[0] = stage[0].run(c)
		return results
	}
	copies := make([]*infrav1.OpenStackCluster, len(stage))
	var wg sync.WaitGroup
	for i, p := range stage {
		own := *c
		own.osc = c.osc.DeepCopy()
		copies[i] = own.osc
		wg.Go(func() { results[i] = p.run(&own) })
	}
	wg.Wait()
	for i, p := range stage {
		p.status(&c.osc.Status, &copies[i].Status)
		for _, t := range p.conditions {
			if cond := conditions.Get(copies[i], t); cond != nil {
				conditions.Set(c.osc, *cond)
			}
		}
	}
	return results
}

func (r *OpenStackClusterReconciler) routerPhase(ctx context.Context) ownedPhase {
	return ownedPhase{
		run:        func(c *clusterScope) phaseResult { return r.reconcileRouter(ctx, c) },
		status:     func(to, from *infrav1.OpenStackClusterStatus) { to.Router = from.Router },
		conditions: []string{infrav1.NetworkReadyCondition},
	}
}

func (r *OpenStackClusterReconciler) securityGroupsPhase(ctx context.Context) ownedPhase {
	return ownedPhase{
		run: func(c *clusterScope) phaseResult { return r.reconcileSecurityGroups(ctx, c) },
		status: func(to, from *infrav1.OpenStackClusterStatus) {
			to.ControlPlaneSecurityGroup, to.WorkerSecurityGroup = from.ControlPlaneSecurityGroup, from.WorkerSecurityGroup
		},
		conditions: []string{infrav1.SecurityGroupsReadyCondition},
	}
}

func (r *OpenStackClusterReconciler) failureDomainsPhase(ctx context.Context) ownedPhase {
	return ownedPhase{
		run:        func(c *clusterScope) phaseResult { return r.reconcileFailureDomains(ctx, c) },
		status:     func(to, from *infrav1.OpenStackClusterStatus) { to.FailureDomains = from.FailureDomains },
		conditions: []string{infrav1.FailureDomainsReadyCondition},
	}
}

// loadBalancersPhase owns the load balancers' status and, when the spec's endpoint cannot be
// published, the endpoint's condition too. ready receives how many load balancers are ready.
func (r *OpenStackClusterReconciler) loadBalancersPhase(ctx context.Context, ready *int) ownedPhase {
	return ownedPhase{
		run: func(c *clusterScope) phaseResult { return r.reconcileLoadBalancers(ctx, c, ready) },
		status: func(to, from *infrav1.OpenStackClusterStatus) {
			to.APIServerLoadBalancer, to.APIServerLoadBalancers, to.ZonesReady = from.APIServerLoadBalancer, from.APIServerLoadBalancers, from.ZonesReady
		},
		conditions: []string{infrav1.APIServerLoadBalancersReadyCondition, infrav1.APIEndpointReadyCondition},
	}
}

// neutronRecheck is how long, while Octavia builds a load balancer, the network, router, security
// groups and failure domains found ready are trusted without being read again: the polls of a
// load balancer being built then cost one Octavia call per zone instead of a dozen calls.
const neutronRecheck = 30 * time.Second

// fullChecks remembers, per OpenStackCluster, when a reconcile last read its network, router,
// security groups and failure domains and found them ready, and at which generation of the
// spec. Losing it (a restart) only means the next reconcile reads everything.
type fullChecks struct {
	mu   sync.Mutex
	last map[types.UID]fullCheck
}

type fullCheck struct {
	generation int64
	at         time.Time
}

// checked records a reconcile, begun at start, that found everything besides the load balancers
// ready (and forgets the mark when something was not).
func (f *fullChecks) checked(osc *infrav1.OpenStackCluster, start time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.last == nil {
		f.last = map[types.UID]fullCheck{}
	}
	if !restReady(osc) {
		delete(f.last, osc.UID)
		return
	}
	f.last[osc.UID] = fullCheck{generation: osc.Generation, at: start}
}

// forget drops the mark of a deleted OpenStackCluster.
func (f *fullChecks) forget(osc *infrav1.OpenStackCluster) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.last, osc.UID)
}

// onlyLoadBalancers tells whether this reconcile may poll the load balancers alone: Octavia is
// building one (or a change was just made), everything else was found ready by a reconcile of
// the same spec less than neutronRecheck ago. A health poll, a spec change, anything not ready
// or a fresh manager reads everything.
func (f *fullChecks) onlyLoadBalancers(osc *infrav1.OpenStackCluster, now time.Time) bool {
	lbs := infrav1.APIServerLoadBalancersReadyCondition
	if !conditions.IsFalse(osc, lbs) || conditions.GetReason(osc, lbs) != infrav1.WaitingForLoadBalancerReason || !restReady(osc) {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	last, ok := f.last[osc.UID]
	return ok && last.generation == osc.Generation && now.Sub(last.at) < neutronRecheck
}

// restReady tells whether everything an OpenStackCluster needs besides its load balancers is
// ready.
func restReady(osc *infrav1.OpenStackCluster) bool {
	for _, t := range []string{infrav1.NetworkReadyCondition, infrav1.SecurityGroupsReadyCondition, infrav1.FailureDomainsReadyCondition} {
		if !conditions.IsTrue(osc, t) {
			return false
		}
	}
	return osc.Status.Network != nil
}
