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
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/go-logr/logr"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/attributestags"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/mtu"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	. "github.com/onsi/gomega"
	"go.uber.org/mock/gomock"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients/mock"
)

var (
	ctx       = context.Background()
	errBoom   = errors.New("boom")
	err404    = gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusNotFound}
	err409    = gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusConflict}
	extTrue   = ptr.To(true)
	extListed = func(opts networks.ListOpts) external.ListOptsExt {
		return external.ListOptsExt{ListOptsBuilder: opts, External: extTrue}
	}
)

func newService(t *testing.T) (*Service, *mock.MockNetworkClient, *events.FakeRecorder) {
	ctrl := gomock.NewController(t)
	client := mock.NewMockNetworkClient(ctrl)
	recorder := events.NewFakeRecorder(10)
	return NewService(client, report.NewRecorder(recorder, &infrav1.OpenStackCluster{}, logr.Discard()), testOwner), client, recorder
}

func TestResolveExternalNetwork(t *testing.T) {
	public := networks.Network{ID: "ext-1", Name: "public"}
	tests := []struct {
		name       string
		spec       infrav1.OpenStackClusterSpec
		expect     func(m *mock.MockNetworkClientMockRecorder)
		want       *infrav1.NetworkStatus
		wantReason string
		wantErr    string
	}{
		{
			name: "disabled",
			spec: infrav1.OpenStackClusterSpec{DisableExternalNetwork: ptr.To(true)},
		},
		{
			name: "the only external network",
			expect: func(m *mock.MockNetworkClientMockRecorder) {
				m.ListNetworks(ctx, extListed(networks.ListOpts{})).Return([]networks.Network{public}, nil)
			},
			want: &infrav1.NetworkStatus{ID: "ext-1", Name: "public"},
		},
		{
			name:       "no external network",
			expect:     func(m *mock.MockNetworkClientMockRecorder) { m.ListNetworks(ctx, gomock.Any()).Return(nil, nil) },
			wantReason: infrav1.ExternalNetworkNotFoundReason,
			wantErr:    "spec.externalNetwork: not set, and the cloud has no external network: set it, or spec.disableExternalNetwork to true",
		},
		{
			name: "several external networks",
			expect: func(m *mock.MockNetworkClientMockRecorder) {
				m.ListNetworks(ctx, gomock.Any()).Return([]networks.Network{public, {ID: "ext-2", Name: "provider"}}, nil)
			},
			wantReason: infrav1.ExternalNetworkNotFoundReason,
			wantErr:    "spec.externalNetwork: not set, and the cloud has 2 external networks (provider, public): set it to choose one",
		},
		{
			name: "by filter",
			spec: infrav1.OpenStackClusterSpec{ExternalNetwork: &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{
				Name: "public", FilterByNeutronTags: infrav1.FilterByNeutronTags{Tags: []infrav1.NeutronTag{"a", "b"}},
			}}},
			expect: func(m *mock.MockNetworkClientMockRecorder) {
				m.ListNetworks(ctx, extListed(networks.ListOpts{Name: "public", Tags: "a,b"})).Return([]networks.Network{public}, nil)
			},
			want: &infrav1.NetworkStatus{ID: "ext-1", Name: "public"},
		},
		{
			name:       "filter matching nothing",
			spec:       infrav1.OpenStackClusterSpec{ExternalNetwork: &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: "nope"}}},
			expect:     func(m *mock.MockNetworkClientMockRecorder) { m.ListNetworks(ctx, gomock.Any()).Return(nil, nil) },
			wantReason: infrav1.ExternalNetworkNotFoundReason,
			wantErr:    "spec.externalNetwork.filter: {name=nope} matches 0 external networks, want exactly one",
		},
		{
			name:   "by ID",
			spec:   infrav1.OpenStackClusterSpec{ExternalNetwork: &infrav1.NetworkParam{ID: ptr.To("ext-1")}},
			expect: func(m *mock.MockNetworkClientMockRecorder) { m.GetNetwork(ctx, "ext-1").Return(&public, nil) },
			want:   &infrav1.NetworkStatus{ID: "ext-1", Name: "public"},
		},
		{
			name:       "ID that does not exist",
			spec:       infrav1.OpenStackClusterSpec{ExternalNetwork: &infrav1.NetworkParam{ID: ptr.To("ext-9")}},
			expect:     func(m *mock.MockNetworkClientMockRecorder) { m.GetNetwork(ctx, "ext-9").Return(nil, err404) },
			wantReason: infrav1.ExternalNetworkNotFoundReason,
			wantErr:    "spec.externalNetwork.id: network ext-9 does not exist",
		},
		{
			name:    "OpenStack error is transient",
			expect:  func(m *mock.MockNetworkClientMockRecorder) { m.ListNetworks(ctx, gomock.Any()).Return(nil, errBoom) },
			wantErr: "listing external networks: boom",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			s, m, _ := newService(t)
			if tt.expect != nil {
				tt.expect(m.EXPECT())
			}
			got, err := s.ResolveExternalNetwork(ctx, &tt.spec)
			if tt.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(got).To(Equal(tt.want))
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
			specErr, isSpec := report.AsSpecError(err)
			g.Expect(isSpec).To(Equal(tt.wantReason != ""), "only problems with the spec are spec errors")
			if isSpec {
				g.Expect(specErr.Reason).To(Equal(tt.wantReason))
			}
		})
	}
}

