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

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
)

// deletionFound is where a cluster's deletion stands, for updateStatus.
type deletionFound struct {
	// identity is why the credentials did not work.
	identity error
	// loadBalancersLeft: Octavia is still deleting the load balancers; loadBalancersGone: none is
	// left. The same for the security groups, the router and the network.
	loadBalancersLeft, loadBalancersGone bool
	groupsGone, routerGone, networkGone  bool
	// waitingForPorts is the condition of what waits for ports to leave the network.
	waitingForPorts string
}

// delete removes what the controller created, in reverse order, and then the finalizer.
// Resources the user brought (spec.network, spec.router, apiServerFloatingIP) are left alone.
func (c *clusterReconcile) delete(ctx context.Context) (ctrl.Result, error) {
	osc, cluster := c.osc, c.cluster
	if !controllerutil.ContainsFinalizer(osc, infrav1.ClusterFinalizer) {
		return ctrl.Result{}, nil
	}
	c.r.checks.forget(osc)
	d := &deletionFound{}
	c.found.deletion = d
	if err := c.connect(ctx); err != nil {
		if authBusy(err) {
			return ctrl.Result{RequeueAfter: requeue.AuthInProgress}, nil
		}
		if recordsNothing(&osc.Status) {
			// Credentials that do not work, and a status that records nothing (not even the
			// external network, the first thing the controller looks up): the controller never
			// reached OpenStack, so there is nothing to delete, and waiting for an identity that
			// may never answer would keep the object forever.
			owner := clusterOwner(osc, "")
			c.report.Warn("DeletedWithoutOpenStack", report.Resource{},
				"Deleted without calling OpenStack: %s, and the status records no OpenStack resource. Anything made and never recorded carries the tag %s or the description %q",
				failureMessage(err), owner.Tag(), owner.Description())
			controllerutil.RemoveFinalizer(osc, infrav1.ClusterFinalizer)
			return ctrl.Result{}, nil
		}
		d.identity = err
		return ctrl.Result{RequeueAfter: requeue.Config}, faultOnly(err)
	}

	// The endpoint's records go first, so that clients stop resolving to what is being deleted.
	if dnsSettings(&osc.Spec) != nil || published(osc) {
		if err := c.r.deleteDNSEndpoint(ctx, c); err != nil {
			return ctrl.Result{}, err
		}
	}
	if err := c.net.DeleteAPIServerFloatingIP(ctx, networking.APIServerFloatingIPMarks(cluster.Namespace, cluster.Name)); err != nil {
		return ctrl.Result{}, err
	}
	// The load balancers go first when their VIP ports may be on the cluster network. While
	// Octavia deletes them, what does not depend on them goes too: the security groups always
	// (Octavia's ports do not use them), the router and network when every VIP is elsewhere.
	lbs, err := c.loadBalancers().DeleteCluster(ctx, loadbalancer.RecordedInput(osc, cluster.Name))
	if err != nil {
		return ctrl.Result{}, err
	}
	if !lbs.Done {
		d.loadBalancersLeft = true
		if _, err := c.deleteNetworking(ctx, lbs.NetworkFree); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: requeue.Delete}, nil
	}
	d.loadBalancersGone = true
	if result, err := c.deleteNetworking(ctx, true); err != nil || !result.IsZero() {
		return result, err
	}
	controllerutil.RemoveFinalizer(osc, infrav1.ClusterFinalizer)
	return ctrl.Result{}, nil
}

// deleteNetworking deletes the security groups and, with withNetwork, the router and network the
// controller created. A zero result means all of it is gone. What the controller created is
// found by name, not by status, so that a cluster whose status was lost still leaves nothing
// behind.
func (c *clusterReconcile) deleteNetworking(ctx context.Context, withNetwork bool) (ctrl.Result, error) {
	osc, cluster, d := c.osc, c.cluster, c.found.deletion
	waiting := func(err error, condition string) (ctrl.Result, error) {
		if errors.Is(err, networking.ErrWaitingForPorts) {
			d.waitingForPorts = condition
			return ctrl.Result{RequeueAfter: requeue.Wait}, nil
		}
		return ctrl.Result{}, err
	}
	if osc.Spec.ManagedSecurityGroups != nil && (osc.Status.ControlPlaneSecurityGroup != nil || osc.Status.WorkerSecurityGroup != nil || withNetwork) {
		if err := c.net.DeleteManagedSecurityGroups(ctx, cluster.Namespace, cluster.Name); err != nil {
			return waiting(err, infrav1.SecurityGroupsReadyCondition)
		}
	}
	d.groupsGone = true
	if !withNetwork {
		return ctrl.Result{}, nil
	}
	if len(osc.Spec.ManagedSubnets) > 0 {
		name := networking.ResourceName(cluster.Namespace, cluster.Name)
		if err := c.net.DeleteManagedRouter(ctx, name, &osc.Spec); err != nil {
			return ctrl.Result{}, err
		}
		d.routerGone = true
		if err := c.net.DeleteManagedNetwork(ctx, name); err != nil {
			return waiting(err, infrav1.NetworkReadyCondition)
		}
	}
	d.networkGone = true
	return ctrl.Result{}, nil
}
