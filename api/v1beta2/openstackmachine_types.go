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

package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// OpenStackMachineSpec is the desired state of an OpenStackMachine.
type OpenStackMachineSpec struct {
	// ProviderID is the machine's ID as Cluster API knows it: openstack:///<server id>, or
	// openstack://<region>/<server id> as upstream CAPO writes it. The controller sets it; it
	// cannot change once set. It names a server to look at, never one to take: the server must
	// carry this machine's mark.
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^openstack://[A-Za-z0-9._-]{0,63}/[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="cannot change once set"
	// +optional
	ProviderID *string `json:"providerID,omitempty"`

	// Flavor selects the Nova flavor, by ID or by name.
	// +required
	Flavor FlavorParam `json:"flavor"`

	// Image selects the Glance image to boot.
	// +required
	Image infrav1.ImageParam `json:"image"`

	// SSHKeyName is the name of a Nova keypair to inject.
	// +optional
	SSHKeyName string `json:"sshKeyName,omitempty"`

	// Ports are the server's ports. When empty the server gets one port on the cluster network.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Ports []PortOpts `json:"ports,omitempty"`

	// Trunk makes each of the machine's ports the parent port of a Neutron trunk (named like the
	// port), unless the port says otherwise: what VLAN subports of a workload (HyperShift's,
	// an SR-IOV CNI's) hang from. Neutron must have the trunk extension.
	// +optional
	Trunk bool `json:"trunk,omitempty"`

	// SecurityGroups are added to every port that does not list its own.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +optional
	SecurityGroups []infrav1.SecurityGroupParam `json:"securityGroups,omitempty"`

	// Tags are added to the server and its ports: at most 50 (Nova's limit), each at most 60
	// characters, without a comma or a slash (Nova's and Neutron's rules).
	// +listType=set
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=60
	// +kubebuilder:validation:items:Pattern=`^[^,/]+$`
	// +optional
	Tags []string `json:"tags,omitempty"`

	// ServerMetadata is Nova metadata for the server: at most 100 items (Nova allows 128, and
	// the controller adds its own). The keys capo-openstackmachine, capo-bastion and
	// capo-bastion-spec are the controller's marks.
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:XValidation:rule="self.all(m, m.key != 'capo-openstackmachine')",message="the key capo-openstackmachine is the controller's mark of the machine's server"
	// +kubebuilder:validation:XValidation:rule="self.all(m, m.key != 'capo-bastion' && m.key != 'capo-bastion-spec')",message="the keys capo-bastion and capo-bastion-spec are the controller's marks of a cluster's bastion"
	// +optional
	ServerMetadata []infrav1.ServerMetadata `json:"serverMetadata,omitempty"`

	// ConfigDrive passes user data through a config drive instead of the metadata service.
	// +optional
	ConfigDrive *bool `json:"configDrive,omitempty"`

	// ServerGroup puts the server in a Nova server group.
	// +optional
	ServerGroup *infrav1.ServerGroupParam `json:"serverGroup,omitempty"`

	// SchedulerHintAdditionalProperties are scheduler hints passed to Nova with the server's
	// create, each under its name, besides the server group's.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	SchedulerHintAdditionalProperties []infrav1.SchedulerHintAdditionalProperty `json:"schedulerHintAdditionalProperties,omitempty"`

	// RootVolume boots the server from a Cinder volume made from the image, instead of the
	// flavor's local disk: what a flavor without a root disk needs. The controller creates the
	// volume (named <machine>-root), and Nova deletes it with the server.
	// +optional
	RootVolume *infrav1.RootVolume `json:"rootVolume,omitempty"`

	// AdditionalBlockDevices are further disks of the server, each a Cinder volume (named
	// <machine>-<name>) or a part of the flavor's ephemeral disk. Nova tags each device with its
	// name and deletes them with the server.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	// +optional
	AdditionalBlockDevices []infrav1.AdditionalBlockDevice `json:"additionalBlockDevices,omitempty"`

	// IdentityRef names the Secret with the clouds.yaml for this machine. The cluster's is used
	// when it is not set.
	// +optional
	IdentityRef *infrav1.OpenStackIdentityReference `json:"identityRef,omitempty"`

	// FloatingIPPoolRef names an IP address pool, in the machine's namespace, to take a floating
	// IP from (an OpenStackFloatingIPPool, or another IPAM provider's pool whose addresses are
	// floating IPs of the machine's project): the controller claims an address with an
	// IPAddressClaim named <machine>-floating-ip-address and puts it on the server's port on the
	// cluster network (else on the port of the server's first address). Deleting the machine
	// gives the address back to the pool.
	// +optional
	FloatingIPPoolRef *corev1.TypedLocalObjectReference `json:"floatingIPPoolRef,omitempty"`
}

// FlavorParam selects a Nova flavor: by ID, or by a filter.
// +kubebuilder:validation:XValidation:rule="has(self.id) != has(self.filter)",message="exactly one of id or filter must be set"
type FlavorParam struct {
	// ID of the flavor.
	// +kubebuilder:validation:MinLength=1
	// +optional
	ID *string `json:"id,omitempty"`

	// Filter selects the flavor by name.
	// +optional
	Filter *FlavorFilter `json:"filter,omitempty"`
}

