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
	"net/netip"
	"slices"
	"time"

	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/compute"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/outcome"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

// The phases of an OpenStackCluster's reconcile. Each reads the object and what the phases
// before it found, acts in the cloud through a service, and returns what it found; none writes
// the object (updateStatus does, from clusterFindings).

// clusterFindings is what one reconcile of an OpenStackCluster found, phase by phase. A phase
// that did not run leaves its part nil, and what updateStatus would write from it stays as it was.
type clusterFindings struct {
	// normal is set when the reconcile ran the normal phases (not the deletion).
	normal bool
	// identity is why the credentials did not work.
	identity error
	network  *networkFound
	router   *routerFound
	groups   *groupsFound
	domains  *domainsFound
	lbs      *zones.Result
	endpoint *endpointFound
	dns      *dnsFound
	bastion  *bastionFound
	// complete is set when every phase ran to the end; checkedSince, when they all read the
	// cloud (not the load balancers alone), with when the reconcile began.
	complete     bool
	checkedSince time.Time
	deletion     *deletionFound
}

type networkFound struct {
	outcome.Outcome
	// external is the external network (nil when the cluster has none, or until resolved).
	external *infrav1.NetworkStatus
	network  *infrav1.NetworkStatusWithSubnets
	// machineSubnets are spec.availabilityZoneMachineSubnets resolved, once network is found.
	machineSubnets []infrav1.ZoneMachineSubnetStatus
	// loadBalancers is set when the check before the cluster's first resource found the load
	// balancers' references refuted: what the load balancer phase would have found.
	loadBalancers *zones.Result
}

type routerFound struct {
	outcome.Outcome
	router *infrav1.Router
}

type groupsFound struct {
	outcome.Outcome
	managed bool
	networking.ManagedGroups
}

type domainsFound struct {
	outcome.Outcome
	domains []clusterv1.FailureDomain
}

type endpointFound struct {
	outcome.Outcome
	// endpoint is spec.controlPlaneEndpoint as it must be.
	endpoint *clusterv1.APIEndpoint
	// waiting: the endpoint is the load balancer's address, not known yet.
	waiting bool
	// unknowable: the spec gives no way to know where the API server is.
	unknowable bool
}

type dnsFound struct {
	outcome.Outcome
	notRequired bool
	host        string
	publication zones.Publication
	crdMissing  bool
	// takenUp means ExternalDNS has read the records as they are now.
	takenUp bool
	// refusal says why the records are not published: the operator's policy, or a name or an
	// object another holds.
	refusal *dnsRefusal
}

// clusterNetwork is the cluster network as this reconcile knows it: found now, or as recorded.
func (f *clusterFindings) clusterNetwork(osc *infrav1.OpenStackCluster) *infrav1.NetworkStatusWithSubnets {
	if f.network != nil && f.network.network != nil {
		return f.network.network
	}
	return osc.Status.Network
}

// externalNetwork is the external network as this reconcile knows it.
func (f *clusterFindings) externalNetwork(osc *infrav1.OpenStackCluster) *infrav1.NetworkStatus {
	if f.network != nil && f.network.external != nil {
		return f.network.external
	}
	return osc.Status.ExternalNetwork
}

// machineSubnets are the zones' machine subnets as this reconcile resolved them, else as recorded.
func (f *clusterFindings) machineSubnets(osc *infrav1.OpenStackCluster) []infrav1.ZoneMachineSubnetStatus {
	if f.network != nil && f.network.Err == nil && f.network.network != nil {
		return f.network.machineSubnets
	}
	return osc.Status.AvailabilityZoneMachineSubnets
}

// routerOf is the router as this reconcile knows it.
func (f *clusterFindings) routerOf(osc *infrav1.OpenStackCluster) *infrav1.Router {
	if f.router != nil && f.router.Err == nil {
		return f.router.router
	}
	return osc.Status.Router
}

// prepareNetwork finds the external network, and before the cluster's first resource is created
// (or when its status was lost) resolves what later phases would only resolve after creating
// the network (checkReferences). It only reads; reconcileNetwork goes on from what it found.
func (c *clusterReconcile) prepareNetwork(ctx context.Context) *networkFound {
	osc := c.osc
	found := &networkFound{external: osc.Status.ExternalNetwork}
	// The external network is immutable in the spec: once found, it is not looked up again.
	if found.external == nil {
		external, err := c.net.ResolveExternalNetwork(ctx, &osc.Spec)
		if err != nil {
			found.Outcome = outcome.Failed(err)
			return found
		}
		found.external = external
	}
	if osc.Status.Network == nil {
		if refuted, err := c.checkReferences(ctx, found.external); err != nil || refuted != nil {
			found.loadBalancers = refuted
			found.Outcome = outcome.Failed(err)
			if refuted != nil {
				found.Outcome = lbOutcome(refuted)
				found.Stop = true
			}
		}
	}
	return found
}

