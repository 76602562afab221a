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

// Condition types and reasons of OpenStackCluster. A reason says what the controller waits for
// or what is wrong, in a word a user can search for.
const (
	// ReadyCondition summarises the conditions below.
	ReadyCondition = "Ready"

	// NetworkReadyCondition covers the external network, the cluster network, its subnets and
	// router.
	NetworkReadyCondition = "NetworkReady"
	// SecurityGroupsReadyCondition covers the managed security groups and their rules.
	SecurityGroupsReadyCondition = "SecurityGroupsReady"
	// APIEndpointReadyCondition says whether the control plane endpoint is known.
	APIEndpointReadyCondition = "APIEndpointReady"
	// FailureDomainsReadyCondition says whether the availability zones were read from Nova.
	FailureDomainsReadyCondition = "FailureDomainsReady"
	// APIServerLoadBalancersReadyCondition says whether every API server load balancer (one, or
	// one per availability zone) is provisioned with its listeners, pools, monitors and floating
	// IP. Its message names each availability zone that is not ready, and why.
	APIServerLoadBalancersReadyCondition = "APIServerLoadBalancersReady"
	// APIServerDNSReadyCondition says whether the endpoint host's records are published as
	// spec.apiServerLoadBalancer.dns asks, with the addresses of the healthy zones.
	APIServerDNSReadyCondition = "APIServerDNSReady"
)

const (
	// ReadyReason means the piece is provisioned.
	ReadyReason = "Ready"
	// NotReadyReason is used by the summary when a piece is not provisioned.
	NotReadyReason = "NotReady"
	// ProvisioningReason means the controller is creating or checking the piece.
	ProvisioningReason = "Provisioning"
	// DeletingReason means the controller is deleting the piece.
	DeletingReason = "Deleting"
	// NotRequiredReason means the spec asks for nothing here (security groups not managed, ...).
	NotRequiredReason = "NotRequired"

	// IdentityErrorReason means the identity Secret is missing, invalid or rejected by Keystone.
	IdentityErrorReason = "IdentityError"
	// OpenStackErrorReason means an OpenStack API call failed; the controller retries with backoff.
	OpenStackErrorReason = "OpenStackError"
	// DuplicateResourcesReason means several resources in the cloud are this object's for one
	// purpose (two networks of the cluster's name and mark, say): the controller never picks
	// one; the message names them, for the operator to delete all but one.
	DuplicateResourcesReason = "DuplicateResources"
	// ResourceOwnedElsewhereReason means a resource in the cloud named as this object's carries
	// another object's mark (their names collide): it is never adopted, changed or deleted, and
	// nothing is made over it.
	ResourceOwnedElsewhereReason = "ResourceOwnedElsewhere"
	// TakeoverNotRecordedReason means a resource in the cloud carries no mark and is named as
	// upstream CAPO names this object's, but the operator recorded no takeover of the object:
	// nothing of it is adopted, and nothing is made beside it.
	TakeoverNotRecordedReason = "TakeoverNotRecorded"

	// ExternalNetworkNotFoundReason means no external network matched, or several did.
	ExternalNetworkNotFoundReason = "ExternalNetworkNotFound"
	// NetworkNotFoundReason means spec.network or spec.subnets matched no network or subnet, or
	// several.
	NetworkNotFoundReason = "NetworkNotFound"
	// WaitingForPortsReason means deletion waits for ports still on the cluster network.
	WaitingForPortsReason = "WaitingForPorts"

	// EndpointConfigurationErrorReason means the spec does not say where the API server is
	// reachable (for example floating IPs disabled and no apiServerFixedIP).
	EndpointConfigurationErrorReason = "EndpointConfigurationError"
	// WaitingForLoadBalancerReason means a load balancer is in a PENDING_* state (being created,
	// updated or deleted by Octavia); the controller looks again shortly.
	WaitingForLoadBalancerReason = "WaitingForLoadBalancer"
	// WaitingForAPIServerFloatingIPReason means a control plane machine of a cluster without a
	// load balancer waits for the cluster's API server floating IP, which the cluster's
	// reconcile allocates.
	WaitingForAPIServerFloatingIPReason = "WaitingForAPIServerFloatingIP"
	// LoadBalancerErrorReason means Octavia put a load balancer in ERROR. After a few observations
	// the controller deletes and recreates it.
	LoadBalancerErrorReason = "LoadBalancerError"
	// LoadBalancerConfigurationErrorReason means the spec asks for a load balancer the cloud cannot
	// give: a mapped subnet that does not exist or is not on apiServerLoadBalancer.network, an
	// unknown flavor, two load balancers with the same name.
	LoadBalancerConfigurationErrorReason = "LoadBalancerConfigurationError"
	// LoadBalancerUnhealthyReason means a zone's load balancer is provisioned but cannot take
	// traffic: Octavia reports it ERROR or OFFLINE, or DEGRADED with no member ONLINE on the API
	// server port (every control plane machine behind it down).
	LoadBalancerUnhealthyReason = "LoadBalancerUnhealthy"

	// NoHealthyZoneReason, on APIServerDNSReady, means no zone is healthy: the records keep every
	// zone's address rather than none.
	NoHealthyZoneReason = "NoHealthyZone"
	// DNSEndpointCRDMissingReason means the DNSEndpoint CRD of ExternalDNS is not installed.
	DNSEndpointCRDMissingReason = "DNSEndpointCRDMissing"
	// DNSPublishingNotAllowedReason means the operator's policy (the manager's --dns-suffixes)
	// does not let the endpoint host be published: no suffix allowed, or the host under none.
	DNSPublishingNotAllowedReason = "DNSPublishingNotAllowed"
	// DNSNameTakenReason means another DNSEndpoint already publishes the endpoint host, or a
	// DNSEndpoint of the cluster's DNSEndpoint's name exists that this OpenStackCluster does not
	// control: nothing is written.
	DNSNameTakenReason = "DNSNameTaken"
)

