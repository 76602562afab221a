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
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"sigs.k8s.io/cluster-api/util"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/outcome"
)

// outcomes are the outcomes of the phases a reconcile ran.
type outcomes []outcome.Outcome

// stopped says whether a phase stopped the reconcile.
func (os outcomes) stopped() bool {
	for _, o := range os {
		if o.Stop {
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
		res = util.LowestNonZeroResult(res, ctrl.Result{RequeueAfter: o.RequeueAfter})
		if o.Err != nil && !o.SpecError() {
			errs = append(errs, o.Err)
		}
	}
	return res, kerrors.NewAggregate(errs)
}
