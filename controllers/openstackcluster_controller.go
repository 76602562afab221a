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

// Package controllers holds the provider's reconcilers.
package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/cluster-api/util/paused"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/compute"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
)

const (
	// specErrorRequeue is how soon a spec that only OpenStack can refute is checked again: the
	// missing resource may be created in the cloud, which sends no event.
	specErrorRequeue = time.Minute
	// waitRequeue is how soon the controller looks again while it waits for OpenStack.
	waitRequeue = 5 * time.Second
	// deleteRequeue is how soon a deletion looks again at load balancers Octavia is deleting
	// (a cascade delete takes 2-3 s).
	deleteRequeue = time.Second
)

// clusterConditions are the conditions this controller owns, besides Ready and Paused.
var clusterConditions = []string{
	infrav1.NetworkReadyCondition,
	infrav1.SecurityGroupsReadyCondition,
	infrav1.FailureDomainsReadyCondition,
	infrav1.APIServerLoadBalancersReadyCondition,
	infrav1.APIEndpointReadyCondition,
}

// OpenStackClusterReconciler reconciles OpenStackClusters: the network, security groups, failure
// domains and control plane endpoint of a cluster.
type OpenStackClusterReconciler struct {
	Client           client.Client
	Recorder         events.EventRecorder
	ScopeFactory     scope.Factory
	WatchFilterValue string

	// LoadBalancerMemory keeps what was learnt about each cloud's Octavia and the ERROR
	// observations of load balancers across reconciles; one is made when nil.
	LoadBalancerMemory *loadbalancer.Memory
	memoryOnce         sync.Once
}

// loadBalancers is the load balancer service of one reconcile, sharing the reconciler's memory.
func (r *OpenStackClusterReconciler) loadBalancers(clients *scope.Clients, osc *infrav1.OpenStackCluster) *loadbalancer.Service {
	r.memoryOnce.Do(func() {
		if r.LoadBalancerMemory == nil {
			r.LoadBalancerMemory = loadbalancer.NewMemory()
		}
	})
	return loadbalancer.NewService(clients.LoadBalancer, clients.Network, r.Recorder, osc, r.LoadBalancerMemory, clients.CloudKey)
}

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackclusters,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackclusters/status;openstackclusters/finalizers,verbs=get;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;clusters/status,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// SetupWithManager registers the reconciler. It watches OpenStackClusters and their Clusters (for
// pause and unpause).
func (r *OpenStackClusterReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	log := ctrl.LoggerFrom(ctx).WithName("openstackcluster")
	return ctrl.NewControllerManagedBy(mgr).
		For(&infrav1.OpenStackCluster{}).
		WithOptions(options).
		WithEventFilter(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue)).
		Watches(&clusterv1.Cluster{},
			handler.EnqueueRequestsFromMapFunc(util.ClusterToInfrastructureMapFunc(ctx, infrav1.GroupVersion.WithKind("OpenStackCluster"), mgr.GetClient(), &infrav1.OpenStackCluster{})),
			builder.WithPredicates(predicates.ClusterPausedTransitions(mgr.GetScheme(), log)),
		).
		Complete(r)
}

// Reconcile brings one OpenStackCluster's cloud resources to what its spec asks for.
func (r *OpenStackClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	log := ctrl.LoggerFrom(ctx)
	osc := &infrav1.OpenStackCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, osc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	cluster, err := util.GetOwnerCluster(ctx, r.Client, osc.ObjectMeta)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("getting the owner Cluster: %w", err)
	}
	if cluster == nil {
		log.Info("Waiting for the Cluster controller to set the owner reference")
		return ctrl.Result{}, nil
	}
	log = log.WithValues("Cluster", clusterRef(cluster))
	ctx = ctrl.LoggerInto(ctx, log)

	if isPaused, requeue, err := paused.EnsurePausedCondition(ctx, r.Client, cluster, osc); err != nil || isPaused || requeue {
		return ctrl.Result{}, err
	}

	helper, err := patch.NewHelper(osc, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() {
		setReadySummary(osc)
		owned := append([]string{infrav1.ReadyCondition, clusterv1.PausedCondition}, clusterConditions...)
		if err := helper.Patch(ctx, osc, patch.WithOwnedConditions{Conditions: owned}); err != nil {
			reterr = kerrors.NewAggregate([]error{reterr, err})
		}
	}()

	if !osc.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, cluster, osc)
	}
	if controllerutil.AddFinalizer(osc, infrav1.ClusterFinalizer) {
		// The patch adds the finalizer; its update event brings us back.
		return ctrl.Result{}, nil
	}
	return r.reconcileNormal(ctx, cluster, osc)
}

