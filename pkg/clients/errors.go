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

package clients

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/gophercloud/gophercloud/v2"
)

// IsNotFound reports whether an OpenStack call answered 404.
func IsNotFound(err error) bool { return gophercloud.ResponseCodeIs(err, http.StatusNotFound) }

// IsConflict reports whether an OpenStack call answered 409: for Octavia, that the load balancer
// is busy with another change (PENDING_*).
func IsConflict(err error) bool { return gophercloud.ResponseCodeIs(err, http.StatusConflict) }

// CallError is a failed OpenStack call: which service and operation, and the error gophercloud
// returned (Unwrap gives it, unchanged).
type CallError struct {
	// Service is network, loadbalancer, compute, image or identity.
	Service   string
	Operation string
	Err       error
}

// Error names the service, the operation and, when the cloud answered, the HTTP status: never
// the answer's body or the URL called. Both are the cloud's words, and the cloud is whatever
// auth_url a tenant's clouds.yaml names: its answers go into conditions and events that tenant
// reads, and must not carry what an internal service says.
func (e *CallError) Error() string {
	var unexpected gophercloud.ErrUnexpectedResponseCode
	if errors.As(e.Err, &unexpected) {
		return Fault{Service: e.Service, Operation: e.Operation, Status: unexpected.Actual}.String()
	}
	var request *url.Error
	if errors.As(e.Err, &request) {
		// No answer (refused, reset, timed out): what went wrong, without the URL, which may
		// carry a user and password, or name an address inside the network.
		return fmt.Sprintf("%s, %s: %s: %v", whoAnswers(e.Service), e.Operation, request.Op, request.Err)
	}
	return fmt.Sprintf("%s, %s: %v", whoAnswers(e.Service), e.Operation, e.Err)
}

func (e *CallError) Unwrap() error { return e.Err }

// WrapCall marks err, when not nil, with the service and operation of the call that failed.
func WrapCall(service, operation string, err error) error {
	if err == nil {
		return nil
	}
	return &CallError{Service: service, Operation: operation, Err: err}
}

// Fault is a cloud that refused a call or did not answer it: what the controller backs off
// from, rather than retry at once.
type Fault struct {
	// Service and Operation are those of the call, when known.
	Service, Operation string
	// Status is the HTTP status answered: 401, 403, 429 or 5xx; 0 when there was no answer.
	Status int
	// RetryAfter is what a 429 or 503 asked for in its Retry-After header, 0 when nothing.
	RetryAfter time.Duration
}

// serviceNames are the names users know the services by.
var serviceNames = map[string]string{
	serviceNetwork: "Neutron", serviceLoadBalancer: "Octavia", serviceCompute: "Nova", serviceImage: "Glance", serviceVolume: "Cinder", ServiceIdentity: "Keystone",
}

// ServiceIdentity is Keystone, as the scope names it when authentication fails.
const ServiceIdentity = "identity"

// whoAnswers names a service for people: "Octavia (loadbalancer API)".
func whoAnswers(service string) string {
	if name, ok := serviceNames[service]; ok {
		return name + " (" + service + " API)"
	}
	return "OpenStack"
}

// String says which service answered what, in the words of a condition message.
func (f Fault) String() string {
	who := whoAnswers(f.Service)
	what := "did not answer"
	if f.Status != 0 {
		what = fmt.Sprintf("answered HTTP %d %s", f.Status, http.StatusText(f.Status))
	}
	if f.Operation != "" {
		return fmt.Sprintf("%s %s to %s", who, what, f.Operation)
	}
	return who + " " + what
}

// FaultOf finds, in err or in any error it aggregates, a call the cloud refused (401, 403, 429,
// 5xx) or did not answer (a timeout, a connection refused or reset). Conflicts, missing objects
// and bad requests are not faults: they say something about the objects, not the cloud.
func FaultOf(err error) (Fault, bool) {
	if err == nil {
		return Fault{}, false
	}
	var nested []error
	// Aggregates first: errors.As does not enter a kerrors.Aggregate.
	switch e := err.(type) {
	case interface{ Errors() []error }:
		nested = e.Errors()
	case interface{ Unwrap() []error }:
		nested = e.Unwrap()
	}
	for _, n := range nested {
		if f, ok := FaultOf(n); ok {
			return f, true
		}
	}
	var f Fault
	var call *CallError
	if errors.As(err, &call) {
		f.Service, f.Operation = call.Service, call.Operation
	}
	var unexpected gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &unexpected) {
		switch s := unexpected.Actual; {
		case s == http.StatusUnauthorized, s == http.StatusForbidden, s == http.StatusTooManyRequests, s >= 500:
			f.Status = s
			if seconds, err := strconv.Atoi(unexpected.ResponseHeader.Get("Retry-After")); err == nil && seconds > 0 {
				f.RetryAfter = time.Duration(seconds) * time.Second
			}
			return f, true
		}
		return Fault{}, false
	}
	var netErr net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		(errors.As(err, &netErr) && netErr.Timeout()) {
		return f, true
	}
	return Fault{}, false
}

// Unanswered reports whether a call may have been carried out although its caller saw no
// result: the request timed out or its connection broke after it was sent (no HTTP answer), or
// a gateway answered 502 or 504 for a service that may still be working on it. A create that
// failed so must not simply be sent again: what it made may appear a while later.
func Unanswered(err error) bool {
	if err == nil {
		return false
	}
	var unexpected gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &unexpected) {
		return unexpected.Actual == http.StatusBadGateway || unexpected.Actual == http.StatusGatewayTimeout
	}
	var netErr net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF) ||
		(errors.As(err, &netErr) && netErr.Timeout())
}