// reconcileNetwork makes the cluster network and resolves the zones' machine subnets, into found
// (what prepareNetwork found).
func (c *clusterReconcile) reconcileNetwork(ctx context.Context, found *networkFound) {
	osc := c.osc
	network, err := c.net.ReconcileNetwork(ctx, networking.ResourceName(c.cluster.Namespace, c.cluster.Name), &osc.Spec, osc.Status.Network)
	if err != nil {
		found.Outcome = outcome.Failed(err)
		return
	}
	found.network = network
	if len(osc.Spec.AvailabilityZoneMachineSubnets) > 0 {
		if found.machineSubnets, err = c.net.ResolveMachineSubnets(ctx, &osc.Spec, &network.NetworkStatus); err != nil {
			found.Outcome = outcome.Failed(err)
		}
	}
}

// checkReferences resolves what later phases would only resolve after creating the network:
// spec.router, whose refusal it returns, and the load balancers' network, subnets and flavor,
// for which it returns what the load balancer phase would find when they are refuted. So a spec
// the cloud refutes is reported with the words of the phase it belongs to, and the cloud is
// left as it was.
func (c *clusterReconcile) checkReferences(ctx context.Context, external *infrav1.NetworkStatus) (*zones.Result, error) {
	spec := &c.osc.Spec
	if spec.Router != nil && len(spec.ManagedSubnets) > 0 {
		if _, err := c.net.ResolveRouterParam(ctx, spec.Router); err != nil {
			return nil, err
		}
	}
	if !spec.APIServerLoadBalancerEnabled() {
		return nil, nil
	}
	in := loadbalancer.InputOf(c.osc, c.cluster.Name, c.osc.Status.Network, external, c.osc.Status.Router)
	return c.loadBalancers().CheckReferences(ctx, c.net, in), nil
}

// reconcileRouter connects the network to the external network.
func (c *clusterReconcile) reconcileRouter(ctx context.Context, network *infrav1.NetworkStatusWithSubnets, external *infrav1.NetworkStatus) *routerFound {
	name := networking.ResourceName(c.cluster.Namespace, c.cluster.Name)
	router, err := c.net.ReconcileRouter(ctx, name, &c.osc.Spec, network, external)
	if err != nil {
		return &routerFound{Outcome: outcome.Failed(err)}
	}
	return &routerFound{router: router}
}

// reconcileSecurityGroups makes the managed security groups and their rules.
func (c *clusterReconcile) reconcileSecurityGroups(ctx context.Context, network *infrav1.NetworkStatusWithSubnets) *groupsFound {
	osc := c.osc
	if osc.Spec.ManagedSecurityGroups == nil {
		return &groupsFound{}
	}
	var cidrs []string
	if network != nil {
		for _, s := range network.Subnets {
			cidrs = append(cidrs, s.CIDR)
		}
	}
	// The zones' machine subnets hold nodes too.
	machineSubnets := osc.Status.AvailabilityZoneMachineSubnets
	if f := c.found.network; f != nil && f.Err == nil && f.network != nil {
		machineSubnets = f.machineSubnets
	}
	for _, z := range machineSubnets {
		if !slices.Contains(cidrs, z.Subnet.CIDR) {
			cidrs = append(cidrs, z.Subnet.CIDR)
		}
	}
	found, err := c.net.ReconcileSecurityGroups(ctx, c.cluster.Namespace, c.cluster.Name, &osc.Spec, cidrs, networking.ManagedGroups{
		ControlPlane: osc.Status.ControlPlaneSecurityGroup, Worker: osc.Status.WorkerSecurityGroup, Bastion: osc.Status.BastionSecurityGroup})
	if err != nil {
		return &groupsFound{managed: true, Outcome: outcome.Failed(err)}
	}
	out := &groupsFound{managed: true, ManagedGroups: found}
	if found.Bastion != nil && !osc.Spec.BastionEnabled() {
		// The bastion's group waits for its port to go.
		out.RequeueAfter = requeue.Wait
	}
	return out
}

