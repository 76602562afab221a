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

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/compute"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
)

// machineDeletionFound is where a machine's deletion stands, for updateStatus.
type machineDeletionFound struct {
	// membershipErr and instanceErr are the OpenStack failures that stopped it.
	membershipErr, instanceErr error
	// membershipLeft: the machine is still a member of a load balancer; membershipGone: of none.
	membershipLeft, membershipGone bool
	// deletingServer is the server Nova is deleting.
	deletingServer string
	// done: the server, its ports and its volumes are deleted.
	done bool
}

// delete takes a control plane machine out of the load balancers, then deletes the server, then
// the ports and the volumes the machine created, and lets the OpenStackMachine go.
func (m *machineReconcile) delete(ctx context.Context) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(m.osm, infrav1.MachineFinalizer) {
		return ctrl.Result{}, nil
	}
	if err := m.connect(ctx); err != nil {
		if authBusy(err) {
			return ctrl.Result{RequeueAfter: requeue.AuthInProgress}, nil
		}
		if machineRecordsNothing(m.osm) {
			// As for a cluster (see clusterReconcile.delete): the controller never made a server
			// for this machine, and the credentials do not work.
			owner := machineOwner(m.osm, "", false)
			m.report.Warn("DeletedWithoutOpenStack", report.Resource{},
				"Deleted without calling OpenStack: %s, and neither the spec nor the status records a server. A port or a volume made and never recorded carries the description %q (a port may carry the tag %s instead)",
				failureMessage(err), owner.Description(), owner.Tag())
			controllerutil.RemoveFinalizer(m.osm, infrav1.MachineFinalizer)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{RequeueAfter: requeue.Config}, faultOnly(err)
	}
	d := &machineDeletionFound{}
	m.found.deletion = d
	if err := m.deleteClaim(ctx); err != nil {
		d.instanceErr = err
		return ctrl.Result{}, err
	}
	if m.controlPlane && m.osc != nil {
		done, err := m.loadBalancers().RemoveMachine(ctx, loadbalancer.RecordedInput(m.osc, m.cluster.Name), m.osm.Name)
		if err != nil {
			d.membershipErr = err
			return ctrl.Result{}, err
		}
		if !done {
			d.membershipLeft = true
			return ctrl.Result{RequeueAfter: requeue.Member}, nil
		}
	}
	d.membershipGone = m.controlPlane
	svc := m.compute()
	server, _, err := svc.Find(ctx, knownServerID(m.osm), m.osm.Name, upstreamServer(m))
	if specErr, ok := report.AsSpecError(err); ok && specErr.Reason == infrav1.ResourceOwnedElsewhereReason || takeoverNotRecorded(err) {
		// The recorded ID names a server that is not this machine's: it is left alone, and the
		// machine's own, if any, is found by its name and mark.
		server, _, err = svc.Find(ctx, "", m.osm.Name, upstreamServer(m))
	}
	if takeoverNotRecorded(err) {
		// The one server of the machine's name is unmarked and its takeover was not recorded:
		// it is not this machine's, and is left alone.
		m.report.Warn("LeftUnrecordedResource", report.Resource{Kind: "Server", Name: m.osm.Name}, "%s", err.Error())
		server, err = nil, nil
	}
	if err != nil {
		d.instanceErr = err
		return ctrl.Result{}, err
	}
	if server != nil {
		done, err := svc.Delete(ctx, server)
		if err != nil {
			d.instanceErr = err
			return ctrl.Result{}, err
		}
		if !done {
			d.deletingServer = server.ID
			return ctrl.Result{RequeueAfter: requeue.Build}, nil
		}
	}
	if err := svc.DeletePorts(ctx, compute.PortIdentities(m.osm)); err != nil {
		d.instanceErr = err
		return ctrl.Result{}, err
	}
	// Nova deletes a server's volumes with it; these are the ones no server took.
	if err := svc.DeleteVolumes(ctx, m.osm.Name, compute.VolumeNames(m.osm.Name, m.osm.Spec.RootVolume, m.osm.Spec.AdditionalBlockDevices)); err != nil {
		d.instanceErr = err
		return ctrl.Result{}, err
	}
	d.done = true
	controllerutil.RemoveFinalizer(m.osm, infrav1.MachineFinalizer)
	return ctrl.Result{}, nil
}
