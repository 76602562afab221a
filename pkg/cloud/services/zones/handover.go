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
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// The control plane leaves a zone that is out of service. Cluster API's control plane provider
// places a new control plane machine (a scale-up, a rollout, a remediation) in the failure
// domain with the fewest machines among those the Cluster reports with controlPlane true, and on
// scale-down removes first the machines outside them. When a zone that served the API stops
// (its load balancer can no longer take traffic), or while it is in planned maintenance, its
// failure domain is therefore reported with controlPlane false (a zone whose first machine is
// still booting has not stopped serving: it never served); it is given back once the zone has served for ControlPlaneReturnDelay in a
// row, so that a zone flapping between healthy and not does not move machines back and forth.
// The last control plane failure domain is never withdrawn: with none, machines would be placed
// in no zone at all.

// ControlPlaneReturnDelay is how long a withdrawn zone must serve, without a break, before its
// failure domain is offered to control plane machines again.
const ControlPlaneReturnDelay = 2 * time.Minute

// Handover is what HandOver changed, for events, and when a withdrawn zone that serves again is
// due to be given back.
type Handover struct {
	Steps
}

// HandOver sets the FailureDomainWithdrawal of each zone's entry of zones (the entries this
// reconcile records) from how the zone stands and what the status recorded before, at now.
// Without a load balancer per zone there is nothing to hand over.
func HandOver(in *Input, zones []infrav1.LoadBalancer, now time.Time) Handover {
	var h Handover
	before := map[string]*infrav1.FailureDomainWithdrawal{}
	for _, e := range in.Recorded.Zones {
		if e.FailureDomainWithdrawal != nil {
			before[e.AvailabilityZone] = e.FailureDomainWithdrawal
		}
	}
	// The control plane failure domains that take API traffic: those with a load balancer of
	// their own, or, with cross-zone members, every one.
	eligible := in.ControlPlaneZones
	if in.ComputeZones == nil {
		eligible = nil // Nova's zones not read yet: the mapped zones stand for them
		for _, m := range in.Mappings() {
			eligible = append(eligible, m.AvailabilityZone)
		}
	}
	crossAZ := ptr.Deref(in.section().AllowCrossAZLoadBalancerMembers, false)
	offered := map[string]bool{}
	for _, az := range eligible {
		if crossAZ || ZoneMapped(in, az) {
			offered[az] = true
		}
	}
	failedZones := ptr.Deref(in.section().WithdrawFailedZones, false)
	var candidates []int
	for i := range zones {
		e := &zones[i]
		w := before[e.AvailabilityZone].DeepCopy()
		e.FailureDomainWithdrawal = nil
		if !in.PerZone() || !offered[e.AvailabilityZone] {
			continue // not a control plane failure domain that takes traffic: nothing to withdraw
		}
		reason, failing := outOfService(e)
		if !failedZones && w != nil && w.Reason == infrav1.WithdrawnUnhealthy && reason != infrav1.WithdrawnMaintenance {
			w = nil
			h.note("ControlPlaneFailureDomainReturned", e, "Zone %s's failure domain is for control plane machines again: withdrawFailedZones is off", e.AvailabilityZone)
		}
		switch {
		case reason == infrav1.WithdrawnUnhealthy && !failedZones:
			failing = false // only planned maintenance withdraws a zone
		case reason == infrav1.WithdrawnUnhealthy && w == nil && !servedBefore(in, e.AvailabilityZone):
			failing = false // a zone whose first machine boots has not failed
		}
		switch {
		case failing && (w == nil || w.Deferred):
			if w == nil {
				w = &infrav1.FailureDomainWithdrawal{Since: metav1.Time{Time: now}}
			}
			w.Reason = reason
			e.FailureDomainWithdrawal = w
			candidates = append(candidates, i)
			continue
		case failing:
			w.ServingSince, w.Reason = nil, reason
		case w != nil && w.Deferred:
			continue // served again before it was withdrawn
		case w != nil && e.Maintenance == nil && e.IsHealthy():
			if w.ServingSince == nil {
				w.ServingSince = &metav1.Time{Time: now}
			}
			due := w.ServingSince.Add(ControlPlaneReturnDelay)
			if !now.Before(due) {
				h.note("ControlPlaneFailureDomainReturned", e, "Zone %s has served since %s: its failure domain is for control plane machines again",
					e.AvailabilityZone, w.ServingSince.UTC().Format(time.RFC3339))
				continue
			}
			h.after(due.Sub(now))
		case w != nil:
			w.ServingSince = nil // not known to serve (a new load balancer being built)
		}
		if w != nil {
			e.FailureDomainWithdrawal = w
			delete(offered, e.AvailabilityZone)
		}
	}
	for _, i := range candidates {
		e := &zones[i]
		w := e.FailureDomainWithdrawal
		if len(offered) < 2 {
			// The last control plane failure domain that takes traffic stays, out of service:
			// it is withdrawn once another serves.
			w.Deferred = true
			continue
		}
		was := w.Deferred
		w.Deferred = false
		if was {
			w.Since = metav1.Time{Time: now}
		}
		delete(offered, e.AvailabilityZone)
		h.note("ControlPlaneFailureDomainWithdrawn", e, "Zone %s is out of service (%s): its failure domain is not for control plane machines until it has served for %s",
			e.AvailabilityZone, withdrawalWords(w.Reason), ControlPlaneReturnDelay)
	}
	return h
}

