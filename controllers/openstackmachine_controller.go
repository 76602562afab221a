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

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
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
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
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

	writes ownWrites
	pacer  pacer
}

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackmachines,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackmachines/status;openstackmachines/finalizers,verbs=get;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines;machines/status,verbs=get;list;watch

// SetupWithManager registers the reconciler. Besides OpenStackMachines it watches their
// Machines (bootstrap data, deletion), Clusters (infrastructure provisioned, pause) and
// OpenStackClusters: a change of the API server load balancers or of the membership policy
// re-reconciles every control plane machine of the cluster.
func (r *OpenStackMachineReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	log := ctrl.LoggerFrom(ctx).WithName("openstackmachine")
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
		Complete(r)
}

// Reconcile brings one OpenStackMachine's server, ports and load balancer membership to what
// its spec and its cluster ask for.
func (r *OpenStackMachineReconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, reterr error) {
	log := ctrl.LoggerFrom(ctx)
	defer func() { res, reterr = r.pacer.pace(log, req.NamespacedName, res, reterr) }()
	osm := &infrav1.OpenStackMachine{}
	if err := r.Client.Get(ctx, req.NamespacedName, osm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if behind, err := r.writes.behind(ctx, readerOr(r.APIReader, r.Client), osm); err != nil || behind {
		log.V(1).Info("Waiting for the cache to show this controller's last write")
		return ctrl.Result{RequeueAfter: cacheRequeue}, err
	}
	// Every condition type this controller writes on some machine: upstream's left no other.
	ownedTypes := []string{infrav1.ReadyCondition, clusterv1.PausedCondition, infrav1.InstanceReadyCondition, infrav1.APIServerIngressReadyCondition}
	if wrote, err := r.writes.writeWithoutForeignConditions(ctx, r.Client, osm, ownedTypes); err != nil || wrote {
		return ctrl.Result{RequeueAfter: cacheRequeue}, err
	}
	machine, err := util.GetOwnerMachine(ctx, r.Client, osm.ObjectMeta)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("getting the owner Machine: %w", err)
	}
	if machine == nil {
		log.Info("Waiting for the Machine controller to set the owner reference")
		return ctrl.Result{}, nil
	}
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: machine.Namespace, Name: machine.Spec.ClusterName}, cluster); err != nil {
		return ctrl.Result{}, fmt.Errorf("getting Cluster %s of Machine %s: %w", machine.Spec.ClusterName, machine.Name, err)
	}
	log = log.WithValues("Cluster", clusterRef(cluster), "Machine", machine.Name)
	ctx = ctrl.LoggerInto(ctx, log)

	if isPaused, requeue, err := paused.EnsurePausedCondition(ctx, r.Client, cluster, osm); err != nil || isPaused || requeue {
		return ctrl.Result{}, err
	}

	// The OpenStackCluster may be missing: not created yet, or, during deletion, already gone.
	var osc *infrav1.OpenStackCluster
	if name := cluster.Spec.InfrastructureRef.Name; name != "" {
		osc = &infrav1.OpenStackCluster{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: name}, osc); err != nil {
			if !apierrors.IsNotFound(err) {
				return ctrl.Result{}, fmt.Errorf("getting the OpenStackCluster: %w", err)
			}
			osc = nil
		}
	}

	m := &machineScope{osm: osm, machine: machine, cluster: cluster, osc: osc, controlPlane: util.IsControlPlaneMachine(machine),
		report: report.NewRecorder(r.Recorder, osm, log)}
	helper, err := patch.NewHelper(osm, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() {
		setMachineReadySummary(m)
		logWaits(log, osm, m.conditionTypes())
		recordWait("openstackmachine", osm, m.conditionTypes(), res)
		owned := append([]string{infrav1.ReadyCondition, clusterv1.PausedCondition}, m.conditionTypes()...)
		if err := helper.Patch(ctx, osm, patch.WithOwnedConditions{Conditions: owned}); err != nil {
			reterr = kerrors.NewAggregate([]error{reterr, err})
		} else if controllerutil.ContainsFinalizer(osm, infrav1.MachineFinalizer) {
			r.writes.wrote(osm)
		}
	}()

	if !osm.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, m)
	}
	if controllerutil.AddFinalizer(osm, infrav1.MachineFinalizer) {
		return ctrl.Result{}, nil
	}
	return r.reconcileNormal(ctx, m)
}

