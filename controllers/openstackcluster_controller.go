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
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/outcome"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/takeover"
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
	// DNSSuffixes are the DNS suffixes under which clusters may publish their endpoint's records
	// (the operator's --dns-suffixes); none allows no publishing.
	DNSSuffixes []string

	// LoadBalancerMemory keeps what was learnt about each cloud's Octavia and the ERROR
	// observations of load balancers across reconciles; one is made when nil.
	LoadBalancerMemory *loadbalancer.Memory
	memoryOnce         sync.Once
	// Takeover is the operator's record of the clusters taken over from upstream CAPO; nil
	// records none.
	Takeover *takeover.Record

	shared shared
	checks fullChecks
}

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackclusters,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackclusters/status;openstackclusters/finalizers,verbs=get;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;clusters/status,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackclusteridentities,verbs=get
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get

// SetupWithManager registers the reconciler. It watches OpenStackClusters and their Clusters (for
// pause and unpause).
func (r *OpenStackClusterReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	log := ctrl.LoggerFrom(ctx).WithName("openstackcluster")
	r.shared.share.workers = options.MaxConcurrentReconciles
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
func (r *OpenStackClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcileObject(ctx, &r.shared, r.Client, r.APIReader, req, &infrav1.OpenStackCluster{}, kind[*infrav1.OpenStackCluster]{
		name:       "openstackcluster",
		finalizer:  infrav1.ClusterFinalizer,
		ownedTypes: ownedClusterConditions,
		skip: func(osc *infrav1.OpenStackCluster) string {
			if annotations.IsExternallyManaged(osc) {
				// Cluster API's contract: another party runs this cluster's infrastructure
				// (upstream CAPO skips such clusters too).
				return "the OpenStackCluster is managed externally (" + clusterv1.ManagedByAnnotation + ")"
			}
			return ""
		},
		begin: r.begin,
	})
}

// begin finds the OpenStackCluster's Cluster.
func (r *OpenStackClusterReconciler) begin(ctx context.Context, osc *infrav1.OpenStackCluster) (context.Context, objectReconcile, *clusterv1.Cluster, error) {
	log := ctrl.LoggerFrom(ctx)
	cluster, err := util.GetOwnerCluster(ctx, r.Client, osc.ObjectMeta)
	if (apierrors.IsNotFound(err) || (err == nil && cluster == nil)) && !osc.DeletionTimestamp.IsZero() {
		// The Cluster was force-deleted first: the deletion goes on under the name its owner
		// reference or its label gives, after which the cloud resources are named.
		if name := ownerClusterName(osc); name != "" {
			cluster, err = &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: osc.Namespace, Name: name}}, nil
			log.Info("The owner Cluster is gone: deleting under its name", "Cluster", name)
		}
	}
	if err != nil {
		return ctx, nil, nil, fmt.Errorf("getting the owner Cluster: %w", err)
	}
	if cluster == nil {
		log.Info("Waiting for the Cluster controller to set the owner reference")
		return ctx, nil, nil, nil
	}
	log = log.WithValues("Cluster", clusterRef(cluster))
	ctx = ctrl.LoggerInto(ctx, log)
	return ctx, &clusterReconcile{r: r, cluster: cluster, osc: osc, report: report.NewRecorder(r.Recorder, osc, log),
		takeover: r.Takeover.Allows(ctx, "OpenStackCluster", osc)}, cluster, nil
}

// ownerClusterName is the name of the Cluster an OpenStackCluster belongs to, from its owner
// reference, else its cluster-name label; "" when neither says.
func ownerClusterName(osc *infrav1.OpenStackCluster) string {
	for _, ref := range osc.OwnerReferences {
		if ref.Kind == "Cluster" && strings.HasPrefix(ref.APIVersion, clusterv1.GroupVersion.Group+"/") {
			return ref.Name
		}
	}
	return osc.Labels[clusterv1.ClusterNameLabel]
}

// clusterReconcile is one reconcile of an OpenStackCluster: what it works with, and what its
// phases found, which updateStatus turns into the status.
type clusterReconcile struct {
	r       *OpenStackClusterReconciler
	cluster *clusterv1.Cluster
	osc     *infrav1.OpenStackCluster
	report  *report.Recorder
	clients *scope.Clients
	net     *networking.Service
	found   clusterFindings
	// takeover says the operator recorded the takeover of this cluster from upstream CAPO.
	takeover bool
}

