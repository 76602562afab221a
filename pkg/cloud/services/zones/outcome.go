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

package zones

import (
	"fmt"
	"strings"
	"time"

	kerrors "k8s.io/apimachinery/pkg/util/errors"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/outcome"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
)

// State is where a load balancer stands after one reconcile.
type State string

const (
	// StateReady means the load balancer, its children and floating IP are as desired.
	StateReady State = "Ready"
	// StateWaiting means Octavia is busy with the load balancer (PENDING_*), or a change was just
	// made; look again after RequeueAfter.
	StateWaiting State = "Waiting"
	// StateError means the load balancer is in ERROR, or an OpenStack call failed.
	StateError State = "Error"
	// StateInvalid means the spec asks for something the cloud cannot give.
	StateInvalid State = "Invalid"
	// StateUnhealthy means the load balancer is provisioned as desired but cannot take traffic
	// (see Healthy).
	StateUnhealthy State = "Unhealthy"
)

// Outcome is the result of reconciling one load balancer: how the step ended (outcome.Outcome,
// whose Err is an unexpected OpenStack failure only, already summarised in Message), for which
// zone, and where the load balancer stands.
type Outcome struct {
	outcome.Outcome
	AvailabilityZone string
	// Status is the entry to record; nil when there is no load balancer (yet).
	Status *infrav1.LoadBalancer
	State  State
	// ProvisioningStatus is Octavia's provisioning status of the load balancer, for metrics.
	ProvisioningStatus string
}

// Summary is what the outcomes of one reconcile say about the cluster's load balancers as a
// whole.
type Summary struct {
	// Outcome is how the load balancers' step ended as a whole. Reason and Message are empty when
	// every load balancer is ready and nothing is being removed; otherwise Reason is the gravest
	// reason among the zones that are not, and Message names each of them ("az2: ...; az3: ...").
	// RequeueAfter is the soonest any zone wants to be looked at again; with every zone ready,
	// the soonest health poll they ask for. Err gathers the unexpected OpenStack failures.
	outcome.Outcome
	// Ready counts the load balancers that are ready.
	Ready int
}

// gravity orders the reasons of a zone that is not ready, the gravest last: what only the user
// or the operator can fix (a configuration error, duplicates, a name another object's resource
// holds, and any reason not listed here) weighs the most.
func gravity(reason string) int {
	switch reason {
	case "":
		return 0
	case infrav1.WaitingForLoadBalancerReason:
		return 1
	case infrav1.LoadBalancerUnhealthyReason:
		return 2
	case infrav1.LoadBalancerErrorReason:
		return 3
	case infrav1.OpenStackErrorReason:
		return 4
	}
	return 5
}

// Summarize sums up the outcomes of a reconcile and the removal of the load balancers of zones
// that left the spec (stale, done when staleDone, failed with staleErr).
func Summarize(outcomes []Outcome, stale []infrav1.LoadBalancer, staleDone bool, staleErr error) Summary {
	var (
		sum      Summary
		messages []string
		errs     []error
	)
	note := func(reason, message string, after time.Duration) {
		messages = append(messages, message)
		if gravity(reason) > gravity(sum.Reason) {
			sum.Reason = reason
		}
		if after > 0 && (sum.RequeueAfter == 0 || after < sum.RequeueAfter) {
			sum.RequeueAfter = after
		}
	}
	var poll time.Duration
	for _, o := range outcomes {
		if o.State == StateReady {
			sum.Ready++
			if o.RequeueAfter > 0 && (poll == 0 || o.RequeueAfter < poll) {
				poll = o.RequeueAfter
			}
			continue
		}
		message := o.Message
		if o.AvailabilityZone != "" {
			message = o.AvailabilityZone + ": " + message
		}
		note(o.Reason, message, o.RequeueAfter)
		if o.Err != nil {
			errs = append(errs, o.Err)
		}
	}
	if staleErr != nil {
		errs = append(errs, staleErr)
		note(infrav1.OpenStackErrorReason, "removing load balancers: "+staleErr.Error(), 0)
	} else if !staleDone {
		zones := make([]string, len(stale))
		for i, e := range stale {
			zones[i] = e.AvailabilityZone
		}
		note(infrav1.WaitingForLoadBalancerReason, fmt.Sprintf("deleting the load balancers of availability zones no longer in the spec: %s", strings.Join(zones, ", ")), requeue.Pending)
	}
	if sum.RequeueAfter == 0 {
		sum.RequeueAfter = poll
	}
	sum.Message = strings.Join(messages, "; ")
	sum.Err = kerrors.NewAggregate(errs)
	return sum
}
