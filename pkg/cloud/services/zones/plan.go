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
	"cmp"
	"fmt"
	"net/netip"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/outcome"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
)

// This file turns an Input and what the load balancer service resolved in Neutron (Resolved)
// into the API server load balancers one reconcile converges: a single one, or one per
// availability zone with its VIP on the zone's mapped subnet, and those of zones that left the
// spec, to delete. Which of the spec's references need Neutron at all is a rule too: what the
// status recorded is reused (RecordedNetwork, RecordedSubnet).

// Desired is one API server load balancer as the spec asks for it.
type Desired struct {
	// AvailabilityZone keys the load balancer in the status; empty for the single load balancer.
	AvailabilityZone string
	Name             string
	// FormerNames are names the load balancer may still carry: the legacy name for the first
	// availability zone during a migration, the first zone's name when returning to a single
	// load balancer. A load balancer found under one is renamed, children included.
	FormerNames []string
	// Network holds the VIP; Subnet is the VIP subnet (nil: Octavia picks one on Network).
	Network infrav1.NetworkStatus
	Subnet  *infrav1.Subnet
	// OctaviaAZ is the availability zone hint wanted; it is omitted when Octavia cannot honour it.
	OctaviaAZ string
	Provider  string
	Flavor    string
	Ports     []int
	// AllowedCIDRs are canonical (CanonicalCIDRs); empty means no restriction.
	AllowedCIDRs []string
	Monitor      infrav1.APIServerLoadBalancerMonitor
	// FloatingIP is nil when the load balancer gets no floating IP.
	FloatingIP *FloatingIP
	Tags       []string
	// HealthPoll, when set, is how soon a ready load balancer is looked at again, to notice a
	// change of its health (requeue.DNSHealth when the cluster publishes its DNS records).
	HealthPoll time.Duration
}

// FloatingIP says which floating IP a load balancer gets.
type FloatingIP struct {
	ExternalNetworkID string
	// Address is the user's address (apiServerFloatingIP, or the zone's floatingIP): used
	// (allocated if missing), never deleted. Field is the spec field that gives it.
	Address string
	Field   *field.Path
	// Description marks a floating IP the controller allocates (FloatingIPDescription).
	Description string
	// TakenOver are the descriptions of a floating IP found on the load balancer's VIP that
	// becomes its own, and is marked: upstream CAPO's, for the load balancer that continues
	// upstream's (the single one, or the first zone's). The cluster's own marks for its other
	// load balancers (ZoneOfFloatingIP) are taken over too, on the VIP: a migration keeps the
	// address.
	TakenOver []string
}

// Plan is what one reconcile does with a cluster's API server load balancers.
type Plan struct {
	// Desired are the load balancers to converge; Known[i] is what the status recorded for
	// Desired[i] (nil when nothing, or when the status was lost).
	Desired []*Desired
	Known   []*infrav1.LoadBalancer
	// Invalid are the zones that cannot be provisioned: a configuration problem found while
	// resolving their subnet. Nothing is done for them; the other zones go on.
	Invalid []Outcome
	// Stale are status entries whose availability zone left the spec: their load balancers are
	// deleted.
	Stale []infrav1.LoadBalancer
}

// Resolved is what the load balancer service found in Neutron for a plan.
type Resolved struct {
	// Network is the load balancer network (apiServerLoadBalancer.network) as resolved or
	// recorded; nil when the spec names none (the single load balancer then goes on the cluster
	// network).
	Network *infrav1.NetworkStatus
	// Subnets are the VIP subnets by zone ("" for the single load balancer): the mapping's
	// subnet, or the first of apiServerLoadBalancer.subnets.
	Subnets map[string]*infrav1.Subnet
	// Refused are the zones whose subnet the cloud refutes (a report.SpecError each): nothing
	// is provisioned for them.
	Refused map[string]error
}

// RecordedNetwork is the load balancer network as the status recorded it, when the spec still
// names that network: it is reused without a call (a VIP cannot move anyway). nil when Neutron
// must be asked.
func RecordedNetwork(in *Input) *infrav1.NetworkStatusWithSubnets {
	spec := in.section()
	if spec.Network == nil {
		return nil
	}
	var known *infrav1.NetworkStatusWithSubnets
	if in.PerZone() {
		if len(in.Recorded.Zones) > 0 {
			known = in.Recorded.Zones[0].LoadBalancerNetwork
		}
	} else if in.Recorded.Single != nil {
		known = in.Recorded.Single.LoadBalancerNetwork
	}
	if known == nil || known.ID == "" || (spec.Network.ID != nil && *spec.Network.ID != known.ID) {
		return nil
	}
	return known
}

