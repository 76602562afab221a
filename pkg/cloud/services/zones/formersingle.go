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

package zones

import (
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// A migration keeps serving. The cluster's single load balancer becomes the first zone's, and
// its address is the one every client knows until the endpoint's DNS records name the other
// zones and the records' TTL has run out. Until then it keeps the control plane machines of
// every zone as members (MemberTargets), so that a client still on that address reaches all of
// them, not only the first zone's.

// FormerRelease is what ReleaseFormerSingle did.
type FormerRelease struct {
	// Holding says, for messages, why the former single load balancer still keeps every zone's
	// machines; empty when it does not.
	Holding string
	// Steps: the records' TTL running out is the next one due.
	Steps
}

// ReleaseFormerSingle ends the hold of the former single load balancer among zones (the entries
// this reconcile records) on the other zones' machines once clients no longer need its address
// alone: the OpenStackCluster carries the clients-moved annotation, or the DNS records the
// provider publishes have held every zone's address (AllZonesPublishedAt) for their TTL.
func ReleaseFormerSingle(in *Input, zones []infrav1.LoadBalancer, now time.Time) FormerRelease {
	var r FormerRelease
	ttl, published := dnsTTL(in)
	for i := range zones {
		e := &zones[i]
		if e.FormerSingle == nil {
			continue
		}
		at := e.FormerSingle.AllZonesPublishedAt
		switch {
		case in.ClientsMoved:
			r.release(e, "the OpenStackCluster carries the clients-moved annotation")
		case published && at != nil && !now.Before(at.Add(ttl)):
			r.release(e, fmt.Sprintf("the DNS records have held every zone's address since %s, longer than their %s TTL", at.UTC().Format(time.RFC3339), ttl))
		case published && at != nil:
			r.after(at.Add(ttl).Sub(now))
			r.Holding = fmt.Sprintf("load balancer %s keeps every zone's control plane machines until %s, when the DNS records holding every zone have outlived their TTL",
				e.Name, at.Add(ttl).UTC().Format(time.RFC3339))
		case published:
			r.Holding = fmt.Sprintf("load balancer %s keeps every zone's control plane machines until the DNS records hold every zone's address and their TTL has passed, "+
				"or the OpenStackCluster carries the annotation %s: \"true\"", e.Name, infrav1.ClientsMovedAnnotation)
		default:
			r.Holding = fmt.Sprintf("load balancer %s keeps every zone's control plane machines until the OpenStackCluster carries the annotation %s: \"true\" (clients use every zone's address)",
				e.Name, infrav1.ClientsMovedAnnotation)
		}
	}
	return r
}

func (r *FormerRelease) release(e *infrav1.LoadBalancer, why string) {
	e.FormerSingle = nil
	r.note("ReleasedFormerLoadBalancer", e, "Load balancer %s, the cluster's former single one, keeps only %s's control plane machines from now on: %s", e.Name, e.AvailabilityZone, why)
}

// MarkAllZonesPublished records, on the former single load balancer among zones, that ExternalDNS
// took up at now records publishing pub, when they hold every zone's address.
func MarkAllZonesPublished(in *Input, zones []infrav1.LoadBalancer, pub Publication, now time.Time) {
	if pub.NoneHealthy {
		return
	}
	for _, m := range in.Mappings() {
		if !slices.Contains(pub.Zones, m.AvailabilityZone) {
			return
		}
	}
	for i := range zones {
		if f := zones[i].FormerSingle; f != nil && f.AllZonesPublishedAt == nil {
			f.AllZonesPublishedAt = &metav1.Time{Time: now}
		}
	}
}
