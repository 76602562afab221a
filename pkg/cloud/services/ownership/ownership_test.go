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
	"errors"
	"strings"
	"testing"
	"time"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

var (
	created = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	prod    = Owner{Kind: "OpenStackCluster", Namespace: "team-a", Name: "prod", Created: created, ProjectID: "p1", Takeover: true}
	// prod, whose takeover the operator did not record.
	unrecorded = Owner{Kind: "OpenStackCluster", Namespace: "team-a", Name: "prod", Created: created, ProjectID: "p1"}
	// A name that joins like prod's with another split: its mark must differ.
	lookalike = Owner{Kind: "OpenStackCluster", Namespace: "team-a-prod", Name: "x", Created: created, ProjectID: "p1"}
	other     = Owner{Kind: "OpenStackCluster", Namespace: "team-b", Name: "prod", Created: created, ProjectID: "p1"}
)

func TestMarks(t *testing.T) {
	if got, want := prod.String(), "OpenStackCluster team-a/prod"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, want := prod.Description(), "Created by the Cluster API OpenStack provider for OpenStackCluster team-a/prod"; got != want {
		t.Errorf("Description() = %q, want %q", got, want)
	}
	tag := prod.Tag()
	if !strings.HasPrefix(tag, "capo-owner-") || len(tag) != len("capo-owner-")+32 || len(tag) > 60 {
		t.Errorf("Tag() = %q: want capo-owner- and 32 hexadecimal digits, at most 60 characters (Neutron's limit)", tag)
	}
	if tag == other.Tag() || tag == lookalike.Tag() || prod.Description() == other.Description() {
		t.Errorf("two owners share a mark: %q %q %q", tag, other.Tag(), lookalike.Tag())
	}
	if again := (Owner{Kind: "OpenStackCluster", Namespace: "team-a", Name: "prod"}).Tag(); again != tag {
		t.Errorf("the tag depends on more than the owner's kind, namespace and name: %q, then %q", tag, again)
	}
}

func TestClaim(t *testing.T) {
	before := created.Add(-ClockSkew - time.Second)
	withinSkew := created.Add(-ClockSkew + time.Second)
	cases := []struct {
		name      string
		owner     Owner
		r         Resource
		claim     Claim
		ownerName string
	}{
		{name: "our tag", owner: prod, r: Resource{Tags: []string{"x", prod.Tag()}}, claim: Ours},
		{name: "our description", owner: prod, r: Resource{Description: prod.Description()}, claim: Ours},
		{name: "Nova metadata naming us", owner: prod, r: Resource{MarkedFor: prod.String()}, claim: Ours},
		{name: "our tag beside another's description", owner: prod, r: Resource{Tags: []string{prod.Tag()}, Description: other.Description()}, claim: Ours},
		{name: "our mark in another project is not ours: another project may share it into ours", owner: prod, r: Resource{Tags: []string{prod.Tag()}, ProjectID: "p2"}, claim: Unclaimed},
		{name: "our description in another project", owner: prod, r: Resource{Description: prod.Description(), ProjectID: "p2"}, claim: Unclaimed},
		{name: "another's mark in another project: nobody's here", owner: prod, r: Resource{Description: other.Description(), ProjectID: "p2"}, claim: Unclaimed},
		{name: "our mark, the cloud tells no project", owner: prod, r: Resource{Tags: []string{prod.Tag()}}, claim: Ours},
		{name: "metadata naming another", owner: prod, r: Resource{MarkedFor: other.String()}, claim: Foreign, ownerName: other.String()},
		{name: "another's description", owner: prod, r: Resource{Description: other.Description()}, claim: Foreign, ownerName: other.String()},
		{name: "another's tag", owner: prod, r: Resource{Tags: []string{other.Tag()}}, claim: Foreign},
		{name: "another's tag on a resource named like ours", owner: prod, r: Resource{Tags: []string{lookalike.Tag()}, Legacy: true}, claim: Foreign},
		{name: "a description that only starts like a mark is another's", owner: prod, r: Resource{Description: descriptionPrefix + "someone"}, claim: Foreign, ownerName: "someone"},
		{name: "unmarked, named like ours, in our project, younger", owner: prod, r: Resource{Legacy: true, ProjectID: "p1", Created: created.Add(time.Hour)}, claim: Upstream},
		{name: "unmarked, named like ours, younger, no takeover recorded", owner: unrecorded, r: Resource{Legacy: true, ProjectID: "p1", Created: created.Add(time.Hour)}, claim: Unrecorded},
		{name: "unmarked, named like ours, older, no takeover recorded", owner: unrecorded, r: Resource{Legacy: true, ProjectID: "p1", Created: before}, claim: Unclaimed},
		{name: "ours, no takeover recorded", owner: unrecorded, r: Resource{Description: prod.Description(), Legacy: true}, claim: Ours},
		{name: "unmarked, named like ours, within the clock skew", owner: prod, r: Resource{Legacy: true, ProjectID: "p1", Created: withinSkew}, claim: Upstream},
		{name: "unmarked, named like ours, older than the owner", owner: prod, r: Resource{Legacy: true, ProjectID: "p1", Created: before}, claim: Unclaimed},
		{name: "unmarked, named like ours, in another project", owner: prod, r: Resource{Legacy: true, ProjectID: "p2", Created: created.Add(time.Hour)}, claim: Unclaimed},
		{name: "unmarked, named like ours, the cloud tells no project nor time", owner: prod, r: Resource{Legacy: true}, claim: Upstream},
		{name: "unmarked, named like ours, an owner without project nor time", owner: Owner{Kind: "OpenStackCluster", Namespace: "team-a", Name: "prod", Takeover: true}, r: Resource{Legacy: true, ProjectID: "p2", Created: before}, claim: Upstream},
		{name: "unmarked and not named like ours", owner: prod, r: Resource{ProjectID: "p1", Created: created.Add(time.Hour)}, claim: Unclaimed},
		{name: "a description that is no mark", owner: prod, r: Resource{Description: "made by hand", Legacy: true, ProjectID: "p1"}, claim: Upstream},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.r.ID, tc.r.Name = "id-1", "name-1"
			got := tc.owner.Claim(tc.r)
			if got.Claim != tc.claim || got.Owner != tc.ownerName || got.ID != "id-1" || got.Name != "name-1" {
				t.Errorf("Claim() = %+v, want claim %d owner %q with the resource's ID and name", got, tc.claim, tc.ownerName)
			}
		})
	}
}

