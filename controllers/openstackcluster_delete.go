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
	"sync"

	kerrors "k8s.io/apimachinery/pkg/util/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/outcome"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

// deletionFound is where a cluster's deletion stands, for updateStatus.
type deletionFound struct {
	// identity is why the credentials did not work.
	identity error
	// loadBalancersLeft: Octavia is still deleting the load balancers; loadBalancersGone: none is
	// left. The same for the security groups, the router and the network.
	loadBalancersLeft, loadBalancersGone bool
	groupsGone, routerGone, networkGone  bool
	// bastionGone: the bastion, its ports, volumes and floating IP are deleted.
	bastionGone bool
	// waitingForPorts is the condition of what waits for ports to leave the network.
	waitingForPorts string
}

// delete removes what the controller created, each resource as soon as nothing that is left
// needs it, and then the finalizer. Resources the user brought (spec.network, spec.router,
// apiServerFloatingIP) are left alone.
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
			owner := clusterOwner(osc, "", false)
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
	// While Octavia deletes, lanes at once, so that a deletion takes about as long as Octavia's
	// cascade deletes:
	//   - the load balancers (a cascade delete each, then their floating IPs); once no floating
	//     IP is left on their VIPs, the router, when the VIPs may be on the cluster network:
	//     Octavia needs no router to delete a load balancer, but Neutron keeps a router
	//     interface that a floating IP on the subnet goes through;
	//   - the security groups (Octavia's ports do not use them);
	//   - when every VIP is off the cluster network, the router and then the network.
	// These lanes act on what the status still records, so that the polls while Octavia deletes
	// ask Neutron nothing once it is gone (Neutron's work would slow Octavia's own).
	in := loadbalancer.RecordedInput(osc, cluster.Name)
	networkFree := zones.VIPsOffClusterNetwork(in)
	st := &osc.Status
	var (
		wg                  sync.WaitGroup
		lbs                 loadbalancer.Deletion
		lbErr, groupsErr    error
		networkErr          error
		groupsWait, netWait bool
		earlyRouter         bool
		groupsRan, netRan   bool
	)
	wg.Go(func() {
		if err := outcome.Run("deleting the load balancers", func() {
			lbs, lbErr = c.loadBalancers().DeleteCluster(ctx, in)
			if lbErr == nil && !lbs.Done && !networkFree && lbs.RouterFree && st.Router != nil {
				earlyRouter = c.deleteRouterEarly(ctx)
			}
		}); err != nil {
			lbErr = err
		}
	})
	// The bastion the status records, beside the load balancers: its port keeps the network and
	// its group.
	var bastion *bastionFound
	deleteBastion := func() {
		if err := outcome.Run("deleting the bastion", func() { bastion = c.deleteBastion(ctx) }); err != nil {
			bastion = &bastionFound{Outcome: outcome.Failed(err)}
		}
	}
	if st.Bastion != nil {
		wg.Go(deleteBastion)
	}
	if st.ControlPlaneSecurityGroup != nil || st.WorkerSecurityGroup != nil {
		groupsRan = true
		wg.Go(func() {
			if err := outcome.Run("deleting the security groups", func() { groupsWait, groupsErr = c.deleteGroups(ctx) }); err != nil {
				groupsErr = err
			}
		})
	}
	// While a bastion is recorded, its port (and a floating IP of the user's on it) keeps the
	// network and the router: they go in the final pass.
	if networkFree && st.Bastion == nil && (st.Router != nil || st.Network != nil) {
		netRan = true
		wg.Go(func() {
			if err := outcome.Run("deleting the router and network", func() { netWait, networkErr = c.deleteRouterAndNetwork(ctx, false) }); err != nil {
				networkErr = err
			}
		})
	}
	wg.Wait()
	d.routerGone = d.routerGone || earlyRouter
	var bastionErr error
	if bastion != nil {
		bastionErr = bastion.Err
	}
	if err := kerrors.NewAggregate([]error{lbErr, groupsErr, networkErr, bastionErr}); err != nil {
		return ctrl.Result{}, err
	}
	// Once the bastion is gone, the status says so: the polls that follow ask nothing more of it
	// (the final pass below looks for one by name once more).
	d.bastionGone = bastion != nil && bastion.removed
	if !lbs.Done {
		d.loadBalancersLeft = true
		c.waitingFor(groupsWait, netWait)
		return ctrl.Result{RequeueAfter: requeue.Delete}, nil
	}
	d.loadBalancersGone = true
	// A cluster with a bastion block whose status no longer records the bastion has it looked
	// for by name and mark once the load balancers are gone, with whatever an interrupted create
	// left, so that a lost status leaves none behind.
	if bastion == nil && (osc.Spec.Bastion != nil || st.BastionSecurityGroup != nil) {
		deleteBastion()
	}
	if bastion != nil {
		if bastion.Err != nil {
			return ctrl.Result{}, bastion.Err
		}
		if !bastion.removed {
			return ctrl.Result{RequeueAfter: requeue.Build}, nil
		}
		d.bastionGone = true
	}

	// The load balancers are gone: what is left goes, found by name and mark, so that a cluster
	// whose status was lost leaves nothing behind. The API server's floating IP of a cluster
	// without a load balancer goes before the router it is reached through.
	if err := c.net.DeleteAPIServerFloatingIP(ctx, networking.APIServerFloatingIPMarks(cluster.Namespace, cluster.Name, c.takeover)); err != nil {
		return ctrl.Result{}, err
	}
	if !groupsRan || groupsWait {
		wg.Go(func() {
			if err := outcome.Run("deleting the security groups", func() { groupsWait, groupsErr = c.deleteGroups(ctx) }); err != nil {
				groupsErr = err
			}
		})
	}
	if !netRan || netWait {
		wg.Go(func() {
			if err := outcome.Run("deleting the router and network", func() { netWait, networkErr = c.deleteRouterAndNetwork(ctx, d.routerGone) }); err != nil {
				networkErr = err
			}
		})
	}
	wg.Wait()
	if err := kerrors.NewAggregate([]error{groupsErr, networkErr}); err != nil {
		return ctrl.Result{}, err
	}
	if c.waitingFor(groupsWait, netWait) {
		return ctrl.Result{RequeueAfter: requeue.Wait}, nil
	}
	controllerutil.RemoveFinalizer(osc, infrav1.ClusterFinalizer)
	return ctrl.Result{}, nil
}

