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

package loadbalancer

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/outcome"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
)

// Memory is what the controller remembers between reconciles: the capabilities of each cloud,
// how many times each load balancer was seen in ERROR, since when it is pending, which clouds
// leave the children of a fully populated load balancer pending, the health monitor settings
// applied to each load balancer's ports, and the floating IPs being
// allocated in the background. It is safe for concurrent use.
// Losing it (a restart) costs a few calls, delays an ERROR recovery, and makes the first load
// balancer created on such a cloud settle its children again; nothing else.
type Memory struct {
	// ErrorInterval is the least time between two observations of a load balancer in ERROR
	// that count towards its recreation: reconciles triggered in quick succession (by status
	// updates, for example) count once. NewMemory sets it to requeue.Error.
	ErrorInterval time.Duration
	// Background runs the work that outlives a reconcile: a floating IP allocated while Octavia
	// builds its load balancer. A go statement when nil; a test that drives the reconcilers step
	// by step gives one that lets it wait for that work.
	Background func(work func())
	// Now is the clock of the unanswered creates' wait (UnansweredCreateWait), which the status
	// records too; time.Now when nil. A test that simulates time gives its own.
	Now func() time.Time

	mu           sync.Mutex
	capabilities map[string]*capabilities
	errorSeen    map[string]*errorObservation
	// pendingSince is when each load balancer was first seen PENDING_* in a row.
	pendingSince map[string]time.Time
	// stepwise are the clouds (by cloud key) whose Octavia was seen leaving the children of a
	// fully populated load balancer pending: their load balancers are created alone, and their
	// listeners, pools and monitors one by one.
	stepwise map[string]bool
	// allocations are the floating IPs allocated in the background for load balancers Octavia
	// is still creating, by load balancer ID, until a reconcile takes the result.
	allocations map[string]*allocation
	// owners are the marks (owner tags) seen on load balancers, by ID: what verified reads once.
	owners map[string]string
	// monitors are the health monitor settings applied, by load balancer ID and port.
	monitors map[string]infrav1.APIServerLoadBalancerMonitor
	// unanswered are the creates that got no answer (a timeout), by cloud key and load balancer
	// name, with when they were sent: Octavia may still make the load balancer.
	unanswered map[string]time.Time
}

// allocation is a floating IP being allocated (done false), or allocated (fip) or not (fip
// nil), with the description that marks it.
type allocation struct {
	description string
	done        bool
	fip         *floatingips.FloatingIP
}

type errorObservation struct {
	count int
	last  time.Time
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory {
	return &Memory{ErrorInterval: requeue.Error, capabilities: map[string]*capabilities{}, errorSeen: map[string]*errorObservation{},
		pendingSince: map[string]time.Time{}, stepwise: map[string]bool{}, allocations: map[string]*allocation{}, owners: map[string]string{},
		unanswered: map[string]time.Time{}}
}

// createsStepwise says whether load balancers of cloud are created alone, their children one by
// one, rather than fully populated.
func (m *Memory) createsStepwise(cloud string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stepwise[cloud]
}

// learnStepwise records that cloud's Octavia leaves the children of a fully populated load
// balancer pending. It reports whether this is news.
func (m *Memory) learnStepwise(cloud string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	news := !m.stepwise[cloud]
	m.stepwise[cloud] = true
	return news
}

// seenInError records an observation of a load balancer in ERROR and returns how many
// observations, at least ErrorInterval apart, were made so far.
func (m *Memory) seenInError(id string, now time.Time) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	o := m.errorSeen[id]
	if o == nil {
		o = &errorObservation{}
		m.errorSeen[id] = o
	}
	if o.count == 0 || now.Sub(o.last) >= m.ErrorInterval {
		o.count++
		o.last = now
	}
	return o.count
}

// pendingFor records that a load balancer is pending and returns for how long it has been.
func (m *Memory) pendingFor(id string, now time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	since, ok := m.pendingSince[id]
	if !ok {
		m.pendingSince[id] = now
		return 0
	}
	return now.Sub(since)
}

func (m *Memory) forgetPending(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.pendingSince, id)
}

