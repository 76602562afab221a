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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cluster-api/util/conditions"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

// InputOf is what the zone rules know of osc, the infrastructure of Cluster cluster (in osc's
// namespace), in one reconcile: its spec's load balancer section and the fields beside it, what
// its status recorded, and the network, external network and router as this reconcile found them.
// The controllers build it once per reconcile; nothing writes it back to the object.
func InputOf(osc *infrav1.OpenStackCluster, cluster string, network *infrav1.NetworkStatusWithSubnets, external *infrav1.NetworkStatus, router *infrav1.Router) *zones.Input {
	in := &zones.Input{
		Namespace:            osc.Namespace,
		Cluster:              cluster,
		ClusterTag:           ownership.Owner{Kind: "OpenStackCluster", Namespace: osc.Namespace, Name: osc.Name}.Tag(),
		LoadBalancer:         osc.Spec.APIServerLoadBalancer,
		Endpoint:             osc.Spec.ControlPlaneEndpoint,
		APIServerPort:        osc.Spec.EffectiveAPIServerPort(),
		APIServerFloatingIP:  osc.Spec.APIServerFloatingIP,
		DisableFloatingIP:    ptr.Deref(osc.Spec.DisableAPIServerFloatingIP, false),
		Tags:                 osc.Spec.Tags,
		Maintenance:          osc.ZonesInMaintenance(),
		ClientsMoved:         osc.Annotations[infrav1.ClientsMovedAnnotation] == "true",
		Recorded:             zones.Recorded{Single: osc.Status.APIServerLoadBalancer, Zones: osc.Status.APIServerLoadBalancers},
		Network:              network,
		ExternalNetwork:      external,
		Router:               router,
		MachineSubnets:       osc.Status.AvailabilityZoneMachineSubnets,
		OmitControlPlaneZone: ptr.Deref(osc.Spec.ControlPlaneOmitAvailabilityZone, false),
	}
	switch conditions.GetReason(osc, infrav1.APIServerDNSReadyCondition) {
	case infrav1.DNSPublishingNotAllowedReason, infrav1.DNSNameTakenReason, infrav1.DNSEndpointCRDMissingReason:
		in.DNSRefused = true
	}
	if c := conditions.Get(osc, infrav1.ZoneMaintenanceReadyCondition); c != nil && c.Reason == infrav1.ZoneWithdrawingReason {
		in.WithdrawingSince = c.LastTransitionTime.Time
	}
	// A zone out of service withdrawn from control plane machines (its failure domain's
	// controlPlane false for now) is one of them all the same.
	for _, fd := range osc.Status.FailureDomains {
		in.ComputeZones = append(in.ComputeZones, fd.Name)
		e := zones.EntryFor(osc.Status.APIServerLoadBalancers, fd.Name)
		if ptr.Deref(fd.ControlPlane, false) || e != nil && e.FailureDomainWithdrawal != nil {
			in.ControlPlaneZones = append(in.ControlPlaneZones, fd.Name)
		}
	}
	return in
}

// RecordedInput is InputOf with the network, external network and router as the status
// recorded them: what a machine's reconcile, or a status setter, knows.
func RecordedInput(osc *infrav1.OpenStackCluster, cluster string) *zones.Input {
	return InputOf(osc, cluster, osc.Status.Network, osc.Status.ExternalNetwork, osc.Status.Router)
}
