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

package loadbalancer

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/outcome"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

const (
	// ErrorObservations is how many times a load balancer is seen in ERROR before it is deleted
	// and recreated.
	ErrorObservations = 3
)

// found is a load balancer located in the cloud.
type found struct {
	id, name, provisioning string
	// lb is the full load balancer when it was listed or read (not in the steady state, where
	// only the status tree is read).
	lb   *loadbalancers.LoadBalancer
	tree *loadbalancers.LoadBalancer
}

// Reconcile brings one API server load balancer one step closer to d. known is what the status
// recorded for it (nil when lost): the load balancer is then found again by name.
func (s *Service) Reconcile(ctx context.Context, d *zones.Desired, known *infrav1.LoadBalancer) zones.Outcome {
	start := time.Now()
	out := s.reconcile(ctx, d, known)
	out.AvailabilityZone = d.AvailabilityZone
	observe(start, out)
	s.reportHealthTransition(d, known, out)
	if out.Err != nil && out.Message == "" {
		out.Message = out.Err.Error()
	}
	return out
}

func (s *Service) reconcile(ctx context.Context, d *zones.Desired, known *infrav1.LoadBalancer) zones.Outcome {
	f, err := s.locate(ctx, d, known)
	if err != nil {
		return failed(err)
	}
	if f == nil {
		return s.create(ctx, d, known)
	}
	// Found: a create that got no answer made it (or it was there all along).
	s.memory.forgetUnanswered(s.cloudKey, d.Name)
	status := s.statusOf(d, f, known)
	out := s.progress(ctx, d, f, status)
	out.Status = status
	out.ProvisioningStatus = f.provisioning
	return out
}

// locate finds the load balancer: by the ID the status recorded (one status tree call, which is
// all the steady state needs), else by its name, else by a former name.
func (s *Service) locate(ctx context.Context, d *zones.Desired, known *infrav1.LoadBalancer) (*found, error) {
	if known != nil && known.ID != "" {
		tree, err := s.lb.GetLoadBalancerStatuses(ctx, known.ID)
		switch {
		case clients.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("reading the status of load balancer %s: %w", known.ID, err)
		case tree.Loadbalancer != nil && (tree.Loadbalancer.Name == d.Name || slices.Contains(d.FormerNames, tree.Loadbalancer.Name)):
			// The status names it: a hint, proved by the owner's mark (read once per manager).
			mine, err := s.verified(ctx, known.ID)
			if err != nil {
				return nil, err
			}
			if mine {
				return &found{id: known.ID, name: tree.Loadbalancer.Name, provisioning: tree.Loadbalancer.ProvisioningStatus, tree: tree.Loadbalancer}, nil
			}
		}
	}
	for _, name := range append([]string{d.Name}, d.FormerNames...) {
		lbs, err := s.lb.ListLoadBalancers(ctx, loadbalancers.ListOpts{Name: name})
		if err != nil {
			return nil, fmt.Errorf("listing load balancers named %s: %w", name, err)
		}
		lb, err := ownership.Find("load balancer", name, lbs, s.claim)
		if err != nil {
			return nil, err
		}
		if lb == nil {
			continue
		}
		if known == nil || known.ID != lb.ID {
			s.report.Changed("AdoptedLoadBalancer", report.Resource{Kind: "LoadBalancer", Name: lb.Name, ID: lb.ID, Zone: d.AvailabilityZone}, "Adopted existing load balancer %s (%s) for %s", lb.Name, lb.ID, zones.ZoneWords(d.AvailabilityZone))
		}
		return &found{id: lb.ID, name: lb.Name, provisioning: lb.ProvisioningStatus, lb: lb}, nil
	}
	return nil, nil
}

