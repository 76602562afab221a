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
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/annotations"
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
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
)

// OpenStackClusterReconciler reconciles OpenStackClusters: the network, security groups, failure
// domains and control plane endpoint of a cluster.
type OpenStackClusterReconciler struct {
	Client client.Client
	// APIReader reads from the API server, not the cache: only to tell whether the cache is
	// behind the controller's own last write. Client is used when nil.
	APIReader        client.Reader
	Recorder         events.EventRecorder
	ScopeFactory     scope.Factory
	WatchFilterValue string

	// LoadBalancerMemory keeps what was learnt about each cloud's Octavia and the ERROR
	// observations of load balancers across reconciles; one is made when nil.
	LoadBalancerMemory *loadbalancer.Memory
	memoryOnce         sync.Once

	writes ownWrites
	checks fullChecks
	pacer  pacer
}

// clusterScope is what one reconcile of an OpenStackCluster works with.
type clusterScope struct {
	cluster *clusterv1.Cluster
	osc     *infrav1.OpenStackCluster
	clients *scope.Clients
	report  *report.Recorder
	net     *networking.Service
}

// loadBalancers is the load balancer service of one reconcile, sharing the reconciler's memory.
func (r *OpenStackClusterReconciler) loadBalancers(c *clusterScope) *loadbalancer.Service {
	r.memoryOnce.Do(func() {
		if r.LoadBalancerMemory == nil {
			r.LoadBalancerMemory = loadbalancer.NewMemory()
		}
	})
	return loadbalancer.NewService(c.clients.LoadBalancer, c.clients.Network, c.report, r.LoadBalancerMemory, c.clients.CloudKey)
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
func (r *OpenStackClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, reterr error) {
	log := ctrl.LoggerFrom(ctx)
	defer func() { res, reterr = r.pacer.pace(log, req.NamespacedName, res, reterr) }()
	osc := &infrav1.OpenStackCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, osc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}

	if annotations.IsExternallyManaged(osc) {
		// Cluster API's contract: another party runs this cluster's infrastructure (upstream CAPO
		// skips such clusters too).
		log.V(1).Info("Not reconciling: the OpenStackCluster is managed externally", "annotation", clusterv1.ManagedByAnnotation)
		return ctrl.Result{}, nil
	}
	if behind, err := r.writes.behind(ctx, readerOr(r.APIReader, r.Client), osc); err != nil || behind {
		log.V(1).Info("Waiting for the cache to show this controller's last write")
		return ctrl.Result{RequeueAfter: cacheRequeue}, err
	}

	owned := append([]string{infrav1.ReadyCondition, clusterv1.PausedCondition}, clusterConditions...)
	if wrote, err := r.writes.writeWithoutForeignConditions(ctx, r.Client, osc, owned); err != nil || wrote {
		return ctrl.Result{RequeueAfter: cacheRequeue}, err
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
		logWaits(log, osc, clusterConditions)
		recordWait("openstackcluster", osc, clusterConditions, res)
		if err := helper.Patch(ctx, osc, patch.WithOwnedConditions{Conditions: owned}); err != nil {
			reterr = kerrors.NewAggregate([]error{reterr, err})
		} else if controllerutil.ContainsFinalizer(osc, infrav1.ClusterFinalizer) {
			r.writes.wrote(osc)
		}
	}()

	c := &clusterScope{cluster: cluster, osc: osc, report: report.NewRecorder(r.Recorder, osc, log)}
	if !osc.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, c)
	}
	if controllerutil.AddFinalizer(osc, infrav1.ClusterFinalizer) {
		// The patch adds the finalizer; its update event brings us back.
		return ctrl.Result{}, nil
	}
	return r.reconcileNormal(ctx, c)
}

func (r *OpenStackClusterReconciler) reconcileNormal(ctx context.Context, c *clusterScope) (ctrl.Result, error) {
	osc := c.osc
	initClusterConditions(osc)
	clients, err := r.ScopeFactory.NewClients(ctx, osc.Namespace, osc.Spec.IdentityRef)
	if err != nil {
		// The Secret is not watched: look again in a while.
		return setIdentityError(c, err), faultOnly(err)
	}
	c.clients = clients
	c.net = networking.NewService(clients.Network, c.report)
	c.net.Known(knownIDs(&osc.Status)...)

	var (
		result  ctrl.Result
		errs    []error
		lbReady int
	)
	// The network and its subnets come first: the load balancers (their VIP subnet), the router
	// and the security groups need them. Then the load balancers, the router, the security groups
	// and the failure domains are reconciled at once, each on its own copy of the object (see
	// concurrently), so that Octavia starts on a new load balancer without waiting for Neutron's
	// router and security groups, and a reconcile takes as long as its slowest phase. The router
	// comes before the load balancers only when allowedCIDRs must include its address and it is
	// not known yet, so that the listeners are not created with a list that changes a moment later.
	// While Octavia builds a load balancer, the polls read the load balancers alone (see
	// fullChecks.onlyLoadBalancers).
	start := time.Now()
	full := !r.checks.onlyLoadBalancers(osc, start)
	var stages [][]ownedPhase
	if full {
		routerFirst := osc.Status.Router == nil && osc.Spec.APIServerLoadBalancerEnabled() && len(osc.Spec.APIServerLoadBalancer.AllowedCIDRs) > 0
		stages = [][]ownedPhase{{alone(func(c *clusterScope) phaseResult { return r.reconcileNetwork(ctx, c) })}}
		together := []ownedPhase{r.loadBalancersPhase(ctx, &lbReady), r.securityGroupsPhase(ctx), r.failureDomainsPhase(ctx)}
		if routerFirst {
			stages = append(stages, []ownedPhase{r.routerPhase(ctx)})
		} else {
			together = append(together, r.routerPhase(ctx))
		}
		stages = append(stages, together)
	} else {
		stages = [][]ownedPhase{{r.loadBalancersPhase(ctx, &lbReady)}}
	}
	stages = append(stages,
		[]ownedPhase{alone(func(c *clusterScope) phaseResult { return r.reconcileEndpoint(ctx, c, lbReady) })},
		[]ownedPhase{alone(func(c *clusterScope) phaseResult { return r.reconcileDNS(ctx, c) })},
	)
	for _, stage := range stages {
		stop := false
		for _, pr := range c.concurrently(stage) {
			result = lowestRequeue(result, pr.result)
			if pr.err != nil {
				errs = append(errs, pr.err)
			}
			stop = stop || pr.stop
		}
		if stop {
			return result, kerrors.NewAggregate(errs)
		}
	}
	if full {
		r.checks.checked(osc, start)
	}
	setProvisioned(osc, lbReady)
	return result, kerrors.NewAggregate(errs)
}

// fail records an error on a condition: a problem with the spec is reported and checked again
// later; anything else is returned so that controller-runtime retries with backoff.
func (c *clusterScope) fail(conditionType string, err error) phaseResult {
	if specErr, ok := report.AsSpecError(err); ok {
		return phaseResult{stop: true, result: reportProblem(c.report, c.osc, conditionType, specErr.Reason, specErr.Message)}
	}
	setCondition(c.osc, conditionType, metav1.ConditionFalse, infrav1.OpenStackErrorReason, failureMessage(err))
	return phaseResult{stop: true, err: err}
}
