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

package outcome

import (
	"errors"
	"testing"

	. "github.com/onsi/gomega"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
)

func TestFailed(t *testing.T) {
	g := NewWithT(t)
	spec := &report.SpecError{Reason: infrav1.NetworkNotFoundReason, Message: "spec.network.id: network x does not exist"}
	g.Expect(Failed(spec)).To(Equal(Outcome{Reason: infrav1.NetworkNotFoundReason, Message: spec.Message, RequeueAfter: requeue.Config, Err: spec, Stop: true}),
		"the user's to fix: looked at again after a minute")
	g.Expect(Failed(spec).SpecError()).To(BeTrue())
	cloud := errors.New("HTTP 503")
	g.Expect(Failed(cloud)).To(Equal(Outcome{Reason: infrav1.OpenStackErrorReason, Err: cloud, Stop: true}), "the pacer backs off")
	g.Expect(Failed(cloud).SpecError()).To(BeFalse())
}

func TestRunTurnsAPanicIntoTheStepsError(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Run("the router phase", func() {})).To(Succeed())
	err := Run("the router phase", func() {
		var m map[string]*int
		_ = *m["missing"] // a nil pointer, as an unexpected answer would give
	})
	g.Expect(err).To(MatchError(ContainSubstring("the router phase stopped on an internal error (runtime error: invalid memory address or nil pointer dereference)")))
}
