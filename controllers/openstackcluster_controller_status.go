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
	"net"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// How an OpenStackCluster's status and conditions are computed from what the phases found.

// clusterConditions are the conditions this controller owns, besides Ready and Paused.
var clusterConditions = []string{
	infrav1.NetworkReadyCondition,
	infrav1.SecurityGroupsReadyCondition,
	infrav1.FailureDomainsReadyCondition,
	infrav1.APIServerLoadBalancersReadyCondition,
	infrav1.APIEndpointReadyCondition,
	infrav1.APIServerDNSReadyCondition,
}

// initClusterConditions sets every owned condition that is not set yet to Unknown.
func initClusterConditions(osc *infrav1.OpenStackCluster) {
	for _, t := range clusterConditions {
		if conditions.Get(osc, t) == nil {
			setCondition(osc, t, metav1.ConditionUnknown, infrav1.ProvisioningReason, "")
		}
	}
}

// setIdentityError reports credentials that do not work on every owned condition, with one event.
func setIdentityError(c *clusterScope, err error) ctrl.Result {
	message := failureMessage(err)
	result := reportProblem(c.report, c.osc, clusterConditions[0], infrav1.IdentityErrorReason, message)
	for _, t := range clusterConditions[1:] {
		setCondition(c.osc, t, metav1.ConditionFalse, infrav1.IdentityErrorReason, message)
	}
	return result
}

// setReadySummary sets Ready from the conditions the controller owns, also during deletion.
func setReadySummary(osc *infrav1.OpenStackCluster) {
	setSummary(osc, clusterConditions)
}

// setSummary sets Ready on obj as the summary of the conditions of types, with Cluster API's
// reasons for it (Ready, NotReady, ReadyUnknown) and, when all is well, the message of each.
func setSummary(obj conditions.Setter, types []string) {
	merge := conditions.DefaultMergeStrategy(conditions.ComputeReasonFunc(
		conditions.GetDefaultComputeMergeReasonFunc(clusterv1.NotReadyReason, clusterv1.ReadyUnknownReason, clusterv1.ReadyReason)))
	if err := conditions.SetSummaryCondition(obj, obj, infrav1.ReadyCondition, conditions.ForConditionTypes(types),
		conditions.CustomMergeStrategy{MergeStrategy: merge}); err != nil {
		setCondition(obj, infrav1.ReadyCondition, metav1.ConditionUnknown, clusterv1.ReadyUnknownReason, err.Error())
	}
}

// setNetworkReady says which network, subnets and router the cluster uses.
func setNetworkReady(osc *infrav1.OpenStackCluster) {
	var b strings.Builder
	if n := osc.Status.Network; n != nil {
		fmt.Fprintf(&b, "network %s (%s)", n.Name, n.ID)
		var cidrs []string
		for _, s := range n.Subnets {
			cidrs = append(cidrs, s.CIDR)
		}
		if len(cidrs) > 0 {
			fmt.Fprintf(&b, " with subnets %s", strings.Join(cidrs, ", "))
		}
	}
	if r := osc.Status.Router; r != nil {
		fmt.Fprintf(&b, "; router %s", r.Name)
		if len(r.IPs) > 0 {
			fmt.Fprintf(&b, " at %s", strings.Join(r.IPs, ", "))
		}
	}
	if e := osc.Status.ExternalNetwork; e != nil {
		fmt.Fprintf(&b, "; external network %s", e.Name)
	}
	setCondition(osc, infrav1.NetworkReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason, b.String())
}

// setSecurityGroupsReady names the managed security groups.
func setSecurityGroupsReady(osc *infrav1.OpenStackCluster) {
	var groups []string
	for _, g := range []*infrav1.SecurityGroupStatus{osc.Status.ControlPlaneSecurityGroup, osc.Status.WorkerSecurityGroup} {
		if g != nil {
			groups = append(groups, g.Name)
		}
	}
	setCondition(osc, infrav1.SecurityGroupsReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason, "security groups "+strings.Join(groups, ", "))
}

// setEndpointReady says where the API server is reached.
func setEndpointReady(osc *infrav1.OpenStackCluster) {
	ep := osc.Spec.ControlPlaneEndpoint
	setCondition(osc, infrav1.APIEndpointReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason,
		fmt.Sprintf("the API server is reached at %s", net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port)))))
}

