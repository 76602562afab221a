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

// Package fake is a stateful, in-memory OpenStack behind the same interfaces as pkg/clients, for
// controller integration tests, fault-injection tests and benchmarks, where a call-by-call mock
// script would be long and brittle.
//
// It behaves as the real services do in what the controllers rely on: Octavia's provisioning
// state machine (PENDING_CREATE / PENDING_UPDATE / PENDING_DELETE, 409 while pending, cascade
// delete, 400 on an unknown availability zone), Neutron's tags and filters, addresses allocated
// from subnets, floating IPs on an external network, and Nova servers that go from BUILD to
// ACTIVE in their availability zone. It counts every call per operation and can be told to fail
// calls. The contract tests under test/contract check it against a real OpenStack.
package fakeopenstack

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
)

// Options tune the fake's timing and randomness.
type Options struct {
	// PendingReads is how many reads (get, list or status tree) of a pending load balancer it
	// takes before it settles (PENDING_* to ACTIVE, or gone after PENDING_DELETE). 0 with
	// PendingDuration 0 settles at the next read.
	PendingReads int
	// PendingDuration is how long a load balancer stays pending, measured on Now. When both
	// PendingReads and PendingDuration are set, whichever comes first settles it.
	PendingDuration time.Duration
	// LeavePopulatedChildrenPending makes Octavia behave as 11.0.0 does: the listeners, pools
	// and monitors created with a fully populated load balancer stay PENDING_CREATE when it
	// becomes ACTIVE, each until it is updated (Octavia stories 2010426, 2010488).
	LeavePopulatedChildrenPending bool
	// ServerBuildReads is how many reads of a new server it takes to go from BUILD to ACTIVE.
	ServerBuildReads int
	// Seed seeds the random source used by probabilistic faults.
	Seed int64
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Cloud is one fake OpenStack. It is safe for concurrent use.
type Cloud struct {
	mu   sync.Mutex
	opts Options
	rand *rand.Rand
	ids  int

	calls  map[string]int
	faults []*Fault
	// lastCallDrivesToError is set by begin when a DriveToError fault fired for the current call.
	lastCallDrivesToError bool
	// lastCallLosesResponse is set by begin when a LoseResponse fault fired for the current call.
	lastCallLosesResponse bool
	// lastCallUncommitted is the Uncommitted of a LoseResponse fault that fired for the call.
	lastCallUncommitted int

	net     networkState
	lb      loadBalancerState
	compute computeState
	vol     volumeState
}

// New returns an empty cloud with the default Octavia provider "amphora" (supporting
// availability zones and allowed CIDRs).
func New(opts Options) *Cloud {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &Cloud{
		opts:  opts,
		rand:  rand.New(rand.NewSource(opts.Seed)), //nolint:gosec // test randomness, seeded on purpose
		calls: map[string]int{},
	}
	c.net.init()
	c.lb.init()
	c.compute.init()
	c.vol.init()
	return c
}

// Network, LoadBalancer, Compute, Image and Volume are the fake's client interfaces.
func (c *Cloud) Network() clients.NetworkClient           { return &networkAPI{c} }
func (c *Cloud) LoadBalancer() clients.LoadBalancerClient { return &loadBalancerAPI{c} }
func (c *Cloud) Compute() clients.ComputeClient           { return &computeAPI{c} }
func (c *Cloud) Image() clients.ImageClient               { return &imageAPI{c} }
func (c *Cloud) Volume() clients.VolumeClient             { return &volumeAPI{c} }

// Clients returns the clients as a scope would.
func (c *Cloud) Clients() *scope.Clients {
	return &scope.Clients{Network: c.Network(), LoadBalancer: c.LoadBalancer(), Compute: c.Compute(), Image: c.Image(), Volume: c.Volume(), ProjectID: "fake-project",
		CloudKey: fmt.Sprintf("fake-%p", c)}
}

// Factory returns a scope.Factory that hands out this cloud whatever the identityRef, as long as
// there is one.
func (c *Cloud) Factory() scope.Factory { return factory{c} }

// SetLeavePopulatedChildrenPending turns Options.LeavePopulatedChildrenPending on or off for the
// load balancers created from now on.
func (c *Cloud) SetLeavePopulatedChildrenPending(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.opts.LeavePopulatedChildrenPending = on
}

// Calls returns how many calls each operation received (failed ones included).
func (c *Cloud) Calls() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.calls))
	for k, v := range c.calls {
		out[k] = v
	}
	return out
}

