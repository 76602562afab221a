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
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/compute"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/outcome"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

// ingressFound is what the membership of a control plane machine found.
type ingressFound struct {
	outcome.Outcome
	// notRequired: the cluster has neither an API server load balancer nor an API server
	// floating IP.
	notRequired bool
	// floating is where the API server floating IP of a cluster without a load balancer is;
	// nil with a load balancer.
	floating *networking.EndpointFloatingIP
	// server is the machine's server; address its fixed address on network, the cluster
	// network or its zone's machine subnet's ("" while Nova shows none); zone the availability
	// zone the machine is in.
	server        *servers.Server
	network       string
	address, zone string
	membership    zones.Membership
}

// reconcileIngress makes a control plane machine a member of exactly the API server load
// balancers the cluster asks for (seed: "Member registration behavior"): one call into the load
// balancer service, which holds the zone rules.
func (m *machineReconcile) reconcileIngress(ctx context.Context, server *servers.Server) *ingressFound {
	osc := m.osc
	found := &ingressFound{server: server}
	floating := !osc.Spec.APIServerLoadBalancerEnabled()
	if floating && (ptr.Deref(osc.Spec.DisableAPIServerFloatingIP, false) || osc.Status.ExternalNetwork == nil) {
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
		found.Outcome = outcome.After(requeue.Build)
		return found
	}
	if floating {
		m.holdFloatingIP(ctx, found)
		return found
	}
	found.zone = zones.MachineZone(m.machine.Spec.FailureDomain, server.AvailabilityZone)
	membership, err := m.loadBalancers().ReconcileMachine(ctx, loadbalancer.RecordedInput(osc, m.cluster.Name), m.osm.Name, found.address, found.zone)
	if err != nil {
		found.Outcome = outcome.Failed(err)
		return found
	}
	found.membership = membership
	if !membership.Done {
		found.Outcome = outcome.After(requeue.Member)
	}
	return found
}

// holdFloatingIP puts the API server floating IP of a cluster without a load balancer on this
// control plane machine, unless another holds it (upstream's behaviour: the first control plane
// machine holds it). A machine that does not hold it looks again now and then, and takes it once
// the holder's port is gone.
func (m *machineReconcile) holdFloatingIP(ctx context.Context, found *ingressFound) {
	// The cluster's owner: its project is the one floating IPs are looked for in.
	net := networking.NewService(m.clients.Network, m.report, clusterOwner(m.osc, m.clients.ProjectID, m.clusterTakeover))
	// The address the user asked for: apiServerFloatingIP, or else an endpoint host they set.
	address := ptr.Deref(m.osc.Spec.APIServerFloatingIP, "")
	if ep := m.osc.Spec.ControlPlaneEndpoint; address == "" && ep != nil && isIP(ep.Host) {
		address = ep.Host
	}
	fip, err := net.HoldAPIServerFloatingIP(ctx, networking.APIServerFloatingIPMarks(m.cluster.Namespace, m.cluster.Name, m.clusterTakeover), address, found.server.ID, found.address)
	if err != nil {
		found.Outcome = outcome.Failed(err)
		return
	}
	found.floating = fip
	switch {
	case fip.Address == "":
		found.Outcome = outcome.After(requeue.Wait) // the cluster's reconcile allocates it
	case fip.FixedIP != found.address:
		found.Outcome = outcome.After(requeue.FloatingIPStandby)
	}
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
	return r.controlPlaneMachinesNamed(ctx, osc.Namespace, clusterName)
}

// controlPlaneMachinesOfDeleted maps a deleted OpenStackMachine to the OpenStackMachines of its
// cluster's other control plane Machines: one of them takes the API server floating IP of a
// cluster without a load balancer when the machine that held it goes.
func (r *OpenStackMachineReconciler) controlPlaneMachinesOfDeleted(ctx context.Context, obj client.Object) []reconcile.Request {
	osm, ok := obj.(*infrav1.OpenStackMachine)
	if !ok {
		return nil
	}
	return slices.DeleteFunc(r.controlPlaneMachinesNamed(ctx, osm.Namespace, osm.Labels[clusterv1.ClusterNameLabel]), func(req reconcile.Request) bool {
		return req.Name == osm.Name
	})
}

// deletionsOnly lets through the deletion of an object only.
func deletionsOnly() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// controlPlaneMachinesNamed lists the OpenStackMachines of the control plane Machines of the
// Cluster clusterName in namespace.
func (r *OpenStackMachineReconciler) controlPlaneMachinesNamed(ctx context.Context, namespace, clusterName string) []reconcile.Request {
	if clusterName == "" {
		return nil
	}
	machines := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, machines, client.InNamespace(namespace),
		client.MatchingLabels{clusterv1.ClusterNameLabel: clusterName}, client.HasLabels{clusterv1.MachineControlPlaneLabel}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the control plane Machines of a Cluster", "Cluster", clusterName)
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
		// Drained: a zone's maintenance disables or enables its machines' members. Former: the
		// former single load balancer keeps, or lets go, every zone's machines.
		type lbKey struct {
			ID, AZ, Name    string
			Drained, Former bool
		}
		var keys []lbKey
		for _, lb := range o.Status.AllAPIServerLoadBalancers() {
			keys = append(keys, lbKey{lb.ID, lb.AvailabilityZone, lb.Name, zones.ZoneDrained(o.Status.APIServerLoadBalancers, lb.AvailabilityZone), lb.FormerSingle != nil})
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
		// The endpoint: without a load balancer, it is set once the API server floating IP,
		// which a control plane machine then holds, is allocated.
		return []any{keys, policy, o.Spec.APIServerPort, o.Spec.ControlPlaneEndpoint}
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