// statusOf is the status entry of a located load balancer.
func (s *Service) statusOf(d *zones.Desired, f *found, known *infrav1.LoadBalancer) *infrav1.LoadBalancer {
	st := &infrav1.LoadBalancer{Name: f.name, ID: f.id, AvailabilityZone: d.AvailabilityZone, Tags: s.tags(d), Health: infrav1.LoadBalancerHealthUnknown}
	if known != nil && known.ID == f.id {
		st.InternalIP, st.IP, st.AllowedCIDRs = known.InternalIP, known.IP, known.AllowedCIDRs
		st.LoadBalancerNetwork = known.LoadBalancerNetwork.DeepCopy()
		// What the last look at the status tree found holds until the next one.
		st.Health, st.Pools = known.Health, slices.Clone(known.Pools)
		if known.Healthy != nil {
			st.Healthy = ptr.To(*known.Healthy)
		}
	}
	st.FormerSingle = formerSingle(d, known, f.name)
	if f.lb != nil {
		st.InternalIP = f.lb.VipAddress
		if st.IP == "" {
			st.IP = f.lb.VipAddress
		}
		st.Tags = f.lb.Tags
	}
	if st.LoadBalancerNetwork == nil || (f.lb != nil && !vipOnSubnet(st.LoadBalancerNetwork, f.lb.VipSubnetID)) {
		st.LoadBalancerNetwork = &infrav1.NetworkStatusWithSubnets{NetworkStatus: d.Network}
		switch {
		case f.lb != nil && d.Subnet != nil && f.lb.VipSubnetID != d.Subnet.ID:
			// A load balancer adopted from before the mapping (the legacy one): its VIP cannot
			// move, so the status says where it really is.
			st.LoadBalancerNetwork.Subnets = []infrav1.Subnet{{ID: f.lb.VipSubnetID}}
			s.report.Warn("LoadBalancerVIPSubnet", report.Resource{Kind: "LoadBalancer", Name: f.name, ID: f.id, Zone: d.AvailabilityZone}, "Load balancer %s keeps its VIP %s on subnet %s, not on subnet %s mapped to %s: a VIP cannot move",
				f.name, f.lb.VipAddress, f.lb.VipSubnetID, d.Subnet.ID, zones.ZoneWords(d.AvailabilityZone))
		case d.Subnet != nil:
			st.LoadBalancerNetwork.Subnets = []infrav1.Subnet{*d.Subnet}
		case f.lb != nil && f.lb.VipSubnetID != "":
			st.LoadBalancerNetwork.Subnets = []infrav1.Subnet{{ID: f.lb.VipSubnetID}}
		}
	}
	return st
}

// formerSingle is the former single mark of zone d's load balancer, found under name (""
// when not found), known as the status recorded it: carried over within the zone (a load
// balancer made again after ERROR keeps the address clients use), or new when the cluster's
// single load balancer becomes the zone's (found under its name, or recorded as the single one).
func formerSingle(d *zones.Desired, known *infrav1.LoadBalancer, name string) *infrav1.FormerSingleLoadBalancer {
	switch {
	case d.AvailabilityZone == "" || known == nil && name == "":
		return nil
	case known != nil && known.AvailabilityZone == d.AvailabilityZone && known.FormerSingle != nil:
		return known.FormerSingle.DeepCopy()
	case known != nil && known.AvailabilityZone == "" && known.ID != "",
		name != "" && name != d.Name && slices.Contains(d.FormerNames, name):
		return &infrav1.FormerSingleLoadBalancer{}
	}
	return nil
}

func vipOnSubnet(n *infrav1.NetworkStatusWithSubnets, subnetID string) bool {
	return len(n.Subnets) > 0 && n.Subnets[0].ID == subnetID
}

// awaitsUnanswered returns when a create of the load balancer that got no answer was sent, while
// the controller should look for what it made rather than create it again: as this manager
// remembers it, or as the status recorded it (a manager started since).
func (s *Service) awaitsUnanswered(d *zones.Desired, known *infrav1.LoadBalancer, now time.Time) (time.Time, bool) {
	if sent, ok := s.memory.awaitsUnanswered(s.cloudKey, d.Name, now); ok {
		return sent, true
	}
	if known == nil || known.Name != d.Name || known.CreateSentAt == nil {
		return time.Time{}, false
	}
	// A time somewhat ahead is another replica's clock; one far ahead is no create of ours.
	sent := known.CreateSentAt.Time
	age := now.Sub(sent)
	return sent, age > -time.Minute && age < UnansweredCreateWait
}

