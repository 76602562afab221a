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

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

// child is one port's listener, with its pool and monitor as the status tree shows them.
type child struct {
	listener listeners.Listener
	pool     *pools.Pool
}

// reconcileChildren makes one change to the listeners, pools and monitors of an ACTIVE load
// balancer, if one is needed: Octavia accepts one change at a time per load balancer, so the
// others wait for the next reconcile. It reports whether it changed something.
func (s *Service) reconcileChildren(ctx context.Context, d *zones.Desired, f *found, status *infrav1.LoadBalancer) (zones.Outcome, bool) {
	// The listeners' ports and allowed CIDRs are not in the status tree.
	all, err := s.lb.ListListeners(ctx, listeners.ListOpts{LoadbalancerID: f.id})
	if err != nil {
		return failed(fmt.Errorf("listing the listeners of load balancer %s: %w", f.name, err)), true
	}
	byPort := map[int]*child{}
	for i := range all {
		c := &child{listener: all[i]}
		c.pool = poolOf(f.tree, all[i].ID)
		byPort[all[i].ProtocolPort] = c
	}

	for _, port := range d.Ports {
		if out, changed := s.reconcilePort(ctx, d, f, port, byPort[port]); changed {
			return out, true
		}
	}
	if out, changed := s.removeStrayPorts(ctx, d, f, all); changed {
		return out, true
	}
	cidrs, out, changed := s.reconcileAllowedCIDRs(ctx, d, f, byPort)
	if changed {
		return out, true
	}
	status.AllowedCIDRs = cidrs
	return zones.Outcome{}, false
}

// poolOf finds the pool of a listener in the status tree.
func poolOf(tree *loadbalancers.LoadBalancer, listenerID string) *pools.Pool {
	if tree == nil {
		return nil
	}
	for _, l := range tree.Listeners {
		if l.ID == listenerID && len(l.Pools) > 0 {
			p := l.Pools[0]
			return &p
		}
	}
	return nil
}

func (s *Service) childChanged(f *found, format string, args ...any) (zones.Outcome, bool) {
	return waiting(fmt.Sprintf("load balancer %s: %s", f.name, fmt.Sprintf(format, args...))), true
}

// childCreated records the creation of the listener, pool or health monitor (kind) of port.
func (s *Service) childCreated(d *zones.Desired, f *found, kind, name, id string, port int) (zones.Outcome, bool) {
	what := kindWords[kind]
	s.report.Changed("Created"+kind, report.Resource{Kind: kind, Name: name, ID: id, Zone: d.AvailabilityZone}, "Created %s %s (%s) for port %d", what, name, id, port)
	return s.childChanged(f, "created %s %s", what, name)
}

// kindWords spells the kinds of a load balancer's children for people.
var kindWords = map[string]string{"Listener": "listener", "Pool": "pool", "HealthMonitor": "health monitor"}

// childFailed turns the answer to a child mutation into an outcome: a conflict means Octavia is
// still busy with the load balancer.
func (s *Service) childFailed(f *found, err error, what string) (zones.Outcome, bool) {
	if clients.IsConflict(err) {
		return waiting(fmt.Sprintf("load balancer %s is busy", f.name)), true
	}
	return failed(fmt.Errorf("%s on load balancer %s: %w", what, f.name, err)), true
}

