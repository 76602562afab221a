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

package webhooks

import (
	"context"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

const (
	netID = "6c90b532-7ba0-418a-a276-5ae55060b5b0"
	sub1  = "cad5a91a-36de-4388-823b-b0cc82cadfdc"
	sub2  = "e2407c18-c4e7-4d3d-befa-8eec5d8756f2"
	sub3  = "0f4f3d8e-54a4-4d7c-9a2b-1d2f3e4a5b6c"
)

func mapping(az, subnetID string) infrav1.AZSubnetMapping {
	return infrav1.AZSubnetMapping{AvailabilityZone: az, Subnet: infrav1.SubnetParam{ID: ptr.To(subnetID)}}
}

// multiAZCluster is a valid two-zone cluster; tests change a copy of it.
func multiAZCluster() *infrav1.OpenStackCluster {
	return &infrav1.OpenStackCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"},
		Spec: infrav1.OpenStackClusterSpec{
			IdentityRef:          &infrav1.OpenStackIdentityReference{Name: "c-cloud-config", CloudName: "openstack"},
			APIServerPort:        6443,
			ControlPlaneEndpoint: &clusterv1.APIEndpoint{Host: "api.example.com", Port: 6443},
			APIServerLoadBalancer: &infrav1.APIServerLoadBalancer{
				Enabled:                 ptr.To(true),
				Network:                 &infrav1.NetworkParam{ID: ptr.To(netID)},
				AvailabilityZoneSubnets: []infrav1.AZSubnetMapping{mapping("az1", sub1), mapping("az2", sub2)},
			},
		},
	}
}

// legacyCluster has a single load balancer and a DNS endpoint host.
func legacyCluster() *infrav1.OpenStackCluster {
	c := multiAZCluster()
	c.Spec.APIServerLoadBalancer = &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true), AvailabilityZone: ptr.To("az1")}
	return c
}

