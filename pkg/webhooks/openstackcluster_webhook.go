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

package webhooks

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-infrastructure-cluster-x-k8s-io-v1beta1-openstackcluster,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=infrastructure.cluster.x-k8s.io,resources=openstackclusters,versions=v1beta1,name=validation.openstackcluster.infrastructure.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

const immutableDetail = "cannot be changed after creation"

// OpenStackCluster validates OpenStackClusters. Creation is fully covered by the CRD schema and its
// CEL rules; this webhook enforces which fields may change afterwards.
type OpenStackCluster struct{}

var _ admission.Validator[*infrav1.OpenStackCluster] = &OpenStackCluster{}

// ValidateCreate accepts everything the schema accepted, and a zone-maintenance annotation that
// names zones the spec maps.
func (*OpenStackCluster) ValidateCreate(ctx context.Context, obj *infrav1.OpenStackCluster) (admission.Warnings, error) {
	if errs := validateMaintenance(obj); len(errs) > 0 {
		return nil, invalid(ctx, infrav1.GroupVersion.WithKind("OpenStackCluster").GroupKind(), obj.Name, errs)
	}
	return nil, nil
}

// validateMaintenance refuses a zone-maintenance annotation (infrav1.ZoneMaintenanceAnnotation)
// that names a zone spec.apiServerLoadBalancer.availabilityZoneSubnets does not map: a typo
// would otherwise take nothing out of service, silently. (CEL cannot read annotations.)
func validateMaintenance(osc *infrav1.OpenStackCluster) field.ErrorList {
	value, ok := osc.Annotations[infrav1.ZoneMaintenanceAnnotation]
	if !ok {
		return nil
	}
	path := field.NewPath("metadata", "annotations").Key(infrav1.ZoneMaintenanceAnnotation)
	if len(value) > infrav1.MaxZoneMaintenanceBytes {
		return field.ErrorList{field.TooLong(path, "", infrav1.MaxZoneMaintenanceBytes)}
	}
	if n := strings.Count(value, ",") + 1; n > infrav1.MaxZonesInMaintenance {
		return field.ErrorList{field.TooMany(path, n, infrav1.MaxZonesInMaintenance)}
	}
	if osc.Spec.APIServerLoadBalancerEnabled() && osc.Spec.APIServerLoadBalancer.ZoneDiscovery != nil {
		return nil // zones found by tag are known to the controller only; it ignores the others
	}
	var mapped []string
	if osc.Spec.APIServerLoadBalancersPerZone() {
		for _, m := range osc.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets {
			mapped = append(mapped, m.AvailabilityZone)
		}
	}
	var errs field.ErrorList
	for _, z := range osc.ZonesInMaintenance() {
		if !slices.Contains(mapped, z) && len(errs) < maxErrorsPerField {
			detail := fmt.Sprintf("zone %q is not in spec.apiServerLoadBalancer.availabilityZoneSubnets (%s): name zones of the comma-separated list as the spec maps them", z, strings.Join(mapped, ", "))
			if len(mapped) == 0 {
				detail = fmt.Sprintf("zone %q cannot be taken out of service: the cluster has no per-zone load balancers (spec.apiServerLoadBalancer.availabilityZoneSubnets is empty)", z)
			}
			errs = append(errs, field.Invalid(path, value, detail))
		}
	}
	return errs
}

// ValidateDelete accepts every deletion.
func (*OpenStackCluster) ValidateDelete(context.Context, *infrav1.OpenStackCluster) (admission.Warnings, error) {
	return nil, nil
}

// ValidateUpdate follows upstream CAPO's immutability of network and load balancer placement, and
// allows what the multi-AZ migration needs.
func (*OpenStackCluster) ValidateUpdate(ctx context.Context, oldObj, newObj *infrav1.OpenStackCluster) (admission.Warnings, error) {
	warnings, errs := validateClusterSpecUpdate(&oldObj.Spec, &newObj.Spec, &oldObj.Status)
	// The annotation is checked when it or the zones change: an object admitted before this
	// rule is not blocked in unrelated updates.
	if oldObj.Annotations[infrav1.ZoneMaintenanceAnnotation] != newObj.Annotations[infrav1.ZoneMaintenanceAnnotation] ||
		!equality.Semantic.DeepEqual(oldObj.Spec.APIServerLoadBalancer, newObj.Spec.APIServerLoadBalancer) {
		errs = append(errs, validateMaintenance(newObj)...)
	}
	if len(errs) > 0 {
		// The warnings describe what an accepted change would do; none of it happens.
		return nil, invalid(ctx, infrav1.GroupVersion.WithKind("OpenStackCluster").GroupKind(), newObj.Name, errs)
	}
	return warningsFor(ctx, warnings), nil
}

