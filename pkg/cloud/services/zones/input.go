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

// Package zones holds the rules of a cluster's API server load balancers, one per availability
// zone or a single one: which load balancers a reconcile wants (Plan), what "a zone can take
// traffic" means and what DNS publishes (Publication), planned maintenance, which load balancers
// a control plane machine joins, and the names that find them again in the cloud. It calls no
// cloud and reads no object: its input is an Input, built once per reconcile, and what the
// load balancer service found in Neutron and Octavia, passed in as values.
package zones

import (
	"time"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// Input is what the zone rules know of one cluster in one reconcile: the spec's load balancer
// section and the fields beside it that shape the load balancers, what the status recorded, and
// the network, external network and router as this reconcile found them.
type Input struct {
	// Namespace and Cluster name the Cluster (not the OpenStackCluster): the load balancers are
	// named after it.
	Namespace, Cluster string
	// ClusterTag is the OpenStackCluster's mark as a tag (ownership.Owner.Tag): a subnet found
	// by its zone tag is the cluster's to use only when it carries this one too.
	ClusterTag string
	// ForeignSubnets are the IDs of the load balancer network's subnets that a third project
	// made (neither the credential's nor the network owner's): never found by tag.
	ForeignSubnets map[string]bool
	// LoadBalancer is spec.apiServerLoadBalancer; nil or not enabled means no load balancer.
	LoadBalancer *infrav1.APIServerLoadBalancer
	// Endpoint is spec.controlPlaneEndpoint as the user wrote it (nil when not set).
	Endpoint *clusterv1.APIEndpoint
	// APIServerPort is the port the API servers listen on (spec.apiServerPort or its default).
	APIServerPort int
	// APIServerFloatingIP is spec.apiServerFloatingIP; DisableFloatingIP is
	// spec.disableAPIServerFloatingIP.
	APIServerFloatingIP *string
	DisableFloatingIP   bool
	// Tags are spec.tags, which every load balancer carries.
	Tags []string
	// Maintenance are the zones the zone-maintenance annotation names, in its order.
	Maintenance []string
	// ClientsMoved is the clients-moved annotation: the former single load balancer may let the
	// other zones' machines go.
	ClientsMoved bool
	// DNSRefused says the endpoint's DNS records are not published although the spec asks for
	// them (the operator's policy refuses the name, another object holds it, or ExternalDNS's CRD
	// is missing), as the last reconcile found: there are no records to wait for.
	DNSRefused bool
	// WithdrawingSince is when the zones began to leave DNS (the ZoneMaintenanceReady condition
	// turned ZoneWithdrawing); zero when they are not leaving.
	WithdrawingSince time.Time
	// Recorded is what the status recorded before this reconcile.
	Recorded Recorded
	// Network, ExternalNetwork and Router are as this reconcile found them (or as recorded,
	// until found); nil when there is none (yet).
	Network         *infrav1.NetworkStatusWithSubnets
	ExternalNetwork *infrav1.NetworkStatus
	Router          *infrav1.Router
	// MachineSubnets are spec.availabilityZoneMachineSubnets as resolved (the status's).
	MachineSubnets []infrav1.ZoneMachineSubnetStatus
	// ControlPlaneZones are the failure domains for control plane machines; ComputeZones are all
	// of them (Nova's availability zones), nil until they are read.
	ControlPlaneZones, ComputeZones []string
	// OmitControlPlaneZone is spec.controlPlaneOmitAvailabilityZone: Nova chooses the zone of
	// control plane servers.
	OmitControlPlaneZone bool
	// Discovered are the zones found by tag (Discover), appended to the spec's mappings by
	// Mappings. The load balancer service sets them after it listed the tagged subnets; nil
	// before, and without zoneDiscovery.
	Discovered []infrav1.AZSubnetMapping
}

// Recorded is what the status recorded of the load balancers: apiServerLoadBalancer and
// apiServerLoadBalancers.
type Recorded struct {
	Single *infrav1.LoadBalancer
	Zones  []infrav1.LoadBalancer
}

// Enabled says whether the cluster has an API server load balancer.
func (in *Input) Enabled() bool { return in.LoadBalancer.IsEnabled() }

// PerZone says whether the cluster has one load balancer per availability zone: mapped in
// availabilityZoneSubnets, or found by tag.
func (in *Input) PerZone() bool { return in.LoadBalancer.IsPerZone() }

// Mappings are the zones that get a load balancer, in order: availabilityZoneSubnets, then the
// zones found by tag.
func (in *Input) Mappings() []infrav1.AZSubnetMapping {
	if !in.Enabled() {
		return nil
	}
	if len(in.Discovered) == 0 {
		return in.LoadBalancer.AvailabilityZoneSubnets
	}
	return append(append([]infrav1.AZSubnetMapping{}, in.LoadBalancer.AvailabilityZoneSubnets...), in.Discovered...)
}

// FloatingIPs says whether the load balancers get floating IPs: not disabled, and the cluster
// has an external network.
func (in *Input) FloatingIPs() bool { return !in.DisableFloatingIP && in.ExternalNetwork != nil }

// section is the load balancer section, never nil, for reading optional fields.
func (in *Input) section() *infrav1.APIServerLoadBalancer {
	if in.LoadBalancer == nil {
		return &infrav1.APIServerLoadBalancer{}
	}
	return in.LoadBalancer
}

// All are every load balancer recorded: the zones' and the single one when it is not one of
// them (as OpenStackClusterStatus.AllAPIServerLoadBalancers).
func (r Recorded) All() []infrav1.LoadBalancer {
	status := infrav1.OpenStackClusterStatus{APIServerLoadBalancer: r.Single, APIServerLoadBalancers: r.Zones}
	return status.AllAPIServerLoadBalancers()
}
