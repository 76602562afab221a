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
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cluster-api/util/conditions"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

// How an OpenStackCluster's status and conditions are computed from what the phases found
// (clusterFindings): the only place that writes them.

// ownedClusterConditions are the conditions this controller owns, besides Ready and Paused:
// clusterConditions, which make Ready, and ZoneMaintenanceReady and BastionReady, which do not.
var ownedClusterConditions = append(slices.Clone(clusterConditions), infrav1.ZoneMaintenanceReadyCondition, infrav1.BastionReadyCondition)

// clusterConditions are the conditions Ready sums up.
var clusterConditions = []string{
	infrav1.NetworkReadyCondition,
	infrav1.SecurityGroupsReadyCondition,
	infrav1.FailureDomainsReadyCondition,
	infrav1.APIServerLoadBalancersReadyCondition,
	infrav1.APIEndpointReadyCondition,
	infrav1.APIServerDNSReadyCondition,
}

// updateStatus sets the status and conditions from what the reconcile found, then Ready, and
// records the warnings the setters asked for. Every setter is a function of the object and the
// findings alone.
func (c *clusterReconcile) updateStatus() {
	var w warnings
	setClusterStatus(c.osc, &w, c.cluster.Name, &c.found, time.Now())
	if f := &c.found; f.deletion == nil && f.normal && f.identity == nil && f.complete && !f.checkedSince.IsZero() {
		// What this reconcile read and found ready need not be read by the polls that follow
		// while Octavia builds (fullChecks).
		c.r.checks.checked(c.osc, f.checkedSince)
	}
	w.emit(c.report)
}

// setClusterStatus sets osc's status and conditions from what a reconcile of Cluster cluster
// found, at now, then Ready.
func setClusterStatus(osc *infrav1.OpenStackCluster, w *warnings, cluster string, f *clusterFindings, now time.Time) {
	switch {
	case f.deletion != nil:
		setDeletionStatus(osc, f.deletion)
	case f.normal:
		initConditions(osc, clusterConditions)
		if f.identity != nil {
			setIdentityError(osc, w, f.identity)
			break
		}
		setNetworkStatus(osc, w, f.network, f.router)
		if f.groups != nil {
			setSecurityGroupsStatus(osc, w, f.groups)
		}
		if f.domains != nil && f.domains.Err == nil {
			osc.Status.FailureDomains = f.domains.domains
		}
		lbs := f.lbs
		if f.network != nil && f.network.loadBalancers != nil {
			lbs = f.network.loadBalancers
		}
		if lbs != nil {
			setLoadBalancersStatus(osc, w, lbs)
		}
		// A zone out of service is withdrawn from control plane machines (zones.HandOver).
		osc.Status.FailureDomains = zones.ControlPlaneDomains(osc.Status.FailureDomains, osc.Spec.ControlPlaneAvailabilityZones, osc.Status.APIServerLoadBalancers)
		if f.domains != nil {
			setFailureDomainsCondition(osc, w, cluster, f.domains)
		}
		if f.endpoint != nil {
			setEndpointStatus(osc, w, f.endpoint)
		}
		if f.dns != nil {
			setDNSCondition(osc, w, f.dns)
		}
		if f.lbs != nil && f.lbs.Observed {
			setMaintenanceStatus(osc, w, cluster, f.lbs, f.dns, now)
		}
		setBastionStatus(osc, w, f.bastion)
		if f.complete {
			setProvisioned(osc, f.lbs)
		}
	}
	setSummary(osc, clusterConditions)
}

// setBastionStatus records the bastion's server and sets BastionReady. b is nil when the
// reconcile did not look at the bastion: then only a cluster without one is said to need none.
func setBastionStatus(osc *infrav1.OpenStackCluster, w *warnings, b *bastionFound) {
	if b == nil {
		if osc.Spec.Bastion == nil && osc.Status.Bastion == nil {
			setCondition(osc, infrav1.BastionReadyCondition, metav1.ConditionTrue, infrav1.NotRequiredReason, "spec.bastion is not set")
		}
		return
	}
	osc.Status.Bastion = b.status
	switch {
	case b.Err != nil:
		setFailure(osc, w, infrav1.BastionReadyCondition, b.Err)
	case b.removed:
		setCondition(osc, infrav1.BastionReadyCondition, metav1.ConditionTrue, infrav1.NotRequiredReason, "spec.bastion is not enabled")
	case b.waiting != "":
		setCondition(osc, infrav1.BastionReadyCondition, metav1.ConditionFalse, infrav1.WaitingForBastionReason, "waiting for "+b.waiting)
	default:
		st := b.status
		message := fmt.Sprintf("bastion %s (%s) at %s", st.Name, st.ID, st.IP)
		if st.FloatingIP != "" {
			message = fmt.Sprintf("bastion %s (%s) at %s, floating IP %s", st.Name, st.ID, st.IP, st.FloatingIP)
		}
		setCondition(osc, infrav1.BastionReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason, message)
	}
}

