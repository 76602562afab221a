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
	"net/netip"
	"slices"
	"strings"

	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// The zone of a machine, and which load balancers a control plane machine joins.

// RequestedZone is the availability zone to ask Nova for a machine's server: its failure domain,
// unless the cluster lets Nova choose for the control plane (omitControlPlaneZone, which is
// spec.controlPlaneOmitAvailabilityZone).
func RequestedZone(omitControlPlaneZone, controlPlane bool, failureDomain string) string {
	if controlPlane && omitControlPlaneZone {
		return ""
	}
	return failureDomain
}

// MachineZone is the availability zone a machine is in: the one Nova placed its server in, or,
// while Nova does not say, the failure domain Cluster API gave it. (They differ only when Nova
// chose: see RequestedZone.)
func MachineZone(failureDomain, serverZone string) string {
	if serverZone != "" {
		return serverZone
	}
	return failureDomain
}

// Membership is where a control plane machine's membership of the API server load balancers
// stands.
type Membership struct {
	// Targets are the load balancers the machine must be a member of (see MemberTargets).
	Targets []infrav1.LoadBalancer
	// ZoneMissing means no load balancer serves the machine's zone, and the cross-zone policy
	// gives it none; ZonePlanned that the spec maps the zone, whose load balancer is not made yet.
	ZoneMissing, ZonePlanned bool
	// MappedZones lists the zones the spec maps, for messages.
	MappedZones string
	// SubnetID is the subnet to give Octavia with the machine's address (MemberSubnet).
	SubnetID string
	// Done means the machine is a member of exactly its targets.
	Done bool
	// Disabled means its members take no new connection: its zone is in maintenance.
	Disabled bool
}

// MembershipFor is the membership a control plane machine at address in availability zone zone
// (MachineZone) must have; Done is the caller's to say.
func MembershipFor(in *Input, zone, address string) Membership {
	m := Membership{MappedZones: MappedZonesWords(in)}
	m.Targets, m.ZoneMissing = MemberTargets(in.Recorded, zone, ptr.Deref(in.section().AllowCrossAZLoadBalancerMembers, false))
	m.ZonePlanned = m.ZoneMissing && ZoneMapped(in, zone)
	m.Disabled = ZoneDrained(in.Recorded.Zones, zone)
	m.SubnetID = MemberSubnet(in, m.Targets, address)
	return m
}

// MemberTargets are the load balancers a control plane machine in availability zone az must be
// a member of: with cross-AZ members, every zone's; otherwise its own zone's (and the former
// single load balancer's, while it keeps every zone's machines: ReleaseFormerSingle), or, when
// its zone has none, a load balancer without a zone (the single one, during a migration) as a
// fallback.
// Without per-zone load balancers it is the single one. zoneMissing reports a machine left
// without any load balancer, which the caller must report rather than ignore.
func MemberTargets(rec Recorded, az string, crossAZ bool) (targets []infrav1.LoadBalancer, zoneMissing bool) {
	zones := rec.Zones
	if len(zones) == 0 {
		if rec.Single != nil {
			return []infrav1.LoadBalancer{*rec.Single}, false
		}
		return nil, false
	}
	if crossAZ {
		return slices.Clone(zones), false
	}
	// The former single load balancer keeps every zone's machines while clients may still use
	// its address alone, whether or not their zone's own load balancer exists yet.
	var former *infrav1.LoadBalancer
	for i := range zones {
		if zones[i].FormerSingle != nil && zones[i].ID != "" {
			former = &zones[i]
		}
	}
	for _, e := range zones {
		if e.AvailabilityZone == az {
			if former != nil && former.AvailabilityZone != az {
				return []infrav1.LoadBalancer{e, *former}, false
			}
			return []infrav1.LoadBalancer{e}, false
		}
	}
	if former != nil {
		return []infrav1.LoadBalancer{*former}, false
	}
	all := slices.Clone(zones)
	if rec.Single != nil {
		all = append(all, *rec.Single)
	}
	for _, e := range all {
		if e.AvailabilityZone == "" && e.ID != "" {
			return []infrav1.LoadBalancer{e}, false
		}
	}
	return nil, true
}