// reconcilePort makes sure port has a listener, a pool and a monitor named after the load
// balancer and ACTIVE: it creates what is missing, renames what carries another name (a former
// load balancer name, or a listener on that port created by hand) and settles what Octavia left
// pending.
func (s *Service) reconcilePort(ctx context.Context, d *zones.Desired, f *found, port int, c *child) (zones.Outcome, bool) {
	name := zones.ChildName(d.Name, port)
	if c == nil {
		cidrs, err := s.applicableCIDRs(ctx, d)
		if err != nil {
			return failed(err), true
		}
		opts := s.listenerOpts(d, port, cidrs, false)
		opts.LoadbalancerID = f.id
		l, err := s.lb.CreateListener(ctx, opts)
		if err != nil {
			return s.childFailed(f, err, fmt.Sprintf("creating listener %s", name))
		}
		return s.childCreated(d, f, "Listener", name, l.ID, port)
	}
	if out, changed := s.nameChild(d, f, "listener", "Listener", c.listener.ID, c.listener.Name, name, c.listener.ProvisioningStatus, func() error {
		_, err := s.lb.UpdateListener(ctx, c.listener.ID, listeners.UpdateOpts{Name: &name})
		return err
	}); changed {
		return out, true
	}
	if c.pool == nil {
		p, err := s.lb.CreatePool(ctx, s.poolOpts(d, name, c.listener.ID))
		if err != nil {
			return s.childFailed(f, err, fmt.Sprintf("creating pool %s", name))
		}
		return s.childCreated(d, f, "Pool", name, p.ID, port)
	}
	if out, changed := s.nameChild(d, f, "pool", "Pool", c.pool.ID, c.pool.Name, name, c.pool.ProvisioningStatus, func() error {
		_, err := s.lb.UpdatePool(ctx, c.pool.ID, pools.UpdateOpts{Name: &name})
		return err
	}); changed {
		return out, true
	}
	if c.pool.Monitor.ID == "" {
		m, err := s.lb.CreateMonitor(ctx, s.monitorOpts(d, name, c.pool.ID, port))
		if err != nil {
			return s.childFailed(f, err, fmt.Sprintf("creating health monitor %s", name))
		}
		s.memory.appliedMonitor(f.id, port, monitorFor(d, port))
		return s.childCreated(d, f, "HealthMonitor", name, m.ID, port)
	}
	monitor := c.pool.Monitor
	if out, changed := s.nameChild(d, f, "health monitor", "HealthMonitor", monitor.ID, monitor.Name, name, monitor.ProvisioningStatus, func() error {
		_, err := s.lb.UpdateMonitor(ctx, monitor.ID, monitors.UpdateOpts{Name: &name})
		return err
	}); changed {
		return out, true
	}
	return s.reconcileMonitorSettings(ctx, d, f, port, monitor.ID)
}

// reconcileMonitorSettings gives the monitor of port the spec's type, delay, timeout, retries,
// path and codes: spec.apiServerLoadBalancer.monitor may change on a running cluster. What was
// applied is remembered (Memory), so the steady state reads nothing more; the monitor is read
// (one list by its ID) only when the spec's settings differ from what was applied, or after a
// restart. Octavia cannot change a monitor's type: a monitor of another type is deleted, and the
// next look creates the new one.
func (s *Service) reconcileMonitorSettings(ctx context.Context, d *zones.Desired, f *found, port int, monitorID string) (zones.Outcome, bool) {
	want := monitorFor(d, port)
	if applied, ok := s.memory.monitorApplied(f.id, port); ok && applied == want {
		return zones.Outcome{}, false
	}
	name := zones.ChildName(d.Name, port)
	found, err := s.lb.ListMonitors(ctx, monitors.ListOpts{ID: monitorID})
	if err != nil {
		return s.childFailed(f, err, fmt.Sprintf("reading health monitor %s", name))
	}
	i := slices.IndexFunc(found, func(m monitors.Monitor) bool { return m.ID == monitorID })
	if i < 0 {
		return zones.Outcome{}, false // gone meanwhile: the next look creates it
	}
	m := found[i]
	has := infrav1.APIServerLoadBalancerMonitor{Type: infrav1.APIServerLoadBalancerMonitorType(m.Type), Delay: m.Delay, Timeout: m.Timeout, MaxRetries: m.MaxRetries, MaxRetriesDown: m.MaxRetriesDown}
	if has.Type == infrav1.MonitorHTTPS {
		has.URLPath, has.ExpectedCodes = m.URLPath, m.ExpectedCodes
	}
	if has == want {
		s.memory.appliedMonitor(f.id, port, want)
		return zones.Outcome{}, false
	}
	if has.Type != want.Type {
		if want.Type == infrav1.MonitorHTTPS {
			// The OVN provider probes TCP only: refused before the TCP monitor is deleted.
			lb, err := s.lb.GetLoadBalancer(ctx, f.id)
			if err != nil {
				return s.childFailed(f, err, "reading its provider")
			}
			if lb.Provider == "ovn" {
				// Warned, not failed: the zone's health and DNS go on with the TCP monitor.
				s.report.Warn(infrav1.LoadBalancerConfigurationErrorReason, report.Resource{Kind: "HealthMonitor", Name: name, ID: monitorID, Zone: d.AvailabilityZone},
					"spec.apiServerLoadBalancer.monitor.type: HTTPS is not available on load balancer %s of provider ovn, whose health monitors probe TCP only; its TCP monitor stays", f.name)
				return zones.Outcome{}, false
			}
		}
		if err := s.lb.DeleteMonitor(ctx, monitorID); err != nil && !clients.IsNotFound(err) {
			return s.childFailed(f, err, fmt.Sprintf("deleting health monitor %s", name))
		}
		s.memory.forgetMonitor(f.id, port)
		s.report.Changed("ReplacingHealthMonitor", report.Resource{Kind: "HealthMonitor", Name: name, ID: monitorID, Zone: d.AvailabilityZone},
			"Deleted health monitor %s (%s) to make it again as %s: Octavia cannot change a monitor's type", name, has.Type, want.Type)
		return s.childChanged(f, "deleted health monitor %s to make it again as %s", name, want.Type)
	}
	update := monitors.UpdateOpts{Delay: want.Delay, Timeout: want.Timeout, MaxRetries: want.MaxRetries, MaxRetriesDown: want.MaxRetriesDown}
	if want.Type == infrav1.MonitorHTTPS {
		update.URLPath, update.ExpectedCodes = want.URLPath, want.ExpectedCodes
	}
	if _, err := s.lb.UpdateMonitor(ctx, monitorID, update); err != nil {
		return s.childFailed(f, err, fmt.Sprintf("updating health monitor %s", name))
	}
	s.memory.appliedMonitor(f.id, port, want)
	s.report.Changed("UpdatedHealthMonitor", report.Resource{Kind: "HealthMonitor", Name: name, ID: monitorID, Zone: d.AvailabilityZone},
		"Updated health monitor %s: %s (was %s)", name, monitorWords(want), monitorWords(has))
	return s.childChanged(f, "updated health monitor %s", name)
}

