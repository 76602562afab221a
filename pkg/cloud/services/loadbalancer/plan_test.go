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
	"net/http"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	. "github.com/onsi/gomega"
	"go.uber.org/mock/gomock"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients/mock"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

// These unit tests (mocks, no API server) pin how the spec and the status become the load
// balancers to converge: which subnet each zone gets, what is refused and how it is worded, and
// that what the status already knows costs no call.

func planFixture(t *testing.T) (*networking.Service, *mock.MockNetworkClient, *infrav1.OpenStackCluster) {
	ctrl := gomock.NewController(t)
	client := mock.NewMockNetworkClient(ctrl)
	osc := &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}}
	osc.Spec.ControlPlaneEndpoint = &clusterv1.APIEndpoint{Host: "api.example.com", Port: 6443}
	osc.Spec.APIServerFloatingIP = ptr.To("172.24.4.99")
	osc.Spec.APIServerLoadBalancer = &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true), Network: &infrav1.NetworkParam{ID: ptr.To("lb-net")}}
	osc.Status.ExternalNetwork = &infrav1.NetworkStatus{ID: "public"}
	return networking.NewService(client, nil, ownership.Owner{}), client, osc
}

// newPlan is the plan of osc's reconcile, resolved through net.
func newPlan(net Resolver, osc *infrav1.OpenStackCluster) (*zones.Plan, error) {
	_, plan, _, err := planFor(ctx, net, RecordedInput(osc, "c"))
	return plan, err
}

// unrecordedInput is a cluster whose external network is "ext".
var unrecordedInput = &zones.Input{Namespace: "ns", Cluster: "c", ExternalNetwork: &infrav1.NetworkStatus{ID: "ext"}}

func mapping(az string, subnet infrav1.SubnetParam) infrav1.AZSubnetMapping {
	return infrav1.AZSubnetMapping{AvailabilityZone: az, Subnet: subnet}
}

func TestPlanResolvesEveryMappingAndRefusesPrecisely(t *testing.T) {
	g := NewWithT(t)
	net, client, osc := planFixture(t)
	osc.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets = []infrav1.AZSubnetMapping{
		mapping("az1", infrav1.SubnetParam{ID: ptr.To("sub-1")}),
		mapping("az2", infrav1.SubnetParam{ID: ptr.To("sub-2")}),
		mapping("az3", infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{Name: "lb-az3"}}),
		mapping("az4", infrav1.SubnetParam{ID: ptr.To("sub-4")}),
		mapping("az5", infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{Name: "lb-az5"}}),
	}
	client.EXPECT().GetNetwork(ctx, "lb-net").Return(&networks.Network{ID: "lb-net", Name: "lb"}, nil)
	client.EXPECT().ListNetworks(ctx, external.ListOptsExt{ListOptsBuilder: networks.ListOpts{ID: "lb-net"}, External: ptr.To(true)}).Return(nil, nil)
	client.EXPECT().GetSubnet(ctx, "sub-1").Return(&subnets.Subnet{ID: "sub-1", Name: "lb-az1", NetworkID: "lb-net", CIDR: "10.0.1.0/24"}, nil)
	client.EXPECT().GetSubnet(ctx, "sub-2").Return(&subnets.Subnet{ID: "sub-2", Name: "elsewhere", NetworkID: "net-9"}, nil)
	client.EXPECT().ListSubnets(ctx, subnets.ListOpts{NetworkID: "lb-net", Name: "lb-az3"}).Return(nil, nil)
	client.EXPECT().GetSubnet(ctx, "sub-4").Return(nil, gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusNotFound})
	client.EXPECT().ListSubnets(ctx, subnets.ListOpts{NetworkID: "lb-net", Name: "lb-az5"}).Return([]subnets.Subnet{{ID: "sub-5", NetworkID: "lb-net"}}, nil)

	plan, err := newPlan(net, osc)
	g.Expect(err).NotTo(HaveOccurred(), "a wrong mapping concerns its zone only")
	g.Expect(plan.Desired).To(HaveLen(2))
	az1, az5 := plan.Desired[0], plan.Desired[1]
	g.Expect(az1.Name).To(Equal("k8s-clusterapi-cluster-ns-c-az1-kubeapi"))
	g.Expect(az1.OctaviaAZ).To(Equal("az1"))
	g.Expect(az1.Subnet).To(Equal(&infrav1.Subnet{ID: "sub-1", Name: "lb-az1", CIDR: "10.0.1.0/24"}))
	g.Expect(az1.Network.ID).To(Equal("lb-net"))
	g.Expect(az1.FormerNames).To(Equal([]string{"k8s-clusterapi-cluster-ns-c-kubeapi"}), "the first zone inherits the legacy load balancer")
	g.Expect(az1.FloatingIP.Address).To(Equal("172.24.4.99"), "the user's floating IP belongs to the first zone")
	g.Expect(az5.Subnet.ID).To(Equal("sub-5"))
	g.Expect(az5.FormerNames).To(BeEmpty())
	g.Expect(az5.FloatingIP.Address).To(BeEmpty())
	g.Expect(az5.FloatingIP.Description).To(Equal(zones.FloatingIPDescription("ns", "c", "az5")))

	messages := map[string]string{}
	for _, o := range plan.Invalid {
		g.Expect(o.State).To(Equal(zones.StateInvalid))
		g.Expect(o.Reason).To(Equal(infrav1.LoadBalancerConfigurationErrorReason))
		messages[o.AvailabilityZone] = o.Message
	}
	g.Expect(messages).To(Equal(map[string]string{
		"az2": "spec.apiServerLoadBalancer.availabilityZoneSubnets[1].subnet.id: subnet elsewhere (sub-2) is on network net-9, not on network lb-net; nothing is provisioned for it",
		"az3": "spec.apiServerLoadBalancer.availabilityZoneSubnets[2].subnet.filter: {name=lb-az3} matches 0 subnets on network lb-net, want exactly one; nothing is provisioned for it",
		"az4": "spec.apiServerLoadBalancer.availabilityZoneSubnets[3].subnet.id: subnet sub-4 does not exist; nothing is provisioned for it",
	}))
}

