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

package chaos

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

const (
	// convergeReconciles and convergeTime bound how long a phase may take to converge once
	// faults stop, in reconciles and in simulated time.
	convergeReconciles = 5000
	convergeTime       = 3 * time.Hour
)

// checkInvariants fails when two OpenStack objects exist for one purpose: two load balancers,
// listeners, pools, monitors, security groups, networks, subnets, routers, ports or servers of
// one name, two floating IPs allocated for one load balancer, two members of one address in a
// pool. It runs after every reconcile, faults or not.
func (w *world) checkInvariants() {
	w.n.checks++
	seen := map[string]string{}
	for _, r := range w.cloud.Inventory() {
		if r.Purpose == "" {
			continue
		}
		key := r.Kind + " " + r.Purpose
		if first, ok := seen[key]; ok {
			w.fail("two %ss for one purpose %q: %s and %s", r.Kind, r.Purpose, first, r.ID)
		}
		seen[key] = r.ID
	}
}

// converge runs reconciles without faults until the phase's end state is reached, then checks
// it.
func (w *world) converge(phase string) {
	start := w.clk.Now()
	for i := 0; ; i++ {
		why := w.notConverged(phase)
		if why == "" {
			w.step("phase %q: converged", phase)
			w.checkEndState(phase)
			return
		}
		if i > convergeReconciles || w.clk.Now().Sub(start) > convergeTime {
			w.fail("phase %q did not converge once faults stopped (%d steps, %s simulated): %s", phase, i, w.clk.Now().Sub(start), why)
		}
		if !w.tick() {
			w.fail("phase %q: nothing is queued, and it has not converged: %s", phase, why)
		}
	}
}

// notConverged says what is not there yet, or "" when the phase's end state is reached.
func (w *world) notConverged(phase string) string {
	ctx := context.Background()
	osc := &infrav1.OpenStackCluster{}
	err := w.kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "c"}, osc)
	if phase == "cluster deleted" {
		if apierrors.IsNotFound(err) {
			return ""
		}
		return "the OpenStackCluster is still there"
	}
	w.must(err)
	// Every condition True, but for control plane zones without a load balancer: a warning the
	// scenario may earn by placing machines in a zone it then removes, which keeps Ready False.
	warned := reason(osc.Status.Conditions, infrav1.FailureDomainsReadyCondition) == infrav1.ControlPlaneFailureDomainWithoutLoadBalancerReason
	for _, c := range osc.Status.Conditions {
		if c.Status == metav1.ConditionTrue || c.Type == clusterv1.PausedCondition ||
			(warned && (c.Type == infrav1.ReadyCondition || c.Type == infrav1.FailureDomainsReadyCondition)) {
			continue
		}
		return fmt.Sprintf("OpenStackCluster condition %s is %s: %s: %s", c.Type, c.Status, c.Reason, c.Message)
	}
	if len(osc.Status.Conditions) == 0 {
		return "the OpenStackCluster has no conditions"
	}
	if w.sc.single {
		if osc.Status.APIServerLoadBalancer == nil || len(osc.Status.APIServerLoadBalancers) != 0 {
			return "the status does not show one load balancer"
		}
	} else if len(osc.Status.APIServerLoadBalancers) != len(w.sc.zones) {
		return fmt.Sprintf("the status shows %d load balancers for %d zones", len(osc.Status.APIServerLoadBalancers), len(w.sc.zones))
	}
	for _, name := range w.machineNames() {
		m := w.machines[name]
		if m.deleting {
			return "machine " + name + " is being deleted"
		}
		osm := &infrav1.OpenStackMachine{}
		w.must(w.kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, osm))
		if !isTrue(osm.Status.Conditions, infrav1.InstanceReadyCondition) {
			return fmt.Sprintf("machine %s: instance not ready: %v", name, osm.Status.Conditions)
		}
		if m.zone != "" && !isTrue(osm.Status.Conditions, infrav1.APIServerIngressReadyCondition) &&
			reason(osm.Status.Conditions, infrav1.APIServerIngressReadyCondition) != infrav1.NoLoadBalancerInAvailabilityZoneReason {
			return fmt.Sprintf("machine %s: not in the load balancers: %v", name, osm.Status.Conditions)
		}
	}
	return ""
}

