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

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// This file holds the types shared by several kinds: references to OpenStack resources (by ID or
// by filter) and the status shapes that describe what the controllers found or created.
//
// JSON field names and shapes follow upstream CAPO's v1beta1 API so that existing YAML applies
// unchanged. Where upstream used MinProperties/MaxProperties to express "ID or filter", we use a
// CEL rule instead: the API server then answers with a sentence that says what is wrong.

// OpenStackIdentityReference names the Secret that holds the clouds.yaml used to reach OpenStack.
type OpenStackIdentityReference struct {
	// Name is the name of a Secret in the same namespace as the object that refers to it, or of
	// an OpenStackClusterIdentity (type ClusterIdentity). The Secret holds clouds.yaml under the
	// key "clouds.yaml" and, optionally, a CA bundle under "cacert".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// CloudName is the name of the cloud in clouds.yaml to use.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +required
	CloudName string `json:"cloudName"`

	// Type is the kind of object Name refers to: Secret (the default), a Secret in the object's
	// namespace; or ClusterIdentity, an OpenStackClusterIdentity (cluster-scoped) that selects
	// the object's namespace.
	// +kubebuilder:validation:Enum=Secret;ClusterIdentity
	// +optional
	Type string `json:"type,omitempty"`

	// Region is the OpenStack region to use, instead of the region_name of the clouds.yaml entry.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Region string `json:"region,omitempty"`
}

// NeutronTag is a tag on a Neutron resource. It may not be empty and may not contain commas,
// because Neutron's tag filters are comma separated.
// +kubebuilder:validation:Pattern:="^[^,]+$"
// +kubebuilder:validation:MinLength:=1
// +kubebuilder:validation:MaxLength:=255
type NeutronTag string

// FilterByNeutronTags selects Neutron resources by their tags.
type FilterByNeutronTags struct {
	// Tags selects resources that have all of these tags.
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Tags []NeutronTag `json:"tags,omitempty"`

	// TagsAny selects resources that have at least one of these tags.
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +optional
	TagsAny []NeutronTag `json:"tagsAny,omitempty"`

	// NotTags excludes resources that have all of these tags.
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +optional
	NotTags []NeutronTag `json:"notTags,omitempty"`

	// NotTagsAny excludes resources that have any of these tags.
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +optional
	NotTagsAny []NeutronTag `json:"notTagsAny,omitempty"`
}

// NetworkParam selects a Neutron network by ID or by filter, not both.
// +kubebuilder:validation:XValidation:rule="has(self.id) != has(self.filter)",message="exactly one of id or filter must be set"
type NetworkParam struct {
	// ID is the UUID of the network.
	// +kubebuilder:validation:Format:=uuid
	// +optional
	ID *string `json:"id,omitempty"`

	// Filter selects the network by its attributes; it must match exactly one network.
	// +optional
	Filter *NetworkFilter `json:"filter,omitempty"`
}

// NetworkFilter selects a Neutron network. At least one property must be set.
// +kubebuilder:validation:MinProperties:=1
type NetworkFilter struct {
	// Name selects by exact name.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Name string `json:"name,omitempty"`
	// Description selects by exact description.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Description string `json:"description,omitempty"`
	// ProjectID selects resources of this project.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	ProjectID string `json:"projectID,omitempty"`

	FilterByNeutronTags `json:",inline"`
}

// SubnetParam selects a Neutron subnet by ID or by filter, not both.
// +kubebuilder:validation:XValidation:rule="has(self.id) != has(self.filter)",message="exactly one of id or filter must be set"
type SubnetParam struct {
	// ID is the UUID of the subnet.
	// +kubebuilder:validation:Format:=uuid
	// +optional
	ID *string `json:"id,omitempty"`

	// Filter selects the subnet by its attributes; it must match exactly one subnet.
	// +optional
	Filter *SubnetFilter `json:"filter,omitempty"`
}