// create creates the load balancer with its listeners, pools and monitors in one call (Octavia's
// fully populated load balancer), so that it settles once rather than once per child. On a cloud
// whose Octavia was seen leaving such children pending (before 11.0.1), it creates the load
// balancer alone: reconcileChildren then creates each child once the one before is ACTIVE, which
// is faster there than settling each child with an update.
func (s *Service) create(ctx context.Context, d *zones.Desired, known *infrav1.LoadBalancer) zones.Outcome {
	if sent, ok := s.awaitsUnanswered(d, known, s.memory.now()); ok {
		// The create sent then may still be carried out: a second one would make a duplicate.
		out := waiting(fmt.Sprintf("the create of load balancer %s sent at %s got no answer; looking for it until %s before creating it again",
			d.Name, sent.UTC().Format(time.TimeOnly), sent.Add(UnansweredCreateWait).UTC().Format(time.TimeOnly)))
		out.RequeueAfter = requeue.UnansweredLook
		return out
	}
	populated := !s.memory.createsStepwise(s.cloudKey)
	hint, why, err := s.azHint(ctx, d.Provider, d.OctaviaAZ)
	if err != nil {
		return failed(err)
	}
	if why != "" {
		s.report.Warn("OmittedAvailabilityZoneHint", report.Resource{Kind: "LoadBalancer", Name: d.Name, Zone: d.AvailabilityZone}, "Creating load balancer %s without the Octavia availability zone %s: %s", d.Name, d.OctaviaAZ, why)
	}
	flavorID, err := s.flavorID(ctx, d.Flavor)
	if err != nil {
		return failed(err)
	}
	cidrs, err := s.applicableCIDRs(ctx, d)
	if err != nil {
		return failed(err)
	}
	if err := s.checkUserFloatingIP(ctx, d); err != nil {
		return failed(err)
	}
	opts := loadbalancers.CreateOpts{
		Name: d.Name, Description: "Kubernetes API server of " + zones.ZoneWords(d.AvailabilityZone), VipNetworkID: d.Network.ID,
		Provider: d.Provider, FlavorID: flavorID, AvailabilityZone: hint, Tags: s.tags(d),
	}
	if d.Subnet != nil {
		opts.VipSubnetID = d.Subnet.ID
		opts.VipNetworkID = ""
	}
	for i := 0; populated && i < len(d.Ports); i++ {
		opts.Listeners = append(opts.Listeners, s.listenerOpts(d, d.Ports[i], cidrs, true))
	}
	sent := s.memory.now()
	lb, err := s.lb.CreateLoadBalancer(ctx, opts)
	if err != nil {
		if clients.Unanswered(err) {
			s.memory.createUnanswered(s.cloudKey, d.Name, sent)
			// The status keeps it too, so that a manager that starts meanwhile waits as well.
			out := failed(fmt.Errorf("creating load balancer %s: %w", d.Name, err))
			out.Status = &infrav1.LoadBalancer{Name: d.Name, AvailabilityZone: d.AvailabilityZone, Health: infrav1.LoadBalancerHealthUnknown,
				CreateSentAt: &metav1.Time{Time: sent}, FormerSingle: formerSingle(d, known, "")}
			return out
		}
		if gophercloud.ResponseCodeIs(err, http.StatusBadRequest) {
			return failed(&report.SpecError{Reason: infrav1.LoadBalancerConfigurationErrorReason, Message: fmt.Sprintf("Octavia refused load balancer %s: %v", d.Name, err)})
		}
		return failed(fmt.Errorf("creating load balancer %s: %w", d.Name, err))
	}
	if !populated {
		s.report.Changed("CreatedLoadBalancer", report.Resource{Kind: "LoadBalancer", Name: lb.Name, ID: lb.ID, Zone: d.AvailabilityZone}, "Created load balancer %s (%s) for %s with VIP %s; its listeners on ports %s follow one by one",
			lb.Name, lb.ID, zones.ZoneWords(d.AvailabilityZone), lb.VipAddress, portList(d.Ports))
	} else {
		s.report.Changed("CreatedLoadBalancer", report.Resource{Kind: "LoadBalancer", Name: lb.Name, ID: lb.ID, Zone: d.AvailabilityZone}, "Created load balancer %s (%s) for %s with VIP %s and listeners on ports %s",
			lb.Name, lb.ID, zones.ZoneWords(d.AvailabilityZone), lb.VipAddress, portList(d.Ports))
		// The children came with the load balancer, in the same call: each is reported on its own.
		for _, port := range d.Ports {
			s.memory.appliedMonitor(lb.ID, port, monitorFor(d, port))
			name := zones.ChildName(d.Name, port)
			for _, kind := range []string{"Listener", "Pool", "HealthMonitor"} {
				s.report.Changed("Created"+kind, report.Resource{Kind: kind, Name: name, Zone: d.AvailabilityZone},
					"Created %s %s for port %d with load balancer %s", kindWords[kind], name, port, lb.Name)
			}
		}
	}
	out := waiting(fmt.Sprintf("load balancer %s is %s", lb.Name, lb.ProvisioningStatus))
	out.Status = s.statusOf(d, &found{id: lb.ID, name: lb.Name, provisioning: lb.ProvisioningStatus, lb: lb}, nil)
	out.Status.AllowedCIDRs = cidrs
	out.ProvisioningStatus = lb.ProvisioningStatus
	return out
}

