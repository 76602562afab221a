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
	"context"
	"errors"
	"sync"
	"time"
)

// The workers' share of one tenant (a namespace: the trust boundary, whatever credentials it
// holds): the reconciles of its objects that reach OpenStack hold at most half of a controller's
// workers at once, and one worker while it is slow (one of its reconciles has run, or ran,
// longer than slowReconcile within the last slowFor); slow tenants together hold at most half of
// the workers. A reconcile over the share requeues a second later, changing nothing. So tenants
// whose endpoints answer slowly, or not at all, cannot hold the workers every other tenant's
// reconciles (DNS failover included) need, however many objects or Secrets they make.

const (
	// slowReconcile is how long a reconcile may take before its tenant counts as slow.
	slowReconcile = 30 * time.Second
	// slowFor is how long a tenant counts as slow after a slow reconcile ends: longer than a
	// reconcile may last (reconcileDeadline), so that a tenant whose every reconcile runs until
	// the deadline stays slow.
	slowFor = 2 * reconcileDeadline
)

// errCredentialBusy: the tenant's reconciles hold their share of the workers.
var errCredentialBusy = errors.New("the reconciles of this namespace's objects hold their share of the workers")

// workerShare counts the workers each tenant holds.
type workerShare struct {
	// workers is the controller's number of workers (MaxConcurrentReconciles); 0 means no limit.
	workers int
	now     func() time.Time

	mu sync.Mutex
	// held are, per tenant, the places taken and when each was.
	held      map[string]map[int]time.Time
	next      int
	slowUntil map[string]time.Time
}

func (s *workerShare) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// slow says whether key counts as slow at now; call with mu held.
func (s *workerShare) slow(key string, now time.Time) bool {
	if until, ok := s.slowUntil[key]; ok {
		if now.Before(until) {
			return true
		}
		delete(s.slowUntil, key)
	}
	for _, start := range s.held[key] {
		if now.Sub(start) > slowReconcile {
			return true
		}
	}
	return false
}

// enter takes one of key's places. ok is false when key holds its share already; otherwise
// leave gives the place back, and notes a slow reconcile.
func (s *workerShare) enter(key string) (leave func(), ok bool) {
	if s == nil || s.workers <= 0 || key == "" {
		return func() {}, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock()
	if s.held == nil {
		s.held, s.slowUntil = map[string]map[int]time.Time{}, map[string]time.Time{}
	}
	half := max(1, s.workers/2)
	n := len(s.held[key])
	if n >= half {
		return nil, false
	}
	if s.slow(key, now) {
		if n >= 1 {
			return nil, false
		}
		slowHeld := 0
		for k, places := range s.held {
			if s.slow(k, now) {
				slowHeld += len(places)
			}
		}
		if slowHeld >= half {
			return nil, false
		}
	}
	if s.held[key] == nil {
		s.held[key] = map[int]time.Time{}
	}
	id := s.next
	s.next++
	s.held[key][id] = now
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			end := s.clock()
			if end.Sub(now) > slowReconcile {
				s.slowUntil[key] = end.Add(slowFor)
			}
			delete(s.held[key], id)
			if len(s.held[key]) == 0 {
				delete(s.held, key)
			}
		})
	}, true
}

// leavesKey carries, in a reconcile's context, what to run when its phases end.
type leavesKey struct{}

type leaves struct {
	mu  sync.Mutex
	fns []func()
}

// withLeaves returns a context in which admit may register a place to give back, and the function
// that gives back every place registered: call it when the phases end.
func withLeaves(ctx context.Context) (context.Context, func()) {
	l := &leaves{}
	return context.WithValue(ctx, leavesKey{}, l), func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, fn := range l.fns {
			fn()
		}
		l.fns = nil
	}
}

// admit takes a place of key's share for the reconcile of ctx, given back when its phases end;
// errCredentialBusy when key holds its share.
func (s *workerShare) admit(ctx context.Context, key string) error {
	leave, ok := s.enter(key)
	if !ok {
		return errCredentialBusy
	}
	l, _ := ctx.Value(leavesKey{}).(*leaves)
	if l == nil {
		// Not in a reconcile's phases: nothing holds a worker.
		leave()
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fns = append(l.fns, leave)
	return nil
}