// RecordedSubnet is the subnet of mapping m that the zone's status entry recorded on network,
// reused without a call: a mapping's subnet cannot change. nil when Neutron must be asked.
func RecordedSubnet(in *Input, network *infrav1.NetworkStatus, m *infrav1.AZSubnetMapping) *infrav1.Subnet {
	known := knownEntry(in, m.AvailabilityZone, in.firstZone() == m.AvailabilityZone)
	if known == nil || known.AvailabilityZone != m.AvailabilityZone || known.LoadBalancerNetwork == nil ||
		known.LoadBalancerNetwork.ID != network.ID || len(known.LoadBalancerNetwork.Subnets) == 0 {
		return nil
	}
	if s := known.LoadBalancerNetwork.Subnets[0]; m.Subnet.ID == nil || *m.Subnet.ID == s.ID {
		return &s
	}
	return nil
}

// NewPlan is the plan of one reconcile. An error is returned only for what concerns every zone;
// a zone's own problem is in Plan.Invalid.
func NewPlan(in *Input, r *Resolved) (*Plan, error) {
	base := baseDesired(in)
	if !in.PerZone() {
		return planSingle(in, r, base), nil
	}
	if r.Network == nil {
		return nil, fmt.Errorf("the load balancer network of %s/%s is not resolved", in.Namespace, in.Cluster)
	}
	return planZones(in, r, base), nil
}

// baseDesired is what every load balancer of the cluster shares.
func baseDesired(in *Input) Desired {
	spec := in.section()
	base := Desired{
		Provider: ptr.Deref(spec.Provider, ""),
		Flavor:   ptr.Deref(spec.Flavor, ""),
		Ports:    Ports(in),
		Monitor:  monitorOf(spec.Monitor),
		Tags:     append(append([]string{}, in.Tags...), OwnerTag(in.Namespace, in.Cluster)),
	}
	if len(spec.AllowedCIDRs) > 0 {
		base.AllowedCIDRs = CanonicalCIDRs(spec.AllowedCIDRs, clusterSources(in))
	}
	switch {
	case spec.DNS != nil:
		base.HealthPoll = requeue.DNSHealth
	case in.PerZone():
		base.HealthPoll = requeue.ZoneHealth // a zone that fails leaves the control plane failure domains (HandOver)
	}
	return base
}

// FloatingIPOf is the floating IP of zone az's load balancer (az "" for the single one): the
// address the user gave it at path (apiServerFloatingIP for the first, or the zone's
// floatingIP), else one the controller allocates; nil without floating IPs.
func FloatingIPOf(in *Input, az string, user *string, path *field.Path) *FloatingIP {
	if !in.FloatingIPs() {
		return nil
	}
	f := &FloatingIP{ExternalNetworkID: in.ExternalNetwork.ID, Description: FloatingIPDescription(in.Namespace, in.Cluster, az)}
	if user != nil {
		f.Address, f.Field = *user, path
	}
	return f
}

// SingleFloatingIP is the floating IP of the single load balancer.
func SingleFloatingIP(in *Input) *FloatingIP {
	return FloatingIPOf(in, "", in.APIServerFloatingIP, field.NewPath("spec", "apiServerFloatingIP"))
}

// planSingle plans the single load balancer, and the removal of the zones' load balancers other
// than the one it continues (returning from availabilityZoneSubnets).
func planSingle(in *Input, r *Resolved, d Desired) *Plan {
	d.Name = Name(in.Namespace, in.Cluster, "")
	d.OctaviaAZ = ptr.Deref(in.section().AvailabilityZone, "")
	d.FloatingIP = SingleFloatingIP(in)
	known := in.Recorded.Single
	if known != nil && known.Name != d.Name {
		// Returning from availabilityZoneSubnets: the first zone's load balancer becomes the
		// single one again, under the legacy name.
		d.FormerNames = []string{known.Name}
	}
	if d.FloatingIP != nil {
		d.FloatingIP.TakenOver = []string{ownership.UpstreamDescription(in.Namespace, in.Cluster)}
	}
	plan := &Plan{}
	switch {
	case r.Refused[""] != nil:
		plan.Invalid = append(plan.Invalid, invalidOutcome("", r.Refused[""]))
		return plan
	case r.Network != nil:
		d.Network, d.Subnet = *r.Network, r.Subnets[""]
	case in.Network == nil:
		plan.Invalid = append(plan.Invalid, invalidOutcome("", &report.SpecError{Reason: infrav1.NetworkNotFoundReason, Message: "the cluster network is not known yet"}))
		return plan
	default:
		// Upstream's choice: the cluster network and its first subnet.
		d.Network = in.Network.NetworkStatus
		if len(in.Network.Subnets) > 0 {
			d.Subnet = &in.Network.Subnets[0]
		}
	}
	plan.Desired, plan.Known = []*Desired{&d}, []*infrav1.LoadBalancer{known}
	for _, e := range in.Recorded.Zones {
		if known == nil || e.AvailabilityZone != known.AvailabilityZone {
			plan.Stale = append(plan.Stale, e)
		}
	}
	return plan
}

