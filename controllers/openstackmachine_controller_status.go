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
	"fmt"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/compute"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/outcome"
)

// How an OpenStackMachine's status and conditions are computed from what the phases found
// (machineFindings): the only place that writes them.

// machineFindings is what one reconcile of an OpenStackMachine found.
type machineFindings struct {
	// normal is set when the reconcile ran the normal phases (not the deletion).
	normal bool
	// waitingForCluster: the Cluster's infrastructure is not provisioned, or the
	// OpenStackCluster is missing.
	waitingForCluster bool
	// identity is why the credentials did not work.
	identity    error
	instance    *instanceFound
	ingress     *ingressFound
	poolAddress *poolAddressFound
	deletion    *machineDeletionFound
}

// instanceFound is what the instance phase found.
type instanceFound struct {
	outcome.Outcome
	// server is the machine's server, nil while none exists.
	server *servers.Server
	// goneID is the recorded server Nova no longer has.
	goneID string
	// waitingForBootstrap: no server yet, and no bootstrap data to make one with.
	waitingForBootstrap bool
	// waitingForImage: no server yet, while the ORC Image the spec names is not available; what
	// the condition says.
	waitingForImage string
	// volumesPending: no server yet, while Cinder builds its volumes.
	volumesPending *compute.VolumesPending
	// configurationError: the server could not be made from the spec (err says why).
	configurationError bool
	// group is the server group of a server Nova found no host for; nil otherwise, or when
	// the group could not be read.
	group *servergroups.ServerGroup
}

// updateStatus sets the status and conditions from what the reconcile found, then Ready, and
// records the warnings the setters asked for.
func (m *machineReconcile) updateStatus() {
	var w warnings
	setMachineStatus(m.osm, &w, m.conditionTypes(), &m.found)
	w.emit(m.report)
}

// setMachineStatus sets osm's status and conditions (of types) from what a reconcile found, then
// Ready.
func setMachineStatus(osm *infrav1.OpenStackMachine, w *warnings, types []string, f *machineFindings) {
	if f.normal {
		initConditions(osm, types)
	}
	switch {
	case f.identity != nil:
		instanceProblem(osm, w, infrav1.IdentityErrorReason, failureMessage(f.identity))
	case f.waitingForCluster:
		setCondition(osm, infrav1.InstanceReadyCondition, metav1.ConditionFalse, infrav1.WaitingForClusterInfrastructureReason,
			"waiting for the Cluster's infrastructure (network, security groups, API server load balancers) to be provisioned")
	case f.deletion != nil:
		setMachineDeletionStatus(osm, w, f.deletion)
	case f.instance != nil:
		setInstanceFound(osm, w, f.instance)
		if f.ingress != nil {
			setIngressCondition(osm, w, f.ingress)
		}
		if f.poolAddress != nil {
			setPoolAddressCondition(osm, w, f.poolAddress)
		}
	}
	setSummary(osm, types)
}

// instanceProblem sets InstanceReady to False for a problem the user must act on, and warns with
// an event when the problem is new.
func instanceProblem(osm *infrav1.OpenStackMachine, w *warnings, reason, message string) {
	reportProblem(w, osm, infrav1.InstanceReadyCondition, reason, message)
}

// setInstanceFound records what the instance phase found.
func setInstanceFound(osm *infrav1.OpenStackMachine, w *warnings, in *instanceFound) {
	switch {
	case in.configurationError:
		instanceProblem(osm, w, infrav1.InstanceConfigurationErrorReason, in.Err.Error())
	case in.Err != nil:
		setFailure(osm, w, infrav1.InstanceReadyCondition, in.Err)
	case in.goneID != "":
		osm.Status.InstanceState = ptr.To(infrav1.InstanceStateDeleted)
		instanceProblem(osm, w, infrav1.InstanceDeletedReason, fmt.Sprintf(
			"server %s no longer exists in Nova; it is not recreated: delete the Machine to replace it", in.goneID))
	case in.waitingForBootstrap:
		setCondition(osm, infrav1.InstanceReadyCondition, metav1.ConditionFalse, infrav1.WaitingForBootstrapDataReason,
			"waiting for the Machine's bootstrap data secret")
	case in.waitingForImage != "":
		setCondition(osm, infrav1.InstanceReadyCondition, metav1.ConditionFalse, infrav1.WaitingForImageReason, in.waitingForImage)
	case in.volumesPending != nil:
		setCondition(osm, infrav1.InstanceReadyCondition, metav1.ConditionFalse, infrav1.WaitingForVolumesReason,
			in.volumesPending.Error()+"; the server is created once they are available")
	default:
		setInstanceStatus(osm, w, in.server, in.group)
	}
}