func clusterRef(c *clusterv1.Cluster) string { return c.Namespace + "/" + c.Name }

// phaseResult carries what a phase wants from the reconcile: to stop here, and when to come back.
type phaseResult struct {
	stop   bool
	result ctrl.Result
	err    error
}

func (r *OpenStackClusterReconciler) reconcileNormal(ctx context.Context, cluster *clusterv1.Cluster, osc *infrav1.OpenStackCluster) (ctrl.Result, error) {
	for _, t := range clusterConditions {
		if conditions.Get(osc, t) == nil {
			setCondition(osc, t, metav1.ConditionUnknown, infrav1.ProvisioningReason, "")
		}
	}
	clients, err := r.ScopeFactory.NewClients(ctx, osc.Namespace, osc.Spec.IdentityRef)
	if err != nil {
		for _, t := range clusterConditions {
			setCondition(osc, t, metav1.ConditionFalse, infrav1.IdentityErrorReason, err.Error())
		}
		r.Recorder.Eventf(osc, nil, corev1.EventTypeWarning, infrav1.IdentityErrorReason, "Authenticate", "%s", err.Error())
		// The Secret is not watched: look again in a while.
		return ctrl.Result{RequeueAfter: specErrorRequeue}, nil
	}
	net := networking.NewService(clients.Network, r.Recorder, osc)
	net.Known(knownIDs(&osc.Status)...)

	var (
		result  ctrl.Result
		errs    []error
		lbReady int
	)
	// The load balancers come right after the network and its subnets, so that Octavia works on
	// them (5-8 s) while the router, the security groups and the failure domains are reconciled.
	// The router comes first only when allowedCIDRs must include its address and it is not known
	// yet, so that the listeners are not created with a list that changes a moment later.
	network := func() phaseResult { return r.reconcileNetwork(ctx, net, cluster, osc) }
	router := func() phaseResult { return r.reconcileRouter(ctx, net, cluster, osc) }
	lbs := func() phaseResult { return r.reconcileLoadBalancers(ctx, clients, net, cluster, osc, &lbReady) }
	phases := []func() phaseResult{network, lbs, router}
	if osc.Status.Router == nil && osc.Spec.APIServerLoadBalancerEnabled() && len(osc.Spec.APIServerLoadBalancer.AllowedCIDRs) > 0 {
		phases = []func() phaseResult{network, router, lbs}
	}
	phases = append(phases,
		func() phaseResult { return r.reconcileSecurityGroups(ctx, net, cluster, osc) },
		func() phaseResult { return r.reconcileFailureDomains(ctx, clients, osc) },
		func() phaseResult { return r.reconcileEndpoint(ctx, net, cluster, osc, lbReady) },
	)
	for _, phase := range phases {
		pr := phase()
		result = lowestRequeue(result, pr.result)
		if pr.err != nil {
			errs = append(errs, pr.err)
		}
		if pr.stop {
			return result, kerrors.NewAggregate(errs)
		}
	}

	// With one load balancer per availability zone the cluster is reachable as soon as one of
	// them is: machines may start while another zone still converges or is broken.
	// A control plane failure domain without a load balancer is reported, but does not hold
	// back machines in the other failure domains, nor workers.
	provisioned := lbReady > 0 || !osc.Spec.APIServerLoadBalancerEnabled()
	for _, t := range clusterConditions {
		if t != infrav1.APIServerLoadBalancersReadyCondition {
			provisioned = provisioned && (conditions.IsTrue(osc, t) ||
				conditions.GetReason(osc, t) == infrav1.ControlPlaneFailureDomainWithoutLoadBalancerReason)
		}
	}
	if !multiAZ(&osc.Spec) {
		provisioned = provisioned && conditions.IsTrue(osc, infrav1.APIServerLoadBalancersReadyCondition)
	}
	if provisioned {
		osc.Status.Initialization = &infrav1.OpenStackClusterInitializationStatus{Provisioned: ptr.To(true)}
	}
	return result, kerrors.NewAggregate(errs)
}

