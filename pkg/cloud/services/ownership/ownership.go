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

// Package ownership is the one rule by which the services decide whether a resource found in the
// cloud (by name, tag, description or an ID the status recorded) is the one they made, or may
// adopt, change or delete. Every resource the provider makes carries its owner's mark (Owner: a
// tag, or a description, or Nova metadata, whichever the kind can carry in its create call); a
// service reads a resource's marks into a Resource, Owner.Claim says what it is to the owner, and
// Choose decides, the same way for every kind.
package ownership

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// Claim is what a resource found in the cloud says about who made it.
type Claim int

const (
	// Unclaimed: the resource carries no mark, and the takeover rules do not recognise it: it is
	// someone else's (a person's, another tool's) and is never adopted, changed or deleted.
	Unclaimed Claim = iota
	// Ours: the resource carries the mark of the object being reconciled.
	Ours
	// Upstream: the resource carries no mark, and the takeover rules recognise it as what
	// upstream CAPO, or a release of this provider before marks, made for the object being
	// reconciled: it is adopted (and marked).
	Upstream
	// Foreign: the resource carries the mark of another object (another cluster, in this
	// namespace or another, whose resources' names collide with this one's): it is never
	// adopted, changed or deleted, and the object is told.
	Foreign
	// Unrecorded: the resource carries no mark and the takeover rules recognise it, but the
	// operator recorded no takeover of the object (Owner.Takeover): it is never adopted, changed
	// or deleted, and nothing is made beside it; the object is told.
	Unrecorded
)

// Candidate is a resource found in the cloud, with what its marks say.
type Candidate struct {
	ID, Name string
	Claim    Claim
	// Owner is whom a Foreign resource's mark names, when the mark says ("OpenStackCluster
	// team-a/prod"); "" when only a tag says it is another's.
	Owner string
}

// Owner is an object the provider makes resources for: its resources carry its mark.
type Owner struct {
	// Kind, Namespace and Name name the object: OpenStackCluster team-a/prod. Neither a namespace
	// nor a name may contain the slash that joins them, so two objects never share a mark.
	Kind, Namespace, Name string
	// Created is when the object was created: a resource without a mark created before it (less
	// ClockSkew) was not made for it.
	Created time.Time
	// ProjectID is the project of the object's credential: a resource in another project is
	// never its, whatever it carries ("" when Keystone did not say).
	ProjectID string
	// Takeover says the operator recorded a takeover of this object from upstream CAPO
	// (pkg/takeover: the pre-flight's record, which no tenant can write). Without it, a resource
	// that only the takeover rules recognise (Legacy) is never adopted: a tenant could otherwise
	// name an object after a resource it does not own, in time.
	Takeover bool
}

// ClockSkew is how far the clocks of Kubernetes and OpenStack may disagree.
const ClockSkew = 5 * time.Minute

const (
	// tagPrefix begins the tag that marks a resource: "capo-owner-" and 32 hexadecimal digits
	// of the owner's hash (a Neutron tag has 60 characters at most).
	tagPrefix = "capo-owner-"
	// descriptionPrefix begins the description that marks a resource made in one call with it.
	descriptionPrefix = "Created by the Cluster API OpenStack provider for "
)

// String names the owner for people and in descriptions: "OpenStackCluster team-a/prod".
func (o Owner) String() string { return o.Kind + " " + o.Namespace + "/" + o.Name }

// Tag is the owner's mark as a Neutron or Octavia tag.
func (o Owner) Tag() string {
	sum := sha256.Sum256([]byte(o.String()))
	return tagPrefix + hex.EncodeToString(sum[:16])
}

// Description is the owner's mark as a resource's description, for the kinds whose create call
// takes a description but no tags (Neutron's networks, subnets, routers and security groups).
func (o Owner) Description() string { return descriptionPrefix + o.String() }

// Resource is what a service reads of a resource found in the cloud, to claim it.
type Resource struct {
	ID, Name    string
	Tags        []string
	Description string
	// MarkedFor is whom another mark the kind carries names (a server's Nova metadata), in
	// Owner.String's words; "" when none.
	MarkedFor string
	// ProjectID and Created are what the cloud says of the resource; empty when it does not.
	ProjectID string
	Created   time.Time
	// Legacy says the resource is named as upstream CAPO (or a release of this provider before
	// marks) names this owner's, and is marked no other way.
	Legacy bool
}

