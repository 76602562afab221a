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
	"time"

	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"sigs.k8s.io/cluster-api/util"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
)

// outcome is how a phase ended, besides what it found (which its own result type holds, for
// the kind's updateStatus).
type outcome struct {
	// err is what stopped the phase: a report.SpecError, the user's to fix, which is looked at
	// again after requeue.Config; or an OpenStack failure, returned to controller-runtime
	// (through the pacer) for its backoff.
	err error
	// stop ends the reconcile after the phase's stage: set with err, or for a problem the phase
	// found and reports itself.
	stop bool
	// requeue is how soon the phase wants to look again; zero for never.
	requeue time.Duration
}

// failedWith is the outcome of a phase that err stopped.
func failedWith(err error) outcome {
	if _, ok := report.AsSpecError(err); ok {
		return outcome{err: err, stop: true, requeue: requeue.Config}
	}
	return outcome{err: err, stop: true}
}

// after is the outcome of a phase that wants to look again after d.
func after(d time.Duration) outcome { return outcome{requeue: d} }

// outcomes are the outcomes of the phases a reconcile ran.
type outcomes []outcome

// stopped says whether a phase stopped the reconcile.
func (os outcomes) stopped() bool {
	for _, o := range os {
		if o.stop {
			return true
		}
	}
	return false
}

// result is what the reconcile returns: the soonest requeue any phase asked for, and the
// failures that were not the spec's.
func (os outcomes) result() (ctrl.Result, error) {
	var (
		res  ctrl.Result
		errs []error
	)
	for _, o := range os {
		res = util.LowestNonZeroResult(res, ctrl.Result{RequeueAfter: o.requeue})
		if _, spec := report.AsSpecError(o.err); o.err != nil && !spec {
			errs = append(errs, o.err)
		}
	}
	return res, kerrors.NewAggregate(errs)
}
