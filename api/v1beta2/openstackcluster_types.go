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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// OpenStackClusterSpec is the desired state of an OpenStackCluster.
//
// +kubebuilder:validation:XValidation:rule="!has(self.apiServer) || !has(self.apiServer.managedLoadBalancer) || !has(self.apiServer.managedLoadBalancer.additionalPorts) || !((has(self.apiServer.port) ? self.apiServer.port : 6443) in self.apiServer.managedLoadBalancer.additionalPorts)",fieldPath=".apiServer.managedLoadBalancer.additionalPorts",message="must not contain the API server port (spec.apiServer.port, 6443 when not set): that port already has a listener"
// +kubebuilder:validation:XValidation:rule="!has(self.apiServer) || !has(self.apiServer.managedLoadBalancer) || (has(self.apiServer.managedLoadBalancer.enabled) && !self.apiServer.managedLoadBalancer.enabled) || !has(self.controlPlaneEndpoint) || !has(self.controlPlaneEndpoint.port) || self.controlPlaneEndpoint.port == 0 || self.controlPlaneEndpoint.port == (has(self.apiServer.port) ? self.apiServer.port : 6443)",fieldPath=".controlPlaneEndpoint.port",message="must be the API server port (spec.apiServer.port, 6443 when not set): the load balancers listen there, and clients on another port reach nothing"
// +kubebuilder:validation:XValidation:rule="!has(self.availabilityZoneMachineSubnets) || has(self.network) || self.availabilityZoneMachineSubnets.all(m, has(m.network))",fieldPath=".availabilityZoneMachineSubnets",message="each entry needs a network when spec.network is not set: the cluster network the controller creates has no subnet of yours"
// +kubebuilder:validation:XValidation:rule="!has(self.apiServer) || !has(self.apiServer.floatingIP) || !has(self.apiServer.managedLoadBalancer) || !has(self.apiServer.managedLoadBalancer.availabilityZoneSubnets) || self.apiServer.managedLoadBalancer.availabilityZoneSubnets.all(m, !has(m.floatingIP))",fieldPath=".apiServer.managedLoadBalancer.availabilityZoneSubnets",message="floatingIP cannot be combined with spec.apiServer.floatingIP, which is already the first zone's floating IP: give each zone its address in availabilityZoneSubnets[].floatingIP and remove apiServer.floatingIP, or leave the zones' floatingIP unset"
// +kubebuilder:validation:XValidation:rule="!has(self.apiServer) || !has(self.apiServer.enableFloatingIP) || self.apiServer.enableFloatingIP || !has(self.apiServer.managedLoadBalancer) || !has(self.apiServer.managedLoadBalancer.availabilityZoneSubnets) || self.apiServer.managedLoadBalancer.availabilityZoneSubnets.all(m, !has(m.floatingIP))",fieldPath=".apiServer.managedLoadBalancer.availabilityZoneSubnets",message="floatingIP cannot be set while spec.apiServer.enableFloatingIP is false"
type OpenStackClusterSpec struct {
	// IdentityRef names the Secret with the clouds.yaml used to reach OpenStack. Without it the
	// controller provisions nothing and says so in the cluster's conditions.
	// +optional
	IdentityRef *infrav1.OpenStackIdentityReference `json:"identityRef,omitempty"`

	// ManagedSubnets asks the controller to create the cluster network with these subnets (and a
	// router to the external network). Leave it empty to use an existing network (spec.network).
	// +listType=map
	// +listMapKey=cidr
	// +kubebuilder:validation:MaxItems=2
	// +optional
	ManagedSubnets []infrav1.SubnetSpec `json:"managedSubnets,omitempty"`

	// Subnets selects existing subnets of the cluster network.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=2
	// +optional
	Subnets []infrav1.SubnetParam `json:"subnets,omitempty"`

	// PrimarySubnet is the subnet of the cluster network, among several, where the single load
	// balancer's VIP and the machines' default ports go. Without it the first subnet is (of
	// spec.subnets, or of the network). It may change: new machines and a new load balancer
	// follow; an existing VIP stays where it is.
	// +optional
	PrimarySubnet *infrav1.SubnetParam `json:"primarySubnet,omitempty"`

	// ManagedRouter sets attributes of the router the controller creates.
	// +kubebuilder:validation:XValidation:rule="has(self.externalIPs)",message="must not be empty if set"
	// +optional
	ManagedRouter *ManagedRouter `json:"managedRouter,omitempty"`

	// Router selects an existing router for the managed network instead of creating one.
	// +optional
	Router *infrav1.RouterParam `json:"router,omitempty"`

	// ManagedNetwork sets attributes of the network the controller creates.
	// +kubebuilder:validation:XValidation:rule="has(self.mtu) || has(self.enablePortSecurity)",message="must not be empty if set"
	// +optional
	ManagedNetwork *ManagedNetwork `json:"managedNetwork,omitempty"`

	// Network selects an existing cluster network.
	// +optional
	Network *infrav1.NetworkParam `json:"network,omitempty"`

	// ExternalNetwork selects the external network for the router and for floating IPs. When not
	// set, the single external network of the cloud is used.
	// +optional
	ExternalNetwork *infrav1.NetworkParam `json:"externalNetwork,omitempty"`

	// EnableExternalNetwork false means the cluster has no external network: no router gateway
	// and no floating IPs. True when not set.
	// +optional
	EnableExternalNetwork *bool `json:"enableExternalNetwork,omitempty"`

	// APIServer configures the API server endpoint: its port, addresses and load balancer(s).
	// It defaults to {port: 6443}, as v1beta1's apiServerPort does.
	// +kubebuilder:default={port: 6443}
	// +optional
	APIServer *APIServer `json:"apiServer,omitempty"`

	// ManagedSecurityGroups asks the controller to create the control plane and worker security
	// groups with the rules Kubernetes needs.
	// +optional
	ManagedSecurityGroups *ManagedSecurityGroups `json:"managedSecurityGroups,omitempty"`

	// Tags are added to every Neutron and Octavia resource the controller creates: at most 50,
	// each at most 60 characters, without a comma or a slash (Neutron's rules).
	// +listType=set
	// +kubebuilder:validation:MaxItems=50
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=60
	// +kubebuilder:validation:items:Pattern=`^[^,/]+$`
	// +optional
	Tags []string `json:"tags,omitempty"`

	// ControlPlaneEndpoint is the endpoint clients use to reach the API server. The controller
	// fills it from the load balancer unless it is set. With availabilityZoneSubnets it must be
	// set to a DNS name that resolves to the per-AZ load balancers.
	// +optional
	ControlPlaneEndpoint *clusterv1.APIEndpoint `json:"controlPlaneEndpoint,omitempty"`

	// ControlPlaneAvailabilityZones restricts the Nova availability zones marked as suitable for
	// control plane machines. All zones are when it is empty.
	// +listType=set
	// +optional
	ControlPlaneAvailabilityZones []string `json:"controlPlaneAvailabilityZones,omitempty"`

	// ControlPlaneOmitAvailabilityZone creates control plane servers without an availability zone,
	// leaving the choice to Nova.
	// +optional
	ControlPlaneOmitAvailabilityZone *bool `json:"controlPlaneOmitAvailabilityZone,omitempty"`

	// AvailabilityZoneMachineSubnets gives the machines of each availability zone (failure
	// domain) their own subnet: a machine whose failure domain is an entry's zone gets its port
	// (the default port, and every port of spec.ports that names neither a network nor fixed IPs)
	// on the entry's subnet, of the entry's network or else of the cluster network (spec.network).
	// Machines of the other zones, and ports that name a network or fixed IPs, are as before.
	// +listType=map
	// +listMapKey=availabilityZone
	// +kubebuilder:validation:MaxItems=10
	// +optional
	AvailabilityZoneMachineSubnets []infrav1.ZoneMachineSubnet `json:"availabilityZoneMachineSubnets,omitempty"`

	// Bastion is a server on the cluster network, with a floating IP, from which to reach the
	// nodes over SSH. docs/bastion.md says what the controller makes for it.
	// +optional
	Bastion *Bastion `json:"bastion,omitempty"`
}

