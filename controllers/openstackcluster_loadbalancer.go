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
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
)

func multiAZ(spec *infrav1.OpenStackClusterSpec) bool {
	return spec.APIServerLoadBalancerEnabled() && len(spec.APIServerLoadBalancer.AvailabilityZoneSubnets) > 0
}

// lbPlan is what one reconcile does with the load balancers: the ones to converge, the ones
// that cannot be provisioned (a configuration problem found while resolving), and the ones to
// remove.
type lbPlan struct {
	desired []*loadbalancer.Desired
	known   []*infrav1.LoadBalancer
	invalid []loadbalancer.Outcome
	// stale are status entries whose availability zone left the spec.
	stale []infrav1.LoadBalancer
}

// reconcileLoadBalancers converges every API server load balancer, each availability zone on its
// own and concurrently: one zone's bad subnet, Octavia errors or ERROR state never hold the
// others back.
// ready receives how many load balancers are ready.
func (r *OpenStackClusterReconciler) reconcileLoadBalancers(ctx context.Context, clients *scope.Clients, net *networking.Service, cluster *clusterv1.Cluster, osc *infrav1.OpenStackCluster, ready *int) phaseResult {
	if !osc.Spec.APIServerLoadBalancerEnabled() {
		setCondition(osc, infrav1.APIServerLoadBalancersReadyCondition, metav1.ConditionTrue, infrav1.NotRequiredReason, "spec.apiServerLoadBalancer is not enabled")
		return phaseResult{}
	}
	if multiAZ(&osc.Spec) {
		if msg := dnsHostProblem(osc.Spec.ControlPlaneEndpoint); msg != "" {
			// Admission rejects this; a cluster created before the rule, or with admission
			// bypassed, stops here rather than getting an endpoint nobody can publish.
			for _, t := range []string{infrav1.APIServerLoadBalancersReadyCondition, infrav1.APIEndpointReadyCondition} {
				setCondition(osc, t, metav1.ConditionFalse, infrav1.EndpointConfigurationErrorReason, msg)
			}
			return phaseResult{stop: true, result: ctrl.Result{RequeueAfter: specErrorRequeue}}
		}
	}

	plan, err := r.planLoadBalancers(ctx, net, cluster, osc)
	if err != nil {
		return r.fail(osc, infrav1.APIServerLoadBalancersReadyCondition, err)
	}
	svc := r.loadBalancers(clients, osc)

	outcomes := make([]loadbalancer.Outcome, len(plan.desired))
	var wg sync.WaitGroup
	for i := range plan.desired {
		wg.Go(func() { outcomes[i] = svc.Reconcile(ctx, plan.desired[i], plan.known[i]) })
	}
	staleDone, staleErr := true, error(nil)
	if len(plan.stale) > 0 {
		wg.Go(func() { staleDone, staleErr = svc.Delete(ctx, staleRemoval(cluster, osc, plan.stale)) })
	}
	wg.Wait()
	outcomes = append(outcomes, plan.invalid...)
	for _, o := range outcomes {
		if o.State == loadbalancer.StateReady {
			*ready++
		}
	}

	r.recordLoadBalancerStatus(osc, outcomes, plan.stale, staleDone)
	loadbalancer.RecordOutcomes(cluster.Namespace, cluster.Name, outcomes)
	return r.loadBalancerCondition(osc, outcomes, plan.stale, staleDone, staleErr)
}

// dnsHostProblem says what is wrong with the endpoint of a multi-AZ cluster, or "".
func dnsHostProblem(ep *clusterv1.APIEndpoint) string {
	const what = "set spec.controlPlaneEndpoint.host to the DNS name under which you publish one A record per availability zone load balancer"
	if ep == nil || ep.Host == "" {
		return "availabilityZoneSubnets needs an explicit endpoint: " + what
	}
	if _, err := netip.ParseAddr(ep.Host); err == nil {
		return fmt.Sprintf("spec.controlPlaneEndpoint.host %s is an IP address, which can reach one load balancer only: %s", ep.Host, what)
	}
	return ""
}