func TestChoose(t *testing.T) {
	ours := func(id string) Candidate { return Candidate{ID: id, Name: "net", Claim: Ours} }
	upstream := func(id string) Candidate { return Candidate{ID: id, Name: "net", Claim: Upstream} }
	foreign := Candidate{ID: "f", Name: "net", Claim: Foreign, Owner: "OpenStackCluster team-b/prod"}
	unclaimed := Candidate{ID: "u", Name: "net", Claim: Unclaimed}
	notRecorded := Candidate{ID: "n", Name: "net", Claim: Unrecorded}
	cases := []struct {
		name   string
		found  []Candidate
		chosen string // "" for none
		reason string // the SpecError's reason, "" for no error
		msg    string // a part of its message
	}{
		{name: "nothing found", found: nil},
		{name: "only unclaimed: none, the caller creates", found: []Candidate{unclaimed}},
		{name: "ours", found: []Candidate{unclaimed, ours("a")}, chosen: "a"},
		{name: "ours before upstream's", found: []Candidate{upstream("u1"), ours("a")}, chosen: "a"},
		{name: "ours beside another's", found: []Candidate{foreign, ours("a")}, chosen: "a"},
		{name: "upstream's", found: []Candidate{unclaimed, upstream("u1")}, chosen: "u1"},
		{name: "upstream's beside another's", found: []Candidate{foreign, upstream("u1")}, chosen: "u1"},
		{name: "two of ours", found: []Candidate{ours("b"), ours("a")}, reason: infrav1.DuplicateResourcesReason, msg: "2 networks named net (a, b)"},
		{name: "two of upstream's", found: []Candidate{upstream("u2"), upstream("u1")}, reason: infrav1.DuplicateResourcesReason, msg: "(u1, u2)"},
		{name: "one of ours wins over two of upstream's", found: []Candidate{upstream("u2"), ours("a"), upstream("u1")}, chosen: "a"},
		{name: "only another's", found: []Candidate{unclaimed, foreign}, reason: infrav1.ResourceOwnedElsewhereReason, msg: "network net (f) belongs to OpenStackCluster team-b/prod"},
		{name: "only one an unrecorded takeover would adopt: none, and nothing made", found: []Candidate{unclaimed, notRecorded}, reason: infrav1.TakeoverNotRecordedReason, msg: "network net (n) carries no mark"},
		{name: "ours beside one an unrecorded takeover would adopt", found: []Candidate{notRecorded, ours("a")}, chosen: "a"},
		{name: "another's beside one an unrecorded takeover would adopt", found: []Candidate{notRecorded, foreign}, reason: infrav1.ResourceOwnedElsewhereReason},
		{name: "another's, unnamed owner", found: []Candidate{{ID: "f", Name: "net", Claim: Foreign}}, reason: infrav1.ResourceOwnedElsewhereReason, msg: "belongs to another object of this provider"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Choose("network", "net", tc.found)
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("Choose() error = %v", err)
				}
				if id := chosenID(got); id != tc.chosen {
					t.Fatalf("Choose() = %q, want %q", id, tc.chosen)
				}
				return
			}
			var se *report.SpecError
			if !errors.As(err, &se) || se.Reason != tc.reason || !strings.Contains(se.Message, tc.msg) {
				t.Fatalf("Choose() error = %v, want a %s SpecError containing %q", err, tc.reason, tc.msg)
			}
			if got != nil {
				t.Errorf("Choose() chose %q beside its error", got.ID)
			}
		})
	}
}

func chosenID(c *Candidate) string {
	if c == nil {
		return ""
	}
	return c.ID
}

func TestFind(t *testing.T) {
	type net struct{ id, desc string }
	claim := func(n *net) Candidate { return prod.Claim(Resource{ID: n.id, Name: "net", Description: n.desc}) }
	found := []net{{"a", "made by hand"}, {"b", prod.Description()}, {"c", other.Description()}}
	got, err := Find("network", "net", found, claim)
	if err != nil || got == nil || got != &found[1] {
		t.Fatalf("Find() = %v, %v; want the element of found that carries the mark", got, err)
	}
	if got, err := Find("network", "net", found[:1], claim); got != nil || err != nil {
		t.Errorf("Find() of an unmarked resource = %v, %v; want none and no error", got, err)
	}
	if _, err := Find("network", "net", found[2:], claim); err == nil {
		t.Errorf("Find() of another's resource returned no error")
	}
	if !Mine(Candidate{Claim: Ours}) || !Mine(Candidate{Claim: Upstream}) || Mine(Candidate{Claim: Foreign}) || Mine(Candidate{Claim: Unclaimed}) {
		t.Errorf("Mine() must hold for Ours and Upstream only")
	}
}
