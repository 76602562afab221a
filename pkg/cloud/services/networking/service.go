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

// Package networking reconciles a cluster's Neutron resources: the external network, the cluster
// network with its subnets, and its router. It talks to OpenStack only through
// clients.NetworkClient and never waits: each call does one step and reports what it found.
package networking

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// Service reconciles the Neutron resources of one cluster.
type Service struct {
	client clients.NetworkClient
	report *report.Recorder
	// owner is the object the resources are made for: they carry its mark.
	owner ownership.Owner
	// known are the IDs the owner's status already records: finding one of them is not an
	// adoption. The phases of a reconcile use the service at once: mu guards known.
	mu    sync.Mutex
	known map[string]bool
}

// NewService returns a service that calls Neutron through client, makes resources for owner
// (the zero Owner when it only resolves what a spec names) and reports what it changes to rep.
func NewService(client clients.NetworkClient, rep *report.Recorder, owner ownership.Owner) *Service {
	return &Service{client: client, report: rep, owner: owner, known: map[string]bool{}}
}

// claim is what a Neutron resource is to the owner (ownership.Owner.Claim); named says it has a
// name the owner's resources are given (it was listed by that name), so that it is upstream's or
// an earlier release's when it carries no mark. One found by an ID the status records is named
// only when its name says so: the status is a hint.
func (s *Service) claim(named bool, id, name, description string, tags []string, projectID string, created time.Time) ownership.Candidate {
	return s.owner.Claim(ownership.Resource{ID: id, Name: name, Description: description, Tags: tags, ProjectID: projectID, Created: created, Legacy: named})
}

// markedTags are the tags a resource of the owner carries: the spec's and, when its description
// is not the owner's mark (a resource adopted from upstream or an earlier release), the owner's
// mark as a tag.
func (s *Service) markedTags(description string, spec []string) []string {
	if description == s.owner.Description() {
		return spec
	}
	return Union(spec, []string{s.owner.Tag()})
}

// Known tells the service which resource IDs the owner's status already records, so that only
// resources found in the cloud but missing from the status (a lost status, a moved cluster) are
// reported as adopted.
func (s *Service) Known(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if id != "" {
			s.known[id] = true
		}
	}
}

// adopted records that an existing resource of the cluster was found in the cloud.
func (s *Service) adopted(kind, name, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.known[id] {
		s.report.Changed("Adopted"+kind, report.Resource{Kind: kind, Name: name, ID: id}, "Adopted existing %s %s (%s)", words(kind), name, id)
		s.known[id] = true
	}
}

// findOrCreate is the find-or-adopt rule for a Neutron resource the controller names: among
// those found under name, the one that is the cluster's (ownership.Find: its mark, or upstream's
// recognised), reported as adopted when the status did not record it; else one made by create,
// reported as created. kind is the resource's kind in one word (Network, Router, SecurityGroup).
func findOrCreate[T any](s *Service, kind, name string, found []T, claim func(*T) ownership.Candidate, create func() (*T, error)) (*T, error) {
	chosen, err := ownership.Find(words(kind), name, found, claim)
	if err != nil {
		return nil, err
	}
	if chosen != nil {
		s.adopted(kind, name, claim(chosen).ID)
		return chosen, nil
	}
	created, err := create()
	if _, refuted := report.AsSpecError(err); refuted {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("creating %s %s: %w", words(kind), name, err)
	}
	id := claim(created).ID
	s.Known(id)
	s.report.Changed("Created"+kind, report.Resource{Kind: kind, Name: name, ID: id}, "Created %s %s (%s)", words(kind), name, id)
	return created, nil
}

// ResourceName is the name of the network, subnets and router the controller creates for a
// cluster, as upstream CAPO names them (so that their resources are adopted).
func ResourceName(namespace, cluster string) string {
	return fmt.Sprintf("k8s-clusterapi-cluster-%s-%s", namespace, cluster)
}

// ErrWaitingForPorts means the network cannot be deleted yet: ports (servers, load balancers)
// still use it. The controller requeues.
var ErrWaitingForPorts = errors.New("the cluster network still has ports")

// deleted reports the answer to a delete of a resource that ports may still use: success and "not
// found" are both done (the event is recorded only for the first), a conflict means ports still
// use it (ErrWaitingForPorts), anything else is an error.
func (s *Service) deleted(err error, kind, name, id string) error {
	switch {
	case err == nil:
		s.report.Changed("Deleted"+kind, report.Resource{Kind: kind, Name: name, ID: id}, "Deleted %s %s (%s)", words(kind), name, id)
		return nil
	case clients.IsNotFound(err):
		return nil
	case clients.IsConflict(err):
		return ErrWaitingForPorts
	default:
		return fmt.Errorf("deleting %s %s: %w", words(kind), name, err)
	}
}

// words spells a kind for people: SecurityGroup is "security group".
func words(kind string) string {
	var b strings.Builder
	for i, r := range kind {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte(' ')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

func tagsOf(f infrav1.FilterByNeutronTags) (tags, tagsAny, notTags, notTagsAny string) {
	join := func(t []infrav1.NeutronTag) string {
		s := make([]string, len(t))
		for i := range t {
			s[i] = string(t[i])
		}
		return strings.Join(s, ",")
	}
	return join(f.Tags), join(f.TagsAny), join(f.NotTags), join(f.NotTagsAny)
}