// planLoadBalancers turns the spec and the status into the load balancers to converge.
func (r *OpenStackClusterReconciler) planLoadBalancers(ctx context.Context, net *networking.Service, cluster *clusterv1.Cluster, osc *infrav1.OpenStackCluster) (*lbPlan, error) {
	spec, status := osc.Spec.APIServerLoadBalancer, &osc.Status
	ns, name := cluster.Namespace, cluster.Name
	base := loadbalancer.Desired{
		Provider: ptr.Deref(spec.Provider, ""),
		Flavor:   ptr.Deref(spec.Flavor, ""),
		Ports:    lbPorts(&osc.Spec),
		Monitor:  monitorOf(spec.Monitor),
		Tags:     append(append([]string{}, osc.Spec.Tags...), loadbalancer.OwnerTag(ns, name)),
	}
	if len(spec.AllowedCIDRs) > 0 {
		base.AllowedCIDRs = loadbalancer.CanonicalCIDRs(spec.AllowedCIDRs, clusterSources(status))
	}
	floatingIP := func(az string, first bool) *loadbalancer.FloatingIP {
		if ptr.Deref(osc.Spec.DisableAPIServerFloatingIP, false) || status.ExternalNetwork == nil {
			return nil
		}
		f := &loadbalancer.FloatingIP{ExternalNetworkID: status.ExternalNetwork.ID, Description: loadbalancer.FloatingIPDescription(ns, name, az)}
		if first {
			f.Address = ptr.Deref(osc.Spec.APIServerFloatingIP, "")
		}
		return f
	}
	plan := &lbPlan{}

	if !multiAZ(&osc.Spec) {
		d := base
		d.Name = loadbalancer.Name(ns, name, "")
		d.OctaviaAZ = ptr.Deref(spec.AvailabilityZone, "")
		d.FloatingIP = floatingIP("", true)
		known := status.APIServerLoadBalancer
		if known != nil && known.Name != d.Name {
			// Returning from availabilityZoneSubnets: the first zone's load balancer becomes the
			// single one again, under the legacy name.
			d.FormerNames = []string{known.Name}
		}
		if err := r.singleVIPPlacement(ctx, net, osc, &d); err != nil {
			if _, ok := networking.IsSpecError(err); !ok {
				return nil, err
			}
			plan.invalid = append(plan.invalid, invalidOutcome("", err))
			return plan, nil
		}
		plan.desired, plan.known = []*loadbalancer.Desired{&d}, []*infrav1.LoadBalancer{known}
		for _, e := range status.APIServerLoadBalancers {
			if known == nil || e.AvailabilityZone != known.AvailabilityZone {
				plan.stale = append(plan.stale, e)
			}
		}
		return plan, nil
	}

	network, err := r.lbNetwork(ctx, net, osc)
	if err != nil {
		return nil, err
	}
	inSpec := map[string]bool{}
	for i, m := range spec.AvailabilityZoneSubnets {
		inSpec[m.AvailabilityZone] = true
		d := base
		d.AvailabilityZone, d.OctaviaAZ = m.AvailabilityZone, m.AvailabilityZone
		d.Name = loadbalancer.Name(ns, name, m.AvailabilityZone)
		d.Network = network.NetworkStatus
		d.FloatingIP = floatingIP(m.AvailabilityZone, i == 0)
		known := entryFor(status.APIServerLoadBalancers, m.AvailabilityZone)
		if i == 0 {
			// The first zone inherits the legacy single load balancer, renamed.
			d.FormerNames = []string{loadbalancer.Name(ns, name, "")}
			if known == nil && status.APIServerLoadBalancer != nil && status.APIServerLoadBalancer.AvailabilityZone == "" {
				known = status.APIServerLoadBalancer
			}
		}
		subnet, err := mappedSubnet(ctx, net, network, known, &m, i)
		if err != nil {
			if _, ok := networking.IsSpecError(err); !ok {
				return nil, err
			}
			plan.invalid = append(plan.invalid, invalidOutcome(m.AvailabilityZone, err))
			continue
		}
		d.Subnet = subnet
		plan.desired, plan.known = append(plan.desired, &d), append(plan.known, known)
	}
	for _, e := range status.APIServerLoadBalancers {
		if !inSpec[e.AvailabilityZone] {
			plan.stale = append(plan.stale, e)
		}
	}
	return plan, nil
}

