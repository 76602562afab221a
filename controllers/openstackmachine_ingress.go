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

package controllers

import (
	"context"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"k8s.io/apimachinery/pkg/api/equality"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/compute"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
)

// ingressFound is what the membership of a control plane machine found.
type ingressFound struct {
	outcome
	// notRequired: the cluster has no API server load balancer.
	notRequired bool
	// server is the machine's server; address its fixed address on network, the cluster
	// network or its zone's machine subnet's ("" while Nova shows none); zone the availability
	// zone the machine is in.
	server        *servers.Server
	network       string
	address, zone string
	membership    loadbalancer.Membership
}

// reconcileIngress makes a control plane machine a member of exactly the API server load
// balancers the cluster asks for (seed: "Member registration behavior"): one call into the load
// balancer service, which holds the zone rules.
func (m *machineReconcile) reconcileIngress(ctx context.Context, server *servers.Server) *ingressFound {
	osc := m.osc
	found := &ingressFound{server: server}
	if !osc.Spec.APIServerLoadBalancerEnabled() {
		found.notRequired = true
		return found
	}
	if server.Status != "ACTIVE" {
		return found
	}
	if osc.Status.Network != nil {
		found.network = osc.Status.Network.Name
	}
	if z := osc.Status.MachineSubnetOf(m.machine.Spec.FailureDomain); z != nil && machineSubnetMapped(&osc.Spec, z.AvailabilityZone) {
		found.network = z.Network.Name // its port is on the zone's subnet
	}
	found.address = compute.FixedAddress(server, found.network)
	if found.address == "" {
		found.outcome = after(buildRequeue)
		return found
	}
	found.zone = loadbalancer.MachineZone(m.machine.Spec.FailureDomain, server.AvailabilityZone)
	membership, err := m.loadBalancers().ReconcileMachine(ctx, osc, m.osm.Name, found.address, found.zone)
	if err != nil {
		found.outcome = failedWith(err)
		return found
	}
	found.membership = membership
	if !membership.Done {
		found.outcome = after(memberRequeue)
	}
	return found
}

// controlPlaneMachinesOf maps an OpenStackCluster to the OpenStackMachines of its control plane
// Machines.
func (r *OpenStackMachineReconciler) controlPlaneMachinesOf(ctx context.Context, obj client.Object) []reconcile.Request {
	osc, ok := obj.(*infrav1.OpenStackCluster)
	if !ok {
		return nil
	}
	clusterName := osc.Labels[clusterv1.ClusterNameLabel]
	for _, ref := range osc.OwnerReferences {
		if clusterName == "" && ref.Kind == "Cluster" && strings.HasPrefix(ref.APIVersion, clusterv1.GroupVersion.Group+"/") {
			clusterName = ref.Name
		}
	}
	if clusterName == "" {
		return nil
	}
	machines := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, machines, client.InNamespace(osc.Namespace),
		client.MatchingLabels{clusterv1.ClusterNameLabel: clusterName}, client.HasLabels{clusterv1.MachineControlPlaneLabel}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the control plane Machines of an OpenStackCluster", "OpenStackCluster", osc.Name)
		return nil
	}
	var out []reconcile.Request
	for _, m := range machines.Items {
		ref := m.Spec.InfrastructureRef
		if ref.Kind == "OpenStackMachine" && ref.APIGroup == infrav1.GroupVersion.Group && ref.Name != "" {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: m.Namespace, Name: ref.Name}})
		}
	}
	return out
}

// membershipInputsChanged lets through the OpenStackCluster updates that can change which load
// balancers a control plane machine belongs to: the load balancers in the status, the ports,
// the cross-AZ policy and the zone mappings.
func membershipInputsChanged() predicate.Funcs {
	inputs := func(o *infrav1.OpenStackCluster) any {
		// Drained: a zone's maintenance disables or enables its machines' members.
		type lbKey struct {
			ID, AZ, Name string
			Drained      bool
		}
		var keys []lbKey
		for _, lb := range o.Status.AllAPIServerLoadBalancers() {
			keys = append(keys, lbKey{lb.ID, lb.AvailabilityZone, lb.Name, loadbalancer.ZoneDrained(&o.Status, lb.AvailabilityZone)})
		}
		var policy *infrav1.APIServerLoadBalancer
		if o.Spec.APIServerLoadBalancer != nil {
			policy = &infrav1.APIServerLoadBalancer{
				Enabled:                         o.Spec.APIServerLoadBalancer.Enabled,
				AdditionalPorts:                 o.Spec.APIServerLoadBalancer.AdditionalPorts,
				AvailabilityZoneSubnets:         o.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets,
				AllowCrossAZLoadBalancerMembers: o.Spec.APIServerLoadBalancer.AllowCrossAZLoadBalancerMembers,
			}
		}
		return []any{keys, policy, o.Spec.APIServerPort}
	}
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			older, okOld := e.ObjectOld.(*infrav1.OpenStackCluster)
			newer, okNew := e.ObjectNew.(*infrav1.OpenStackCluster)
			return okOld && okNew && !equality.Semantic.DeepEqual(inputs(older), inputs(newer))
		},
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