// FlavorFilter selects a flavor by its attributes.
type FlavorFilter struct {
	// Name of the flavor.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name *string `json:"name"`
}

// PortOpts describes one port of a server.
// +kubebuilder:validation:XValidation:rule="!has(self.enablePortSecurity) || self.enablePortSecurity || !has(self.securityGroups) || size(self.securityGroups) == 0",fieldPath=".securityGroups",reason=FieldValueForbidden,message="must be empty when enablePortSecurity is false"
type PortOpts struct {
	// Network is the port's network; the cluster network when not set.
	// +optional
	Network *infrav1.NetworkParam `json:"network,omitempty"`

	// Description of the port.
	// +optional
	Description *string `json:"description,omitempty"`

	// NameSuffix is appended to the machine name to name the port; the port's index otherwise.
	// +kubebuilder:validation:MinLength=1
	// +optional
	NameSuffix *string `json:"nameSuffix,omitempty"`

	// FixedIPs are the subnets and/or addresses the port gets.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +optional
	FixedIPs []infrav1.FixedIP `json:"fixedIPs,omitempty"`

	// SecurityGroups of the port; the machine's when not set.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +optional
	SecurityGroups []infrav1.SecurityGroupParam `json:"securityGroups,omitempty"`

	// Tags are added to the port, besides the machine's: as many and of the form the machine's
	// may be.
	// +listType=set
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=60
	// +kubebuilder:validation:items:Pattern=`^[^,/]+$`
	// +optional
	Tags []string `json:"tags,omitempty"`

	// Trunk makes the port the parent port of a Neutron trunk (true) or not (false); the
	// machine's trunk setting when not set.
	// +optional
	Trunk *bool `json:"trunk,omitempty"`

	// EnablePortSecurity false turns off port security on the port, true turns it on; the
	// network's setting applies when not set.
	// +optional
	EnablePortSecurity *bool `json:"enablePortSecurity,omitempty"`

	// AdminStateUp creates the port up (true, Neutron's default) or down (false).
	// +optional
	AdminStateUp *bool `json:"adminStateUp,omitempty"`

	// MACAddress is the port's MAC address; Neutron generates one when not set.
	// +kubebuilder:validation:Pattern=`^([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$`
	// +optional
	MACAddress *string `json:"macAddress,omitempty"`

	// AllowedAddressPairs are further addresses (or CIDRs, where Neutron allows them) the port may
	// send from, besides its own: a virtual IP managed inside the cluster (kube-vip, keepalived).
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +optional
	AllowedAddressPairs []infrav1.AddressPair `json:"allowedAddressPairs,omitempty"`

	// HostID binds the port to a compute host (binding:host_id); usually an administrator's.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	HostID *string `json:"hostID,omitempty"`

	// VNICType is the port's vNIC type (binding:vnic_type): normal, direct (SR-IOV), macvtap,
	// direct-physical, baremetal, virtio-forwarder, smart-nic, remote-managed, ... Neutron
	// checks the value; the cloud decides what is available.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	VNICType *string `json:"vnicType,omitempty"`

	// Profile is the port's binding profile (binding:profile), with the keys known to work.
	// +optional
	Profile *infrav1.BindingProfile `json:"profile,omitempty"`

	// PropagateUplinkStatus passes the physical link's status to the port (Neutron's
	// uplink-status-propagation extension).
	// +optional
	PropagateUplinkStatus *bool `json:"propagateUplinkStatus,omitempty"`

	// ValueSpecs are further attributes of Neutron's port create request, as key and value:
	// an escape hatch for extensions the API does not model. A key the provider sets itself is
	// refused.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	// +optional
	ValueSpecs []infrav1.ValueSpec `json:"valueSpecs,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=openstackmachines,scope=Namespaced,categories=cluster-api,shortName=osm
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster this OpenStackMachine belongs to"
// +kubebuilder:printcolumn:name="Failure Domain",type="string",JSONPath=".status.failureDomain",description="Availability zone the server runs in"
// +kubebuilder:printcolumn:name="State",type="string",JSONPath=".status.instanceState",description="Nova state of the server"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Whether the machine's infrastructure is ready"
// +kubebuilder:printcolumn:name="ProviderID",type="string",JSONPath=".spec.providerID",description="Provider ID of the server"
// +kubebuilder:printcolumn:name="Machine",type="string",JSONPath=".metadata.ownerReferences[?(@.kind==\"Machine\")].name",description="Machine that owns this OpenStackMachine",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// OpenStackMachine is the infrastructure of a Cluster API machine on OpenStack: a Nova server and
// its ports, volumes and load balancer memberships.
type OpenStackMachine struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec OpenStackMachineSpec `json:"spec"`

	// +optional
	Status infrav1.OpenStackMachineStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// OpenStackMachineList is a list of OpenStackMachines.
type OpenStackMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenStackMachine `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &OpenStackMachine{}, &OpenStackMachineList{})
}