func TestReconcileManagedNetwork(t *testing.T) {
	spec := infrav1.OpenStackClusterSpec{
		ManagedSubnets: []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24", DNSNameservers: []string{"8.8.8.8"},
			AllocationPools: []infrav1.AllocationPool{{Start: "10.6.0.10", End: "10.6.0.200"}}}},
		NetworkMTU: ptr.To(1400),
		Tags:       []string{"team-a"},
	}
	const name = "k8s-clusterapi-cluster-ns-c"

	t.Run("creates the network and subnet, tagged", func(t *testing.T) {
		g := NewWithT(t)
		s, m, recorder := newService(t)
		e := m.EXPECT()
		e.ListNetworks(ctx, networks.ListOpts{Name: name}).Return(nil, nil)
		e.CreateNetwork(ctx, gomock.Any()).DoAndReturn(func(_ context.Context, opts networks.CreateOptsBuilder) (*networks.Network, error) {
			withMTU, ok := opts.(mtu.CreateOptsExt)
			g.Expect(ok).To(BeTrue(), "the MTU extension carries spec.networkMTU")
			g.Expect(withMTU.MTU).To(Equal(1400))
			return &networks.Network{ID: "net-1", Description: testOwner.Description(), Name: name}, nil
		})
		e.ReplaceAllTags(ctx, "networks", "net-1", attributestags.ReplaceAllOpts{Tags: []string{"team-a"}}).Return([]string{"team-a"}, nil)
		e.ListSubnets(ctx, subnets.ListOpts{NetworkID: "net-1"}).Return(nil, nil)
		e.CreateSubnet(ctx, gomock.Any()).DoAndReturn(func(_ context.Context, opts subnets.CreateOptsBuilder) (*subnets.Subnet, error) {
			o := opts.(subnets.CreateOpts)
			g.Expect(o.CIDR).To(Equal("10.6.0.0/24"))
			g.Expect(o.IPVersion).To(Equal(gophercloud.IPv4))
			g.Expect(o.DNSNameservers).To(Equal([]string{"8.8.8.8"}))
			g.Expect(o.AllocationPools).To(Equal([]subnets.AllocationPool{{Start: "10.6.0.10", End: "10.6.0.200"}}))
			return &subnets.Subnet{ID: "sub-1", Description: testOwner.Description(), Name: name, CIDR: "10.6.0.0/24"}, nil
		})
		e.ReplaceAllTags(ctx, "subnets", "sub-1", attributestags.ReplaceAllOpts{Tags: []string{"team-a"}}).Return([]string{"team-a"}, nil)

		got, err := s.ReconcileNetwork(ctx, name, &spec, nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(&infrav1.NetworkStatusWithSubnets{
			NetworkStatus: infrav1.NetworkStatus{ID: "net-1", Name: name, Tags: []string{"team-a"}},
			Subnets:       []infrav1.Subnet{{ID: "sub-1", Name: name, CIDR: "10.6.0.0/24", Tags: []string{"team-a"}}},
		}))
		g.Expect(recorder.Events).To(HaveLen(2))
	})

	t.Run("adopts what it created before, without a call to change anything", func(t *testing.T) {
		g := NewWithT(t)
		s, m, recorder := newService(t)
		s.Known("net-1")
		e := m.EXPECT()
		e.ListNetworks(ctx, networks.ListOpts{Name: name}).Return([]networks.Network{{ID: "net-1", Description: testOwner.Description(), Name: name, Tags: []string{"team-a"}}}, nil)
		e.ListSubnets(ctx, subnets.ListOpts{NetworkID: "net-1"}).Return([]subnets.Subnet{{ID: "sub-1", Description: testOwner.Description(), Name: name, CIDR: "10.6.0.0/24", Tags: []string{"team-a"}}}, nil)

		got, err := s.ReconcileNetwork(ctx, name, &spec, nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got.ID).To(Equal("net-1"))
		g.Expect(got.Subnets).To(HaveLen(1))
		g.Expect(recorder.Events).To(BeEmpty(), "the status already knew this network")
	})

	t.Run("a network missing from the status is reported as adopted, once", func(t *testing.T) {
		g := NewWithT(t)
		s, m, recorder := newService(t)
		e := m.EXPECT()
		e.ListNetworks(ctx, networks.ListOpts{Name: name}).Return([]networks.Network{{ID: "net-1", Description: testOwner.Description(), Name: name, Tags: []string{"team-a"}}}, nil).Times(2)
		e.ListSubnets(ctx, subnets.ListOpts{NetworkID: "net-1"}).Return([]subnets.Subnet{{ID: "sub-1", Description: testOwner.Description(), Name: name, CIDR: "10.6.0.0/24", Tags: []string{"team-a"}}}, nil).Times(2)
		for range 2 {
			_, err := s.ReconcileNetwork(ctx, name, &spec, nil)
			g.Expect(err).NotTo(HaveOccurred())
		}
		g.Expect(recorder.Events).To(HaveLen(1))
		g.Expect(<-recorder.Events).To(ContainSubstring("AdoptedNetwork"))
	})

	t.Run("refuses to guess between networks of the same name", func(t *testing.T) {
		g := NewWithT(t)
		s, m, _ := newService(t)
		m.EXPECT().ListNetworks(ctx, gomock.Any()).Return([]networks.Network{{ID: "a"}, {ID: "b"}}, nil)
		_, err := s.ReconcileNetwork(ctx, name, &spec, nil)
		g.Expect(err).To(MatchError("2 networks named " + name + " (a, b) are all this object's: delete all but one"))
		specErr, ok := report.AsSpecError(err)
		g.Expect(ok).To(BeTrue(), "duplicates are for the operator to resolve, as for every kind")
		g.Expect(specErr.Reason).To(Equal(infrav1.DuplicateResourcesReason))
	})

	t.Run("create errors are returned", func(t *testing.T) {
		g := NewWithT(t)
		s, m, _ := newService(t)
		m.EXPECT().ListNetworks(ctx, gomock.Any()).Return(nil, nil)
		m.EXPECT().CreateNetwork(ctx, gomock.Any()).Return(nil, errBoom)
		_, err := s.ReconcileNetwork(ctx, name, &spec, nil)
		g.Expect(err).To(MatchError(ContainSubstring("creating network " + name + ": boom")))
	})

	t.Run("subnet create errors are returned", func(t *testing.T) {
		g := NewWithT(t)
		s, m, _ := newService(t)
		m.EXPECT().ListNetworks(ctx, gomock.Any()).Return([]networks.Network{{ID: "net-1", Description: testOwner.Description(), Tags: []string{"team-a"}}}, nil)
		m.EXPECT().ListSubnets(ctx, gomock.Any()).Return(nil, nil)
		m.EXPECT().CreateSubnet(ctx, gomock.Any()).Return(nil, errBoom)
		_, err := s.ReconcileNetwork(ctx, name, &spec, nil)
		g.Expect(err).To(MatchError(ContainSubstring("creating subnet " + name + " (10.6.0.0/24): boom")))
	})
}