// Bastion is the SSH bastion host of a cluster, in upstream CAPO's shape.
// +kubebuilder:validation:XValidation:rule="(has(self.enabled) && !self.enabled) || has(self.spec)",fieldPath=".spec",reason=FieldValueRequired,message="is required while the bastion is enabled (enabled true or not set)"
type Bastion struct {
	// Enabled: true, or not set, keeps a bastion; false deletes it (and the spec may then be
	// removed).
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// Spec is the bastion's server, as an OpenStackMachine's spec gives a machine's: flavor,
	// image, SSH key, ports, security groups, volumes. spec.providerID, spec.identityRef and
	// spec.serverGroup are not used. A change to it replaces the bastion.
	// +optional
	Spec *OpenStackMachineSpec `json:"spec,omitempty"`

	// AvailabilityZone is the Nova availability zone of the bastion; Nova chooses when not set.
	// +optional
	AvailabilityZone *string `json:"availabilityZone,omitempty"`

	// FloatingIP is the bastion's floating IP address: used when it exists and is free,
	// allocated at that address otherwise, and never released by the controller. Without it the
	// controller allocates one on the external network and releases it with the bastion.
	// +kubebuilder:validation:XValidation:rule="isIP(self) && ip(self).family() == 4",message="must be an IPv4 address"
	// +optional
	FloatingIP *string `json:"floatingIP,omitempty"`
}

