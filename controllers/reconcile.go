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
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// What both reconcilers share: how soon they look again, how a phase says what it wants from the
// reconcile, and how a spec the cloud refutes is reported.

const (
	// specErrorRequeue is how soon a spec that only OpenStack can refute is checked again: the
	// missing resource may be created in the cloud, which sends no event.
	specErrorRequeue = time.Minute
	// waitRequeue is how soon the controller looks again while it waits for OpenStack.
	waitRequeue = 5 * time.Second
	// deleteRequeue is how soon a deletion looks again at load balancers Octavia is deleting
	// (a cascade delete takes 2-6 s): the network waits for them, so each look saved is time
	// saved.
	deleteRequeue = 250 * time.Millisecond
	// buildRequeue is how soon a server Nova is building, or deleting, is looked at again.
	buildRequeue = 2 * time.Second
	// memberRequeue is how soon membership is looked at again while Octavia applies a change to
	// a pool (PENDING_UPDATE takes one to three seconds); a look is one status tree read per load
	// balancer.
	memberRequeue = time.Second
	// notRunningRequeue is how soon a server that is neither building nor ACTIVE is looked at
	// again: Nova sends no event when someone starts it.
	notRunningRequeue = time.Minute
	// cacheRequeue is how soon a reconcile that found the cache behind this controller's own
	// last write looks again; the watch event of the write usually comes first.
	cacheRequeue = 250 * time.Millisecond
)

// faultBackoffBase and faultBackoffCap bound how soon an object is reconciled again after its
// cloud refused a call (401, 403, 429, 5xx) or did not answer: the delay doubles from the base
// with each such reconcile in a row, up to the cap, or is what a Retry-After header asked for
// within the cap.
const (
	faultBackoffBase = time.Second
	faultBackoffCap  = 5 * time.Minute
)

// pacer spaces the reconciles of objects whose cloud is unavailable, rate limits, or refuses the
// credentials, rather than let controller-runtime retry them from 5 ms on.
type pacer struct {
	mu       sync.Mutex
	failures map[types.NamespacedName]int
}

// pace turns a reconcile that met a cloud fault into a requeue after the object's next backoff,
// logged with the service and what it answered; any other outcome is returned unchanged, and a
// reconcile without an error starts the object's backoff over.
func (p *pacer) pace(log logr.Logger, key types.NamespacedName, res ctrl.Result, err error) (ctrl.Result, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fault, ok := clients.FaultOf(err)
	if !ok {
		if err == nil {
			delete(p.failures, key)
		}
		return res, err
	}
	if p.failures == nil {
		p.failures = map[types.NamespacedName]int{}
	}
	n := p.failures[key]
	p.failures[key] = n + 1
	delay := faultBackoffCap
	if n < 16 {
		delay = min(faultBackoffBase<<n, faultBackoffCap)
	}
	if fault.RetryAfter > delay {
		delay = min(fault.RetryAfter, faultBackoffCap)
	}
	log.Info("Backing off: the cloud refused a call or did not answer", "fault", fault.String(), "retryIn", delay.String(), "inARow", n+1, "error", err.Error())
	return ctrl.Result{RequeueAfter: delay}, nil
}

// faultOnly is err when it is a cloud fault (Keystone unavailable, or refusing credentials that
// worked before), for the pacer to back off from; nil for a problem only the user can fix, which
// is looked at again after specErrorRequeue.
func faultOnly(err error) error {
	if _, ok := clients.FaultOf(err); ok {
		return err
	}
	return nil
}

// failureMessage is a condition's message for a failed OpenStack call: which service answered
// what, when the cloud refused or did not answer, then the error.
func failureMessage(err error) string {
	if fault, ok := clients.FaultOf(err); ok {
		return fault.String() + ": " + err.Error()
	}
	return err.Error()
}

// phaseResult carries what a phase wants from the reconcile: to stop here, and when to come back.
type phaseResult struct {
	stop   bool
	result ctrl.Result
	err    error
}

// lowestRequeue is the sooner of two requeues; no requeue (zero) loses to any.
func lowestRequeue(a, b ctrl.Result) ctrl.Result {
	if a.RequeueAfter == 0 || (b.RequeueAfter != 0 && b.RequeueAfter < a.RequeueAfter) {
		return b
	}
	return a
}

func clusterRef(c *clusterv1.Cluster) string { return c.Namespace + "/" + c.Name }

func setCondition(obj conditions.Setter, conditionType string, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(obj, metav1.Condition{Type: conditionType, Status: status, Reason: reason, Message: message})
}

// reportProblem sets a condition to False for a problem the user must act on (a spec the cloud
// refutes, credentials that do not work) and warns with an event when the problem is new. The
// caller comes back after specErrorRequeue rather than failing the reconcile: nothing changes
// until the spec or the cloud does, and the cloud sends no event when it does. (A
// reconcile.TerminalError would never look again on its own.)
func reportProblem(rep *report.Recorder, obj conditions.Setter, conditionType, reason, message string) ctrl.Result {
	before := conditions.Get(obj, conditionType)
	if before == nil || before.Reason != reason || before.Message != message || before.Status != metav1.ConditionFalse {
		rep.Warn(reason, report.Resource{}, "%s", message)
	}
	setCondition(obj, conditionType, metav1.ConditionFalse, reason, message)
	return ctrl.Result{RequeueAfter: specErrorRequeue}
}

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

// dropForeignConditions removes the conditions of obj that are not of the types this controller
// owns, or that lack a reason: what another controller left, such as upstream CAPO v0.14's
// v1beta1 conditions (RouterReady, True conditions without a reason) on a cluster taken over from
// it. It reports whether it removed any.
func dropForeignConditions(obj conditions.Setter, owned []string) bool {
	var kept []metav1.Condition
	for _, c := range obj.GetConditions() {
		if slices.Contains(owned, c.Type) && c.Reason != "" {
			kept = append(kept, c)
		}
	}
	if len(kept) == len(obj.GetConditions()) {
		return false
	}
	obj.SetConditions(kept)
	return true
}

// conditionsObject is an object of this provider with conditions in its status.
type conditionsObject interface {
	client.Object
	conditions.Setter
}

// writeWithoutForeignConditions drops the foreign conditions of obj (dropForeignConditions) and,
// when there were any, writes its status with the list that remains before anything else writes:
// every other status write (Cluster API's paused condition included) merges its conditions into
// the list the API server holds, and the API server refuses the whole write while that list has
// a condition without a reason, as upstream's CRD allowed and this provider's does not. The
// merge patch replaces the list as a whole. It reports whether it wrote; the caller then waits
// for the cache to show the write.
func (w *ownWrites) writeWithoutForeignConditions(ctx context.Context, c client.Client, obj conditionsObject, owned []string) (bool, error) {
	before, ok := obj.DeepCopyObject().(client.Object)
	if !ok || !dropForeignConditions(obj, owned) {
		return false, nil
	}
	if err := c.Status().Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		return false, fmt.Errorf("removing the conditions another controller left: %w", err)
	}
	ctrl.LoggerFrom(ctx).Info("Removed the conditions another controller left", "kept", len(obj.GetConditions()))
	w.wrote(obj)
	return true, nil
}
