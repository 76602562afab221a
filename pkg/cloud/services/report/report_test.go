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
	. "github.com/onsi/gomega"
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

func TestARecorderWithoutSinkRecordsNothing(t *testing.T) {
	var nilRecorder *Recorder
	nilRecorder.Changed("CreatedNetwork", Resource{Kind: "Network"}, "Created network %s", "n")
	NewRecorder(nil, nil, logr.Discard()).Warn("LoadBalancerError", Resource{}, "in ERROR")
}