// planZones plans one load balancer per mapping, with its VIP on the mapping's subnet, and the
// removal of those of zones that left the spec.
func planZones(in *Input, r *Resolved, base Desired) *Plan {
	plan := &Plan{}
	inSpec := map[string]bool{}
	// usedBy is the mapping that took each subnet first: two mappings whose different selectors
	// (an ID and a filter) resolve to one subnet would share a VIP subnet.
	usedBy := map[string]int{}
	for i, m := range in.Mappings() {
		inSpec[m.AvailabilityZone] = true
		d := base
		d.AvailabilityZone, d.OctaviaAZ = m.AvailabilityZone, m.AvailabilityZone
		d.Name = Name(in.Namespace, in.Cluster, m.AvailabilityZone)
		d.Network = *r.Network
		user, path := m.FloatingIP, LBPath.Child("availabilityZoneSubnets").Index(i).Child("floatingIP")
		if i == 0 && in.APIServerFloatingIP != nil {
			user, path = in.APIServerFloatingIP, field.NewPath("spec", "apiServerFloatingIP")
		}
		d.FloatingIP = FloatingIPOf(in, m.AvailabilityZone, user, path)
		if i == 0 {
			// The first zone inherits the legacy single load balancer, renamed, and its address.
			d.FormerNames = []string{Name(in.Namespace, in.Cluster, "")}
			if d.FloatingIP != nil {
				d.FloatingIP.TakenOver = []string{ownership.UpstreamDescription(in.Namespace, in.Cluster)}
			}
		}
		known := knownEntry(in, m.AvailabilityZone, i == 0)
		if err := r.Refused[m.AvailabilityZone]; err != nil {
			plan.Invalid = append(plan.Invalid, invalidOutcome(m.AvailabilityZone, err))
			continue
		}
		d.Subnet = r.Subnets[m.AvailabilityZone]
		if d.Subnet != nil {
			if first, taken := usedBy[d.Subnet.ID]; taken {
				plan.Invalid = append(plan.Invalid, invalidOutcome(m.AvailabilityZone, report.Refuted(infrav1.LoadBalancerConfigurationErrorReason, SubnetPath(i),
					"resolves to subnet %s (%s), which availabilityZoneSubnets[%d] (zone %s) already maps: each zone needs a subnet of its own",
					d.Subnet.Name, d.Subnet.ID, first, in.Mappings()[first].AvailabilityZone)))
				continue
			}
			usedBy[d.Subnet.ID] = i
		}
		plan.Desired, plan.Known = append(plan.Desired, &d), append(plan.Known, known)
	}
	for _, e := range in.Recorded.Zones {
		if !inSpec[e.AvailabilityZone] {
			plan.Stale = append(plan.Stale, e)
		}
	}
	return plan
}

// knownEntry is what the status recorded for zone az; the first zone inherits the legacy single
// load balancer while it has no entry of its own.
func knownEntry(in *Input, az string, first bool) *infrav1.LoadBalancer {
	known := EntryFor(in.Recorded.Zones, az)
	if known == nil && first && in.Recorded.Single != nil && in.Recorded.Single.AvailabilityZone == "" {
		known = in.Recorded.Single
	}
	return known
}

// firstZone is the zone of the first mapping, or "".
func (in *Input) firstZone() string {
	if m := in.Mappings(); len(m) > 0 {
		return m[0].AvailabilityZone
	}
	return ""
}

func invalidOutcome(az string, err error) Outcome {
	return Outcome{AvailabilityZone: az, State: StateInvalid, Outcome: outcome.Outcome{Reason: infrav1.LoadBalancerConfigurationErrorReason, Message: err.Error() + "; nothing is provisioned for it", RequeueAfter: requeue.Config}}
}

// EndpointProblem says what is wrong with the control plane endpoint of a cluster with one load
// balancer per availability zone, or "": it must be a DNS name, under which the operator publishes
// one A record per zone.
func EndpointProblem(in *Input) string {
	if !in.PerZone() {
		return ""
	}
	const what = "set spec.controlPlaneEndpoint.host to the DNS name under which you publish one A record per availability zone load balancer"
	ep := in.Endpoint
	if ep == nil || ep.Host == "" {
		return "availabilityZoneSubnets needs an explicit endpoint: " + what
	}
	if _, err := netip.ParseAddr(ep.Host); err == nil {
		return fmt.Sprintf("spec.controlPlaneEndpoint.host %s is an IP address, which can reach one load balancer only: %s", ep.Host, what)
	}
	return ""
}

// Ports are the ports every API server load balancer listens on: the API server port, then the
// additional ports, without duplicates.
func Ports(in *Input) []int {
	ports := []int{in.APIServerPort}
	for _, p := range in.section().AdditionalPorts {
		if p != ports[0] {
			ports = append(ports, p)
		}
	}
	return ports
}