func TestKnownManagedNetwork(t *testing.T) {
	spec := infrav1.OpenStackClusterSpec{ManagedSubnets: []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24"}}}
	known := &infrav1.NetworkStatusWithSubnets{NetworkStatus: infrav1.NetworkStatus{ID: "net-1"}, Subnets: []infrav1.Subnet{{ID: "sub-1", CIDR: "10.6.0.0/24"}}}

	t.Run("errors reading it are returned", func(t *testing.T) {
		g := NewWithT(t)
		s, m, _ := newService(t)
		m.EXPECT().GetNetwork(ctx, "net-1").Return(nil, errBoom)
		_, err := s.ReconcileNetwork(ctx, "n", &spec, known)
		g.Expect(err).To(MatchError("getting network net-1: boom"))
	})

	t.Run("a subnet gone from the network is reconciled again", func(t *testing.T) {
		g := NewWithT(t)
		s, m, _ := newService(t)
		// The network read by ID is reused: no second lookup by name.
		m.EXPECT().GetNetwork(ctx, "net-1").Return(&networks.Network{ID: "net-1", Description: testOwner.Description(), Subnets: nil}, nil)
		m.EXPECT().ListSubnets(ctx, gomock.Any()).Return(nil, nil)
		m.EXPECT().CreateSubnet(ctx, gomock.Any()).Return(&subnets.Subnet{ID: "sub-2", Description: testOwner.Description(), CIDR: "10.6.0.0/24"}, nil)
		got, err := s.ReconcileNetwork(ctx, "n", &spec, known)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got.Subnets[0].ID).To(Equal("sub-2"))
	})

	t.Run("an unmarked network the status names under another name is not the cluster's", func(t *testing.T) {
		g := NewWithT(t)
		s, m, _ := newService(t)
		// Anyone who may write the status can name any network: it is looked for by name then.
		m.EXPECT().GetNetwork(ctx, "net-1").Return(&networks.Network{ID: "net-1", Name: "humans", Subnets: []string{"sub-1"}}, nil)
		m.EXPECT().ListNetworks(ctx, networks.ListOpts{Name: "n"}).Return(nil, errBoom)
		_, err := s.ReconcileNetwork(ctx, "n", &spec, known)
		g.Expect(err).To(MatchError("listing networks named n: boom"))
	})

	t.Run("the user's network is not looked up again", func(t *testing.T) {
		g := NewWithT(t)
		s, _, _ := newService(t)
		user := infrav1.OpenStackClusterSpec{Network: &infrav1.NetworkParam{ID: ptr.To("net-1")}}
		got, err := s.ReconcileNetwork(ctx, "n", &user, known)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(known))
	})
}

