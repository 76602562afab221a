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
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/compute"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/outcome"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/takeover"
)

// OpenStackMachineReconciler reconciles OpenStackMachines: one Nova server with its ports, and,
// for control plane machines, its membership of the API server load balancers.
type OpenStackMachineReconciler struct {
	Client client.Client
	// APIReader reads from the API server, not the cache: the bootstrap data Secrets (so that the
	// manager neither lists nor watches Secrets), and the machine when the cache may be behind the
	// controller's own last write. Client is used when nil.
	APIReader        client.Reader
	Recorder         events.EventRecorder
	ScopeFactory     scope.Factory
	WatchFilterValue string
	// Takeover is the operator's record of the machines and clusters taken over from upstream
	// CAPO; nil records none.
	Takeover *takeover.Record

	shared shared
}

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackmachines,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackmachines/status;openstackmachines/finalizers,verbs=get;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines;machines/status,verbs=get;list;watch
// +kubebuilder:rbac:groups=ipam.cluster.x-k8s.io,resources=ipaddressclaims,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=ipam.cluster.x-k8s.io,resources=ipaddresses,verbs=get;list;watch

// SetupWithManager registers the reconciler. Besides OpenStackMachines it watches their
// Machines (bootstrap data, deletion), Clusters (infrastructure provisioned, pause) and
// OpenStackClusters: a change of the API server load balancers or of the membership policy
// re-reconciles every control plane machine of the cluster.
func (r *OpenStackMachineReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	log := ctrl.LoggerFrom(ctx).WithName("openstackmachine")
	r.shared.share.workers = options.MaxConcurrentReconciles
	clusterToMachines, err := util.ClusterToTypedObjectsMapper(mgr.GetClient(), &infrav1.OpenStackMachineList{}, mgr.GetScheme())
	if err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&infrav1.OpenStackMachine{}).
		WithOptions(options).
		WithEventFilter(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue)).
		Watches(&clusterv1.Machine{},
			handler.EnqueueRequestsFromMapFunc(util.MachineToInfrastructureMapFunc(infrav1.GroupVersion.WithKind("OpenStackMachine"))),
		).
		Watches(&clusterv1.Cluster{},
			handler.EnqueueRequestsFromMapFunc(clusterToMachines),
			builder.WithPredicates(predicates.ClusterPausedTransitionsOrInfrastructureProvisioned(mgr.GetScheme(), log)),
		).
		Watches(&infrav1.OpenStackCluster{},
			handler.EnqueueRequestsFromMapFunc(r.controlPlaneMachinesOf),
			builder.WithPredicates(membershipInputsChanged()),
		).
		Watches(&infrav1.OpenStackMachine{},
			handler.EnqueueRequestsFromMapFunc(r.controlPlaneMachinesOfDeleted),
			builder.WithPredicates(deletionsOnly()),
		).
		// The claim of a machine's floating IP from a pool: its answer brings the machine back.
		Owns(&ipamv1.IPAddressClaim{}).
		Complete(r)
}

// machineConditionTypes are every condition type this controller writes on some machine:
// upstream's left no other.
var machineConditionTypes = []string{infrav1.InstanceReadyCondition, infrav1.APIServerIngressReadyCondition, infrav1.FloatingAddressFromPoolReadyCondition}

// Reconcile brings one OpenStackMachine's server, ports and load balancer membership to what
// its spec and its cluster ask for.
func (r *OpenStackMachineReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcileObject(ctx, &r.shared, r.Client, r.APIReader, req, &infrav1.OpenStackMachine{}, kind[*infrav1.OpenStackMachine]{
		name:       "openstackmachine",
		finalizer:  infrav1.MachineFinalizer,
		ownedTypes: machineConditionTypes,
		begin:      r.begin,
	})
}

