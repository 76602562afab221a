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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	infrav1beta2 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta2"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// How both reconcilers write conditions: the helpers their updateStatus functions use, the
// Ready summary, and the removal of what another controller left. Nothing outside the
// *_status.go files writes a condition or a status field (TestOnlyStatusFilesWriteStatus).

// setCondition sets a condition. Its message names fields as v1beta1 does, followed by the
// v1beta2 paths of those whose name differs (infrav1beta2.InBothVersions): kubectl shows the
// v1beta2 object by default. A URL's user information never reaches it (report.Redact).
func setCondition(obj conditions.Setter, conditionType string, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(obj, metav1.Condition{Type: conditionType, Status: status, Reason: reason, Message: report.Redact(infrav1beta2.InBothVersions(message))})
}

// warning is an event the status setters ask for: they compute, and updateStatus records.
type warning struct{ reason, message string }

// warnings are the events one updateStatus asks for, in order.
type warnings []warning

func (w *warnings) add(reason, message string) { *w = append(*w, warning{reason, message}) }

// emit records each warning as an event.
func (w warnings) emit(rep *report.Recorder) {
	for _, x := range w {
		rep.Warn(x.reason, report.Resource{}, "%s", x.message)
	}
}

// reportProblem sets a condition to False for a problem the user must act on (a spec the cloud
// refutes, credentials that do not work) and asks for a warning when the problem is new. The
// phase that found it comes back after requeue.Config rather than failing the reconcile
// (see outcome): nothing changes until the spec or the cloud does, and the cloud sends no event
// when it does. (A reconcile.TerminalError would never look again on its own.)
func reportProblem(w *warnings, obj conditions.Setter, conditionType, reason, message string) {
	message = report.Redact(infrav1beta2.InBothVersions(message))
	before := conditions.Get(obj, conditionType)
	if before == nil || before.Reason != reason || before.Message != message || before.Status != metav1.ConditionFalse {
		w.add(reason, message)
	}
	setCondition(obj, conditionType, metav1.ConditionFalse, reason, message)
}

// setSummary sets Ready on obj as the summary of the conditions of types, with Cluster API's
// reasons for it (Ready, NotReady, ReadyUnknown) and, when all is well, the message of each.
func setSummary(obj conditions.Setter, types []string) {
	merge := conditions.DefaultMergeStrategy(conditions.ComputeReasonFunc(
		conditions.GetDefaultComputeMergeReasonFunc(clusterv1.NotReadyReason, clusterv1.ReadyUnknownReason, clusterv1.ReadyReason)))
	if err := conditions.SetSummaryCondition(obj, obj, infrav1.ReadyCondition, conditions.ForConditionTypes(types),
		conditions.CustomMergeStrategy{MergeStrategy: merge}); err != nil {
		setCondition(obj, infrav1.ReadyCondition, metav1.ConditionUnknown, clusterv1.ReadyUnknownReason, err.Error())
	}
}

// initConditions sets every condition of types that is not set yet to Unknown: every owned
// condition is set from the first reconcile on.
func initConditions(obj conditions.Setter, types []string) {
	for _, t := range types {
		if conditions.Get(obj, t) == nil {
			setCondition(obj, t, metav1.ConditionUnknown, infrav1.ProvisioningReason, "")
		}
	}
}

// setFailure records on conditionType what stopped a phase: a spec the cloud refutes is a
// problem for the user (reportProblem), anything else an OpenStack failure that
// controller-runtime retries.
func setFailure(obj conditions.Setter, w *warnings, conditionType string, err error) {
	if specErr, ok := report.AsSpecError(err); ok {
		reportProblem(w, obj, conditionType, specErr.Reason, specErr.Message)
		return
	}
	setCondition(obj, conditionType, metav1.ConditionFalse, infrav1.OpenStackErrorReason, failureMessage(err))
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