func TestResolveUserNetwork(t *testing.T) {
	byFilter := infrav1.OpenStackClusterSpec{Network: &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: "k8s"}}}

	t.Run("network by filter, all its subnets", func(t *testing.T) {
		g := NewWithT(t)
		s, m, _ := newService(t)
		m.EXPECT().ListNetworks(ctx, networks.ListOpts{Name: "k8s"}).Return([]networks.Network{{ID: "net-1", Description: testOwner.Description(), Name: "k8s"}}, nil)
		m.EXPECT().ListSubnets(ctx, subnets.ListOpts{NetworkID: "net-1"}).Return([]subnets.Subnet{{ID: "a", CIDR: "10.0.0.0/24"}, {ID: "b", CIDR: "fd00::/64"}}, nil)
		got, err := s.ReconcileNetwork(ctx, "unused", &byFilter, nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got.Subnets).To(HaveLen(2))
	})

	t.Run("the primary subnet comes first, and must be on the network", func(t *testing.T) {
		g := NewWithT(t)
		s, m, _ := newService(t)
		spec := byFilter
		spec.PrimarySubnet = &infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{Name: "b"}}
		m.EXPECT().ListNetworks(ctx, networks.ListOpts{Name: "k8s"}).Return([]networks.Network{{ID: "net-1", Name: "k8s"}}, nil)
		m.EXPECT().ListSubnets(ctx, subnets.ListOpts{NetworkID: "net-1"}).Return([]subnets.Subnet{{ID: "a", CIDR: "10.0.0.0/24"}, {ID: "b", CIDR: "10.0.1.0/24"}}, nil)
		m.EXPECT().ListSubnets(ctx, subnets.ListOpts{NetworkID: "net-1", Name: "b"}).Return([]subnets.Subnet{{ID: "b", Name: "b", CIDR: "10.0.1.0/24", NetworkID: "net-1"}}, nil)
		got, err := s.ReconcileNetwork(ctx, "unused", &spec, nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got.Subnets).To(HaveLen(2))
		g.Expect(got.Subnets[0].ID).To(Equal("b"))
		g.Expect(got.Subnets[1].ID).To(Equal("a"))

		// Known, and given by the ID that is first already: no call.
		spec.PrimarySubnet = &infrav1.SubnetParam{ID: ptr.To("b")}
		again, err := s.ReconcileNetwork(ctx, "unused", &spec, got)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(again).To(Equal(got))

		spec.PrimarySubnet = &infrav1.SubnetParam{ID: ptr.To("sub-9")}
		m.EXPECT().GetSubnet(ctx, "sub-9").Return(&subnets.Subnet{ID: "sub-9", Name: "other", NetworkID: "net-2"}, nil)
		_, err = s.ReconcileNetwork(ctx, "unused", &spec, got)
		g.Expect(err).To(MatchError("spec.primarySubnet.id: subnet other (sub-9) is on network net-2, not on network net-1"))
	})

	t.Run("network filter matching two", func(t *testing.T) {
		g := NewWithT(t)
		s, m, _ := newService(t)
		m.EXPECT().ListNetworks(ctx, gomock.Any()).Return([]networks.Network{{ID: "a"}, {ID: "b"}}, nil)
		_, err := s.ReconcileNetwork(ctx, "unused", &byFilter, nil)
		g.Expect(err).To(MatchError("spec.network.filter: {name=k8s} matches 2 networks, want exactly one"))
		_, isSpec := report.AsSpecError(err)
		g.Expect(isSpec).To(BeTrue())
	})

	t.Run("no network at all", func(t *testing.T) {
		g := NewWithT(t)
		s, _, _ := newService(t)
		_, err := s.ReconcileNetwork(ctx, "unused", &infrav1.OpenStackClusterSpec{}, nil)
		g.Expect(err).To(MatchError(ContainSubstring("spec.network: not set, and spec.managedSubnets is empty")))
	})

	t.Run("a subnet on another network is named precisely", func(t *testing.T) {
		g := NewWithT(t)
		s, m, _ := newService(t)
		spec := infrav1.OpenStackClusterSpec{Network: &infrav1.NetworkParam{ID: ptr.To("net-1")}, Subnets: []infrav1.SubnetParam{{ID: ptr.To("sub-9")}}}
		m.EXPECT().GetNetwork(ctx, "net-1").Return(&networks.Network{ID: "net-1", Description: testOwner.Description(), Name: "k8s"}, nil)
		m.EXPECT().GetSubnet(ctx, "sub-9").Return(&subnets.Subnet{ID: "sub-9", Name: "other", NetworkID: "net-2"}, nil)
		_, err := s.ReconcileNetwork(ctx, "unused", &spec, nil)
		g.Expect(err).To(MatchError("spec.subnets[0].id: subnet other (sub-9) is on network net-2, not on network net-1"))
	})

	t.Run("subnet filter is scoped to the network", func(t *testing.T) {
		g := NewWithT(t)
		s, m, _ := newService(t)
		spec := infrav1.OpenStackClusterSpec{Network: &infrav1.NetworkParam{ID: ptr.To("net-1")},
			Subnets: []infrav1.SubnetParam{{Filter: &infrav1.SubnetFilter{CIDR: "10.0.0.0/24"}}}}
		m.EXPECT().GetNetwork(ctx, "net-1").Return(&networks.Network{ID: "net-1", Description: testOwner.Description()}, nil)
		m.EXPECT().ListSubnets(ctx, subnets.ListOpts{NetworkID: "net-1", CIDR: "10.0.0.0/24"}).Return(nil, nil)
		_, err := s.ReconcileNetwork(ctx, "unused", &spec, nil)
		g.Expect(err).To(MatchError("spec.subnets[0].filter: {cidr=10.0.0.0/24} matches 0 subnets on network net-1, want exactly one"))
	})

	t.Run("network ID that does not exist", func(t *testing.T) {
		g := NewWithT(t)
		s, m, _ := newService(t)
		m.EXPECT().GetNetwork(ctx, "net-9").Return(nil, err404)
		_, err := s.ReconcileNetwork(ctx, "unused", &infrav1.OpenStackClusterSpec{Network: &infrav1.NetworkParam{ID: ptr.To("net-9")}}, nil)
		g.Expect(err).To(MatchError("spec.network.id: network net-9 does not exist"))
	})
}

