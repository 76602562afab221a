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

package report

import (
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

func TestSpecErrorIsFoundThroughWrapping(t *testing.T) {
	g := NewWithT(t)
	err := fmt.Errorf("resolving: %w", &SpecError{Reason: "NetworkNotFound", Message: "spec.network.id: network n does not exist"})
	specErr, ok := AsSpecError(err)
	g.Expect(ok).To(BeTrue())
	g.Expect(specErr.Reason).To(Equal("NetworkNotFound"))
	_, ok = AsSpecError(fmt.Errorf("timeout"))
	g.Expect(ok).To(BeFalse())
}

func TestActionIsTheVerbOfTheReason(t *testing.T) {
	g := NewWithT(t)
	for reason, want := range map[string]string{
		"CreatedLoadBalancer": "Create", "DeletedPort": "Delete", "ReleasedFloatingIP": "Delete", "RenamedPool": "Rename",
		"UpdatedListener": "Update", "AdoptedNetwork": "Adopt", "AssociatedFloatingIP": "Associate", "AddedRouterInterface": "Add",
		"LoadBalancerError": "Reconcile",
	} {
		g.Expect(action(reason)).To(Equal(want), reason)
	}
}

// A service may run without a recorder (nil), or with one that has no event recorder or no
// object (tests, the benchmarks): nothing is recorded then, and nothing fails; with both, the
// event names the resource and the log line goes to the logger.
func TestARecorderRecordsOnlyWhereItHasASink(t *testing.T) {
	g := NewWithT(t)
	var nilRecorder *Recorder
	g.Expect(func() { nilRecorder.Changed("CreatedNetwork", Resource{Kind: "Network"}, "Created network %s", "n") }).NotTo(Panic())

	var logged []string
	log := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})
	events := record.NewFakeRecorder(10)
	eventsOnly := &eventsRecorder{FakeRecorder: events}
	NewRecorder(eventsOnly, nil, log).Warn("LoadBalancerError", Resource{}, "in ERROR")
	g.Expect(events.Events).To(BeEmpty(), "no object: no event")
	g.Expect(logged).To(HaveLen(1), "but the log has it")
	g.Expect(logged[0]).To(ContainSubstring(`"reason"="LoadBalancerError"`))

	osc := &corev1.ConfigMap{}
	NewRecorder(eventsOnly, osc, logr.Discard()).Changed("CreatedNetwork", Resource{Kind: "Network", Name: "n", ID: "id"}, "Created network %s", "n")
	g.Expect(events.Events).To(Receive(Equal("Normal CreatedNetwork Created network n")))
}

// eventsRecorder turns client-go's old fake recorder into the events API's recorder.
type eventsRecorder struct{ *record.FakeRecorder }

func (r *eventsRecorder) Eventf(regarding, _ runtime.Object, eventType, reason, _, note string, args ...any) {
	r.FakeRecorder.Eventf(regarding, eventType, reason, note, args...)
}

func TestRedactRemovesURLCredentials(t *testing.T) {
	g := NewWithT(t)
	for in, want := range map[string]string{
		`identity Secret ns/s: auth_url: parse "http://user:secret@keystone:50x0/v3": invalid port`: `identity Secret ns/s: auth_url: parse "http://<redacted>@keystone:50x0/v3": invalid port`,
		"Post https://admin:p%40ss@10.0.0.1:5000/v3/auth/tokens: EOF":                               "Post https://<redacted>@10.0.0.1:5000/v3/auth/tokens: EOF",
		"no URL here, just user@example.com":                                                        "no URL here, just user@example.com",
		"http://keystone:5000/v3 without credentials":                                               "http://keystone:5000/v3 without credentials",
	} {
		g.Expect(Redact(in)).To(Equal(want), in)
	}
}