// Claim says what r is to o. A resource in another project than o's is Unclaimed, whatever it
// carries: marks are text a tenant of any project can write, and another project can share
// resources into o's. Otherwise: Ours when it carries o's mark (its tag, its description, or a
// MarkedFor naming o); Foreign when it carries another owner's; when it carries no mark, is named
// as o's (Legacy), is in o's project and was created after o, Upstream when the operator recorded
// o's takeover and Unrecorded when not; Unclaimed otherwise.
func (o Owner) Claim(r Resource) Candidate {
	c := Candidate{ID: r.ID, Name: r.Name}
	switch {
	case o.ProjectID != "" && r.ProjectID != "" && r.ProjectID != o.ProjectID:
	case slices.Contains(r.Tags, o.Tag()) || r.Description == o.Description() || r.MarkedFor == o.String():
		c.Claim = Ours
	case r.MarkedFor != "":
		c.Claim, c.Owner = Foreign, r.MarkedFor
	case strings.HasPrefix(r.Description, descriptionPrefix):
		c.Claim, c.Owner = Foreign, strings.TrimPrefix(r.Description, descriptionPrefix)
	case slices.ContainsFunc(r.Tags, func(t string) bool { return strings.HasPrefix(t, tagPrefix) }):
		c.Claim = Foreign
	case r.Legacy && (o.ProjectID == "" || r.ProjectID == "" || r.ProjectID == o.ProjectID) &&
		(r.Created.IsZero() || o.Created.IsZero() || !r.Created.Before(o.Created.Add(-ClockSkew))):
		c.Claim = Upstream
		if !o.Takeover {
			c.Claim = Unrecorded
		}
	}
	return c
}

// Choose is the resource to use among those found for one purpose (a cluster's network, a
// zone's load balancer, a machine's server): the one that carries the mark, else the one the
// takeover rules recognise, else none (the caller creates it). Two that qualify alike are never
// a guess: the answer is a DuplicateResources error naming both, for the operator to resolve. A
// resource of the name that carries another owner's mark, with none of this owner's, is a
// ResourceOwnedElsewhere error: names collide, and nothing is made over another's resource. One
// that only an unrecorded takeover would make this owner's is a TakeoverNotRecorded error:
// nothing is made beside it either, so that a cluster switched from upstream CAPO before the
// operator recorded its takeover waits for the record rather than building a second of each.
func Choose(kind, name string, found []Candidate) (*Candidate, error) {
	for _, claim := range []Claim{Ours, Upstream} {
		var alike []Candidate
		for _, c := range found {
			if c.Claim == claim {
				alike = append(alike, c)
			}
		}
		switch len(alike) {
		case 0:
			continue
		case 1:
			return &alike[0], nil
		default:
			return nil, Duplicates(kind, name, alike)
		}
	}
	for _, c := range found {
		if c.Claim == Foreign {
			return nil, OwnedElsewhere(kind, c)
		}
	}
	for _, c := range found {
		if c.Claim == Unrecorded {
			return nil, NotRecorded(kind, c)
		}
	}
	return nil, nil
}

// NotRecorded is the error for a resource only an unrecorded takeover would make the object's.
func NotRecorded(kind string, c Candidate) *report.SpecError {
	return &report.SpecError{Reason: infrav1.TakeoverNotRecordedReason, Message: fmt.Sprintf(
		"%s %s (%s) carries no mark and is named as upstream CAPO names this object's, but no takeover of this object is recorded: nothing of it is adopted, changed or deleted, and nothing is made beside it. If upstream CAPO made it for this object, record the takeover (go run ./cmd/preflight --record-takeover, docs/switching-from-upstream.md); if not, rename this object", kind, c.Name, c.ID)}
}

// OwnedElsewhere is the error for a resource another object's mark claims.
func OwnedElsewhere(kind string, c Candidate) *report.SpecError {
	whose := "another object of this provider"
	if c.Owner != "" {
		whose = c.Owner
	}
	return &report.SpecError{Reason: infrav1.ResourceOwnedElsewhereReason, Message: fmt.Sprintf(
		"%s %s (%s) belongs to %s, not to this one: their names collide, and nothing of it is adopted, changed or deleted; rename this object", kind, c.Name, c.ID, whose)}
}

// Duplicates is the error for several resources of one kind that are all this object's for one
// purpose: deleting one of them is the operator's decision.
func Duplicates(kind, name string, alike []Candidate) *report.SpecError {
	ids := make([]string, len(alike))
	for i, c := range alike {
		ids[i] = c.ID
	}
	slices.Sort(ids)
	return &report.SpecError{Reason: infrav1.DuplicateResourcesReason, Message: fmt.Sprintf(
		"%d %ss named %s (%s) are all this object's: delete all but one", len(alike), kind, name, strings.Join(ids, ", "))}
}

// Mine says whether a claim makes a resource this object's: marked, or recognised as upstream's.
func Mine(c Candidate) bool { return c.Claim == Ours || c.Claim == Upstream }

// Find applies Choose to resources of one kind found in the cloud, reading each one's claim
// with claim, and returns the one chosen (nil when none is this object's).
func Find[T any](kind, name string, found []T, claim func(*T) Candidate) (*T, error) {
	candidates := make([]Candidate, len(found))
	for i := range found {
		candidates[i] = claim(&found[i])
	}
	chosen, err := Choose(kind, name, candidates)
	if chosen == nil || err != nil {
		return nil, err
	}
	for i := range found {
		if candidates[i].ID == chosen.ID {
			return &found[i], nil
		}
	}
	return nil, nil
}