// EntryFor is the entry of availability zone az among entries, or nil.
func EntryFor(entries []infrav1.LoadBalancer, az string) *infrav1.LoadBalancer {
	for i := range entries {
		if entries[i].AvailabilityZone == az {
			return &entries[i]
		}
	}
	return nil
}

func monitorOf(m *infrav1.APIServerLoadBalancerMonitor) infrav1.APIServerLoadBalancerMonitor {
	out := infrav1.APIServerLoadBalancerMonitor{Type: infrav1.MonitorTCP, Delay: 10, Timeout: 5, MaxRetries: 5, MaxRetriesDown: 3}
	if m != nil {
		if m.Delay > 0 {
			out.Delay = m.Delay
		}
		if m.Timeout > 0 {
			out.Timeout = m.Timeout
		}
		if m.MaxRetries > 0 {
			out.MaxRetries = m.MaxRetries
		}
		if m.MaxRetriesDown > 0 {
			out.MaxRetriesDown = m.MaxRetriesDown
		}
		if m.Type == infrav1.MonitorHTTPS {
			out.Type, out.URLPath, out.ExpectedCodes = infrav1.MonitorHTTPS, cmp.Or(m.URLPath, "/readyz"), cmp.Or(m.ExpectedCodes, "200")
		}
	}
	return out
}

// MonitorOf is the health monitor of port's pool: the API server port's (apiPort) as the spec
// says; the additional ports', which serve something else than the API server, always TCP with the
// spec's timing.
func MonitorOf(m infrav1.APIServerLoadBalancerMonitor, port, apiPort int) infrav1.APIServerLoadBalancerMonitor {
	if port != apiPort || m.Type != infrav1.MonitorHTTPS {
		m.Type, m.URLPath, m.ExpectedCodes = infrav1.MonitorTCP, "", ""
	}
	return m
}

// clusterSources are the addresses the cluster's own machines reach the API server from, which
// allowedCIDRs must not lock out: the cluster subnets, the zones' machine subnets
// (availabilityZoneMachineSubnets) and the router's external addresses (the source of traffic
// through a floating IP).
func clusterSources(in *Input) []string {
	var out []string
	if in.Network != nil {
		for _, s := range in.Network.Subnets {
			out = append(out, s.CIDR)
		}
	}
	for _, z := range in.MachineSubnets {
		out = append(out, z.Subnet.CIDR)
	}
	if in.Router != nil {
		out = append(out, in.Router.IPs...)
	}
	return out
}

// LBPath is spec.apiServerLoadBalancer, for messages.
var LBPath = field.NewPath("spec", "apiServerLoadBalancer")

// SubnetPath is mapping i's subnet, for messages; the zone is named beside it by the outcome's
// summary.
func SubnetPath(i int) *field.Path {
	return LBPath.Child("availabilityZoneSubnets").Index(i).Child("subnet")
}

// Entries are the status entries after a reconcile's outcomes: the per-zone list (upserted by
// zone, in spec order, then the zones being removed while their deletion is not done) and the
// single entry, which with availabilityZoneSubnets mirrors the first mapping's. What an outcome
// does not say (no load balancer found yet) keeps what the status recorded.
func (p *Plan) Entries(in *Input, outcomes []Outcome, staleDone bool) (zones []infrav1.LoadBalancer, single *infrav1.LoadBalancer) {
	single = in.Recorded.Single
	if !in.PerZone() {
		if len(outcomes) > 0 && outcomes[0].Status != nil {
			single = outcomes[0].Status
		}
		if !staleDone {
			zones = p.Stale
		}
		return zones, single
	}
	for _, m := range in.Mappings() {
		entry := EntryFor(in.Recorded.Zones, m.AvailabilityZone)
		for _, o := range outcomes {
			if o.AvailabilityZone == m.AvailabilityZone && o.Status != nil {
				entry = o.Status
			}
		}
		if entry != nil {
			zones = append(zones, *entry)
		}
	}
	if !staleDone {
		zones = append(zones, p.Stale...)
	}
	return zones, MirrorFirst(in, zones, single)
}

// MirrorFirst is the single status entry of a cluster with per-zone load balancers: a copy of
// the first mapped zone's entry once zones has one, else single as it was (the legacy load
// balancer, during a migration, until the first zone's entry exists).
func MirrorFirst(in *Input, zones []infrav1.LoadBalancer, single *infrav1.LoadBalancer) *infrav1.LoadBalancer {
	mapped := in.Mappings()
	if len(mapped) == 0 {
		return single // every zone found by tag refused (zoneDiscovery alone)
	}
	if e := EntryFor(zones, mapped[0].AvailabilityZone); e != nil {
		return e.DeepCopy()
	}
	return single
}