// nameChild gives a listener, pool or monitor its name, or settles it when Octavia left it
// pending: both are an update of its name, one per reconcile.
func (s *Service) nameChild(d *zones.Desired, f *found, kind, reason, id, have, want, provisioning string, update func() error) (zones.Outcome, bool) {
	if have == want && !stuck(provisioning) {
		return zones.Outcome{}, false
	}
	if err := update(); err != nil {
		verb := "renaming"
		if have == want {
			verb = "settling"
		}
		return s.childFailed(f, err, fmt.Sprintf("%s %s %s", verb, kind, have))
	}
	if have != want {
		s.report.Changed("Renamed"+reason, report.Resource{Kind: reason, Name: want, ID: id, Zone: d.AvailabilityZone}, "Renamed %s %s to %s (%s)", kind, have, want, id)
		return s.childChanged(f, "renamed %s %s", kind, want)
	}
	s.report.Warn("Updated"+reason, report.Resource{Kind: reason, Name: want, ID: id, Zone: d.AvailabilityZone}, stuckMessage, kind, want, provisioning, f.name)
	if s.memory.learnStepwise(s.cloudKey) {
		s.report.Warn("OctaviaLeavesChildrenPending", report.Resource{Kind: "LoadBalancer", Name: f.name, ID: f.id, Zone: d.AvailabilityZone},
			"This cloud's Octavia leaves the listeners, pools and monitors of a load balancer created in one call pending (fixed in Octavia 11.0.1): "+
				"from now on this manager creates load balancers on it first and their listeners, pools and monitors one by one")
	}
	return s.childChanged(f, "settling %s %s", kind, want)
}

// stuck says whether a child of an ACTIVE load balancer is left in a PENDING_* state. Some
// Octavia providers and versions leave the listeners, pools and monitors of a load balancer
// created fully populated in PENDING_CREATE once the load balancer is ACTIVE; such a pool refuses
// members. An update that changes nothing runs Octavia's update flow, which ends it ACTIVE.
func stuck(provisioning string) bool { return strings.HasPrefix(provisioning, "PENDING_") }

const stuckMessage = "Octavia left %s %s %s although load balancer %s is ACTIVE; updated it so that Octavia settles it"

