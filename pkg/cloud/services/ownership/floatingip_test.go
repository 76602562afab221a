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

package ownership

import (
	"testing"

	. "github.com/onsi/gomega"
)

// One rule for every floating IP: what each description is to an owner, and which address is
// used, refused or allocated.
func TestChooseFloatingIP(t *testing.T) {
	marks := FloatingIPMarks{Ours: FloatingIPMarkPrefix + "API server of ns/c", TakenOver: []string{UpstreamDescription("ns", "c")}}
	fip := func(id, description string) FloatingIP {
		return FloatingIP{ID: id, Address: "203.0.113.7", Description: description}
	}
	for _, tc := range []struct {
		name      string
		found     []FloatingIP
		userNamed bool
		want      string // the chosen ID, "" for none
		claim     Claim
		err       string
		// unrecorded: the operator recorded no takeover of the owner.
		unrecorded bool
	}{
		{name: "ours", found: []FloatingIP{fip("a", marks.Ours)}, want: "a", claim: Ours},
		{name: "upstream's of this cluster: taken over", found: []FloatingIP{fip("a", UpstreamDescription("ns", "c"))}, userNamed: true, want: "a", claim: Upstream},
		{name: "unmarked, the user named it: the user's own", found: []FloatingIP{fip("a", "team reserve")}, userNamed: true, want: "a", claim: Unclaimed},
		{name: "unmarked, not named by the user: not used", found: []FloatingIP{fip("a", "")}, claim: Unclaimed},
		{name: "nothing found", claim: Unclaimed},
		{name: "another cluster's API server address", found: []FloatingIP{fip("a", FloatingIPMarkPrefix+"API server of team-b/prod")}, userNamed: true,
			claim: Foreign, err: "floating IP 203.0.113.7 (a) carries the mark of API server of team-b/prod"},
		{name: "another cluster's load balancer address", found: []FloatingIP{fip("a", FloatingIPMarkPrefix+"API server load balancer of ns/d in availability zone az1")}, userNamed: true,
			claim: Foreign, err: "carries the mark of API server load balancer of ns/d in availability zone az1"},
		{name: "upstream's address of another cluster", found: []FloatingIP{fip("a", UpstreamDescription("ns", "d"))}, userNamed: true,
			claim: Foreign, err: "carries the mark of upstream CAPO's cluster ns-d"},
		{name: "a resource mark of this provider", found: []FloatingIP{fip("a", descriptionPrefix+"OpenStackCluster ns/d")}, userNamed: true,
			claim: Foreign, err: "carries the mark of OpenStackCluster ns/d"},
		{name: "another's mark beside ours: refused all the same", found: []FloatingIP{fip("a", marks.Ours), fip("b", UpstreamDescription("ns", "d"))},
			claim: Foreign, err: "(b) carries the mark"},
		{name: "two of ours", found: []FloatingIP{fip("a", marks.Ours), fip("b", marks.Ours)}, claim: Unclaimed, err: "2 floating IPs"},
		{name: "two unmarked the user named", found: []FloatingIP{fip("a", ""), fip("b", "")}, userNamed: true, claim: Unclaimed, err: "2 floating IPs"},
		{name: "upstream's of this cluster, no takeover recorded: refused", found: []FloatingIP{fip("a", UpstreamDescription("ns", "c"))}, userNamed: true, unrecorded: true,
			claim: Unrecorded, err: "no takeover of this object is recorded"},
		{name: "ours, no takeover recorded", found: []FloatingIP{fip("a", marks.Ours)}, unrecorded: true, want: "a", claim: Ours},
		{name: "ours wins over an unmarked one", found: []FloatingIP{fip("a", ""), fip("b", marks.Ours)}, userNamed: true, want: "b", claim: Ours},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			m := marks
			if tc.unrecorded {
				m = FloatingIPMarks{Ours: marks.Ours}.Upstream(false, UpstreamDescription("ns", "c"))
			}
			i, claim, err := ChooseFloatingIP(tc.found, m, tc.userNamed)
			g.Expect(claim).To(Equal(tc.claim))
			if tc.err != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.err)))
				g.Expect(i).To(Equal(-1))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			got := ""
			if i >= 0 {
				got = tc.found[i].ID
			}
			g.Expect(got).To(Equal(tc.want))
		})
	}
}
