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

package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

const (
	// MachineFinalizer lets the controller remove the server, its ports and its load balancer
	// memberships before an OpenStackMachine goes away.
	MachineFinalizer = "openstackmachine.infrastructure.cluster.x-k8s.io"
)

// OpenStackMachineSpec is the desired state of an OpenStackMachine.
// +kubebuilder:validation:XValidation:rule="has(self.flavor) != has(self.flavorID)",message="exactly one of flavor or flavorID must be set"
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

	// Flavor is the name of the Nova flavor.
	// +kubebuilder:validation:MinLength=1
	// +optional
	Flavor *string `json:"flavor,omitempty"`

	// FlavorID is the ID of the Nova flavor.
	// +kubebuilder:validation:MinLength=1
	// +optional
	FlavorID *string `json:"flavorID,omitempty"`

	// Image selects the Glance image to boot.
	// +required
	Image ImageParam `json:"image"`

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
	SecurityGroups []SecurityGroupParam `json:"securityGroups,omitempty"`

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
	ServerMetadata []ServerMetadata `json:"serverMetadata,omitempty"`

	// ConfigDrive passes user data through a config drive instead of the metadata service.
	// +optional
	ConfigDrive *bool `json:"configDrive,omitempty"`

	// ServerGroup puts the server in a Nova server group.
	// +optional
	ServerGroup *ServerGroupParam `json:"serverGroup,omitempty"`

	// SchedulerHintAdditionalProperties are scheduler hints passed to Nova with the server's
	// create, each under its name, besides the server group's.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	SchedulerHintAdditionalProperties []SchedulerHintAdditionalProperty `json:"schedulerHintAdditionalProperties,omitempty"`

	// RootVolume boots the server from a Cinder volume made from the image, instead of the
	// flavor's local disk: what a flavor without a root disk needs. The controller creates the
	// volume (named <machine>-root), and Nova deletes it with the server.
	// +optional
	RootVolume *RootVolume `json:"rootVolume,omitempty"`

	// AdditionalBlockDevices are further disks of the server, each a Cinder volume (named
	// <machine>-<name>) or a part of the flavor's ephemeral disk. Nova tags each device with its
	// name and deletes them with the server.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	// +optional
	AdditionalBlockDevices []AdditionalBlockDevice `json:"additionalBlockDevices,omitempty"`

	// IdentityRef names the Secret with the clouds.yaml for this machine. The cluster's is used
	// when it is not set.
	// +optional
	IdentityRef *OpenStackIdentityReference `json:"identityRef,omitempty"`

	// FloatingIPPoolRef names an IP address pool, in the machine's namespace, to take a floating
	// IP from (an OpenStackFloatingIPPool, or another IPAM provider's pool whose addresses are
	// floating IPs of the machine's project): the controller claims an address with an
	// IPAddressClaim named <machine>-floating-ip-address and puts it on the server's port on the
	// cluster network (else on the port of the server's first address). Deleting the machine
	// gives the address back to the pool.
	// +optional
	FloatingIPPoolRef *corev1.TypedLocalObjectReference `json:"floatingIPPoolRef,omitempty"`
}

// RootVolume is the Cinder volume a server boots from.
type RootVolume struct {
	// SizeGiB is the volume's size in GiB: at least the image's minimum disk.
	// +kubebuilder:validation:Minimum=1
	// +required
	SizeGiB int `json:"sizeGiB"`

	BlockDeviceVolume `json:",inline"`
}

// BlockDeviceVolume says where Cinder makes a volume, and of which type.
type BlockDeviceVolume struct {
	// Type is the Cinder volume type; the cloud's default type when not set.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Type string `json:"type,omitempty"`

	// AvailabilityZone is the Cinder availability zone of the volume. When not set, the volume
	// is made in the machine's failure domain if Cinder has a zone of that name, and where
	// Cinder's default puts it otherwise.
	// +optional
	AvailabilityZone *VolumeAvailabilityZone `json:"availabilityZone,omitempty"`
}

// VolumeAZSource says where a volume's availability zone comes from.
// +kubebuilder:validation:Enum=Name;Machine
type VolumeAZSource string

const (
	// VolumeAZFromName: the zone the name field gives.
	VolumeAZFromName VolumeAZSource = "Name"
	// VolumeAZFromMachine: the Machine's failure domain.
	VolumeAZFromMachine VolumeAZSource = "Machine"
)

// VolumeAZName is the name of a Cinder availability zone.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=255
// +kubebuilder:validation:Pattern="^[^ ]+$"
type VolumeAZName string

