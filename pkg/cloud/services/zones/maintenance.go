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
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
)

// Planned zone maintenance: the zones the OpenStackCluster's zone-maintenance annotation names
// leave service in order. First the zone's address leaves the endpoint's DNS records
// (publication skips a zone with a Maintenance entry). Once ExternalDNS has taken the records
// up (the controller records WithdrawnAt) and their TTL has passed, no client resolving the
// name should still hold the address: the zone is InMaintenance, and its control plane machines
// become disabled members of every load balancer (ReconcileMachine), so that they get no new
// connection while the work goes on. Members are never deleted. Removing the zone from the
// annotation reverses the steps: members enabled, then the zone published again once it serves.

// Maintenance is where the planned maintenance of a cluster's zones stands.
type Maintenance struct {
	// Requested are the zones the annotation names that the spec maps, in its order.
	Requested []string
	// Waiting are the zones out of DNS whose machines still get connections, each with what it
	// waits for, for messages.
	Waiting []string
	// Out are the zones in maintenance.
	Out []string
	// Refused are the zones kept in service because no other zone serves, with why.
	Refused []string
	Steps
}

// Maintain sets the Maintenance entry of each zone's load balancer of zones (the entries this
// reconcile records) from the annotation and the entries the status recorded before, at now,
// notes each step, and says where the maintenance stands. A zone is taken out only while
// another zone serves the API; one being taken out is never put back on its own.
func Maintain(in *Input, zones []infrav1.LoadBalancer, now time.Time) Maintenance {
	var m Maintenance
	requested := in.Maintenance
	before := map[string]*infrav1.ZoneMaintenance{}
	for _, e := range in.Recorded.Zones {
		if e.Maintenance != nil && e.ID != "" {
			before[e.AvailabilityZone] = e.Maintenance
		}
	}
	apiPort := in.APIServerPort
	serving := 0
	for i := range zones {
		e := &zones[i]
		e.Maintenance = nil
		if was := before[e.AvailabilityZone]; was != nil && slices.Contains(requested, e.AvailabilityZone) {
			e.Maintenance = was.DeepCopy()
		} else if was != nil {
			m.note("ZoneReturned", e, "Zone %s is back from maintenance: its control plane machines take connections again, and it is published once it serves", e.AvailabilityZone)
		}
		if e.Maintenance == nil && Serves(e, apiPort) {
			serving++
		}
	}
	ttl, published := dnsTTL(in)
	for _, az := range requested {
		i := slices.IndexFunc(zones, func(e infrav1.LoadBalancer) bool { return e.AvailabilityZone == az })
		if i < 0 {
			continue // not mapped, or its load balancer not made yet
		}
		e := &zones[i]
		m.Requested = append(m.Requested, az)
		if e.Maintenance == nil {
			if Serves(e, apiPort) {
				if serving < 2 {
					m.Refused = append(m.Refused, az)
					continue
				}
				serving--
			}
			e.Maintenance = &infrav1.ZoneMaintenance{Phase: infrav1.ZoneWithdrawing}
			m.note("WithdrawingZone", e, "Taking zone %s out of service: its address leaves the endpoint's DNS records", az)
		}
		m.step(in, e, published, ttl, now)
	}
	return m
}

// ExternalDNSPatience is how long a zone leaving DNS is looked at every requeue.ExternalDNS while
// ExternalDNS has not taken up the records; then every requeue.Config.
const ExternalDNSPatience = time.Minute

// step moves a zone being taken out on when its time has come.
func (m *Maintenance) step(in *Input, e *infrav1.LoadBalancer, published bool, ttl time.Duration, now time.Time) {
	az, mt := e.AvailabilityZone, e.Maintenance
	if mt.Phase == infrav1.ZoneWithdrawing {
		switch {
		case !published:
			// No records to wait for: the zone's address was never published by this provider.
		case mt.WithdrawnAt == nil:
			m.Waiting = append(m.Waiting, az+" (waiting for ExternalDNS to take up the records without it)")
			// Looked at often while ExternalDNS usually answers, then once a minute: a wait that
			// does not end costs the shared manager no more than any other stalled step.
			if in.WithdrawingSince.IsZero() || now.Sub(in.WithdrawingSince) < ExternalDNSPatience {
				m.after(requeue.ExternalDNS)
			} else {
				m.after(requeue.Config)
			}
			return
		case now.Before(mt.WithdrawnAt.Add(ttl)):
			due := mt.WithdrawnAt.Add(ttl)
			m.Waiting = append(m.Waiting, fmt.Sprintf("%s (out of DNS since %s; its machines stop taking new connections at %s, once the records' %s TTL has passed)",
				az, mt.WithdrawnAt.UTC().Format(time.RFC3339), due.UTC().Format(time.RFC3339), ttl))
			m.after(due.Sub(now))
			return
		}
		mt.Phase = infrav1.ZoneInMaintenance
		m.note("ZoneInMaintenance", e, "Zone %s is in maintenance: out of DNS, and its control plane machines take no new connection from any load balancer", az)
	}
	m.Out = append(m.Out, az)
}

