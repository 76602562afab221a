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

// Package clients holds one interface per OpenStack API the provider uses, each a thin wrapper
// over gophercloud that returns gophercloud's types and records a Prometheus metric per call.
// There is no business logic here: services decide what to call, and tests replace these
// interfaces with the generated mocks in clients/mock.
package clients

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/pagination"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	requestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "capo_openstack_api_requests_total",
		Help: "OpenStack API calls made by the provider, by service, operation and HTTP status class (2xx, 4xx, 5xx, or error when no HTTP answer came back).",
	}, []string{"service", "operation", "code"})

	requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "capo_openstack_api_request_duration_seconds",
		Help:    "Latency of the OpenStack API calls made by the provider, by service, operation and HTTP status class.",
		Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
	}, []string{"service", "operation", "code"})
)

func init() {
	metrics.Registry.MustRegister(Collectors()...)
}

// Collectors are the metrics this package records, for the metrics reference and its tests.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{requestsTotal, requestDuration}
}

// Service names, as used in the metric labels.
const (
	serviceNetwork      = "network"
	serviceLoadBalancer = "loadbalancer"
	serviceCompute      = "compute"
	serviceImage        = "image"
	serviceVolume       = "volume"
)

// statusClass turns the outcome of a gophercloud call into the metric's code label.
func statusClass(err error) string {
	if err == nil {
		return "2xx"
	}
	var unexpected gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &unexpected) && unexpected.Actual >= 100 {
		return strconv.Itoa(unexpected.Actual/100) + "xx"
	}
	return "error"
}

// observe records one call. It is the only place that touches the metrics.
func observe(service, operation string, start time.Time, err error) {
	code := statusClass(err)
	requestsTotal.WithLabelValues(service, operation, code).Inc()
	requestDuration.WithLabelValues(service, operation, code).Observe(time.Since(start).Seconds())
}

// call runs f and records it. An answer that holds no object, or an object without its ID, is an
// error naming the service and the operation, never a value a caller could dereference: a cloud
// is whatever auth_url a tenant names.
func call[T any](service, operation string, f func() (T, error)) (T, error) {
	start := time.Now()
	v, err := f()
	if err == nil {
		err = malformed(v)
	}
	observe(service, operation, start, err)
	if err != nil {
		var zero T
		return zero, WrapCall(service, operation, err)
	}
	return v, nil
}

// ErrMalformedAnswer is what an answer without the object it must hold is.
var ErrMalformedAnswer = errors.New("the answer does not hold what it must")

// malformed says what is wrong with an answer v that came without an error: a nil pointer, or a
// struct (pointed to, or an element of a list) whose ID, when it has one, is empty: every caller
// goes on with the ID, and "" would name the collection instead of an object.
func malformed(v any) error {
	r := reflect.ValueOf(v)
	switch {
	case r.Kind() == reflect.Pointer && r.IsNil():
		return fmt.Errorf("%w: no object", ErrMalformedAnswer)
	case r.Kind() == reflect.Pointer && withoutID(r.Elem()):
		return fmt.Errorf("%w: an object without an ID", ErrMalformedAnswer)
	case r.Kind() == reflect.Slice:
		for i := 0; i < r.Len(); i++ {
			if withoutID(r.Index(i)) {
				return fmt.Errorf("%w: item %d of the list has no ID", ErrMalformedAnswer, i)
			}
		}
	}
	return nil
}

// withoutID says whether v is a struct with a string field ID that is empty.
func withoutID(v reflect.Value) bool {
	if v.Kind() != reflect.Struct {
		return false
	}
	id := v.FieldByName("ID")
	return id.IsValid() && id.Kind() == reflect.String && id.String() == ""
}

// MaxPages is the most pages a list follows; MaxListBody the most bytes its pages hold together.
// A cloud that answers with more, or with endless next links, gets an error, not the manager's
// memory.
const (
	MaxPages    = 32
	MaxListBody = 32 << 20
)

// ErrTooManyPages is what a list past MaxPages returns.
var ErrTooManyPages = errors.New("the list has more pages than the clients follow")

// allPages reads the pages of a list, at most MaxPages holding at most MaxListBody bytes
// together, and extracts their items. The bounds ride in the requests' context, which the
// bounded transport (LimitBodies) reads: gophercloud's own paging (AllPages, which knows a
// single-page list from a linked one) stays as it is.
func allPages[T any](ctx context.Context, pager pagination.Pager, extract func(pagination.Page) ([]T, error)) ([]T, error) {
	pages, err := pager.AllPages(withListBudget(ctx, MaxListBody, MaxPages))
	if err != nil {
		return nil, err
	}
	return extract(pages)
}

// callErr runs f, which returns only an error, and records it.
func callErr(service, operation string, f func() error) error {
	start := time.Now()
	err := f()
	observe(service, operation, start, err)
	return WrapCall(service, operation, err)
}