func (c *clusterReconcile) conditionTypes() []string { return ownedClusterConditions }

// loadBalancers is the load balancer service of one reconcile, sharing the reconciler's memory.
func (c *clusterReconcile) loadBalancers() *loadbalancer.Service {
	r := c.r
	r.memoryOnce.Do(func() {
		if r.LoadBalancerMemory == nil {
			r.LoadBalancerMemory = loadbalancer.NewMemory()
		}
	})
	return loadbalancer.NewService(c.clients.LoadBalancer, c.clients.Network, c.report, r.LoadBalancerMemory, c.clients.CloudKey, c.owner(), c.cluster.Name)
}

// owner is the cluster as the mark on its resources names it (ownership.Owner), in the
// credential's project.
func (c *clusterReconcile) owner() ownership.Owner {
	return clusterOwner(c.osc, c.clients.ProjectID, c.takeover)
}

// clusterOwner is osc as the mark on its resources names it; takeover says the operator recorded
// its takeover from upstream CAPO.
func clusterOwner(osc *infrav1.OpenStackCluster, projectID string, takeover bool) ownership.Owner {
	return ownership.Owner{Kind: "OpenStackCluster", Namespace: osc.Namespace, Name: osc.Name, Created: osc.CreationTimestamp.Time, ProjectID: projectID, Takeover: takeover}
}

// loadBalancersApart says whether the load balancers need nothing of the cluster network, so that
// their phase may run beside the network's: each VIP is on the load balancer network
// (spec.apiServerLoadBalancer.network, with or without availabilityZoneSubnets), and no
// allowedCIDRs must admit the cluster's subnets and router. Members are the machine
// controller's, which reads the recorded status.
func (c *clusterReconcile) loadBalancersApart() bool {
	lb := c.osc.Spec.APIServerLoadBalancer
	return c.osc.Spec.APIServerLoadBalancerEnabled() && (lb.Network != nil || len(lb.AvailabilityZoneSubnets) > 0) && len(lb.AllowedCIDRs) == 0
}

// connect builds the OpenStack clients from the cluster's identity.
func (c *clusterReconcile) connect(ctx context.Context) error {
	// The share is taken before authenticating: a Keystone that never answers holds the worker.
	if err := c.r.shared.share.admit(ctx, c.osc.Namespace); err != nil {
		return err
	}
	clients, err := c.r.ScopeFactory.NewClients(ctx, c.osc.Namespace, c.osc.Spec.IdentityRef)
	if err != nil {
		return err
	}
	c.clients = clients
	warnIdentity(c.report, clients)
	c.net = networking.NewService(clients.Network, c.report, c.owner())
	c.net.Known(knownIDs(&c.osc.Status)...)
	return nil
}

