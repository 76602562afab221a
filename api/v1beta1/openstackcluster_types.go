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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

const (
	// ClusterFinalizer lets the controller remove the cloud resources of an OpenStackCluster
	// before the object goes away.
	ClusterFinalizer = "openstackcluster.infrastructure.cluster.x-k8s.io"

	// DefaultAPIServerPort is the port of the API server when spec.apiServerPort is not set.
	DefaultAPIServerPort = 6443

	// MaxAvailabilityZoneSubnets is the largest number of per-AZ API server load balancers.
	MaxAvailabilityZoneSubnets = 10
)

// OpenStackClusterSpec is the desired state of an OpenStackCluster.
//
// +kubebuilder:validation:XValidation:rule="!has(self.apiServerLoadBalancer) || !has(self.apiServerLoadBalancer.additionalPorts) || !((has(self.apiServerPort) ? self.apiServerPort : 6443) in self.apiServerLoadBalancer.additionalPorts)",fieldPath=".apiServerLoadBalancer.additionalPorts",message="must not contain the API server port (spec.apiServerPort, 6443 when not set): that port already has a listener"
// +kubebuilder:validation:XValidation:rule="!has(self.apiServerLoadBalancer) || (has(self.apiServerLoadBalancer.enabled) && !self.apiServerLoadBalancer.enabled) || !has(self.controlPlaneEndpoint) || !has(self.controlPlaneEndpoint.port) || self.controlPlaneEndpoint.port == 0 || self.controlPlaneEndpoint.port == (has(self.apiServerPort) ? self.apiServerPort : 6443)",fieldPath=".controlPlaneEndpoint.port",message="must be the API server port (spec.apiServerPort, 6443 when not set): the load balancers listen there, and clients on another port reach nothing"
// +kubebuilder:validation:XValidation:rule="!has(self.availabilityZoneMachineSubnets) || has(self.network) || self.availabilityZoneMachineSubnets.all(m, has(m.network))",fieldPath=".availabilityZoneMachineSubnets",message="each entry needs a network when spec.network is not set: the cluster network the controller creates has no subnet of yours"
// +kubebuilder:validation:XValidation:rule="!has(self.apiServerFloatingIP) || !has(self.apiServerLoadBalancer) || !has(self.apiServerLoadBalancer.availabilityZoneSubnets) || self.apiServerLoadBalancer.availabilityZoneSubnets.all(m, !has(m.floatingIP))",fieldPath=".apiServerLoadBalancer.availabilityZoneSubnets",message="floatingIP cannot be combined with spec.apiServerFloatingIP, which is already the first zone's floating IP: give each zone its address in availabilityZoneSubnets[].floatingIP and remove apiServerFloatingIP, or leave the zones' floatingIP unset"
// +kubebuilder:validation:XValidation:rule="!has(self.disableAPIServerFloatingIP) || !self.disableAPIServerFloatingIP || !has(self.apiServerLoadBalancer) || !has(self.apiServerLoadBalancer.availabilityZoneSubnets) || self.apiServerLoadBalancer.availabilityZoneSubnets.all(m, !has(m.floatingIP))",fieldPath=".apiServerLoadBalancer.availabilityZoneSubnets",message="floatingIP cannot be set while spec.disableAPIServerFloatingIP is true"
type OpenStackClusterSpec struct {
	// IdentityRef names the Secret with the clouds.yaml used to reach OpenStack. Without it the
	// controller provisions nothing and says so in the cluster's conditions.
	// +optional
	IdentityRef *OpenStackIdentityReference `json:"identityRef,omitempty"`

	// ManagedSubnets asks the controller to create the cluster network with these subnets (and a
	// router to the external network). Leave it empty to use an existing network (spec.network).
	// +listType=map
	// +listMapKey=cidr
	// +kubebuilder:validation:MaxItems=2
	// +optional
	ManagedSubnets []SubnetSpec `json:"managedSubnets,omitempty"`

	// Router selects an existing router for the managed network instead of creating one.
	// +optional
	Router *RouterParam `json:"router,omitempty"`

	// ExternalRouterIPs pins the gateway addresses of the router the controller creates, one per
	// external subnet. Neutron picks the addresses when it is empty.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=4
	// +optional
	ExternalRouterIPs []ExternalRouterIPParam `json:"externalRouterIPs,omitempty"`

	// NetworkMTU sets the MTU of the network the controller creates.
	// +kubebuilder:validation:Minimum=68
	// +optional
	NetworkMTU *int `json:"networkMTU,omitempty"`

	// ExternalNetwork selects the external network for the router and for floating IPs. When not
	// set, the single external network of the cloud is used.
	// +optional
	ExternalNetwork *NetworkParam `json:"externalNetwork,omitempty"`

	// DisableExternalNetwork means the cluster has no external network: no router gateway and no
	// floating IPs.
	// +optional
	DisableExternalNetwork *bool `json:"disableExternalNetwork,omitempty"`

	// Network selects an existing cluster network.
	// +optional
	Network *NetworkParam `json:"network,omitempty"`

	// Subnets selects existing subnets of the cluster network.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=2
	// +optional
	Subnets []SubnetParam `json:"subnets,omitempty"`

	// PrimarySubnet is the subnet of the cluster network, among several, where the single load
	// balancer's VIP and the machines' default ports go (upstream CAPO v0.15's field). Without it
	// the first subnet is (of spec.subnets, or of the network). It may change: new machines and
	// a new load balancer follow; an existing VIP stays where it is.
	// +optional
	PrimarySubnet *SubnetParam `json:"primarySubnet,omitempty"`

	// APIServerLoadBalancer configures the API server load balancer(s). Omit it to run the
	// cluster without a load balancer in front of the API servers.
	// +optional
	APIServerLoadBalancer *APIServerLoadBalancer `json:"apiServerLoadBalancer,omitempty"`

	// DisableAPIServerFloatingIP means no floating IP is attached to the API server endpoint.
	// +optional
	DisableAPIServerFloatingIP *bool `json:"disableAPIServerFloatingIP,omitempty"`

	// APIServerFloatingIP is an existing floating IP address to use for the API server. With
	// availabilityZoneSubnets it belongs to the first availability zone's load balancer. The
	// controller never deletes it.
	// +kubebuilder:validation:XValidation:rule="isIP(self) && ip(self).family() == 4",message="must be an IPv4 address"
	// +kubebuilder:validation:MaxLength=15
	// +optional
	APIServerFloatingIP *string `json:"apiServerFloatingIP,omitempty"`

	// APIServerFixedIP is the fixed address of the API server on the cluster network, used when
	// floating IPs are disabled.
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="must be an IP address"
	// +kubebuilder:validation:MaxLength=45
	// +optional
	APIServerFixedIP *string `json:"apiServerFixedIP,omitempty"`

	// APIServerPort is the port the API servers listen on, and the port of the load balancer
	// listener in front of them.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +kubebuilder:default=6443
	// +optional
	APIServerPort int `json:"apiServerPort,omitempty"`

	// ManagedSecurityGroups asks the controller to create the control plane and worker security
	// groups with the rules Kubernetes needs.
	// +optional
	ManagedSecurityGroups *ManagedSecurityGroups `json:"managedSecurityGroups,omitempty"`

	// DisablePortSecurity disables port security on the network the controller creates.
	// +optional
	DisablePortSecurity *bool `json:"disablePortSecurity,omitempty"`

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

	// AvailabilityZoneMachineSubnets gives the machines of each availability zone (failure
	// domain) their own subnet: a machine whose failure domain is an entry's zone gets its port
	// (the default port, and every port of spec.ports that names neither a network nor fixed IPs)
	// on the entry's subnet, of the entry's network or else of the cluster network (spec.network).
	// Machines of the other zones, and ports that name a network or fixed IPs, are as before.
	// +listType=map
	// +listMapKey=availabilityZone
	// +kubebuilder:validation:MaxItems=10
	// +optional
	AvailabilityZoneMachineSubnets []ZoneMachineSubnet `json:"availabilityZoneMachineSubnets,omitempty"`

	// ControlPlaneOmitAvailabilityZone creates control plane servers without an availability zone,
	// leaving the choice to Nova.
	// +optional
	ControlPlaneOmitAvailabilityZone *bool `json:"controlPlaneOmitAvailabilityZone,omitempty"`

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

// APIServerLoadBalancer configures the Octavia load balancer(s) in front of the API servers.
//
// Without availabilityZoneSubnets there is one load balancer. With it, there is one load balancer
// per availability zone, each with its VIP on the subnet mapped to that zone.
//
// +kubebuilder:validation:XValidation:rule="!has(self.provider) || self.provider != 'ovn' || !has(self.monitor) || !has(self.monitor.type) || self.monitor.type != 'HTTPS'",fieldPath=".monitor.type",reason=FieldValueForbidden,message="must not be HTTPS with the ovn provider, whose health monitors probe TCP only"
// +kubebuilder:validation:XValidation:rule="!has(self.zoneDiscovery) || has(self.network)",fieldPath=".network",reason=FieldValueRequired,message="is required when zoneDiscovery is set: the zones are found among the subnets of this network"
// +kubebuilder:validation:XValidation:rule="!has(self.zoneDiscovery) || self.enabled",fieldPath=".enabled",message="must not be false when zoneDiscovery is set; to run without a load balancer, remove the load balancer section (apiServerLoadBalancer; apiServer.managedLoadBalancer in v1beta2)"
// +kubebuilder:validation:XValidation:rule="!has(self.zoneDiscovery) || (!has(self.availabilityZone) && !has(self.subnets))",fieldPath=".zoneDiscovery",reason=FieldValueForbidden,message="cannot be combined with availabilityZone or subnets, which place a single load balancer"
// +kubebuilder:validation:XValidation:rule="!has(self.availabilityZoneSubnets) || size(self.availabilityZoneSubnets) == 0 || has(self.network)",fieldPath=".network",reason=FieldValueRequired,message="is required when availabilityZoneSubnets is set: every mapped subnet must be a subnet of this network"
// +kubebuilder:validation:XValidation:rule="!has(self.availabilityZoneSubnets) || size(self.availabilityZoneSubnets) == 0 || self.enabled",fieldPath=".enabled",message="must not be false when availabilityZoneSubnets is set; to run without a load balancer, remove the load balancer section (apiServerLoadBalancer; apiServer.managedLoadBalancer in v1beta2)"
// +kubebuilder:validation:XValidation:rule="!has(self.availabilityZoneSubnets) || size(self.availabilityZoneSubnets) == 0 || !has(self.availabilityZone)",fieldPath=".availabilityZone",reason=FieldValueForbidden,message="cannot be combined with availabilityZoneSubnets: each entry of availabilityZoneSubnets already names its load balancer's availability zone"
// +kubebuilder:validation:XValidation:rule="!has(self.availabilityZoneSubnets) || size(self.availabilityZoneSubnets) == 0 || !has(self.subnets)",fieldPath=".subnets",reason=FieldValueForbidden,message="cannot be combined with availabilityZoneSubnets: each load balancer's VIP subnet comes from its availabilityZoneSubnets entry"
type APIServerLoadBalancer struct {
	// Enabled creates the load balancer. It defaults to true; to run without a load balancer,
	// remove apiServerLoadBalancer (apiServer.managedLoadBalancer in v1beta2) from the spec instead.
	// +kubebuilder:default=true
	// +required
	Enabled *bool `json:"enabled"`

	// AdditionalPorts are further TCP ports, besides the API server port, that get a listener,
	// pool and health monitor on every API server load balancer.
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=65535
	// +optional
	AdditionalPorts []int `json:"additionalPorts,omitempty"`

	// AllowedCIDRs restricts who may reach every listener of every API server load balancer,
	// where the Octavia provider supports it.
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=43
	// +kubebuilder:validation:items:XValidation:rule="isCIDR(self)",messageExpression="'must be a CIDR such as 192.0.2.0/24, got ' + self"
	// +optional
	AllowedCIDRs []string `json:"allowedCIDRs,omitempty"`

	// Provider is the Octavia provider to use; Octavia's default when not set.
	// +optional
	Provider *string `json:"provider,omitempty"`

	// Network is the network that holds the load balancer VIPs. It defaults to the cluster
	// network, and is required with availabilityZoneSubnets.
	// +optional
	Network *NetworkParam `json:"network,omitempty"`

	// Subnets selects the VIP subnet of the single load balancer; only the first entry is used.
	// Not allowed with availabilityZoneSubnets.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=2
	// +optional
	Subnets []SubnetParam `json:"subnets,omitempty"`

	// AvailabilityZone is the Octavia availability zone of the single load balancer. It is the
	// legacy single-zone shorthand; for one load balancer per zone use availabilityZoneSubnets.
	// +kubebuilder:validation:MinLength=1
	// +optional
	AvailabilityZone *string `json:"availabilityZone,omitempty"`

	// Flavor is the Octavia flavor of the load balancer(s).
	// +optional
	Flavor *string `json:"flavor,omitempty"`

	// Monitor configures the health monitor of every pool.
	// +optional
	Monitor *APIServerLoadBalancerMonitor `json:"monitor,omitempty"`

	// AvailabilityZoneSubnets maps availability zones to VIP subnets: one API server load balancer
	// is created per entry, named after its zone, with its VIP on the entry's subnet. Every subnet
	// must belong to the network set in network. Publish one DNS A record per load balancer
	// address under spec.controlPlaneEndpoint.host, which must then be set to a DNS name.
	// +listType=map
	// +listMapKey=availabilityZone
	// +kubebuilder:validation:MaxItems=10
	// +kubebuilder:validation:XValidation:rule="self.all(m, self.exists_one(o, o.subnet == m.subnet))",message="a subnet may be mapped to only one availability zone, but two entries select the same subnet"
	// +kubebuilder:validation:XValidation:rule="self.all(m, !has(m.floatingIP) || self.exists_one(o, has(o.floatingIP) && o.floatingIP == m.floatingIP))",message="a floating IP may belong to only one availability zone, but two entries give the same address"
	// +optional
	AvailabilityZoneSubnets []AZSubnetMapping `json:"availabilityZoneSubnets,omitempty"`

	// ZoneDiscovery maps more availability zones to VIP subnets from the tags of the subnets of
	// network: a subnet tagged "<tagKey>=<zone>" (topology.kubernetes.io/zone=az1 by default) is
	// the VIP subnet of that zone's load balancer, as if availabilityZoneSubnets had an entry for
	// it. Entries of availabilityZoneSubnets always win: a zone or a subnet they map is not
	// discovered. Two subnets tagged for one zone are an error naming both, never a guess. The
	// tags are the mapping: a subnet's tag removed removes its zone, as removing an entry does.
	// +optional
	ZoneDiscovery *ZoneDiscovery `json:"zoneDiscovery,omitempty"`

	// AllowCrossAZLoadBalancerMembers registers every control plane machine with the load
	// balancers of all availability zones. By default a machine joins only the load balancer of
	// its own zone.
	// +kubebuilder:default=false
	// +optional
	AllowCrossAZLoadBalancerMembers *bool `json:"allowCrossAZLoadBalancerMembers,omitempty"`

	// WithdrawFailedZones, with one load balancer per zone, reports the failure domain of a zone
	// whose load balancer stops serving with controlPlane false until the zone has served again
	// for two minutes, so that Cluster API places new and remediated control plane machines in the
	// zones that serve. Off by default: with one control plane machine per zone, the failure of
	// that one machine takes its zone's load balancer down too, and its replacement would then
	// join another zone's machines. A zone in planned maintenance is withdrawn either way.
	// +optional
	WithdrawFailedZones *bool `json:"withdrawFailedZones,omitempty"`

	// DNS asks the controller to publish the endpoint host's A records itself, with the public
	// address of every availability zone whose load balancer is healthy, so that DNS follows a
	// zone outage. Off by default: DNS management stays the operator's decision.
	// +optional
	DNS *APIServerDNS `json:"dns,omitempty"`
}

// APIServerDNS says how the controller publishes the endpoint host's records.
type APIServerDNS struct {
	// Publish is the mechanism. DNSEndpoint: the controller keeps one ExternalDNS DNSEndpoint
	// (externaldns.k8s.io/v1alpha1) named "<OpenStackCluster name>-apiserver" beside the
	// OpenStackCluster, with one A record set for spec.controlPlaneEndpoint.host, and ExternalDNS
	// (the crd source) publishes it in the operator's DNS.
	// +kubebuilder:validation:Enum=DNSEndpoint
	// +required
	Publish string `json:"publish"`

	// TTL is the records' time to live in seconds. Short, so that clients stop using a withdrawn
	// zone quickly.
	// +kubebuilder:default=30
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	// +optional
	TTL int32 `json:"ttl,omitempty"`
}

// DNSPublishDNSEndpoint is the APIServerDNS.Publish value for ExternalDNS's DNSEndpoint.
const DNSPublishDNSEndpoint = "DNSEndpoint"

// ZoneDiscovery says which tag of the load balancer network's subnets names their zone.
type ZoneDiscovery struct {
	// TagKey is the key of the zone tag: a subnet tagged "<tagKey>=<zone>" is the zone's.
	// +kubebuilder:default="topology.kubernetes.io/zone"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	// +kubebuilder:validation:Pattern=`^[^=,]+$`
	// +optional
	TagKey string `json:"tagKey,omitempty"`
}

// DefaultZoneTagKey is ZoneDiscovery.TagKey when it is not set.
const DefaultZoneTagKey = "topology.kubernetes.io/zone"

// ZoneMachineSubnet is the subnet the machines of one availability zone are on.
type ZoneMachineSubnet struct {
	// AvailabilityZone is the failure domain (the Nova availability zone) of the machines.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	// +required
	AvailabilityZone string `json:"availabilityZone"`

	// Network is the zone's own network, when its subnet is not on the cluster network
	// (spec.network). Routing between the zones' networks is the operator's.
	// +optional
	Network *NetworkParam `json:"network,omitempty"`

	// Subnet selects the zone's subnet, on network or else on spec.network.
	// +required
	Subnet SubnetParam `json:"subnet"`
}

// AZSubnetMapping binds an availability zone to the subnet that holds its load balancer's VIP.
type AZSubnetMapping struct {
	// AvailabilityZone is the availability zone, as Nova and Octavia name it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	// +required
	AvailabilityZone string `json:"availabilityZone"`

	// Subnet selects the VIP subnet of this zone's load balancer. It must be a subnet of
	// apiServerLoadBalancer.network.
	// +required
	Subnet SubnetParam `json:"subnet"`

	// FloatingIP is a floating IP address the operator allocated for this zone's load balancer:
	// the load balancer gets exactly this address (allocated with it if it does not exist yet),
	// keeps it when it is recreated after ERROR, and the controller never releases it. It cannot
	// change once set. For the first zone, spec.apiServerFloatingIP does the same.
	// +kubebuilder:validation:XValidation:rule="isIP(self) && ip(self).family() == 4",message="must be an IPv4 address"
	// +kubebuilder:validation:MaxLength=15
	// +optional
	FloatingIP *string `json:"floatingIP,omitempty"`
}

// APIServerLoadBalancerMonitor configures the health monitor of the API server pools.
// +kubebuilder:validation:XValidation:rule="(!has(self.urlPath) && !has(self.expectedCodes)) || (has(self.type) && self.type == 'HTTPS')",message="urlPath and expectedCodes may be set only with type HTTPS"
type APIServerLoadBalancerMonitor struct {
	// Type is how the API server port's members are probed: TCP (the default) opens a connection;
	// HTTPS asks each API server for urlPath (/readyz by default) over TLS, without checking its
	// certificate, and counts the member up when the answer's code is one of expectedCodes. The
	// additional ports' pools are always probed with TCP. The OVN provider probes TCP only and
	// refuses HTTPS. A change on a running cluster replaces each API server port's monitor.
	// +kubebuilder:validation:Enum=TCP;HTTPS
	// +optional
	Type APIServerLoadBalancerMonitorType `json:"type,omitempty"`

	// URLPath is the path an HTTPS monitor asks for; /readyz when not set.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +kubebuilder:validation:Pattern=`^/[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*$`
	// +optional
	URLPath string `json:"urlPath,omitempty"`

	// ExpectedCodes are the HTTP codes an HTTPS monitor counts as up: one code (200), a list
	// (200,201) or a range (200-204); 200 when not set.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[1-5][0-9]{2}((,[1-5][0-9]{2})*|-[1-5][0-9]{2})$`
	// +optional
	ExpectedCodes string `json:"expectedCodes,omitempty"`

	// Delay is the number of seconds between probes.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=10
	// +optional
	Delay int `json:"delay,omitempty"`

	// Timeout is the number of seconds a probe may take.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=5
	// +optional
	Timeout int `json:"timeout,omitempty"`

	// MaxRetries is the number of successful probes before a member is ONLINE.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	// +kubebuilder:default=5
	// +optional
	MaxRetries int `json:"maxRetries,omitempty"`

	// MaxRetriesDown is the number of failed probes before a member is in ERROR.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +kubebuilder:default=3
	// +optional
	MaxRetriesDown int `json:"maxRetriesDown,omitempty"`
}

// APIServerLoadBalancerMonitorType is how a health monitor probes the API servers.
type APIServerLoadBalancerMonitorType string

const (
	// MonitorTCP opens a TCP connection.
	MonitorTCP APIServerLoadBalancerMonitorType = "TCP"
	// MonitorHTTPS asks the API server's readiness endpoint over TLS.
	MonitorHTTPS APIServerLoadBalancerMonitorType = "HTTPS"
)

// OpenStackClusterStatus is the observed state of an OpenStackCluster, on the Cluster API
// v1beta2 provider contract.
type OpenStackClusterStatus struct {
	// Initialization reports when the cluster infrastructure is provisioned.
	// +optional
	Initialization *OpenStackClusterInitializationStatus `json:"initialization,omitempty"`

	// Conditions describe the state of each piece of the cluster infrastructure.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// FailureDomains are the Nova availability zones machines may be placed in.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	// +optional
	FailureDomains []clusterv1.FailureDomain `json:"failureDomains,omitempty"`

	// Network is the cluster network and its subnets.
	// +optional
	Network *NetworkStatusWithSubnets `json:"network,omitempty"`

	// ExternalNetwork is the network used for the router gateway and floating IPs.
	// +optional
	ExternalNetwork *NetworkStatus `json:"externalNetwork,omitempty"`

	// Router is the router of the cluster network.
	// +optional
	Router *Router `json:"router,omitempty"`

	// APIServerLoadBalancer is the single API server load balancer. With
	// availabilityZoneSubnets it mirrors the entry of apiServerLoadBalancers for the first
	// mapping; it is deprecated there in favour of apiServerLoadBalancers.
	// +optional
	APIServerLoadBalancer *LoadBalancer `json:"apiServerLoadBalancer,omitempty"`

	// APIServerLoadBalancers has one entry per availability zone load balancer.
	// +listType=map
	// +listMapKey=availabilityZone
	// +kubebuilder:validation:MaxItems=10
	// +optional
	APIServerLoadBalancers []LoadBalancer `json:"apiServerLoadBalancers,omitempty"`

	// ControlPlaneSecurityGroup is the managed security group of control plane machines.
	// +optional
	ControlPlaneSecurityGroup *SecurityGroupStatus `json:"controlPlaneSecurityGroup,omitempty"`

	// WorkerSecurityGroup is the managed security group of worker machines.
	// +optional
	WorkerSecurityGroup *SecurityGroupStatus `json:"workerSecurityGroup,omitempty"`

	// BastionSecurityGroup is the managed security group of the bastion.
	// +optional
	BastionSecurityGroup *SecurityGroupStatus `json:"bastionSecurityGroup,omitempty"`

	// Bastion is the bastion's server, while the cluster has one.
	// +optional
	Bastion *BastionStatus `json:"bastion,omitempty"`

	// AvailabilityZoneMachineSubnets are the subnets of spec.availabilityZoneMachineSubnets, as
	// resolved in Neutron: the machines of each zone get their port there.
	// +listType=map
	// +listMapKey=availabilityZone
	// +kubebuilder:validation:MaxItems=10
	// +optional
	AvailabilityZoneMachineSubnets []ZoneMachineSubnetStatus `json:"availabilityZoneMachineSubnets,omitempty"`

	// ZonesReady is "<ready>/<zones>" with availabilityZoneSubnets: how many of the availability
	// zones' API server load balancers are ready, of those the spec maps, followed by
	// " (maintenance: az1, ...)" while zones are taken out for planned maintenance (their number
	// when the names are too long). Empty otherwise.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	ZonesReady string `json:"zonesReady,omitempty"`
}

// BastionStatus is the bastion's server as the controller last found it.
type BastionStatus struct {
	// ID is the Nova server ID.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	ID string `json:"id,omitempty"`
	// Name is the server's name.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Name string `json:"name,omitempty"`
	// SSHKeyName is the key pair the server was created with.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	SSHKeyName string `json:"sshKeyName,omitempty"`
	// State is the server's Nova status (BUILD, ACTIVE, ERROR, ...).
	// +kubebuilder:validation:MaxLength=64
	// +optional
	State string `json:"state,omitempty"`
	// IP is the server's address on the cluster network.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	IP string `json:"ip,omitempty"`
	// FloatingIP is the address to reach the bastion at.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	FloatingIP string `json:"floatingIP,omitempty"`
}

// OpenStackClusterInitializationStatus is the initialization part of the v1beta2 contract.
// +kubebuilder:validation:MinProperties=1
type OpenStackClusterInitializationStatus struct {
	// Provisioned is true once the cluster infrastructure is ready for machines.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=openstackclusters,scope=Namespaced,categories=cluster-api,shortName=osc
// +kubebuilder:subresource:status
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1_v1beta2"
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
// +kubebuilder:validation:XValidation:rule="!has(self.spec.apiServerLoadBalancer) || !has(self.spec.apiServerLoadBalancer.availabilityZoneSubnets) || size(self.spec.apiServerLoadBalancer.availabilityZoneSubnets) == 0 || (has(self.spec.controlPlaneEndpoint) && has(self.spec.controlPlaneEndpoint.host) && self.spec.controlPlaneEndpoint.host != '')",fieldPath=".spec.controlPlaneEndpoint.host",reason=FieldValueRequired,message="is required when spec.apiServerLoadBalancer.availabilityZoneSubnets is set: set it to a DNS name with one A record per availability zone load balancer"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.apiServerLoadBalancer) || !has(self.spec.apiServerLoadBalancer.availabilityZoneSubnets) || size(self.spec.apiServerLoadBalancer.availabilityZoneSubnets) == 0 || !has(self.spec.controlPlaneEndpoint) || !has(self.spec.controlPlaneEndpoint.host) || (!isIP(self.spec.controlPlaneEndpoint.host) && self.spec.controlPlaneEndpoint.host.matches('^([A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?[.])*[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?[.]?$') && !self.spec.controlPlaneEndpoint.host.matches('(^|[.])[0-9]+[.]?$'))",fieldPath=".spec.controlPlaneEndpoint.host",messageExpression="'must be a DNS name, not an IP address, when spec.apiServerLoadBalancer.availabilityZoneSubnets is set: got ' + self.spec.controlPlaneEndpoint.host"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.apiServerLoadBalancer) || !has(self.spec.apiServerLoadBalancer.zoneDiscovery) || (has(self.spec.controlPlaneEndpoint) && has(self.spec.controlPlaneEndpoint.host) && self.spec.controlPlaneEndpoint.host != '' && !isIP(self.spec.controlPlaneEndpoint.host))",fieldPath=".spec.controlPlaneEndpoint.host",reason=FieldValueRequired,message="must be set to a DNS name, not an IP address, when spec.apiServerLoadBalancer.zoneDiscovery is set: one A record per availability zone load balancer"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.apiServerLoadBalancer) || !has(self.spec.apiServerLoadBalancer.dns) || (has(self.spec.controlPlaneEndpoint) && has(self.spec.controlPlaneEndpoint.host) && self.spec.controlPlaneEndpoint.host != '' && !isIP(self.spec.controlPlaneEndpoint.host))",fieldPath=".spec.apiServerLoadBalancer.dns",message="needs spec.controlPlaneEndpoint.host to be the DNS name whose records the controller publishes"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.apiServerLoadBalancer) || !has(self.spec.apiServerLoadBalancer.dns) || !has(self.spec.controlPlaneEndpoint) || !has(self.spec.controlPlaneEndpoint.host) || isIP(self.spec.controlPlaneEndpoint.host) || (self.spec.controlPlaneEndpoint.host.matches('^([A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?[.])+[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?[.]?$') && !self.spec.controlPlaneEndpoint.host.matches('(^|[.])[0-9]+[.]?$'))",fieldPath=".spec.controlPlaneEndpoint.host",messageExpression="'must be a DNS name of two labels or more, without a wildcard, when spec.apiServerLoadBalancer.dns is set: got ' + self.spec.controlPlaneEndpoint.host"
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

// ZoneMachineSubnetStatus is a zone's machine subnet as found in Neutron.
type ZoneMachineSubnetStatus struct {
	// +required
	AvailabilityZone string `json:"availabilityZone"`
	// Network is the subnet's network.
	// +required
	Network NetworkStatus `json:"network"`
	// +required
	Subnet Subnet `json:"subnet"`
}

// MachineSubnetOf is the resolved machine subnet of availability zone az, or nil.
func (s *OpenStackClusterStatus) MachineSubnetOf(az string) *ZoneMachineSubnetStatus {
	for i := range s.AvailabilityZoneMachineSubnets {
		if s.AvailabilityZoneMachineSubnets[i].AvailabilityZone == az {
			return &s.AvailabilityZoneMachineSubnets[i]
		}
	}
	return nil
}