// SubnetFilter selects a Neutron subnet. At least one property must be set.
// +kubebuilder:validation:MinProperties:=1
type SubnetFilter struct {
	// Name selects by exact name.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Name string `json:"name,omitempty"`
	// Description selects by exact description.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Description string `json:"description,omitempty"`
	// ProjectID selects resources of this project.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	ProjectID string `json:"projectID,omitempty"`
	// IPVersion selects subnets of this IP version.
	// +kubebuilder:validation:Enum=4;6
	// +optional
	IPVersion int `json:"ipVersion,omitempty"`
	// GatewayIP selects subnets with this gateway address.
	// +kubebuilder:validation:MaxLength=45
	// +optional
	GatewayIP string `json:"gatewayIP,omitempty"`
	// CIDR selects subnets with this CIDR.
	// +kubebuilder:validation:MaxLength=43
	// +optional
	CIDR string `json:"cidr,omitempty"`
	// IPv6AddressMode selects subnets with this IPv6 address mode.
	// +kubebuilder:validation:Enum=slaac;dhcpv6-stateful;dhcpv6-stateless
	// +optional
	IPv6AddressMode string `json:"ipv6AddressMode,omitempty"`
	// IPv6RAMode selects subnets with this IPv6 router advertisement mode.
	// +kubebuilder:validation:Enum=slaac;dhcpv6-stateful;dhcpv6-stateless
	// +optional
	IPv6RAMode string `json:"ipv6RAMode,omitempty"`

	FilterByNeutronTags `json:",inline"`
}

// RouterParam selects a Neutron router by ID or by filter, not both.
// +kubebuilder:validation:XValidation:rule="has(self.id) != has(self.filter)",message="exactly one of id or filter must be set"
type RouterParam struct {
	// ID is the UUID of the router.
	// +kubebuilder:validation:Format:=uuid
	// +optional
	ID *string `json:"id,omitempty"`

	// Filter selects the router by its attributes; it must match exactly one router.
	// +optional
	Filter *RouterFilter `json:"filter,omitempty"`
}

// RouterFilter selects a Neutron router. At least one property must be set.
// +kubebuilder:validation:MinProperties:=1
type RouterFilter struct {
	// Name selects by exact name.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Name string `json:"name,omitempty"`
	// Description selects by exact description.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Description string `json:"description,omitempty"`
	// ProjectID selects resources of this project.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	ProjectID string `json:"projectID,omitempty"`

	FilterByNeutronTags `json:",inline"`
}

// SecurityGroupParam selects a Neutron security group by ID or by filter, not both.
// +kubebuilder:validation:XValidation:rule="has(self.id) != has(self.filter)",message="exactly one of id or filter must be set"
type SecurityGroupParam struct {
	// ID is the UUID of the security group.
	// +kubebuilder:validation:Format:=uuid
	// +optional
	ID *string `json:"id,omitempty"`

	// Filter selects the security group by its attributes; it must match exactly one group.
	// +optional
	Filter *SecurityGroupFilter `json:"filter,omitempty"`
}

// SecurityGroupFilter selects a Neutron security group. At least one property must be set.
// +kubebuilder:validation:MinProperties:=1
type SecurityGroupFilter struct {
	// Name selects by exact name.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Name string `json:"name,omitempty"`
	// Description selects by exact description.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Description string `json:"description,omitempty"`
	// ProjectID selects resources of this project.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	ProjectID string `json:"projectID,omitempty"`

	FilterByNeutronTags `json:",inline"`
}

// ImageParam selects a Glance image by ID, by filter, or through an ORC Image: exactly one.
// +kubebuilder:validation:XValidation:rule="(has(self.id) ? 1 : 0) + (has(self.filter) ? 1 : 0) + (has(self.imageRef) ? 1 : 0) == 1",message="exactly one of id, filter or imageRef must be set"
type ImageParam struct {
	// ID is the UUID of the image.
	// +kubebuilder:validation:Format:=uuid
	// +optional
	ID *string `json:"id,omitempty"`

	// Filter selects the image by name and tags; it must match exactly one image.
	// +optional
	Filter *ImageFilter `json:"filter,omitempty"`

	// ImageRef names an Image of the OpenStack Resource Controller (ORC,
	// openstack.k-orc.cloud/v1alpha1) in the machine's namespace: the server boots from the
	// Glance image ORC reports in the Image's status once it is available. The machine waits
	// for it (InstanceReady reason WaitingForImage).
	// +optional
	ImageRef *ResourceReference `json:"imageRef,omitempty"`
}

