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
	"fmt"
	"slices"
	"strings"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// Floating IPs carry their mark in their description (Neutron takes no tags in the create call,
// and a floating IP is found again by it): one rule for every path that finds one (the API server
// address of a cluster without a load balancer, a load balancer's address, the address of a
// cluster taken over from upstream CAPO, the address a control plane machine holds).

const (
	// FloatingIPMarkPrefix begins this provider's marks of the floating IPs it allocates: a
	// cluster's API server address, or a load balancer's.
	FloatingIPMarkPrefix = "Cluster API OpenStack provider: "
	// UpstreamMarkPrefix begins upstream CAPO's descriptions of what it made for a cluster,
	// floating IPs included.
	UpstreamMarkPrefix = "Created by cluster-api-provider-openstack cluster "
)

// FloatingIPMarks are the descriptions that make a floating IP one owner's, for one purpose.
type FloatingIPMarks struct {
	// Ours is the description this provider gives the address it allocates for the purpose.
	Ours string
	// TakenOver are the descriptions of an address that becomes this purpose's, and is marked:
	// what upstream CAPO gave the address it allocated for the same purpose and owner, and what
	// this provider gave it for the owner's former shape (the single load balancer's address,
	// which the first zone's load balancer keeps across a migration, and back).
	TakenOver []string
	// Unrecorded are the descriptions upstream CAPO gave the address it allocated for the same
	// purpose and owner, when the operator recorded no takeover of the owner: such an address is
	// never taken, changed or released, and the owner is told (TakeoverNotRecorded).
	Unrecorded []string
}

// Upstream adds upstream CAPO's descriptions of the address to marks: taken over when the
// operator recorded the owner's takeover (Owner.Takeover), else unrecorded.
func (m FloatingIPMarks) Upstream(takeover bool, descriptions ...string) FloatingIPMarks {
	if takeover {
		m.TakenOver = append(slices.Clone(m.TakenOver), descriptions...)
	} else {
		m.Unrecorded = append(slices.Clone(m.Unrecorded), descriptions...)
	}
	return m
}

// UpstreamDescription is the description upstream CAPO gives what it makes for Cluster
// namespace/cluster, floating IPs included.
func UpstreamDescription(namespace, cluster string) string {
	return UpstreamMarkPrefix + namespace + "-" + cluster
}

// FloatingIP is a floating IP found in the cloud, as the rule reads it.
type FloatingIP struct {
	ID, Address, Description string
}

// ClaimFloatingIP says what fip is for the purpose marks names: Ours when it carries marks.Ours;
// Upstream when it carries one of marks.TakenOver (it is taken over: its description becomes
// marks.Ours); Unrecorded when it carries one of marks.Unrecorded; Foreign when it carries any other mark of this provider or of upstream CAPO
// (another cluster's address, or another purpose's), with Owner what the mark names; Unclaimed
// when it carries none (a person's address, or another tool's).
func ClaimFloatingIP(fip FloatingIP, marks FloatingIPMarks) Candidate {
	c := Candidate{ID: fip.ID, Name: fip.Address}
	switch d := fip.Description; {
	case d == marks.Ours:
		c.Claim = Ours
	case d != "" && slices.Contains(marks.TakenOver, d):
		c.Claim = Upstream
	case d != "" && slices.Contains(marks.Unrecorded, d):
		c.Claim = Unrecorded
	default:
		for _, prefix := range []string{FloatingIPMarkPrefix, descriptionPrefix, UpstreamMarkPrefix} {
			if rest, ok := strings.CutPrefix(d, prefix); ok {
				c.Claim, c.Owner = Foreign, strings.TrimPrefix(rest, "for ")
				if prefix == UpstreamMarkPrefix {
					c.Owner = "upstream CAPO's cluster " + rest
				}
			}
		}
	}
	return c
}

// ChooseFloatingIP is the floating IP to use among those found for one purpose: listed by
// marks.Ours, or by an address (userNamed: the address the user gave, the endpoint's host, or what
// is on a load balancer's own VIP port). It is the one that carries marks.Ours, else one of
// marks.TakenOver, else, only where userNamed, the one that carries no mark: the caller says
// what that one is (the user's own address, used as it is and never marked or released; or the
// address already on the load balancer's VIP, adopted). One that carries another mark is never
// taken: the answer is an error naming the holder. Two alike are Duplicates. index is -1 when
// none is to be used (the caller allocates one), and claim is the chosen one's.
func ChooseFloatingIP(found []FloatingIP, marks FloatingIPMarks, userNamed bool) (index int, claim Claim, err error) {
	var unmarked []int
	for i, fip := range found {
		switch c := ClaimFloatingIP(fip, marks); c.Claim {
		case Foreign:
			return -1, Foreign, floatingIPElsewhere(c)
		case Unrecorded:
			return -1, Unrecorded, NotRecorded("floating IP", c)
		case Unclaimed:
			unmarked = append(unmarked, i)
		}
	}
	chosen, err := Find("floating IP", marks.Ours, found, func(f *FloatingIP) Candidate { return ClaimFloatingIP(*f, marks) })
	if err != nil {
		return -1, Unclaimed, err
	}
	for i := range found {
		if &found[i] == chosen {
			return i, ClaimFloatingIP(found[i], marks).Claim, nil
		}
	}
	switch {
	case !userNamed || len(unmarked) == 0:
		return -1, Unclaimed, nil
	case len(unmarked) > 1:
		alike := make([]Candidate, len(unmarked))
		for j, i := range unmarked {
			alike[j] = ClaimFloatingIP(found[i], marks)
		}
		return -1, Unclaimed, Duplicates("floating IP", found[unmarked[0]].Address, alike)
	}
	return unmarked[0], Unclaimed, nil
}

// floatingIPElsewhere is the error for a floating IP another object's mark claims.
func floatingIPElsewhere(c Candidate) *report.SpecError {
	return &report.SpecError{Reason: infrav1.ResourceOwnedElsewhereReason, Message: fmt.Sprintf(
		"floating IP %s (%s) carries the mark of %s: it is never taken, changed or released for this cluster; give it another address", c.Name, c.ID, c.Owner)}
}
