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

// Package requeue is the one table of how soon the controllers look at an object again, by what
// they wait for. Every interval a service or a phase asks for is one of these; the pacer of the
// controllers adds the backoff after a cloud fault.
package requeue

import "time"

const (
	// Change is how soon a load balancer is looked at again after a change, and while it has
	// been PENDING_* for less than two seconds: Octavia applies a change to a listener, pool or
	// monitor in well under a second. The load balancer service backs off from there.
	Change = 250 * time.Millisecond
	// Pending is how soon a load balancer pending for 2-10 s is looked at again: a new load
	// balancer takes 5-15 s with a fast provider. One that stays pending longer (an amphora
	// booting takes minutes) is looked at less often.
	Pending = 500 * time.Millisecond
	// Delete is how soon a deletion looks again at load balancers Octavia is deleting (a
	// cascade delete takes 2-6 s): the network waits for them, so each look saved is time saved.
	Delete = 250 * time.Millisecond
	// Cache is how soon a reconcile that found the cache behind the controller's own last write
	// looks again; the watch event of the write usually comes first.
	Cache = 250 * time.Millisecond
	// AuthInProgress is how soon an object looks again while another reconcile authenticates its
	// credential.
	AuthInProgress = time.Second
	// Member is how soon membership is looked at again while Octavia applies a change to a pool
	// (PENDING_UPDATE takes one to three seconds); a look is one status tree read per load
	// balancer.
	Member = time.Second
	// Build is how soon a server Nova is building, or deleting, is looked at again.
	Build = 2 * time.Second
	// ExternalDNS is how often a cluster that waits for ExternalDNS to take up records without a
	// zone looks at the DNSEndpoint again (the manager watches no DNSEndpoint).
	ExternalDNS = 2 * time.Second
	// Wait is how soon the controller looks again while it waits for OpenStack.
	Wait = 5 * time.Second
	// UnansweredLook is how often the controller looks, by name, for the load balancer of a
	// create that got no answer.
	UnansweredLook = 5 * time.Second
	// Error is how soon a load balancer in ERROR is looked at again (the default of the load
	// balancer service's error interval).
	Error = 10 * time.Second
	// Health is how soon a zone whose load balancer is unhealthy is looked at again, to notice
	// its recovery.
	Health = 10 * time.Second
	// DNSHealth is how often the load balancers of a cluster that publishes its DNS records are
	// looked at while all is well, so that a zone's failure is withdrawn from DNS quickly.
	DNSHealth = 10 * time.Second
	// ZoneHealth is how often the load balancers of a cluster with one per zone that publishes no
	// DNS records are looked at while all is well, so that a zone's failure takes its failure
	// domain away from control plane machines.
	ZoneHealth = 30 * time.Second
	// Image is how soon a machine waiting for its ORC Image looks again: the manager does not
	// watch Images (ORC need not be installed).
	Image = 10 * time.Second
	// FloatingIPStandby is how soon a control plane machine of a cluster without a load
	// balancer looks again at the API server floating IP another machine holds: it takes the
	// address once that machine's port is gone, and Neutron sends no event. One list call.
	FloatingIPStandby = 30 * time.Second
	// Config is how soon a spec that only OpenStack can refute is checked again (a missing
	// subnet, network or flavor may be created in the cloud, which sends no event).
	Config = time.Minute
	// Discovery is how often a cluster with zoneDiscovery reads its subnets' tags again when
	// nothing else brings its reconcile sooner.
	Discovery = time.Minute
	// NotRunning is how soon a server that is neither building nor ACTIVE is looked at again:
	// Nova sends no event when someone starts it.
	NotRunning = time.Minute
)