// knownIDs are the IDs of the resources the status records.
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

func lowestRequeue(a, b ctrl.Result) ctrl.Result {
	if a.RequeueAfter == 0 || (b.RequeueAfter != 0 && b.RequeueAfter < a.RequeueAfter) {
		return b
	}
	return a
}

// fail records an error on a condition: a problem with the spec is reported and checked again
// later; anything else is returned so that controller-runtime retries with backoff.
func (r *OpenStackClusterReconciler) fail(osc *infrav1.OpenStackCluster, conditionType string, err error) phaseResult {
	if specErr, ok := networking.IsSpecError(err); ok {
		setCondition(osc, conditionType, metav1.ConditionFalse, specErr.Reason, specErr.Message)
		r.Recorder.Eventf(osc, nil, corev1.EventTypeWarning, specErr.Reason, "Reconcile", "%s", specErr.Message)
		return phaseResult{stop: true, result: ctrl.Result{RequeueAfter: specErrorRequeue}}
	}
	setCondition(osc, conditionType, metav1.ConditionFalse, infrav1.OpenStackErrorReason, err.Error())
	return phaseResult{stop: true, err: err}
}

func (r *OpenStackClusterReconciler) reconcileNetwork(ctx context.Context, net *networking.Service, cluster *clusterv1.Cluster, osc *infrav1.OpenStackCluster) phaseResult {
	name := networking.ResourceName(cluster.Namespace, cluster.Name)
	// The external network is immutable in the spec: once found, it is not looked up again.
	external := osc.Status.ExternalNetwork
	if external == nil {
		var err error
		if external, err = net.ResolveExternalNetwork(ctx, &osc.Spec); err != nil {
			return r.fail(osc, infrav1.NetworkReadyCondition, err)
		}
		osc.Status.ExternalNetwork = external
	}
	network, err := net.ReconcileNetwork(ctx, name, &osc.Spec, osc.Status.Network)
	if err != nil {
		return r.fail(osc, infrav1.NetworkReadyCondition, err)
	}
	osc.Status.Network = network
	return phaseResult{}
}

// reconcileRouter connects the network to the external network; NetworkReady is set once both
// are done.
func (r *OpenStackClusterReconciler) reconcileRouter(ctx context.Context, net *networking.Service, cluster *clusterv1.Cluster, osc *infrav1.OpenStackCluster) phaseResult {
	name := networking.ResourceName(cluster.Namespace, cluster.Name)
	router, err := net.ReconcileRouter(ctx, name, &osc.Spec, osc.Status.Network, osc.Status.ExternalNetwork)
	if err != nil {
		return r.fail(osc, infrav1.NetworkReadyCondition, err)
	}
	osc.Status.Router = router
	setCondition(osc, infrav1.NetworkReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason, "")
	return phaseResult{}
}

