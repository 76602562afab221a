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

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	. "github.com/onsi/gomega"
	"go.uber.org/mock/gomock"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

func TestReconcileRouter(t *testing.T) {
	const name = "k8s-clusterapi-cluster-ns-c"
	managed := infrav1.OpenStackClusterSpec{ManagedSubnets: []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24"}}}
	network := &infrav1.NetworkStatusWithSubnets{Subnets: []infrav1.Subnet{{ID: "sub-1", Name: "a"}, {ID: "sub-2", Name: "b"}}}
	ext := &infrav1.NetworkStatus{ID: "ext-1"}
	gateway := routers.GatewayInfo{NetworkID: "ext-1", ExternalFixedIPs: []routers.ExternalFixedIP{{IPAddress: "172.24.4.5"}}}

	t.Run("nothing to route", func(t *testing.T) {
		g := NewWithT(t)
		s, _, _ := newService(t)
		r, err := s.ReconcileRouter(ctx, name, &infrav1.OpenStackClusterSpec{}, network, ext)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(r).To(BeNil(), "a network the user brought is routed by the user")
		r, err = s.ReconcileRouter(ctx, name, &managed, network, nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(r).To(BeNil(), "no external network, no router")
	})

	t.Run("creates the router and an interface per missing subnet", func(t *testing.T) {
		g := NewWithT(t)
		s, m, recorder := newService(t)
		e := m.EXPECT()
		e.ListRouters(ctx, routers.ListOpts{Name: name}).Return(nil, nil)
		e.CreateRouter(ctx, gomock.Any()).DoAndReturn(func(_ any, opts routers.CreateOptsBuilder) (*routers.Router, error) {
			g.Expect(opts.(routers.CreateOpts).GatewayInfo.NetworkID).To(Equal("ext-1"))
			return &routers.Router{ID: "r-1", Description: testOwner.Description(), Name: name, GatewayInfo: gateway}, nil
		})
		e.ListPorts(ctx, ports.ListOpts{DeviceID: "r-1", DeviceOwner: "network:router_interface"}).
			Return([]ports.Port{{FixedIPs: []ports.IP{{SubnetID: "sub-1"}}}}, nil)
		e.AddRouterInterface(ctx, "r-1", routers.AddInterfaceOpts{SubnetID: "sub-2"}).Return(&routers.InterfaceInfo{}, nil)

		r, err := s.ReconcileRouter(ctx, name, &managed, network, ext)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(r).To(Equal(&infrav1.Router{ID: "r-1", Name: name, IPs: []string{"172.24.4.5"}}))
		g.Expect(recorder.Events).To(HaveLen(2))
	})

	t.Run("pins the gateway addresses of spec.externalRouterIPs", func(t *testing.T) {
		g := NewWithT(t)
		s, m, _ := newService(t)
		spec := managed
		spec.ExternalRouterIPs = []infrav1.ExternalRouterIPParam{{FixedIP: "172.24.4.9", Subnet: infrav1.SubnetParam{ID: ptr.To("ext-sub")}}}
		e := m.EXPECT()
		e.ListRouters(ctx, gomock.Any()).Return(nil, nil)
		e.GetSubnet(ctx, "ext-sub").Return(&subnets.Subnet{ID: "ext-sub", NetworkID: "ext-1"}, nil)
		e.CreateRouter(ctx, gomock.Any()).DoAndReturn(func(_ any, opts routers.CreateOptsBuilder) (*routers.Router, error) {
			g.Expect(opts.(routers.CreateOpts).GatewayInfo.ExternalFixedIPs).To(Equal([]routers.ExternalFixedIP{{SubnetID: "ext-sub", IPAddress: "172.24.4.9"}}))
			return &routers.Router{ID: "r-1", Description: testOwner.Description(), Name: name, GatewayInfo: routers.GatewayInfo{NetworkID: "ext-1",
				ExternalFixedIPs: []routers.ExternalFixedIP{{SubnetID: "ext-sub", IPAddress: "172.24.4.9"}}}}, nil
		})
		e.ListPorts(ctx, gomock.Any()).Return(nil, nil)
		e.AddRouterInterface(ctx, "r-1", gomock.Any()).Return(&routers.InterfaceInfo{}, nil).Times(2)
		r, err := s.ReconcileRouter(ctx, name, &spec, network, ext)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(r.IPs).To(Equal([]string{"172.24.4.9"}))
	})

	t.Run("an external router subnet on another network is refused", func(t *testing.T) {
		g := NewWithT(t)
		s, m, _ := newService(t)
		spec := managed
		spec.ExternalRouterIPs = []infrav1.ExternalRouterIPParam{{Subnet: infrav1.SubnetParam{ID: ptr.To("lan")}}}
		m.EXPECT().ListRouters(ctx, gomock.Any()).Return(nil, nil)
		m.EXPECT().GetSubnet(ctx, "lan").Return(&subnets.Subnet{ID: "lan", Name: "lan", NetworkID: "private"}, nil)
		_, err := s.ReconcileRouter(ctx, name, &spec, network, ext)
		g.Expect(err).To(MatchError("spec.externalRouterIPs[0].subnet.id: subnet lan (lan) is on network private, not on network ext-1"))
	})

	t.Run("adopts a router without a gateway and sets it", func(t *testing.T) {
		g := NewWithT(t)
		s, m, _ := newService(t)
		e := m.EXPECT()
		e.ListRouters(ctx, gomock.Any()).Return([]routers.Router{{ID: "r-1", Description: testOwner.Description(), Name: name}}, nil)
		e.UpdateRouter(ctx, "r-1", routers.UpdateOpts{GatewayInfo: &routers.GatewayInfo{NetworkID: "ext-1"}}).
			Return(&routers.Router{ID: "r-1", Description: testOwner.Description(), Name: name, GatewayInfo: gateway}, nil)
		e.ListPorts(ctx, gomock.Any()).Return([]ports.Port{{FixedIPs: []ports.IP{{SubnetID: "sub-1"}, {SubnetID: "sub-2"}}}}, nil)

		r, err := s.ReconcileRouter(ctx, name, &managed, network, ext)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(r.IPs).To(Equal([]string{"172.24.4.5"}))
	})

	t.Run("gateway errors are returned, not dereferenced", func(t *testing.T) {
		g := NewWithT(t)
		s, m, _ := newService(t)
		m.EXPECT().ListRouters(ctx, gomock.Any()).Return([]routers.Router{{ID: "r-1", Description: testOwner.Description()}}, nil)
		m.EXPECT().UpdateRouter(ctx, "r-1", gomock.Any()).Return(nil, errBoom)
		_, err := s.ReconcileRouter(ctx, name, &managed, network, ext)
		g.Expect(err).To(MatchError("setting the gateway of router r-1: boom"))
	})

	t.Run("the user's router by filter", func(t *testing.T) {
		g := NewWithT(t)
		s, m, _ := newService(t)
		spec := managed
		spec.Router = &infrav1.RouterParam{Filter: &infrav1.RouterFilter{Name: "shared"}}
		m.EXPECT().ListRouters(ctx, routers.ListOpts{Name: "shared"}).Return(nil, nil)
		_, err := s.ReconcileRouter(ctx, name, &spec, network, ext)
		g.Expect(err).To(MatchError("spec.router.filter: {name=shared} matches 0 routers, want exactly one"))
	})

	t.Run("the user's router by ID that does not exist", func(t *testing.T) {
		g := NewWithT(t)
		s, m, _ := newService(t)
		spec := managed
		spec.Router = &infrav1.RouterParam{ID: ptr.To("r-9")}
		m.EXPECT().GetRouter(ctx, "r-9").Return(nil, err404)
		_, err := s.ReconcileRouter(ctx, name, &spec, network, ext)
		g.Expect(err).To(MatchError("spec.router.id: router r-9 does not exist"))
	})

	t.Run("interface errors are returned", func(t *testing.T) {
		g := NewWithT(t)
		s, m, _ := newService(t)
		m.EXPECT().ListRouters(ctx, gomock.Any()).Return([]routers.Router{{ID: "r-1", Description: testOwner.Description(), GatewayInfo: gateway}}, nil)
		m.EXPECT().ListPorts(ctx, gomock.Any()).Return(nil, nil)
		m.EXPECT().AddRouterInterface(ctx, "r-1", routers.AddInterfaceOpts{SubnetID: "sub-1"}).Return(nil, errBoom)
		_, err := s.ReconcileRouter(ctx, name, &managed, network, ext)
		g.Expect(err).To(MatchError("adding subnet sub-1 to router r-1: boom"))
	})
}

func TestDeleteManagedRouter(t *testing.T) {
	const name = "k8s-clusterapi-cluster-ns-c"
	iface := func(subnet string) ports.Port { return ports.Port{FixedIPs: []ports.IP{{SubnetID: subnet}}} }

	t.Run("detaches every interface and deletes the router it created; gone is fine", func(t *testing.T) {
		g := NewWithT(t)
		s, m, recorder := newService(t)
		e := m.EXPECT()
		e.ListRouters(ctx, routers.ListOpts{Name: name}).Return([]routers.Router{{ID: "r-1", Description: testOwner.Description(), Name: name}}, nil)
		e.ListPorts(ctx, ports.ListOpts{DeviceID: "r-1", DeviceOwner: "network:router_interface"}).Return([]ports.Port{iface("sub-1")}, nil)
		e.RemoveRouterInterface(ctx, "r-1", routers.RemoveInterfaceOpts{SubnetID: "sub-1"}).Return(nil, err404)
		e.DeleteRouter(ctx, "r-1").Return(nil)
		g.Expect(s.DeleteManagedRouter(ctx, name, &infrav1.OpenStackClusterSpec{})).To(Succeed())
		g.Expect(recorder.Events).To(HaveLen(1))
	})

	t.Run("the user's router loses only the cluster's subnets and stays", func(t *testing.T) {
		g := NewWithT(t)
		s, m, _ := newService(t)
		e := m.EXPECT()
		e.GetRouter(ctx, "r-1").Return(&routers.Router{ID: "r-1", Description: testOwner.Description()}, nil)
		e.ListNetworks(ctx, networks.ListOpts{Name: name}).Return([]networks.Network{{Subnets: []string{"sub-1"}}}, nil)
		e.ListPorts(ctx, gomock.Any()).Return([]ports.Port{iface("sub-1"), iface("someone-elses")}, nil)
		e.RemoveRouterInterface(ctx, "r-1", routers.RemoveInterfaceOpts{SubnetID: "sub-1"}).Return(&routers.InterfaceInfo{}, nil)
		spec := &infrav1.OpenStackClusterSpec{Router: &infrav1.RouterParam{ID: ptr.To("r-1")}}
		g.Expect(s.DeleteManagedRouter(ctx, name, spec)).To(Succeed())
	})

	t.Run("errors are returned", func(t *testing.T) {
		g := NewWithT(t)
		s, m, _ := newService(t)
		m.EXPECT().ListRouters(ctx, gomock.Any()).Return([]routers.Router{{ID: "r-1", Description: testOwner.Description()}}, nil)
		m.EXPECT().ListPorts(ctx, gomock.Any()).Return([]ports.Port{iface("sub-1")}, nil)
		m.EXPECT().RemoveRouterInterface(ctx, "r-1", gomock.Any()).Return(nil, errBoom)
		g.Expect(s.DeleteManagedRouter(ctx, name, &infrav1.OpenStackClusterSpec{})).To(MatchError(ContainSubstring("boom")))
	})
}
