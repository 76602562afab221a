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
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/compute"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
)

// templateDeadline bounds one template's reconcile: a few reads of Keystone, Nova and Glance.
const templateDeadline = 30 * time.Second

// OpenStackMachineTemplateReconciler writes, in a template's status, what its machines' nodes
// will have (Cluster API's autoscaling from zero): the flavor's CPUs and memory, the root disk's
// size, and the image's architecture. It only reads the cloud.
type OpenStackMachineTemplateReconciler struct {
	Client       client.Client
	ScopeFactory scope.Factory
	// WatchFilterValue, when set, limits the controller to objects with the matching
	// cluster.x-k8s.io/watch-filter label.
	WatchFilterValue string
}

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackmachinetemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackmachinetemplates/status,verbs=get;update;patch

// SetupWithManager registers the reconciler: a template is looked at when it is created or its
// spec changes.
func (r *OpenStackMachineTemplateReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	log := ctrl.LoggerFrom(ctx).WithName("openstackmachinetemplate")
	return ctrl.NewControllerManagedBy(mgr).
		For(&infrav1.OpenStackMachineTemplate{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(options).
		WithEventFilter(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue)).
		Complete(r)
}

// Reconcile writes the template's capacity once its flavor (and image) are resolved. A template
// without credentials of its own or a cluster to take them from, or whose flavor the cloud
// refutes, is looked at again after requeue.Config, and its status is left as it is.
func (r *OpenStackMachineTemplateReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, templateDeadline)
	defer cancel()
	log := ctrl.LoggerFrom(ctx)
	osmt := &infrav1.OpenStackMachineTemplate{}
	if err := r.Client.Get(ctx, req.NamespacedName, osmt); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !osmt.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	ref, err := r.identityOf(ctx, osmt)
	if err != nil {
		return ctrl.Result{}, err
	}
	if ref == nil {
		log.V(2).Info("No identity to read the flavor with: neither the template nor its cluster names one")
		return ctrl.Result{RequeueAfter: requeue.Config}, nil
	}
	clients, err := r.ScopeFactory.NewClients(ctx, osmt.Namespace, ref)
	if err != nil {
		if authBusy(err) {
			return ctrl.Result{RequeueAfter: requeue.AuthInProgress}, nil
		}
		log.Info("Capacity not known: the identity does not work", "reason", failureMessage(err))
		return ctrl.Result{RequeueAfter: requeue.Config}, faultOnly(err)
	}
	svc := compute.NewService(clients.Compute, clients.Image, clients.Volume, clients.Network, nil, ownership.Owner{})
	status, err := compute.TemplateCapacity(ctx, svc, &osmt.Spec.Template.Spec)
	if err != nil {
		log.Info("Capacity not known", "reason", failureMessage(err))
		return ctrl.Result{RequeueAfter: requeue.Config}, faultOnly(err)
	}
	if equality.Semantic.DeepEqual(osmt.Status, *status) {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFrom(osmt.DeepCopy())
	osmt.Status = *status
	if err := r.Client.Status().Patch(ctx, osmt, patch); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("writing the capacity of OpenStackMachineTemplate %s: %w", osmt.Name, err)
	}
	return ctrl.Result{}, nil
}

// identityOf is the credential to read the template's flavor with: the template's own
// identityRef, else its cluster's (the Cluster of its cluster-name label, or of its owner
// reference), as its machines would use. nil when there is none yet.
func (r *OpenStackMachineTemplateReconciler) identityOf(ctx context.Context, osmt *infrav1.OpenStackMachineTemplate) (*infrav1.OpenStackIdentityReference, error) {
	if ref := osmt.Spec.Template.Spec.IdentityRef; ref != nil {
		return ref, nil
	}
	name := osmt.Labels[clusterv1.ClusterNameLabel]
	for _, o := range osmt.OwnerReferences {
		if name == "" && o.Kind == "Cluster" && strings.HasPrefix(o.APIVersion, clusterv1.GroupVersion.Group+"/") {
			name = o.Name
		}
	}
	if name == "" {
		return nil, nil
	}
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: osmt.Namespace, Name: name}, cluster); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	infra := cluster.Spec.InfrastructureRef
	if infra.Name == "" || infra.Kind != "OpenStackCluster" || infra.APIGroup != infrav1.GroupVersion.Group {
		return nil, nil
	}
	osc := &infrav1.OpenStackCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: osmt.Namespace, Name: infra.Name}, osc); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return osc.Spec.IdentityRef, nil
}
