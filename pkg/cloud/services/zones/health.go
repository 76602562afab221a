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
	"net/netip"
	"slices"
	"strings"

	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// What "a zone can take traffic" means, from what Octavia's status tree says, and which addresses
// the endpoint's DNS records publish.

// Healthy says whether a load balancer can take traffic, from the statuses observeTree recorded:
// ACTIVE (or PENDING_UPDATE) and ONLINE, or DEGRADED with at least one member ONLINE in the pool of
// the API server port (apiPort). why says what is wrong otherwise.
//
// How Octavia providers report it: amphora sets the load balancer ONLINE, DEGRADED (a member
// down) or ERROR (a pool with no member up) from the amphorae's heartbeats, which carry the health
// monitors' verdicts; a pool without members is ONLINE. OVN reports ONLINE, with members
// NO_MONITOR when the pool has no health monitor and ONLINE or ERROR when it has one (this
// provider always creates one). OFFLINE means Octavia has no status yet (a load balancer whose
// amphora has not reported) or the load balancer is disabled: neither takes traffic.
func Healthy(lb *infrav1.LoadBalancer, apiPort int) (bool, string) {
	// PENDING_UPDATE: Octavia applies a change (a member added, a listener updated); the load
	// balancer keeps serving with what it had meanwhile.
	if lb.ProvisioningStatus != "ACTIVE" && lb.ProvisioningStatus != "PENDING_UPDATE" {
		return false, fmt.Sprintf("load balancer %s is %s", lb.Name, lb.ProvisioningStatus)
	}
	switch lb.OperatingStatus {
	case "ONLINE":
		return true, ""
	case "DEGRADED":
		if memberOnline(lb, apiPort) {
			return true, ""
		}
		return false, fmt.Sprintf("load balancer %s is DEGRADED with no member ONLINE on port %d%s", lb.Name, apiPort, memberWords(lb, apiPort))
	default:
		return false, fmt.Sprintf("load balancer %s is %s%s", lb.Name, lb.OperatingStatus, memberWords(lb, apiPort))
	}
}

// SetHealth records what Healthy found: Healthy and Health are written together.
func SetHealth(status *infrav1.LoadBalancer, healthy bool) {
	status.Healthy = ptr.To(healthy)
	status.Health = infrav1.LoadBalancerUnhealthy
	if healthy {
		status.Health = infrav1.LoadBalancerHealthy
	}
}

// memberWords lists the members of the API server port's pool with their status, for messages.
func memberWords(lb *infrav1.LoadBalancer, apiPort int) string {
	for _, p := range lb.Pools {
		if p.Port != apiPort || len(p.Members) == 0 {
			continue
		}
		words := make([]string, len(p.Members))
		for i, m := range p.Members {
			words[i] = fmt.Sprintf("%s %s", m.Name, m.OperatingStatus)
		}
		return " (members on port " + fmt.Sprint(apiPort) + ": " + strings.Join(words, ", ") + ")"
	}
	return ""
}

// Publication is what the endpoint's DNS records publish, and why.
type Publication struct {
	// Addresses are the public addresses the records hold (PublishedAddresses), sorted.
	Addresses []string
	// Zones are the availability zones whose address is published because they can take
	// traffic; none when NoneHealthy. Their number is the Zones column.
	Zones []string
	// NoneHealthy means no load balancer can take traffic: every one's address is kept rather
	// than none.
	NoneHealthy bool
	// Where says which zone each address is, for messages: "172.24.4.10 (az1), ...".
	Where string
	// Withdrawn are the zones whose address is not published, each with the reason, for
	// messages: "az2 (its load balancer cannot take traffic)".
	Withdrawn []string
}

// Publish is the publication of the load balancers as the status records them.
func Publish(in *Input) Publication {
	return PublicationOf(in, in.Recorded.Zones, in.Recorded.Single)
}