// checkEndState checks the cloud once a phase converged: exactly the load balancers the spec
// asks for, one floating IP on each, one server per machine; after deletion, exactly what the
// operator brought.
func (w *world) checkEndState(phase string) {
	inv := w.cloud.Inventory()
	if phase == "cluster deleted" {
		if diff := inventoryDiff(w.baseline, inv); diff != "" {
			w.fail("after deletion the cloud is not what the operator brought:\n%s", diff)
		}
		return
	}
	var want []string
	if w.sc.single {
		want = []string{zones.Name(namespace, "c", "")}
	} else {
		for _, az := range w.sc.zones {
			want = append(want, zones.Name(namespace, "c", az))
		}
	}
	got := names(inv, "LoadBalancer")
	slices.Sort(want)
	if !slices.Equal(got, want) {
		w.fail("phase %q: load balancers %v, want %v", phase, got, want)
	}
	ports := map[string]bool{}
	for _, r := range inv {
		if r.Kind == "Port" {
			ports[r.ID] = true
		}
	}
	fips := 0
	for _, r := range inv {
		if r.Kind != "FloatingIP" {
			continue
		}
		fips++
		if !ports[r.Owner] {
			w.fail("phase %q: floating IP %s (%q) is on no port: leaked", phase, r.Name, r.Purpose)
		}
	}
	if fips != len(want) {
		w.fail("phase %q: %d floating IPs for %d load balancers", phase, fips, len(want))
	}
	if servers, machines := names(inv, "Server"), w.machineNames(); !slices.Equal(servers, machines) {
		w.fail("phase %q: servers %v, machines %v", phase, servers, machines)
	}
	// A trunk on each control plane machine's port, and no other.
	trunked := 0
	for _, m := range w.machineNames() {
		if w.machines[m].zone != "" {
			trunked++
		}
	}
	if trunks := names(inv, "Trunk"); len(trunks) != trunked {
		w.fail("phase %q: trunks %v, want one for each of the %d control plane machines", phase, trunks, trunked)
	}
	// Each machine's two volumes, attached to its server; and the operator's, untouched.
	servers := map[string]string{}
	for _, r := range inv {
		if r.Kind == "Server" {
			servers[r.ID] = r.Name
		}
	}
	wantVolumes := []string{"m1-data (the operator's, detached)"}
	for _, m := range w.machineNames() {
		wantVolumes = append(wantVolumes, m+"-data (on "+m+")", m+"-root (on "+m+")")
	}
	var gotVolumes []string
	for _, r := range inv {
		if r.Kind != "Volume" {
			continue
		}
		switch {
		case strings.HasSuffix(r.Purpose, " the operator's") && r.Owner == "":
			gotVolumes = append(gotVolumes, r.Name+" (the operator's, detached)")
		case servers[r.Owner] != "":
			gotVolumes = append(gotVolumes, r.Name+" (on "+servers[r.Owner]+")")
		default:
			gotVolumes = append(gotVolumes, r.Name+" (detached: "+r.Purpose+")")
		}
	}
	slices.Sort(wantVolumes)
	slices.Sort(gotVolumes)
	if !slices.Equal(gotVolumes, wantVolumes) {
		w.fail("phase %q: volumes %v, want %v", phase, gotVolumes, wantVolumes)
	}
}

func names(inv []fakeopenstack.Resource, kind string) []string {
	var out []string
	for _, r := range inv {
		if r.Kind == kind {
			out = append(out, r.Name)
		}
	}
	slices.Sort(out)
	return out
}

// inventoryDiff lists what is in one inventory and not in the other, by kind and ID.
func inventoryDiff(before, after []fakeopenstack.Resource) string {
	key := fakeopenstack.Resource.String
	was := map[string]bool{}
	for _, r := range before {
		was[key(r)] = true
	}
	var out []string
	for _, r := range after {
		if !was[key(r)] {
			out = append(out, "left behind: "+key(r))
		}
		delete(was, key(r))
	}
	for k := range was {
		out = append(out, "deleted, though the operator brought it: "+k)
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// checkSecretsNeverShown fails when a log line or an event of the run holds the value of the
// identity secret or of a machine's bootstrap data.
func (w *world) checkSecretsNeverShown() {
	lines := append(w.logs.all(), w.events.all()...)
	if len(lines) == 0 {
		w.fail("no log line and no event recorded: the check below would prove nothing")
	}
	for _, line := range lines {
		for _, s := range w.secrets {
			if strings.Contains(line, s) {
				w.fail("a secret's value is in a log line or event: %s", line)
			}
		}
	}
}