// removeStrayPorts deletes the listener (and its pool) of a port no longer asked for. Only
// listeners named after this load balancer, or a former name of it, are touched.
func (s *Service) removeStrayPorts(ctx context.Context, d *zones.Desired, f *found, all []listeners.Listener) (zones.Outcome, bool) {
	for _, l := range all {
		if slices.Contains(d.Ports, l.ProtocolPort) || !s.ours(d, l.Name, l.ProtocolPort) {
			continue
		}
		if p := poolOf(f.tree, l.ID); p != nil {
			if err := s.lb.DeletePool(ctx, p.ID); err != nil && !clients.IsNotFound(err) {
				return s.childFailed(f, err, fmt.Sprintf("deleting pool %s", p.Name))
			}
			s.report.Changed("DeletedPool", report.Resource{Kind: "Pool", Name: p.Name, ID: p.ID, Zone: d.AvailabilityZone}, "Deleted pool %s (%s): port %d is no longer asked for", p.Name, p.ID, l.ProtocolPort)
			return s.childChanged(f, "deleted pool %s", p.Name)
		}
		if err := s.lb.DeleteListener(ctx, l.ID); err != nil && !clients.IsNotFound(err) {
			return s.childFailed(f, err, fmt.Sprintf("deleting listener %s", l.Name))
		}
		s.report.Changed("DeletedListener", report.Resource{Kind: "Listener", Name: l.Name, ID: l.ID, Zone: d.AvailabilityZone}, "Deleted listener %s (%s): port %d is no longer asked for", l.Name, l.ID, l.ProtocolPort)
		return s.childChanged(f, "deleted listener %s", l.Name)
	}
	return zones.Outcome{}, false
}

func (s *Service) ours(d *zones.Desired, name string, port int) bool {
	for _, lb := range append([]string{d.Name}, d.FormerNames...) {
		if name == zones.ChildName(lb, port) {
			return true
		}
	}
	return false
}

// reconcileAllowedCIDRs sets the allowed CIDRs of every listener, comparing canonical forms. It
// returns the CIDRs in effect (those of the API server port's listener).
func (s *Service) reconcileAllowedCIDRs(ctx context.Context, d *zones.Desired, f *found, byPort map[int]*child) ([]string, zones.Outcome, bool) {
	want, err := s.applicableCIDRs(ctx, d)
	if err != nil {
		return nil, failed(err), true
	}
	supported := len(want) > 0 || len(d.AllowedCIDRs) == 0
	var inEffect []string
	for i, port := range d.Ports {
		c := byPort[port]
		have := zones.CanonicalCIDRs(c.listener.AllowedCIDRs)
		if i == 0 {
			inEffect = have
		}
		if slices.Equal(have, want) || (!supported && len(have) == 0) {
			continue
		}
		cidrs := want
		if cidrs == nil {
			cidrs = []string{}
		}
		_, err := s.lb.UpdateListener(ctx, c.listener.ID, listeners.UpdateOpts{AllowedCIDRs: &cidrs})
		if gophercloud.ResponseCodeIs(err, http.StatusNotImplemented) {
			s.rejectAllowedCIDRs(d.Provider)
			s.report.Warn("AllowedCIDRsNotSupported", report.Resource{Kind: "Listener", Name: c.listener.Name, ID: c.listener.ID, Zone: d.AvailabilityZone}, "Octavia provider %s does not support allowed CIDRs: listener %s stays open to all", providerName(d.Provider), c.listener.Name)
			return inEffect, zones.Outcome{}, false
		}
		if err != nil {
			out, changed := s.childFailed(f, err, fmt.Sprintf("setting the allowed CIDRs of listener %s", c.listener.Name))
			return nil, out, changed
		}
		s.report.Changed("UpdatedListener", report.Resource{Kind: "Listener", Name: c.listener.Name, ID: c.listener.ID, Zone: d.AvailabilityZone}, "Set the allowed CIDRs of listener %s (%s) to [%s]", c.listener.Name, c.listener.ID, joinOrAll(cidrs))
		out, changed := s.childChanged(f, "updated the allowed CIDRs of listener %s", c.listener.Name)
		return nil, out, changed
	}
	return inEffect, zones.Outcome{}, false
}

func joinOrAll(cidrs []string) string {
	if len(cidrs) == 0 {
		return "open to all"
	}
	return fmt.Sprint(cidrs)
}

// monitorWords says what a health monitor does, for events.
func monitorWords(m infrav1.APIServerLoadBalancerMonitor) string {
	words := fmt.Sprintf("delay %ds, timeout %ds, %d retries up, %d down", m.Delay, m.Timeout, m.MaxRetries, m.MaxRetriesDown)
	if m.Type == infrav1.MonitorHTTPS {
		words = fmt.Sprintf("HTTPS GET %s expecting %s, %s", m.URLPath, m.ExpectedCodes, words)
	}
	return words
}