// PublicationOf is what DNS publishes of the load balancers zones (with availabilityZoneSubnets)
// or single (without): those whose public address is final (publishable), as PublishedAddresses
// chooses among them.
func PublicationOf(in *Input, zones []infrav1.LoadBalancer, single *infrav1.LoadBalancer) Publication {
	entries := zones
	if !in.PerZone() {
		entries = nil
		if single != nil {
			entries = []infrav1.LoadBalancer{*single}
		}
	}
	// A zone in maintenance is never published, not even when no other zone is healthy.
	ready := publishable(in, slices.DeleteFunc(slices.Clone(entries), func(e infrav1.LoadBalancer) bool { return e.Maintenance != nil }))
	var p Publication
	p.Addresses, p.NoneHealthy = PublishedAddresses(ready, in.APIServerPort)
	words := make([]string, len(p.Addresses))
	for i, a := range p.Addresses {
		words[i] = a
		for _, e := range ready {
			if e.IP == a && e.AvailabilityZone != "" {
				words[i] = fmt.Sprintf("%s (%s)", a, e.AvailabilityZone)
				if !p.NoneHealthy {
					p.Zones = append(p.Zones, e.AvailabilityZone)
				}
			}
		}
	}
	p.Where = strings.Join(words, ", ")
	for _, e := range entries {
		if e.AvailabilityZone == "" || slices.Contains(p.Addresses, e.IP) {
			continue
		}
		why := "no control plane machine ONLINE behind it"
		switch {
		case e.Maintenance != nil:
			why = "in maintenance"
		case !slices.ContainsFunc(ready, func(r infrav1.LoadBalancer) bool { return r.ID == e.ID }):
			why = "no public address yet"
		case !e.IsHealthy():
			why = "its load balancer cannot take traffic"
		}
		p.Withdrawn = append(p.Withdrawn, fmt.Sprintf("%s (%s)", e.AvailabilityZone, why))
	}
	return p
}

// publishable are the entries whose public address is final: the floating IP once attached, or
// the VIP when the cluster uses no floating IPs. A load balancer whose floating IP is not
// attached yet shows its VIP as its address, which is not what clients outside the cloud can
// reach.
func publishable(in *Input, entries []infrav1.LoadBalancer) []infrav1.LoadBalancer {
	floating := in.FloatingIPs()
	var out []infrav1.LoadBalancer
	for _, e := range entries {
		if e.IP != "" && (!floating || e.IP != e.InternalIP) {
			out = append(out, e)
		}
	}
	return out
}

// PublishedAddresses are the addresses the endpoint's DNS records publish: the public address
// (floating IP, else VIP) of every load balancer that serves the API, that is healthy with a
// member ONLINE on the API server port (apiPort). A zone whose load balancer is healthy but has no
// live control plane machine behind it (none yet, or its only one was deleted) answers no API
// request, so it is published only when no zone serves: then every healthy load balancer's
// address is, as while a new cluster's first control plane machine boots. When none is healthy,
// every load balancer's address is published, since an empty answer takes the whole cluster off
// the network while an address that might work does not; noneHealthy says so. Addresses are
// sorted, IPv4 and IPv6 alike.
func PublishedAddresses(lbs []infrav1.LoadBalancer, apiPort int) (addresses []string, noneHealthy bool) {
	var serving, healthy, all []string
	for i := range lbs {
		lb := &lbs[i]
		if _, err := netip.ParseAddr(lb.IP); err != nil {
			continue
		}
		all = append(all, lb.IP)
		if lb.IsHealthy() {
			healthy = append(healthy, lb.IP)
		}
		if Serves(lb, apiPort) {
			serving = append(serving, lb.IP)
		}
	}
	for _, tier := range [][]string{serving, healthy} {
		if len(tier) > 0 {
			slices.Sort(tier)
			return slices.Compact(tier), false
		}
	}
	slices.Sort(all)
	return slices.Compact(all), len(all) > 0
}

// Serves says whether a load balancer answers API requests: healthy, with a control plane machine
// ONLINE in the pool of the API server port (apiPort).
func Serves(lb *infrav1.LoadBalancer, apiPort int) bool {
	return lb.IsHealthy() && memberOnline(lb, apiPort)
}

// memberOnline says whether a member of the pool of port is ONLINE, or NO_MONITOR: a pool
// without a health monitor (one being replaced by another type) sends traffic to every member.
func memberOnline(lb *infrav1.LoadBalancer, port int) bool {
	for _, p := range lb.Pools {
		if p.Port == port && slices.ContainsFunc(p.Members, func(m infrav1.LoadBalancerMember) bool {
			return m.OperatingStatus == "ONLINE" || m.OperatingStatus == "NO_MONITOR"
		}) {
			return true
		}
	}
	return false
}