func TestPlanReusesTheStatusAndFindsRemovedZones(t *testing.T) {
	g := NewWithT(t)
	net, _, osc := planFixture(t)
	osc.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets = []infrav1.AZSubnetMapping{
		mapping("az1", infrav1.SubnetParam{ID: ptr.To("sub-1")}),
		mapping("az2", infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{Name: "lb-az2"}}),
	}
	entry := func(az, subnet string) infrav1.LoadBalancer {
		return infrav1.LoadBalancer{Name: zones.Name("ns", "c", az), ID: az + "-id", AvailabilityZone: az,
			LoadBalancerNetwork: &infrav1.NetworkStatusWithSubnets{NetworkStatus: infrav1.NetworkStatus{ID: "lb-net"}, Subnets: []infrav1.Subnet{{ID: subnet}}}}
	}
	osc.Status.APIServerLoadBalancers = []infrav1.LoadBalancer{entry("az1", "sub-1"), entry("az2", "sub-2"), entry("az3", "sub-3")}

	// No call is expected: the mock fails the test on any.
	plan, err := newPlan(net, osc)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plan.Invalid).To(BeEmpty())
	g.Expect(plan.Desired).To(HaveLen(2))
	g.Expect(plan.Desired[1].Subnet.ID).To(Equal("sub-2"))
	g.Expect(plan.Known[0].ID).To(Equal("az1-id"))
	g.Expect(plan.Known[1].ID).To(Equal("az2-id"))
	g.Expect(plan.Stale).To(HaveLen(1))
	g.Expect(plan.Stale[0].AvailabilityZone).To(Equal("az3"))

	removal := plan.StaleRemoval(RecordedInput(osc, "c"))
	g.Expect(removal.Names).To(Equal([]string{"k8s-clusterapi-cluster-ns-c-az3-kubeapi"}))
	g.Expect(removal.IDs).To(Equal([]string{"az3-id"}))
	g.Expect(removal.KeepAddresses).To(Equal([]string{"172.24.4.99"}))
	g.Expect(removal.AllTagged).To(BeFalse(), "only the removed zone goes")
}