// RefusalMessage says why the refused zones stay in service, naming how every zone stands.
func (m *Maintenance) RefusalMessage(in *Input, zones []infrav1.LoadBalancer) string {
	var others []string
	apiPort := in.APIServerPort
	for _, e := range zones {
		switch {
		case slices.Contains(m.Refused, e.AvailabilityZone):
		case e.Maintenance != nil:
			others = append(others, e.AvailabilityZone+" is in maintenance")
		case !Serves(&e, apiPort):
			others = append(others, e.AvailabilityZone+" does not serve")
		}
	}
	return fmt.Sprintf("zone %s is not taken out of service: it is the last zone that serves the API (%s); it stays published and its machines keep their connections",
		strings.Join(m.Refused, ", "), strings.Join(others, ", "))
}

// dnsTTL is the time to live of the endpoint's DNS records, and whether the provider publishes
// them.
func dnsTTL(in *Input) (time.Duration, bool) {
	dns := in.section().DNS
	if dns == nil || in.DNSRefused {
		return 0, false
	}
	return time.Duration(dns.TTL) * time.Second, true
}

// DrainedAsPlanned counts a zone in maintenance whose load balancer reports itself unhealthy as
// ready: with every member disabled, a provider may report the pools down, as planned.
func DrainedAsPlanned(outcomes []Outcome, zones []infrav1.LoadBalancer) {
	for i := range outcomes {
		o := &outcomes[i]
		if e := EntryFor(zones, o.AvailabilityZone); o.State == StateUnhealthy && e != nil && e.Maintenance != nil && e.Maintenance.Phase == infrav1.ZoneInMaintenance {
			o.State, o.Reason, o.Message = StateReady, infrav1.ReadyReason, ""
		}
	}
}

// ZoneDrained says whether the control plane machines of availability zone az must take no new
// connection: the zone is in maintenance (zones are the recorded entries).
func ZoneDrained(zones []infrav1.LoadBalancer, az string) bool {
	for _, e := range zones {
		if e.AvailabilityZone == az && e.Maintenance != nil && e.Maintenance.Phase == infrav1.ZoneInMaintenance {
			return true
		}
	}
	return false
}

// MarkWithdrawn records, on the zones being withdrawn that have no such time yet, that the
// records without them were taken up at now.
func MarkWithdrawn(zones []infrav1.LoadBalancer, now time.Time) {
	for i := range zones {
		if mt := zones[i].Maintenance; mt != nil && mt.Phase == infrav1.ZoneWithdrawing && mt.WithdrawnAt == nil {
			mt.WithdrawnAt = &metav1.Time{Time: now}
		}
	}
}

// Steps are what a rule over the zones' entries did: the events of the steps it took, and when
// its next step is due.
type Steps struct {
	// RequeueAfter is when the next step is due (zero when none is).
	RequeueAfter time.Duration
	// Notes are the events of the steps taken.
	Notes []Note
}

// after makes the next step due in d at the latest (a second at the least).
func (s *Steps) after(d time.Duration) {
	d = max(d, time.Second)
	if s.RequeueAfter == 0 || d < s.RequeueAfter {
		s.RequeueAfter = d
	}
}

// note records the event of a step taken on zone entry e.
func (s *Steps) note(reason string, e *infrav1.LoadBalancer, format string, args ...any) {
	s.Notes = append(s.Notes, Note{Reason: reason, Resource: report.Resource{Kind: "LoadBalancer", Name: e.Name, ID: e.ID, Zone: e.AvailabilityZone},
		Message: fmt.Sprintf(format, args...)})
}
