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
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// Zones found by tag (spec.apiServerLoadBalancer.zoneDiscovery): the subnets of the load
// balancer network tagged "<tagKey>=<zone>" map their zone, after the spec's own entries, which
// always win. What follows sees the discovered zones as entries of availabilityZoneSubnets.

// DiscoveryPoll is how often a cluster with zoneDiscovery reads its subnets' tags again when
// nothing else brings its reconcile sooner.
const DiscoveryPoll = time.Minute

// zoneName is what an availability zone name may be (as availabilityZoneSubnets admits it).
var zoneName = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)

// discovery is what the tags of the load balancer network's subnets map.
type discovery struct {
	// view is osc with the discovered zones appended to availabilityZoneSubnets (osc itself
	// when nothing is discovered); osc is never changed.
	view *infrav1.OpenStackCluster
	// invalid are the zones the tags name ambiguously, or with a name no zone can have.
	invalid []Outcome
	// found names each discovered zone with its subnet, for events.
	found map[string]string
}

// discoverZones maps the zones the tags name. Each zone goes to the one subnet tagged for it; a
// zone two subnets are tagged for is an error naming both, unless the status records its load
// balancer on one of them: then it stays there (a second tag must not delete a running zone),
// with a warning. A zone or subnet an entry of availabilityZoneSubnets maps is not discovered.
func (s *Service) discoverZones(ctx context.Context, res Resolver, osc *infrav1.OpenStackCluster) (*discovery, error) {
	lb := osc.Spec.APIServerLoadBalancer
	if !osc.Spec.APIServerLoadBalancerEnabled() || lb.ZoneDiscovery == nil {
		return &discovery{view: osc}, nil
	}
	network, err := zonesNetwork(ctx, res, osc)
	if err != nil {
		return nil, err
	}
	all, err := res.SubnetsOn(ctx, network.ID)
	if err != nil {
		return nil, err
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
		if e := entryFor(osc.Status.APIServerLoadBalancers, m.AvailabilityZone); e != nil && e.LoadBalancerNetwork != nil {
			for _, sn := range e.LoadBalancerNetwork.Subnets {
				mappedSubnets[sn.ID] = true
			}
		}
	}
	byZone := map[string][]subnets.Subnet{}
	for _, sn := range all {
		for _, tag := range sn.Tags {
			zone, ok := strings.CutPrefix(tag, key+"=")
			if ok && !mappedZones[zone] && !mappedSubnets[sn.ID] {
				byZone[zone] = append(byZone[zone], sn)
			}
		}
	}
	d := &discovery{found: map[string]string{}}
	var discovered []infrav1.AZSubnetMapping
	for _, zone := range sortedKeys(byZone) {
		candidates := byZone[zone]
		chosen, problem := chooseZoneSubnet(osc, zone, candidates, key, network.Name)
		switch {
		case problem != "":
			d.invalid = append(d.invalid, invalidOutcome(zone, report.Refuted(infrav1.LoadBalancerConfigurationErrorReason, lbPath.Child("zoneDiscovery"), "%s", problem)))
			continue
		case len(candidates) > 1:
			s.report.Warn(infrav1.LoadBalancerConfigurationErrorReason, report.Resource{Kind: "Subnet", Name: chosen.Name, ID: chosen.ID, Zone: zone},
				"%s: zone %s stays on subnet %s, where its load balancer is; remove the tag from the others", subnetsWords(candidates, key, zone, network.Name), zone, chosen.Name)
		}
		discovered = append(discovered, infrav1.AZSubnetMapping{AvailabilityZone: zone, Subnet: infrav1.SubnetParam{ID: ptr.To(chosen.ID)}})
		d.found[zone] = fmt.Sprintf("%s (%s)", chosen.Name, chosen.ID)
	}
	if len(discovered) == 0 && len(lb.AvailabilityZoneSubnets) == 0 && len(d.invalid) == 0 {
		return nil, report.Refuted(infrav1.LoadBalancerConfigurationErrorReason, lbPath.Child("zoneDiscovery"),
			"no subnet of network %s carries a tag %s=<zone>: tag each zone's VIP subnet, or map the zones in availabilityZoneSubnets", network.Name, key)
	}
	d.view = osc.DeepCopy()
	d.view.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets = append(d.view.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets, discovered...)
	return d, nil
}

// chooseZoneSubnet is the subnet of zone among the candidates tagged for it, or why there is
// none: a name no zone can have, or two candidates and no load balancer on either.
func chooseZoneSubnet(osc *infrav1.OpenStackCluster, zone string, candidates []subnets.Subnet, key, network string) (subnets.Subnet, string) {
	if !zoneName.MatchString(zone) {
		return subnets.Subnet{}, fmt.Sprintf("subnet %s (%s) of network %s is tagged %s=%s, which is not an availability zone name (letters, digits, '-', '_', '.', at most 63)",
			candidates[0].Name, candidates[0].ID, network, key, zone)
	}
	if len(candidates) == 1 {
		return candidates[0], ""
	}
	if e := entryFor(osc.Status.APIServerLoadBalancers, zone); e != nil && e.LoadBalancerNetwork != nil {
		for _, c := range candidates {
			if slices.ContainsFunc(e.LoadBalancerNetwork.Subnets, func(sn infrav1.Subnet) bool { return sn.ID == c.ID }) {
				return c, ""
			}
		}
	}
	return subnets.Subnet{}, subnetsWords(candidates, key, zone, network) + ": remove the tag from all but one, or map the zone in availabilityZoneSubnets"
}

// subnetsWords says which subnets are tagged for one zone.
func subnetsWords(candidates []subnets.Subnet, key, zone, network string) string {
	words := make([]string, len(candidates))
	for i, c := range candidates {
		words[i] = fmt.Sprintf("%s (%s)", c.Name, c.ID)
	}
	slices.Sort(words)
	return fmt.Sprintf("subnets %s of network %s are all tagged %s=%s", strings.Join(words, " and "), network, key, zone)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
