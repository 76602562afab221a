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

// Package loadbalancer is the Octavia side of a cluster's API server load balancers: one Octavia
// load balancer, or one per availability zone, each with a listener, pool and health monitor per
// port and optionally a floating IP. What the load balancers should be (which zones, which
// subnets, who joins which, what DNS publishes) is the zone rules' (package zones); this package
// asks Neutron what those rules need, converges each load balancer in Octavia, and deletes them.
// The controllers call it through three doors: ReconcileCluster (and CheckReferences,
// DeleteCluster) for a cluster, ReconcileMachine and RemoveMachine for a control plane machine.
// It never waits for Octavia: a reconcile makes at most one change per load balancer and says
// when to look again.
package loadbalancer

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/outcome"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

// Service reconciles the API server load balancers of one cluster.
type Service struct {
	lb       clients.LoadBalancerClient
	net      clients.NetworkClient
	report   *report.Recorder
	memory   *Memory
	cloudKey string
	// owner is the OpenStackCluster the load balancers are the API server's of: they carry its
	// mark (Owner.Tag), and none without it is changed or deleted.
	owner ownership.Owner
	// cluster is the name of the Cluster (in owner's namespace), after which the load balancers
	// are named: an unmarked one is upstream's only under one of those names.
	cluster string
}

// NewService returns a service for one reconcile of owner's load balancers, which reports what it
// changes to rep. memory outlives it: it carries what the controller learnt about the cloud
// (Octavia capabilities), the ERROR observations of load balancers and which carry owner's mark;
// cloudKey identifies the cloud in it. cluster is the name of owner's Cluster.
func NewService(lb clients.LoadBalancerClient, net clients.NetworkClient, rep *report.Recorder, memory *Memory, cloudKey string, owner ownership.Owner, cluster string) *Service {
	if memory == nil {
		memory = NewMemory()
	}
	return &Service{lb: lb, net: net, report: rep, memory: memory, cloudKey: cloudKey, owner: owner, cluster: cluster}
}

// claim is what a load balancer is to the owner (ownership.Owner.Claim): one that carries no
// mark is upstream's or an earlier release's only under a name the cluster's are given (Name),
// however it was found (by that name, by the owner tag an earlier release put on them, which
// collides between clusters and so is no mark, or by an ID the status records, which is a hint).
func (s *Service) claim(lb *loadbalancers.LoadBalancer) ownership.Candidate {
	_, named := zones.ZoneOfName(lb.Name, s.owner.Namespace, s.cluster)
	return s.owner.Claim(ownership.Resource{ID: lb.ID, Name: lb.Name, Tags: lb.Tags, ProjectID: lb.ProjectID, Created: lb.CreatedAt, Legacy: named})
}

// tags are the tags d's load balancer carries: the spec's, the legacy OwnerTag, and the owner's
// mark.
func (s *Service) tags(d *zones.Desired) []string {
	return networking.Union(d.Tags, []string{s.owner.Tag()})
}

// verified says whether the load balancer id carries the owner's mark, reading it once per
// manager (Memory): a load balancer the status names is a hint, and is changed only once its
// mark is seen. ok false with a nil error means it is not the owner's (err says whose, when
// another's).
func (s *Service) verified(ctx context.Context, id string) (ok bool, err error) {
	if s.memory.owns(id, s.owner.Tag()) {
		return true, nil
	}
	lb, err := s.lb.GetLoadBalancer(ctx, id)
	if err != nil {
		return false, fmt.Errorf("reading load balancer %s: %w", id, err)
	}
	c := s.claim(lb)
	switch c.Claim {
	case ownership.Ours:
		s.memory.learnOwner(id, s.owner.Tag())
		return true, nil
	case ownership.Foreign:
		return false, ownership.OwnedElsewhere("load balancer", c)
	}
	return c.Claim == ownership.Upstream, nil
}

func waiting(message string) zones.Outcome {
	return zones.Outcome{State: zones.StateWaiting, Outcome: outcome.Outcome{Reason: infrav1.WaitingForLoadBalancerReason, Message: message, RequeueAfter: requeue.Change}}
}

func failed(err error) zones.Outcome {
	if specErr, ok := report.AsSpecError(err); ok {
		return zones.Outcome{State: zones.StateInvalid, Outcome: outcome.Outcome{Reason: specErr.Reason, Message: err.Error(), RequeueAfter: requeue.Config}}
	}
	return zones.Outcome{State: zones.StateError, Outcome: outcome.Outcome{Reason: infrav1.OpenStackErrorReason, Err: err}}
}

// emit records the events the zone rules noted.
func (s *Service) emit(notes []zones.Note) {
	for _, n := range notes {
		if n.Warning {
			s.report.Warn(n.Reason, n.Resource, "%s", n.Message)
		} else {
			s.report.Noted(n.Reason, n.Resource, "%s", n.Message)
		}
	}
}