// setInstanceStatus records the server in the status (ID, provider ID, state, addresses) and sets
// InstanceReady from Nova's status of it. A server in ERROR or deleted behind Cluster API's back
// is reported, never recreated: the provider ID names it. (instanceRequeue says when to look
// again.)
func setInstanceStatus(osm *infrav1.OpenStackMachine, w *warnings, server *servers.Server, group *servergroups.ServerGroup) {
	osm.Status.InstanceID = ptr.To(server.ID)
	if ptr.Deref(osm.Spec.ProviderID, "") == "" {
		// Set once: a provider ID upstream CAPO wrote with a region (openstack://RegionOne/<id>)
		// names the same server, and the Machine has copied it.
		osm.Spec.ProviderID = ptr.To("openstack:///" + server.ID)
	}
	osm.Status.InstanceState = ptr.To(infrav1.InstanceState(server.Status))
	if server.AvailabilityZone != "" {
		osm.Status.FailureDomain = server.AvailabilityZone
	}

	switch server.Status {
	case "ACTIVE":
		osm.Status.Addresses = compute.Addresses(server)
		if !hasInternalIP(osm.Status.Addresses) {
			// Nova shows the ports' addresses a moment after the server turns ACTIVE on some clouds.
			setCondition(osm, infrav1.InstanceReadyCondition, metav1.ConditionFalse, infrav1.InstanceBuildingReason,
				fmt.Sprintf("server %s is ACTIVE, waiting for Nova to show its addresses", server.ID))
			break
		}
		osm.Status.Initialization = &infrav1.OpenStackMachineInitializationStatus{Provisioned: ptr.To(true)}
		setCondition(osm, infrav1.InstanceReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason,
			fmt.Sprintf("server %s (%s) is ACTIVE in %s at %s", server.Name, server.ID, server.AvailabilityZone, addressList(osm.Status.Addresses)))
	case "BUILD":
		setCondition(osm, infrav1.InstanceReadyCondition, metav1.ConditionFalse, infrav1.InstanceBuildingReason,
			fmt.Sprintf("Nova is building server %s", server.ID))
	case "ERROR":
		fault := server.Fault.Message
		if fault == "" {
			fault = "Nova gave no fault message"
		}
		if group != nil && compute.NoValidHost(server) {
			instanceProblem(osm, w, infrav1.ServerGroupPolicyUnsatisfiableReason, fmt.Sprintf(
				"server %s is in ERROR: %s (code %d): no host keeps the %s policy of server group %s (%s), which has %d other members; "+
					"it is not recreated: free a host, or use a soft policy, then delete the Machine to replace it",
				server.ID, fault, server.Fault.Code, compute.GroupPolicy(group), group.Name, group.ID, otherMembers(group, server.ID)))
			break
		}
		instanceProblem(osm, w, infrav1.InstanceErrorReason, fmt.Sprintf(
			"server %s is in ERROR: %s (code %d); it is not recreated: delete the Machine to replace it", server.ID, fault, server.Fault.Code))
	case "DELETED", "SOFT_DELETED":
		instanceProblem(osm, w, infrav1.InstanceDeletedReason, fmt.Sprintf(
			"server %s was deleted outside Cluster API; it is not recreated: delete the Machine to replace it", server.ID))
	default:
		setCondition(osm, infrav1.InstanceReadyCondition, metav1.ConditionFalse, infrav1.InstanceNotRunningReason,
			fmt.Sprintf("server %s is %s", server.ID, server.Status))
	}
}

// otherMembers counts the members of group besides server.
func otherMembers(group *servergroups.ServerGroup, server string) int {
	n := 0
	for _, id := range group.Members {
		if id != server {
			n++
		}
	}
	return n
}

