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
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	. "github.com/onsi/gomega"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

func (w *world) addresses() []string {
	var out []string
	for _, f := range w.floatingIPs() {
		out = append(out, f.FloatingIP)
	}
	return out
}

func (w *world) loadBalancerNames() []string {
	var out []string
	for _, lb := range w.loadBalancers() {
		out = append(out, lb.Name)
	}
	return out
}

func TestRemovalOfAvailabilityZones(t *testing.T) {
	g := NewWithT(t)
	w, octavia := newSlowWorld(t, "az1", "az2", "az3")
	s := w.service()
	// az2 has the user's address: one the controller once allocated for it, so it carries az2's
	// mark.
	_, err := w.cloud.Network().CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: w.ext, FloatingIP: "172.24.4.99",
		Description: zones.FloatingIPDescription("ns", "c", "az2")})
	g.Expect(err).NotTo(HaveOccurred())
	status := map[string]*infrav1.LoadBalancer{}
	for _, az := range []string{"az1", "az2", "az3"} {
		d := w.desired(az)
		if az == "az2" {
			d.FloatingIP.Address = "172.24.4.99"
		}
		out, _ := converge(t, s, d, nil)
		status[az] = out.Status
	}
	_, err = w.cloud.LoadBalancer().CreateLoadBalancer(ctx, loadbalancers.CreateOpts{Name: "somebody-elses", VipSubnetID: w.subnets["az1"].ID})
	g.Expect(err).NotTo(HaveOccurred())
	// A floating IP of az3 left unassociated: an allocation whose result was lost.
	leftover, err := w.cloud.Network().CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: w.ext, Description: zones.FloatingIPDescription("ns", "c", "az3")})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(w.loadBalancers()).To(HaveLen(4))
	w.events()
	r := &zones.Removal{Namespace: "ns", Cluster: "c", Names: []string{status["az2"].Name, status["az3"].Name}, IDs: []string{status["az2"].ID, status["az3"].ID},
		KeepAddresses: []string{"172.24.4.99"}, ExternalNetworkID: w.ext}

	// Only the removed zones' load balancers and floating IP go; the user's address stays.
	octavia.freeze()
	done, vipsClear, err := s.deleteReporting(ctx, r)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeFalse(), "done only once Octavia no longer lists them")
	g.Expect(vipsClear).To(BeFalse(), "the user's address stays on az2's VIP")
	g.Expect(w.addresses()).To(ConsistOf(status["az1"].IP, "172.24.4.99", leftover.FloatingIP))

	// Octavia is deleting them: nothing is called on them.
	w.cloud.ResetCalls()
	done, vipsClear, err = s.deleteReporting(ctx, r)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeFalse())
	g.Expect(vipsClear).To(BeFalse(), "still: the user's address leaves with the VIP's port")
	g.Expect(w.cloud.Calls()).To(Equal(map[string]int{"ListLoadBalancers": 1}))

	// Gone: a floating IP of a removed zone left unassociated is released; az1's and the user's
	// are not, nor is anything of az1 or of somebody else.
	octavia.thaw()
	done, err = s.Delete(ctx, r)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeTrue())
	g.Expect(w.loadBalancerNames()).To(ConsistOf(status["az1"].Name, "somebody-elses"))
	g.Expect(w.addresses()).To(ConsistOf(status["az1"].IP, "172.24.4.99"))
	ev := w.events()
	g.Expect(strings.Count(ev, "DeletedLoadBalancer")).To(Equal(2))
	g.Expect(strings.Count(ev, "ReleasedFloatingIP")).To(Equal(2))
}

