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

// Package outcome is the one language in which every service and phase says how a step ended:
// what the condition says when it is not done (a reason and a message), how soon to look again
// (one of the requeue package's intervals), and what stopped it (an error: a report.SpecError for
// what only the user or the operator can fix, anything else a cloud failure).
package outcome

import (
	"fmt"
	"time"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
)

// Outcome is how a step ended.
type Outcome struct {
	// Reason and Message are what the step's condition says while it is not done; empty when it
	// is (or when the step reports through what it found instead).
	Reason, Message string
	// RequeueAfter is how soon the step wants to be looked at again; zero for never.
	RequeueAfter time.Duration
	// Err is what stopped the step: a report.SpecError, which is looked at again after
	// requeue.Config and never returned to controller-runtime; or a cloud failure, returned
	// (through the pacer) for its backoff.
	Err error
	// Stop ends the reconcile after the step's stage: set with Err, or for a problem the step
	// found and reports itself.
	Stop bool
}

// Failed is the outcome of a step that err stopped: a spec the cloud refutes is the user's to
// fix, with its reason and message, looked at again after requeue.Config; anything else is a
// cloud failure.
func Failed(err error) Outcome {
	if specErr, ok := report.AsSpecError(err); ok {
		return Outcome{Reason: specErr.Reason, Message: specErr.Message, RequeueAfter: requeue.Config, Err: err, Stop: true}
	}
	return Outcome{Reason: infrav1.OpenStackErrorReason, Err: err, Stop: true}
}

// After is the outcome of a step that wants to look again after d.
func After(d time.Duration) Outcome { return Outcome{RequeueAfter: d} }

// Waiting is the outcome of a step that waits for the cloud (reason and message say for what),
// and looks again after d.
func Waiting(reason, message string, d time.Duration) Outcome {
	return Outcome{Reason: reason, Message: message, RequeueAfter: d}
}

// SpecError says whether the outcome's error is the user's to fix.
func (o Outcome) SpecError() bool {
	_, ok := report.AsSpecError(o.Err)
	return ok
}

// Run runs f, and turns a panic in it into an error that names what was running: a goroutine
// that a phase or a zone starts must end in that step's error, never in the shared manager's
// exit, whatever a tenant's cloud answered.
func Run(what string, f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s stopped on an internal error (%v); the manager goes on, and this step is tried again", what, r)
		}
	}()
	f()
	return nil
}
