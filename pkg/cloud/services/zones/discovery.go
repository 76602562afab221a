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
	"maps"
	"regexp"
	"slices"
	"strings"

	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// Zones found by tag (spec.apiServerLoadBalancer.zoneDiscovery): the subnets of the load
// balancer network tagged "<tagKey>=<zone>" and tagged for the cluster (Input.ClusterTag, the
// cluster's mark) map their zone, after the spec's own entries, which always win. What follows
// sees the discovered zones as mappings (Input.Mappings). A subnet with the zone tag alone is not
// the cluster's to use: anyone who may make a subnet on the network may tag one.

// zoneName is what an availability zone name may be (as availabilityZoneSubnets admits it).
var zoneName = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)

// Note is an event the zone rules ask the caller to record: a warning, or a normal event.
type Note struct {
	Warning  bool
	Reason   string
	Resource report.Resource
	Message  string
}

// Discovery is what the tags of the load balancer network's subnets map.
type Discovery struct {
	// Mappings are the zones found, each with its subnet by ID, in zone order: Input.Discovered.
	Mappings []infrav1.AZSubnetMapping
	// Invalid are the zones the tags name ambiguously, or with a name no zone can have.
	Invalid []Outcome
	// Notes are the events to record: a zone found for the first time, a zone kept on the
	// subnet of its load balancer while another subnet is tagged for it too.
	Notes []Note
}

// Discover maps the zones the tags of subnets (those of network, the load balancer network)
// name. Each zone goes to the one subnet tagged for it; a zone two subnets are tagged for is an
// error naming both, unless the status records its load balancer on one of them: then it stays
// there (a second tag must not delete a running zone), with a warning. A zone or subnet an entry
// of availabilityZoneSubnets maps is not discovered. The error is a report.SpecError when no
// subnet maps any zone and the spec maps none.
func Discover(in *Input, network *infrav1.NetworkStatus, subnets []infrav1.Subnet) (*Discovery, error) {
	lb := in.section()
	if !in.Enabled() || lb.ZoneDiscovery == nil {
		return &Discovery{}, nil
	}
	key := lb.ZoneDiscovery.TagKey
	if key == "" {
		key = infrav1.DefaultZoneTagKey
	}
	mappedZones, mappedSubnets := map[string]bool{}, map[string]bool{}
	for _, m := range lb.AvailabilityZoneSubnets {
		mappedZones[m.AvailabilityZone] = true
		if m.Subnet.ID != nil {
			mappedSubnets[*m.Subnet.ID] = true
		}
		if e := EntryFor(in.Recorded.Zones, m.AvailabilityZone); e != nil && e.LoadBalancerNetwork != nil {
			for _, sn := range e.LoadBalancerNetwork.Subnets {
				mappedSubnets[sn.ID] = true
			}
		}
	}
	byZone := map[string][]infrav1.Subnet{}
	d := &Discovery{}
	var ignored []string
	for _, sn := range subnets {
		for _, tag := range sn.Tags {
			zone, ok := strings.CutPrefix(tag, key+"=")
			if !ok || mappedZones[zone] || mappedSubnets[sn.ID] {
				continue
			}
			switch {
			case in.ClusterTag != "" && slices.Contains(sn.Tags, in.ClusterTag) && !in.ForeignSubnets[sn.ID]:
				byZone[zone] = append(byZone[zone], sn)
			case recordedOn(in, zone, sn.ID):
				// Found by a release that read the zone tag alone: the zone stays where its load
				// balancer runs (removing the zone would delete it), and the operator is told.
				byZone[zone] = append(byZone[zone], sn)
				d.Notes = append(d.Notes, Note{Warning: true, Reason: infrav1.LoadBalancerConfigurationErrorReason,
					Resource: report.Resource{Kind: "Subnet", Name: sn.Name, ID: sn.ID, Zone: zone},
					Message: fmt.Sprintf("subnet %s (%s) is tagged %s=%s but is not this cluster's to use (it lacks %s, this cluster's tag, or another project made it): zone %s stays on it because its load balancer is there; tag a subnet of your project for the zone and move the zone there",
						sn.Name, sn.ID, key, zone, in.ClusterTag, zone)})
			default:
				ignored = append(ignored, fmt.Sprintf("%s (%s, %s=%s)", sn.Name, sn.ID, key, zone))
			}
		}
	}
	if len(ignored) > 0 {
		d.Notes = append(d.Notes, Note{Warning: true, Reason: "SubnetNotTaggedForCluster",
			Resource: report.Resource{Kind: "Subnet"},
			Message: fmt.Sprintf("not used: %s of network %s carry a zone tag but not %s, this cluster's tag, or another project made them (tag a subnet of your project, or of the network's, with both to map its zone)",
				strings.Join(ignored, ", "), network.Name, in.ClusterTag)})
	}
	for _, zone := range slices.Sorted(maps.Keys(byZone)) {
		candidates := byZone[zone]
		chosen, problem := chooseZoneSubnet(in, zone, candidates, key, network.Name)
		switch {
		case problem != "":
			d.Invalid = append(d.Invalid, invalidOutcome(zone, report.Refuted(infrav1.LoadBalancerConfigurationErrorReason, LBPath.Child("zoneDiscovery"), "%s", problem)))
			continue
		case len(candidates) > 1:
			d.Notes = append(d.Notes, Note{Warning: true, Reason: infrav1.LoadBalancerConfigurationErrorReason,
				Resource: report.Resource{Kind: "Subnet", Name: chosen.Name, ID: chosen.ID, Zone: zone},
				Message:  fmt.Sprintf("%s: zone %s stays on subnet %s, where its load balancer is; remove the tag from the others", subnetsWords(candidates, key, zone, network.Name), zone, chosen.Name)})
		}
		d.Mappings = append(d.Mappings, infrav1.AZSubnetMapping{AvailabilityZone: zone, Subnet: infrav1.SubnetParam{ID: ptr.To(chosen.ID)}})
		if EntryFor(in.Recorded.Zones, zone) == nil {
			d.Notes = append(d.Notes, Note{Reason: "DiscoveredZone", Resource: report.Resource{Kind: "Subnet", Zone: zone},
				Message: fmt.Sprintf("Zone %s found by tag: its load balancer's VIP goes on subnet %s (%s)", zone, chosen.Name, chosen.ID)})
		}
	}
	if len(d.Mappings) == 0 && len(lb.AvailabilityZoneSubnets) == 0 && len(d.Invalid) == 0 {
		return nil, report.Refuted(infrav1.LoadBalancerConfigurationErrorReason, LBPath.Child("zoneDiscovery"),
			"no subnet of network %s carries a tag %s=<zone> and the tag %s: tag each zone's VIP subnet with both, or map the zones in availabilityZoneSubnets", network.Name, key, in.ClusterTag)
	}
	return d, nil
}