// Condition types and reasons of OpenStackMachine.
const (
	// InstanceReadyCondition says whether the machine's Nova server exists and is ACTIVE with its
	// ports and addresses.
	InstanceReadyCondition = "InstanceReady"
	// APIServerIngressReadyCondition, on control plane machines only, says whether the machine is
	// a member of every pool of the API server load balancers the spec asks for: its own
	// availability zone's, or every zone's with allowCrossAZLoadBalancerMembers.
	APIServerIngressReadyCondition = "APIServerIngressReady"

	// WaitingForClusterInfrastructureReason means the Cluster's infrastructure (network, security
	// groups, load balancers) is not provisioned yet; nothing is created before it is.
	WaitingForClusterInfrastructureReason = "WaitingForClusterInfrastructure"
	// WaitingForBootstrapDataReason means the Machine has no bootstrap data secret yet.
	WaitingForBootstrapDataReason = "WaitingForBootstrapData"
	// WaitingForImageReason means the ORC Image spec.image.imageRef names does not exist yet, or
	// ORC has not made its Glance image available yet; the message says which, and ORC's words.
	WaitingForImageReason = "WaitingForImage"
	// WaitingForVolumesReason means Cinder is still building the machine's root volume or
	// additional volumes; the server is created once they are available.
	WaitingForVolumesReason = "WaitingForVolumes"
	// InstanceConfigurationErrorReason means the spec asks for something the cloud does not have:
	// a flavor, image, server group, key pair, network, subnet or security group that matches
	// nothing (or several). The message names the field and the value.
	InstanceConfigurationErrorReason = "InstanceConfigurationError"
	// InstanceBuildingReason means Nova is building the server (BUILD); the controller looks
	// again shortly.
	InstanceBuildingReason = "InstanceBuilding"
	// InstanceErrorReason means Nova put the server in ERROR; the message carries Nova's fault.
	// The server is not recreated: delete the Machine (or let a MachineHealthCheck do it).
	InstanceErrorReason = "InstanceError"
	// ServerGroupPolicyUnsatisfiableReason means Nova put the server in ERROR because no host
	// keeps its server group's hard policy (anti-affinity with every host taken, or affinity
	// with the group's host full). The message names the group and the policy. The server is
	// not recreated: a new one would fail the same way until a host is free.
	ServerGroupPolicyUnsatisfiableReason = "ServerGroupPolicyUnsatisfiable"
	// InstanceNotRunningReason means the server exists but is not ACTIVE (SHUTOFF, SUSPENDED, ...).
	InstanceNotRunningReason = "InstanceNotRunning"
	// InstanceDeletedReason means the server the machine had is gone from Nova. It is not
	// recreated, since the Machine's provider ID names it.
	InstanceDeletedReason = "InstanceDeleted"
	// WaitingForInstanceReason means load balancer membership waits for the server's address.
	WaitingForInstanceReason = "WaitingForInstance"

	// FloatingAddressFromPoolReadyCondition says the floating IP the machine's floatingIPPoolRef
	// claims is on the server's port. Set only on machines with a floatingIPPoolRef.
	FloatingAddressFromPoolReadyCondition = "FloatingAddressFromPoolReady"
	// WaitingForPoolAddressReason: the pool has not answered the machine's IPAddressClaim yet, or
	// the server has no fixed address yet.
	WaitingForPoolAddressReason = "WaitingForPoolAddress"
	// FloatingIPPoolRefErrorReason: spec.floatingIPPoolRef cannot be followed (no API group, a
	// claim of that name that is not the machine's, an address that answers another claim).
	FloatingIPPoolRefErrorReason = "FloatingIPPoolRefError"
	// NoLoadBalancerInAvailabilityZoneReason means a control plane machine's availability zone
	// has no API server load balancer and allowCrossAZLoadBalancerMembers is off, so the machine
	// gets no API traffic. The message names the zone.
	NoLoadBalancerInAvailabilityZoneReason = "NoLoadBalancerInAvailabilityZone"
	// ControlPlaneFailureDomainWithoutLoadBalancerReason, on the OpenStackCluster's
	// FailureDomainsReady, names the control plane failure domains that have no API server load
	// balancer while allowCrossAZLoadBalancerMembers is off.
	ControlPlaneFailureDomainWithoutLoadBalancerReason = "ControlPlaneFailureDomainWithoutLoadBalancer"
	// LoadBalancerZoneWithoutComputeReason, on the OpenStackCluster's FailureDomainsReady, names
	// the zones availabilityZoneSubnets maps that Nova does not have (a typo, or a zone without
	// hosts): their load balancers never get a control plane machine.
	LoadBalancerZoneWithoutComputeReason = "LoadBalancerZoneWithoutCompute"
)