// startAllocation records that a floating IP is being allocated for load balancer id. It
// returns false when one is already, or when an earlier one's result was not taken yet.
func (m *Memory) startAllocation(id, description string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.allocations[id] != nil {
		return false
	}
	m.allocations[id] = &allocation{description: description}
	return true
}

// allocating tells whether a floating IP whose description matches is still being allocated,
// and forgets the finished allocations that match (their load balancers are being removed).
func (m *Memory) allocating(matches func(description string) bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	busy := false
	for id, a := range m.allocations {
		switch {
		case !matches(a.description):
		case a.done:
			delete(m.allocations, id)
		default:
			busy = true
		}
	}
	return busy
}

// background runs work in the background (see Background).
func (m *Memory) background(work func()) {
	if m.Background != nil {
		m.Background(work)
		return
	}
	go func() {
		_ = outcome.Run("a background allocation", work) // the work finishes its allocation either way
	}()
}

func (m *Memory) finishAllocation(id string, fip *floatingips.FloatingIP) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if a := m.allocations[id]; a != nil {
		a.done, a.fip = true, fip
	}
}

// allocationOf is the state of the background allocation for load balancer id (nil when none);
// a finished one is forgotten when take is set.
func (m *Memory) allocationOf(id string, take bool) *allocation {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.allocations[id]
	if a == nil {
		return nil
	}
	if take && a.done {
		delete(m.allocations, id)
	}
	c := *a
	return &c
}

// owns says whether load balancer id was seen carrying the mark tag.
func (m *Memory) owns(id, tag string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.owners[id] == tag
}

// learnOwner records that load balancer id carries the mark tag.
func (m *Memory) learnOwner(id, tag string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.owners[id] = tag
}

func (m *Memory) forgetError(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.errorSeen, id)
}

// forgetMonitors drops what was applied to the monitors of load balancer id, once it is deleted.
func (m *Memory) forgetMonitors(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for key := range m.monitors {
		if strings.HasPrefix(key, id+"/") {
			delete(m.monitors, key)
		}
	}
}

// monitorApplied are the settings applied to the health monitor of load balancer id's port.
func (m *Memory) monitorApplied(id string, port int) (infrav1.APIServerLoadBalancerMonitor, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	got, ok := m.monitors[id+"/"+strconv.Itoa(port)]
	return got, ok
}

func (m *Memory) appliedMonitor(id string, port int, settings infrav1.APIServerLoadBalancerMonitor) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.monitors == nil {
		m.monitors = map[string]infrav1.APIServerLoadBalancerMonitor{}
	}
	m.monitors[id+"/"+strconv.Itoa(port)] = settings
}

// forgetMonitor forgets the monitor applied to port of load balancer id: it was deleted.
func (m *Memory) forgetMonitor(id string, port int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.monitors, id+"/"+strconv.Itoa(port))
}

// UnansweredCreateWait is how long after sending a create that got no answer the controller
// looks for what it may have made, rather than create again: an Octavia API busy with many
// creates commits one well after the client gave up on it (its request timeout is 60 s; the
// API's own worker timeout is typically longer).
const UnansweredCreateWait = 3 * time.Minute

// now is the time on the memory's clock.
func (m *Memory) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// createUnanswered remembers that the create of load balancer name on cloud, sent at sent, got
// no answer.
func (m *Memory) createUnanswered(cloud, name string, sent time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.unanswered[cloud+"/"+name] = sent
}

// awaitsUnanswered returns when an unanswered create of load balancer name on cloud was sent,
// while it is less than UnansweredCreateWait ago; false otherwise (and the create is forgotten).
func (m *Memory) awaitsUnanswered(cloud, name string, now time.Time) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sent, ok := m.unanswered[cloud+"/"+name]
	if ok && now.Sub(sent) < UnansweredCreateWait {
		return sent, true
	}
	delete(m.unanswered, cloud+"/"+name)
	return time.Time{}, false
}

// forgetUnanswered forgets the unanswered create of load balancer name on cloud: it was found,
// or created again.
func (m *Memory) forgetUnanswered(cloud, name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.unanswered, cloud+"/"+name)
}