func validateClusterSpecUpdate(oldSpec, newSpec *infrav1.OpenStackClusterSpec, status *infrav1.OpenStackClusterStatus) (admission.Warnings, field.ErrorList) {
	specPath := field.NewPath("spec")
	// Work on copies: every allowed change is copied from newer into older, and what still
	// differs at the end is a change to an immutable field.
	older, newer := oldSpec.DeepCopy(), newSpec.DeepCopy()

	// Credentials may be rotated or moved to another Secret.
	older.IdentityRef = newer.IdentityRef

	// The endpoint may be set once; after that clients depend on it. One change is allowed: from
	// the load balancer's own address (what upstream CAPO writes there) to a DNS name.
	var endpointWarnings admission.Warnings
	if older.ControlPlaneEndpoint == nil || older.ControlPlaneEndpoint.Host == "" {
		older.ControlPlaneEndpoint = newer.ControlPlaneEndpoint
	} else if endpointAddressToName(older.ControlPlaneEndpoint, newer.ControlPlaneEndpoint, status) {
		endpointWarnings = append(endpointWarnings, fmt.Sprintf("spec.controlPlaneEndpoint.host: %s becomes %s here only: the Cluster keeps %s, "+
			"which stays the first zone's address; before clients use the name, point it at %s and add it to the API server certificate's SANs",
			older.ControlPlaneEndpoint.Host, newer.ControlPlaneEndpoint.Host, older.ControlPlaneEndpoint.Host, older.ControlPlaneEndpoint.Host))
		older.ControlPlaneEndpoint = newer.ControlPlaneEndpoint
	}

	// Without floating IPs, the fixed IP may be pinned once.
	if ptr.Deref(older.DisableAPIServerFloatingIP, false) && older.APIServerFixedIP == nil {
		older.APIServerFixedIP = newer.APIServerFixedIP
	}

	// The floating IP may be pinned to the address the controller already uses.
	if older.APIServerFloatingIP == nil && newer.APIServerFloatingIP != nil &&
		status.APIServerLoadBalancer != nil && status.APIServerLoadBalancer.IP == *newer.APIServerFloatingIP {
		older.APIServerFloatingIP = newer.APIServerFloatingIP
	}

	// Managed security groups may be turned on, and their rules changed, but not turned off:
	// the machines still use them.
	if newer.ManagedSecurityGroups != nil {
		older.ManagedSecurityGroups = newer.ManagedSecurityGroups
	}

	// The DNS servers of a managed subnet may change; subnets are matched by CIDR.
	for i := range older.ManagedSubnets {
		for j := range newer.ManagedSubnets {
			if older.ManagedSubnets[i].CIDR == newer.ManagedSubnets[j].CIDR {
				older.ManagedSubnets[i].DNSNameservers = newer.ManagedSubnets[j].DNSNameservers
			}
		}
	}

	// The primary subnet may change, as upstream allows: new machines and a new load balancer
	// follow it; an existing VIP stays where it is.
	older.PrimarySubnet = newer.PrimarySubnet

	// The bastion may change at any time, as upstream allows: a changed spec replaces it, and
	// enabled: false (or removing spec.bastion) deletes it.
	older.Bastion = newer.Bastion

	// Where control plane machines may go is a scheduling choice, not placement of existing
	// resources.
	older.ControlPlaneAvailabilityZones = newer.ControlPlaneAvailabilityZones
	older.ControlPlaneOmitAvailabilityZone = newer.ControlPlaneOmitAvailabilityZone

	// A network or subnet filter may be pinned to the ID it resolved to.
	if status.Network != nil {
		if newer.Network != nil && newer.Network.ID != nil && *newer.Network.ID == status.Network.ID {
			older.Network = newer.Network
		}
		if subnetsPinnedToStatus(older.Subnets, newer.Subnets, status.Network.Subnets) {
			older.Subnets = newer.Subnets
		}
	}

	var warnings admission.Warnings
	var errs field.ErrorList
	if older.APIServerLoadBalancer != nil && newer.APIServerLoadBalancer != nil {
		warnings, errs = allowLoadBalancerChanges(older.APIServerLoadBalancer, newer.APIServerLoadBalancer, specPath.Child("apiServerLoadBalancer"))
		errs = append(errs, keepFloatingIPZone(oldSpec, newSpec, specPath)...)
	}

	errs = append(errs, forbidChanges(specPath, older, newer, immutableDetail)...)
	return append(endpointWarnings, warnings...), errs
}