// recordedOn says whether the status records zone's load balancer on subnet id.
func recordedOn(in *Input, zone, id string) bool {
	e := EntryFor(in.Recorded.Zones, zone)
	return e != nil && e.LoadBalancerNetwork != nil &&
		slices.ContainsFunc(e.LoadBalancerNetwork.Subnets, func(sn infrav1.Subnet) bool { return sn.ID == id })
}

// chooseZoneSubnet is the subnet of zone among the candidates tagged for it, or why there is
// none: a name no zone can have, or two candidates and no load balancer on either.
func chooseZoneSubnet(in *Input, zone string, candidates []infrav1.Subnet, key, network string) (infrav1.Subnet, string) {
	if !zoneName.MatchString(zone) {
		return infrav1.Subnet{}, fmt.Sprintf("subnet %s (%s) of network %s is tagged %s=%s, which is not an availability zone name (letters, digits, '-', '_', '.', at most 63)",
			candidates[0].Name, candidates[0].ID, network, key, zone)
	}
	if len(candidates) == 1 {
		return candidates[0], ""
	}
	if e := EntryFor(in.Recorded.Zones, zone); e != nil && e.LoadBalancerNetwork != nil {
		for _, c := range candidates {
			if slices.ContainsFunc(e.LoadBalancerNetwork.Subnets, func(sn infrav1.Subnet) bool { return sn.ID == c.ID }) {
				return c, ""
			}
		}
	}
	return infrav1.Subnet{}, subnetsWords(candidates, key, zone, network) + ": remove the tag from all but one, or map the zone in availabilityZoneSubnets"
}

// subnetsWords says which subnets are tagged for one zone.
func subnetsWords(candidates []infrav1.Subnet, key, zone, network string) string {
	words := make([]string, len(candidates))
	for i, c := range candidates {
		words[i] = fmt.Sprintf("%s (%s)", c.Name, c.ID)
	}
	slices.Sort(words)
	return fmt.Sprintf("subnets %s of network %s are all tagged %s=%s", strings.Join(words, " and "), network, key, zone)
}
