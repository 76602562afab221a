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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/compute"
)

// reconcileDelete takes a control plane machine out of the load balancers, then deletes the
// server, then the ports the machine created, and lets the OpenStackMachine go.
func (r *OpenStackMachineReconciler) reconcileDelete(ctx context.Context, m *machineScope) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(m.osm, infrav1.MachineFinalizer) {
		return ctrl.Result{}, nil
	}
	clients, err := r.ScopeFactory.NewClients(ctx, m.osm.Namespace, m.identityRef())
	if err != nil {
		return instanceFailed(m, infrav1.IdentityErrorReason, failureMessage(err)), faultOnly(err)
	}
	if m.controlPlane {
		done, err := r.removeMemberships(ctx, clients, m)
		if err != nil {
			return openStackFailed(m, infrav1.APIServerIngressReadyCondition, err)
		}
		if !done {
			setCondition(m.osm, infrav1.APIServerIngressReadyCondition, metav1.ConditionFalse, infrav1.DeletingReason,
				"removing the machine from the API server load balancers")
			return ctrl.Result{RequeueAfter: memberRequeue}, nil
		}
		setCondition(m.osm, infrav1.APIServerIngressReadyCondition, metav1.ConditionFalse, infrav1.DeletingReason,
			"the machine is a member of no API server load balancer")
	}
	svc := compute.NewService(clients.Compute, clients.Image, clients.Network, m.report)
	server, _, err := svc.Find(ctx, knownServerID(m.osm), m.osm.Name, m.owner(), upstreamServer(m))
	if err != nil {
		return openStackFailed(m, infrav1.InstanceReadyCondition, err)
	}
	if server != nil {
		done, err := svc.Delete(ctx, server)
		if err != nil {
			return openStackFailed(m, infrav1.InstanceReadyCondition, err)
		}
		if !done {
			setCondition(m.osm, infrav1.InstanceReadyCondition, metav1.ConditionFalse, infrav1.DeletingReason,
				fmt.Sprintf("Nova is deleting server %s", server.ID))
			return ctrl.Result{RequeueAfter: buildRequeue}, nil
		}
	}
	if err := svc.DeletePorts(ctx, portIdentities(m.osm)); err != nil {
		return openStackFailed(m, infrav1.InstanceReadyCondition, err)
	}
	setCondition(m.osm, infrav1.InstanceReadyCondition, metav1.ConditionFalse, infrav1.DeletingReason, "the server and its ports are deleted")
	controllerutil.RemoveFinalizer(m.osm, infrav1.MachineFinalizer)
	return ctrl.Result{}, nil
}