func TestPlanBackToASingleLoadBalancerKeepsTheFirstZones(t *testing.T) {
	g := NewWithT(t)
	net, _, osc := planFixture(t)
	first := infrav1.LoadBalancer{Name: zones.Name("ns", "c", "az1"), ID: "az1-id", AvailabilityZone: "az1",
		LoadBalancerNetwork: &infrav1.NetworkStatusWithSubnets{NetworkStatus: infrav1.NetworkStatus{ID: "lb-net"}, Subnets: []infrav1.Subnet{{ID: "sub-1"}}}}
	second := first
	second.Name, second.ID, second.AvailabilityZone = zones.Name("ns", "c", "az2"), "az2-id", "az2"
	osc.Status.APIServerLoadBalancer = &first
	osc.Status.APIServerLoadBalancers = []infrav1.LoadBalancer{first, second}

	plan, err := newPlan(net, osc)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plan.Desired).To(HaveLen(1))
	d := plan.Desired[0]
	g.Expect(d.Name).To(Equal("k8s-clusterapi-cluster-ns-c-kubeapi"))
	g.Expect(d.FormerNames).To(Equal([]string{first.Name}), "the first zone's load balancer is renamed back, its VIP kept")
	g.Expect(d.Subnet.ID).To(Equal("sub-1"))
	g.Expect(plan.Known[0].ID).To(Equal("az1-id"))
	g.Expect(plan.Stale).To(HaveLen(1))
	g.Expect(plan.Stale[0].AvailabilityZone).To(Equal("az2"))
}

func TestEndpointProblem(t *testing.T) {
	g := NewWithT(t)
	problem := func(ep *clusterv1.APIEndpoint) string {
		in := &zones.Input{Endpoint: ep, LoadBalancer: &infrav1.APIServerLoadBalancer{
			Enabled: ptr.To(true), AvailabilityZoneSubnets: []infrav1.AZSubnetMapping{mapping("az1", infrav1.SubnetParam{ID: ptr.To("sub-1")})}}}
		return zones.EndpointProblem(in)
	}
	g.Expect(problem(&clusterv1.APIEndpoint{Host: "api.example.com"})).To(BeEmpty())
	g.Expect(problem(nil)).To(ContainSubstring("availabilityZoneSubnets needs an explicit endpoint"))
	g.Expect(problem(&clusterv1.APIEndpoint{Host: "192.0.2.10"})).To(ContainSubstring("spec.controlPlaneEndpoint.host 192.0.2.10 is an IP address"))
	g.Expect(problem(&clusterv1.APIEndpoint{Host: "2001:db8::1"})).To(ContainSubstring("is an IP address"))
	g.Expect(zones.EndpointProblem(&zones.Input{Endpoint: &clusterv1.APIEndpoint{Host: "192.0.2.10"}})).To(BeEmpty(),
		"a single load balancer may have an IP address as its endpoint")
}

func TestVIPsOffClusterNetwork(t *testing.T) {
	cluster := &infrav1.OpenStackClusterStatus{Network: &infrav1.NetworkStatusWithSubnets{
		NetworkStatus: infrav1.NetworkStatus{ID: "cluster-net"}, Subnets: []infrav1.Subnet{{ID: "cluster-sub"}}}}
	entry := func(network, subnet string) infrav1.LoadBalancer {
		return infrav1.LoadBalancer{LoadBalancerNetwork: &infrav1.NetworkStatusWithSubnets{
			NetworkStatus: infrav1.NetworkStatus{ID: network}, Subnets: []infrav1.Subnet{{ID: subnet}}}}
	}
	for _, tc := range []struct {
		name    string
		entries []infrav1.LoadBalancer
		userFIP bool
		want    bool
	}{
		{name: "every VIP on the load balancer network", entries: []infrav1.LoadBalancer{entry("lb-net", "a"), entry("lb-net", "b")}, want: true},
		{name: "nothing recorded", want: false},
		{name: "a VIP on the cluster network", entries: []infrav1.LoadBalancer{entry("lb-net", "a"), entry("cluster-net", "cluster-sub")}, want: false},
		{name: "the inherited load balancer, its VIP still on a cluster subnet", entries: []infrav1.LoadBalancer{entry("lb-net", "cluster-sub")}, want: false},
		{name: "a VIP whose subnet is unknown", entries: []infrav1.LoadBalancer{{LoadBalancerNetwork: &infrav1.NetworkStatusWithSubnets{NetworkStatus: infrav1.NetworkStatus{ID: "lb-net"}}}}, want: false},
		{name: "the user's floating IP, which the router must keep serving", entries: []infrav1.LoadBalancer{entry("lb-net", "a")}, userFIP: true, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			osc := &infrav1.OpenStackCluster{Status: *cluster.DeepCopy()}
			osc.Status.APIServerLoadBalancers = tc.entries
			if tc.userFIP {
				osc.Spec.APIServerFloatingIP = ptr.To("203.0.113.5")
			}
			NewWithT(t).Expect(zones.VIPsOffClusterNetwork(RecordedInput(osc, "c"))).To(Equal(tc.want))
		})
	}
}

