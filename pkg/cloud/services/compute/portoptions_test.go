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

package compute

import (
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

func TestPortOptionsAreNeutronsAttributes(t *testing.T) {
	g := NewWithT(t)
	g.Expect(portOptions(&infrav1.PortOpts{})).To(Equal(PortOptions{}), "nothing asked, nothing sent")
	g.Expect(portOptions(&infrav1.PortOpts{Profile: &infrav1.BindingProfile{OVSHWOffload: ptr.To(false), TrustedVF: ptr.To(false)}}).Profile).
		To(BeNil(), "a profile key only turns its feature on")

	got := portOptions(&infrav1.PortOpts{
		AdminStateUp: ptr.To(false), MACAddress: ptr.To("fa:16:3e:12:34:56"), HostID: ptr.To("compute-3"), VNICType: ptr.To("direct"),
		AllowedAddressPairs:   []infrav1.AddressPair{{IPAddress: "10.6.0.250"}, {IPAddress: "10.6.1.0/24", MACAddress: ptr.To("fa:16:3e:00:00:01")}},
		Profile:               &infrav1.BindingProfile{OVSHWOffload: ptr.To(true), TrustedVF: ptr.To(true)},
		PropagateUplinkStatus: ptr.To(true),
		ValueSpecs:            []infrav1.ValueSpec{{Name: "dns", Key: "dns_name", Value: "cp-0"}},
	})
	g.Expect(got).To(Equal(PortOptions{
		AdminStateUp: ptr.To(false), MACAddress: "fa:16:3e:12:34:56", HostID: "compute-3", VNICType: "direct",
		AllowedAddressPairs:   []ports.AddressPair{{IPAddress: "10.6.0.250"}, {IPAddress: "10.6.1.0/24", MACAddress: "fa:16:3e:00:00:01"}},
		Profile:               map[string]any{"capabilities": []string{"switchdev"}, "trusted": true},
		PropagateUplinkStatus: ptr.To(true),
		ValueSpecs:            map[string]string{"dns_name": "cp-0"},
	}))
}