// TotalCalls is the sum of Calls.
func (c *Cloud) TotalCalls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	total := 0
	for _, v := range c.calls {
		total += v
	}
	return total
}

// ResetCalls sets every call count back to zero.
func (c *Cloud) ResetCalls() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = map[string]int{}
}

func (c *Cloud) newID(kind string) string {
	c.ids++
	// A UUID, as OpenStack's are (the CRDs check the format); the second group tells the kind.
	var tag uint16
	for _, r := range kind {
		tag = tag*31 + uint16(r)
	}
	return fmt.Sprintf("%08d-%04x-4000-8000-%012d", c.ids, tag, c.ids)
}

// locked runs one API operation: under the cloud's lock, counted, and subject to faults.
func locked[T any](c *Cloud, op string, f func(*Cloud) (T, error)) (T, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero T
	if err := c.begin(op); err != nil {
		return zero, err
	}
	out, err := f(c)
	if err == nil && c.lastCallLosesResponse {
		return zero, timeoutError(op)
	}
	return out, err
}

// lockedErr is locked for operations that return only an error.
func lockedErr(c *Cloud, op string, f func(*Cloud) error) error {
	_, err := locked(c, op, func(c *Cloud) (struct{}, error) { return struct{}{}, f(c) })
	return err
}

// begin is called by every operation under the lock: it counts the call and applies faults.
func (c *Cloud) begin(op string) error {
	c.calls[op]++
	c.lastCallDrivesToError, c.lastCallLosesResponse, c.lastCallUncommitted = false, false, 0
	for _, f := range c.faults {
		e, err := f.fire(op, c.rand)
		if err != nil {
			return err
		}
		c.lastCallDrivesToError = c.lastCallDrivesToError || e == driveToError
		c.lastCallLosesResponse = c.lastCallLosesResponse || e == loseResponse
		if e == loseResponse {
			c.lastCallUncommitted = max(c.lastCallUncommitted, f.Uncommitted)
		}
	}
	return nil
}

func fmtSscanf(version string, major, minor *int) (int, error) {
	return fmt.Sscanf(strings.TrimPrefix(version, "v"), "%d.%d", major, minor)
}

// httpError is what gophercloud returns for an unexpected HTTP status, so callers can use
// gophercloud.ResponseCodeIs on the fake's errors as on the real ones.
func httpError(status int, format string, args ...any) error {
	return gophercloud.ErrUnexpectedResponseCode{
		Actual: status,
		Body:   []byte(fmt.Sprintf(`{"faultstring": %q}`, fmt.Sprintf(format, args...))),
	}
}

func notFound(kind, id string) error {
	return httpError(http.StatusNotFound, "%s %s could not be found", kind, id)
}

// listQuery renders a gophercloud list options value into the query string the real client would
// send, by calling its To...ListQuery method.
func listQuery(opts any) (url.Values, error) {
	if opts == nil {
		return url.Values{}, nil
	}
	v := reflect.ValueOf(opts)
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return url.Values{}, nil
	}
	for i := 0; i < v.NumMethod(); i++ {
		name := v.Type().Method(i).Name
		if !strings.HasPrefix(name, "To") || !strings.HasSuffix(name, "Query") {
			continue
		}
		out := v.Method(i).Call(nil)
		if len(out) != 2 {
			continue
		}
		if err, _ := out[1].Interface().(error); err != nil {
			return nil, err
		}
		q, err := url.ParseQuery(strings.TrimPrefix(out[0].String(), "?"))
		if err != nil {
			return nil, err
		}
		return q, nil
	}
	// Option structs without a method (security groups, rules) are turned into a query by
	// gophercloud itself, from their q: tags.
	u, err := gophercloud.BuildQueryString(opts)
	if err != nil {
		return nil, fmt.Errorf("fake: %T: %w", opts, err)
	}
	return u.Query(), nil
}

