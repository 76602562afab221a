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
	"testing"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

func TestResolveMachineSubnets(t *testing.T) {
	cloud := fakeopenstack.New(fakeopenstack.Options{})
	s := NewService(cloud.Network(), report.NewRecorder(events.NewFakeRecorder(10), &infrav1.OpenStackCluster{}, logr.Discard()), testOwner)
	cluster := cloud.AddNetwork("cluster", false)
	onCluster := cloud.AddSubnet(cluster, "nodes-az1", "10.30.1.0/24")
	az2Net := cloud.AddNetwork("nodes-az2", false)
	onAZ2 := cloud.AddSubnet(az2Net, "nodes-az2", "10.30.2.0/24")
	entry := func(az string, network *string, subnet infrav1.SubnetParam) infrav1.ZoneMachineSubnet {
		e := infrav1.ZoneMachineSubnet{AvailabilityZone: az, Subnet: subnet}
		if network != nil {
			e.Network = &infrav1.NetworkParam{ID: network}
		}
		return e
	}
	byName := func(name string) infrav1.SubnetParam {
		return infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{Name: name}}
	}

	g := NewWithT(t)
	spec := &infrav1.OpenStackClusterSpec{AvailabilityZoneMachineSubnets: []infrav1.ZoneMachineSubnet{
		entry("az1", nil, byName("nodes-az1")),
		entry("az2", ptr.To(az2Net), infrav1.SubnetParam{ID: ptr.To(onAZ2)}),
	}}
	got, err := s.ResolveMachineSubnets(context.Background(), spec, &infrav1.NetworkStatus{Name: "cluster", ID: cluster})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal([]infrav1.ZoneMachineSubnetStatus{
		{AvailabilityZone: "az1", Network: infrav1.NetworkStatus{Name: "cluster", ID: cluster}, Subnet: infrav1.Subnet{Name: "nodes-az1", ID: onCluster, CIDR: "10.30.1.0/24"}},
		{AvailabilityZone: "az2", Network: infrav1.NetworkStatus{Name: "nodes-az2", ID: az2Net}, Subnet: infrav1.Subnet{Name: "nodes-az2", ID: onAZ2, CIDR: "10.30.2.0/24"}},
	}))

	for _, tc := range []struct {
		name  string
		entry infrav1.ZoneMachineSubnet
		want  string
	}{
		{"a subnet of another network", entry("az2", nil, infrav1.SubnetParam{ID: ptr.To(onAZ2)}),
			"spec.availabilityZoneMachineSubnets[0].subnet.id: subnet nodes-az2 (" + onAZ2 + ") is on network " + az2Net + ", not on network " + cluster},
		{"a filter that matches nothing on the network", entry("az2", nil, byName("nodes-az2")),
			"spec.availabilityZoneMachineSubnets[0].subnet.filter"},
		{"a network that does not exist", entry("az2", ptr.To("5f2b7a8e-0000-4000-8000-000000000000"), byName("nodes-az2")),
			"spec.availabilityZoneMachineSubnets[0].network.id: network 5f2b7a8e-0000-4000-8000-000000000000 does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := s.ResolveMachineSubnets(context.Background(), &infrav1.OpenStackClusterSpec{AvailabilityZoneMachineSubnets: []infrav1.ZoneMachineSubnet{tc.entry}}, &infrav1.NetworkStatus{ID: cluster})
			specErr, ok := report.AsSpecError(err)
			g.Expect(ok).To(BeTrue(), "%v", err)
			g.Expect(specErr.Reason).To(Equal(infrav1.NetworkNotFoundReason))
			g.Expect(specErr.Message).To(ContainSubstring(tc.want))
		})
	}
}