func TestDeleteManagedNetwork(t *testing.T) {
	const name = "k8s-clusterapi-cluster-ns-c"
	for _, tt := range []struct {
		name    string
		found   []networks.Network
		answer  error
		wantErr error
		events  int
	}{
		{name: "deleted", found: []networks.Network{{ID: "net-1", Description: testOwner.Description()}}, events: 1},
		{name: "nothing to delete", found: nil},
		{name: "gone meanwhile", found: []networks.Network{{ID: "net-1", Description: testOwner.Description()}}, answer: err404},
		{name: "ports still in use", found: []networks.Network{{ID: "net-1", Description: testOwner.Description()}}, answer: err409, wantErr: ErrWaitingForPorts},
		{name: "other error", found: []networks.Network{{ID: "net-1", Description: testOwner.Description()}}, answer: errBoom, wantErr: errBoom},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			s, m, recorder := newService(t)
			m.EXPECT().ListNetworks(ctx, networks.ListOpts{Name: name}).Return(tt.found, nil)
			if len(tt.found) > 0 {
				m.EXPECT().DeleteNetwork(ctx, "net-1").Return(tt.answer)
			}
			err := s.DeleteManagedNetwork(ctx, name)
			if tt.wantErr == nil {
				g.Expect(err).NotTo(HaveOccurred())
			} else {
				g.Expect(errors.Is(err, tt.wantErr)).To(BeTrue(), "got %v", err)
			}
			g.Expect(recorder.Events).To(HaveLen(tt.events))
		})
	}
}

// testOwner is the OpenStackCluster the tests' resources are for.
var testOwner = ownership.Owner{Kind: "OpenStackCluster", Namespace: "ns", Name: "c", Takeover: true}