func TestPlanGivesEachZoneItsOwnFloatingIP(t *testing.T) {
	g := NewWithT(t)
	_, _, osc := planFixture(t)
	osc.Spec.APIServerFloatingIP = nil
	z1 := mapping("az1", infrav1.SubnetParam{ID: ptr.To("sub-1")})
	z1.FloatingIP = ptr.To("172.24.4.51")
	z2 := mapping("az2", infrav1.SubnetParam{ID: ptr.To("sub-2")})
	z3 := mapping("az3", infrav1.SubnetParam{ID: ptr.To("sub-3")})
	z3.FloatingIP = ptr.To("172.24.4.53")
	osc.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets = []infrav1.AZSubnetMapping{z1, z2, z3}
	entry := func(az, subnet string) infrav1.LoadBalancer {
		return infrav1.LoadBalancer{Name: zones.Name("ns", "c", az), ID: az + "-id", AvailabilityZone: az,
			LoadBalancerNetwork: &infrav1.NetworkStatusWithSubnets{NetworkStatus: infrav1.NetworkStatus{ID: "lb-net"}, Subnets: []infrav1.Subnet{{ID: subnet}}}}
	}
	osc.Status.APIServerLoadBalancers = []infrav1.LoadBalancer{entry("az1", "sub-1"), entry("az2", "sub-2"), entry("az3", "sub-3"), entry("az4", "sub-4")}

	plan, err := newPlan(nil, osc)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plan.Desired).To(HaveLen(3))
	g.Expect(*plan.Desired[0].FloatingIP).To(Equal(zones.FloatingIP{ExternalNetworkID: "public", Address: "172.24.4.51",
		Field: zones.LBPath.Child("availabilityZoneSubnets").Index(0).Child("floatingIP"), Description: zones.FloatingIPDescription("ns", "c", "az1"),
		TakenOver: []string{"Created by cluster-api-provider-openstack cluster ns-c"}}), "the first zone takes over upstream's address")
	g.Expect(plan.Desired[1].FloatingIP.Address).To(BeEmpty(), "a zone without one gets an address the controller allocates")
	g.Expect(plan.Desired[2].FloatingIP.Address).To(Equal("172.24.4.53"))
	g.Expect(plan.StaleRemoval(RecordedInput(osc, "c")).KeepAddresses).To(Equal([]string{"172.24.4.51", "172.24.4.53"}),
		"removing a zone never releases an address the user gave")
}

