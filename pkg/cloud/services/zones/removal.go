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

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// What a deletion removes: the load balancers of zones that left the spec, or all of a
// cluster's, and the floating IPs the controller allocated for them, never the user's.

// Removal says which load balancers to delete and which floating IP to keep.
type Removal struct {
	Namespace, Cluster string
	// Names are the load balancer names to delete; load balancers carrying the cluster's
	// OwnerTag are deleted too when AllTagged is set (cluster deletion).
	Names     []string
	IDs       []string
	AllTagged bool
	// KeepAddresses are the user's floating IPs (apiServerFloatingIP, the zones' floatingIP),
	// never released.
	KeepAddresses []string
	// ExternalNetworkID, when set, is where the controller's floating IPs are looked for once the
	// load balancers are gone; when empty, they are looked for among all the project's.
	ExternalNetworkID string
}

// ZoneOf is the availability zone a load balancer of the removal serves, "" when none.
func (r *Removal) ZoneOf(name string) string {
	az, _ := ZoneOfName(name, r.Namespace, r.Cluster)
	return az
}

// StaleRemoval is the deletion of the load balancers of the zones that left the spec.
func (p *Plan) StaleRemoval(in *Input) *Removal {
	return removalOf(in, p.Stale)
}

func removalOf(in *Input, entries []infrav1.LoadBalancer) *Removal {
	r := &Removal{Namespace: in.Namespace, Cluster: in.Cluster, KeepAddresses: UserFloatingIPs(in)}
	if in.ExternalNetwork != nil {
		r.ExternalNetworkID = in.ExternalNetwork.ID
	}
	for _, e := range entries {
		r.Names = append(r.Names, Name(in.Namespace, in.Cluster, e.AvailabilityZone))
		if e.ID != "" {
			r.IDs = append(r.IDs, e.ID)
		}
	}
	return r
}

// UserFloatingIPs are the floating IP addresses the user gave the API server load balancers:
// apiServerFloatingIP and the zones' floatingIP. The controller never releases them.
func UserFloatingIPs(in *Input) []string {
	var out []string
	if in.APIServerFloatingIP != nil {
		out = append(out, *in.APIServerFloatingIP)
	}
	for _, m := range in.section().AvailabilityZoneSubnets {
		if m.FloatingIP != nil {
			out = append(out, *m.FloatingIP)
		}
	}
	return out
}

// ClusterRemoval is the deletion of every load balancer of the cluster: the legacy one, one per
// zone of the spec and of the status, and any other carrying the cluster's tag.
func ClusterRemoval(in *Input) *Removal {
	r := removalOf(in, in.Recorded.Zones)
	r.AllTagged = true
	r.Names = append(r.Names, Name(in.Namespace, in.Cluster, ""))
	for _, m := range in.section().AvailabilityZoneSubnets {
		r.Names = append(r.Names, Name(in.Namespace, in.Cluster, m.AvailabilityZone))
	}
	if lb := in.Recorded.Single; lb != nil {
		r.Names = append(r.Names, lb.Name)
		if lb.ID != "" {
			r.IDs = append(r.IDs, lb.ID)
		}
	}
	return r
}

// VIPsOffClusterNetwork says whether every API server load balancer the status records has its
// VIP on a network other than the cluster network, so that the network may be deleted while
// Octavia deletes them. When in doubt it says no.
func VIPsOffClusterNetwork(in *Input) bool {
	if in.Network == nil || len(in.Recorded.Zones) == 0 || in.APIServerFloatingIP != nil {
		return false
	}
	clusterSubnet := func(id string) bool {
		return slices.ContainsFunc(in.Network.Subnets, func(s infrav1.Subnet) bool { return s.ID == id })
	}
	for _, e := range in.Recorded.All() {
		n := e.LoadBalancerNetwork
		if n == nil || n.ID == "" || n.ID == in.Network.ID || len(n.Subnets) == 0 {
			return false
		}
		// A load balancer adopted during a migration keeps its VIP where it was, which the
		// status records as its subnet.
		if slices.ContainsFunc(n.Subnets, func(s infrav1.Subnet) bool { return clusterSubnet(s.ID) }) {
			return false
		}
	}
	return true
}
