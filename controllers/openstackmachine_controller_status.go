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
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/compute"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
)

// How an OpenStackMachine's status and conditions are computed from what the phases found.

// initMachineConditions sets every owned condition that is not set yet to Unknown.
func initMachineConditions(m *machineScope) {
	for _, t := range m.conditionTypes() {
		if conditions.Get(m.osm, t) == nil {
			setCondition(m.osm, t, metav1.ConditionUnknown, infrav1.ProvisioningReason, "")
		}
	}
}

// setMachineReadySummary sets Ready from the conditions the controller owns on the machine:
// InstanceReady, and APIServerIngressReady for control plane machines. Also during deletion.
func setMachineReadySummary(m *machineScope) {
	setSummary(m.osm, m.conditionTypes())
}

// instanceFailed sets InstanceReady to False for a problem the user must act on, and warns with
// an event when the problem is new.
func instanceFailed(m *machineScope, reason, message string) ctrl.Result {
	return reportProblem(m.report, m.osm, infrav1.InstanceReadyCondition, reason, message)
}

// openStackFailed records a failed OpenStack call on a condition and returns the error, so that
// controller-runtime retries with backoff.
func openStackFailed(m *machineScope, conditionType string, err error) (ctrl.Result, error) {
	setCondition(m.osm, conditionType, metav1.ConditionFalse, infrav1.OpenStackErrorReason, failureMessage(err))
	return ctrl.Result{}, err
}

// setInstanceStatus records the server in the status (ID, provider ID, state, addresses) and sets
// InstanceReady from Nova's status of it. A server in ERROR or deleted behind Cluster API's back
// is reported, never recreated: the provider ID names it.
func setInstanceStatus(m *machineScope, server *servers.Server) ctrl.Result {
	m.osm.Status.InstanceID = ptr.To(server.ID)
	if ptr.Deref(m.osm.Spec.ProviderID, "") == "" {
		// Set once: a provider ID upstream CAPO wrote with a region (openstack://RegionOne/<id>)
		// names the same server, and the Machine has copied it.
		m.osm.Spec.ProviderID = ptr.To("openstack:///" + server.ID)
	}
	m.osm.Status.InstanceState = ptr.To(infrav1.InstanceState(server.Status))
	if server.AvailabilityZone != "" {
		m.osm.Status.FailureDomain = server.AvailabilityZone
	}

	result := ctrl.Result{}
	switch server.Status {
	case "ACTIVE":
		m.osm.Status.Addresses = compute.Addresses(server)
		if !slices.ContainsFunc(m.osm.Status.Addresses, func(a clusterv1.MachineAddress) bool { return a.Type == clusterv1.MachineInternalIP }) {
			// Nova shows the ports' addresses a moment after the server turns ACTIVE on some clouds.
			setCondition(m.osm, infrav1.InstanceReadyCondition, metav1.ConditionFalse, infrav1.InstanceBuildingReason,
				fmt.Sprintf("server %s is ACTIVE, waiting for Nova to show its addresses", server.ID))
			result = ctrl.Result{RequeueAfter: buildRequeue}
			break
		}
		m.osm.Status.Initialization = &infrav1.OpenStackMachineInitializationStatus{Provisioned: ptr.To(true)}
		setCondition(m.osm, infrav1.InstanceReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason,
			fmt.Sprintf("server %s (%s) is ACTIVE in %s at %s", server.Name, server.ID, server.AvailabilityZone, addressList(m.osm.Status.Addresses)))
	case "BUILD":
		setCondition(m.osm, infrav1.InstanceReadyCondition, metav1.ConditionFalse, infrav1.InstanceBuildingReason,
			fmt.Sprintf("Nova is building server %s", server.ID))
		result = ctrl.Result{RequeueAfter: buildRequeue}
	case "ERROR":
		fault := server.Fault.Message
		if fault == "" {
			fault = "Nova gave no fault message"
		}
		_ = instanceFailed(m, infrav1.InstanceErrorReason, fmt.Sprintf(
			"server %s is in ERROR: %s (code %d); it is not recreated: delete the Machine to replace it", server.ID, fault, server.Fault.Code))
	case "DELETED", "SOFT_DELETED":
		_ = instanceFailed(m, infrav1.InstanceDeletedReason, fmt.Sprintf(
			"server %s was deleted outside Cluster API; it is not recreated: delete the Machine to replace it", server.ID))
	default:
		setCondition(m.osm, infrav1.InstanceReadyCondition, metav1.ConditionFalse, infrav1.InstanceNotRunningReason,
			fmt.Sprintf("server %s is %s", server.ID, server.Status))
		result = ctrl.Result{RequeueAfter: notRunningRequeue}
	}
	return result
}

// ingress is what membership found for a control plane machine: its zone and address, the load
// balancers it must be a member of, and whether that is done.
type ingress struct {
	zone, address string
	targets       []infrav1.LoadBalancer
	// zoneMissing means no load balancer serves the machine's zone.
	zoneMissing bool
	done        bool
}

// setIngressCondition sets APIServerIngressReady from what membership found.
func setIngressCondition(m *machineScope, in ingress) {
	var names []string
	unknown := false
	for _, t := range in.targets {
		names = append(names, t.Name)
		unknown = unknown || t.ID == ""
	}
	switch {
	case in.zoneMissing && loadbalancer.ZoneMapped(&m.osc.Spec, in.zone):
		setCondition(m.osm, infrav1.APIServerIngressReadyCondition, metav1.ConditionFalse, infrav1.WaitingForLoadBalancerReason,
			fmt.Sprintf("the API server load balancer of availability zone %s is not created yet", in.zone))
	case in.zoneMissing:
		message := fmt.Sprintf("availability zone %q has no API server load balancer (spec.apiServerLoadBalancer.availabilityZoneSubnets maps %s) "+
			"and allowCrossAZLoadBalancerMembers is off: this control plane machine gets no API server traffic; map the zone, "+
			"set allowCrossAZLoadBalancerMembers, or keep control plane machines out of it with spec.controlPlaneAvailabilityZones",
			in.zone, loadbalancer.MappedZones(&m.osc.Spec))
		_ = reportProblem(m.report, m.osm, infrav1.APIServerIngressReadyCondition, infrav1.NoLoadBalancerInAvailabilityZoneReason, message)
	case len(in.targets) == 0 || unknown:
		setCondition(m.osm, infrav1.APIServerIngressReadyCondition, metav1.ConditionFalse, infrav1.WaitingForLoadBalancerReason,
			"the API server load balancer is not created yet")
	case !in.done:
		setCondition(m.osm, infrav1.APIServerIngressReadyCondition, metav1.ConditionFalse, infrav1.WaitingForLoadBalancerReason,
			fmt.Sprintf("registering %s with %s", in.address, strings.Join(names, ", ")))
	default:
		setCondition(m.osm, infrav1.APIServerIngressReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason,
			fmt.Sprintf("%s is a member of %s", in.address, strings.Join(names, ", ")))
	}
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
