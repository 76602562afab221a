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

package networking

import (
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	. "github.com/onsi/gomega"
	"go.uber.org/mock/gomock"
	"k8s.io/utils/ptr"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients/mock"
)

func TestHoldAPIServerFloatingIP(t *testing.T) {
	marks := APIServerFloatingIPMarks("ns", "c", true)
	ours, upstreams := marks.Ours, marks.TakenOver[0]
	byMark := floatingips.ListOpts{Description: ours}
	byAddress := floatingips.ListOpts{FloatingIP: "203.0.113.7"}
	port := ports.ListOpts{DeviceID: "server", FixedIPs: []ports.FixedIPOpts{{IPAddress: "10.0.0.5"}}}
	free := func(description string) []floatingips.FloatingIP {
		return []floatingips.FloatingIP{{ID: "fip", FloatingIP: "203.0.113.7", Description: description}}
	}
	associate := func(m *mock.MockNetworkClient) {
		m.EXPECT().ListPorts(gomock.Any(), port).Return([]ports.Port{{ID: "p"}}, nil)
		m.EXPECT().UpdateFloatingIP(gomock.Any(), "fip", floatingips.UpdateOpts{PortID: ptr.To("p"), FixedIP: "10.0.0.5"}).Return(&floatingips.FloatingIP{}, nil)
	}
	for _, tc := range []struct {
		name    string
		address string
		expect  func(m *mock.MockNetworkClient)
		want    EndpointFloatingIP
		err     string
	}{{
		name: "the controller's floating IP, free: put on the machine's port",
		expect: func(m *mock.MockNetworkClient) {
			m.EXPECT().ListFloatingIPs(gomock.Any(), byMark).Return(free(ours), nil)
			associate(m)
		},
		want: EndpointFloatingIP{Address: "203.0.113.7", FixedIP: "10.0.0.5", Associated: true},
	}, {
		name:    "already on a port (this machine's or another's): left there",
		address: "203.0.113.7",
		expect: func(m *mock.MockNetworkClient) {
			m.EXPECT().ListFloatingIPs(gomock.Any(), byMark).Return([]floatingips.FloatingIP{{FloatingIP: "203.0.113.7", Description: ours, PortID: "other", FixedIP: "10.0.0.9"}}, nil)
		},
		want: EndpointFloatingIP{Address: "203.0.113.7", FixedIP: "10.0.0.9"},
	}, {
		name:    "the user's address, free and unmarked: taken",
		address: "203.0.113.7",
		expect: func(m *mock.MockNetworkClient) {
			m.EXPECT().ListFloatingIPs(gomock.Any(), byMark).Return(nil, nil)
			m.EXPECT().ListFloatingIPs(gomock.Any(), byAddress).Return(free("reserved by the team"), nil)
			associate(m)
		},
		want: EndpointFloatingIP{Address: "203.0.113.7", FixedIP: "10.0.0.5", Associated: true},
	}, {
		name:    "upstream's floating IP of this cluster: taken",
		address: "203.0.113.7",
		expect: func(m *mock.MockNetworkClient) {
			m.EXPECT().ListFloatingIPs(gomock.Any(), byMark).Return(nil, nil)
			m.EXPECT().ListFloatingIPs(gomock.Any(), byAddress).Return(free(upstreams), nil)
			associate(m)
		},
		want: EndpointFloatingIP{Address: "203.0.113.7", FixedIP: "10.0.0.5", Associated: true},
	}, {
		name:    "another cluster's floating IP at the user's address: refused, nothing changed",
		address: "203.0.113.7",
		expect: func(m *mock.MockNetworkClient) {
			m.EXPECT().ListFloatingIPs(gomock.Any(), byMark).Return(nil, nil)
			m.EXPECT().ListFloatingIPs(gomock.Any(), byAddress).Return(free(APIServerFloatingIPMarks("other", "c", true).Ours), nil)
		},
		err: `floating IP 203.0.113.7 (fip) carries the mark of API server of other/c: it is never taken, changed or released for this cluster`,
	}, {
		name:    "upstream's floating IP of another cluster: refused",
		address: "203.0.113.7",
		expect: func(m *mock.MockNetworkClient) {
			m.EXPECT().ListFloatingIPs(gomock.Any(), byMark).Return(nil, nil)
			m.EXPECT().ListFloatingIPs(gomock.Any(), byAddress).Return(free(APIServerFloatingIPMarks("ns", "d", true).TakenOver[0]), nil)
		},
		err: "carries the mark of upstream CAPO's cluster ns-d",
	}, {
		name:    "another cluster's load balancer floating IP, free while Octavia recreates it: refused",
		address: "203.0.113.7",
		expect: func(m *mock.MockNetworkClient) {
			m.EXPECT().ListFloatingIPs(gomock.Any(), byMark).Return(nil, nil)
			m.EXPECT().ListFloatingIPs(gomock.Any(), byAddress).Return(free("Cluster API OpenStack provider: API server load balancer of other/c in availability zone az1"), nil)
		},
		err: "carries the mark of API server load balancer of other/c in availability zone az1",
	}, {
		name: "nothing allocated yet, no address asked for",
		expect: func(m *mock.MockNetworkClient) {
			m.EXPECT().ListFloatingIPs(gomock.Any(), byMark).Return(nil, nil)
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			s, m, _ := newService(t)
			tc.expect(m)
			got, err := s.HoldAPIServerFloatingIP(ctx, marks, tc.address, "server", "10.0.0.5")
			if tc.err != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.err)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(*got).To(Equal(tc.want))
		})
	}
}