func portList(ports []int) string {
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ", ")
}

// listenerOpts is a listener for port; populated adds its pool and monitor, for a create of the
// whole load balancer.
func (s *Service) listenerOpts(d *zones.Desired, port int, cidrs []string, populated bool) listeners.CreateOpts {
	name := zones.ChildName(d.Name, port)
	opts := listeners.CreateOpts{Name: name, Protocol: listeners.ProtocolTCP, ProtocolPort: port, AllowedCIDRs: cidrs, Tags: d.Tags}
	if populated {
		pool := s.poolOpts(d, name, "")
		pool.Monitor = s.monitorOpts(d, name, "", port)
		opts.DefaultPool = &pool
	}
	return opts
}

func (s *Service) poolOpts(d *zones.Desired, name, listenerID string) pools.CreateOpts {
	return pools.CreateOpts{Name: name, ListenerID: listenerID, Protocol: pools.ProtocolTCP, LBMethod: Algorithm(d.Provider)}
}

// Algorithm is the pool algorithm for an Octavia provider: the OVN provider runs SOURCE_IP_PORT
// only (and keeps the client's source address); every other provider gets ROUND_ROBIN, as
// upstream CAPO gave them.
func Algorithm(provider string) pools.LBMethod {
	if provider == "ovn" {
		return pools.LBMethodSourceIpPort
	}
	return pools.LBMethodRoundRobin
}

// monitorOpts is the health monitor of port's pool.
func (s *Service) monitorOpts(d *zones.Desired, name, poolID string, port int) monitors.CreateOpts {
	m := monitorFor(d, port)
	opts := monitors.CreateOpts{Name: name, PoolID: poolID, Type: monitors.TypeTCP,
		Delay: m.Delay, Timeout: m.Timeout, MaxRetries: m.MaxRetries, MaxRetriesDown: m.MaxRetriesDown}
	if m.Type == infrav1.MonitorHTTPS {
		opts.Type, opts.HTTPMethod, opts.URLPath, opts.ExpectedCodes = monitors.TypeHTTPS, "GET", m.URLPath, m.ExpectedCodes
	}
	return opts
}

// monitorFor is the health monitor port's pool wants: the API server port (the first) as the
// spec says, the others TCP.
func monitorFor(d *zones.Desired, port int) infrav1.APIServerLoadBalancerMonitor {
	return zones.MonitorOf(d.Monitor, port, d.Ports[0])
}

// applicableCIDRs are the allowed CIDRs to send: d's, when Octavia and the provider support
// them (a warning says why they are not applied otherwise).
func (s *Service) applicableCIDRs(ctx context.Context, d *zones.Desired) ([]string, error) {
	if len(d.AllowedCIDRs) == 0 {
		return nil, nil
	}
	ok, why, err := s.allowedCIDRsSupport(ctx, d.Provider)
	if err != nil {
		return nil, err
	}
	if !ok {
		s.report.Warn("AllowedCIDRsNotSupported", report.Resource{Kind: "LoadBalancer", Name: d.Name, Zone: d.AvailabilityZone}, "Not restricting load balancer %s to spec.apiServerLoadBalancer.allowedCIDRs: %s", d.Name, why)
		return nil, nil
	}
	return d.AllowedCIDRs, nil
}

