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

package fakeopenstack

import (
	"context"
	"fmt"
	"math/rand"
	"net/http"
	"slices"
	"strings"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
)

// Fault makes calls to an operation fail.
//
// With Nth set, the Nth call to Operation counted from when the fault is added fails (and, with
// Times, the calls after it up to Times failures). With Probability set, each call fails with that
// probability, drawn from the cloud's seeded random source, up to Times failures (0: no limit).
type Fault struct {
	// Operation is the client method name, such as "CreateLoadBalancer"; "*" matches every one.
	Operation string
	// Nth is the 1-based call that fails first; 0 uses Probability instead.
	Nth int
	// Probability is the chance that a call fails, between 0 and 1.
	Probability float64
	// Times bounds how many calls fail; 0 means once for Nth and no limit for Probability.
	Times int
	// Status is the HTTP status to answer (409, 500, 503, ...).
	Status int
	// Timeout answers with context.DeadlineExceeded instead of an HTTP status.
	Timeout bool
	// DriveToError lets the call succeed, but the load balancer or server it creates ends in
	// ERROR instead of ACTIVE (CreateLoadBalancer and CreateServer only).
	DriveToError bool
	// LoseResponse lets the call take effect, then answers context.DeadlineExceeded, as when
	// the response is lost on its way back: the caller does not learn what the cloud did.
	LoseResponse bool
	// Uncommitted, with LoseResponse on CreateLoadBalancer, keeps the load balancer out of the
	// next that many ListLoadBalancers answers (and GetLoadBalancer's until then), as an Octavia
	// API still holding its transaction after the client gave up.
	Uncommitted int

	seen, fired int
	cloud       *Cloud
}

// InjectFault adds a fault; it applies to the calls made after this.
func (c *Cloud) InjectFault(f Fault) *Fault {
	c.mu.Lock()
	defer c.mu.Unlock()
	fault := f
	fault.cloud = c
	c.faults = append(c.faults, &fault)
	return &fault
}

// RemoveFault removes one fault; the others stay.
func (c *Cloud) RemoveFault(f *Fault) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.faults = slices.DeleteFunc(c.faults, func(x *Fault) bool { return x == f })
}

// ClearFaults removes every fault.
func (c *Cloud) ClearFaults() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.faults = nil
}

// Fired reports how many calls the fault has failed.
func (f *Fault) Fired() int {
	if f.cloud != nil {
		f.cloud.mu.Lock()
		defer f.cloud.mu.Unlock()
	}
	return f.fired
}

// effect is what a fault that fires without an error does to the call.
type effect int

const (
	noEffect effect = iota
	// driveToError: the call succeeds, what it creates ends in ERROR.
	driveToError
	// loseResponse: the call takes effect and answers a timeout.
	loseResponse
)

// fire decides whether this call fails. It returns the error to answer with, or, for a
// DriveToError or LoseResponse fault that fires, its effect and no error.
func (f *Fault) fire(op string, r *rand.Rand) (effect, error) {
	if f.Operation != "*" && f.Operation != op {
		return noEffect, nil
	}
	f.seen++
	limit := f.Times
	if limit == 0 && f.Nth > 0 {
		limit = 1
	}
	if limit > 0 && f.fired >= limit {
		return noEffect, nil
	}
	switch {
	case f.Nth > 0 && f.seen < f.Nth:
		return noEffect, nil
	case f.Nth == 0 && r.Float64() >= f.Probability:
		return noEffect, nil
	}
	f.fired++
	switch {
	case f.DriveToError:
		return driveToError, nil
	case f.LoseResponse:
		return loseResponse, nil
	case f.Timeout:
		return noEffect, clients.WrapCall(serviceOf(op), op, timeoutError(op))
	}
	status := f.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	return noEffect, clients.WrapCall(serviceOf(op), op, httpError(status, "injected fault on %s", op))
}

// serviceOf is the OpenStack service of an operation, as pkg/clients names it on the errors of
// real calls.
func serviceOf(op string) string {
	for _, s := range []struct{ service, marks string }{
		{"loadbalancer", "LoadBalancer Listener Pool Member Monitor Provider AvailabilityZoneCapabilities APIVersions"},
		{"compute", "Server Compute KeyPair GetFlavor"},
		{"image", "Image"},
	} {
		for _, m := range strings.Fields(s.marks) {
			if strings.Contains(op, m) {
				return s.service
			}
		}
	}
	return "network"
}

func timeoutError(op string) error {
	return fmt.Errorf("fake: %s: %w", op, context.DeadlineExceeded)
}

type factory struct{ c *Cloud }

func (f factory) NewClients(_ context.Context, _ string, ref *infrav1.OpenStackIdentityReference) (*scope.Clients, error) {
	if ref == nil {
		return nil, scope.ErrNoIdentityRef
	}
	return f.c.Clients(), nil
}