func TestAdoptAPIServerFloatingIPTakesUpstreamsOnly(t *testing.T) {
	g := NewWithT(t)
	marks := APIServerFloatingIPMarks("ns", "c", true)
	ours, upstreams := marks.Ours, marks.TakenOver[0]
	s, m, recorder := newService(t)
	m.EXPECT().ListFloatingIPs(gomock.Any(), floatingips.ListOpts{FloatingIP: "203.0.113.7"}).Return([]floatingips.FloatingIP{
		{ID: "up", FloatingIP: "203.0.113.7", Description: upstreams}, {ID: "user", FloatingIP: "203.0.113.7", Description: "mine"}}, nil)
	m.EXPECT().UpdateFloatingIP(gomock.Any(), "up", floatingips.UpdateOpts{Description: &ours}).Return(&floatingips.FloatingIP{}, nil)
	g.Expect(s.AdoptAPIServerFloatingIP(ctx, marks, "203.0.113.7")).To(Succeed())
	g.Expect(recorder.Events).To(Receive(ContainSubstring("AdoptedFloatingIP")))
}

// The bastion's floating IP: what is on its port already stays (upstream's is marked, the user's
// is left as it is, another object's is refused); otherwise the user's address or the
// controller's, never one on another port.
func TestReconcileServerFloatingIP(t *testing.T) {
	marks := BastionFloatingIPMarks("ns", "c", true)
	onPort := floatingips.ListOpts{PortID: "p"}
	serverPort := func(m *mock.MockNetworkClient) {
		m.EXPECT().ListPorts(gomock.Any(), ports.ListOpts{DeviceID: "server", FixedIPs: []ports.FixedIPOpts{{IPAddress: "10.0.0.9"}}}).Return([]ports.Port{{ID: "p"}}, nil)
	}
	fip := func(description, port string) []floatingips.FloatingIP {
		return []floatingips.FloatingIP{{ID: "fip", FloatingIP: "203.0.113.9", Description: description, PortID: port}}
	}
	for _, tc := range []struct {
		name    string
		address *string
		expect  func(m *mock.MockNetworkClient)
		err     string
	}{{
		name: "upstream's floating IP on the port: marked as the bastion's",
		expect: func(m *mock.MockNetworkClient) {
			m.EXPECT().ListFloatingIPs(gomock.Any(), onPort).Return(fip(marks.TakenOver[0], "p"), nil)
			m.EXPECT().UpdateFloatingIP(gomock.Any(), "fip", floatingips.UpdateOpts{Description: ptr.To(marks.Ours)}).Return(&floatingips.FloatingIP{}, nil)
		},
	}, {
		name: "an unmarked floating IP on the port: the user's, left as it is",
		expect: func(m *mock.MockNetworkClient) {
			m.EXPECT().ListFloatingIPs(gomock.Any(), onPort).Return(fip("ops team", "p"), nil)
		},
	}, {
		name: "another cluster's floating IP on the port: refused, nothing changed",
		expect: func(m *mock.MockNetworkClient) {
			m.EXPECT().ListFloatingIPs(gomock.Any(), onPort).Return(fip(BastionFloatingIPMarks("other", "c", true).Ours, "p"), nil)
		},
		err: "carries the mark of bastion of other/c",
	}, {
		name:    "the user's address on another port: not moved",
		address: ptr.To("203.0.113.9"),
		expect: func(m *mock.MockNetworkClient) {
			m.EXPECT().ListFloatingIPs(gomock.Any(), onPort).Return(nil, nil)
			m.EXPECT().ListFloatingIPs(gomock.Any(), floatingips.ListOpts{FloatingIP: "203.0.113.9"}).Return(fip("", "elsewhere"), nil)
		},
		err: "floating IP 203.0.113.9 is on port elsewhere, not on the port of server server: it is not moved",
	}, {
		name: "none yet: allocated with the bastion's mark and put on the port",
		expect: func(m *mock.MockNetworkClient) {
			m.EXPECT().ListFloatingIPs(gomock.Any(), onPort).Return(nil, nil)
			m.EXPECT().ListFloatingIPs(gomock.Any(), floatingips.ListOpts{FloatingNetworkID: "ext", Description: marks.Ours}).Return(nil, nil)
			m.EXPECT().CreateFloatingIP(gomock.Any(), floatingips.CreateOpts{FloatingNetworkID: "ext", Description: marks.Ours}).Return(&fip(marks.Ours, "")[0], nil)
			m.EXPECT().UpdateFloatingIP(gomock.Any(), "fip", floatingips.UpdateOpts{PortID: ptr.To("p"), FixedIP: "10.0.0.9"}).Return(&floatingips.FloatingIP{}, nil)
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			s, m, _ := newService(t)
			serverPort(m)
			tc.expect(m)
			address, err := s.ReconcileServerFloatingIP(ctx, marks, "ext", tc.address, "server", "10.0.0.9")
			if tc.err != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.err)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(address).To(Equal("203.0.113.9"))
		})
	}
}