// ignoredQueryKeys are paging and field-selection keys: they do not filter.
var ignoredQueryKeys = map[string]bool{"limit": true, "marker": true, "sort_key": true, "sort_dir": true, "fields": true, "page_reverse": true}

// matches reports whether an object, seen as its JSON plus extra attributes, passes the filters.
func matches(obj any, extra map[string]any, q url.Values) bool {
	raw, _ := json.Marshal(obj)
	decoded := map[string]any{}
	_ = json.Unmarshal(raw, &decoded)
	// Some gophercloud structs leave ID and Name untagged (decoding is case-insensitive), so
	// compare field names in lower case.
	fields := make(map[string]any, len(decoded)+len(extra))
	for k, v := range decoded {
		fields[strings.ToLower(k)] = v
	}
	for k, v := range extra {
		fields[k] = v
	}
	tags := toStrings(fields["tags"])
	for key, values := range q {
		if ignoredQueryKeys[key] {
			continue
		}
		for _, want := range values {
			if !matchOne(fields, tags, key, want) {
				return false
			}
		}
	}
	return true
}

func matchOne(fields map[string]any, tags []string, key, want string) bool {
	split := strings.Split(want, ",")
	hasAll := func() bool {
		for _, t := range split {
			if !slices.Contains(tags, t) {
				return false
			}
		}
		return true
	}
	hasAny := func() bool {
		return slices.ContainsFunc(split, func(t string) bool { return slices.Contains(tags, t) })
	}
	switch key {
	case "tags":
		return hasAll()
	case "tags-any":
		return hasAny()
	case "not-tags":
		return !hasAll()
	case "not-tags-any":
		return !hasAny()
	case "fixed_ips":
		attr, value, _ := strings.Cut(want, "=")
		for _, ip := range asSlice(fields["fixed_ips"]) {
			if m, ok := ip.(map[string]any); ok && fmt.Sprint(m[attr]) == value {
				return true
			}
		}
		return false
	}
	got, ok := fields[key]
	if !ok {
		return false
	}
	return fmt.Sprint(got) == want
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func toStrings(v any) []string {
	var out []string
	for _, x := range asSlice(v) {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

// filter returns the objects that match the list options, in creation order.
func filter[T any](objs []*T, opts any, extra func(*T) map[string]any) ([]T, error) {
	q, err := listQuery(opts)
	if err != nil {
		return nil, err
	}
	out := []T{}
	for _, o := range objs {
		var e map[string]any
		if extra != nil {
			e = extra(o)
		}
		if matches(o, e, q) {
			out = append(out, *o)
		}
	}
	return out, nil
}

// store keeps objects by ID in creation order.
type store[T any] struct {
	order []string
	byID  map[string]*T
}

func newStore[T any]() store[T] { return store[T]{byID: map[string]*T{}} }

func (s *store[T]) add(id string, v *T) {
	s.order = append(s.order, id)
	s.byID[id] = v
}

func (s *store[T]) get(id string) (*T, bool) {
	v, ok := s.byID[id]
	return v, ok
}

// copyOf returns a copy of the object, or the 404 Neutron or Octavia answers for kind.
func (s *store[T]) copyOf(kind, id string) (*T, error) {
	if v, ok := s.byID[id]; ok {
		return clone(v), nil
	}
	return nil, notFound(kind, id)
}

func (s *store[T]) remove(id string) {
	delete(s.byID, id)
	s.order = slices.DeleteFunc(s.order, func(x string) bool { return x == id })
}

func (s *store[T]) all() []*T {
	out := make([]*T, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, s.byID[id])
	}
	return out
}

func clone[T any](v *T) *T {
	c := *v
	return &c
}
