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

package v1beta1

import (
	"bytes"
	"encoding/json"
	"strings"
)

// EffectiveAPIServerPort is the API server port: spec.apiServerPort, or DefaultAPIServerPort
// when it is not set.
func (s *OpenStackClusterSpec) EffectiveAPIServerPort() int {
	if s.APIServerPort == 0 {
		return DefaultAPIServerPort
	}
	return s.APIServerPort
}

// APIServerLoadBalancerEnabled says whether the spec asks for API server load balancers:
// apiServerLoadBalancer is set and not disabled.
func (s *OpenStackClusterSpec) APIServerLoadBalancerEnabled() bool {
	return s.APIServerLoadBalancer.IsEnabled()
}

// APIServerLoadBalancersPerZone says whether the spec asks for one API server load balancer per
// availability zone (availabilityZoneSubnets, or zoneDiscovery) rather than a single one.
func (s *OpenStackClusterSpec) APIServerLoadBalancersPerZone() bool {
	return s.APIServerLoadBalancer.IsPerZone()
}

// IsEnabled says whether lb asks for API server load balancers: set and not disabled.
func (lb *APIServerLoadBalancer) IsEnabled() bool {
	return lb != nil && (lb.Enabled == nil || *lb.Enabled)
}

// IsPerZone says whether lb asks for one load balancer per availability zone
// (availabilityZoneSubnets, or zoneDiscovery) rather than a single one.
func (lb *APIServerLoadBalancer) IsPerZone() bool {
	return lb.IsEnabled() && (len(lb.AvailabilityZoneSubnets) > 0 || lb.ZoneDiscovery != nil)
}

// AllAPIServerLoadBalancers are the API server load balancers the status records: one per
// availability zone, then the single one unless it is one of those (with availabilityZoneSubnets
// it mirrors the first zone's entry).
func (s *OpenStackClusterStatus) AllAPIServerLoadBalancers() []LoadBalancer {
	all := append([]LoadBalancer(nil), s.APIServerLoadBalancers...)
	if lb := s.APIServerLoadBalancer; lb != nil && lb.ID != "" {
		for _, e := range all {
			if e.ID == lb.ID {
				return all
			}
		}
		all = append(all, *lb)
	}
	return all
}

// UnmarshalJSON reads the status, whose failureDomains may also be the map (name -> failure
// domain) of the Cluster API v1beta1 contract that upstream CAPO v0.14 stored: such a status
// decodes with no failure domains, which the controller computes again and writes as the list
// the v1beta2 contract has, so that a cluster taken over from upstream is readable at once.
func (s *OpenStackClusterStatus) UnmarshalJSON(data []byte) error {
	type plain OpenStackClusterStatus
	var probe struct {
		FailureDomains json.RawMessage `json:"failureDomains"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return err
	}
	if fd := bytes.TrimSpace(probe.FailureDomains); len(fd) > 0 && fd[0] == '{' {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(data, &fields); err != nil {
			return err
		}
		delete(fields, "failureDomains")
		var err error
		if data, err = json.Marshal(fields); err != nil {
			return err
		}
	}
	return json.Unmarshal(data, (*plain)(s))
}

// MaxZoneMaintenanceBytes and MaxZonesInMaintenance bound the zone-maintenance annotation: the
// webhook refuses a longer one, and the controller reads no further (an annotation admitted
// before the bound, or with admission bypassed, costs the shared manager no more).
const (
	MaxZoneMaintenanceBytes = 4096
	MaxZonesInMaintenance   = 64
)

// ZonesInMaintenance are the availability zones the zone-maintenance annotation names, in its
// order, without blanks or repeats: at most MaxZonesInMaintenance, from its first
// MaxZoneMaintenanceBytes bytes. The webhook refuses a zone the spec does not map.
func (c *OpenStackCluster) ZonesInMaintenance() []string {
	value := c.Annotations[ZoneMaintenanceAnnotation]
	if len(value) > MaxZoneMaintenanceBytes {
		value = value[:MaxZoneMaintenanceBytes]
	}
	var zones []string
	seen := map[string]bool{}
	for z := range strings.SplitSeq(value, ",") {
		if z = strings.TrimSpace(z); z != "" && !seen[z] {
			if len(zones) == MaxZonesInMaintenance {
				break
			}
			seen[z] = true
			zones = append(zones, z)
		}
	}
	return zones
}

// BastionEnabled says whether the cluster keeps a bastion: spec.bastion is set with a spec, and
// enabled is not false.
func (s *OpenStackClusterSpec) BastionEnabled() bool {
	b := s.Bastion
	return b != nil && b.Spec != nil && (b.Enabled == nil || *b.Enabled)
}