// setIdentityError reports credentials that do not work on every owned condition, with one event.
func setIdentityError(osc *infrav1.OpenStackCluster, w *warnings, err error) {
	message := failureMessage(err)
	reportProblem(w, osc, clusterConditions[0], infrav1.IdentityErrorReason, message)
	for _, t := range clusterConditions[1:] {
		setCondition(osc, t, metav1.ConditionFalse, infrav1.IdentityErrorReason, message)
	}
}

// setNetworkStatus records the external network, the cluster network and the router, and sets
// NetworkReady once the router phase is done: the network phase sets it only when it fails.
func setNetworkStatus(osc *infrav1.OpenStackCluster, w *warnings, n *networkFound, r *routerFound) {
	if n != nil {
		if n.external != nil {
			osc.Status.ExternalNetwork = n.external
		}
		if n.network != nil {
			osc.Status.Network = n.network
			if n.Err == nil {
				osc.Status.AvailabilityZoneMachineSubnets = n.machineSubnets
			}
		}
		if n.Err != nil && n.loadBalancers == nil {
			setFailure(osc, w, infrav1.NetworkReadyCondition, n.Err)
		}
	}
	if r != nil {
		if r.Err != nil {
			setFailure(osc, w, infrav1.NetworkReadyCondition, r.Err)
			return
		}
		osc.Status.Router = r.router
		setNetworkReady(osc)
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
	if zs := osc.Status.AvailabilityZoneMachineSubnets; len(zs) > 0 {
		words := make([]string, len(zs))
		for i, z := range zs {
			words[i] = fmt.Sprintf("%s %s (%s)", z.AvailabilityZone, z.Subnet.CIDR, z.Subnet.ID)
		}
		fmt.Fprintf(&b, "; machine subnets %s", strings.Join(words, ", "))
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

// setSecurityGroupsStatus records the managed security groups and sets SecurityGroupsReady.
func setSecurityGroupsStatus(osc *infrav1.OpenStackCluster, w *warnings, g *groupsFound) {
	switch {
	case !g.managed:
		setCondition(osc, infrav1.SecurityGroupsReadyCondition, metav1.ConditionTrue, infrav1.NotRequiredReason, "spec.managedSecurityGroups is not set")
	case g.Err != nil:
		setFailure(osc, w, infrav1.SecurityGroupsReadyCondition, g.Err)
	default:
		osc.Status.ControlPlaneSecurityGroup, osc.Status.WorkerSecurityGroup = g.ControlPlane, g.Worker
		osc.Status.BastionSecurityGroup = g.Bastion
		setSecurityGroupsReady(osc)
	}
}

// setSecurityGroupsReady names the managed security groups.
func setSecurityGroupsReady(osc *infrav1.OpenStackCluster) {
	var groups []string
	for _, g := range []*infrav1.SecurityGroupStatus{osc.Status.ControlPlaneSecurityGroup, osc.Status.WorkerSecurityGroup, osc.Status.BastionSecurityGroup} {
		if g != nil {
			groups = append(groups, g.Name)
		}
	}
	setCondition(osc, infrav1.SecurityGroupsReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason, "security groups "+strings.Join(groups, ", "))
}

// setLoadBalancersStatus records the API server load balancers and sets
// APIServerLoadBalancersReady (and APIEndpointReady, when the endpoint cannot be published).
func setLoadBalancersStatus(osc *infrav1.OpenStackCluster, w *warnings, r *zones.Result) {
	switch {
	case r.Disabled:
		setCondition(osc, infrav1.APIServerLoadBalancersReadyCondition, metav1.ConditionTrue, infrav1.NotRequiredReason, "spec.apiServerLoadBalancer is not enabled")
		return
	case r.EndpointProblem != "":
		for _, t := range []string{infrav1.APIServerLoadBalancersReadyCondition, infrav1.APIEndpointReadyCondition} {
			setCondition(osc, t, metav1.ConditionFalse, infrav1.EndpointConfigurationErrorReason, r.EndpointProblem)
		}
		return
	case r.Err != nil:
		setFailure(osc, w, infrav1.APIServerLoadBalancersReadyCondition, r.Err)
		return
	}
	if r.Observed {
		osc.Status.APIServerLoadBalancers, osc.Status.APIServerLoadBalancer = r.Zones, r.Single
	}
	osc.Status.ZonesReady = r.ZonesReady
	setLoadBalancersCondition(osc, r)
}

// setLoadBalancersCondition sets APIServerLoadBalancersReady from the summary of a reconcile: its
// message names every zone that is not ready, and why, or when all are, where each is reached and
// how many zones serve (the Zones column's count: zones.Result.ZonesReady).
func setLoadBalancersCondition(osc *infrav1.OpenStackCluster, r *zones.Result) {
	s := r.Summary
	if s.Message != "" {
		setCondition(osc, infrav1.APIServerLoadBalancersReadyCondition, metav1.ConditionFalse, s.Reason, s.Message)
		return
	}
	message := ""
	if r.ZonesReady != "" {
		var where []string
		for _, lb := range osc.Status.APIServerLoadBalancers {
			where = append(where, lb.AvailabilityZone+" "+addresses(&lb))
		}
		message = fmt.Sprintf("%s zones ready: %s", r.ZonesReady, strings.Join(where, ", "))
		if r.Former.Holding != "" {
			message += "; " + r.Former.Holding
		}
	} else if lb := osc.Status.APIServerLoadBalancer; lb != nil {
		message = "load balancer " + lb.Name + " " + addresses(lb)
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
func setFailureDomainsCondition(osc *infrav1.OpenStackCluster, w *warnings, cluster string, d *domainsFound) {
	if d.Err != nil {
		setFailure(osc, w, infrav1.FailureDomainsReadyCondition, d.Err)
		return
	}
	in := loadbalancer.RecordedInput(osc, cluster)
	uncovered, unplaced := zones.UncoveredControlPlaneZones(in), zones.ZonesWithoutCompute(in)
	if len(uncovered) == 0 && len(unplaced) == 0 {
		var names []string
		for _, fd := range osc.Status.FailureDomains {
			name := fd.Name
			if ptr.Deref(fd.ControlPlane, false) {
				name += " (control plane)"
			} else if e := zones.EntryFor(osc.Status.APIServerLoadBalancers, fd.Name); e != nil && e.FailureDomainWithdrawal != nil {
				name += " (withdrawn from control plane machines: " + zones.WithdrawalWords(e.FailureDomainWithdrawal) + ")"
			}
			names = append(names, name)
		}
		setCondition(osc, infrav1.FailureDomainsReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason, "failure domains "+strings.Join(names, ", "))
		return
	}
	// Both directions: zones with load balancers that Nova does not have, and control plane
	// failure domains without a load balancer.
	var parts []string
	reason := infrav1.ControlPlaneFailureDomainWithoutLoadBalancerReason
	if len(unplaced) > 0 {
		reason = infrav1.LoadBalancerZoneWithoutComputeReason
		var nova []string
		for _, fd := range osc.Status.FailureDomains {
			nova = append(nova, fd.Name)
		}
		parts = append(parts, fmt.Sprintf("spec.apiServerLoadBalancer.availabilityZoneSubnets (or zoneDiscovery's tags) maps zones %s, which Nova does not have (its zones: %s): "+
			"no machine is placed there, so their load balancers never get a member; correct the zone names", strings.Join(unplaced, ", "), strings.Join(nova, ", ")))
	}
	if len(uncovered) > 0 {
		parts = append(parts, fmt.Sprintf("control plane failure domains %s have no API server load balancer and allowCrossAZLoadBalancerMembers is off: "+
			"control plane machines placed there get no API server traffic; map them in spec.apiServerLoadBalancer.availabilityZoneSubnets, "+
			"set allowCrossAZLoadBalancerMembers, or leave them out of spec.controlPlaneAvailabilityZones", strings.Join(uncovered, ", ")))
	}
	reportProblem(w, osc, infrav1.FailureDomainsReadyCondition, reason, strings.Join(parts, "; "))
}

// setEndpointStatus fills spec.controlPlaneEndpoint, as the provider contract asks, and sets
// APIEndpointReady.
func setEndpointStatus(osc *infrav1.OpenStackCluster, w *warnings, e *endpointFound) {
	switch {
	case e.Err != nil:
		setFailure(osc, w, infrav1.APIEndpointReadyCondition, e.Err)
	case e.waiting:
		setCondition(osc, infrav1.APIEndpointReadyCondition, metav1.ConditionFalse, infrav1.WaitingForLoadBalancerReason,
			"the endpoint is the API server load balancer's address, known once it is provisioned")
	case e.unknowable:
		setCondition(osc, infrav1.APIEndpointReadyCondition, metav1.ConditionFalse, infrav1.EndpointConfigurationErrorReason,
			"without a load balancer and without a floating IP, set spec.apiServerFixedIP (the control plane's address) or spec.controlPlaneEndpoint.host")
	default:
		osc.Spec.ControlPlaneEndpoint = e.endpoint
		setEndpointReady(osc)
	}
}

// setEndpointReady says where the API server is reached.
func setEndpointReady(osc *infrav1.OpenStackCluster) {
	ep := osc.Spec.ControlPlaneEndpoint
	setCondition(osc, infrav1.APIEndpointReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason,
		fmt.Sprintf("the API server is reached at %s", net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port)))))
}

// setDNSCondition sets APIServerDNSReady from what the DNS phase published.
func setDNSCondition(osc *infrav1.OpenStackCluster, w *warnings, d *dnsFound) {
	pub := d.publication
	switch {
	case d.notRequired:
		setCondition(osc, infrav1.APIServerDNSReadyCondition, metav1.ConditionTrue, infrav1.NotRequiredReason, "spec.apiServerLoadBalancer.dns is not set")
	case d.Err != nil:
		setFailure(osc, w, infrav1.APIServerDNSReadyCondition, d.Err)
	case d.refusal != nil:
		reportProblem(w, osc, infrav1.APIServerDNSReadyCondition, d.refusal.reason, d.refusal.message)
	case len(pub.Addresses) == 0:
		setCondition(osc, infrav1.APIServerDNSReadyCondition, metav1.ConditionFalse, infrav1.WaitingForLoadBalancerReason,
			"no load balancer has its public address yet: nothing is published")
	case d.crdMissing:
		reportProblem(w, osc, infrav1.APIServerDNSReadyCondition, infrav1.DNSEndpointCRDMissingReason,
			"the DNSEndpoint kind (externaldns.k8s.io/v1alpha1) is not installed: install ExternalDNS's CRD, or remove spec.apiServerLoadBalancer.dns")
	case pub.NoneHealthy:
		setCondition(osc, infrav1.APIServerDNSReadyCondition, metav1.ConditionFalse, infrav1.NoHealthyZoneReason, fmt.Sprintf(
			"no zone's load balancer is healthy: %s keeps every zone's address (%s) rather than none", d.host, pub.Where))
	default:
		message := fmt.Sprintf("%s is published as %s in DNSEndpoint %s", d.host, pub.Where, dnsEndpointName(osc))
		if len(pub.Withdrawn) > 0 {
			message += "; withdrawn: " + strings.Join(pub.Withdrawn, ", ")
		}
		setCondition(osc, infrav1.APIServerDNSReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason, message)
	}
}

// setProvisioned sets initialization.provisioned once machines may be created: every owned
// condition True, except that the load balancer service says how far the load balancers must
// be (with one per availability zone, one ready zone is enough), that DNS publishing need not be
// done, and that a control plane failure domain without a load balancer is reported but holds
// back neither the machines of the other failure domains nor workers.
func setProvisioned(osc *infrav1.OpenStackCluster, lbs *zones.Result) {
	provisioned := lbs.MachinesMayStart
	for _, t := range clusterConditions {
		if t != infrav1.APIServerLoadBalancersReadyCondition && t != infrav1.APIServerDNSReadyCondition {
			provisioned = provisioned && (conditions.IsTrue(osc, t) ||
				conditions.GetReason(osc, t) == infrav1.ControlPlaneFailureDomainWithoutLoadBalancerReason ||
				conditions.GetReason(osc, t) == infrav1.LoadBalancerZoneWithoutComputeReason)
		}
	}
	if provisioned {
		osc.Status.Initialization = &infrav1.OpenStackClusterInitializationStatus{Provisioned: ptr.To(true)}
	}
}

// setDeletionStatus says where the deletion stands, and forgets what is gone.
func setDeletionStatus(osc *infrav1.OpenStackCluster, d *deletionFound) {
	for _, t := range clusterConditions {
		setCondition(osc, t, metav1.ConditionFalse, infrav1.DeletingReason, "")
	}
	if d.identity != nil {
		setCondition(osc, infrav1.NetworkReadyCondition, metav1.ConditionFalse, infrav1.IdentityErrorReason, failureMessage(d.identity))
	}
	if d.loadBalancersLeft {
		setCondition(osc, infrav1.APIServerLoadBalancersReadyCondition, metav1.ConditionFalse, infrav1.DeletingReason,
			"waiting for Octavia to delete the API server load balancers")
	}
	if d.waitingForPorts != "" {
		setCondition(osc, d.waitingForPorts, metav1.ConditionFalse, infrav1.WaitingForPortsReason, "waiting for servers and load balancers to leave the network")
	}
	if d.loadBalancersGone {
		osc.Status.APIServerLoadBalancer, osc.Status.APIServerLoadBalancers = nil, nil
	}
	if d.groupsGone {
		osc.Status.ControlPlaneSecurityGroup, osc.Status.WorkerSecurityGroup, osc.Status.BastionSecurityGroup = nil, nil, nil
	}
	if d.bastionGone {
		osc.Status.Bastion = nil
	}
	if d.routerGone {
		osc.Status.Router = nil
	}
	if d.networkGone {
		osc.Status.Network = nil
	}
}

// recordsNothing says whether the status records no OpenStack resource of the cluster, nor the
// external network the controller looks up before it makes anything.
func recordsNothing(st *infrav1.OpenStackClusterStatus) bool {
	return st.ExternalNetwork == nil && st.Network == nil && st.Router == nil &&
		st.APIServerLoadBalancer == nil && len(st.APIServerLoadBalancers) == 0 &&
		st.ControlPlaneSecurityGroup == nil && st.WorkerSecurityGroup == nil && st.BastionSecurityGroup == nil && st.Bastion == nil
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
	for _, sg := range []*infrav1.SecurityGroupStatus{status.ControlPlaneSecurityGroup, status.WorkerSecurityGroup, status.BastionSecurityGroup} {
		if sg != nil {
			ids = append(ids, sg.ID)
		}
	}
	return ids
}

// setMaintenanceStatus records when the DNS records without the zones being withdrawn were
// taken up, and sets ZoneMaintenanceReady from where the planned maintenance stands.
func setMaintenanceStatus(osc *infrav1.OpenStackCluster, w *warnings, cluster string, r *zones.Result, d *dnsFound, now time.Time) {
	m := &r.Maintenance
	if d != nil && d.takenUp {
		zones.MarkWithdrawn(osc.Status.APIServerLoadBalancers, now)
		zones.MarkAllZonesPublished(loadbalancer.RecordedInput(osc, cluster), osc.Status.APIServerLoadBalancers, d.publication, now)
	}
	switch {
	case len(m.Refused) > 0:
		reportProblem(w, osc, infrav1.ZoneMaintenanceReadyCondition, infrav1.LastServingZoneReason, m.RefusalMessage(loadbalancer.RecordedInput(osc, cluster), r.Zones))
	case len(m.Waiting) > 0:
		if conditions.GetReason(osc, infrav1.ZoneMaintenanceReadyCondition) != infrav1.ZoneWithdrawingReason {
			// The transition time says when the zones began to leave DNS (zones.Input's
			// WithdrawingSince): a condition False for another reason before keeps its old one.
			conditions.Delete(osc, infrav1.ZoneMaintenanceReadyCondition)
		}
		setCondition(osc, infrav1.ZoneMaintenanceReadyCondition, metav1.ConditionFalse, infrav1.ZoneWithdrawingReason,
			"taking out of service: "+strings.Join(m.Waiting, ", "))
	case len(m.Out) > 0:
		setCondition(osc, infrav1.ZoneMaintenanceReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason,
			"in maintenance: "+strings.Join(m.Out, ", ")+" (out of DNS; control plane machines disabled in every load balancer)")
	default:
		setCondition(osc, infrav1.ZoneMaintenanceReadyCondition, metav1.ConditionTrue, infrav1.NotRequiredReason,
			"no zone is named in the "+infrav1.ZoneMaintenanceAnnotation+" annotation")
	}
}
