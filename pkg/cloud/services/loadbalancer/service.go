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

// Package loadbalancer holds every rule about a cluster's API server load balancers: one Octavia
// load balancer, or one per availability zone, each with a listener, pool and health monitor per
// port and optionally a floating IP; which zones serve, what DNS publishes, and which load
// balancers a control plane machine joins. The controllers call it through three doors:
// ReconcileCluster (and CheckReferences, DeleteCluster) for a cluster, ReconcileMachine and
// RemoveMachine for a control plane machine. It never waits for Octavia: a reconcile makes at
// most one change per load balancer and says when to look again.
package loadbalancer

import (
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// Service reconciles the API server load balancers of one cluster.
type Service struct {
	lb       clients.LoadBalancerClient
	net      clients.NetworkClient
	report   *report.Recorder
	memory   *Memory
	cloudKey string
}

// NewService returns a service for one reconcile, which reports what it changes to rep. memory
// outlives it: it carries what the controller learnt about the cloud (Octavia capabilities) and
// the ERROR observations of load balancers; cloudKey identifies the cloud in it.
func NewService(lb clients.LoadBalancerClient, net clients.NetworkClient, rep *report.Recorder, memory *Memory, cloudKey string) *Service {
	if memory == nil {
		memory = NewMemory()
	}
	return &Service{lb: lb, net: net, report: rep, memory: memory, cloudKey: cloudKey}
}