// setProvisioned sets initialization.provisioned once machines may be created: every owned
// condition True, except that with one load balancer per availability zone one ready zone is
// enough (machines may start while another zone still converges or is broken), and that a
// control plane failure domain without a load balancer is reported but holds back neither the
// machines of the other failure domains nor workers.
func setProvisioned(osc *infrav1.OpenStackCluster, lbReady int) {
	provisioned := lbReady > 0 || !osc.Spec.APIServerLoadBalancerEnabled()
	for _, t := range clusterConditions {
		// DNS publishing follows the load balancers; machines need not wait for it.
		if t != infrav1.APIServerLoadBalancersReadyCondition && t != infrav1.APIServerDNSReadyCondition {
			provisioned = provisioned && (conditions.IsTrue(osc, t) ||
				conditions.GetReason(osc, t) == infrav1.ControlPlaneFailureDomainWithoutLoadBalancerReason)
		}
	}
	if !osc.Spec.APIServerLoadBalancersPerZone() {
		provisioned = provisioned && conditions.IsTrue(osc, infrav1.APIServerLoadBalancersReadyCondition)
	}
	if provisioned {
		osc.Status.Initialization = &infrav1.OpenStackClusterInitializationStatus{Provisioned: ptr.To(true)}
	}
}

// setLoadBalancersCondition sets APIServerLoadBalancersReady from the summary of a reconcile: its
// message names every zone that is not ready, and why, or when all are, where each is reached.
// With availabilityZoneSubnets, zonesReady counts the zones whose load balancer is ready.
func setLoadBalancersCondition(osc *infrav1.OpenStackCluster, s loadbalancer.Summary) {
	zones := 0
	if osc.Spec.APIServerLoadBalancersPerZone() {
		zones = len(osc.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets)
		osc.Status.ZonesReady = fmt.Sprintf("%d/%d", s.Ready, zones)
	} else {
		osc.Status.ZonesReady = ""
	}
	if s.Message != "" {
		setCondition(osc, infrav1.APIServerLoadBalancersReadyCondition, metav1.ConditionFalse, s.Reason, s.Message)
		return
	}
	var where []string
	for _, lb := range osc.Status.APIServerLoadBalancers {
		where = append(where, lb.AvailabilityZone+" "+addresses(&lb))
	}
	message := fmt.Sprintf("%d/%d zones ready: %s", s.Ready, zones, strings.Join(where, ", "))
	if zones == 0 && osc.Status.APIServerLoadBalancer != nil {
		message = "load balancer " + osc.Status.APIServerLoadBalancer.Name + " " + addresses(osc.Status.APIServerLoadBalancer)
	}
	setCondition(osc, infrav1.APIServerLoadBalancersReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason, message)
}

// addresses are a load balancer's VIP and, when it has one, its floating IP.
func addresses(lb *infrav1.LoadBalancer) string {
	if lb.IP != "" && lb.IP != lb.InternalIP {
		return fmt.Sprintf("VIP %s, floating IP %s", lb.InternalIP, lb.IP)
	}
	return "VIP " + lb.InternalIP
}

// setFailureDomainsCondition sets FailureDomainsReady once the failure domains are read: False,
// with a warning when it is new, while control plane failure domains have no API server load
// balancer (KCP spreads control plane machines over every control plane failure domain, the
// check the other cloud's installer makes between load balancer zones and node zones).
func setFailureDomainsCondition(c *clusterScope) {
	zones := loadbalancer.UncoveredControlPlaneZones(c.osc)
	if len(zones) == 0 {
		var names []string
		for _, fd := range c.osc.Status.FailureDomains {
			name := fd.Name
			if ptr.Deref(fd.ControlPlane, false) {
				name += " (control plane)"
			}
			names = append(names, name)
		}
		setCondition(c.osc, infrav1.FailureDomainsReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason, "failure domains "+strings.Join(names, ", "))
		return
	}
	message := fmt.Sprintf("control plane failure domains %s have no API server load balancer and allowCrossAZLoadBalancerMembers is off: "+
		"control plane machines placed there get no API server traffic; map them in spec.apiServerLoadBalancer.availabilityZoneSubnets, "+
		"set allowCrossAZLoadBalancerMembers, or leave them out of spec.controlPlaneAvailabilityZones", strings.Join(zones, ", "))
	if before := conditions.Get(c.osc, infrav1.FailureDomainsReadyCondition); before == nil || before.Message != message {
		c.report.Warn(infrav1.ControlPlaneFailureDomainWithoutLoadBalancerReason, report.Resource{}, "%s", message)
	}
	setCondition(c.osc, infrav1.FailureDomainsReadyCondition, metav1.ConditionFalse, infrav1.ControlPlaneFailureDomainWithoutLoadBalancerReason, message)
}

// knownIDs are the IDs of the network resources the status records: finding them is no adoption.
func knownIDs(status *infrav1.OpenStackClusterStatus) []string {
	var ids []string
	if status.Network != nil {
		ids = append(ids, status.Network.ID)
	}
	if status.Router != nil {
		ids = append(ids, status.Router.ID)
	}
	for _, sg := range []*infrav1.SecurityGroupStatus{status.ControlPlaneSecurityGroup, status.WorkerSecurityGroup} {
		if sg != nil {
			ids = append(ids, sg.ID)
		}
	}
	return ids
}
