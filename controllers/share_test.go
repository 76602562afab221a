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
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestATenantHoldsAtMostItsShareOfTheWorkers(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	s := &workerShare{workers: 10, now: func() time.Time { return now }}

	// Half the workers for one tenant; another tenant is not held back by it.
	var leaves []func()
	for range 5 {
		leave, ok := s.enter("hostile")
		g.Expect(ok).To(BeTrue())
		leaves = append(leaves, leave)
	}
	_, ok := s.enter("hostile")
	g.Expect(ok).To(BeFalse(), "a sixth worker for one tenant")
	victim, ok := s.enter("victim")
	g.Expect(ok).To(BeTrue())
	victim()

	// Its reconciles still run past slowReconcile: it is slow now, before any of them ends.
	now = now.Add(slowReconcile + time.Second)
	leaves[0]()
	leaves[0]() // given back once only
	_, ok = s.enter("hostile")
	g.Expect(ok).To(BeFalse(), "a slow tenant with reconciles in flight gets no other worker")
	for _, leave := range leaves[1:] {
		leave()
	}
	one, ok := s.enter("hostile")
	g.Expect(ok).To(BeTrue())
	_, ok = s.enter("hostile")
	g.Expect(ok).To(BeFalse(), "a slow tenant holds one worker")
	one()
	now = now.Add(slowFor - time.Second)
	again, ok := s.enter("hostile")
	g.Expect(ok).To(BeTrue())
	_, ok = s.enter("hostile")
	g.Expect(ok).To(BeFalse(), "still slow for slowFor after its last slow reconcile")
	again()
	now = now.Add(2 * time.Second)
	g.Expect(s.slow("hostile", now)).To(BeFalse())
	g.Expect(s.slowUntil).To(BeEmpty(), "nothing is kept of a tenant no longer slow")

	// Slow tenants together hold at most half of the workers.
	var first []func()
	for _, key := range []string{"a", "b", "c", "d", "e", "f"} {
		leave, ok := s.enter(key)
		g.Expect(ok).To(BeTrue())
		first = append(first, leave)
	}
	now = now.Add(slowReconcile + time.Second)
	for _, leave := range first {
		leave()
	}
	var slowLeaves []func()
	for _, key := range []string{"a", "b", "c", "d", "e"} {
		leave, ok := s.enter(key)
		g.Expect(ok).To(BeTrue(), key)
		slowLeaves = append(slowLeaves, leave)
	}
	_, ok = s.enter("f")
	g.Expect(ok).To(BeFalse(), "a sixth slow tenant, with half the workers held by slow ones")
	_, ok = s.enter("victim")
	g.Expect(ok).To(BeTrue(), "a tenant that is not slow still gets a worker")
	slowLeaves[0]()
	_, ok = s.enter("f")
	g.Expect(ok).To(BeTrue())

	// No limit without a number of workers, or for an object without a namespace.
	_, ok = (&workerShare{}).enter("x")
	g.Expect(ok).To(BeTrue())
}

func TestAPlaceIsGivenBackWhenThePhasesEnd(t *testing.T) {
	g := NewWithT(t)
	s := &workerShare{workers: 4}
	ctx, leave := withLeaves(context.Background())
	g.Expect(s.admit(ctx, "k")).To(Succeed())
	g.Expect(s.admit(context.Background(), "k")).To(Succeed(), "outside a reconcile's phases, given back at once")
	g.Expect(s.held["k"]).To(HaveLen(1))
	g.Expect(s.admit(ctx, "k")).To(Succeed())
	g.Expect(s.admit(ctx, "k")).To(MatchError(errCredentialBusy))
	leave()
	g.Expect(s.held).To(BeEmpty())
	g.Expect(authBusy(errCredentialBusy)).To(BeTrue(), "requeued without touching the status")
}