// ResourceReference names an object in the referring object's namespace.
type ResourceReference struct {
	// Name of the object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// ImageFilter selects a Glance image. At least one property must be set.
// +kubebuilder:validation:MinProperties:=1
type ImageFilter struct {
	// Name is the image name.
	// +kubebuilder:validation:MinLength=1
	// +optional
	Name *string `json:"name,omitempty"`

	// Tags selects images that have all of these tags.
	// +listType=set
	// +optional
	Tags []string `json:"tags,omitempty"`
}

// ServerGroupParam selects a Nova server group by ID or by filter, not both.
// +kubebuilder:validation:XValidation:rule="has(self.id) != has(self.filter)",message="exactly one of id or filter must be set"
type ServerGroupParam struct {
	// ID is the UUID of the server group.
	// +kubebuilder:validation:Format:=uuid
	// +optional
	ID *string `json:"id,omitempty"`

	// Filter selects the server group by name.
	// +optional
	Filter *ServerGroupFilter `json:"filter,omitempty"`
}

// ServerGroupFilter selects a Nova server group. At least one property must be set.
// +kubebuilder:validation:MinProperties:=1
type ServerGroupFilter struct {
	// Name is the server group name.
	// +kubebuilder:validation:MinLength=1
	// +optional
	Name *string `json:"name,omitempty"`
}

// ExternalRouterIPParam is a gateway address of the cluster router on the external network.
type ExternalRouterIPParam struct {
	// FixedIP is the address on the subnet; Neutron picks one when empty.
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="must be an IP address"
	// +kubebuilder:validation:MaxLength=45
	// +optional
	FixedIP string `json:"fixedIP,omitempty"`

	// Subnet selects the subnet of the external network the address is on.
	// +required
	Subnet SubnetParam `json:"subnet"`
}

// SubnetSpec describes a subnet that the controller creates on the cluster network.
type SubnetSpec struct {
	// CIDR is the address range of the subnet, for example 10.6.0.0/24.
	// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="must be a CIDR, for example 10.6.0.0/24"
	// +kubebuilder:validation:MaxLength=43
	// +required
	CIDR string `json:"cidr"`

	// DNSNameservers are handed out to machines on the subnet by DHCP. They must be of the same
	// IP version as the CIDR.
	// +listType=set
	// +kubebuilder:validation:MaxItems=10
	// +optional
	DNSNameservers []string `json:"dnsNameservers,omitempty"`

	// AllocationPools restricts the addresses that Neutron hands out automatically.
	// +listType=atomic
	// +optional
	AllocationPools []AllocationPool `json:"allocationPools,omitempty"`
}

// AllocationPool is an inclusive range of addresses within a subnet.
type AllocationPool struct {
	// Start is the lowest address of the pool.
	// +required
	Start string `json:"start"`

	// End is the highest address of the pool.
	// +required
	End string `json:"end"`
}

// ManagedSecurityGroups asks the controller to create and manage the cluster's security groups.
type ManagedSecurityGroups struct {
	// AllNodesSecurityGroupRules are extra rules added to the control plane and worker groups.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	AllNodesSecurityGroupRules []SecurityGroupRuleSpec `json:"allNodesSecurityGroupRules,omitempty"`

	// ControlPlaneNodesSecurityGroupRules are extra rules added to the control plane group.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	ControlPlaneNodesSecurityGroupRules []SecurityGroupRuleSpec `json:"controlPlaneNodesSecurityGroupRules,omitempty"`

	// WorkerNodesSecurityGroupRules are extra rules added to the worker group.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	WorkerNodesSecurityGroupRules []SecurityGroupRuleSpec `json:"workerNodesSecurityGroupRules,omitempty"`

	// AllowAllInClusterTraffic opens all traffic between the cluster's machines.
	// +kubebuilder:default:=false
	// +required
	AllowAllInClusterTraffic bool `json:"allowAllInClusterTraffic"`
}

// SecurityGroupRuleSpec is an extra rule for a managed security group.
// +kubebuilder:validation:XValidation:rule="(has(self.remoteGroupID) ? 1 : 0) + (has(self.remoteIPPrefix) ? 1 : 0) + (has(self.remoteManagedGroups) ? 1 : 0) <= 1",message="at most one of remoteGroupID, remoteIPPrefix and remoteManagedGroups may be set"
// +kubebuilder:validation:XValidation:rule="!has(self.portRangeMin) || !has(self.portRangeMax) || self.portRangeMin <= self.portRangeMax",message="portRangeMin must not be greater than portRangeMax"
type SecurityGroupRuleSpec struct {
	// Name identifies the rule within its list; it is not sent to OpenStack.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`

	// Description is the rule's description in Neutron.
	// +optional
	Description *string `json:"description,omitempty"`

	// Direction is ingress or egress.
	// +kubebuilder:validation:Enum=ingress;egress
	// +required
	Direction string `json:"direction"`

	// EtherType is IPv4 or IPv6; IPv4 when unset.
	// +kubebuilder:validation:Enum=IPv4;IPv6
	// +optional
	EtherType *string `json:"etherType,omitempty"`

	// PortRangeMin is the first port of the range the rule opens (TCP, UDP).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	PortRangeMin *int `json:"portRangeMin,omitempty"`

	// PortRangeMax is the last port of the range the rule opens (TCP, UDP).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	PortRangeMax *int `json:"portRangeMax,omitempty"`

	// Protocol is a Neutron protocol name (tcp, udp, icmp, ...) or number.
	// +optional
	Protocol *string `json:"protocol,omitempty"`

	// RemoteGroupID lets traffic in from the members of this security group.
	// +kubebuilder:validation:Format:=uuid
	// +optional
	RemoteGroupID *string `json:"remoteGroupID,omitempty"`

	// RemoteIPPrefix lets traffic in from this CIDR.
	// +optional
	RemoteIPPrefix *string `json:"remoteIPPrefix,omitempty"`

	// RemoteManagedGroups names the managed groups whose members may reach this rule.
	// +listType=set
	// +optional
	RemoteManagedGroups []ManagedSecurityGroupName `json:"remoteManagedGroups,omitempty"`
}

// ManagedSecurityGroupName names one of the security groups the controller manages.
// +kubebuilder:validation:Enum=controlplane;worker;bastion
type ManagedSecurityGroupName string

// NetworkStatus is what the controller knows of a Neutron network.
type NetworkStatus struct {
	// +required
	Name string `json:"name"`
	// +required
	ID string `json:"id"`

	// +optional
	// +listType=atomic
	Tags []string `json:"tags,omitempty"`
}

// NetworkStatusWithSubnets is a network with the subnets that are in use on it.
type NetworkStatusWithSubnets struct {
	NetworkStatus `json:",inline"`

	// Subnets are the subnets of the network that are in use.
	// +optional
	// +listType=atomic
	Subnets []Subnet `json:"subnets,omitempty"`
}

// Subnet is what the controller knows of a Neutron subnet.
type Subnet struct {
	// +required
	Name string `json:"name"`
	// +required
	ID string `json:"id"`
	// +required
	CIDR string `json:"cidr"`

	// +optional
	// +listType=atomic
	Tags []string `json:"tags,omitempty"`
}

// Router is what the controller knows of a Neutron router.
type Router struct {
	// +required
	Name string `json:"name"`
	// +required
	ID string `json:"id"`

	// +optional
	// +listType=atomic
	Tags []string `json:"tags,omitempty"`

	// IPs are the router's external gateway addresses.
	// +optional
	// +listType=atomic
	IPs []string `json:"ips,omitempty"`
}

// LoadBalancer is what the controller knows of one API server load balancer.
type LoadBalancer struct {
	// +required
	Name string `json:"name"`
	// +required
	ID string `json:"id"`

	// IP is the address clients use: the floating IP when there is one, otherwise the VIP.
	// +required
	IP string `json:"ip"`

	// InternalIP is the VIP address on the load balancer subnet.
	// +required
	InternalIP string `json:"internalIP"`

	// AvailabilityZone is the availability zone this load balancer serves. It is empty for the
	// single load balancer of a cluster without availabilityZoneSubnets.
	// +kubebuilder:default=""
	// +optional
	AvailabilityZone string `json:"availabilityZone"`

	// +optional
	// +listType=atomic
	AllowedCIDRs []string `json:"allowedCIDRs,omitempty"`

	// +optional
	// +listType=atomic
	Tags []string `json:"tags,omitempty"`

	// LoadBalancerNetwork is the network, and the subnet, that holds the VIP.
	// +optional
	LoadBalancerNetwork *NetworkStatusWithSubnets `json:"loadBalancerNetwork,omitempty"`

	// ProvisioningStatus is Octavia's provisioning status of the load balancer at the last
	// reconcile: ACTIVE, PENDING_*, ERROR.
	// +optional
	ProvisioningStatus string `json:"provisioningStatus,omitempty"`

	// OperatingStatus is Octavia's operating status of the load balancer at the last reconcile:
	// ONLINE, DEGRADED, ERROR, OFFLINE, NO_MONITOR.
	// +optional
	OperatingStatus string `json:"operatingStatus,omitempty"`

	// Pools are the load balancer's pools, one per port, with their members.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=33
	// +optional
	Pools []LoadBalancerPool `json:"pools,omitempty"`

	// Healthy says whether the load balancer can take traffic: ACTIVE and ONLINE, or ACTIVE and
	// DEGRADED with at least one member ONLINE on the API server port. It is written, true or
	// false, once Octavia's status tree has been read; it is absent before (Health: Unknown).
	// +optional
	Healthy *bool `json:"healthy,omitempty"`

	// Health is Healthy in words: Unknown before the first look at Octavia's status tree,
	// Healthy or Unhealthy after.
	// +kubebuilder:validation:Enum=Unknown;Healthy;Unhealthy
	// +optional
	Health LoadBalancerHealth `json:"health,omitempty"`

	// Maintenance is where the planned maintenance of this load balancer's availability zone
	// stands, while the zone is named in the OpenStackCluster's zone-maintenance annotation.
	// +optional
	Maintenance *ZoneMaintenance `json:"maintenance,omitempty"`

	// FormerSingle is set on the load balancer that was the cluster's single one before it moved
	// to one load balancer per zone (it now serves the first zone under that zone's name).
	// Clients may still use its address alone, so it keeps the control plane machines of every
	// zone as members until the endpoint's DNS records have published every zone for their TTL,
	// or until the OpenStackCluster carries the clients-moved annotation.
	// +optional
	FormerSingle *FormerSingleLoadBalancer `json:"formerSingle,omitempty"`

	// CreateSentAt is when a create of this load balancer got no answer (a timeout): Octavia may
	// still make it, so for three minutes after, the controller looks for it by name rather than
	// create it again. Only set while no load balancer of this name was found.
	// +optional
	CreateSentAt *metav1.Time `json:"createSentAt,omitempty"`

	// FailureDomainWithdrawal is set while this availability zone is out of service (in planned
	// maintenance, or, with withdrawFailedZones, its load balancer stopped serving): its failure
	// domain is reported with controlPlane false (unless Deferred), so that Cluster API's control
	// plane provider places new and remediated control plane machines in the zones that serve.
	// The zone is given back once it has served for two minutes in a row.
	// +optional
	FailureDomainWithdrawal *FailureDomainWithdrawal `json:"failureDomainWithdrawal,omitempty"`
}

// FormerSingleLoadBalancer is where the move of a cluster's former single load balancer to one
// zone stands.
type FormerSingleLoadBalancer struct {
	// AllZonesPublishedAt is when ExternalDNS took up DNS records holding every zone's address;
	// the other zones' machines leave this load balancer once the records' TTL has passed since.
	// +optional
	AllZonesPublishedAt *metav1.Time `json:"allZonesPublishedAt,omitempty"`
}

// FailureDomainWithdrawal is why, and since when, a zone's failure domain is not offered to
// control plane machines.
type FailureDomainWithdrawal struct {
	// Since is when the failure domain was withdrawn.
	// +required
	Since metav1.Time `json:"since"`

	// Reason is LoadBalancerUnhealthy or Maintenance: what took the zone out of service.
	// +kubebuilder:validation:Enum=LoadBalancerUnhealthy;Maintenance
	// +required
	Reason FailureDomainWithdrawalReason `json:"reason"`

	// Deferred means the zone is out of service but its failure domain stays for control plane
	// machines: it is the last one that would. It is withdrawn once another serves.
	// +optional
	Deferred bool `json:"deferred,omitempty"`

	// ServingSince is when the zone was seen serving again (its load balancer healthy, out of
	// maintenance); the failure domain is given back two minutes after, unless the zone stops
	// serving meanwhile.
	// +optional
	ServingSince *metav1.Time `json:"servingSince,omitempty"`
}

// FailureDomainWithdrawalReason is what took a zone out of service.
type FailureDomainWithdrawalReason string

const (
	// WithdrawnUnhealthy: the zone's load balancer cannot take traffic.
	WithdrawnUnhealthy FailureDomainWithdrawalReason = "LoadBalancerUnhealthy"
	// WithdrawnMaintenance: the zone is in planned maintenance.
	WithdrawnMaintenance FailureDomainWithdrawalReason = "Maintenance"
)

// IsHealthy says whether the load balancer was last seen able to take traffic (Healthy).
func (lb *LoadBalancer) IsHealthy() bool {
	return lb.Healthy != nil && *lb.Healthy
}

// LoadBalancerHealth is a load balancer's health in words.
type LoadBalancerHealth string

const (
	// LoadBalancerHealthUnknown: Octavia's status tree has not been read yet.
	LoadBalancerHealthUnknown LoadBalancerHealth = "Unknown"
	// LoadBalancerHealthy: the load balancer can take traffic.
	LoadBalancerHealthy LoadBalancerHealth = "Healthy"
	// LoadBalancerUnhealthy: it cannot (see Healthy).
	LoadBalancerUnhealthy LoadBalancerHealth = "Unhealthy"
)

// ZoneMaintenance is where a zone's planned maintenance stands.
type ZoneMaintenance struct {
	// Phase is Withdrawing while the zone's address leaves the endpoint's DNS records and their
	// time to live runs out, then InMaintenance: the zone's control plane machines are disabled
	// members of every load balancer (they get no new connection), and the zone's load
	// balancer is not published.
	// +kubebuilder:validation:Enum=Withdrawing;InMaintenance
	// +required
	Phase ZoneMaintenancePhase `json:"phase"`

	// WithdrawnAt is when the DNS records without the zone were seen taken up by ExternalDNS
	// (the DNSEndpoint's status.observedGeneration); the zone's members are disabled once the
	// records' TTL has passed since.
	// +optional
	WithdrawnAt *metav1.Time `json:"withdrawnAt,omitempty"`
}

// ZoneMaintenancePhase is a step of a zone's planned maintenance.
type ZoneMaintenancePhase string

const (
	// ZoneWithdrawing: the zone is out of DNS, its records' TTL not yet past.
	ZoneWithdrawing ZoneMaintenancePhase = "Withdrawing"
	// ZoneInMaintenance: the zone takes no new connection.
	ZoneInMaintenance ZoneMaintenancePhase = "InMaintenance"
)

// LoadBalancerPool is one pool of an API server load balancer, as Octavia reports it.
type LoadBalancerPool struct {
	// +required
	Name string `json:"name"`
	// Port is the listener port the pool serves.
	// +required
	Port int `json:"port"`
	// +optional
	OperatingStatus string `json:"operatingStatus,omitempty"`
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Members []LoadBalancerMember `json:"members,omitempty"`
}

// LoadBalancerMember is a member of a pool: a control plane machine's address.
type LoadBalancerMember struct {
	// +required
	Name string `json:"name"`
	// +required
	Address string `json:"address"`
	// +optional
	OperatingStatus string `json:"operatingStatus,omitempty"`
}

// SecurityGroupStatus is what the controller knows of a managed security group.
type SecurityGroupStatus struct {
	// +required
	Name string `json:"name"`
	// +required
	ID string `json:"id"`
}

// InstanceState is the state of a Nova server.
type InstanceState string

const (
	InstanceStateBuild   InstanceState = "BUILD"
	InstanceStateActive  InstanceState = "ACTIVE"
	InstanceStateError   InstanceState = "ERROR"
	InstanceStateStopped InstanceState = "STOPPED"
	InstanceStateShutoff InstanceState = "SHUTOFF"
	InstanceStateDeleted InstanceState = "DELETED"
)
