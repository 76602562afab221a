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
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/cluster-api/util/conditions"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

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

// checked records a reconcile, begun at start, that read everything and found everything
// besides the load balancers ready, as its conditions say; or forgets the mark when something
// was not.
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