// MappedZones are the availability zones that have, or are to have, a load balancer: those
// availabilityZoneSubnets maps and, with zoneDiscovery, those the status records (the zones found
// by tag are only known to the cluster's reconcile).
func MappedZones(in *Input) []string {
	var zones []string
	if !in.Enabled() {
		return nil
	}
	for _, m := range in.Mappings() {
		zones = append(zones, m.AvailabilityZone)
	}
	for _, e := range in.Recorded.Zones {
		if in.LoadBalancer.ZoneDiscovery != nil && e.AvailabilityZone != "" && !slices.Contains(zones, e.AvailabilityZone) {
			zones = append(zones, e.AvailabilityZone)
		}
	}
	return zones
}

// ZoneMapped says whether availability zone az has, or is to have, a load balancer.
func ZoneMapped(in *Input, az string) bool {
	return slices.Contains(MappedZones(in), az)
}

// MappedZonesWords lists the availability zones that have, or are to have, a load balancer, for
// messages.
func MappedZonesWords(in *Input) string {
	zones := MappedZones(in)
	if len(zones) == 0 {
		return "no zone"
	}
	return strings.Join(zones, ", ")
}

// UncoveredControlPlaneZones are the control plane failure domains whose machines would be a
// member of no API server load balancer: per-AZ load balancers, cross-AZ members off, no zone
// mapping for the failure domain and no single load balancer left to fall back on.
func UncoveredControlPlaneZones(in *Input) []string {
	if !in.PerZone() || ptr.Deref(in.LoadBalancer.AllowCrossAZLoadBalancerMembers, false) {
		return nil
	}
	if single := in.Recorded.Single; single != nil && single.ID != "" && single.AvailabilityZone == "" {
		return nil
	}
	var out []string
	for _, fd := range in.ControlPlaneZones {
		if !ZoneMapped(in, fd) {
			out = append(out, fd)
		}
	}
	return out
}

// ZonesWithoutCompute are the zones availabilityZoneSubnets maps (or that were found by tag) that
// Nova does not have: a typo (az-1 for az1), or a zone without hosts. No machine is ever placed
// there, so their load balancers never get a member. None until Nova's zones are known.
func ZonesWithoutCompute(in *Input) []string {
	if !in.PerZone() || in.ComputeZones == nil {
		return nil
	}
	var out []string
	for _, az := range MappedZones(in) {
		if !slices.Contains(in.ComputeZones, az) {
			out = append(out, az)
		}
	}
	return out
}

// MemberSubnet is the subnet of address (its zone's machine subnet, or a cluster subnet) when a
// target load balancer is on another network than that subnet's, so that Octavia reaches the
// member through it; "" when every target is on the member's network.
func MemberSubnet(in *Input, targets []infrav1.LoadBalancer, address string) string {
	ip, err := netip.ParseAddr(address)
	if err != nil {
		return ""
	}
	holds := func(cidr string) bool {
		prefix, err := netip.ParsePrefix(cidr)
		return err == nil && prefix.Contains(ip)
	}
	// The subnet that holds the address, and its network: a zone's machine subnet
	// (spec.availabilityZoneMachineSubnets), or else a subnet of the cluster network.
	network, subnet := "", ""
	for _, z := range in.MachineSubnets {
		if holds(z.Subnet.CIDR) {
			network, subnet = z.Network.ID, z.Subnet.ID
			break
		}
	}
	if cluster := in.Network; subnet == "" && cluster != nil {
		for _, sn := range cluster.Subnets {
			if holds(sn.CIDR) {
				network, subnet = cluster.ID, sn.ID
				break
			}
		}
	}
	elsewhere := slices.ContainsFunc(targets, func(t infrav1.LoadBalancer) bool {
		return t.LoadBalancerNetwork != nil && t.LoadBalancerNetwork.ID != network
	})
	if !elsewhere {
		return ""
	}
	return subnet
}
