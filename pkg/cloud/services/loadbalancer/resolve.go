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

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

// The plan step of a cluster's reconcile: what the zone rules need from Neutron (the load
// balancer network, the subnets tagged for a zone, each zone's subnet), asked for here, once,
// where the status has not recorded it already (zones.RecordedNetwork, zones.RecordedSubnet).

// Resolver finds what the spec names in Neutron; the networking service is one.
type Resolver interface {
	ResolveNetworkParam(ctx context.Context, param *infrav1.NetworkParam, path *field.Path) (*networks.Network, error)
	ResolveSubnet(ctx context.Context, param *infrav1.SubnetParam, networkID string, path *field.Path) (*subnets.Subnet, error)
	SubnetsOn(ctx context.Context, networkID string) ([]subnets.Subnet, map[string]bool, error)
	IsExternal(ctx context.Context, networkID string) (bool, error)
}

// planFor resolves what the plan of in needs and makes it. It returns in with the zones found by tag
// (Input.Discovered), the plan with the zones the tags name wrongly among its Invalid, and the
// events discovery noted. An error concerns every zone (the load balancer network, an OpenStack
// failure); a zone's own problem is in the plan's Invalid.
func planFor(ctx context.Context, res Resolver, in *zones.Input) (*zones.Input, *zones.Plan, []zones.Note, error) {
	resolved := &zones.Resolved{Subnets: map[string]*infrav1.Subnet{}, Refused: map[string]error{}}
	if !in.PerZone() {
		if err := resolveSingle(ctx, res, in, resolved); err != nil {
			return nil, nil, nil, err
		}
		plan, err := zones.NewPlan(in, resolved)
		return in, plan, nil, err
	}
	network, err := lbNetwork(ctx, res, in)
	if err != nil {
		return nil, nil, nil, err
	}
	resolved.Network = network
	found := &zones.Discovery{}
	if in.LoadBalancer.ZoneDiscovery != nil {
		all, foreign, err := res.SubnetsOn(ctx, network.ID)
		if err != nil {
			return nil, nil, nil, err
		}
		tagged := make([]infrav1.Subnet, len(all))
		for i := range all {
			tagged[i] = networking.SubnetStatus(&all[i])
		}
		withForeign := *in
		withForeign.ForeignSubnets = foreign
		if found, err = zones.Discover(&withForeign, network, tagged); err != nil {
			return nil, nil, nil, err
		}
		withFound := *in
		withFound.Discovered = found.Mappings
		in = &withFound
	}
	for i, m := range in.Mappings() {
		if known := zones.RecordedSubnet(in, network, &m); known != nil {
			resolved.Subnets[m.AvailabilityZone] = known
			continue
		}
		sn, err := res.ResolveSubnet(ctx, &m.Subnet, network.ID, zones.SubnetPath(i))
		if err != nil {
			if _, ok := report.AsSpecError(err); !ok {
				return nil, nil, nil, err
			}
			resolved.Refused[m.AvailabilityZone] = err
			continue
		}
		status := networking.SubnetStatus(sn)
		resolved.Subnets[m.AvailabilityZone] = &status
	}
	plan, err := zones.NewPlan(in, resolved)
	if err != nil {
		return nil, nil, nil, err
	}
	plan.Invalid = append(plan.Invalid, found.Invalid...)
	return in, plan, found.Notes, nil
}

// lbNetwork is apiServerLoadBalancer.network: as recorded, or resolved.
func lbNetwork(ctx context.Context, res Resolver, in *zones.Input) (*infrav1.NetworkStatus, error) {
	if known := zones.RecordedNetwork(in); known != nil {
		n := known.NetworkStatus
		return &n, nil
	}
	n, err := res.ResolveNetworkParam(ctx, in.LoadBalancer.Network, zones.LBPath.Child("network"))
	if err != nil {
		return nil, err
	}
	if err := notExternal(ctx, res, n); err != nil {
		return nil, err
	}
	return &infrav1.NetworkStatus{Name: n.Name, ID: n.ID, Tags: n.Tags}, nil
}

// notExternal refuses an external network (router:external) as the load balancer network: the
// VIPs and their subnets are the operator's internal network, reached from outside through the
// floating IPs of the external one. Asked once, when the network is resolved (not recorded).
func notExternal(ctx context.Context, res Resolver, n *networks.Network) error {
	external, err := res.IsExternal(ctx, n.ID)
	if err != nil {
		return err
	}
	if external {
		return report.Refuted(infrav1.LoadBalancerConfigurationErrorReason, zones.LBPath.Child("network"),
			"network %s (%s) is an external network (router:external): name the internal network the load balancers' VIP subnets are on", n.Name, n.ID)
	}
	return nil
}

// resolveSingle resolves the network and subnet of the single load balancer when the spec names
// them (apiServerLoadBalancer.network, with its first subnets entry), as upstream does; without
// them, the VIP goes on the cluster network, which the plan takes from the input. A reference
// the cloud refutes is the single zone's refusal; any other failure is returned.
func resolveSingle(ctx context.Context, res Resolver, in *zones.Input, r *zones.Resolved) error {
	spec := in.LoadBalancer
	if spec.Network == nil {
		return nil
	}
	if known := zones.RecordedNetwork(in); known != nil {
		// Resolved when the load balancer was created; its VIP cannot move anyway.
		r.Network = &known.NetworkStatus
		if len(known.Subnets) > 0 {
			r.Subnets[""] = &known.Subnets[0]
		}
		return nil
	}
	refuse := func(err error) error {
		if _, ok := report.AsSpecError(err); ok {
			r.Refused[""] = err
			return nil
		}
		return err
	}
	n, err := res.ResolveNetworkParam(ctx, spec.Network, zones.LBPath.Child("network"))
	if err == nil {
		err = notExternal(ctx, res, n)
	}
	if err != nil {
		return refuse(err)
	}
	r.Network = &infrav1.NetworkStatus{Name: n.Name, ID: n.ID, Tags: n.Tags}
	if len(spec.Subnets) > 0 {
		sn, err := res.ResolveSubnet(ctx, &spec.Subnets[0], n.ID, zones.LBPath.Child("subnets").Index(0))
		if err != nil {
			return refuse(err)
		}
		status := networking.SubnetStatus(sn)
		r.Subnets[""] = &status
	}
	return nil
}