func (r *OpenStackClusterReconciler) reconcileSecurityGroups(ctx context.Context, net *networking.Service, cluster *clusterv1.Cluster, osc *infrav1.OpenStackCluster) phaseResult {
	if osc.Spec.ManagedSecurityGroups == nil {
		setCondition(osc, infrav1.SecurityGroupsReadyCondition, metav1.ConditionTrue, infrav1.NotRequiredReason, "spec.managedSecurityGroups is not set")
		return phaseResult{}
	}
	cp, worker, err := net.ReconcileSecurityGroups(ctx, cluster.Namespace, cluster.Name, &osc.Spec,
		osc.Status.ControlPlaneSecurityGroup, osc.Status.WorkerSecurityGroup)
	if err != nil {
		return r.fail(osc, infrav1.SecurityGroupsReadyCondition, err)
	}
	osc.Status.ControlPlaneSecurityGroup, osc.Status.WorkerSecurityGroup = cp, worker
	setCondition(osc, infrav1.SecurityGroupsReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason, "")
	return phaseResult{}
}

func (r *OpenStackClusterReconciler) reconcileFailureDomains(ctx context.Context, clients *scope.Clients, osc *infrav1.OpenStackCluster) phaseResult {
	fds, err := compute.FailureDomains(ctx, clients.Compute, osc.Spec.ControlPlaneAvailabilityZones)
	if err != nil {
		return r.fail(osc, infrav1.FailureDomainsReadyCondition, err)
	}
	osc.Status.FailureDomains = fds
	if zones := uncoveredControlPlaneZones(osc); len(zones) > 0 {
		// The check the other cloud's installer makes between load balancer zones and node zones:
		// KCP spreads control plane machines over every control plane failure domain.
		message := fmt.Sprintf("control plane failure domains %s have no API server load balancer and allowCrossAZLoadBalancerMembers is off: "+
			"control plane machines placed there get no API server traffic; map them in spec.apiServerLoadBalancer.availabilityZoneSubnets, "+
			"set allowCrossAZLoadBalancerMembers, or leave them out of spec.controlPlaneAvailabilityZones", strings.Join(zones, ", "))
		if before := conditions.Get(osc, infrav1.FailureDomainsReadyCondition); before == nil || before.Message != message {
			r.Recorder.Eventf(osc, nil, corev1.EventTypeWarning, infrav1.ControlPlaneFailureDomainWithoutLoadBalancerReason, "Reconcile", "%s", message)
		}
		setCondition(osc, infrav1.FailureDomainsReadyCondition, metav1.ConditionFalse, infrav1.ControlPlaneFailureDomainWithoutLoadBalancerReason, message)
		return phaseResult{}
	}
	setCondition(osc, infrav1.FailureDomainsReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason, "")
	return phaseResult{}
}

// uncoveredControlPlaneZones are the control plane failure domains whose machines would be a
// member of no API server load balancer: per-AZ load balancers, cross-AZ members off, no zone
// mapping for the failure domain and no single load balancer left to fall back on.
func uncoveredControlPlaneZones(osc *infrav1.OpenStackCluster) []string {
	lb := osc.Spec.APIServerLoadBalancer
	if !osc.Spec.APIServerLoadBalancerEnabled() || len(lb.AvailabilityZoneSubnets) == 0 || ptr.Deref(lb.AllowCrossAZLoadBalancerMembers, false) {
		return nil
	}
	if single := osc.Status.APIServerLoadBalancer; single != nil && single.ID != "" && single.AvailabilityZone == "" {
		return nil
	}
	var out []string
	for _, fd := range osc.Status.FailureDomains {
		if ptr.Deref(fd.ControlPlane, false) && !zoneMapped(osc, fd.Name) {
			out = append(out, fd.Name)
		}
	}
	return out
}