// APIServer configures the API server endpoint.
// +kubebuilder:validation:MinProperties=1
type APIServer struct {
	// Port is the port the API servers listen on, and the port of the load balancer listener in
	// front of them.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=6443
	// +optional
	Port *int32 `json:"port,omitempty"`

	// FixedIP is the fixed address of the API server on the cluster network, used when floating
	// IPs are disabled.
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="must be an IP address"
	// +kubebuilder:validation:MaxLength=45
	// +optional
	FixedIP *string `json:"fixedIP,omitempty"`

	// FloatingIP is an existing floating IP address to use for the API server. With
	// availabilityZoneSubnets it belongs to the first availability zone's load balancer. The
	// controller never deletes it.
	// +kubebuilder:validation:XValidation:rule="isIP(self) && ip(self).family() == 4",message="must be an IPv4 address"
	// +kubebuilder:validation:MaxLength=15
	// +optional
	FloatingIP *string `json:"floatingIP,omitempty"`

	// EnableFloatingIP false means no floating IP is attached to the API server endpoint. True
	// when not set.
	// +optional
	EnableFloatingIP *bool `json:"enableFloatingIP,omitempty"`

	// ManagedLoadBalancer configures the API server load balancer(s): one, or one per
	// availability zone with availabilityZoneSubnets. Omit it to run the cluster without a load
	// balancer in front of the API servers.
	// +optional
	ManagedLoadBalancer *infrav1.APIServerLoadBalancer `json:"managedLoadBalancer,omitempty"`
}

// ManagedRouter sets attributes of the router the controller creates.
type ManagedRouter struct {
	// ExternalIPs pins the gateway addresses of the router, one per external subnet. Neutron
	// picks the addresses when it is not set.
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	// +optional
	ExternalIPs []infrav1.ExternalRouterIPParam `json:"externalIPs,omitempty"`
}

// ManagedNetwork sets attributes of the network the controller creates.
type ManagedNetwork struct {
	// MTU of the network.
	// +kubebuilder:validation:Minimum=68
	// +optional
	MTU *int32 `json:"mtu,omitempty"`

	// EnablePortSecurity false disables port security on the network. True when not set.
	// +optional
	EnablePortSecurity *bool `json:"enablePortSecurity,omitempty"`
}

// ManagedSecurityGroups asks the controller to create and manage the cluster's security groups.
type ManagedSecurityGroups struct {
	// ClusterNodesSecurityGroupRules are extra rules added to the control plane and worker groups.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	ClusterNodesSecurityGroupRules []infrav1.SecurityGroupRuleSpec `json:"clusterNodesSecurityGroupRules,omitempty"`

	// ControlPlaneNodesSecurityGroupRules are extra rules added to the control plane group.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	ControlPlaneNodesSecurityGroupRules []infrav1.SecurityGroupRuleSpec `json:"controlPlaneNodesSecurityGroupRules,omitempty"`

	// WorkerNodesSecurityGroupRules are extra rules added to the worker group.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	WorkerNodesSecurityGroupRules []infrav1.SecurityGroupRuleSpec `json:"workerNodesSecurityGroupRules,omitempty"`

	// AllowAllInClusterTraffic opens all traffic between the cluster's machines.
	// +kubebuilder:default:=false
	// +optional
	AllowAllInClusterTraffic bool `json:"allowAllInClusterTraffic,omitempty"`
}