func invalidOutcome(az string, err error) loadbalancer.Outcome {
	return loadbalancer.Outcome{AvailabilityZone: az, State: loadbalancer.StateInvalid, Reason: infrav1.LoadBalancerConfigurationErrorReason,
		Message: err.Error() + "; nothing is provisioned for it", RequeueAfter: loadbalancer.ConfigRequeue}
}

func entryFor(entries []infrav1.LoadBalancer, az string) *infrav1.LoadBalancer {
	for i := range entries {
		if entries[i].AvailabilityZone == az {
			return &entries[i]
		}
	}
	return nil
}

// lbPorts are the API server port and the additional ports, without duplicates.
func lbPorts(spec *infrav1.OpenStackClusterSpec) []int {
	ports := []int{spec.EffectiveAPIServerPort()}
	for _, p := range spec.APIServerLoadBalancer.AdditionalPorts {
		if p != ports[0] {
			ports = append(ports, p)
		}
	}
	return ports
}

func monitorOf(m *infrav1.APIServerLoadBalancerMonitor) infrav1.APIServerLoadBalancerMonitor {
	out := infrav1.APIServerLoadBalancerMonitor{Delay: 10, Timeout: 5, MaxRetries: 5, MaxRetriesDown: 3}
	if m != nil {
		if m.Delay > 0 {
			out.Delay = m.Delay
		}
		if m.Timeout > 0 {
			out.Timeout = m.Timeout
		}
		if m.MaxRetries > 0 {
			out.MaxRetries = m.MaxRetries
		}
		if m.MaxRetriesDown > 0 {
			out.MaxRetriesDown = m.MaxRetriesDown
		}
	}
	return out
}

// clusterSources are the addresses the cluster's own machines reach the API server from, which
// allowedCIDRs must not lock out: the cluster subnets and the router's external addresses (the
// source of traffic through a floating IP).
func clusterSources(status *infrav1.OpenStackClusterStatus) []string {
	var out []string
	if status.Network != nil {
		for _, s := range status.Network.Subnets {
			out = append(out, s.CIDR)
		}
	}
	if status.Router != nil {
		out = append(out, status.Router.IPs...)
	}
	return out
}

// singleVIPPlacement chooses the network and subnet of the single load balancer, as upstream
// does: apiServerLoadBalancer.network (with its first subnets entry) when set, otherwise the
// cluster network and its first subnet.
func (r *OpenStackClusterReconciler) singleVIPPlacement(ctx context.Context, net *networking.Service, osc *infrav1.OpenStackCluster, d *loadbalancer.Desired) error {
	spec := osc.Spec.APIServerLoadBalancer
	if spec.Network == nil {
		if osc.Status.Network == nil {
			return &networking.SpecError{Reason: infrav1.NetworkNotFoundReason, Message: "the cluster network is not known yet"}
		}
		d.Network = osc.Status.Network.NetworkStatus
		if len(osc.Status.Network.Subnets) > 0 {
			d.Subnet = &osc.Status.Network.Subnets[0]
		}
		return nil
	}
	if known := osc.Status.APIServerLoadBalancer; known != nil && known.LoadBalancerNetwork != nil && known.LoadBalancerNetwork.ID != "" &&
		(spec.Network.ID == nil || *spec.Network.ID == known.LoadBalancerNetwork.ID) {
		// Resolved when the load balancer was created; its VIP cannot move anyway.
		d.Network = known.LoadBalancerNetwork.NetworkStatus
		if len(known.LoadBalancerNetwork.Subnets) > 0 {
			d.Subnet = &known.LoadBalancerNetwork.Subnets[0]
		}
		return nil
	}
	n, err := net.ResolveNetworkParam(ctx, spec.Network, "spec.apiServerLoadBalancer.network")
	if err != nil {
		return err
	}
	d.Network = infrav1.NetworkStatus{Name: n.Name, ID: n.ID, Tags: n.Tags}
	if len(spec.Subnets) > 0 {
		sn, err := net.ResolveSubnet(ctx, &spec.Subnets[0], n.ID, "spec.apiServerLoadBalancer.subnets[0]")
		if err != nil {
			return err
		}
		s := networking.SubnetStatus(sn)
		d.Subnet = &s
	}
	return nil
}