// reconcileEndpoint fills spec.controlPlaneEndpoint when the API server has no load balancer: the
// floating IP (the user's or one allocated here), or the fixed IP when floating IPs are off. A
// host the user set is never replaced.
func (r *OpenStackClusterReconciler) reconcileEndpoint(ctx context.Context, net *networking.Service, cluster *clusterv1.Cluster, osc *infrav1.OpenStackCluster, lbReady int) phaseResult {
	spec := &osc.Spec
	port := int32(spec.EffectiveAPIServerPort())
	if spec.ControlPlaneEndpoint != nil && spec.ControlPlaneEndpoint.Host != "" {
		if spec.ControlPlaneEndpoint.Port == 0 {
			spec.ControlPlaneEndpoint.Port = port
		}
		setCondition(osc, infrav1.APIEndpointReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason, "")
		return phaseResult{}
	}
	if spec.APIServerLoadBalancerEnabled() {
		// The single load balancer's address: its floating IP, or its VIP without one. (With
		// availabilityZoneSubnets the host is required and never derived.)
		if lb := osc.Status.APIServerLoadBalancer; lbReady > 0 && lb != nil && lb.IP != "" {
			spec.ControlPlaneEndpoint = &clusterv1.APIEndpoint{Host: lb.IP, Port: port}
			setCondition(osc, infrav1.APIEndpointReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason, "")
			return phaseResult{}
		}
		setCondition(osc, infrav1.APIEndpointReadyCondition, metav1.ConditionFalse, infrav1.WaitingForLoadBalancerReason,
			"the endpoint is the API server load balancer's address, known once it is provisioned")
		return phaseResult{}
	}

	var host string
	switch {
	case !ptr.Deref(spec.DisableAPIServerFloatingIP, false) && osc.Status.ExternalNetwork != nil:
		address, err := net.ReconcileAPIServerFloatingIP(ctx, networking.APIServerFloatingIPDescription(cluster.Namespace, cluster.Name),
			osc.Status.ExternalNetwork.ID, spec.APIServerFloatingIP)
		if err != nil {
			return r.fail(osc, infrav1.APIEndpointReadyCondition, err)
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
	setCondition(osc, infrav1.APIEndpointReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason, "")
	return phaseResult{}
}

// reconcileDelete removes what the controller created, in reverse order, and then the finalizer.
// Resources the user brought (spec.network, spec.router, apiServerFloatingIP) are left alone.
func (r *OpenStackClusterReconciler) reconcileDelete(ctx context.Context, cluster *clusterv1.Cluster, osc *infrav1.OpenStackCluster) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(osc, infrav1.ClusterFinalizer) {
		return ctrl.Result{}, nil
	}
	for _, t := range clusterConditions {
		setCondition(osc, t, metav1.ConditionFalse, infrav1.DeletingReason, "")
	}
	clients, err := r.ScopeFactory.NewClients(ctx, osc.Namespace, osc.Spec.IdentityRef)
	if err != nil {
		if errors.Is(err, scope.ErrNoIdentityRef) && osc.Status.ExternalNetwork == nil && osc.Status.Network == nil {
			// Without credentials and with nothing recorded, the controller never reached
			// OpenStack: there is nothing to delete.
			controllerutil.RemoveFinalizer(osc, infrav1.ClusterFinalizer)
			return ctrl.Result{}, nil
		}
		setCondition(osc, infrav1.NetworkReadyCondition, metav1.ConditionFalse, infrav1.IdentityErrorReason, err.Error())
		return ctrl.Result{RequeueAfter: specErrorRequeue}, nil
	}
	net := networking.NewService(clients.Network, r.Recorder, osc)

	if err := net.DeleteAPIServerFloatingIP(ctx, networking.APIServerFloatingIPDescription(cluster.Namespace, cluster.Name)); err != nil {
		return ctrl.Result{}, err
	}
	// The load balancers go first when their VIP ports may be on the cluster network. While
	// Octavia deletes them, what does not depend on them goes too: the security groups always
	// (Octavia's ports do not use them), the router and network when every VIP is elsewhere.
	lbs := r.loadBalancers(clients, osc)
	done, err := lbs.Delete(ctx, clusterRemoval(cluster, osc))
	if err != nil {
		return ctrl.Result{}, err
	}
	if !done {
		setCondition(osc, infrav1.APIServerLoadBalancersReadyCondition, metav1.ConditionFalse, infrav1.DeletingReason,
			"waiting for Octavia to delete the API server load balancers")
		if _, err := r.deleteNetworking(ctx, net, cluster, osc, vipsOffClusterNetwork(osc)); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: deleteRequeue}, nil
	}
	osc.Status.APIServerLoadBalancer, osc.Status.APIServerLoadBalancers = nil, nil
	loadbalancer.ForgetCluster(cluster.Namespace, cluster.Name)
	if result, err := r.deleteNetworking(ctx, net, cluster, osc, true); err != nil || !result.IsZero() {
		return result, err
	}
	controllerutil.RemoveFinalizer(osc, infrav1.ClusterFinalizer)
	return ctrl.Result{}, nil
}

