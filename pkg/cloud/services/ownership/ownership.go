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
// adopt. Each service reads its own kind's marks into a Claim (a tag, a description, Nova
// metadata: each kind carries the mark it can carry); what to do with the claims is decided here,
// the same way for every kind.
package ownership

import (
	"fmt"
	"slices"
	"strings"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// Claim is what a resource found in the cloud says about who made it.
type Claim int

const (
	// Unclaimed: the resource carries no mark this provider reads, and the takeover rules do
	// not recognise it: it is someone else's (a person's, another tool's) and is never adopted.
	Unclaimed Claim = iota
	// Ours: the resource carries the mark of the object being reconciled.
	Ours
	// Upstream: the resource carries no mark, and the takeover rules recognise it as what
	// upstream CAPO made for the object being reconciled: it is adopted (and marked).
	Upstream
)

// Candidate is a resource found in the cloud, with what its marks say.
type Candidate struct {
	ID, Name string
	Claim    Claim
}

// Choose is the resource to use among those found for one purpose (a cluster's network, a
// zone's load balancer, a machine's server): the one that carries the mark, else the one the
// takeover rules recognise, else none (the caller creates it). Two that qualify alike are never
// a guess: the answer is a DuplicateResources error naming both, for the operator to resolve.
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
	return nil, nil
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

// Mine are the candidates that are this object's: marked, or recognised as upstream's.
func Mine(found []Candidate) []Candidate {
	return slices.DeleteFunc(slices.Clone(found), func(c Candidate) bool { return c.Claim == Unclaimed })
}

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