// lbNetwork resolves apiServerLoadBalancer.network for availabilityZoneSubnets, reusing what the
// status recorded when every zone has an entry.
func (r *OpenStackClusterReconciler) lbNetwork(ctx context.Context, net *networking.Service, osc *infrav1.OpenStackCluster) (*infrav1.NetworkStatusWithSubnets, error) {
	spec := osc.Spec.APIServerLoadBalancer
	entries := osc.Status.APIServerLoadBalancers
	if len(entries) > 0 && entries[0].LoadBalancerNetwork != nil && entries[0].LoadBalancerNetwork.ID != "" &&
		(spec.Network.ID == nil || *spec.Network.ID == entries[0].LoadBalancerNetwork.ID) {
		return &infrav1.NetworkStatusWithSubnets{NetworkStatus: entries[0].LoadBalancerNetwork.NetworkStatus}, nil
	}
	n, err := net.ResolveNetworkParam(ctx, spec.Network, "spec.apiServerLoadBalancer.network")
	if err != nil {
		return nil, err
	}
	return &infrav1.NetworkStatusWithSubnets{NetworkStatus: infrav1.NetworkStatus{Name: n.Name, ID: n.ID, Tags: n.Tags}}, nil
}

// mappedSubnet resolves the subnet of mapping i, which must be on the load balancer network. The
// subnet recorded in the zone's status entry is reused: a mapping's subnet cannot change.
func mappedSubnet(ctx context.Context, net *networking.Service, network *infrav1.NetworkStatusWithSubnets, known *infrav1.LoadBalancer, m *infrav1.AZSubnetMapping, i int) (*infrav1.Subnet, error) {
	if known != nil && known.AvailabilityZone == m.AvailabilityZone && known.LoadBalancerNetwork != nil &&
		known.LoadBalancerNetwork.ID == network.ID && len(known.LoadBalancerNetwork.Subnets) > 0 &&
		(m.Subnet.ID == nil || *m.Subnet.ID == known.LoadBalancerNetwork.Subnets[0].ID) {
		s := known.LoadBalancerNetwork.Subnets[0]
		return &s, nil
	}
	field := fmt.Sprintf("spec.apiServerLoadBalancer.availabilityZoneSubnets[%d].subnet (availability zone %s)", i, m.AvailabilityZone)
	sn, err := net.ResolveSubnet(ctx, &m.Subnet, network.ID, field)
	if err != nil {
		return nil, err
	}
	s := networking.SubnetStatus(sn)
	return &s, nil
}

// staleRemoval is the deletion of the load balancers of zones that left the spec.
func staleRemoval(cluster *clusterv1.Cluster, osc *infrav1.OpenStackCluster, stale []infrav1.LoadBalancer) *loadbalancer.Removal {
	r := &loadbalancer.Removal{Namespace: cluster.Namespace, Cluster: cluster.Name, KeepAddress: ptr.Deref(osc.Spec.APIServerFloatingIP, "")}
	if osc.Status.ExternalNetwork != nil {
		r.ExternalNetworkID = osc.Status.ExternalNetwork.ID
	}
	for _, e := range stale {
		r.Names = append(r.Names, loadbalancer.Name(cluster.Namespace, cluster.Name, e.AvailabilityZone))
		if e.ID != "" {
			r.IDs = append(r.IDs, e.ID)
		}
	}
	return r
}