// A status lost in the middle of a zone's removal: the zone's load balancer is found by the
// cluster's tag (or, once it is gone, its floating IP by its description) and planned for
// removal; while the status records every zone, nothing is asked.
func TestPlanFindsTheLoadBalancersOfRemovedZonesTheStatusLost(t *testing.T) {
	g := NewWithT(t)
	m := newMocked(t)
	svc := m.service()
	az1 := desiredAZ("az1")
	plan := &zones.Plan{Desired: []*zones.Desired{az1}, Known: []*infrav1.LoadBalancer{known(az1)}}
	g.Expect(svc.findUnrecorded(ctx, unrecordedInput, plan)).To(Succeed(), "no call: the mock fails on any")
	g.Expect(plan.Stale).To(BeEmpty())

	plan = &zones.Plan{Desired: []*zones.Desired{az1}, Known: []*infrav1.LoadBalancer{nil}}
	m.lb.EXPECT().ListLoadBalancers(gomock.Any(), loadbalancers.ListOpts{Tags: []string{zones.OwnerTag("ns", "c")}}).Return([]loadbalancers.LoadBalancer{
		{ID: "az1-id", Name: zones.Name("ns", "c", "az1")},
		{ID: "az2-id", Name: zones.Name("ns", "c", "az2"), VipAddress: "10.20.1.5"},
		{ID: "legacy-id", Name: zones.Name("ns", "c", "")},       // the first zone's former name: not stale
		{ID: "other-id", Name: zones.Name("ns", "other", "az2")}, // another cluster's, tagged by mistake
	}, nil)
	// A zone whose load balancer is gone and whose floating IP is not: found by the address's
	// description.
	m.net.EXPECT().ListFloatingIPs(gomock.Any(), floatingips.ListOpts{FloatingNetworkID: "ext"}).Return([]floatingips.FloatingIP{
		{ID: "az1-fip", Description: zones.FloatingIPDescription("ns", "c", "az1")},
		{ID: "az2-fip", Description: zones.FloatingIPDescription("ns", "c", "az2")},
		{ID: "az3-fip", Description: zones.FloatingIPDescription("ns", "c", "az3")},
		{ID: "other-fip", Description: zones.FloatingIPDescription("ns", "other", "az4")},
		{ID: "users", Description: "mine, in availability zone az5"},
	}, nil)
	g.Expect(svc.findUnrecorded(ctx, unrecordedInput, plan)).To(Succeed())
	g.Expect(plan.Stale).To(Equal([]infrav1.LoadBalancer{
		{Name: zones.Name("ns", "c", "az2"), ID: "az2-id", AvailabilityZone: "az2", InternalIP: "10.20.1.5"},
		{Name: zones.Name("ns", "c", "az3"), AvailabilityZone: "az3"},
	}))

	single := &zones.Desired{Name: zones.Name("ns", "c", "")}
	plan = &zones.Plan{Desired: []*zones.Desired{single}, Known: []*infrav1.LoadBalancer{nil}}
	g.Expect(svc.findUnrecorded(ctx, unrecordedInput, plan)).To(Succeed(), "one load balancer: nothing looked for")
}

// A cluster deleted after its status was lost (no external network recorded) still releases the
// floating IPs the controller allocated, found by their description among the project's.
func TestDeletionWithoutTheExternalNetworkReleasesTheFloatingIPs(t *testing.T) {
	g := NewWithT(t)
	m := newMocked(t)
	m.lb.EXPECT().ListLoadBalancers(gomock.Any(), gomock.Any()).Return(nil, nil)
	m.net.EXPECT().ListFloatingIPs(gomock.Any(), floatingips.ListOpts{}).Return([]floatingips.FloatingIP{
		{ID: "ours", FloatingIP: "172.24.4.5", Description: zones.FloatingIPDescription("ns", "c", "az1")},
		{ID: "users", FloatingIP: "172.24.4.6", Description: "somebody else's"},
	}, nil)
	m.net.EXPECT().DeleteFloatingIP(gomock.Any(), "ours").Return(nil)
	done, err := m.service().Delete(ctx, &zones.Removal{Namespace: "ns", Cluster: "c", AllTagged: true})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeTrue())
}

// A removal whose floating IP could not be released is not done: the status keeps it, and the
// next reconcile releases the address (a removal dropped from the status would leave it).
func TestRemovalIsNotDoneUntilTheFloatingIPIsReleased(t *testing.T) {
	g := NewWithT(t)
	m := newMocked(t)
	m.lb.EXPECT().ListLoadBalancers(gomock.Any(), gomock.Any()).Return(nil, nil)
	m.net.EXPECT().ListFloatingIPs(gomock.Any(), floatingips.ListOpts{}).Return([]floatingips.FloatingIP{
		{ID: "az3-fip", FloatingIP: "172.24.4.7", Description: zones.FloatingIPDescription("ns", "c", "az3")},
	}, nil)
	m.net.EXPECT().DeleteFloatingIP(gomock.Any(), "az3-fip").Return(gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusInternalServerError})
	done, err := m.service().Delete(ctx, &zones.Removal{Namespace: "ns", Cluster: "c", Names: []string{zones.Name("ns", "c", "az3")}})
	g.Expect(err).To(HaveOccurred())
	g.Expect(done).To(BeFalse())
}

