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
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/cluster-api/util/paused"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
)

// The Reconcile both reconcilers share, after Cluster API's own: fetch the object, wait for the
// cache to show this controller's last write, remove what another controller left in its
// conditions, find its owners, honour pause, then run the kind's normal or delete phases and
// patch the object once, after its status was computed from what the phases found.

// objectReconcile is one reconcile of one object, once its owners are found.
type objectReconcile interface {
	normal(ctx context.Context) (ctrl.Result, error)
	delete(ctx context.Context) (ctrl.Result, error)
	// updateStatus sets every status field and condition the controller owns on the object
	// from what normal or delete found, Ready last. It runs once, before the patch, whatever
	// the phases returned.
	updateStatus()
	// conditionTypes are the conditions the controller owns on this object, besides Ready and
	// Paused.
	conditionTypes() []string
}

// kind is what the shared Reconcile needs to know of one kind of object.
type kind[O conditionsObject] struct {
	// name labels the kind's metrics: "openstackcluster".
	name      string
	finalizer string
	// ownedTypes are the condition types the controller writes on some object of the kind:
	// any other is another controller's, and is removed.
	ownedTypes []string
	// skip, when set, says why the object is not this controller's to reconcile ("" when it is).
	skip func(obj O) string
	// begin finds the object's owners and returns its reconcile, with a context whose logger
	// names them; a nil reconcile means wait for an owner (the error, when any, is returned).
	begin func(ctx context.Context, obj O) (context.Context, objectReconcile, *clusterv1.Cluster, error)
}

// shared is the state both reconcilers keep across reconciles.
type shared struct {
	writes ownWrites
	pacer  pacer
	share  workerShare
}

// reconcileObject is the Reconcile of every kind: see the top of this file.
func reconcileObject[O conditionsObject](ctx context.Context, s *shared, c client.Client, apiReader client.Reader,
	req ctrl.Request, obj O, k kind[O],
) (res ctrl.Result, reterr error) {
	log := ctrl.LoggerFrom(ctx)
	defer func() { res, reterr = s.pacer.pace(log, req.NamespacedName, res, reterr) }()
	if err := c.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if k.skip != nil {
		if why := k.skip(obj); why != "" {
			log.V(1).Info("Not reconciling: " + why)
			return ctrl.Result{}, nil
		}
	}
	if behind, err := s.writes.behind(ctx, readerOr(apiReader, c), obj); err != nil || behind {
		log.V(1).Info("Waiting for the cache to show this controller's last write")
		return ctrl.Result{RequeueAfter: requeue.Cache}, err
	}
	owned := append([]string{infrav1.ReadyCondition, clusterv1.PausedCondition}, k.ownedTypes...)
	if wrote, err := s.writes.writeWithoutForeignConditions(ctx, c, obj, owned); err != nil || wrote {
		return ctrl.Result{RequeueAfter: requeue.Cache}, err
	}
	ctx, work, cluster, err := k.begin(ctx, obj)
	if work == nil {
		return ctrl.Result{}, err
	}
	log = ctrl.LoggerFrom(ctx)
	if isPaused, requeue, err := paused.EnsurePausedCondition(ctx, c, cluster, obj); err != nil || isPaused || requeue {
		return ctrl.Result{}, err
	}

	helper, err := patch.NewHelper(obj, c)
	if err != nil {
		return ctrl.Result{}, err
	}
	defer func() {
		work.updateStatus()
		types := work.conditionTypes()
		logWaits(log, obj, types)
		recordWait(k.name, obj, types, res)
		owned := append([]string{infrav1.ReadyCondition, clusterv1.PausedCondition}, types...)
		if err := helper.Patch(ctx, obj, patch.WithOwnedConditions{Conditions: owned}); err != nil {
			reterr = kerrors.NewAggregate([]error{reterr, err})
		} else if controllerutil.ContainsFinalizer(obj, k.finalizer) {
			s.writes.wrote(obj)
		}
	}()

	// The phases get a deadline: a tenant's slow or silent cloud holds one worker for at most
	// this long. The patch above does not: what the phases found is written either way.
	phases, cancel := context.WithTimeout(ctx, reconcileDeadline)
	defer cancel()
	phases, leave := withLeaves(phases)
	defer leave()
	if !obj.GetDeletionTimestamp().IsZero() {
		return work.delete(phases)
	}
	if controllerutil.AddFinalizer(obj, k.finalizer) {
		// The patch adds the finalizer; its update event brings us back.
		return ctrl.Result{}, nil
	}
	return work.normal(phases)
}