// recordLoadBalancerStatus writes the outcomes into the status: the per-zone list (upserted by
// zone, in spec order, then the zones being removed) and the single entry, which with
// availabilityZoneSubnets mirrors the first mapping's.
func (r *OpenStackClusterReconciler) recordLoadBalancerStatus(osc *infrav1.OpenStackCluster, outcomes []loadbalancer.Outcome, stale []infrav1.LoadBalancer, staleDone bool) {
	status := &osc.Status
	if !multiAZ(&osc.Spec) {
		if len(outcomes) > 0 && outcomes[0].Status != nil {
			status.APIServerLoadBalancer = outcomes[0].Status
		}
		status.APIServerLoadBalancers = nil
		if !staleDone {
			status.APIServerLoadBalancers = stale
		}
		return
	}
	var list []infrav1.LoadBalancer
	for _, m := range osc.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets {
		entry := entryFor(status.APIServerLoadBalancers, m.AvailabilityZone)
		for _, o := range outcomes {
			if o.AvailabilityZone == m.AvailabilityZone && o.Status != nil {
				entry = o.Status
			}
		}
		if entry != nil {
			list = append(list, *entry)
		}
	}
	if !staleDone {
		list = append(list, stale...)
	}
	status.APIServerLoadBalancers = list
	first := osc.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets[0].AvailabilityZone
	if e := entryFor(list, first); e != nil {
		status.APIServerLoadBalancer = e.DeepCopy()
	}
}

// loadBalancerCondition sets APIServerLoadBalancersReady from the outcomes: its message names
// every zone that is not ready, and why.
func (r *OpenStackClusterReconciler) loadBalancerCondition(osc *infrav1.OpenStackCluster, outcomes []loadbalancer.Outcome, stale []infrav1.LoadBalancer, staleDone bool, staleErr error) phaseResult {
	var (
		messages []string
		errs     []error
		requeue  time.Duration
		reason   string
		severity = map[string]int{infrav1.WaitingForLoadBalancerReason: 1, infrav1.LoadBalancerErrorReason: 2, infrav1.OpenStackErrorReason: 3, infrav1.LoadBalancerConfigurationErrorReason: 4}
	)
	note := func(rsn, msg string, after time.Duration) {
		messages = append(messages, msg)
		if severity[rsn] > severity[reason] {
			reason = rsn
		}
		if after > 0 && (requeue == 0 || after < requeue) {
			requeue = after
		}
	}
	for _, o := range outcomes {
		if o.State == loadbalancer.StateReady {
			continue
		}
		msg := o.Message
		if o.AvailabilityZone != "" {
			msg = o.AvailabilityZone + ": " + msg
		}
		note(o.Reason, msg, o.RequeueAfter)
		if o.Err != nil {
			errs = append(errs, o.Err)
		}
	}
	if staleErr != nil {
		errs = append(errs, staleErr)
		note(infrav1.OpenStackErrorReason, "removing load balancers: "+staleErr.Error(), 0)
	} else if !staleDone {
		zones := make([]string, len(stale))
		for i, e := range stale {
			zones[i] = e.AvailabilityZone
		}
		note(infrav1.WaitingForLoadBalancerReason, fmt.Sprintf("deleting the load balancers of availability zones no longer in the spec: %s", strings.Join(zones, ", ")), loadbalancer.PendingRequeue)
	}
	if len(messages) == 0 {
		setCondition(osc, infrav1.APIServerLoadBalancersReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason, "")
		return phaseResult{}
	}
	setCondition(osc, infrav1.APIServerLoadBalancersReadyCondition, metav1.ConditionFalse, reason, strings.Join(messages, "; "))
	return phaseResult{result: ctrl.Result{RequeueAfter: requeue}, err: kerrors.NewAggregate(errs)}
}

// clusterRemoval is the deletion of every load balancer of the cluster: the legacy one, one per
// zone of the spec and of the status, and any other carrying the cluster's tag.
func clusterRemoval(cluster *clusterv1.Cluster, osc *infrav1.OpenStackCluster) *loadbalancer.Removal {
	ns, name := cluster.Namespace, cluster.Name
	r := staleRemoval(cluster, osc, osc.Status.APIServerLoadBalancers)
	r.AllTagged = true
	r.Names = append(r.Names, loadbalancer.Name(ns, name, ""))
	if osc.Spec.APIServerLoadBalancer != nil {
		for _, m := range osc.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets {
			r.Names = append(r.Names, loadbalancer.Name(ns, name, m.AvailabilityZone))
		}
	}
	if lb := osc.Status.APIServerLoadBalancer; lb != nil {
		r.Names = append(r.Names, lb.Name)
		if lb.ID != "" {
			r.IDs = append(r.IDs, lb.ID)
		}
	}
	return r
}