// VolumeAvailabilityZone is a volume's availability zone: one named, or the Machine's.
// +kubebuilder:validation:XValidation:rule="!has(self.from) || self.from == 'Name' ? has(self.name) : !has(self.name)",message="name must be set when from is Name (the default), and must not be set when from is Machine"
type VolumeAvailabilityZone struct {
	// From is Name (the zone in name) or Machine (the Machine's failure domain).
	// +kubebuilder:default:=Name
	// +optional
	From VolumeAZSource `json:"from,omitempty"`

	// Name is the zone, when from is Name.
	// +optional
	Name *VolumeAZName `json:"name,omitempty"`
}

// BlockDeviceType is where an additional block device's storage is.
// +kubebuilder:validation:Enum=Local;Volume
type BlockDeviceType string

const (
	// LocalBlockDevice is a part of the flavor's ephemeral disk, on the compute host.
	LocalBlockDevice BlockDeviceType = "Local"
	// VolumeBlockDevice is a Cinder volume.
	VolumeBlockDevice BlockDeviceType = "Volume"
)

// AdditionalBlockDevice is one further disk of a server.
type AdditionalBlockDevice struct {
	// Name names the device: Nova tags it so (the guest reads the tag from the metadata
	// service or the config drive), and a volume is named <machine>-<name>. "root" is the root
	// volume's.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=60
	// +kubebuilder:validation:Pattern=`^[^,/]+$`
	// +kubebuilder:validation:XValidation:rule="self != 'root'",message="root is the root volume's name"
	// +required
	Name string `json:"name"`

	// SizeGiB is the device's size in GiB.
	// +kubebuilder:validation:Minimum=1
	// +required
	SizeGiB int `json:"sizeGiB"`

	// Storage is where the device is: a Cinder volume, or local.
	// +required
	Storage BlockDeviceStorage `json:"storage"`
}

// BlockDeviceStorage is an additional block device's storage. A volume given with type Local is
// ignored, as upstream CAPO ignores it (the admission webhook warns).
type BlockDeviceStorage struct {
	// Type is Volume (a Cinder volume) or Local (on the compute host, from the flavor's
	// ephemeral disk).
	// +required
	Type BlockDeviceType `json:"type"`

	// Volume says where and of which type the volume is, when type is Volume.
	// +optional
	Volume *BlockDeviceVolume `json:"volume,omitempty"`
}

// ServerMetadata is one key and value of Nova server metadata.
type ServerMetadata struct {
	// Key is the metadata key.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +required
	Key string `json:"key"`

	// Value is the metadata value.
	// +kubebuilder:validation:MaxLength=255
	// +required
	Value string `json:"value"`
}

// PortOpts describes one port of a server.
// +kubebuilder:validation:XValidation:rule="!has(self.disablePortSecurity) || !self.disablePortSecurity || !has(self.securityGroups) || size(self.securityGroups) == 0",fieldPath=".securityGroups",reason=FieldValueForbidden,message="must be empty when disablePortSecurity is true"
type PortOpts struct {
	// Network is the port's network; the cluster network when not set.
	// +optional
	Network *NetworkParam `json:"network,omitempty"`

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
	FixedIPs []FixedIP `json:"fixedIPs,omitempty"`

	// SecurityGroups of the port; the machine's when not set.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +optional
	SecurityGroups []SecurityGroupParam `json:"securityGroups,omitempty"`

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

	// DisablePortSecurity turns off port security on the port; the network's setting applies
	// when not set.
	// +optional
	DisablePortSecurity *bool `json:"disablePortSecurity,omitempty"`

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
	AllowedAddressPairs []AddressPair `json:"allowedAddressPairs,omitempty"`

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
	Profile *BindingProfile `json:"profile,omitempty"`

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
	ValueSpecs []ValueSpec `json:"valueSpecs,omitempty"`
}

// AddressPair is an address a port may send from besides its own.
type AddressPair struct {
	// IPAddress is an IP address, or a CIDR where Neutron's configuration allows one.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=49
	// +kubebuilder:validation:XValidation:rule="isIP(self) || isCIDR(self)",messageExpression="'must be an IP address or a CIDR, got ' + self"
	// +required
	IPAddress string `json:"ipAddress"`

	// MACAddress is the MAC address of the pair; the port's when not set.
	// +kubebuilder:validation:Pattern=`^([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$`
	// +optional
	MACAddress *string `json:"macAddress,omitempty"`
}

// BindingProfile is a port's binding profile.
type BindingProfile struct {
	// OVSHWOffload asks for Open vSwitch hardware offload (switchdev capabilities); Nova sets it
	// itself on clouds since Yoga.
	// +optional
	OVSHWOffload *bool `json:"ovsHWOffload,omitempty"`

	// TrustedVF puts an SR-IOV virtual function in trusted mode.
	// +optional
	TrustedVF *bool `json:"trustedVF,omitempty"`
}