// endpointAddressToName says whether an endpoint change is the one allowed after it is set: the
// host was the single load balancer's floating IP or VIP, as upstream CAPO sets it, and becomes a
// DNS name, on the same port. Nothing in OpenStack changes; the name is what the records of one
// load balancer per zone are published under (docs/switching-from-upstream.md).
func endpointAddressToName(older, newer *clusterv1.APIEndpoint, status *infrav1.OpenStackClusterStatus) bool {
	if newer == nil || newer.Port != older.Port || newer.Host == "" || net.ParseIP(newer.Host) != nil || net.ParseIP(older.Host) == nil {
		return false
	}
	lb := status.APIServerLoadBalancer
	return lb != nil && (older.Host == lb.IP || older.Host == lb.InternalIP)
}

// allowLoadBalancerChanges copies the load balancer fields that may change from newer into older,
// and returns the errors of changes that are never allowed, with a message that says how to get
// there instead.
func allowLoadBalancerChanges(older, newer *infrav1.APIServerLoadBalancer, path *field.Path) (admission.Warnings, field.ErrorList) {
	older.AllowedCIDRs = newer.AllowedCIDRs
	older.Monitor = newer.Monitor
	older.AdditionalPorts = newer.AdditionalPorts
	older.AllowCrossAZLoadBalancerMembers = newer.AllowCrossAZLoadBalancerMembers
	older.WithdrawFailedZones = newer.WithdrawFailedZones
	older.DNS = newer.DNS

	var warnings admission.Warnings
	oldMap, newMap := older.AvailabilityZoneSubnets, newer.AvailabilityZoneSubnets
	errs := validateAZSubnetsUpdate(oldMap, newMap, path.Child("availabilityZoneSubnets"))
	if !equality.Semantic.DeepEqual(older.ZoneDiscovery, newer.ZoneDiscovery) {
		// Discovered zones come after the entries: with entries before and after, the first
		// zone (the one that carries the legacy load balancer) stays an entry.
		if len(oldMap) > 0 && len(newMap) > 0 {
			if older.ZoneDiscovery != nil && (newer.ZoneDiscovery == nil || newer.ZoneDiscovery.TagKey != older.ZoneDiscovery.TagKey) {
				warnings = append(warnings, fmt.Sprintf("%s: the load balancers of the zones found by the former tag that no entry maps will be deleted; remove their DNS A records first", path.Child("zoneDiscovery")))
			}
			older.ZoneDiscovery = newer.ZoneDiscovery
		} else {
			errs = append(errs, field.Forbidden(path.Child("zoneDiscovery"),
				"can be added, changed or removed only while availabilityZoneSubnets has entries before and after the change: a cluster moves to per-zone load balancers through availabilityZoneSubnets (its first entry takes over the existing load balancer), and zones found by tag come after"))
			older.ZoneDiscovery = newer.ZoneDiscovery
		}
	}

	if len(oldMap) == 0 && len(newMap) > 0 {
		// Migration from a single load balancer: the VIP network must now be explicit, and the
		// single-LB placement fields give way to the mapping (CEL forbids combining them).
		if older.Network == nil {
			older.Network = newer.Network
		}
		older.AvailabilityZone = newer.AvailabilityZone
		older.Subnets = newer.Subnets
		warnings = append(warnings, fmt.Sprintf(
			"%s: the existing API server load balancer is renamed to the %q availability zone's name and keeps its addresses; "+
				"publish a DNS A record for each new availability zone load balancer once it has an address", path.Child("availabilityZoneSubnets"), newMap[0].AvailabilityZone))
	}
	for _, removed := range removedZones(oldMap, newMap) {
		if len(newMap) == 0 && removed == oldMap[0].AvailabilityZone {
			warnings = append(warnings, fmt.Sprintf(
				"%s: the load balancer of availability zone %q becomes the single API server load balancer again, keeping its addresses; "+
					"point the DNS name at its address only", path.Child("availabilityZoneSubnets"), removed))
			continue
		}
		warnings = append(warnings, fmt.Sprintf(
			"%s: the load balancer of availability zone %q will be deleted; remove its DNS A record first", path.Child("availabilityZoneSubnets"), removed))
	}
	older.AvailabilityZoneSubnets = newMap
	return warnings, errs
}