// OpenStackClusterStatus is the observed state of an OpenStackCluster, on the Cluster API
// v1beta2 contract.
type OpenStackClusterStatus struct {
	// Conditions describe the state of each piece of the cluster infrastructure.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// Initialization reports when the cluster infrastructure is provisioned.
	// +optional
	Initialization *infrav1.OpenStackClusterInitializationStatus `json:"initialization,omitempty"`

	// Network is the cluster network and its subnets.
	// +optional
	Network *infrav1.NetworkStatusWithSubnets `json:"network,omitempty"`

	// ExternalNetwork is the network used for the router gateway and floating IPs.
	// +optional
	ExternalNetwork *infrav1.NetworkStatus `json:"externalNetwork,omitempty"`

	// Router is the router of the cluster network.
	// +optional
	Router *infrav1.Router `json:"router,omitempty"`

	// APIServerManagedLoadBalancer is the single API server load balancer. With
	// availabilityZoneSubnets it mirrors the entry of apiServerLoadBalancers for the first
	// mapping; it is deprecated there in favour of apiServerLoadBalancers.
	// +optional
	APIServerManagedLoadBalancer *infrav1.LoadBalancer `json:"apiServerManagedLoadBalancer,omitempty"`

	// APIServerLoadBalancers has one entry per availability zone load balancer.
	// +listType=map
	// +listMapKey=availabilityZone
	// +kubebuilder:validation:MaxItems=10
	// +optional
	APIServerLoadBalancers []infrav1.LoadBalancer `json:"apiServerLoadBalancers,omitempty"`

	// FailureDomains are the Nova availability zones machines may be placed in.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	// +optional
	FailureDomains []clusterv1.FailureDomain `json:"failureDomains,omitempty"`

	// ControlPlaneSecurityGroup is the managed security group of control plane machines.
	// +optional
	ControlPlaneSecurityGroup *infrav1.SecurityGroupStatus `json:"controlPlaneSecurityGroup,omitempty"`

	// WorkerSecurityGroup is the managed security group of worker machines.
	// +optional
	WorkerSecurityGroup *infrav1.SecurityGroupStatus `json:"workerSecurityGroup,omitempty"`

	// BastionSecurityGroup is the managed security group of the bastion.
	// +optional
	BastionSecurityGroup *infrav1.SecurityGroupStatus `json:"bastionSecurityGroup,omitempty"`

	// Bastion is the bastion's server, while the cluster has one.
	// +optional
	Bastion *infrav1.BastionStatus `json:"bastion,omitempty"`

	// AvailabilityZoneMachineSubnets are the subnets of spec.availabilityZoneMachineSubnets, as
	// resolved in Neutron: the machines of each zone get their port there.
	// +listType=map
	// +listMapKey=availabilityZone
	// +kubebuilder:validation:MaxItems=10
	// +optional
	AvailabilityZoneMachineSubnets []infrav1.ZoneMachineSubnetStatus `json:"availabilityZoneMachineSubnets,omitempty"`

	// ZonesReady is "<ready>/<zones>" with availabilityZoneSubnets: how many of the availability
	// zones' API server load balancers are ready, of those the spec maps, followed by
	// " (maintenance: az1, ...)" while zones are taken out for planned maintenance (their number
	// when the names are too long). Empty otherwise.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	ZonesReady string `json:"zonesReady,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=openstackclusters,scope=Namespaced,categories=cluster-api,shortName=osc
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster this OpenStackCluster belongs to"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status",description="Whether the cluster infrastructure is ready"
// +kubebuilder:printcolumn:name="Endpoint",type="string",JSONPath=".spec.controlPlaneEndpoint.host",description="API server endpoint"
// +kubebuilder:printcolumn:name="Zones",type="string",JSONPath=".status.zonesReady",description="Availability zone load balancers ready, of those the spec maps"
// +kubebuilder:printcolumn:name="Bastion IP",type="string",JSONPath=".status.bastion.floatingIP",description="Address of the bastion",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
//
// The control plane endpoint rules live here rather than on the spec so that they do not apply to
// OpenStackClusterTemplate: a ClusterClass usually patches the endpoint host in per cluster.
//
// +kubebuilder:validation:XValidation:rule="!has(self.spec.apiServer) || !has(self.spec.apiServer.managedLoadBalancer) || !has(self.spec.apiServer.managedLoadBalancer.availabilityZoneSubnets) || size(self.spec.apiServer.managedLoadBalancer.availabilityZoneSubnets) == 0 || (has(self.spec.controlPlaneEndpoint) && has(self.spec.controlPlaneEndpoint.host) && self.spec.controlPlaneEndpoint.host != '')",fieldPath=".spec.controlPlaneEndpoint.host",reason=FieldValueRequired,message="is required when spec.apiServer.managedLoadBalancer.availabilityZoneSubnets is set: set it to a DNS name with one A record per availability zone load balancer"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.apiServer) || !has(self.spec.apiServer.managedLoadBalancer) || !has(self.spec.apiServer.managedLoadBalancer.availabilityZoneSubnets) || size(self.spec.apiServer.managedLoadBalancer.availabilityZoneSubnets) == 0 || !has(self.spec.controlPlaneEndpoint) || !has(self.spec.controlPlaneEndpoint.host) || (!isIP(self.spec.controlPlaneEndpoint.host) && self.spec.controlPlaneEndpoint.host.matches('^([A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?[.])*[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?[.]?$') && !self.spec.controlPlaneEndpoint.host.matches('(^|[.])[0-9]+[.]?$'))",fieldPath=".spec.controlPlaneEndpoint.host",messageExpression="'must be a DNS name, not an IP address, when spec.apiServer.managedLoadBalancer.availabilityZoneSubnets is set: got ' + self.spec.controlPlaneEndpoint.host"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.apiServer) || !has(self.spec.apiServer.managedLoadBalancer) || !has(self.spec.apiServer.managedLoadBalancer.zoneDiscovery) || (has(self.spec.controlPlaneEndpoint) && has(self.spec.controlPlaneEndpoint.host) && self.spec.controlPlaneEndpoint.host != '' && !isIP(self.spec.controlPlaneEndpoint.host))",fieldPath=".spec.controlPlaneEndpoint.host",reason=FieldValueRequired,message="must be set to a DNS name, not an IP address, when spec.apiServer.managedLoadBalancer.zoneDiscovery is set: one A record per availability zone load balancer"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.apiServer) || !has(self.spec.apiServer.managedLoadBalancer) || !has(self.spec.apiServer.managedLoadBalancer.dns) || (has(self.spec.controlPlaneEndpoint) && has(self.spec.controlPlaneEndpoint.host) && self.spec.controlPlaneEndpoint.host != '' && !isIP(self.spec.controlPlaneEndpoint.host))",fieldPath=".spec.apiServer.managedLoadBalancer.dns",message="needs spec.controlPlaneEndpoint.host to be the DNS name whose records the controller publishes"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.apiServer) || !has(self.spec.apiServer.managedLoadBalancer) || !has(self.spec.apiServer.managedLoadBalancer.dns) || !has(self.spec.controlPlaneEndpoint) || !has(self.spec.controlPlaneEndpoint.host) || isIP(self.spec.controlPlaneEndpoint.host) || (self.spec.controlPlaneEndpoint.host.matches('^([A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?[.])+[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?[.]?$') && !self.spec.controlPlaneEndpoint.host.matches('(^|[.])[0-9]+[.]?$'))",fieldPath=".spec.controlPlaneEndpoint.host",messageExpression="'must be a DNS name of two labels or more, without a wildcard, when spec.apiServer.managedLoadBalancer.dns is set: got ' + self.spec.controlPlaneEndpoint.host"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.controlPlaneEndpoint) || !has(self.spec.controlPlaneEndpoint.host) || size(self.spec.controlPlaneEndpoint.host) <= 253",fieldPath=".spec.controlPlaneEndpoint.host",message="must be at most 253 characters, as a DNS name is"

// OpenStackCluster is the infrastructure of a Cluster API cluster on OpenStack: its network,
// security groups and API server load balancer(s).
type OpenStackCluster struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec OpenStackClusterSpec `json:"spec"`

	// +optional
	Status OpenStackClusterStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// OpenStackClusterList is a list of OpenStackClusters.
type OpenStackClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenStackCluster `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &OpenStackCluster{}, &OpenStackClusterList{})
}