// begin finds the OpenStackMachine's Machine, its Cluster and the OpenStackCluster, which may be
// missing: not created yet, or, during deletion, already gone.
func (r *OpenStackMachineReconciler) begin(ctx context.Context, osm *infrav1.OpenStackMachine) (context.Context, objectReconcile, *clusterv1.Cluster, error) {
	log := ctrl.LoggerFrom(ctx)
	machine, err := util.GetOwnerMachine(ctx, r.Client, osm.ObjectMeta)
	if err != nil {
		return ctx, nil, nil, fmt.Errorf("getting the owner Machine: %w", err)
	}
	if machine == nil {
		log.Info("Waiting for the Machine controller to set the owner reference")
		return ctx, nil, nil, nil
	}
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: machine.Namespace, Name: machine.Spec.ClusterName}, cluster); err != nil {
		return ctx, nil, nil, fmt.Errorf("getting Cluster %s of Machine %s: %w", machine.Spec.ClusterName, machine.Name, err)
	}
	log = log.WithValues("Cluster", clusterRef(cluster), "Machine", machine.Name)
	ctx = ctrl.LoggerInto(ctx, log)
	var osc *infrav1.OpenStackCluster
	if name := cluster.Spec.InfrastructureRef.Name; name != "" {
		osc = &infrav1.OpenStackCluster{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: name}, osc); err != nil {
			if !apierrors.IsNotFound(err) {
				return ctx, nil, nil, fmt.Errorf("getting the OpenStackCluster: %w", err)
			}
			osc = nil
		}
	}
	m := &machineReconcile{r: r, osm: osm, machine: machine, cluster: cluster, osc: osc, controlPlane: util.IsControlPlaneMachine(machine),
		report: report.NewRecorder(r.Recorder, osm, log), takeover: r.Takeover.Allows(ctx, "OpenStackMachine", osm)}
	if osc != nil {
		m.clusterTakeover = r.Takeover.Allows(ctx, "OpenStackCluster", osc)
	}
	return ctx, m, cluster, nil
}

// machineReconcile is one reconcile of an OpenStackMachine: what it works with, and what its
// phases found, which updateStatus turns into the status.
type machineReconcile struct {
	r            *OpenStackMachineReconciler
	osm          *infrav1.OpenStackMachine
	machine      *clusterv1.Machine
	cluster      *clusterv1.Cluster
	osc          *infrav1.OpenStackCluster
	controlPlane bool
	report       *report.Recorder
	clients      *scope.Clients
	found        machineFindings
	// takeover and clusterTakeover say the operator recorded the takeover from upstream CAPO of
	// this machine and of its cluster.
	takeover, clusterTakeover bool
}

// conditionTypes are the conditions the controller owns on this machine, besides Ready and
// Paused: APIServerIngressReady only on control plane machines, FloatingAddressFromPoolReady only
// on machines with a floatingIPPoolRef.
func (m *machineReconcile) conditionTypes() []string {
	types := []string{infrav1.InstanceReadyCondition}
	if m.controlPlane {
		types = append(types, infrav1.APIServerIngressReadyCondition)
	}
	if m.osm.Spec.FloatingIPPoolRef != nil {
		types = append(types, infrav1.FloatingAddressFromPoolReadyCondition)
	}
	return types
}

func (m *machineReconcile) identityRef() *infrav1.OpenStackIdentityReference {
	if m.osm.Spec.IdentityRef != nil || m.osc == nil {
		return m.osm.Spec.IdentityRef
	}
	return m.osc.Spec.IdentityRef
}

// compute is the compute service of one reconcile, for the machine's server and ports.
func (m *machineReconcile) compute() *compute.Service {
	return compute.NewService(m.clients.Compute, m.clients.Image, m.clients.Volume, m.clients.Network, m.report, machineOwner(m.osm, m.clients.ProjectID, m.takeover))
}

// machineOwner is osm as the mark on its server and ports names it; takeover says the operator
// recorded its takeover from upstream CAPO.
func machineOwner(osm *infrav1.OpenStackMachine, projectID string, takeover bool) ownership.Owner {
	return ownership.Owner{Kind: "OpenStackMachine", Namespace: osm.Namespace, Name: osm.Name, Created: osm.CreationTimestamp.Time, ProjectID: projectID, Takeover: takeover}
}

// loadBalancers is the load balancer service of one reconcile, for the cluster's load balancers:
// membership keeps no memory.
func (m *machineReconcile) loadBalancers() *loadbalancer.Service {
	return loadbalancer.NewService(m.clients.LoadBalancer, m.clients.Network, m.report, nil, m.clients.CloudKey, clusterOwner(m.osc, m.clients.ProjectID, m.clusterTakeover), m.cluster.Name)
}

// connect builds the OpenStack clients from the machine's identity (or its cluster's).
func (m *machineReconcile) connect(ctx context.Context) error {
	// The share is taken before authenticating: a Keystone that never answers holds the worker.
	if err := m.r.shared.share.admit(ctx, m.osm.Namespace); err != nil {
		return err
	}
	clients, err := m.r.ScopeFactory.NewClients(ctx, m.osm.Namespace, m.identityRef())
	if err != nil {
		if !authBusy(err) {
			m.found.identity = err
		}
		return err
	}
	m.clients = clients
	warnIdentity(m.report, clients)
	return nil
}