// deleteNetworking deletes the security groups and, with withNetwork, the router and network the
// controller created. A zero result means all of it is gone. What the controller created is
// found by name, not by status, so that a cluster whose status was lost still leaves nothing
// behind.
func (r *OpenStackClusterReconciler) deleteNetworking(ctx context.Context, net *networking.Service, cluster *clusterv1.Cluster, osc *infrav1.OpenStackCluster, withNetwork bool) (ctrl.Result, error) {
	waiting := func(err error, condition string) (ctrl.Result, error) {
		if errors.Is(err, networking.ErrWaitingForPorts) {
			setCondition(osc, condition, metav1.ConditionFalse, infrav1.WaitingForPortsReason, "waiting for servers and load balancers to leave the network")
			return ctrl.Result{RequeueAfter: waitRequeue}, nil
		}
		return ctrl.Result{}, err
	}
	if osc.Spec.ManagedSecurityGroups != nil && (osc.Status.ControlPlaneSecurityGroup != nil || osc.Status.WorkerSecurityGroup != nil || withNetwork) {
		if err := net.DeleteManagedSecurityGroups(ctx, cluster.Namespace, cluster.Name); err != nil {
			return waiting(err, infrav1.SecurityGroupsReadyCondition)
		}
	}
	osc.Status.ControlPlaneSecurityGroup, osc.Status.WorkerSecurityGroup = nil, nil
	if !withNetwork {
		return ctrl.Result{}, nil
	}
	if len(osc.Spec.ManagedSubnets) > 0 {
		name := networking.ResourceName(cluster.Namespace, cluster.Name)
		if err := net.DeleteManagedRouter(ctx, name, &osc.Spec); err != nil {
			return ctrl.Result{}, err
		}
		osc.Status.Router = nil
		if err := net.DeleteManagedNetwork(ctx, name); err != nil {
			return waiting(err, infrav1.NetworkReadyCondition)
		}
	}
	osc.Status.Network = nil
	return ctrl.Result{}, nil
}

// vipsOffClusterNetwork says whether every API server load balancer the status records has its
// VIP on a network other than the cluster network, so that the network may be deleted while
// Octavia deletes them. When in doubt it says no.
func vipsOffClusterNetwork(osc *infrav1.OpenStackCluster) bool {
	if osc.Status.Network == nil || len(osc.Status.APIServerLoadBalancers) == 0 || osc.Spec.APIServerFloatingIP != nil {
		return false
	}
	entries := append([]infrav1.LoadBalancer{}, osc.Status.APIServerLoadBalancers...)
	if osc.Status.APIServerLoadBalancer != nil {
		entries = append(entries, *osc.Status.APIServerLoadBalancer)
	}
	clusterSubnet := func(id string) bool {
		return slices.ContainsFunc(osc.Status.Network.Subnets, func(s infrav1.Subnet) bool { return s.ID == id })
	}
	for _, e := range entries {
		n := e.LoadBalancerNetwork
		if n == nil || n.ID == "" || n.ID == osc.Status.Network.ID || len(n.Subnets) == 0 {
			return false
		}
		// A load balancer adopted during a migration keeps its VIP where it was, which the
		// status records as its subnet.
		if slices.ContainsFunc(n.Subnets, func(s infrav1.Subnet) bool { return clusterSubnet(s.ID) }) {
			return false
		}
	}
	return true
}
