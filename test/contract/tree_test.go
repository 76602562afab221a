//go:build contract

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

package contract

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
)

// fullyPopulatedStatusTree checks what the load balancer controller reads in the steady state:
// a load balancer created with its listeners, pools and monitors in one request shows them all
// in its status tree, by name, with the members added later; a rename shows in the tree too.
func fullyPopulatedStatusTree(t *testing.T, tg target) {
	ctx := context.Background()
	_, subnetID := scratchSubnet(t, tg)
	childName := func(port int) string {
		return map[int]string{6443: "capo-contract-api", 8132: "capo-contract-extra"}[port]
	}
	lbID, active := populatedLoadBalancer(t, tg, subnetID, "capo-contract-tree", childName)

	tree, err := tg.clients.LoadBalancer.GetLoadBalancerStatuses(ctx, lbID)
	if err != nil {
		t.Fatal(err)
	}
	if tree.Loadbalancer.Name != "capo-contract-tree" || len(tree.Loadbalancer.Listeners) != 2 {
		t.Fatalf("status tree: want the load balancer's name and 2 listeners, got %q with %d", tree.Loadbalancer.Name, len(tree.Loadbalancer.Listeners))
	}
	var pool pools.Pool
	for _, l := range tree.Loadbalancer.Listeners {
		if len(l.Pools) != 1 {
			t.Fatalf("listener %s: want 1 pool in the tree, got %d", l.Name, len(l.Pools))
		}
		p := l.Pools[0]
		if p.Name != l.Name || p.Monitor.ID == "" || p.Monitor.Name != l.Name {
			t.Errorf("listener %s: want its pool and monitor of the same name in the tree, got pool %q, monitor %q (%q)", l.Name, p.Name, p.Monitor.Name, p.Monitor.ID)
		}
		if l.Name == "capo-contract-api" {
			pool = p
		}
	}

	// Some Octavia deployments (this project's local one among them) leave the children of a
	// fully populated load balancer PENDING_CREATE once it is ACTIVE, and such a pool refuses
	// members. The controller settles each with an update that changes nothing; after that
	// every child is ACTIVE.
	settled := settleChildren(t, tg, tree, active)
	t.Logf("%d children were left pending and settled by an update", settled)
	if tree, err = tg.clients.LoadBalancer.GetLoadBalancerStatuses(ctx, lbID); err != nil {
		t.Fatal(err)
	}
	for _, l := range tree.Loadbalancer.Listeners {
		for _, p := range l.Pools {
			if stuck(l.ProvisioningStatus) || stuck(p.ProvisioningStatus) || stuck(p.Monitor.ProvisioningStatus) {
				t.Errorf("after an update, listener %s is %s, its pool %s, its monitor %s", l.Name, l.ProvisioningStatus, p.ProvisioningStatus, p.Monitor.ProvisioningStatus)
			}
		}
	}

	if _, err := tg.clients.LoadBalancer.CreateMember(ctx, pool.ID, pools.CreateMemberOpts{Name: "cp-1", Address: "10.250.0.77", ProtocolPort: 6443}); err != nil {
		t.Fatal(err)
	}
	if err := poll(60*time.Second, active); err != nil {
		t.Fatal(err)
	}
	// A second member on the same address and port is refused, as the membership code expects.
	_, err = tg.clients.LoadBalancer.CreateMember(ctx, pool.ID, pools.CreateMemberOpts{Name: "again", Address: "10.250.0.77", ProtocolPort: 6443})
	if !isCode(err, http.StatusConflict) {
		t.Errorf("a duplicate member: want 409, got %v", err)
	}
	if err := poll(60*time.Second, active); err != nil {
		t.Fatal(err)
	}
	renamed := "capo-contract-renamed"
	if _, err := tg.clients.LoadBalancer.UpdatePool(ctx, pool.ID, pools.UpdateOpts{Name: &renamed}); err != nil {
		t.Fatal(err)
	}
	if err := poll(60*time.Second, active); err != nil {
		t.Fatal(err)
	}
	tree, err = tg.clients.LoadBalancer.GetLoadBalancerStatuses(ctx, lbID)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range tree.Loadbalancer.Listeners {
		for _, p := range l.Pools {
			if p.ID != pool.ID {
				continue
			}
			found = true
			if p.Name != renamed {
				t.Errorf("renamed pool shows as %q in the tree", p.Name)
			}
			if len(p.Members) != 1 || p.Members[0].Name != "cp-1" || p.Members[0].Address != "10.250.0.77" || p.Members[0].ProtocolPort != 6443 {
				t.Errorf("want member cp-1 10.250.0.77:6443 in the tree, got %+v", p.Members)
			}
		}
	}
	if !found {
		t.Error("the pool is not in the tree")
	}
	disabledMemberIsOffline(t, tg, lbID, pool.ID, active)
	algorithmOfAnotherProvider(t, tg, lbID)
}