// normal makes the machine's server (once the cluster's infrastructure is ready and the
// bootstrap data exists), then, for a control plane machine, its membership of the API server
// load balancers.
func (m *machineReconcile) normal(ctx context.Context) (ctrl.Result, error) {
	f := &m.found
	f.normal = true
	if !ptr.Deref(m.cluster.Status.Initialization.InfrastructureProvisioned, false) || m.osc == nil {
		f.waitingForCluster = true
		return ctrl.Result{}, nil
	}
	if err := m.connect(ctx); err != nil {
		if authBusy(err) {
			return ctrl.Result{RequeueAfter: requeue.AuthInProgress}, nil
		}
		return ctrl.Result{RequeueAfter: requeue.Config}, faultOnly(err)
	}
	f.instance = m.reconcileInstance(ctx)
	done := outcomes{f.instance.Outcome}
	if f.instance.server == nil {
		return done.result()
	}
	if m.osm.Spec.FloatingIPPoolRef != nil && f.instance.server.Status == "ACTIVE" {
		f.poolAddress = m.reconcilePoolAddress(ctx, f.instance.server)
		done = append(done, f.poolAddress.Outcome)
	}
	if !m.controlPlane {
		return done.result()
	}
	f.ingress = m.reconcileIngress(ctx, f.instance.server)
	return append(done, f.ingress.Outcome).result()
}

// reconcileInstance finds the machine's server, or creates it with its ports.
func (m *machineReconcile) reconcileInstance(ctx context.Context) *instanceFound {
	svc := m.compute()
	known := knownServerID(m.osm)
	server, gone, err := svc.Find(ctx, known, m.osm.Name, upstreamServer(m))
	switch {
	case err != nil:
		return &instanceFound{Outcome: outcome.Failed(err)}
	case gone:
		// The provider ID names the server: a new one would be a different machine.
		return &instanceFound{goneID: known}
	case server != nil:
		found := &instanceFound{server: server, Outcome: outcome.After(instanceRequeue(server))}
		if compute.NoValidHost(server) && m.osm.Spec.ServerGroup != nil {
			// Read to name the group and its policy in the condition; without it the message
			// is Nova's alone.
			found.group, _ = svc.ServerGroup(ctx, m.osm.Spec.ServerGroup)
		}
		return found
	case m.machine.Spec.Bootstrap.DataSecretName == nil:
		return &instanceFound{waitingForBootstrap: true}
	}
	spec, err := m.instanceSpec(ctx, svc, networking.NewService(m.clients.Network, m.report, ownership.Owner{}))
	if err == nil {
		server, err = svc.Create(ctx, spec)
	}
	if pending, ok := errors.AsType[*compute.VolumesPending](err); ok {
		return &instanceFound{volumesPending: pending, Outcome: outcome.After(requeue.Build)}
	}
	if waiting, ok := errors.AsType[*imageWaiting](err); ok {
		return &instanceFound{waitingForImage: waiting.message, Outcome: outcome.After(requeue.Image)}
	}
	if err != nil {
		found := &instanceFound{Outcome: outcome.Failed(err)}
		if se, refuted := report.AsSpecError(err); refuted && se.Reason != infrav1.ResourceOwnedElsewhereReason && se.Reason != infrav1.TakeoverNotRecordedReason {
			found.configurationError = true
		}
		return found
	}
	// Nova's answer to a create has no status: the server is building.
	server.Status = "BUILD"
	return &instanceFound{server: server, Outcome: outcome.After(instanceRequeue(server))}
}

// instanceRequeue is how soon to look at a server again: while Nova builds it or shows no
// address yet, soon; while it is stopped or paused, in a while (Nova sends no event when someone
// starts it); never otherwise (ERROR, deleted: the Machine must be replaced).
func instanceRequeue(server *servers.Server) time.Duration {
	switch server.Status {
	case "ACTIVE":
		if !hasInternalIP(compute.Addresses(server)) {
			// Nova shows the ports' addresses a moment after the server turns ACTIVE on some clouds.
			return requeue.Build
		}
		return 0
	case "BUILD":
		return requeue.Build
	case "ERROR", "DELETED", "SOFT_DELETED":
		return 0
	default:
		return requeue.NotRunning
	}
}

// hasInternalIP says whether Nova shows an internal address among a server's.
func hasInternalIP(addresses []clusterv1.MachineAddress) bool {
	return slices.ContainsFunc(addresses, func(a clusterv1.MachineAddress) bool { return a.Type == clusterv1.MachineInternalIP })
}
