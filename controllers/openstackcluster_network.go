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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/compute"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
)

// The phases of an OpenStackCluster's reconcile besides its load balancers: network, router,
// security groups, failure domains and the endpoint.

func (r *OpenStackClusterReconciler) reconcileNetwork(ctx context.Context, c *clusterScope) phaseResult {
	osc := c.osc
	name := networking.ResourceName(c.cluster.Namespace, c.cluster.Name)
	// The external network is immutable in the spec: once found, it is not looked up again.
	external := osc.Status.ExternalNetwork
	if external == nil {
		var err error
		if external, err = c.net.ResolveExternalNetwork(ctx, &osc.Spec); err != nil {
			return c.fail(infrav1.NetworkReadyCondition, err)
		}
		osc.Status.ExternalNetwork = external
	}
	if osc.Status.Network == nil {
		if pr, refuted := r.checkReferences(ctx, c); refuted {
			return pr
		}
	}
	network, err := c.net.ReconcileNetwork(ctx, name, &osc.Spec, osc.Status.Network)
	if err != nil {
		return c.fail(infrav1.NetworkReadyCondition, err)
	}
	osc.Status.Network = network
	return phaseResult{}
}

// checkReferences resolves, before the cluster's first resource is created (or when its status
// was lost), what later phases would only resolve after creating the network: spec.router and
// the load balancers' network, subnets and flavor. A reference the cloud refutes then stops the
// reconcile on the condition of the phase it belongs to, and the cloud is left as it was.
func (r *OpenStackClusterReconciler) checkReferences(ctx context.Context, c *clusterScope) (phaseResult, bool) {
	spec := &c.osc.Spec
	if spec.Router != nil && len(spec.ManagedSubnets) > 0 {
		if _, err := c.net.ResolveRouterParam(ctx, spec.Router); err != nil {
			return c.fail(infrav1.NetworkReadyCondition, err), true
		}
	}
	if spec.APIServerLoadBalancerEnabled() {
		refuted, err := r.loadBalancers(c).CheckReferences(ctx, c.net, c.cluster.Namespace, c.cluster.Name, c.osc)
		if err != nil {
			return c.fail(infrav1.APIServerLoadBalancersReadyCondition, err), true
		}
		if len(refuted) > 0 {
			// The condition the load balancer phase would set, word for word.
			setLoadBalancersCondition(c.osc, loadbalancer.Summarize(refuted, nil, true, nil))
			return phaseResult{stop: true, result: ctrl.Result{RequeueAfter: specErrorRequeue}}, true
		}
	}
	return phaseResult{}, false
}

// reconcileRouter connects the network to the external network; NetworkReady is set once both
// are done.
func (r *OpenStackClusterReconciler) reconcileRouter(ctx context.Context, c *clusterScope) phaseResult {
	osc := c.osc
	name := networking.ResourceName(c.cluster.Namespace, c.cluster.Name)
	router, err := c.net.ReconcileRouter(ctx, name, &osc.Spec, osc.Status.Network, osc.Status.ExternalNetwork)
	if err != nil {
		return c.fail(infrav1.NetworkReadyCondition, err)
	}
	osc.Status.Router = router
	setNetworkReady(osc)
	return phaseResult{}
}

func (r *OpenStackClusterReconciler) reconcileSecurityGroups(ctx context.Context, c *clusterScope) phaseResult {
	osc := c.osc
	if osc.Spec.ManagedSecurityGroups == nil {
		setCondition(osc, infrav1.SecurityGroupsReadyCondition, metav1.ConditionTrue, infrav1.NotRequiredReason, "spec.managedSecurityGroups is not set")
		return phaseResult{}
	}
	var cidrs []string
	if osc.Status.Network != nil {
		for _, s := range osc.Status.Network.Subnets {
			cidrs = append(cidrs, s.CIDR)
		}
	}
	cp, worker, err := c.net.ReconcileSecurityGroups(ctx, c.cluster.Namespace, c.cluster.Name, &osc.Spec, cidrs,
		osc.Status.ControlPlaneSecurityGroup, osc.Status.WorkerSecurityGroup)
	if err != nil {
		return c.fail(infrav1.SecurityGroupsReadyCondition, err)
	}
	osc.Status.ControlPlaneSecurityGroup, osc.Status.WorkerSecurityGroup = cp, worker
	setSecurityGroupsReady(osc)
	return phaseResult{}
}

func (r *OpenStackClusterReconciler) reconcileFailureDomains(ctx context.Context, c *clusterScope) phaseResult {
	fds, err := compute.FailureDomains(ctx, c.clients.Compute, c.osc.Spec.ControlPlaneAvailabilityZones)
	if err != nil {
		return c.fail(infrav1.FailureDomainsReadyCondition, err)
	}
	c.osc.Status.FailureDomains = fds
	setFailureDomainsCondition(c)
	return phaseResult{}
}

// reconcileEndpoint fills spec.controlPlaneEndpoint when the API server has no load balancer: the
// floating IP (the user's or one allocated here), or the fixed IP when floating IPs are off. A
// host the user set is never replaced.
func (r *OpenStackClusterReconciler) reconcileEndpoint(ctx context.Context, c *clusterScope, lbReady int) phaseResult {
	osc := c.osc
	spec := &osc.Spec
	port := int32(spec.EffectiveAPIServerPort())
	if spec.ControlPlaneEndpoint != nil && spec.ControlPlaneEndpoint.Host != "" {
		if spec.ControlPlaneEndpoint.Port == 0 {
			spec.ControlPlaneEndpoint.Port = port
		}
		setEndpointReady(osc)
		return phaseResult{}
	}
	if spec.APIServerLoadBalancerEnabled() {
		// The single load balancer's address: its floating IP, or its VIP without one. (With
		// availabilityZoneSubnets the host is required and never derived.)
		if lb := osc.Status.APIServerLoadBalancer; lbReady > 0 && lb != nil && lb.IP != "" {
			spec.ControlPlaneEndpoint = &clusterv1.APIEndpoint{Host: lb.IP, Port: port}
			setEndpointReady(osc)
			return phaseResult{}
		}
		setCondition(osc, infrav1.APIEndpointReadyCondition, metav1.ConditionFalse, infrav1.WaitingForLoadBalancerReason,
			"the endpoint is the API server load balancer's address, known once it is provisioned")
		return phaseResult{}
	}

	var host string
	switch {
	case !ptr.Deref(spec.DisableAPIServerFloatingIP, false) && osc.Status.ExternalNetwork != nil:
		address, err := c.net.ReconcileAPIServerFloatingIP(ctx, networking.APIServerFloatingIPDescription(c.cluster.Namespace, c.cluster.Name),
			osc.Status.ExternalNetwork.ID, spec.APIServerFloatingIP)
		if err != nil {
			return c.fail(infrav1.APIEndpointReadyCondition, err)
		}
		host = address
	case spec.APIServerFixedIP != nil:
		host = *spec.APIServerFixedIP
	default:
		setCondition(osc, infrav1.APIEndpointReadyCondition, metav1.ConditionFalse, infrav1.EndpointConfigurationErrorReason,
			"without a load balancer and without a floating IP, set spec.apiServerFixedIP (the control plane's address) or spec.controlPlaneEndpoint.host")
		return phaseResult{stop: true}
	}
	spec.ControlPlaneEndpoint = &clusterv1.APIEndpoint{Host: host, Port: port}
	setEndpointReady(osc)
	return phaseResult{}
}
