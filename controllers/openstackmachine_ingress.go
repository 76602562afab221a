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
	"fmt"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
)

// reconcileIngress makes a control plane machine a member of exactly the API server load
// balancers the cluster asks for (seed: "Member registration behavior"), and says so in
// APIServerIngressReady.
func (r *OpenStackMachineReconciler) reconcileIngress(ctx context.Context, clients *scope.Clients, m *machineScope, server *servers.Server) (ctrl.Result, error) {
	osc := m.osc
	if !osc.Spec.APIServerLoadBalancerEnabled() {
		setCondition(m.osm, infrav1.APIServerIngressReadyCondition, metav1.ConditionTrue, infrav1.NotRequiredReason,
			"the cluster has no API server load balancer")
		return ctrl.Result{}, nil
	}
	if server.Status != "ACTIVE" {
		setCondition(m.osm, infrav1.APIServerIngressReadyCondition, metav1.ConditionFalse, infrav1.WaitingForInstanceReason,
			fmt.Sprintf("server %s is %s", server.ID, server.Status))
		return ctrl.Result{}, nil
	}
	networkName := ""
	if osc.Status.Network != nil {
		networkName = osc.Status.Network.Name
	}
	address := compute.FixedAddress(server, networkName)
	if address == "" {
		setCondition(m.osm, infrav1.APIServerIngressReadyCondition, metav1.ConditionFalse, infrav1.WaitingForInstanceReason,
			fmt.Sprintf("server %s has no address on the cluster network %s yet", server.ID, networkName))
		return ctrl.Result{RequeueAfter: buildRequeue}, nil
	}
	az := m.machine.Spec.FailureDomain
	if az == "" {
		az = server.AvailabilityZone
	}
	crossAZ := ptr.Deref(osc.Spec.APIServerLoadBalancer.AllowCrossAZLoadBalancerMembers, false)
	targets, missing := loadbalancer.MemberTargets(&osc.Status, az, crossAZ)
	targetIDs := make([]string, len(targets))
	for i, t := range targets {
		targetIDs[i] = t.ID
	}
	member := loadbalancer.Member{Name: m.osm.Name, Address: address, SubnetID: loadbalancer.MemberSubnet(&osc.Status, targets, address)}
	// Membership of the load balancers that are not targets is removed even when a target is
	// missing: cross-AZ membership turned off must not wait for anything.
	lbs := loadbalancer.NewService(clients.LoadBalancer, clients.Network, m.report, nil, clients.CloudKey)
	done, err := lbs.ReconcileMembership(ctx, osc.Status.AllAPIServerLoadBalancers(), targetIDs, loadbalancer.Ports(&osc.Spec), member)
	if err != nil {
		return openStackFailed(m, infrav1.APIServerIngressReadyCondition, err)
	}
	setIngressCondition(m, ingress{zone: az, address: address, targets: targets, zoneMissing: missing, done: done})
	if !done {
		return ctrl.Result{RequeueAfter: memberRequeue}, nil
	}
	return ctrl.Result{}, nil
}

// removeMemberships takes the machine out of every load balancer of the cluster, per-AZ and
// single; done reports that no member of it is left.
func (r *OpenStackMachineReconciler) removeMemberships(ctx context.Context, clients *scope.Clients, m *machineScope) (bool, error) {
	if m.osc == nil {
		return true, nil
	}
	all := m.osc.Status.AllAPIServerLoadBalancers()
	if len(all) == 0 {
		return true, nil
	}
	lbs := loadbalancer.NewService(clients.LoadBalancer, clients.Network, m.report, nil, clients.CloudKey)
	// Members are the machine's by name; the address only matters for members to keep.
	return lbs.ReconcileMembership(ctx, all, nil, loadbalancer.Ports(&m.osc.Spec), loadbalancer.Member{Name: m.osm.Name})
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
		type lbKey struct{ ID, AZ, Name string }
		var keys []lbKey
		for _, lb := range o.Status.AllAPIServerLoadBalancers() {
			keys = append(keys, lbKey{lb.ID, lb.AvailabilityZone, lb.Name})
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
