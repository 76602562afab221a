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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/compute"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/outcome"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
)

// A machine's floating IP from an IP address pool (spec.floatingIPPoolRef): the machine claims
// an address with an IPAddressClaim named <machine>-floating-ip-address (upstream CAPO's name)
// and owned by it; once the pool answers with an
// IPAddress, the address, which must be a floating IP of the machine's project that carries no
// other object's mark, goes on the server's port. The claim is deleted with the machine, and the
// pool takes the address back.

// poolAddressFound is what the pool address phase found.
type poolAddressFound struct {
	outcome.Outcome
	// waiting says what the machine waits for ("" when it does not).
	waiting string
	// address is the floating IP on the server's port.
	address string
}

// reconcilePoolAddress claims the machine's address from its pool and puts it on the server.
func (m *machineReconcile) reconcilePoolAddress(ctx context.Context, server *servers.Server) *poolAddressFound {
	ref := m.osm.Spec.FloatingIPPoolRef
	path := field.NewPath("spec", "floatingIPPoolRef")
	if ptr.Deref(ref.APIGroup, "") == "" {
		return &poolAddressFound{Outcome: outcome.Failed(report.Refuted(infrav1.FloatingIPPoolRefErrorReason, path.Child("apiGroup"),
			"not set: name the API group of the pool's kind (infrastructure.cluster.x-k8s.io for an OpenStackFloatingIPPool)"))}
	}
	poolRef := ipamv1.IPPoolReference{APIGroup: *ref.APIGroup, Kind: ref.Kind, Name: ref.Name}
	claim := &ipamv1.IPAddressClaim{}
	err := m.r.Client.Get(ctx, client.ObjectKey{Namespace: m.osm.Namespace, Name: claimName(m.osm)}, claim)
	if apierrors.IsNotFound(err) {
		return m.createClaim(ctx, poolRef)
	}
	if err != nil {
		return &poolAddressFound{Outcome: outcome.Failed(fmt.Errorf("reading IPAddressClaim %s: %w", claimName(m.osm), err))}
	}
	if !m.ownsClaim(claim) {
		return &poolAddressFound{Outcome: outcome.Failed(report.Refuted(infrav1.FloatingIPPoolRefErrorReason, path,
			"IPAddressClaim %s exists and is not this machine's (its controller is neither the OpenStackMachine nor, after a recorded takeover, upstream's OpenStackServer of the same name)", claim.Name))}
	}
	if claim.Spec.PoolRef != poolRef {
		return &poolAddressFound{Outcome: outcome.Failed(report.Refuted(infrav1.FloatingIPPoolRefErrorReason, path,
			"the machine's IPAddressClaim %s names pool %s %s, not %s %s", claim.Name, claim.Spec.PoolRef.Kind, claim.Spec.PoolRef.Name, ref.Kind, ref.Name))}
	}
	if claim.Status.AddressRef.Name == "" {
		waiting := fmt.Sprintf("waiting for %s %s to give IPAddressClaim %s an address", ref.Kind, ref.Name, claim.Name)
		for _, c := range claim.Status.Conditions {
			if c.Type == ipamv1.IPAddressClaimReadyCondition && c.Status == metav1.ConditionFalse && c.Message != "" {
				waiting += ": " + c.Message
			}
		}
		return &poolAddressFound{waiting: waiting} // the claim's update brings the machine back
	}
	a := &ipamv1.IPAddress{}
	if err := m.r.Client.Get(ctx, client.ObjectKey{Namespace: m.osm.Namespace, Name: claim.Status.AddressRef.Name}, a); err != nil {
		if apierrors.IsNotFound(err) {
			return &poolAddressFound{waiting: fmt.Sprintf("waiting for IPAddress %s, which IPAddressClaim %s names", claim.Status.AddressRef.Name, claim.Name),
				Outcome: outcome.After(requeue.Wait)}
		}
		return &poolAddressFound{Outcome: outcome.Failed(fmt.Errorf("reading IPAddress %s: %w", claim.Status.AddressRef.Name, err))}
	}
	if a.Spec.ClaimRef.Name != claim.Name || a.Spec.PoolRef != poolRef {
		return &poolAddressFound{Outcome: outcome.Failed(report.Refuted(infrav1.FloatingIPPoolRefErrorReason, path,
			"IPAddress %s, which IPAddressClaim %s names, answers claim %q of pool %s %s", a.Name, claim.Name, a.Spec.ClaimRef.Name, a.Spec.PoolRef.Kind, a.Spec.PoolRef.Name))}
	}
	fixed := m.primaryAddress(server)
	if fixed == "" {
		return &poolAddressFound{waiting: "waiting for Nova to show the server's fixed address", Outcome: outcome.After(requeue.Build)}
	}
	// Another pool's mark, or any other object's, makes the address not this machine's to take.
	var marks ownership.FloatingIPMarks
	if poolOf(poolRef) != "" {
		marks = networking.FloatingIPPoolMarks(m.osm.Namespace, poolRef.Name)
	}
	net := networking.NewService(m.clients.Network, m.report, machineOwner(m.osm, m.clients.ProjectID, m.takeover))
	if _, err := net.AssociateClaimedFloatingIP(ctx, marks, a.Spec.Address, server.ID, fixed); err != nil {
		return &poolAddressFound{Outcome: outcome.Failed(err)}
	}
	return &poolAddressFound{address: a.Spec.Address}
}