func TestOpenStackClusterValidateUpdate(t *testing.T) {
	tests := []struct {
		name string
		old  func() *infrav1.OpenStackCluster
		// change turns a copy of old into the new object.
		change func(*infrav1.OpenStackCluster)
		// wantFields are the field paths the rejection must name; empty means accepted.
		wantFields   []string
		wantMessage  string
		wantWarnings []string
	}{
		{
			name:   "no change",
			old:    multiAZCluster,
			change: func(*infrav1.OpenStackCluster) {},
		},
		{
			name:   "identityRef may change",
			old:    multiAZCluster,
			change: func(c *infrav1.OpenStackCluster) { c.Spec.IdentityRef.Name = "rotated" },
		},
		{
			name: "endpoint may be set when it was not",
			old: func() *infrav1.OpenStackCluster {
				c := legacyCluster()
				c.Spec.ControlPlaneEndpoint = nil
				return c
			},
			change: func(c *infrav1.OpenStackCluster) {
				c.Spec.ControlPlaneEndpoint = &clusterv1.APIEndpoint{Host: "203.0.113.7", Port: 6443}
			},
		},
		{
			name: "a zone's floating IP may not be set on an existing zone",
			old:  multiAZCluster,
			change: func(c *infrav1.OpenStackCluster) {
				c.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets[1].FloatingIP = ptr.To("203.0.113.20")
			},
			wantFields:  []string{"spec.apiServerLoadBalancer.availabilityZoneSubnets[1].floatingIP"},
			wantMessage: `the floating IP of availability zone "az2" cannot be set, changed or removed on an existing zone`,
		},
		{
			name: "a zone added with its floating IP",
			old:  multiAZCluster,
			change: func(c *infrav1.OpenStackCluster) {
				m := mapping("az3", "5c4e7d7e-3b6a-4a53-9a7e-0e1f2a3b4c5d")
				m.FloatingIP = ptr.To("203.0.113.21")
				c.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets = append(c.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets, m)
			},
		},
		{
			name:        "endpoint host may not change once set",
			old:         multiAZCluster,
			change:      func(c *infrav1.OpenStackCluster) { c.Spec.ControlPlaneEndpoint.Host = "api2.example.com" },
			wantFields:  []string{"spec.controlPlaneEndpoint.host"},
			wantMessage: immutableDetail,
		},
		{
			name: "endpoint may go from the load balancer's floating IP, as upstream CAPO sets it, to a DNS name",
			old: func() *infrav1.OpenStackCluster {
				c := legacyCluster()
				c.Spec.ControlPlaneEndpoint = &clusterv1.APIEndpoint{Host: "203.0.113.7", Port: 6443}
				c.Status.APIServerLoadBalancer = &infrav1.LoadBalancer{IP: "203.0.113.7", InternalIP: "10.6.0.9"}
				return c
			},
			change:       func(c *infrav1.OpenStackCluster) { c.Spec.ControlPlaneEndpoint.Host = "api.example.com" },
			wantWarnings: []string{"203.0.113.7 becomes api.example.com here only: the Cluster keeps 203.0.113.7"},
		},
		{
			name: "endpoint may not go from an address that is not the load balancer's to a DNS name",
			old: func() *infrav1.OpenStackCluster {
				c := legacyCluster()
				c.Spec.ControlPlaneEndpoint = &clusterv1.APIEndpoint{Host: "203.0.113.8", Port: 6443}
				c.Status.APIServerLoadBalancer = &infrav1.LoadBalancer{IP: "203.0.113.7", InternalIP: "10.6.0.9"}
				return c
			},
			change:      func(c *infrav1.OpenStackCluster) { c.Spec.ControlPlaneEndpoint.Host = "api.example.com" },
			wantFields:  []string{"spec.controlPlaneEndpoint.host"},
			wantMessage: immutableDetail,
		},
		{
			name: "fixed IP may be pinned once when floating IPs are disabled",
			old: func() *infrav1.OpenStackCluster {
				c := legacyCluster()
				c.Spec.DisableAPIServerFloatingIP = ptr.To(true)
				return c
			},
			change: func(c *infrav1.OpenStackCluster) { c.Spec.APIServerFixedIP = ptr.To("10.0.0.10") },
		},
		{
			name:        "fixed IP may not be set while floating IPs are enabled",
			old:         legacyCluster,
			change:      func(c *infrav1.OpenStackCluster) { c.Spec.APIServerFixedIP = ptr.To("10.0.0.10") },
			wantFields:  []string{"spec.apiServerFixedIP"},
			wantMessage: immutableDetail,
		},
		{
			name: "floating IP may be pinned to the address in use",
			old: func() *infrav1.OpenStackCluster {
				c := legacyCluster()
				c.Status.APIServerLoadBalancer = &infrav1.LoadBalancer{IP: "172.24.4.10"}
				return c
			},
			change: func(c *infrav1.OpenStackCluster) { c.Spec.APIServerFloatingIP = ptr.To("172.24.4.10") },
		},
		{
			name: "floating IP may not be set to another address",
			old: func() *infrav1.OpenStackCluster {
				c := legacyCluster()
				c.Status.APIServerLoadBalancer = &infrav1.LoadBalancer{IP: "172.24.4.10"}
				return c
			},
			change:     func(c *infrav1.OpenStackCluster) { c.Spec.APIServerFloatingIP = ptr.To("172.24.4.99") },
			wantFields: []string{"spec.apiServerFloatingIP"},
		},
		{
			name: "managed security groups may be added",
			old:  legacyCluster,
			change: func(c *infrav1.OpenStackCluster) {
				c.Spec.ManagedSecurityGroups = &infrav1.ManagedSecurityGroups{AllowAllInClusterTraffic: true}
			},
		},
		{
			name: "managed security groups may not be removed",
			old: func() *infrav1.OpenStackCluster {
				c := legacyCluster()
				c.Spec.ManagedSecurityGroups = &infrav1.ManagedSecurityGroups{}
				return c
			},
			change:     func(c *infrav1.OpenStackCluster) { c.Spec.ManagedSecurityGroups = nil },
			wantFields: []string{"spec.managedSecurityGroups"},
		},
		{
			name: "managed subnet DNS servers may change",
			old: func() *infrav1.OpenStackCluster {
				c := legacyCluster()
				c.Spec.ManagedSubnets = []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24", DNSNameservers: []string{"8.8.8.8"}}}
				return c
			},
			change: func(c *infrav1.OpenStackCluster) { c.Spec.ManagedSubnets[0].DNSNameservers = []string{"1.1.1.1"} },
		},
		{
			name: "managed subnet CIDR may not change",
			old: func() *infrav1.OpenStackCluster {
				c := legacyCluster()
				c.Spec.ManagedSubnets = []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24"}}
				return c
			},
			change:     func(c *infrav1.OpenStackCluster) { c.Spec.ManagedSubnets[0].CIDR = "10.7.0.0/24" },
			wantFields: []string{"spec.managedSubnets"},
		},
		{
			name: "control plane availability zones may change",
			old:  legacyCluster,
			change: func(c *infrav1.OpenStackCluster) {
				c.Spec.ControlPlaneAvailabilityZones = []string{"az1"}
				c.Spec.ControlPlaneOmitAvailabilityZone = ptr.To(true)
			},
		},
		{
			name: "network filter may be pinned to the ID in use",
			old: func() *infrav1.OpenStackCluster {
				c := legacyCluster()
				c.Spec.Network = &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: "k8s"}}
				c.Spec.Subnets = []infrav1.SubnetParam{{Filter: &infrav1.SubnetFilter{Name: "k8s-a"}}}
				c.Status.Network = &infrav1.NetworkStatusWithSubnets{
					NetworkStatus: infrav1.NetworkStatus{ID: netID},
					Subnets:       []infrav1.Subnet{{ID: sub1}},
				}
				return c
			},
			change: func(c *infrav1.OpenStackCluster) {
				c.Spec.Network = &infrav1.NetworkParam{ID: ptr.To(netID)}
				c.Spec.Subnets = []infrav1.SubnetParam{{ID: ptr.To(sub1)}}
			},
		},
		{
			name: "network may not move to another network",
			old: func() *infrav1.OpenStackCluster {
				c := legacyCluster()
				c.Spec.Network = &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: "k8s"}}
				c.Status.Network = &infrav1.NetworkStatusWithSubnets{NetworkStatus: infrav1.NetworkStatus{ID: netID}}
				return c
			},
			change:     func(c *infrav1.OpenStackCluster) { c.Spec.Network = &infrav1.NetworkParam{ID: ptr.To(sub3)} },
			wantFields: []string{"spec.network.id", "spec.network.filter"},
		},
		{
			name: "subnets may not be pinned to an ID that is not in use",
			old: func() *infrav1.OpenStackCluster {
				c := legacyCluster()
				c.Spec.Subnets = []infrav1.SubnetParam{{Filter: &infrav1.SubnetFilter{Name: "k8s-a"}}}
				c.Status.Network = &infrav1.NetworkStatusWithSubnets{Subnets: []infrav1.Subnet{{ID: sub1}}}
				return c
			},
			change:     func(c *infrav1.OpenStackCluster) { c.Spec.Subnets = []infrav1.SubnetParam{{ID: ptr.To(sub2)}} },
			wantFields: []string{"spec.subnets"},
		},
		{
			name: "load balancer knobs may change",
			old:  multiAZCluster,
			change: func(c *infrav1.OpenStackCluster) {
				lb := c.Spec.APIServerLoadBalancer
				lb.AllowCrossAZLoadBalancerMembers = ptr.To(true)
				lb.AllowedCIDRs = []string{"10.0.0.0/8"}
				lb.AdditionalPorts = []int{8443}
				lb.Monitor = &infrav1.APIServerLoadBalancerMonitor{Delay: 30, Type: infrav1.MonitorHTTPS}
				lb.WithdrawFailedZones = ptr.To(true)
			},
		},
		{
			name:        "provider may not change",
			old:         multiAZCluster,
			change:      func(c *infrav1.OpenStackCluster) { c.Spec.APIServerLoadBalancer.Provider = ptr.To("ovn") },
			wantFields:  []string{"spec.apiServerLoadBalancer.provider"},
			wantMessage: immutableDetail,
		},
		{
			name:       "flavor may not change",
			old:        multiAZCluster,
			change:     func(c *infrav1.OpenStackCluster) { c.Spec.APIServerLoadBalancer.Flavor = ptr.To("large") },
			wantFields: []string{"spec.apiServerLoadBalancer.flavor"},
		},
		{
			name: "load balancer may not be removed",
			old:  multiAZCluster,
			change: func(c *infrav1.OpenStackCluster) {
				c.Spec.APIServerLoadBalancer = nil
			},
			wantFields: []string{"spec.apiServerLoadBalancer"},
		},
		{
			name: "a zone may be added after the existing ones",
			old:  multiAZCluster,
			change: func(c *infrav1.OpenStackCluster) {
				lb := c.Spec.APIServerLoadBalancer
				lb.AvailabilityZoneSubnets = append(lb.AvailabilityZoneSubnets, mapping("az3", sub3))
			},
		},
		{
			name: "a zone may be removed, with a warning about its DNS record",
			old:  multiAZCluster,
			change: func(c *infrav1.OpenStackCluster) {
				c.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets = c.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets[1:]
			},
			wantWarnings: []string{`availability zone "az1" will be deleted`},
		},
		{
			name: "every zone may be removed",
			old:  multiAZCluster,
			change: func(c *infrav1.OpenStackCluster) {
				c.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets = nil
			},
			wantWarnings: []string{`"az1" becomes the single API server load balancer again, keeping its addresses`, `"az2" will be deleted`},
		},
		{
			name: "the subnet of a zone may not change in place",
			old:  multiAZCluster,
			change: func(c *infrav1.OpenStackCluster) {
				c.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets[1] = mapping("az2", sub3)
			},
			wantFields:  []string{"spec.apiServerLoadBalancer.availabilityZoneSubnets[1].subnet"},
			wantMessage: `remove the "az2" entry and wait for its load balancer to be deleted, then add the entry back`,
		},
		{
			name: "a subnet filter may not replace the ID of a zone",
			old:  multiAZCluster,
			change: func(c *infrav1.OpenStackCluster) {
				c.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets[0].Subnet = infrav1.SubnetParam{Filter: &infrav1.SubnetFilter{Name: "lb-az1"}}
			},
			wantFields: []string{"spec.apiServerLoadBalancer.availabilityZoneSubnets[0].subnet"},
		},
		{
			name: "existing zones may not be reordered",
			old:  multiAZCluster,
			change: func(c *infrav1.OpenStackCluster) {
				m := c.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets
				m[0], m[1] = m[1], m[0]
			},
			wantFields:  []string{"spec.apiServerLoadBalancer.availabilityZoneSubnets"},
			wantMessage: `"az1" must stay first`,
		},
		{
			name: "a new zone may not be put first",
			old:  multiAZCluster,
			change: func(c *infrav1.OpenStackCluster) {
				lb := c.Spec.APIServerLoadBalancer
				lb.AvailabilityZoneSubnets = append([]infrav1.AZSubnetMapping{mapping("az0", sub3)}, lb.AvailabilityZoneSubnets...)
			},
			wantFields: []string{"spec.apiServerLoadBalancer.availabilityZoneSubnets"},
		},
		{
			name: "a new zone may be put first once the first zone is removed",
			old:  multiAZCluster,
			change: func(c *infrav1.OpenStackCluster) {
				c.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets = []infrav1.AZSubnetMapping{mapping("az3", sub3), mapping("az2", sub2)}
			},
			wantWarnings: []string{`"az1" will be deleted`},
		},
		{
			name: "the first zone may not be removed while it carries the user's floating IP and other zones stay",
			old: func() *infrav1.OpenStackCluster {
				c := multiAZCluster()
				c.Spec.APIServerFloatingIP = ptr.To("203.0.113.5")
				return c
			},
			change: func(c *infrav1.OpenStackCluster) {
				c.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets = c.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets[1:]
			},
			wantFields:  []string{"spec.apiServerLoadBalancer.availabilityZoneSubnets"},
			wantMessage: `availability zone "az1" carries spec.apiServerFloatingIP 203.0.113.5 and cannot be removed while other zones stay`,
		},
		{
			name: "migration: a legacy cluster may add the mapping, the LB network and drop the legacy zone",
			old:  legacyCluster,
			change: func(c *infrav1.OpenStackCluster) {
				c.Spec.APIServerLoadBalancer = multiAZCluster().Spec.APIServerLoadBalancer
			},
			wantWarnings: []string{`renamed to the "az1" availability zone's name`},
		},
		{
			name: "migration: the LB network may not change when it was already set",
			old: func() *infrav1.OpenStackCluster {
				c := legacyCluster()
				c.Spec.APIServerLoadBalancer.Network = &infrav1.NetworkParam{ID: ptr.To(sub3)}
				return c
			},
			change: func(c *infrav1.OpenStackCluster) {
				c.Spec.APIServerLoadBalancer = multiAZCluster().Spec.APIServerLoadBalancer
			},
			wantFields: []string{"spec.apiServerLoadBalancer.network.id"},
		},
		{
			name: "the LB network may not be added without the mapping",
			old:  legacyCluster,
			change: func(c *infrav1.OpenStackCluster) {
				c.Spec.APIServerLoadBalancer.Network = &infrav1.NetworkParam{ID: ptr.To(netID)}
			},
			wantFields: []string{"spec.apiServerLoadBalancer.network"},
		},
		{
			name:       "the API server port may not change",
			old:        multiAZCluster,
			change:     func(c *infrav1.OpenStackCluster) { c.Spec.APIServerPort = 7443 },
			wantFields: []string{"spec.apiServerPort"},
		},
		{
			name:       "tags may not change",
			old:        multiAZCluster,
			change:     func(c *infrav1.OpenStackCluster) { c.Spec.Tags = []string{"x"} },
			wantFields: []string{"spec.tags"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			oldObj := tt.old()
			newObj := oldObj.DeepCopy()
			tt.change(newObj)
			before := oldObj.DeepCopy()

			warnings, err := (&OpenStackCluster{}).ValidateUpdate(context.Background(), oldObj, newObj)

			g.Expect(oldObj).To(Equal(before), "the webhook must not modify the stored object")
			if len(tt.wantFields) == 0 {
				g.Expect(err).NotTo(HaveOccurred())
			} else {
				g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "expected an Invalid error, got %v", err)
				for _, f := range tt.wantFields {
					g.Expect(err.Error()).To(ContainSubstring(f + ":"))
				}
				g.Expect(err.Error()).To(ContainSubstring(tt.wantMessage))
			}
			g.Expect(warnings).To(HaveLen(len(tt.wantWarnings)), "warnings: %v", warnings)
			for _, w := range tt.wantWarnings {
				g.Expect(strings.Join(warnings, "\n")).To(ContainSubstring(w))
			}
		})
	}
}