// A zone whose reconcile panics (a cloud's answer the code did not expect) ends in that zone's
// error; the other zones go on, and the manager does not exit.
func TestAPanicInOneZoneIsThatZonesError(t *testing.T) {
	g := NewWithT(t)
	m := newMocked(t)
	az1, az2 := desiredAZ("az1"), desiredAZ("az2")
	k1 := known(az1)
	k2 := known(az2)
	k2.ID = "22222222-2222-4222-8222-222222222222"
	m.lb.EXPECT().GetLoadBalancerStatuses(gomock.Any(), k1.ID).DoAndReturn(func(context.Context, string) (*loadbalancers.StatusTree, error) {
		panic("a nil the code did not expect")
	})
	m.lb.EXPECT().GetLoadBalancerStatuses(gomock.Any(), k2.ID).Return(nil, gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusServiceUnavailable})
	plan := &zones.Plan{Desired: []*zones.Desired{az1, az2}, Known: []*infrav1.LoadBalancer{k1, k2}}
	outcomes, staleDone, staleErr := m.service().converge(ctx, unrecordedInput, plan)
	g.Expect(staleDone).To(BeTrue())
	g.Expect(staleErr).NotTo(HaveOccurred())
	g.Expect(outcomes[0].AvailabilityZone).To(Equal("az1"))
	g.Expect(outcomes[0].State).To(Equal(zones.StateError))
	g.Expect(outcomes[0].Err).To(MatchError(ContainSubstring("load balancer k8s-clusterapi-cluster-ns-c-az1-kubeapi stopped on an internal error (a nil the code did not expect)")))
	g.Expect(outcomes[0].Message).To(Equal(outcomes[0].Err.Error()), "summarised, so that the zone is never counted ready")
	g.Expect(outcomes[1].AvailabilityZone).To(Equal("az2"))
	g.Expect(outcomes[1].Err).To(MatchError(ContainSubstring("503")), "the other zone went on to its own answer")
}

// An external network (router:external) as the load balancer network is refused, naming it;
// nothing else is resolved.
func TestPlanRefusesAnExternalLoadBalancerNetwork(t *testing.T) {
	g := NewWithT(t)
	net, client, osc := planFixture(t)
	osc.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets = []infrav1.AZSubnetMapping{mapping("az1", infrav1.SubnetParam{ID: ptr.To("sub-1")})}
	client.EXPECT().GetNetwork(ctx, "lb-net").Return(&networks.Network{ID: "lb-net", Name: "public"}, nil)
	client.EXPECT().ListNetworks(ctx, external.ListOptsExt{ListOptsBuilder: networks.ListOpts{ID: "lb-net"}, External: ptr.To(true)}).
		Return([]networks.Network{{ID: "lb-net", Name: "public"}}, nil)
	_, err := newPlan(net, osc)
	g.Expect(err).To(MatchError("spec.apiServerLoadBalancer.network: network public (lb-net) is an external network (router:external): " +
		"name the internal network the load balancers' VIP subnets are on"))

	// The single load balancer on it: its zone's refusal.
	net, client, osc = planFixture(t)
	client.EXPECT().GetNetwork(ctx, "lb-net").Return(&networks.Network{ID: "lb-net", Name: "public"}, nil)
	client.EXPECT().ListNetworks(ctx, gomock.Any()).Return([]networks.Network{{ID: "lb-net", Name: "public"}}, nil)
	plan, err := newPlan(net, osc)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plan.Desired).To(BeEmpty())
	g.Expect(plan.Invalid).To(HaveLen(1))
	g.Expect(plan.Invalid[0].Message).To(ContainSubstring("is an external network (router:external)"))
}