// claimName is the name of the IPAddressClaim of osm's floating IP, as upstream CAPO names it.
func claimName(osm *infrav1.OpenStackMachine) string { return osm.Name + "-floating-ip-address" }

// ownsClaim says whether claim is the machine's: controlled by the OpenStackMachine, or, when the
// operator recorded the machine's takeover, by upstream CAPO's OpenStackServer of the same name.
func (m *machineReconcile) ownsClaim(claim *ipamv1.IPAddressClaim) bool {
	if metav1.IsControlledBy(claim, m.osm) {
		return true
	}
	ref := metav1.GetControllerOf(claim)
	return m.takeover && ref != nil && ref.Kind == "OpenStackServer" && ref.Name == m.osm.Name &&
		strings.HasPrefix(ref.APIVersion, infrav1.GroupVersion.Group+"/")
}

// createClaim claims the machine's address from poolRef.
func (m *machineReconcile) createClaim(ctx context.Context, poolRef ipamv1.IPPoolReference) *poolAddressFound {
	labels := map[string]string{clusterv1.ClusterNameLabel: m.cluster.Name}
	if v, ok := m.osm.Labels[clusterv1.WatchLabel]; ok {
		// With --watch-filter, the machine controller sees only labelled objects: the claim's
		// answer must reach it.
		labels[clusterv1.WatchLabel] = v
	}
	claim := &ipamv1.IPAddressClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: claimName(m.osm), Namespace: m.osm.Namespace,
			Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: infrav1.GroupVersion.String(), Kind: "OpenStackMachine", Name: m.osm.Name, UID: m.osm.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: ipamv1.IPAddressClaimSpec{ClusterName: m.cluster.Name, PoolRef: poolRef},
	}
	err := m.r.Client.Create(ctx, claim)
	if apierrors.IsAlreadyExists(err) {
		// Made by a reconcile the cache has not caught up with; the next one reads it.
		return &poolAddressFound{waiting: fmt.Sprintf("waiting for IPAddressClaim %s to be read", claim.Name), Outcome: outcome.After(requeue.Cache)}
	}
	if err != nil {
		return &poolAddressFound{Outcome: outcome.Failed(fmt.Errorf("creating IPAddressClaim %s: %w", claim.Name, err))}
	}
	m.report.Changed("ClaimedAddress", report.Resource{Kind: "IPAddressClaim", Name: claim.Name}, "Claimed a floating IP from %s %s", poolRef.Kind, poolRef.Name)
	return &poolAddressFound{waiting: fmt.Sprintf("waiting for %s %s to give IPAddressClaim %s an address", poolRef.Kind, poolRef.Name, claim.Name)}
}

// primaryAddress is the server's fixed address the pool's floating IP goes to: the one on the
// cluster network (or its zone's machine subnet's network), else the first Nova shows.
func (m *machineReconcile) primaryAddress(server *servers.Server) string {
	network := ""
	if m.osc.Status.Network != nil {
		network = m.osc.Status.Network.Name
	}
	if z := m.osc.Status.MachineSubnetOf(m.machine.Spec.FailureDomain); z != nil && machineSubnetMapped(&m.osc.Spec, z.AvailabilityZone) {
		network = z.Network.Name
	}
	if address := compute.FixedAddress(server, network); address != "" {
		return address
	}
	for _, a := range compute.Addresses(server) {
		if a.Type == clusterv1.MachineInternalIP {
			return a.Address
		}
	}
	return ""
}

// deleteClaim deletes the machine's IPAddressClaim, so that its pool takes the address back.
func (m *machineReconcile) deleteClaim(ctx context.Context) error {
	claim := &ipamv1.IPAddressClaim{}
	err := m.r.Client.Get(ctx, client.ObjectKey{Namespace: m.osm.Namespace, Name: claimName(m.osm)}, claim)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading IPAddressClaim %s: %w", claimName(m.osm), err)
	}
	if !m.ownsClaim(claim) || !claim.DeletionTimestamp.IsZero() {
		return nil
	}
	if err := m.r.Client.Delete(ctx, claim); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting IPAddressClaim %s: %w", claim.Name, err)
	}
	m.report.Changed("ReleasedAddress", report.Resource{Kind: "IPAddressClaim", Name: claim.Name}, "Gave the floating IP of IPAddressClaim %s back to its pool", claim.Name)
	return nil
}