// GetConditions returns the conditions, for Cluster API's condition utilities.
func (c *OpenStackCluster) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions sets the conditions, for Cluster API's condition utilities.
func (c *OpenStackCluster) SetConditions(conditions []metav1.Condition) {
	c.Status.Conditions = conditions
}

// GetConditions returns the conditions, for Cluster API's condition utilities.
func (m *OpenStackMachine) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions sets the conditions, for Cluster API's condition utilities.
func (m *OpenStackMachine) SetConditions(conditions []metav1.Condition) {
	m.Status.Conditions = conditions
}

// Planned zone maintenance (ZoneMaintenanceAnnotation).
const (
	// ZoneMaintenanceAnnotation, on an OpenStackCluster, names the availability zones (of
	// spec.apiServerLoadBalancer.availabilityZoneSubnets, comma-separated) an operator takes out
	// of service for planned work: each is withdrawn from the endpoint's DNS records, then, once
	// their TTL has passed, its control plane machines stop getting new connections from every
	// load balancer. Removing a zone from the annotation reverses the steps.
	ZoneMaintenanceAnnotation = "infrastructure.cluster.x-k8s.io/zone-maintenance"

	// ClientsMovedAnnotation, set to "true" on an OpenStackCluster that moved from one load
	// balancer to one per zone, tells that the clients use every zone's address (the operator
	// publishes the DNS records itself): the former single load balancer then keeps only its own
	// zone's machines. Where the provider publishes the records, it finds this out by itself.
	ClientsMovedAnnotation = "infrastructure.cluster.x-k8s.io/clients-moved"

	// ZoneMaintenanceReadyCondition says whether the zones the annotation names are out of
	// service: True when they all are (or none is named), False while one is being withdrawn or
	// is refused. It is not part of Ready: maintenance does not make the cluster unready.
	ZoneMaintenanceReadyCondition = "ZoneMaintenanceReady"
	// ZoneWithdrawingReason: a zone's address has left the DNS records, whose TTL has not
	// passed yet; its machines still get connections.
	ZoneWithdrawingReason = "ZoneWithdrawing"
	// LastServingZoneReason: a zone is not taken out because no other zone serves the API: it
	// stays published and its machines keep their connections.
	LastServingZoneReason = "LastServingZone"

	// BastionReadyCondition says whether the bastion spec.bastion asks for is ACTIVE, with its
	// floating IP when the cluster has an external network; True (NotRequired) when the cluster
	// has no bastion. It is not part of Ready: the bastion never holds the cluster back.
	BastionReadyCondition = "BastionReady"
	// WaitingForBastionReason: the bastion's server is being built, replaced or deleted, or
	// waits for the network or its security group.
	WaitingForBastionReason = "WaitingForBastion"
)