func TestClusterDeletionFindsEverythingTagged(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	s := w.service()
	create := func(name string, tags ...string) string {
		lb, err := w.cloud.LoadBalancer().CreateLoadBalancer(ctx, loadbalancers.CreateOpts{Name: name, VipSubnetID: w.subnets["az1"].ID, Tags: tags})
		g.Expect(err).NotTo(HaveOccurred())
		return lb.ID
	}
	create(zones.Name("ns", "c", ""))
	renamed := create("whatever", zones.OwnerTag("ns", "c"), testOwner.Tag())
	// The legacy tag alone collides between clusters (ns/c-x and ns-c/x): without the mark or
	// the cluster's name, a load balancer is nobody's here.
	create("someone-elses", zones.OwnerTag("ns", "c"))
	create(zones.Name("ns", "d", "az1"), zones.OwnerTag("ns", "d"))
	// A status (anyone who may write it) can name any load balancer: a hint, never proof.
	humans := create("humans")
	g.Expect(w.loadBalancers()).To(HaveLen(5))
	w.cloud.SetLoadBalancerStatus(renamed, "ERROR")
	r := &zones.Removal{Namespace: "ns", Cluster: "c", Names: []string{zones.Name("ns", "c", "")}, IDs: []string{humans}, AllTagged: true}

	busy := w.cloud.InjectFault(fakeopenstack.Fault{Operation: "DeleteLoadBalancer", Probability: 1, Status: http.StatusConflict})
	done, err := s.Delete(ctx, r)
	g.Expect(err).NotTo(HaveOccurred(), "a busy load balancer is looked at again, not an error")
	g.Expect(done).To(BeFalse())
	g.Expect(busy.Fired()).To(Equal(2), "the legacy one and the marked one renamed by hand, not the other cluster's nor the unmarked ones")
	w.cloud.RemoveFault(busy)

	for i := 0; i < 10 && !done; i++ {
		done, err = s.Delete(ctx, r)
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(done).To(BeTrue())
	g.Expect(w.loadBalancerNames()).To(ConsistOf(zones.Name("ns", "d", "az1"), "someone-elses", "humans"))
}

// slowNeutron lists the floating IPs only once ready says so, or answers an error after 5s.
type slowNeutron struct {
	clients.NetworkClient
	ready func() bool
}

func (n slowNeutron) ListFloatingIPs(ctx context.Context, opts floatingips.ListOptsBuilder) ([]floatingips.FloatingIP, error) {
	for deadline := time.Now().Add(5 * time.Second); !n.ready(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return nil, errors.New("the other zone's load balancer was not deleted meanwhile")
		}
	}
	return n.NetworkClient.ListFloatingIPs(ctx, opts)
}

func TestClusterDeletionDeletesEveryLoadBalancerAtOnce(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1", "az2")
	for _, az := range []string{"az1", "az2"} {
		converge(t, w.service(), w.desired(az), nil)
	}
	g.Expect(w.floatingIPs()).To(HaveLen(2))
	w.events()
	// Each zone's floating IP is listed only once Octavia has both deletes: a removal that
	// waited for one zone's floating IP before deleting the next load balancer would time out.
	neutron := slowNeutron{NetworkClient: w.cloud.Network(), ready: func() bool { return w.cloud.Calls()["DeleteLoadBalancer"] >= 2 }}
	s := NewService(w.cloud.LoadBalancer(), neutron, report.NewRecorder(w.recorder, &infrav1.OpenStackCluster{}, logr.Discard()), w.memory, "fake", testOwner, testOwner.Name)

	w.cloud.ResetCalls()
	done, err := s.Delete(ctx, &zones.Removal{Namespace: "ns", Cluster: "c", AllTagged: true, ExternalNetworkID: w.ext})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeFalse(), "Octavia is deleting them")
	g.Expect(changes(w.cloud.Calls())).To(Equal(map[string]int{"DeleteLoadBalancer": 2, "DeleteFloatingIP": 2}))
	g.Expect(w.floatingIPs()).To(BeEmpty())
	ev := w.events()
	g.Expect(strings.Count(ev, "DeletedLoadBalancer")).To(Equal(2))
	g.Expect(strings.Count(ev, "ReleasedFloatingIP")).To(Equal(2))
}

func TestRemovalWaitsForAFloatingIPBeingAllocated(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, "az1")
	s := w.service()
	r := &zones.Removal{Namespace: "ns", Cluster: "c", AllTagged: true, ExternalNetworkID: w.ext}
	// A floating IP of the cluster's az1 load balancer is still being allocated in the
	// background when the load balancer is already gone: releasing now would miss it.
	g.Expect(w.memory.startAllocation("az1-id", zones.FloatingIPDescription("ns", "c", "az1"))).To(BeTrue())
	g.Expect(w.memory.startAllocation("other-id", zones.FloatingIPDescription("ns", "d", "az1"))).To(BeTrue())
	done, err := s.Delete(ctx, r)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeFalse())

	// Neutron allocates it.
	fip, err := w.cloud.Network().CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: w.ext, Description: zones.FloatingIPDescription("ns", "c", "az1")})
	g.Expect(err).NotTo(HaveOccurred())
	w.memory.finishAllocation("az1-id", fip)
	done, err = s.Delete(ctx, r)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeTrue(), "another cluster's allocation does not hold this one back")
	g.Expect(w.floatingIPs()).To(BeEmpty(), "released")
	g.Expect(w.memory.allocationOf("az1-id", false)).To(BeNil(), "forgotten with its load balancer")
}