// machineScope is what one reconcile of a machine works with.
type machineScope struct {
	osm          *infrav1.OpenStackMachine
	machine      *clusterv1.Machine
	cluster      *clusterv1.Cluster
	osc          *infrav1.OpenStackCluster
	controlPlane bool
	report       *report.Recorder
}

// owner is how the server's metadata and the ports' default description name the machine.
func (m *machineScope) owner() string { return m.osm.Namespace + "/" + m.osm.Name }

// conditionTypes are the conditions the controller owns on this machine, besides Ready and
// Paused: APIServerIngressReady only on control plane machines.
func (m *machineScope) conditionTypes() []string {
	if m.controlPlane {
		return []string{infrav1.InstanceReadyCondition, infrav1.APIServerIngressReadyCondition}
	}
	return []string{infrav1.InstanceReadyCondition}
}

func (m *machineScope) identityRef() *infrav1.OpenStackIdentityReference {
	if m.osm.Spec.IdentityRef != nil || m.osc == nil {
		return m.osm.Spec.IdentityRef
	}
	return m.osc.Spec.IdentityRef
}

func (r *OpenStackMachineReconciler) reconcileNormal(ctx context.Context, m *machineScope) (ctrl.Result, error) {
	initMachineConditions(m)
	if !ptr.Deref(m.cluster.Status.Initialization.InfrastructureProvisioned, false) || m.osc == nil {
		setCondition(m.osm, infrav1.InstanceReadyCondition, metav1.ConditionFalse, infrav1.WaitingForClusterInfrastructureReason,
			"waiting for the Cluster's infrastructure (network, security groups, API server load balancers) to be provisioned")
		return ctrl.Result{}, nil
	}
	clients, err := r.ScopeFactory.NewClients(ctx, m.osm.Namespace, m.identityRef())
	if err != nil {
		return instanceFailed(m, infrav1.IdentityErrorReason, failureMessage(err)), faultOnly(err)
	}
	svc := compute.NewService(clients.Compute, clients.Image, clients.Network, m.report)

	known := knownServerID(m.osm)
	server, gone, err := svc.Find(ctx, known, m.osm.Name, m.owner(), upstreamServer(m))
	if specErr, ok := report.AsSpecError(err); ok {
		return instanceFailed(m, specErr.Reason, specErr.Message), nil
	}
	if err != nil {
		return openStackFailed(m, infrav1.InstanceReadyCondition, err)
	}
	if gone {
		// The provider ID names the server: a new one would be a different machine.
		m.osm.Status.InstanceState = ptr.To(infrav1.InstanceStateDeleted)
		instanceFailed(m, infrav1.InstanceDeletedReason, fmt.Sprintf(
			"server %s no longer exists in Nova; it is not recreated: delete the Machine to replace it", known))
		return ctrl.Result{}, nil
	}
	if server == nil {
		if m.machine.Spec.Bootstrap.DataSecretName == nil {
			setCondition(m.osm, infrav1.InstanceReadyCondition, metav1.ConditionFalse, infrav1.WaitingForBootstrapDataReason,
				"waiting for the Machine's bootstrap data secret")
			return ctrl.Result{}, nil
		}
		if server, err = r.createServer(ctx, svc, networking.NewService(clients.Network, m.report), m); err != nil {
			if _, ok := report.AsSpecError(err); ok {
				return instanceFailed(m, infrav1.InstanceConfigurationErrorReason, err.Error()), nil
			}
			return openStackFailed(m, infrav1.InstanceReadyCondition, err)
		}
		// Nova's answer to a create has no status: the server is building.
		server.Status = "BUILD"
	}
	result := setInstanceStatus(m, server)
	if !m.controlPlane {
		return result, nil
	}
	ingress, err := r.reconcileIngress(ctx, clients, m, server)
	return lowestRequeue(result, ingress), err
}

// createServer resolves the spec and creates the server with its ports.
func (r *OpenStackMachineReconciler) createServer(ctx context.Context, svc *compute.Service, net *networking.Service, m *machineScope) (*servers.Server, error) {
	spec, err := r.instanceSpec(ctx, svc, net, m)
	if err != nil {
		return nil, err
	}
	return svc.Create(ctx, spec)
}