// reconcileDeadline bounds the phases of one reconcile: each OpenStack call has its own timeout
// (pkg/scope), and a reconcile makes a handful of them in a row.
const reconcileDeadline = 3 * time.Minute

func clusterRef(c *clusterv1.Cluster) string { return c.Namespace + "/" + c.Name }

// ownWrites remembers the resourceVersion of a reconciler's last write of each object, so that a
// reconcile that reads an older copy from the cache waits for its own write rather than act on
// a status that lacks what the previous reconcile recorded: it would find again, by name, what it
// had just created, and report an adoption that did not happen. The API server is asked only when
// the cache shows another version than the one written; an entry lives until the cache catches
// up.
type ownWrites struct {
	mu sync.Mutex
	rv map[types.UID]string
}

// wrote records obj's resourceVersion after a write (or after a reconcile that wrote nothing).
func (w *ownWrites) wrote(obj client.Object) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.rv == nil {
		w.rv = map[types.UID]string{}
	}
	w.rv[obj.GetUID()] = obj.GetResourceVersion()
}

// behind reports whether cached, read from the cache, is older than this reconciler's last write
// of it. When the API server holds the very version the cache shows, someone else wrote after
// us, and the cache is current.
func (w *ownWrites) behind(ctx context.Context, reader client.Reader, cached client.Object) (bool, error) {
	w.mu.Lock()
	want, ok := w.rv[cached.GetUID()]
	w.mu.Unlock()
	if !ok {
		return false, nil
	}
	if cached.GetResourceVersion() != want {
		live, ok := cached.DeepCopyObject().(client.Object)
		if !ok {
			return false, nil
		}
		err := reader.Get(ctx, client.ObjectKeyFromObject(cached), live)
		if client.IgnoreNotFound(err) != nil {
			return false, err
		}
		if err == nil && live.GetResourceVersion() != cached.GetResourceVersion() {
			return true, nil
		}
	}
	w.mu.Lock()
	delete(w.rv, cached.GetUID())
	w.mu.Unlock()
	return false, nil
}

// readerOr is reader, or fallback when it is nil.
func readerOr(reader client.Reader, fallback client.Reader) client.Reader {
	if reader == nil {
		return fallback
	}
	return reader
}

// conditionsObject is an object of this provider with conditions in its status.
type conditionsObject interface {
	client.Object
	conditions.Setter
}

// logWaits writes one line at the default verbosity for each condition of types on obj that says
// the controller waits (for OpenStack, for the cache, for another object): what, and since when
// the condition has not been True.
func logWaits(log logr.Logger, obj conditions.Getter, types []string) {
	for _, t := range types {
		c := conditions.Get(obj, t)
		if c == nil || c.Status == metav1.ConditionTrue || !waitReason(c.Reason) {
			continue
		}
		log.Info("Waiting", "condition", t, "reason", c.Reason, "for", time.Since(c.LastTransitionTime.Time).Round(time.Second).String(), "message", c.Message)
	}
}

// waitReason says whether a condition reason means the controller waits rather than fails.
func waitReason(reason string) bool {
	return strings.HasPrefix(reason, "WaitingFor") || reason == infrav1.InstanceBuildingReason ||
		reason == infrav1.DeletingReason || reason == infrav1.ProvisioningReason
}
