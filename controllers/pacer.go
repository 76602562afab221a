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
	"errors"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
)

// How soon the controllers look at an object again after the cloud refused a call or did not
// answer (pacer); every other interval is in the requeue package's table.

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
	log.Info("Backing off: the cloud refused a call or did not answer", "fault", fault.String(), "retryIn", delay.String(), "inARow", n+1, "error", report.Redact(err.Error()))
	return ctrl.Result{RequeueAfter: delay}, nil
}

// faultOnly is err when it is a cloud fault (Keystone unavailable, or refusing credentials that
// worked before), for the pacer to back off from; nil for a problem only the user can fix, which
// is looked at again after requeue.Config.
func faultOnly(err error) error {
	if _, ok := clients.FaultOf(err); ok {
		return err
	}
	return nil
}

// warnIdentity reports, as warning events on the object, what the authentication that built its
// clients let pass (scope.Clients.Warnings): once per credential, on the object whose reconcile
// authenticated.
func warnIdentity(r *report.Recorder, clients *scope.Clients) {
	for _, w := range clients.Warnings {
		r.Warn("IdentityWarning", report.Resource{}, "%s", w)
	}
}

// takeoverNotRecorded says whether err is that a resource only an unrecorded takeover would make
// the object's was found (ownership.NotRecorded).
func takeoverNotRecorded(err error) bool {
	specErr, ok := report.AsSpecError(err)
	return ok && specErr.Reason == infrav1.TakeoverNotRecordedReason
}

// authBusy says whether err is only that another reconcile is authenticating the same
// credential (scope.ErrAuthenticationInProgress), or that the credential's reconciles hold their
// share of the workers (errCredentialBusy): nothing is wrong, and the reconcile looks again in a
// second without touching the status.
func authBusy(err error) bool {
	return errors.Is(err, scope.ErrAuthenticationInProgress) || errors.Is(err, errCredentialBusy)
}

// failureMessage is a condition's message for a failed OpenStack call: which service answered
// what, when the cloud refused or did not answer, then the error.
func failureMessage(err error) string {
	if fault, ok := clients.FaultOf(err); ok {
		return fault.String() + ": " + err.Error()
	}
	return err.Error()
}
