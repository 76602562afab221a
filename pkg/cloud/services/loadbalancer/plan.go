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
	"net/netip"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// This file turns an OpenStackCluster's spec and status into the API server load balancers one
// reconcile converges: a single one, or one per availability zone with its VIP on the zone's
// mapped subnet, and those of zones that left the spec, to delete. It resolves the spec's
// network and subnets through a Resolver (Neutron), reusing what the status recorded; it never
// calls Octavia.

// Resolver finds what the spec names in Neutron; the networking service is one.
type Resolver interface {
	ResolveNetworkParam(ctx context.Context, param *infrav1.NetworkParam, path *field.Path) (*networks.Network, error)
	ResolveSubnet(ctx context.Context, param *infrav1.SubnetParam, networkID string, path *field.Path) (*subnets.Subnet, error)
	SubnetsOn(ctx context.Context, networkID string) ([]subnets.Subnet, error)
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

// NewPlan resolves the spec of osc, the infrastructure of Cluster namespace/cluster, into a Plan.
// What the status already records (the load balancer network, each zone's subnet) is reused
// without a call. An error is returned only for what concerns every zone (the load balancer
// network, an OpenStack failure); a zone's own problem is in Plan.Invalid.
func NewPlan(ctx context.Context, res Resolver, namespace, cluster string, osc *infrav1.OpenStackCluster) (*Plan, error) {
	base := baseDesired(namespace, cluster, osc)
	if !osc.Spec.APIServerLoadBalancersPerZone() {
		return planSingle(ctx, res, namespace, cluster, osc, base)
	}
	return planZones(ctx, res, namespace, cluster, osc, base)
}

// baseDesired is what every load balancer of the cluster shares.
func baseDesired(namespace, cluster string, osc *infrav1.OpenStackCluster) Desired {
	spec := osc.Spec.APIServerLoadBalancer
	base := Desired{
		Provider: ptr.Deref(spec.Provider, ""),
		Flavor:   ptr.Deref(spec.Flavor, ""),
		Ports:    Ports(&osc.Spec),
		Monitor:  monitorOf(spec.Monitor),
		Tags:     append(append([]string{}, osc.Spec.Tags...), OwnerTag(namespace, cluster)),
	}
	if len(spec.AllowedCIDRs) > 0 {
		base.AllowedCIDRs = CanonicalCIDRs(spec.AllowedCIDRs, clusterSources(&osc.Status))
	}
	if spec.DNS != nil {
		base.HealthPoll = DNSHealthPoll
	}
	return base
}

// floatingIPOf is the floating IP of zone az's load balancer (az "" for the single one): the
// address the user gave it at path (apiServerFloatingIP for the first, or the zone's
// floatingIP), else one the controller allocates; nil without floating IPs.
func floatingIPOf(namespace, cluster string, osc *infrav1.OpenStackCluster, az string, user *string, path *field.Path) *FloatingIP {
	if ptr.Deref(osc.Spec.DisableAPIServerFloatingIP, false) || osc.Status.ExternalNetwork == nil {
		return nil
	}
	f := &FloatingIP{ExternalNetworkID: osc.Status.ExternalNetwork.ID, Description: FloatingIPDescription(namespace, cluster, az)}
	if user != nil {
		f.Address, f.Field = *user, path
	}
	return f
}

// planSingle plans the single load balancer, and the removal of the zones' load balancers other
// than the one it continues (returning from availabilityZoneSubnets).
func planSingle(ctx context.Context, res Resolver, namespace, cluster string, osc *infrav1.OpenStackCluster, d Desired) (*Plan, error) {
	status := &osc.Status
	d.Name = Name(namespace, cluster, "")
	d.OctaviaAZ = ptr.Deref(osc.Spec.APIServerLoadBalancer.AvailabilityZone, "")
	d.FloatingIP = floatingIPOf(namespace, cluster, osc, "", osc.Spec.APIServerFloatingIP, field.NewPath("spec", "apiServerFloatingIP"))
	known := status.APIServerLoadBalancer
	if known != nil && known.Name != d.Name {
		// Returning from availabilityZoneSubnets: the first zone's load balancer becomes the
		// single one again, under the legacy name.
		d.FormerNames = []string{known.Name}
	}
	plan := &Plan{}
	if err := singleVIPPlacement(ctx, res, osc, &d); err != nil {
		if _, ok := report.AsSpecError(err); !ok {
			return nil, err
		}
		plan.Invalid = append(plan.Invalid, invalidOutcome("", err))
		return plan, nil
	}
	plan.Desired, plan.Known = []*Desired{&d}, []*infrav1.LoadBalancer{known}
	for _, e := range status.APIServerLoadBalancers {
		if known == nil || e.AvailabilityZone != known.AvailabilityZone {
			plan.Stale = append(plan.Stale, e)
		}
	}
	return plan, nil
}

// planZones plans one load balancer per mapping, with its VIP on the mapping's subnet, and the
// removal of those of zones that left the spec.
func planZones(ctx context.Context, res Resolver, namespace, cluster string, osc *infrav1.OpenStackCluster, base Desired) (*Plan, error) {
	status := &osc.Status
	network, err := zonesNetwork(ctx, res, osc)
	if err != nil {
		return nil, err
	}
	plan := &Plan{}
	inSpec := map[string]bool{}
	for i, m := range osc.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets {
		inSpec[m.AvailabilityZone] = true
		d := base
		d.AvailabilityZone, d.OctaviaAZ = m.AvailabilityZone, m.AvailabilityZone
		d.Name = Name(namespace, cluster, m.AvailabilityZone)
		d.Network = *network
		user, path := m.FloatingIP, lbPath.Child("availabilityZoneSubnets").Index(i).Child("floatingIP")
		if i == 0 && osc.Spec.APIServerFloatingIP != nil {
			user, path = osc.Spec.APIServerFloatingIP, field.NewPath("spec", "apiServerFloatingIP")
		}
		d.FloatingIP = floatingIPOf(namespace, cluster, osc, m.AvailabilityZone, user, path)
		known := entryFor(status.APIServerLoadBalancers, m.AvailabilityZone)
		if i == 0 {
			// The first zone inherits the legacy single load balancer, renamed.
			d.FormerNames = []string{Name(namespace, cluster, "")}
			if known == nil && status.APIServerLoadBalancer != nil && status.APIServerLoadBalancer.AvailabilityZone == "" {
				known = status.APIServerLoadBalancer
			}
		}
		subnet, err := mappedSubnet(ctx, res, network, known, &m, i)
		if err != nil {
			if _, ok := report.AsSpecError(err); !ok {
				return nil, err
			}
			plan.Invalid = append(plan.Invalid, invalidOutcome(m.AvailabilityZone, err))
			continue
		}
		d.Subnet = subnet
		plan.Desired, plan.Known = append(plan.Desired, &d), append(plan.Known, known)
	}
	for _, e := range status.APIServerLoadBalancers {
		if !inSpec[e.AvailabilityZone] {
			plan.Stale = append(plan.Stale, e)
		}
	}
	return plan, nil
}

func invalidOutcome(az string, err error) Outcome {
	return Outcome{AvailabilityZone: az, State: StateInvalid, Reason: infrav1.LoadBalancerConfigurationErrorReason,
		Message: err.Error() + "; nothing is provisioned for it", RequeueAfter: ConfigRequeue}
}

// EndpointProblem says what is wrong with the control plane endpoint of a cluster with one load
// balancer per availability zone, or "": it must be a DNS name, under which the operator publishes
// one A record per zone.
func EndpointProblem(spec *infrav1.OpenStackClusterSpec) string {
	if !spec.APIServerLoadBalancersPerZone() {
		return ""
	}
	const what = "set spec.controlPlaneEndpoint.host to the DNS name under which you publish one A record per availability zone load balancer"
	ep := spec.ControlPlaneEndpoint
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
func Ports(spec *infrav1.OpenStackClusterSpec) []int {
	ports := []int{spec.EffectiveAPIServerPort()}
	for _, p := range spec.APIServerLoadBalancer.AdditionalPorts {
		if p != ports[0] {
			ports = append(ports, p)
		}
	}
	return ports
}

func entryFor(entries []infrav1.LoadBalancer, az string) *infrav1.LoadBalancer {
	for i := range entries {
		if entries[i].AvailabilityZone == az {
			return &entries[i]
		}
	}
	return nil
}

func monitorOf(m *infrav1.APIServerLoadBalancerMonitor) infrav1.APIServerLoadBalancerMonitor {
	out := infrav1.APIServerLoadBalancerMonitor{Delay: 10, Timeout: 5, MaxRetries: 5, MaxRetriesDown: 3}
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
	}
	return out
}

// clusterSources are the addresses the cluster's own machines reach the API server from, which
// allowedCIDRs must not lock out: the cluster subnets and the router's external addresses (the
// source of traffic through a floating IP).
func clusterSources(status *infrav1.OpenStackClusterStatus) []string {
	var out []string
	if status.Network != nil {
		for _, s := range status.Network.Subnets {
			out = append(out, s.CIDR)
		}
	}
	if status.Router != nil {
		out = append(out, status.Router.IPs...)
	}
	return out
}

// singleVIPPlacement chooses the network and subnet of the single load balancer, as upstream
// does: apiServerLoadBalancer.network (with its first subnets entry) when set, otherwise the
// cluster network and its first subnet.
func singleVIPPlacement(ctx context.Context, res Resolver, osc *infrav1.OpenStackCluster, d *Desired) error {
	spec := osc.Spec.APIServerLoadBalancer
	if spec.Network == nil {
		if osc.Status.Network == nil {
			return &report.SpecError{Reason: infrav1.NetworkNotFoundReason, Message: "the cluster network is not known yet"}
		}
		d.Network = osc.Status.Network.NetworkStatus
		if len(osc.Status.Network.Subnets) > 0 {
			d.Subnet = &osc.Status.Network.Subnets[0]
		}
		return nil
	}
	if known := osc.Status.APIServerLoadBalancer; known != nil && known.LoadBalancerNetwork != nil && known.LoadBalancerNetwork.ID != "" &&
		(spec.Network.ID == nil || *spec.Network.ID == known.LoadBalancerNetwork.ID) {
		// Resolved when the load balancer was created; its VIP cannot move anyway.
		d.Network = known.LoadBalancerNetwork.NetworkStatus
		if len(known.LoadBalancerNetwork.Subnets) > 0 {
			d.Subnet = &known.LoadBalancerNetwork.Subnets[0]
		}
		return nil
	}
	n, err := res.ResolveNetworkParam(ctx, spec.Network, lbPath.Child("network"))
	if err != nil {
		return err
	}
	d.Network = infrav1.NetworkStatus{Name: n.Name, ID: n.ID, Tags: n.Tags}
	if len(spec.Subnets) > 0 {
		sn, err := res.ResolveSubnet(ctx, &spec.Subnets[0], n.ID, lbPath.Child("subnets").Index(0))
		if err != nil {
			return err
		}
		s := networking.SubnetStatus(sn)
		d.Subnet = &s
	}
	return nil
}

// zonesNetwork resolves apiServerLoadBalancer.network for availabilityZoneSubnets, reusing what
// the status recorded.
func zonesNetwork(ctx context.Context, res Resolver, osc *infrav1.OpenStackCluster) (*infrav1.NetworkStatus, error) {
	spec := osc.Spec.APIServerLoadBalancer
	entries := osc.Status.APIServerLoadBalancers
	if len(entries) > 0 && entries[0].LoadBalancerNetwork != nil && entries[0].LoadBalancerNetwork.ID != "" &&
		(spec.Network.ID == nil || *spec.Network.ID == entries[0].LoadBalancerNetwork.ID) {
		n := entries[0].LoadBalancerNetwork.NetworkStatus
		return &n, nil
	}
	n, err := res.ResolveNetworkParam(ctx, spec.Network, lbPath.Child("network"))
	if err != nil {
		return nil, err
	}
	return &infrav1.NetworkStatus{Name: n.Name, ID: n.ID, Tags: n.Tags}, nil
}

// lbPath is spec.apiServerLoadBalancer, for messages.
var lbPath = field.NewPath("spec", "apiServerLoadBalancer")

// zoneSubnetPath is mapping i's subnet, for messages; the zone is named beside it by the
// outcome's summary.
func zoneSubnetPath(i int) *field.Path {
	return lbPath.Child("availabilityZoneSubnets").Index(i).Child("subnet")
}

// mappedSubnet resolves the subnet of mapping i, which must be on the load balancer network. The
// subnet recorded in the zone's status entry is reused: a mapping's subnet cannot change.
func mappedSubnet(ctx context.Context, res Resolver, network *infrav1.NetworkStatus, known *infrav1.LoadBalancer, m *infrav1.AZSubnetMapping, i int) (*infrav1.Subnet, error) {
	if known != nil && known.AvailabilityZone == m.AvailabilityZone && known.LoadBalancerNetwork != nil &&
		known.LoadBalancerNetwork.ID == network.ID && len(known.LoadBalancerNetwork.Subnets) > 0 &&
		(m.Subnet.ID == nil || *m.Subnet.ID == known.LoadBalancerNetwork.Subnets[0].ID) {
		s := known.LoadBalancerNetwork.Subnets[0]
		return &s, nil
	}
	sn, err := res.ResolveSubnet(ctx, &m.Subnet, network.ID, zoneSubnetPath(i))
	if err != nil {
		return nil, err
	}
	s := networking.SubnetStatus(sn)
	return &s, nil
}

// entries are the status entries after a reconcile's outcomes: the per-zone list (upserted by
// zone, in spec order, then the zones being removed while their deletion is not done) and the
// single entry, which with availabilityZoneSubnets mirrors the first mapping's. What an outcome
// does not say (no load balancer found yet) keeps what the status recorded.
func (p *Plan) entries(osc *infrav1.OpenStackCluster, outcomes []Outcome, staleDone bool) (zones []infrav1.LoadBalancer, single *infrav1.LoadBalancer) {
	status := &osc.Status
	single = status.APIServerLoadBalancer
	if !osc.Spec.APIServerLoadBalancersPerZone() {
		if len(outcomes) > 0 && outcomes[0].Status != nil {
			single = outcomes[0].Status
		}
		if !staleDone {
			zones = p.Stale
		}
		return zones, single
	}
	for _, m := range osc.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets {
		entry := entryFor(status.APIServerLoadBalancers, m.AvailabilityZone)
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
	return zones, mirrorFirst(&osc.Spec, zones, single)
}

// mirrorFirst is the single status entry of a cluster with per-zone load balancers: a copy of
// the first mapped zone's entry once zones has one, else single as it was (the legacy load
// balancer, during a migration, until the first zone's entry exists).
func mirrorFirst(spec *infrav1.OpenStackClusterSpec, zones []infrav1.LoadBalancer, single *infrav1.LoadBalancer) *infrav1.LoadBalancer {
	mapped := spec.APIServerLoadBalancer.AvailabilityZoneSubnets
	if len(mapped) == 0 {
		return single // every zone found by tag refused (zoneDiscovery alone)
	}
	if e := entryFor(zones, mapped[0].AvailabilityZone); e != nil {
		return e.DeepCopy()
	}
	return single
}

// StaleRemoval is the deletion of the load balancers of the zones that left the spec.
func (p *Plan) StaleRemoval(namespace, cluster string, osc *infrav1.OpenStackCluster) *Removal {
	return removalOf(namespace, cluster, osc, p.Stale)
}

func removalOf(namespace, cluster string, osc *infrav1.OpenStackCluster, entries []infrav1.LoadBalancer) *Removal {
	r := &Removal{Namespace: namespace, Cluster: cluster, KeepAddresses: UserFloatingIPs(&osc.Spec)}
	if osc.Status.ExternalNetwork != nil {
		r.ExternalNetworkID = osc.Status.ExternalNetwork.ID
	}
	for _, e := range entries {
		r.Names = append(r.Names, Name(namespace, cluster, e.AvailabilityZone))
		if e.ID != "" {
			r.IDs = append(r.IDs, e.ID)
		}
	}
	return r
}

// UserFloatingIPs are the floating IP addresses the user gave the API server load balancers:
// apiServerFloatingIP and the zones' floatingIP. The controller never releases them.
func UserFloatingIPs(spec *infrav1.OpenStackClusterSpec) []string {
	var out []string
	if spec.APIServerFloatingIP != nil {
		out = append(out, *spec.APIServerFloatingIP)
	}
	if spec.APIServerLoadBalancer != nil {
		for _, m := range spec.APIServerLoadBalancer.AvailabilityZoneSubnets {
			if m.FloatingIP != nil {
				out = append(out, *m.FloatingIP)
			}
		}
	}
	return out
}

// ClusterRemoval is the deletion of every load balancer of the cluster: the legacy one, one per
// zone of the spec and of the status, and any other carrying the cluster's tag.
func ClusterRemoval(namespace, cluster string, osc *infrav1.OpenStackCluster) *Removal {
	r := removalOf(namespace, cluster, osc, osc.Status.APIServerLoadBalancers)
	r.AllTagged = true
	r.Names = append(r.Names, Name(namespace, cluster, ""))
	if osc.Spec.APIServerLoadBalancer != nil {
		for _, m := range osc.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets {
			r.Names = append(r.Names, Name(namespace, cluster, m.AvailabilityZone))
		}
	}
	if lb := osc.Status.APIServerLoadBalancer; lb != nil {
		r.Names = append(r.Names, lb.Name)
		if lb.ID != "" {
			r.IDs = append(r.IDs, lb.ID)
		}
	}
	return r
}
