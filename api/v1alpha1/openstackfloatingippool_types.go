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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// ReclaimPolicy says what becomes of a floating IP the pool allocated once the claim that held
// it is gone.
// +kubebuilder:validation:Enum=Retain;Delete
type ReclaimPolicy string

const (
	// ReclaimDelete releases the floating IP in Neutron.
	ReclaimDelete ReclaimPolicy = "Delete"
	// ReclaimRetain keeps it, unassociated, for the pool's next claim (the default).
	ReclaimRetain ReclaimPolicy = "Retain"
)

const (
	// FloatingIPPoolFinalizer holds a pool until every address it gave out is back and the
	// floating IPs it allocated are released.
	FloatingIPPoolFinalizer = "openstackfloatingippool.infrastructure.cluster.x-k8s.io"
	// ReleaseFloatingIPFinalizer holds an IPAddress the pool gave out until its floating IP is
	// released (or kept, unassociated, for the pool): upstream CAPO's finalizer of the same name.
	ReleaseFloatingIPFinalizer = "openstackfloatingippool.infrastructure.cluster.x-k8s.io/delete-floating-ip"

	// PoolReadyCondition says the pool can give out addresses: its credential works and its
	// external network is found.
	PoolReadyCondition = "PoolReady"
)

// OpenStackFloatingIPPoolSpec is where the pool's floating IPs come from.
type OpenStackFloatingIPPoolSpec struct {
	// PreAllocatedFloatingIPs are addresses the operator allocated in the credential's project,
	// handed out before the pool allocates any: never marked, never released by the pool. One
	// that does not exist yet is allocated at that address.
	// +listType=set
	// +kubebuilder:validation:MaxItems=1024
	// +kubebuilder:validation:items:MaxLength=45
	// +optional
	PreAllocatedFloatingIPs []string `json:"preAllocatedFloatingIPs,omitempty"`

	// MaxIPs bounds how many addresses the pool gives out at once; not set: no bound but the
	// project's quota.
	// +optional
	MaxIPs *int `json:"maxIPs,omitempty"`

	// IdentityRef is the credential the pool allocates and releases floating IPs with: a Secret
	// in the pool's namespace, or an OpenStackClusterIdentity that selects it.
	// +required
	IdentityRef infrav1.OpenStackIdentityReference `json:"identityRef"`

	// FloatingIPNetwork is the external network the floating IPs are on; not set: the cloud's
	// only external network.
	// +optional
	FloatingIPNetwork *infrav1.NetworkParam `json:"floatingIPNetwork,omitempty"`

	// ReclaimPolicy is what becomes of an address the pool allocated once its claim is gone:
	// Retain (the default) keeps it for the next claim, Delete releases it. Pre-allocated
	// addresses are always kept.
	// +optional
	ReclaimPolicy ReclaimPolicy `json:"reclaimPolicy,omitempty"`
}

// OpenStackFloatingIPPoolStatus is what the pool holds, rebuilt from Neutron and the
// IPAddresses at every reconcile.
type OpenStackFloatingIPPoolStatus struct {
	// ClaimedIPs are the addresses given out: one IPAddress each.
	// +listType=set
	// +optional
	ClaimedIPs []string `json:"claimedIPs,omitempty"`

	// AvailableIPs are the addresses the pool holds and no claim has: the pre-allocated ones and
	// those it allocated and kept.
	// +listType=set
	// +optional
	AvailableIPs []string `json:"availableIPs,omitempty"`

	// FailedIPs are pre-allocated addresses the pool could not hand out: on a port already,
	// carrying another object's mark, or refused by Neutron (another project's, say).
	// +listType=set
	// +optional
	FailedIPs []string `json:"failedIPs,omitempty"`

	// FloatingIPNetwork is the external network found for spec.floatingIPNetwork.
	// +optional
	FloatingIPNetwork *infrav1.NetworkStatus `json:"floatingIPNetwork,omitempty"`

	// Conditions are PoolReady and Ready.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=openstackfloatingippools,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Network",type="string",JSONPath=".status.floatingIPNetwork.name"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// OpenStackFloatingIPPool is an IPAM pool of floating IPs: it answers the IPAddressClaims that
// name it (an OpenStackMachine's spec.floatingIPPoolRef makes one) with a floating IP of its
// project, and the machine puts that address on its server's port.
type OpenStackFloatingIPPool struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec OpenStackFloatingIPPoolSpec `json:"spec"`
	// +optional
	Status OpenStackFloatingIPPoolStatus `json:"status,omitempty"`
}

// GetConditions returns the pool's conditions.
func (p *OpenStackFloatingIPPool) GetConditions() []metav1.Condition { return p.Status.Conditions }

// SetConditions sets the pool's conditions.
func (p *OpenStackFloatingIPPool) SetConditions(c []metav1.Condition) { p.Status.Conditions = c }

// +kubebuilder:object:root=true

// OpenStackFloatingIPPoolList is a list of OpenStackFloatingIPPool.
type OpenStackFloatingIPPoolList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenStackFloatingIPPool `json:"items"`
}