// deleteBastion removes the bastion, found by the status or by name and mark.
func (c *clusterReconcile) deleteBastion(ctx context.Context) *bastionFound {
	svc := c.bastionService()
	server, err := c.findBastion(ctx, svc, c.osc.Status.Network)
	if takeoverNotRecorded(err) {
		// Upstream's bastion, or anyone's, whose takeover was never recorded: not this
		// cluster's, so it stays, and the deletion goes on.
		c.report.Warn("LeftUnrecordedResource", report.Resource{Kind: "Server", Name: bastionName(c.cluster.Name)}, "%s", err.Error())
		server, err = nil, nil
	}
	if err != nil {
		return &bastionFound{Outcome: outcome.Failed(err)}
	}
	return c.removeBastion(ctx, svc, server, "", true)
}

// deleteGroups deletes the managed security groups, found by name (a lost status leaves none
// behind). It reports wait when a port still uses one.
func (c *clusterReconcile) deleteGroups(ctx context.Context) (wait bool, err error) {
	osc, cluster, d := c.osc, c.cluster, c.found.deletion
	if osc.Spec.ManagedSecurityGroups != nil {
		if err := c.net.DeleteManagedSecurityGroups(ctx, cluster.Namespace, cluster.Name); err != nil {
			return waitingForPorts(err)
		}
	}
	d.groupsGone = true
	return false, nil
}

// deleteRouterAndNetwork deletes the router (unless routerGone) and then the network the
// controller created. It reports wait when a port is still on the network. What the controller
// created is found by name, not by status, so that a cluster whose status was lost still leaves
// nothing behind.
func (c *clusterReconcile) deleteRouterAndNetwork(ctx context.Context, routerGone bool) (wait bool, err error) {
	osc, cluster, d := c.osc, c.cluster, c.found.deletion
	if len(osc.Spec.ManagedSubnets) > 0 {
		name := networking.ResourceName(cluster.Namespace, cluster.Name)
		if !routerGone {
			if err := c.net.DeleteManagedRouter(ctx, name, &osc.Spec); err != nil {
				return false, err
			}
		}
		d.routerGone = true
		if err := c.net.DeleteManagedNetwork(ctx, name); err != nil {
			return waitingForPorts(err)
		}
	}
	d.networkGone = true
	return false, nil
}

// deleteRouterEarly deletes the router while Octavia deletes load balancers whose VIPs may be on
// the cluster network, once no floating IP is left on them, and reports whether it is gone.
// Neutron still refuses (409) while a floating IP goes through it: the router then goes with
// the network, once the load balancers are gone, where any failure is the deletion's.
func (c *clusterReconcile) deleteRouterEarly(ctx context.Context) bool {
	osc, cluster := c.osc, c.cluster
	if len(osc.Spec.ManagedSubnets) == 0 {
		return false
	}
	err := c.net.DeleteManagedRouter(ctx, networking.ResourceName(cluster.Namespace, cluster.Name), &osc.Spec)
	if err != nil && !clients.IsConflict(err) {
		ctrl.LoggerFrom(ctx).Info("The router is deleted once the load balancers are gone", "error", report.Redact(err.Error()))
	}
	return err == nil
}

// waitingFor records which condition waits for ports to leave (the security groups, the
// network), and says whether one does.
func (c *clusterReconcile) waitingFor(groups, network bool) bool {
	d := c.found.deletion
	if groups {
		d.waitingForPorts = infrav1.SecurityGroupsReadyCondition
	}
	if network {
		d.waitingForPorts = infrav1.NetworkReadyCondition
	}
	return groups || network
}

// waitingForPorts turns Neutron's "still in use" into a wait, and passes any other error on.
func waitingForPorts(err error) (bool, error) {
	if errors.Is(err, networking.ErrWaitingForPorts) {
		return true, nil
	}
	return false, err
}
