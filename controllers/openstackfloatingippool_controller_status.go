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
	"slices"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1alpha1"
	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// How an OpenStackFloatingIPPool's status, and the status of the IPAddressClaims it answers, are
// computed from what a reconcile found.

// poolFindings is what one reconcile of a pool found.
type poolFindings struct {
	normal bool
	// identity is why the credentials did not work; networkErr why the external network or the
	// pool's floating IPs could not be read.
	identity, networkErr error
	network              *infrav1.NetworkStatus
	// addresses are the pool's IPAddresses, by claim name; marked the floating IPs it allocated.
	addresses map[string]ipamv1.IPAddress
	marked    []floatingips.FloatingIP
	// failed are the pre-allocated addresses found unusable, with why; lookups how many were
	// looked up.
	failed  map[string]string
	lookups int
	// exhausted: a claim found spec.maxIPs addresses out.
	exhausted bool
	// deleteWaiting is how many addresses the deletion waits for.
	deleteWaiting int
}

// fail records that pre-allocated address cannot be handed out, and why.
func (f *poolFindings) fail(address, why string) {
	if f.failed == nil {
		f.failed = map[string]string{}
	}
	f.failed[address] = why
}

// updateStatus sets the pool's status and conditions from what the reconcile found, then Ready.
func (p *poolReconcile) updateStatus() {
	var w warnings
	setPoolStatus(p.pool, &w, &p.found)
	w.emit(p.report)
}

func setPoolStatus(pool *infrav1alpha1.OpenStackFloatingIPPool, w *warnings, f *poolFindings) {
	if f.normal {
		initConditions(pool, poolConditionTypes)
	}
	switch {
	case f.identity != nil:
		reportProblem(w, pool, infrav1alpha1.PoolReadyCondition, infrav1.IdentityErrorReason, failureMessage(f.identity))
	case f.networkErr != nil:
		setFailure(pool, w, infrav1alpha1.PoolReadyCondition, f.networkErr)
	case f.deleteWaiting > 0:
		setCondition(pool, infrav1alpha1.PoolReadyCondition, metav1.ConditionFalse, infrav1.DeletingReason,
			fmt.Sprintf("waiting for the claims of %d addresses to be deleted", f.deleteWaiting))
	case f.network != nil:
		pool.Status.FloatingIPNetwork = f.network
		message := "floating IPs on network " + f.network.Name
		if f.exhausted {
			message += "; every address it may give out (spec.maxIPs) is out"
		}
		setCondition(pool, infrav1alpha1.PoolReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason, message)
	}
	if f.addresses != nil {
		pool.Status.ClaimedIPs = nil
		for _, a := range f.addresses {
			pool.Status.ClaimedIPs = append(pool.Status.ClaimedIPs, a.Spec.Address)
		}
		slices.Sort(pool.Status.ClaimedIPs)
	}
	if f.network != nil {
		setPoolAvailable(pool, f)
	}
	setSummary(pool, poolConditionTypes)
}

// setPoolAvailable lists what the pool holds and no claim does, and the pre-allocated addresses
// it could not hand out (those looked up in this reconcile, and those found before that were not
// looked up again).
func setPoolAvailable(pool *infrav1alpha1.OpenStackFloatingIPPool, f *poolFindings) {
	failed := map[string]bool{}
	for address := range f.failed {
		failed[address] = true
	}
	for _, address := range pool.Status.FailedIPs {
		if slices.Contains(pool.Spec.PreAllocatedFloatingIPs, address) {
			failed[address] = true
		}
	}
	available := []string{}
	for _, fip := range f.marked {
		if !f.claimed(fip.FloatingIP) {
			available = append(available, fip.FloatingIP)
		}
	}
	pool.Status.FailedIPs = nil
	for _, address := range pool.Spec.PreAllocatedFloatingIPs {
		switch {
		case f.claimed(address):
		case failed[address]:
			pool.Status.FailedIPs = append(pool.Status.FailedIPs, address)
		case !slices.Contains(available, address):
			available = append(available, address)
		}
	}
	slices.Sort(available)
	pool.Status.AvailableIPs = available
}

// writeClaimAnswer writes the pool's answer to claim in its status: the IPAddress that holds its
// address, or, when a is nil, why it has none yet.
// exhausted says the pool gives out no more (PoolExhausted), rather than failed (AllocationFailed).
func (r *OpenStackFloatingIPPoolReconciler) writeClaimAnswer(ctx context.Context, claim *ipamv1.IPAddressClaim, a *ipamv1.IPAddress, exhausted bool, why string) error {
	before := claim.DeepCopy()
	if a != nil {
		claim.Status.AddressRef = ipamv1.IPAddressReference{Name: a.Name}
		conditions.Set(claim, metav1.Condition{Type: ipamv1.IPAddressClaimReadyCondition, Status: metav1.ConditionTrue, Reason: infrav1.ReadyReason,
			Message: "floating IP " + a.Spec.Address})
	} else {
		reason := ipamv1.IPAddressClaimReadyAllocationFailedReason
		if exhausted {
			reason = ipamv1.IPAddressClaimReadyPoolExhaustedReason
		}
		conditions.Set(claim, metav1.Condition{Type: ipamv1.IPAddressClaimReadyCondition, Status: metav1.ConditionFalse, Reason: reason, Message: why})
	}
	if equality.Semantic.DeepEqual(before.Status, claim.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, claim, client.MergeFrom(before)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("writing the answer in IPAddressClaim %s: %w", claim.Name, err)
	}
	return nil
}