// normal runs the phases in two lanes, so that a reconcile takes as long as its slowest lane and
// Octavia starts on a new load balancer as early as it may:
//   - first, in every full reconcile, the external network, and before the cluster's first
//     resource the check of the spec's references (prepareNetwork: reads only);
//   - the load balancer lane: when the load balancers need nothing of the cluster network
//     (loadBalancersApart: each zone's VIP on the operator's load balancer network, no
//     allowedCIDRs), they are reconciled from the start, beside the network;
//   - the network lane: the cluster network and its subnets, then at once the router, the
//     security groups, the failure domains and (when they need the network) the load
//     balancers, each reading what the network phase found and writing only its own result.
//
// The router comes before the load balancers only when allowedCIDRs must include its address
// and it is not known yet, so that the listeners are not created with a list that changes a
// moment later. While Octavia builds a load balancer, the polls read the load balancers alone
// (fullChecks.onlyLoadBalancers). A panic in a phase ends that phase in an error, never the
// manager (outcome.Run).
func (c *clusterReconcile) normal(ctx context.Context) (ctrl.Result, error) {
	f := &c.found
	f.normal = true
	if err := c.connect(ctx); err != nil {
		if authBusy(err) {
			return ctrl.Result{RequeueAfter: requeue.AuthInProgress}, nil
		}
		// The Secret is not watched: look again in a while.
		f.identity = err
		return ctrl.Result{RequeueAfter: requeue.Config}, faultOnly(err)
	}
	start := time.Now()
	osc := c.osc
	full := !c.r.checks.onlyLoadBalancers(osc, start)
	var done outcomes
	if full {
		f.network = c.prepareNetwork(ctx)
		if done = append(done, f.network.Outcome); done.stopped() {
			return done.result()
		}
	}
	external := f.externalNetwork(osc)
	var wg sync.WaitGroup
	// However the reconcile ends (a panic in the network lane included), the load balancer lane
	// is back before the status is written from what it found.
	defer wg.Wait()
	goLoadBalancers := func(network *infrav1.NetworkStatusWithSubnets, router *infrav1.Router, machineSubnets []infrav1.ZoneMachineSubnetStatus) {
		wg.Go(func() {
			if err := outcome.Run("the load balancer phase", func() { f.lbs = c.reconcileLoadBalancers(ctx, network, external, router, machineSubnets) }); err != nil {
				f.lbs = &zones.Result{Err: err}
			}
		})
	}
	// The load balancer lane apart reads only what the status recorded before this reconcile:
	// the network lane writes f.network meanwhile.
	apart := c.loadBalancersApart()
	if apart {
		goLoadBalancers(osc.Status.Network, osc.Status.Router, osc.Status.AvailabilityZoneMachineSubnets)
	}
	// stop ends the reconcile when a phase stopped it, once the load balancer lane is back.
	stop := func() bool {
		if !done.stopped() {
			return false
		}
		wg.Wait()
		if apart {
			done = append(done, lbOutcome(f.lbs))
		}
		return true
	}
	if full {
		c.reconcileNetwork(ctx, f.network)
		if done = append(done, f.network.Outcome); stop() {
			return done.result()
		}
	}
	network := f.clusterNetwork(osc)
	routerFirst := full && osc.Status.Router == nil && osc.Spec.APIServerLoadBalancerEnabled() && len(osc.Spec.APIServerLoadBalancer.AllowedCIDRs) > 0
	if routerFirst {
		f.router = c.reconcileRouter(ctx, network, external)
		if done = append(done, f.router.Outcome); stop() {
			return done.result()
		}
	}
	// The phases of this stage read what is above and write only their own part of f.
	if !apart {
		goLoadBalancers(network, f.routerOf(osc), f.machineSubnets(osc))
	}
	if full {
		wg.Go(func() {
			if err := outcome.Run("the security group phase", func() { f.groups = c.reconcileSecurityGroups(ctx, network) }); err != nil {
				f.groups = &groupsFound{managed: true, Outcome: outcome.Failed(err)}
			}
		})
		wg.Go(func() {
			if err := outcome.Run("the failure domain phase", func() { f.domains = c.reconcileFailureDomains(ctx) }); err != nil {
				f.domains = &domainsFound{Outcome: outcome.Failed(err)}
			}
		})
		if !routerFirst {
			wg.Go(func() {
				if err := outcome.Run("the router phase", func() { f.router = c.reconcileRouter(ctx, network, external) }); err != nil {
					f.router = &routerFound{Outcome: outcome.Failed(err)}
				}
			})
		}
	}
	wg.Wait()
	done = append(done, lbOutcome(f.lbs))
	if full {
		done = append(done, f.groups.Outcome, f.domains.Outcome)
		if !routerFirst {
			done = append(done, f.router.Outcome)
		}
	}
	if done.stopped() {
		return done.result()
	}
	if full && (osc.Spec.Bastion != nil || osc.Status.Bastion != nil) {
		// The bastion does not hold the cluster back: its outcome never stops the reconcile.
		if err := outcome.Run("the bastion phase", func() { f.bastion = c.reconcileBastion(ctx, network, external, f.groups) }); err != nil {
			f.bastion = &bastionFound{Outcome: outcome.Failed(err), status: osc.Status.Bastion}
		}
		o := f.bastion.Outcome
		o.Stop = false
		done = append(done, o)
	}
	f.endpoint = c.reconcileEndpoint(ctx, f.lbs, external)
	if done = append(done, f.endpoint.Outcome); done.stopped() {
		return done.result()
	}
	f.dns = c.reconcileDNS(ctx, f.lbs)
	if done = append(done, f.dns.Outcome); done.stopped() {
		return done.result()
	}
	f.complete = true
	if full {
		f.checkedSince = start
	}
	return done.result()
}