// algorithmOfAnotherProvider checks the answer pools.Algorithm relies on: a provider refuses a
// pool algorithm it cannot run with 501 and names the algorithm. The amphora provider refuses
// SOURCE_IP_PORT, the only algorithm the OVN provider runs (which is why a cluster on OVN gets
// SOURCE_IP_PORT pools and every other one ROUND_ROBIN).
func algorithmOfAnotherProvider(t *testing.T, tg target, lbID string) {
	_, err := tg.clients.LoadBalancer.CreatePool(context.Background(), pools.CreateOpts{Name: "capo-contract-ovn-algorithm", LoadbalancerID: lbID,
		Protocol: pools.ProtocolTCP, LBMethod: pools.LBMethodSourceIpPort})
	if !isCode(err, http.StatusNotImplemented) || !strings.Contains(answer(err), "SOURCE_IP_PORT") {
		t.Errorf("a SOURCE_IP_PORT pool on an amphora load balancer: want 501 naming the algorithm, got %s", answer(err))
	}
}

// disabledMemberIsOffline checks what planned zone maintenance relies on: a member updated to
// admin_state_up false is listed so, and its status tree entry becomes OFFLINE (the tree does
// not carry admin_state_up: OFFLINE is what tells the membership code to look), and it can be
// enabled again.
func disabledMemberIsOffline(t *testing.T, tg target, lbID, poolID string, active func() (bool, error)) {
	ctx := context.Background()
	members, err := tg.clients.LoadBalancer.ListMembers(ctx, poolID, pools.ListMembersOpts{Address: "10.250.0.77", ProtocolPort: 6443})
	if err != nil || len(members) != 1 {
		t.Fatalf("listing the member by address and port: %v, %d members", err, len(members))
	}
	id := members[0].ID
	for _, up := range []bool{false, true} {
		if err := tg.clients.LoadBalancer.UpdateMember(ctx, poolID, id, pools.UpdateMemberOpts{AdminStateUp: &up}); err != nil {
			t.Fatal(err)
		}
		if err := poll(60*time.Second, active); err != nil {
			t.Fatal(err)
		}
		members, err = tg.clients.LoadBalancer.ListMembers(ctx, poolID, pools.ListMembersOpts{Address: "10.250.0.77", ProtocolPort: 6443})
		if err != nil || len(members) != 1 || members[0].AdminStateUp != up {
			t.Fatalf("after setting admin_state_up %t: %v, %+v", up, err, members)
		}
		if up {
			break
		}
		err = poll(60*time.Second, func() (bool, error) {
			tree, err := tg.clients.LoadBalancer.GetLoadBalancerStatuses(ctx, lbID)
			if err != nil {
				return false, err
			}
			for _, l := range tree.Loadbalancer.Listeners {
				for _, p := range l.Pools {
					for _, m := range p.Members {
						if m.ID == id {
							return m.OperatingStatus == "OFFLINE", nil
						}
					}
				}
			}
			return false, nil
		})
		if err != nil {
			t.Fatalf("a disabled member's operating status in the status tree: want OFFLINE: %v", err)
		}
	}
}