func TestOpenStackClusterValidateCreateAndDelete(t *testing.T) {
	g := NewWithT(t)
	w := &OpenStackCluster{}
	warnings, err := w.ValidateCreate(context.Background(), multiAZCluster())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(warnings).To(BeEmpty())
	warnings, err = w.ValidateDelete(context.Background(), multiAZCluster())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(warnings).To(BeEmpty())
}

func TestZoneMaintenanceAnnotationNamesMappedZones(t *testing.T) {
	w := &OpenStackCluster{}
	annotated := func(c *infrav1.OpenStackCluster, zones string) *infrav1.OpenStackCluster {
		c.Annotations = map[string]string{infrav1.ZoneMaintenanceAnnotation: zones}
		return c
	}
	const field = "metadata.annotations[infrastructure.cluster.x-k8s.io/zone-maintenance]"
	for _, tc := range []struct {
		name    string
		obj     *infrav1.OpenStackCluster
		message string
	}{
		{name: "a mapped zone", obj: annotated(multiAZCluster(), "az2")},
		{name: "both, with blanks", obj: annotated(multiAZCluster(), " az1, ,az2 ")},
		{name: "empty: nothing in maintenance", obj: annotated(multiAZCluster(), "")},
		{name: "a typo", obj: annotated(multiAZCluster(), "az1,azz2"),
			message: field + `: Invalid value: "az1,azz2": zone "azz2" is not in spec.apiServerLoadBalancer.availabilityZoneSubnets (az1, az2): name zones of the comma-separated list as the spec maps them`},
		{name: "no per-zone load balancers", obj: annotated(legacyCluster(), "az1"),
			message: field + `: Invalid value: "az1": zone "az1" cannot be taken out of service: the cluster has no per-zone load balancers (spec.apiServerLoadBalancer.availabilityZoneSubnets is empty)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := w.ValidateCreate(context.Background(), tc.obj)
			if tc.message == "" {
				g.Expect(err).NotTo(HaveOccurred())
			} else {
				g.Expect(err).To(MatchError(ContainSubstring(tc.message)))
			}
			// The same on an update that sets the annotation.
			_, err = w.ValidateUpdate(context.Background(), multiAZCluster(), tc.obj)
			if tc.message == "" || tc.obj.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets == nil {
				return // the single-load-balancer cluster's update fails on the spec change too
			}
			g.Expect(err).To(MatchError(ContainSubstring(tc.message)))
		})
	}

	g := NewWithT(t)
	// Removing a zone from the spec while the annotation names it is refused: remove both.
	before := annotated(multiAZCluster(), "az2")
	after := annotated(multiAZCluster(), "az2")
	after.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets = after.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets[:1]
	_, err := w.ValidateUpdate(context.Background(), before, after)
	g.Expect(err).To(MatchError(ContainSubstring(`zone "az2" is not in spec.apiServerLoadBalancer.availabilityZoneSubnets (az1)`)))
	// An object admitted before the rule is not blocked in an update that touches neither.
	stale := annotated(multiAZCluster(), "az9")
	relabelled := annotated(multiAZCluster(), "az9")
	relabelled.Labels = map[string]string{"team": "a"}
	_, err = w.ValidateUpdate(context.Background(), stale, relabelled)
	g.Expect(err).NotTo(HaveOccurred())
}

func TestZoneDiscoveryChangesOnlyBesideEntries(t *testing.T) {
	g := NewWithT(t)
	w := &OpenStackCluster{}
	withDiscovery := func(c *infrav1.OpenStackCluster, key string) *infrav1.OpenStackCluster {
		c.Spec.APIServerLoadBalancer.ZoneDiscovery = &infrav1.ZoneDiscovery{TagKey: key}
		return c
	}
	// Added to a cluster that has entries: accepted.
	_, err := w.ValidateUpdate(context.Background(), multiAZCluster(), withDiscovery(multiAZCluster(), infrav1.DefaultZoneTagKey))
	g.Expect(err).NotTo(HaveOccurred())
	// Removed: accepted, with a warning that the discovered zones go.
	warnings, err := w.ValidateUpdate(context.Background(), withDiscovery(multiAZCluster(), infrav1.DefaultZoneTagKey), multiAZCluster())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(warnings).To(ContainElement(ContainSubstring("spec.apiServerLoadBalancer.zoneDiscovery: the load balancers of the zones found by the former tag")))
	// Added to a single load balancer cluster: refused, the migration goes through entries.
	single := legacyCluster()
	moved := legacyCluster()
	moved.Spec.APIServerLoadBalancer = &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true), Network: &infrav1.NetworkParam{ID: ptr.To(netID)},
		ZoneDiscovery: &infrav1.ZoneDiscovery{TagKey: infrav1.DefaultZoneTagKey}}
	_, err = w.ValidateUpdate(context.Background(), single, moved)
	g.Expect(err).To(MatchError(ContainSubstring("spec.apiServerLoadBalancer.zoneDiscovery: Forbidden: can be added, changed or removed only while availabilityZoneSubnets has entries")))
	// The maintenance annotation may name a zone only the tags know.
	annotated := withDiscovery(multiAZCluster(), infrav1.DefaultZoneTagKey)
	annotated.Annotations = map[string]string{infrav1.ZoneMaintenanceAnnotation: "az7"}
	_, err = w.ValidateCreate(context.Background(), annotated)
	g.Expect(err).NotTo(HaveOccurred())
}

// A tenant's annotation cannot make the shared webhook build a huge answer: the annotation is
// bounded, every echoed value is cut, and a field gets a few errors at most.
func TestAHugeZoneMaintenanceAnnotationGetsASmallAnswer(t *testing.T) {
	w := &OpenStackCluster{}
	names := func(n int) string {
		zones := make([]string, n)
		for i := range zones {
			zones[i] = fmt.Sprintf("zone-%04d", i)
		}
		return strings.Join(zones, ",")
	}
	for _, tc := range []struct {
		name, value, want string
	}{
		{name: "16383 bytes, as the attack sent", value: names(1700)[:16383], want: "Too long: may not be more than 4096 bytes"},
		{name: "too many names", value: names(100), want: "Too many: 100: must have at most 64 items"},
		{name: "60 unknown names", value: names(60), want: "is not in spec.apiServerLoadBalancer.availabilityZoneSubnets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			obj := multiAZCluster()
			obj.Annotations = map[string]string{infrav1.ZoneMaintenanceAnnotation: tc.value}
			_, err := w.ValidateCreate(context.Background(), obj)
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
			g.Expect(len(err.Error())).To(BeNumerically("<", 8<<10), "the answer is small: %d bytes", len(err.Error()))
			g.Expect(strings.Count(err.Error(), "is not in spec.")).To(BeNumerically("<=", maxErrorsPerField), "a few errors")
			g.Expect(strings.Count(err.Error(), "more bytes)")).To(Equal(strings.Count(err.Error(), "Invalid value")), "each echoed value cut")
		})
	}
}

func TestZonesInMaintenanceReadsABoundedAnnotation(t *testing.T) {
	g := NewWithT(t)
	osc := &infrav1.OpenStackCluster{}
	zones := make([]string, 47988)
	for i := range zones {
		zones[i] = fmt.Sprintf("z%d", i)
	}
	osc.Annotations = map[string]string{infrav1.ZoneMaintenanceAnnotation: strings.Join(zones, ",")}
	got := osc.ZonesInMaintenance()
	g.Expect(got).To(HaveLen(infrav1.MaxZonesInMaintenance))
	g.Expect(got[0]).To(Equal("z0"))
	osc.Annotations[infrav1.ZoneMaintenanceAnnotation] = "az1, az2,az1"
	g.Expect(osc.ZonesInMaintenance()).To(Equal([]string{"az1", "az2"}))
}