// progress takes the next step on a located load balancer.
func (s *Service) progress(ctx context.Context, d *zones.Desired, f *found, status *infrav1.LoadBalancer) zones.Outcome {
	status.ProvisioningStatus = f.provisioning
	switch {
	case f.tree != nil:
		status.OperatingStatus = f.tree.OperatingStatus
	case f.lb != nil:
		status.OperatingStatus = f.lb.OperatingStatus
	}
	switch {
	case strings.HasPrefix(f.provisioning, "PENDING_"):
		s.earlyFloatingIP(ctx, d, f, status)
		if f.tree != nil {
			observeTree(f.tree, d, status)
		}
		healthy, _ := zones.Healthy(status, d.Ports[0])
		zones.SetHealth(status, healthy)
		out := waiting(fmt.Sprintf("load balancer %s is %s", f.name, f.provisioning))
		out.RequeueAfter = pendingInterval(s.memory.pendingFor(f.id, time.Now()))
		return out
	case f.provisioning == "ERROR":
		zones.SetHealth(status, false)
		s.memory.forgetPending(f.id)
		return s.recoverFromError(ctx, d, f)
	}
	s.memory.forgetError(f.id)
	s.memory.forgetPending(f.id)

	if f.name != d.Name || (f.lb != nil && !networking.ContainsAll(f.lb.Tags, s.tags(d))) {
		return s.renameLoadBalancer(ctx, d, f, status)
	}
	if f.tree == nil {
		tree, err := s.lb.GetLoadBalancerStatuses(ctx, f.id)
		if err != nil {
			return failed(fmt.Errorf("reading the status of load balancer %s: %w", f.name, err))
		}
		f.tree = tree.Loadbalancer
	}
	observeTree(f.tree, d, status)
	if out, changed := s.reconcileChildren(ctx, d, f, status); changed {
		return out
	}
	if d.FloatingIP == nil {
		status.IP = status.InternalIP
	} else if out, changed := s.reconcileFloatingIP(ctx, d, f, status); changed {
		return out
	}
	healthy, why := zones.Healthy(status, d.Ports[0])
	zones.SetHealth(status, healthy)
	if !healthy {
		return zones.Outcome{State: zones.StateUnhealthy, Outcome: outcome.Outcome{Reason: infrav1.LoadBalancerUnhealthyReason, Message: why, RequeueAfter: requeue.Health}}
	}
	return zones.Outcome{State: zones.StateReady, Outcome: outcome.Outcome{Reason: infrav1.ReadyReason, RequeueAfter: d.HealthPoll}}
}

// earlyFloatingIP gives a load balancer Octavia is still creating its floating IP: the VIP port
// exists from the create call on, and Neutron does not care about Octavia's state, so the address
// is ready when the load balancer is. Allocating one takes Neutron seconds, so it is allocated in
// the background (allocate): the polls of this and the other zones' load balancers go on
// meanwhile. A failure here is not reported: the same step runs again once the load balancer is
// ACTIVE, and reports.
func (s *Service) earlyFloatingIP(ctx context.Context, d *zones.Desired, f *found, status *infrav1.LoadBalancer) {
	if d.FloatingIP == nil || f.provisioning != "PENDING_CREATE" || (status.IP != "" && status.IP != status.InternalIP) {
		return
	}
	switch a := s.memory.allocationOf(f.id, false); {
	case a == nil:
	case a.done && a.fip != nil:
		s.memory.allocationOf(f.id, true)
		s.createdFloatingIP(d, f, a.fip)
		status.IP = a.fip.FloatingIP
		return
	default:
		// Still allocating, or failed: the ACTIVE load balancer takes it from there.
		return
	}
	before := status.IP
	if _, failed := s.floatingIP(ctx, d, f, status, true); failed {
		status.IP = before
	}
}