// ValueSpec is one further attribute of Neutron's port create request.
// +kubebuilder:validation:XValidation:rule="!(self.key in ['name', 'description', 'network_id', 'fixed_ips', 'security_groups', 'port_security_enabled', 'admin_state_up', 'mac_address', 'allowed_address_pairs', 'propagate_uplink_status', 'binding:host_id', 'binding:vnic_type', 'binding:profile', 'device_id', 'device_owner', 'tags', 'tenant_id', 'project_id', 'shared'])",fieldPath=".key",messageExpression="'must not be ' + self.key + ': the provider sets it, or it is a field of the port spec'"
type ValueSpec struct {
	// Name identifies the entry in the list; it is not sent to Neutron.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +required
	Name string `json:"name"`

	// Key is the attribute's name in Neutron's request.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +required
	Key string `json:"key"`

	// Value is the attribute's value, as a string.
	// +kubebuilder:validation:MaxLength=1024
	// +required
	Value string `json:"value"`
}

// FixedIP is a subnet and/or address for a port.
// +kubebuilder:validation:MinProperties=1
type FixedIP struct {
	// Subnet selects the subnet of the address; it must be on the port's network.
	// +optional
	Subnet *SubnetParam `json:"subnet,omitempty"`

	// IPAddress is a specific address.
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="must be an IP address"
	// +kubebuilder:validation:MaxLength=45
	// +optional
	IPAddress *string `json:"ipAddress,omitempty"`
}

// OpenStackMachineStatus is the observed state of an OpenStackMachine, on the Cluster API
// v1beta2 provider contract.
type OpenStackMachineStatus struct {
	// Initialization reports when the machine's infrastructure is provisioned.
	// +optional
	Initialization *OpenStackMachineInitializationStatus `json:"initialization,omitempty"`

	// Conditions describe the state of the server and its load balancer membership.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// Addresses are the server's addresses.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Addresses []clusterv1.MachineAddress `json:"addresses,omitempty"`

	// InstanceID is the ID of the Nova server.
	// +optional
	InstanceID *string `json:"instanceID,omitempty"`

	// InstanceState is the Nova state of the server.
	// +optional
	InstanceState *InstanceState `json:"instanceState,omitempty"`

	// FailureDomain is the availability zone the server runs in, as Nova reports it.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	FailureDomain string `json:"failureDomain,omitempty"`
}

// OpenStackMachineInitializationStatus is the initialization part of the v1beta2 contract.
// +kubebuilder:validation:MinProperties=1
type OpenStackMachineInitializationStatus struct {
	// Provisioned is true once the server exists and has its addresses.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=openstackmachines,scope=Namespaced,categories=cluster-api,shortName=osm
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1_v1beta2"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster this OpenStackMachine belongs to"
// +kubebuilder:printcolumn:name="Failure Domain",type="string",JSONPath=".status.failureDomain",description="Availability zone the server runs in"
// +kubebuilder:printcolumn:name="State",type="string",JSONPath=".status.instanceState",description="Nova state of the server"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Whether the machine's infrastructure is ready"
// +kubebuilder:printcolumn:name="ProviderID",type="string",JSONPath=".spec.providerID",description="Provider ID of the server"
// +kubebuilder:printcolumn:name="Machine",type="string",JSONPath=".metadata.ownerReferences[?(@.kind==\"Machine\")].name",description="Machine that owns this OpenStackMachine",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// OpenStackMachine is the infrastructure of one Cluster API machine on OpenStack: a Nova server
// and its ports.
type OpenStackMachine struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec OpenStackMachineSpec `json:"spec"`

	// +optional
	Status OpenStackMachineStatus `json:"status,omitempty"`
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

// SchedulerHintAdditionalProperty is one Nova scheduler hint.
type SchedulerHintAdditionalProperty struct {
	// Name is the hint's key in Nova's os:scheduler_hints.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Name string `json:"name"`

	// Value is the hint's value.
	// +required
	Value SchedulerHintAdditionalValue `json:"value"`
}

// SchedulerHintAdditionalValue is a scheduler hint's value: a boolean, a number or a string, as
// type says.
// +kubebuilder:validation:XValidation:rule="self.type == 'Bool' ? has(self.bool) : !has(self.bool)",message="bool is required when type is Bool, and must not be set otherwise"
// +kubebuilder:validation:XValidation:rule="self.type == 'Number' ? has(self.number) : !has(self.number)",message="number is required when type is Number, and must not be set otherwise"
// +kubebuilder:validation:XValidation:rule="self.type == 'String' ? has(self.string) : !has(self.string)",message="string is required when type is String, and must not be set otherwise"
type SchedulerHintAdditionalValue struct {
	// Type says which of bool, number and string holds the value.
	// +required
	// +kubebuilder:validation:Enum=Bool;Number;String
	Type string `json:"type"`

	// Bool is the value when type is Bool.
	// +optional
	Bool *bool `json:"bool,omitempty"`

	// Number is the value when type is Number.
	// +optional
	Number *int `json:"number,omitempty"`

	// String is the value when type is String.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +optional
	String *string `json:"string,omitempty"`
}