// keepFloatingIPZone refuses to remove the first zone while other zones stay and
// apiServerFloatingIP is set: that address belongs to the first zone's load balancer, and the
// next zone's load balancer already has its own floating IP.
func keepFloatingIPZone(oldSpec, newSpec *infrav1.OpenStackClusterSpec, specPath *field.Path) field.ErrorList {
	if newSpec.APIServerFloatingIP == nil || *newSpec.APIServerFloatingIP == "" {
		return nil
	}
	oldMap, newMap := oldSpec.APIServerLoadBalancer.AvailabilityZoneSubnets, newSpec.APIServerLoadBalancer.AvailabilityZoneSubnets
	if len(oldMap) == 0 || len(newMap) == 0 || newMap[0].AvailabilityZone == oldMap[0].AvailabilityZone {
		return nil
	}
	if slices.Contains(removedZones(oldMap, newMap), oldMap[0].AvailabilityZone) {
		return field.ErrorList{field.Forbidden(specPath.Child("apiServerLoadBalancer", "availabilityZoneSubnets"), fmt.Sprintf(
			"availability zone %q carries spec.apiServerFloatingIP %s and cannot be removed while other zones stay; "+
				"remove all zones to return to a single load balancer, or keep %q", oldMap[0].AvailabilityZone, *newSpec.APIServerFloatingIP, oldMap[0].AvailabilityZone))}
	}
	return nil
}

// validateAZSubnetsUpdate rejects changes that would silently move an existing load balancer: a new
// subnet for a zone that stays, and a new order for the zones that stay (the first zone's load
// balancer is the one that inherits the legacy load balancer, its status mirror and the user's
// floating IP).
func validateAZSubnetsUpdate(oldMap, newMap []infrav1.AZSubnetMapping, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	oldByZone := make(map[string]infrav1.AZSubnetMapping, len(oldMap))
	for _, m := range oldMap {
		oldByZone[m.AvailabilityZone] = m
	}
	var keptInNewOrder []string
	for i, m := range newMap {
		prev, kept := oldByZone[m.AvailabilityZone]
		if !kept {
			continue
		}
		keptInNewOrder = append(keptInNewOrder, m.AvailabilityZone)
		if !equality.Semantic.DeepEqual(prev.Subnet, m.Subnet) {
			errs = append(errs, field.Forbidden(path.Index(i).Child("subnet"), fmt.Sprintf(
				"the subnet of availability zone %q cannot be changed in place, because that replaces its load balancer and changes its address; "+
					"to move it, remove its DNS A record, remove the %q entry and wait for its load balancer to be deleted, then add the entry back with the new subnet",
				m.AvailabilityZone, m.AvailabilityZone)))
		}
		if !equality.Semantic.DeepEqual(prev.FloatingIP, m.FloatingIP) {
			errs = append(errs, field.Forbidden(path.Index(i).Child("floatingIP"), fmt.Sprintf(
				"the floating IP of availability zone %q cannot be set, changed or removed on an existing zone, because its load balancer holds the address it was given; "+
					"to give the zone another address, remove its DNS A record, remove the %q entry and wait for its load balancer to be deleted, then add the entry back",
				m.AvailabilityZone, m.AvailabilityZone)))
		}
	}
	var keptInOldOrder []string
	for _, m := range oldMap {
		if slices.Contains(keptInNewOrder, m.AvailabilityZone) {
			keptInOldOrder = append(keptInOldOrder, m.AvailabilityZone)
		}
	}
	firstMoved := len(oldMap) > 0 && len(keptInOldOrder) > 0 && keptInOldOrder[0] == oldMap[0].AvailabilityZone && newMap[0].AvailabilityZone != oldMap[0].AvailabilityZone
	if !slices.Equal(keptInOldOrder, keptInNewOrder) || firstMoved {
		errs = append(errs, field.Forbidden(path, fmt.Sprintf(
			"existing entries must keep their order and %q must stay first: the first entry's load balancer carries status.apiServerLoadBalancer and spec.apiServerFloatingIP; add new zones after it",
			oldMap[0].AvailabilityZone)))
	}
	return errs
}

func removedZones(oldMap, newMap []infrav1.AZSubnetMapping) []string {
	var removed []string
	for _, o := range oldMap {
		if !slices.ContainsFunc(newMap, func(n infrav1.AZSubnetMapping) bool { return n.AvailabilityZone == o.AvailabilityZone }) {
			removed = append(removed, o.AvailabilityZone)
		}
	}
	return removed
}

// subnetsPinnedToStatus reports whether newer differs from older only by replacing entries with
// the IDs of subnets the controller already uses.
func subnetsPinnedToStatus(older, newer []infrav1.SubnetParam, inUse []infrav1.Subnet) bool {
	if len(older) != len(newer) {
		return false
	}
	for i := range newer {
		if equality.Semantic.DeepEqual(older[i], newer[i]) {
			continue
		}
		if newer[i].ID == nil || !slices.ContainsFunc(inUse, func(s infrav1.Subnet) bool { return s.ID == *newer[i].ID }) {
			return false
		}
	}
	return true
}