// renameLoadBalancer gives a load balancer found under a former name (or without the owner tag)
// its name and tags. Its VIP, and so its floating IP, stay.
func (s *Service) renameLoadBalancer(ctx context.Context, d *zones.Desired, f *found, status *infrav1.LoadBalancer) zones.Outcome {
	if f.lb == nil {
		// Found by its status tree, which has no tags: read them, so that a rename keeps them.
		lb, err := s.lb.GetLoadBalancer(ctx, f.id)
		if err != nil {
			return failed(fmt.Errorf("reading load balancer %s: %w", f.name, err))
		}
		f.lb = lb
	}
	tags := networking.Union(f.lb.Tags, s.tags(d))
	name := d.Name
	if _, err := s.lb.UpdateLoadBalancer(ctx, f.id, loadbalancers.UpdateOpts{Name: &name, Tags: &tags}); err != nil {
		if clients.IsConflict(err) {
			return waiting(fmt.Sprintf("load balancer %s is busy", f.name))
		}
		return failed(fmt.Errorf("renaming load balancer %s to %s: %w", f.name, d.Name, err))
	}
	if f.name != d.Name {
		s.report.Changed("RenamedLoadBalancer", report.Resource{Kind: "LoadBalancer", Name: d.Name, ID: f.id, Zone: d.AvailabilityZone}, "Renamed load balancer %s to %s (%s), keeping its VIP %s", f.name, d.Name, f.id, status.InternalIP)
	} else {
		s.report.Changed("UpdatedLoadBalancer", report.Resource{Kind: "LoadBalancer", Name: f.name, ID: f.id, Zone: d.AvailabilityZone}, "Tagged load balancer %s (%s) as the cluster's", f.name, f.id)
	}
	status.Name, status.Tags = d.Name, tags
	return waiting(fmt.Sprintf("load balancer %s is being renamed", d.Name))
}

// pendingInterval is how soon to look again at a load balancer pending for d: every 250 ms for
// the first 2 s (a change to a child), every 500 ms up to 10 s and every second up to 30 s (a new
// load balancer), then every 5 s up to two minutes, then every 15 s (an amphora booting).
func pendingInterval(d time.Duration) time.Duration {
	switch {
	case d < 2*time.Second:
		return requeue.Change
	case d < 10*time.Second:
		return requeue.Pending
	case d < 30*time.Second:
		return time.Second
	case d < 2*time.Minute:
		return 5 * time.Second
	default:
		return 15 * time.Second
	}
}

// recoverFromError reports a load balancer in ERROR and, once it was seen there
// ErrorObservations times at least Memory.ErrorInterval apart, deletes it (with its children) so
// that the next reconcile creates it again. Its floating IP is kept and moves to the new load
// balancer.
func (s *Service) recoverFromError(ctx context.Context, d *zones.Desired, f *found) zones.Outcome {
	seen := s.memory.seenInError(f.id, time.Now())
	if seen < ErrorObservations {
		s.report.Warn("LoadBalancerError", report.Resource{Kind: "LoadBalancer", Name: f.name, ID: f.id, Zone: d.AvailabilityZone}, "Load balancer %s (%s) is in ERROR (seen %d of %d times before it is recreated)", f.name, f.id, seen, ErrorObservations)
		return zones.Outcome{State: zones.StateError, Outcome: outcome.Outcome{Reason: infrav1.LoadBalancerErrorReason, RequeueAfter: max(s.memory.ErrorInterval, time.Second), Message: fmt.Sprintf("load balancer %s is in ERROR; it is deleted and recreated when still in ERROR after %d observations %s apart (%d so far)", f.name, ErrorObservations, s.memory.ErrorInterval, seen)}}
	}
	err := s.lb.DeleteLoadBalancer(ctx, f.id, loadbalancers.DeleteOpts{Cascade: true})
	if err != nil && !clients.IsNotFound(err) {
		if clients.IsConflict(err) {
			return waiting(fmt.Sprintf("load balancer %s in ERROR is busy", f.name))
		}
		return failed(fmt.Errorf("deleting load balancer %s in ERROR: %w", f.name, err))
	}
	s.memory.forgetError(f.id)
	s.memory.forgetMonitors(f.id)
	s.report.Warn("DeletedLoadBalancer", report.Resource{Kind: "LoadBalancer", Name: f.name, ID: f.id, Zone: d.AvailabilityZone}, "Deleted load balancer %s (%s), in ERROR %d times, to recreate it for %s", f.name, f.id, ErrorObservations, zones.ZoneWords(d.AvailabilityZone))
	out := waiting(fmt.Sprintf("load balancer %s was in ERROR and is being recreated", f.name))
	out.Reason = infrav1.LoadBalancerErrorReason
	return out
}