// reconcileFailureDomains reads the Nova availability zones machines may be placed in.
func (c *clusterReconcile) reconcileFailureDomains(ctx context.Context) *domainsFound {
	fds, err := compute.FailureDomains(ctx, c.clients.Compute, c.osc.Spec.ControlPlaneAvailabilityZones)
	if err != nil {
		return &domainsFound{Outcome: outcome.Failed(err)}
	}
	return &domainsFound{domains: fds}
}

// reconcileLoadBalancers converges the API server load balancers: one call into the load
// balancer service, which asks the zone rules (package zones). Their input is the object's
// status as recorded, with the network, external network, router and machine subnets given
// (as this reconcile found them, or as recorded when the phase runs beside the network's).
func (c *clusterReconcile) reconcileLoadBalancers(ctx context.Context, network *infrav1.NetworkStatusWithSubnets, external *infrav1.NetworkStatus,
	router *infrav1.Router, machineSubnets []infrav1.ZoneMachineSubnetStatus) *zones.Result {
	in := loadbalancer.InputOf(c.osc, c.cluster.Name, network, external, router)
	in.MachineSubnets = machineSubnets
	result := c.loadBalancers().ReconcileCluster(ctx, c.net, in)
	return &result
}

// lbOutcome is how the load balancer phase ended.
func lbOutcome(r *zones.Result) outcome.Outcome {
	switch {
	case r.Disabled:
		return outcome.Outcome{}
	case r.EndpointProblem != "":
		return outcome.Outcome{Stop: true, RequeueAfter: requeue.Config}
	case r.Err != nil:
		return outcome.Failed(r.Err)
	}
	return outcome.Outcome{Err: r.Summary.Err, RequeueAfter: r.Summary.RequeueAfter}
}

// reconcileEndpoint finds what spec.controlPlaneEndpoint is when the user did not set it: the
// single load balancer's address; without a load balancer, the floating IP (the user's or one
// allocated here), or the fixed IP when floating IPs are off. A host the user set is never
// replaced.
func (c *clusterReconcile) reconcileEndpoint(ctx context.Context, lbs *zones.Result, external *infrav1.NetworkStatus) *endpointFound {
	spec := &c.osc.Spec
	port := int32(spec.EffectiveAPIServerPort())
	if ep := spec.ControlPlaneEndpoint; ep != nil && ep.Host != "" {
		found := *ep
		if found.Port == 0 {
			found.Port = port
		}
		if !spec.APIServerLoadBalancerEnabled() && !ptr.Deref(spec.DisableAPIServerFloatingIP, false) && external != nil && spec.APIServerFloatingIP == nil && isIP(found.Host) {
			// Taken over from upstream CAPO: its floating IP at the host becomes the cluster's.
			if err := c.net.AdoptAPIServerFloatingIP(ctx, networking.APIServerFloatingIPMarks(c.cluster.Namespace, c.cluster.Name, c.takeover), found.Host); err != nil {
				return &endpointFound{Outcome: outcome.Failed(err)}
			}
		}
		return &endpointFound{endpoint: &found}
	}
	if spec.APIServerLoadBalancerEnabled() {
		// The single load balancer's address: its floating IP, or its VIP without one. (With
		// availabilityZoneSubnets the host is required and never derived.)
		if lb := lbs.Single; lbs.Summary.Ready > 0 && lb != nil && lb.IP != "" {
			return &endpointFound{endpoint: &clusterv1.APIEndpoint{Host: lb.IP, Port: port}}
		}
		return &endpointFound{waiting: true}
	}
	var host string
	switch {
	case !ptr.Deref(spec.DisableAPIServerFloatingIP, false) && external != nil:
		address, err := c.net.ReconcileAPIServerFloatingIP(ctx, networking.APIServerFloatingIPMarks(c.cluster.Namespace, c.cluster.Name, c.takeover),
			external.ID, spec.APIServerFloatingIP)
		if err != nil {
			return &endpointFound{Outcome: outcome.Failed(err)}
		}
		host = address
	case spec.APIServerFixedIP != nil:
		host = *spec.APIServerFixedIP
	default:
		return &endpointFound{Outcome: outcome.Outcome{Stop: true}, unknowable: true}
	}
	return &endpointFound{endpoint: &clusterv1.APIEndpoint{Host: host, Port: port}}
}

// isIP says whether host is an IP address rather than a DNS name.
func isIP(host string) bool {
	_, err := netip.ParseAddr(host)
	return err == nil
}
