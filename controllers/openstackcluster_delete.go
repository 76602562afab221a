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
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
)

// reconcileDelete removes what the controller created, in reverse order, and then the finalizer.
// Resources the user brought (spec.network, spec.router, apiServerFloatingIP) are left alone.
func (r *OpenStackClusterReconciler) reconcileDelete(ctx context.Context, c *clusterScope) (ctrl.Result, error) {
	osc, cluster := c.osc, c.cluster
	if !controllerutil.ContainsFinalizer(osc, infrav1.ClusterFinalizer) {
		return ctrl.Result{}, nil
	}
	r.checks.forget(osc)
	for _, t := range clusterConditions {
		setCondition(osc, t, metav1.ConditionFalse, infrav1.DeletingReason, "")
	}
	clients, err := r.ScopeFactory.NewClients(ctx, osc.Namespace, osc.Spec.IdentityRef)
	if err != nil {
		if errors.Is(err, scope.ErrNoIdentityRef) && osc.Status.ExternalNetwork == nil && osc.Status.Network == nil {
			// Without credentials and with nothing recorded, the controller never reached
			// OpenStack: there is nothing to delete.
			controllerutil.RemoveFinalizer(osc, infrav1.ClusterFinalizer)
			return ctrl.Result{}, nil
		}
		setCondition(osc, infrav1.NetworkReadyCondition, metav1.ConditionFalse, infrav1.IdentityErrorReason, failureMessage(err))
		return ctrl.Result{RequeueAfter: specErrorRequeue}, faultOnly(err)
	}
	c.clients = clients
	c.net = networking.NewService(clients.Network, c.report)

	// The endpoint's records go first, so that clients stop resolving to what is being deleted.
	if dnsSettings(&osc.Spec) != nil || published(osc) {
		if err := r.deleteDNSEndpoint(ctx, c); err != nil {
			return ctrl.Result{}, err
		}
	}

	if err := c.net.DeleteAPIServerFloatingIP(ctx, networking.APIServerFloatingIPDescription(cluster.Namespace, cluster.Name)); err != nil {
		return ctrl.Result{}, err
	}
	// The load balancers go first when their VIP ports may be on the cluster network. While
	// Octavia deletes them, what does not depend on them goes too: the security groups always
	// (Octavia's ports do not use them), the router and network when every VIP is elsewhere.
	done, err := r.loadBalancers(c).Delete(ctx, loadbalancer.ClusterRemoval(cluster.Namespace, cluster.Name, osc))
	if err != nil {
		return ctrl.Result{}, err
	}
	if !done {
		setCondition(osc, infrav1.APIServerLoadBalancersReadyCondition, metav1.ConditionFalse, infrav1.DeletingReason,
			"waiting for Octavia to delete the API server load balancers")
		if _, err := deleteNetworking(ctx, c, loadbalancer.VIPsOffClusterNetwork(osc)); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: deleteRequeue}, nil
	}
	osc.Status.APIServerLoadBalancer, osc.Status.APIServerLoadBalancers = nil, nil
	loadbalancer.ForgetCluster(cluster.Namespace, cluster.Name)
	if result, err := deleteNetworking(ctx, c, true); err != nil || !result.IsZero() {
		return result, err
	}
	controllerutil.RemoveFinalizer(osc, infrav1.ClusterFinalizer)
	return ctrl.Result{}, nil
}

// deleteNetworking deletes the security groups and, with withNetwork, the router and network the
// controller created. A zero result means all of it is gone. What the controller created is
// found by name, not by status, so that a cluster whose status was lost still leaves nothing
// behind.
func deleteNetworking(ctx context.Context, c *clusterScope, withNetwork bool) (ctrl.Result, error) {
	osc, cluster := c.osc, c.cluster
	waiting := func(err error, condition string) (ctrl.Result, error) {
		if errors.Is(err, networking.ErrWaitingForPorts) {
			setCondition(osc, condition, metav1.ConditionFalse, infrav1.WaitingForPortsReason, "waiting for servers and load balancers to leave the network")
			return ctrl.Result{RequeueAfter: waitRequeue}, nil
		}
		return ctrl.Result{}, err
	}
	if osc.Spec.ManagedSecurityGroups != nil && (osc.Status.ControlPlaneSecurityGroup != nil || osc.Status.WorkerSecurityGroup != nil || withNetwork) {
		if err := c.net.DeleteManagedSecurityGroups(ctx, cluster.Namespace, cluster.Name); err != nil {
			return waiting(err, infrav1.SecurityGroupsReadyCondition)
		}
	}
	osc.Status.ControlPlaneSecurityGroup, osc.Status.WorkerSecurityGroup = nil, nil
	if !withNetwork {
		return ctrl.Result{}, nil
	}
	if len(osc.Spec.ManagedSubnets) > 0 {
		name := networking.ResourceName(cluster.Namespace, cluster.Name)
		if err := c.net.DeleteManagedRouter(ctx, name, &osc.Spec); err != nil {
			return ctrl.Result{}, err
		}
		osc.Status.Router = nil
		if err := c.net.DeleteManagedNetwork(ctx, name); err != nil {
			return waiting(err, infrav1.NetworkReadyCondition)
		}
	}
	osc.Status.Network = nil
	return ctrl.Result{}, nil
}