// servedBefore says whether the status recorded zone az's load balancer serving the API (healthy,
// with a control plane machine ONLINE): only a zone that served can stop serving.
func servedBefore(in *Input, az string) bool {
	e := EntryFor(in.Recorded.Zones, az)
	return e != nil && Serves(e, in.APIServerPort)
}

// outOfService says whether a zone's load balancer entry is out of service, and why: in planned
// maintenance, or seen unable to take traffic. A load balancer whose health was never read (one
// being built) is neither.
func outOfService(e *infrav1.LoadBalancer) (infrav1.FailureDomainWithdrawalReason, bool) {
	switch {
	case e.Maintenance != nil:
		return infrav1.WithdrawnMaintenance, true
	case e.Healthy != nil && !*e.Healthy:
		return infrav1.WithdrawnUnhealthy, true
	}
	return "", false
}

// WithdrawalWords says why and since when a zone's failure domain is withdrawn, and when it is
// due back, for messages.
func WithdrawalWords(w *infrav1.FailureDomainWithdrawal) string {
	words := withdrawalWords(w.Reason) + " since " + w.Since.UTC().Format(time.RFC3339)
	if w.Deferred {
		words += "; kept for control plane machines, the last failure domain that takes API traffic"
	}
	if w.ServingSince != nil {
		words += "; serving again, given back at " + w.ServingSince.Add(ControlPlaneReturnDelay).UTC().Format(time.RFC3339)
	}
	return words
}

func withdrawalWords(r infrav1.FailureDomainWithdrawalReason) string {
	if r == infrav1.WithdrawnMaintenance {
		return "in maintenance"
	}
	return "its load balancer cannot take traffic"
}

// ControlPlaneAllowed says whether spec.controlPlaneAvailabilityZones (specZones) lets control
// plane machines into zone: every zone when it is empty.
func ControlPlaneAllowed(specZones []string, zone string) bool {
	return len(specZones) == 0 || slices.Contains(specZones, zone)
}

// ControlPlaneDomains are the failure domains fds (Nova's zones) with controlPlane as the spec
// allows it (specZones), except for the zones whose entry of zones has a withdrawal.
func ControlPlaneDomains(fds []clusterv1.FailureDomain, specZones []string, zones []infrav1.LoadBalancer) []clusterv1.FailureDomain {
	if len(fds) == 0 {
		return nil
	}
	out := make([]clusterv1.FailureDomain, len(fds))
	for i, fd := range fds {
		out[i] = *fd.DeepCopy()
		allowed := ControlPlaneAllowed(specZones, fd.Name)
		if e := EntryFor(zones, fd.Name); e != nil && e.FailureDomainWithdrawal != nil && !e.FailureDomainWithdrawal.Deferred {
			allowed = false
		}
		out[i].ControlPlane = ptr.To(allowed)
	}
	return out
}