// populatedLoadBalancer creates a load balancer as the controller does (listeners, pools and TCP
// monitors for ports 6443 and 8132 in one request, children named childName(port)), deletes it
// when the test ends, and waits until it is ACTIVE.
func populatedLoadBalancer(t *testing.T, tg target, subnetID, name string, childName func(port int) string) (string, func() (bool, error)) {
	t.Helper()
	ctx := context.Background()
	var ls []listeners.CreateOpts
	for _, port := range []int{6443, 8132} {
		child := childName(port)
		ls = append(ls, listeners.CreateOpts{Name: child, Protocol: listeners.ProtocolTCP, ProtocolPort: port,
			DefaultPool: &pools.CreateOpts{Name: child, Protocol: pools.ProtocolTCP, LBMethod: pools.LBMethodRoundRobin,
				Monitor: monitors.CreateOpts{Name: child, Type: monitors.TypeTCP, Delay: 10, Timeout: 5, MaxRetries: 5}}})
	}
	lb, err := tg.clients.LoadBalancer.CreateLoadBalancer(ctx, loadbalancers.CreateOpts{Name: name, VipSubnetID: subnetID, Listeners: ls})
	if err != nil {
		t.Fatal(err)
	}
	deleteWhenDone(t, tg, lb.ID)
	active := func() (bool, error) {
		got, err := tg.clients.LoadBalancer.GetLoadBalancer(ctx, lb.ID)
		return err == nil && got.ProvisioningStatus == "ACTIVE", err
	}
	if err := poll(120*time.Second, active); err != nil {
		t.Fatalf("load balancer never became ACTIVE: %v", err)
	}
	return lb.ID, active
}

// settleChildren updates, with nothing to change, each listener, pool and monitor of the tree
// that is still PENDING_*, as the controller does, and returns how many there were.
func settleChildren(t *testing.T, tg target, tree *loadbalancers.StatusTree, active func() (bool, error)) int {
	t.Helper()
	ctx := context.Background()
	settled := 0
	for _, l := range tree.Loadbalancer.Listeners {
		name := l.Name
		if stuck(l.ProvisioningStatus) {
			if _, err := tg.clients.LoadBalancer.UpdateListener(ctx, l.ID, listeners.UpdateOpts{Name: &name}); err != nil {
				t.Fatal(err)
			}
			settled++
			mustActive(t, active)
		}
		for _, p := range l.Pools {
			if stuck(p.ProvisioningStatus) {
				if _, err := tg.clients.LoadBalancer.UpdatePool(ctx, p.ID, pools.UpdateOpts{Name: &name}); err != nil {
					t.Fatal(err)
				}
				settled++
				mustActive(t, active)
			}
			if stuck(p.Monitor.ProvisioningStatus) {
				if _, err := tg.clients.LoadBalancer.UpdateMonitor(ctx, p.Monitor.ID, monitors.UpdateOpts{Name: &name}); err != nil {
					t.Fatal(err)
				}
				settled++
				mustActive(t, active)
			}
		}
	}
	return settled
}

func stuck(status string) bool { return strings.HasPrefix(status, "PENDING_") }

func mustActive(t *testing.T, active func() (bool, error)) {
	t.Helper()
	if err := poll(60*time.Second, active); err != nil {
		t.Fatal(err)
	}
}

// bulkSecurityGroupRules checks that rules created in one request are all created, or none.
func bulkSecurityGroupRules(t *testing.T, tg target) {
	ctx := context.Background()
	sg, err := tg.clients.Network.CreateSecGroup(ctx, groups.CreateOpts{Name: "capo-contract-bulk"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tg.clients.Network.DeleteSecGroup(ctx, sg.ID) })
	count := func() int {
		rs, err := tg.clients.Network.ListSecGroupRules(ctx, rules.ListOpts{SecGroupID: sg.ID})
		if err != nil {
			t.Fatal(err)
		}
		return len(rs)
	}
	before := count()
	rule := func(group string, port int) rules.CreateOpts {
		return rules.CreateOpts{SecGroupID: group, Direction: rules.DirIngress, EtherType: rules.EtherType4, Protocol: rules.ProtocolTCP, PortRangeMin: port, PortRangeMax: port}
	}
	made, err := tg.clients.Network.CreateSecGroupRules(ctx, []rules.CreateOpts{rule(sg.ID, 6443), rule(sg.ID, 10250)})
	if err != nil {
		t.Fatal(err)
	}
	if len(made) != 2 || made[0].ID == "" || made[0].PortRangeMin != 6443 || made[1].PortRangeMin != 10250 {
		t.Errorf("bulk create: want two rules in order with IDs, got %+v", made)
	}
	_, err = tg.clients.Network.CreateSecGroupRules(ctx, []rules.CreateOpts{rule(sg.ID, 2379), rule("00000000-0000-4000-8000-000000000000", 2380)})
	if err == nil {
		t.Error("a bulk request with a rule for a missing group succeeded")
	}
	if got := count(); got != before+2 {
		t.Errorf("after a failed bulk request: want %d rules, got %d", before+2, got)
	}
}