// setIngressCondition sets APIServerIngressReady from what membership found.
func setIngressCondition(osm *infrav1.OpenStackMachine, w *warnings, in *ingressFound) {
	var names []string
	unknown := false
	for _, t := range in.membership.Targets {
		names = append(names, t.Name)
		unknown = unknown || t.ID == ""
	}
	switch {
	case in.Err != nil:
		setFailure(osm, w, infrav1.APIServerIngressReadyCondition, in.Err)
	case in.notRequired:
		setCondition(osm, infrav1.APIServerIngressReadyCondition, metav1.ConditionTrue, infrav1.NotRequiredReason,
			"the cluster has no API server load balancer and no API server floating IP")
	case in.server.Status != "ACTIVE":
		setCondition(osm, infrav1.APIServerIngressReadyCondition, metav1.ConditionFalse, infrav1.WaitingForInstanceReason,
			fmt.Sprintf("server %s is %s", in.server.ID, in.server.Status))
	case in.address == "":
		setCondition(osm, infrav1.APIServerIngressReadyCondition, metav1.ConditionFalse, infrav1.WaitingForInstanceReason,
			fmt.Sprintf("server %s has no address on the cluster network %s yet", in.server.ID, in.network))
	case in.floating != nil && in.floating.Address == "":
		setCondition(osm, infrav1.APIServerIngressReadyCondition, metav1.ConditionFalse, infrav1.WaitingForAPIServerFloatingIPReason,
			"the cluster has no API server load balancer, and its API server floating IP is not allocated yet")
	case in.floating != nil && in.floating.FixedIP == in.address:
		setCondition(osm, infrav1.APIServerIngressReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason,
			fmt.Sprintf("the API server floating IP %s is on this machine's address %s (the cluster has no API server load balancer)", in.floating.Address, in.address))
	case in.floating != nil:
		setCondition(osm, infrav1.APIServerIngressReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason,
			fmt.Sprintf("the API server floating IP %s is on address %s, not this machine's; this machine takes it when that port is gone "+
				"(the cluster has no API server load balancer)", in.floating.Address, in.floating.FixedIP))
	case in.membership.ZonePlanned:
		setCondition(osm, infrav1.APIServerIngressReadyCondition, metav1.ConditionFalse, infrav1.WaitingForLoadBalancerReason,
			fmt.Sprintf("the API server load balancer of availability zone %s is not created yet", in.zone))
	case in.membership.ZoneMissing:
		message := fmt.Sprintf("availability zone %q has no API server load balancer (spec.apiServerLoadBalancer.availabilityZoneSubnets maps %s) "+
			"and allowCrossAZLoadBalancerMembers is off: this control plane machine gets no API server traffic; map the zone, "+
			"set allowCrossAZLoadBalancerMembers, or keep control plane machines out of it with spec.controlPlaneAvailabilityZones",
			in.zone, in.membership.MappedZones)
		reportProblem(w, osm, infrav1.APIServerIngressReadyCondition, infrav1.NoLoadBalancerInAvailabilityZoneReason, message)
	case len(in.membership.Targets) == 0 || unknown:
		setCondition(osm, infrav1.APIServerIngressReadyCondition, metav1.ConditionFalse, infrav1.WaitingForLoadBalancerReason,
			"the API server load balancer is not created yet")
	case !in.membership.Done:
		setCondition(osm, infrav1.APIServerIngressReadyCondition, metav1.ConditionFalse, infrav1.WaitingForLoadBalancerReason,
			fmt.Sprintf("registering %s with %s", in.address, strings.Join(names, ", ")))
	case in.membership.Disabled:
		setCondition(osm, infrav1.APIServerIngressReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason,
			fmt.Sprintf("%s is a disabled member of %s: availability zone %s is in maintenance, the machine takes no new connection", in.address, strings.Join(names, ", "), in.zone))
	default:
		setCondition(osm, infrav1.APIServerIngressReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason,
			fmt.Sprintf("%s is a member of %s", in.address, strings.Join(names, ", ")))
	}
}

// setMachineDeletionStatus says where the deletion stands.
func setMachineDeletionStatus(osm *infrav1.OpenStackMachine, w *warnings, d *machineDeletionFound) {
	ingress := func(message string) {
		setCondition(osm, infrav1.APIServerIngressReadyCondition, metav1.ConditionFalse, infrav1.DeletingReason, message)
	}
	instance := func(message string) {
		setCondition(osm, infrav1.InstanceReadyCondition, metav1.ConditionFalse, infrav1.DeletingReason, message)
	}
	switch {
	case d.membershipErr != nil:
		setFailure(osm, w, infrav1.APIServerIngressReadyCondition, d.membershipErr)
	case d.membershipLeft:
		ingress("removing the machine from the API server load balancers")
	case d.membershipGone:
		ingress("the machine is a member of no API server load balancer")
	}
	switch {
	case d.instanceErr != nil:
		setFailure(osm, w, infrav1.InstanceReadyCondition, d.instanceErr)
	case d.deletingServer != "":
		instance(fmt.Sprintf("Nova is deleting server %s", d.deletingServer))
	case d.done:
		instance("the server and its ports are deleted")
	}
}

// machineRecordsNothing says whether neither the spec nor the status of osm records a server.
func machineRecordsNothing(osm *infrav1.OpenStackMachine) bool {
	return osm.Spec.ProviderID == nil && osm.Status.InstanceID == nil && len(osm.Status.Addresses) == 0
}

// addressList lists the machine's IP addresses for messages.
func addressList(addresses []clusterv1.MachineAddress) string {
	var ips []string
	for _, a := range addresses {
		if a.Type != clusterv1.MachineInternalDNS {
			ips = append(ips, a.Address)
		}
	}
	return strings.Join(ips, ", ")
}

// setPoolAddressCondition records what the pool address phase found.
func setPoolAddressCondition(osm *infrav1.OpenStackMachine, w *warnings, found *poolAddressFound) {
	switch {
	case found.Err != nil:
		setFailure(osm, w, infrav1.FloatingAddressFromPoolReadyCondition, found.Err)
	case found.waiting != "":
		setCondition(osm, infrav1.FloatingAddressFromPoolReadyCondition, metav1.ConditionFalse, infrav1.WaitingForPoolAddressReason, found.waiting)
	default:
		setCondition(osm, infrav1.FloatingAddressFromPoolReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason,
			"floating IP "+found.address+" from the pool is on the server's port")
	}
}
