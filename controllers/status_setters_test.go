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

package controllers

import (
	"errors"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/compute"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/outcome"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

// The status setters are functions of the object and the findings: each case sets up an object
// and what a phase found, calls one setter, and checks the condition it sets (with the object's
// generation as its observedGeneration), the warnings it asks for, and the status fields it
// writes. No API server, no cloud.

const testGeneration = 7

// setterCase is one call of a status setter on an object of type T.
type setterCase[T conditions.Setter] struct {
	name string
	// before prepares the object (optional).
	before func(T)
	set    func(T, *warnings)
	// cond is the condition the setter must set, with status, reason and a message containing
	// message.
	cond    string
	status  metav1.ConditionStatus
	reason  string
	message string
	// warns are the reasons of the warnings it must ask for, in order.
	warns []string
	// check checks the status fields it writes (optional).
	check func(Gomega, T)
}

func runSetters[T conditions.Setter](t *testing.T, newObj func() T, cases []setterCase[T]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			obj := newObj()
			if tc.before != nil {
				tc.before(obj)
			}
			var w warnings
			tc.set(obj, &w)
			c := conditions.Get(obj, tc.cond)
			g.Expect(c).NotTo(BeNil(), "condition %s is set", tc.cond)
			g.Expect(c.Status).To(Equal(tc.status))
			g.Expect(c.Reason).To(Equal(tc.reason))
			g.Expect(c.Message).To(ContainSubstring(tc.message))
			g.Expect(c.ObservedGeneration).To(Equal(int64(testGeneration)), "observedGeneration is the object's generation")
			var reasons []string
			for _, x := range w {
				reasons = append(reasons, x.reason)
			}
			g.Expect(reasons).To(Equal(tc.warns))
			if tc.check != nil {
				tc.check(g, obj)
			}
		})
	}
}

func setterCluster() *infrav1.OpenStackCluster {
	return &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", Generation: testGeneration}}
}

var (
	errCloud   = errors.New("listing networks: HTTP 500")
	errRefuted = &report.SpecError{Reason: infrav1.NetworkNotFoundReason, Message: "spec.network.id: network lost does not exist"}
)

func TestClusterNetworkSetters(t *testing.T) {
	network := &infrav1.NetworkStatusWithSubnets{NetworkStatus: infrav1.NetworkStatus{Name: "net", ID: "net-id"}, Subnets: []infrav1.Subnet{{CIDR: "10.6.0.0/24"}}}
	runSetters(t, setterCluster, []setterCase[*infrav1.OpenStackCluster]{
		{name: "credentials that do not work: every condition, one warning",
			set:  func(o *infrav1.OpenStackCluster, w *warnings) { setIdentityError(o, w, errors.New("401")) },
			cond: infrav1.NetworkReadyCondition, status: metav1.ConditionFalse, reason: infrav1.IdentityErrorReason, message: "401",
			warns: []string{infrav1.IdentityErrorReason},
			check: func(g Gomega, o *infrav1.OpenStackCluster) {
				g.Expect(conditions.GetReason(o, infrav1.APIServerDNSReadyCondition)).To(Equal(infrav1.IdentityErrorReason))
			}},
		{name: "the same problem again: no second warning",
			before: func(o *infrav1.OpenStackCluster) { setIdentityError(o, &warnings{}, errors.New("401")) },
			set:    func(o *infrav1.OpenStackCluster, w *warnings) { setIdentityError(o, w, errors.New("401")) },
			cond:   infrav1.NetworkReadyCondition, status: metav1.ConditionFalse, reason: infrav1.IdentityErrorReason, message: "401"},
		{name: "network and router found",
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setNetworkStatus(o, w, &networkFound{network: network, external: &infrav1.NetworkStatus{Name: "public"}},
					&routerFound{router: &infrav1.Router{Name: "r", IPs: []string{"172.24.4.3"}}})
			},
			cond: infrav1.NetworkReadyCondition, status: metav1.ConditionTrue, reason: infrav1.ReadyReason,
			message: "network net (net-id) with subnets 10.6.0.0/24; router r at 172.24.4.3; external network public",
			check: func(g Gomega, o *infrav1.OpenStackCluster) {
				g.Expect(o.Status.Network).To(Equal(network))
				g.Expect(o.Status.Router.Name).To(Equal("r"))
			}},
		{name: "a network the cloud refutes: a problem, with a warning",
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setNetworkStatus(o, w, &networkFound{Outcome: outcome.Failed(errRefuted)}, nil)
			},
			cond: infrav1.NetworkReadyCondition, status: metav1.ConditionFalse, reason: infrav1.NetworkNotFoundReason, message: "network lost does not exist",
			warns: []string{infrav1.NetworkNotFoundReason}},
		{name: "the router failed: the cloud's error, no warning",
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setNetworkStatus(o, w, &networkFound{network: network}, &routerFound{Outcome: outcome.Failed(errCloud)})
			},
			cond: infrav1.NetworkReadyCondition, status: metav1.ConditionFalse, reason: infrav1.OpenStackErrorReason, message: "HTTP 500",
			check: func(g Gomega, o *infrav1.OpenStackCluster) { g.Expect(o.Status.Router).To(BeNil()) }},
		{name: "security groups not managed",
			set:  func(o *infrav1.OpenStackCluster, w *warnings) { setSecurityGroupsStatus(o, w, &groupsFound{}) },
			cond: infrav1.SecurityGroupsReadyCondition, status: metav1.ConditionTrue, reason: infrav1.NotRequiredReason, message: "managedSecurityGroups is not set"},
		{name: "security groups made",
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setSecurityGroupsStatus(o, w, &groupsFound{managed: true, ManagedGroups: networking.ManagedGroups{ControlPlane: &infrav1.SecurityGroupStatus{Name: "cp"}, Worker: &infrav1.SecurityGroupStatus{Name: "wk"}}})
			},
			cond: infrav1.SecurityGroupsReadyCondition, status: metav1.ConditionTrue, reason: infrav1.ReadyReason, message: "security groups cp, wk",
			check: func(g Gomega, o *infrav1.OpenStackCluster) {
				g.Expect(o.Status.WorkerSecurityGroup.Name).To(Equal("wk"))
			}},
		{name: "security groups failed",
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setSecurityGroupsStatus(o, w, &groupsFound{managed: true, Outcome: outcome.Failed(errCloud)})
			},
			cond: infrav1.SecurityGroupsReadyCondition, status: metav1.ConditionFalse, reason: infrav1.OpenStackErrorReason, message: "HTTP 500"},
	})
}

func TestClusterLoadBalancerSetters(t *testing.T) {
	zone := func(az, ip string) infrav1.LoadBalancer {
		return infrav1.LoadBalancer{Name: "lb-" + az, AvailabilityZone: az, InternalIP: "10.50.0.5", IP: ip}
	}
	runSetters(t, setterCluster, []setterCase[*infrav1.OpenStackCluster]{
		{name: "disabled",
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setLoadBalancersStatus(o, w, &zones.Result{Disabled: true})
			},
			cond: infrav1.APIServerLoadBalancersReadyCondition, status: metav1.ConditionTrue, reason: infrav1.NotRequiredReason},
		{name: "an endpoint nobody can publish: both conditions",
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setLoadBalancersStatus(o, w, &zones.Result{EndpointProblem: "set spec.controlPlaneEndpoint.host"})
			},
			cond: infrav1.APIEndpointReadyCondition, status: metav1.ConditionFalse, reason: infrav1.EndpointConfigurationErrorReason, message: "controlPlaneEndpoint"},
		{name: "the load balancer network refuted",
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setLoadBalancersStatus(o, w, &zones.Result{Err: report.Refuted(infrav1.LoadBalancerConfigurationErrorReason, zones.LBPath.Child("network"), "no such network")})
			},
			cond: infrav1.APIServerLoadBalancersReadyCondition, status: metav1.ConditionFalse, reason: infrav1.LoadBalancerConfigurationErrorReason,
			message: "spec.apiServerLoadBalancer.network: no such network", warns: []string{infrav1.LoadBalancerConfigurationErrorReason}},
		{name: "a zone not ready: its reason and message, the entries recorded",
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setLoadBalancersStatus(o, w, &zones.Result{Observed: true, Zones: []infrav1.LoadBalancer{zone("az1", "172.24.4.10")}, ZonesReady: "1/2",
					Summary: zones.Summary{Outcome: outcome.Outcome{Reason: infrav1.WaitingForLoadBalancerReason, Message: "az2: Octavia is creating it"}}})
			},
			cond: infrav1.APIServerLoadBalancersReadyCondition, status: metav1.ConditionFalse, reason: infrav1.WaitingForLoadBalancerReason, message: "az2: Octavia is creating it",
			check: func(g Gomega, o *infrav1.OpenStackCluster) {
				g.Expect(o.Status.APIServerLoadBalancers).To(HaveLen(1))
				g.Expect(o.Status.ZonesReady).To(Equal("1/2"))
			}},
		{name: "every zone ready: where each is reached",
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setLoadBalancersStatus(o, w, &zones.Result{Observed: true, ZonesReady: "2/2",
					Zones: []infrav1.LoadBalancer{zone("az1", "172.24.4.10"), zone("az2", "10.50.0.5")}})
			},
			cond: infrav1.APIServerLoadBalancersReadyCondition, status: metav1.ConditionTrue, reason: infrav1.ReadyReason,
			message: "2/2 zones ready: az1 VIP 10.50.0.5, floating IP 172.24.4.10, az2 VIP 10.50.0.5"},
		{name: "not observed: the entries stay as recorded",
			before: func(o *infrav1.OpenStackCluster) {
				o.Status.APIServerLoadBalancer = &infrav1.LoadBalancer{Name: "kept", InternalIP: "10.6.0.9"}
			},
			set:  func(o *infrav1.OpenStackCluster, w *warnings) { setLoadBalancersStatus(o, w, &zones.Result{}) },
			cond: infrav1.APIServerLoadBalancersReadyCondition, status: metav1.ConditionTrue, reason: infrav1.ReadyReason, message: "load balancer kept VIP 10.6.0.9"},
	})
}

func TestClusterFailureDomainEndpointDNSSetters(t *testing.T) {
	perZone := func(o *infrav1.OpenStackCluster) {
		o.Spec.APIServerLoadBalancer = &infrav1.APIServerLoadBalancer{AvailabilityZoneSubnets: []infrav1.AZSubnetMapping{{AvailabilityZone: "az1"}}}
		o.Status.FailureDomains = []clusterv1.FailureDomain{{Name: "az1", ControlPlane: ptr.To(true)}, {Name: "az2", ControlPlane: ptr.To(true)}, {Name: "az3"}}
	}
	pub := zones.Publication{Addresses: []string{"172.24.4.10"}, Where: "172.24.4.10 (az1)", Withdrawn: []string{"az2 (in maintenance)"}}
	runSetters(t, setterCluster, []setterCase[*infrav1.OpenStackCluster]{
		{name: "failure domains all covered",
			before: func(o *infrav1.OpenStackCluster) {
				o.Status.FailureDomains = []clusterv1.FailureDomain{{Name: "az1", ControlPlane: ptr.To(true)}, {Name: "az3"}}
			},
			set:  func(o *infrav1.OpenStackCluster, w *warnings) { setFailureDomainsCondition(o, w, "c", &domainsFound{}) },
			cond: infrav1.FailureDomainsReadyCondition, status: metav1.ConditionTrue, reason: infrav1.ReadyReason, message: "failure domains az1 (control plane), az3"},
		{name: "a control plane failure domain without a load balancer: warned once",
			before: perZone,
			set:    func(o *infrav1.OpenStackCluster, w *warnings) { setFailureDomainsCondition(o, w, "c", &domainsFound{}) },
			cond:   infrav1.FailureDomainsReadyCondition, status: metav1.ConditionFalse, reason: infrav1.ControlPlaneFailureDomainWithoutLoadBalancerReason,
			message: "control plane failure domains az2 have no API server load balancer", warns: []string{infrav1.ControlPlaneFailureDomainWithoutLoadBalancerReason}},
		{name: "a mapped zone Nova does not have (a typo): warned",
			before: func(o *infrav1.OpenStackCluster) {
				o.Spec.APIServerLoadBalancer = &infrav1.APIServerLoadBalancer{AvailabilityZoneSubnets: []infrav1.AZSubnetMapping{{AvailabilityZone: "az1"}, {AvailabilityZone: "az-2"}}}
				o.Status.FailureDomains = []clusterv1.FailureDomain{{Name: "az1", ControlPlane: ptr.To(true)}, {Name: "az2"}}
			},
			set:  func(o *infrav1.OpenStackCluster, w *warnings) { setFailureDomainsCondition(o, w, "c", &domainsFound{}) },
			cond: infrav1.FailureDomainsReadyCondition, status: metav1.ConditionFalse, reason: infrav1.LoadBalancerZoneWithoutComputeReason,
			message: "availabilityZoneSubnets (or zoneDiscovery's tags) maps zones az-2, which Nova does not have (its zones: az1, az2)", warns: []string{infrav1.LoadBalancerZoneWithoutComputeReason}},
		{name: "both directions at once",
			before: func(o *infrav1.OpenStackCluster) {
				perZone(o)
				o.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets = append(o.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets, infrav1.AZSubnetMapping{AvailabilityZone: "az9"})
			},
			set:  func(o *infrav1.OpenStackCluster, w *warnings) { setFailureDomainsCondition(o, w, "c", &domainsFound{}) },
			cond: infrav1.FailureDomainsReadyCondition, status: metav1.ConditionFalse, reason: infrav1.LoadBalancerZoneWithoutComputeReason,
			message: "maps zones az9, which Nova does not have (its zones: az1, az2, az3): no machine is placed there, so their load balancers never get a member; correct the zone names; control plane failure domains az2 have no API server load balancer",
			warns:   []string{infrav1.LoadBalancerZoneWithoutComputeReason}},
		{name: "failure domains not read",
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setFailureDomainsCondition(o, w, "c", &domainsFound{Outcome: outcome.Failed(errCloud)})
			},
			cond: infrav1.FailureDomainsReadyCondition, status: metav1.ConditionFalse, reason: infrav1.OpenStackErrorReason},
		{name: "endpoint found: written to the spec",
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setEndpointStatus(o, w, &endpointFound{endpoint: &clusterv1.APIEndpoint{Host: "172.24.4.10", Port: 6443}})
			},
			cond: infrav1.APIEndpointReadyCondition, status: metav1.ConditionTrue, reason: infrav1.ReadyReason, message: "reached at 172.24.4.10:6443",
			check: func(g Gomega, o *infrav1.OpenStackCluster) {
				g.Expect(o.Spec.ControlPlaneEndpoint.Host).To(Equal("172.24.4.10"))
			}},
		{name: "endpoint waiting for the load balancer",
			set:  func(o *infrav1.OpenStackCluster, w *warnings) { setEndpointStatus(o, w, &endpointFound{waiting: true}) },
			cond: infrav1.APIEndpointReadyCondition, status: metav1.ConditionFalse, reason: infrav1.WaitingForLoadBalancerReason},
		{name: "endpoint unknowable",
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setEndpointStatus(o, w, &endpointFound{unknowable: true})
			},
			cond: infrav1.APIEndpointReadyCondition, status: metav1.ConditionFalse, reason: infrav1.EndpointConfigurationErrorReason, message: "spec.apiServerFixedIP"},
		{name: "endpoint failed",
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setEndpointStatus(o, w, &endpointFound{Outcome: outcome.Failed(errCloud)})
			},
			cond: infrav1.APIEndpointReadyCondition, status: metav1.ConditionFalse, reason: infrav1.OpenStackErrorReason},
		{name: "DNS not required",
			set:  func(o *infrav1.OpenStackCluster, w *warnings) { setDNSCondition(o, w, &dnsFound{notRequired: true}) },
			cond: infrav1.APIServerDNSReadyCondition, status: metav1.ConditionTrue, reason: infrav1.NotRequiredReason},
		{name: "DNS published, a zone withdrawn",
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setDNSCondition(o, w, &dnsFound{host: "api.example.com", publication: pub})
			},
			cond: infrav1.APIServerDNSReadyCondition, status: metav1.ConditionTrue, reason: infrav1.ReadyReason,
			message: "api.example.com is published as 172.24.4.10 (az1) in DNSEndpoint c-apiserver; withdrawn: az2 (in maintenance)"},
		{name: "DNS refused by policy: warned",
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setDNSCondition(o, w, &dnsFound{refusal: &dnsRefusal{reason: infrav1.DNSPublishingNotAllowedReason, message: "not under an allowed suffix"}})
			},
			cond: infrav1.APIServerDNSReadyCondition, status: metav1.ConditionFalse, reason: infrav1.DNSPublishingNotAllowedReason, message: "allowed suffix",
			warns: []string{infrav1.DNSPublishingNotAllowedReason}},
		{name: "DNS without ExternalDNS's CRD: warned",
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setDNSCondition(o, w, &dnsFound{crdMissing: true, publication: pub})
			},
			cond: infrav1.APIServerDNSReadyCondition, status: metav1.ConditionFalse, reason: infrav1.DNSEndpointCRDMissingReason,
			warns: []string{infrav1.DNSEndpointCRDMissingReason}},
		{name: "DNS with nothing to publish yet",
			set:  func(o *infrav1.OpenStackCluster, w *warnings) { setDNSCondition(o, w, &dnsFound{}) },
			cond: infrav1.APIServerDNSReadyCondition, status: metav1.ConditionFalse, reason: infrav1.WaitingForLoadBalancerReason},
		{name: "DNS with no healthy zone keeps every address",
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setDNSCondition(o, w, &dnsFound{host: "api.example.com", publication: zones.Publication{Addresses: []string{"a"}, NoneHealthy: true, Where: "a (az1)"}})
			},
			cond: infrav1.APIServerDNSReadyCondition, status: metav1.ConditionFalse, reason: infrav1.NoHealthyZoneReason, message: "rather than none"},
		{name: "DNS failed",
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setDNSCondition(o, w, &dnsFound{Outcome: outcome.Failed(errCloud)})
			},
			cond: infrav1.APIServerDNSReadyCondition, status: metav1.ConditionFalse, reason: infrav1.OpenStackErrorReason},
	})
}

func TestClusterMaintenanceProvisionedDeletionSetters(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	withdrawing := func(o *infrav1.OpenStackCluster) {
		o.Spec.APIServerLoadBalancer = &infrav1.APIServerLoadBalancer{AvailabilityZoneSubnets: []infrav1.AZSubnetMapping{{AvailabilityZone: "az1"}, {AvailabilityZone: "az2"}}}
		o.Status.APIServerLoadBalancers = []infrav1.LoadBalancer{{AvailabilityZone: "az1", Maintenance: &infrav1.ZoneMaintenance{Phase: infrav1.ZoneWithdrawing}}, {AvailabilityZone: "az2"}}
	}
	allTrue := func(o *infrav1.OpenStackCluster) {
		for _, t := range clusterConditions {
			setCondition(o, t, metav1.ConditionTrue, infrav1.ReadyReason, "")
		}
	}
	runSetters(t, setterCluster, []setterCase[*infrav1.OpenStackCluster]{
		{name: "no maintenance",
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setMaintenanceStatus(o, w, "c", &zones.Result{}, nil, now)
			},
			cond: infrav1.ZoneMaintenanceReadyCondition, status: metav1.ConditionTrue, reason: infrav1.NotRequiredReason},
		{name: "withdrawing; ExternalDNS took the records up now",
			before: withdrawing,
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setMaintenanceStatus(o, w, "c", &zones.Result{Maintenance: zones.Maintenance{Waiting: []string{"az1 (out of DNS)"}}}, &dnsFound{takenUp: true}, now)
			},
			cond: infrav1.ZoneMaintenanceReadyCondition, status: metav1.ConditionFalse, reason: infrav1.ZoneWithdrawingReason, message: "taking out of service: az1 (out of DNS)",
			check: func(g Gomega, o *infrav1.OpenStackCluster) {
				g.Expect(o.Status.APIServerLoadBalancers[0].Maintenance.WithdrawnAt.Time).To(Equal(now))
				g.Expect(o.Status.APIServerLoadBalancers[1].Maintenance).To(BeNil())
			}},
		{name: "in maintenance",
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setMaintenanceStatus(o, w, "c", &zones.Result{Maintenance: zones.Maintenance{Out: []string{"az1"}}}, nil, now)
			},
			cond: infrav1.ZoneMaintenanceReadyCondition, status: metav1.ConditionTrue, reason: infrav1.ReadyReason, message: "in maintenance: az1"},
		{name: "the last serving zone is refused: warned",
			before: withdrawing,
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setMaintenanceStatus(o, w, "c", &zones.Result{Zones: o.Status.APIServerLoadBalancers, Maintenance: zones.Maintenance{Refused: []string{"az2"}}}, nil, now)
			},
			cond: infrav1.ZoneMaintenanceReadyCondition, status: metav1.ConditionFalse, reason: infrav1.LastServingZoneReason,
			message: "zone az2 is not taken out of service", warns: []string{infrav1.LastServingZoneReason}},
		{name: "provisioned once machines may start and the rest is ready",
			before: allTrue,
			set: func(o *infrav1.OpenStackCluster, _ *warnings) {
				setCondition(o, infrav1.APIServerDNSReadyCondition, metav1.ConditionFalse, infrav1.WaitingForLoadBalancerReason, "")
				setProvisioned(o, &zones.Result{MachinesMayStart: true})
			},
			cond: infrav1.APIServerDNSReadyCondition, status: metav1.ConditionFalse, reason: infrav1.WaitingForLoadBalancerReason,
			check: func(g Gomega, o *infrav1.OpenStackCluster) {
				g.Expect(o.Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
			}},
		{name: "not provisioned while the network is not ready",
			before: allTrue,
			set: func(o *infrav1.OpenStackCluster, _ *warnings) {
				setCondition(o, infrav1.NetworkReadyCondition, metav1.ConditionFalse, infrav1.OpenStackErrorReason, "")
				setProvisioned(o, &zones.Result{MachinesMayStart: true})
			},
			cond: infrav1.NetworkReadyCondition, status: metav1.ConditionFalse, reason: infrav1.OpenStackErrorReason,
			check: func(g Gomega, o *infrav1.OpenStackCluster) { g.Expect(o.Status.Initialization).To(BeNil()) }},
		{name: "deleting: the load balancers left, the groups and router gone",
			before: func(o *infrav1.OpenStackCluster) {
				o.Status.Router = &infrav1.Router{Name: "r"}
				o.Status.WorkerSecurityGroup = &infrav1.SecurityGroupStatus{Name: "wk"}
				o.Status.Network = &infrav1.NetworkStatusWithSubnets{}
			},
			set: func(o *infrav1.OpenStackCluster, _ *warnings) {
				setDeletionStatus(o, &deletionFound{loadBalancersLeft: true, groupsGone: true, routerGone: true})
			},
			cond: infrav1.APIServerLoadBalancersReadyCondition, status: metav1.ConditionFalse, reason: infrav1.DeletingReason, message: "waiting for Octavia",
			check: func(g Gomega, o *infrav1.OpenStackCluster) {
				g.Expect(o.Status.Router).To(BeNil())
				g.Expect(o.Status.WorkerSecurityGroup).To(BeNil())
				g.Expect(o.Status.Network).NotTo(BeNil(), "the network is not gone yet")
			}},
		{name: "deleting without working credentials",
			set: func(o *infrav1.OpenStackCluster, _ *warnings) {
				setDeletionStatus(o, &deletionFound{identity: errors.New("401")})
			},
			cond: infrav1.NetworkReadyCondition, status: metav1.ConditionFalse, reason: infrav1.IdentityErrorReason, message: "401"},
		{name: "a whole normal reconcile: Ready sums it up",
			set: func(o *infrav1.OpenStackCluster, w *warnings) {
				setClusterStatus(o, w, "c", &clusterFindings{normal: true, identity: errors.New("401")}, now)
			},
			cond: infrav1.ReadyCondition, status: metav1.ConditionFalse, reason: clusterv1.NotReadyReason,
			warns: []string{infrav1.IdentityErrorReason}},
	})
}

func setterMachine() *infrav1.OpenStackMachine {
	return &infrav1.OpenStackMachine{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns", Generation: testGeneration}}
}

func TestMachineInstanceSetters(t *testing.T) {
	active := &servers.Server{ID: "s-1", Name: "m", Status: "ACTIVE", AvailabilityZone: "az1",
		Addresses: map[string]any{"net": []any{map[string]any{"addr": "10.6.0.11", "OS-EXT-IPS:type": "fixed"}}}}
	failed := &servers.Server{ID: "s-1", Status: "ERROR", Fault: servers.Fault{Code: 500, Message: "No valid host was found"}}
	runSetters(t, setterMachine, []setterCase[*infrav1.OpenStackMachine]{
		{name: "ACTIVE with an address: provisioned, provider ID set once",
			set:  func(o *infrav1.OpenStackMachine, w *warnings) { setInstanceFound(o, w, &instanceFound{server: active}) },
			cond: infrav1.InstanceReadyCondition, status: metav1.ConditionTrue, reason: infrav1.ReadyReason, message: "server m (s-1) is ACTIVE in az1 at 10.6.0.11",
			check: func(g Gomega, o *infrav1.OpenStackMachine) {
				g.Expect(o.Spec.ProviderID).To(Equal(ptr.To("openstack:///s-1")))
				g.Expect(o.Status.FailureDomain).To(Equal("az1"))
				g.Expect(o.Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
			}},
		{name: "upstream's provider ID is kept",
			before: func(o *infrav1.OpenStackMachine) { o.Spec.ProviderID = ptr.To("openstack://RegionOne/s-1") },
			set:    func(o *infrav1.OpenStackMachine, w *warnings) { setInstanceFound(o, w, &instanceFound{server: active}) },
			cond:   infrav1.InstanceReadyCondition, status: metav1.ConditionTrue, reason: infrav1.ReadyReason,
			check: func(g Gomega, o *infrav1.OpenStackMachine) {
				g.Expect(*o.Spec.ProviderID).To(Equal("openstack://RegionOne/s-1"))
			}},
		{name: "ACTIVE without an address yet",
			set: func(o *infrav1.OpenStackMachine, w *warnings) {
				setInstanceFound(o, w, &instanceFound{server: &servers.Server{ID: "s-1", Status: "ACTIVE"}})
			},
			cond: infrav1.InstanceReadyCondition, status: metav1.ConditionFalse, reason: infrav1.InstanceBuildingReason, message: "waiting for Nova to show its addresses"},
		{name: "building",
			set: func(o *infrav1.OpenStackMachine, w *warnings) {
				setInstanceFound(o, w, &instanceFound{server: &servers.Server{ID: "s-1", Status: "BUILD"}})
			},
			cond: infrav1.InstanceReadyCondition, status: metav1.ConditionFalse, reason: infrav1.InstanceBuildingReason},
		{name: "in ERROR: a problem, never recreated",
			set:  func(o *infrav1.OpenStackMachine, w *warnings) { setInstanceFound(o, w, &instanceFound{server: failed}) },
			cond: infrav1.InstanceReadyCondition, status: metav1.ConditionFalse, reason: infrav1.InstanceErrorReason, message: "No valid host was found (code 500)",
			warns: []string{infrav1.InstanceErrorReason}},
		{name: "in ERROR for a hard group policy",
			set: func(o *infrav1.OpenStackMachine, w *warnings) {
				setInstanceFound(o, w, &instanceFound{server: failed, group: &servergroups.ServerGroup{ID: "g", Name: "cp", Policy: ptr.To("anti-affinity"), Members: []string{"s-1", "s-2"}}})
			},
			cond: infrav1.InstanceReadyCondition, status: metav1.ConditionFalse, reason: infrav1.ServerGroupPolicyUnsatisfiableReason, message: "which has 1 other members",
			warns: []string{infrav1.ServerGroupPolicyUnsatisfiableReason}},
		{name: "deleted behind Cluster API's back",
			set:  func(o *infrav1.OpenStackMachine, w *warnings) { setInstanceFound(o, w, &instanceFound{goneID: "s-1"}) },
			cond: infrav1.InstanceReadyCondition, status: metav1.ConditionFalse, reason: infrav1.InstanceDeletedReason, message: "server s-1 no longer exists",
			warns: []string{infrav1.InstanceDeletedReason},
			check: func(g Gomega, o *infrav1.OpenStackMachine) {
				g.Expect(*o.Status.InstanceState).To(Equal(infrav1.InstanceStateDeleted))
			}},
		{name: "shut off",
			set: func(o *infrav1.OpenStackMachine, w *warnings) {
				setInstanceFound(o, w, &instanceFound{server: &servers.Server{ID: "s-1", Status: "SHUTOFF"}})
			},
			cond: infrav1.InstanceReadyCondition, status: metav1.ConditionFalse, reason: infrav1.InstanceNotRunningReason, message: "server s-1 is SHUTOFF"},
		{name: "waiting for bootstrap data",
			set: func(o *infrav1.OpenStackMachine, w *warnings) {
				setInstanceFound(o, w, &instanceFound{waitingForBootstrap: true})
			},
			cond: infrav1.InstanceReadyCondition, status: metav1.ConditionFalse, reason: infrav1.WaitingForBootstrapDataReason},
		{name: "waiting for the image",
			set: func(o *infrav1.OpenStackMachine, w *warnings) {
				setInstanceFound(o, w, &instanceFound{waitingForImage: "image i is not available"})
			},
			cond: infrav1.InstanceReadyCondition, status: metav1.ConditionFalse, reason: infrav1.WaitingForImageReason, message: "image i is not available"},
		{name: "waiting for volumes",
			set: func(o *infrav1.OpenStackMachine, w *warnings) {
				setInstanceFound(o, w, &instanceFound{volumesPending: &compute.VolumesPending{Volumes: []string{"root (creating)"}}})
			},
			cond: infrav1.InstanceReadyCondition, status: metav1.ConditionFalse, reason: infrav1.WaitingForVolumesReason, message: "the server is created once they are available"},
		{name: "a spec Nova cannot honour",
			set: func(o *infrav1.OpenStackMachine, w *warnings) {
				setInstanceFound(o, w, &instanceFound{configurationError: true, Outcome: outcome.Outcome{Err: errors.New("flavor f does not exist")}})
			},
			cond: infrav1.InstanceReadyCondition, status: metav1.ConditionFalse, reason: infrav1.InstanceConfigurationErrorReason, message: "flavor f does not exist",
			warns: []string{infrav1.InstanceConfigurationErrorReason}},
		{name: "Nova failed",
			set: func(o *infrav1.OpenStackMachine, w *warnings) {
				setInstanceFound(o, w, &instanceFound{Outcome: outcome.Failed(errCloud)})
			},
			cond: infrav1.InstanceReadyCondition, status: metav1.ConditionFalse, reason: infrav1.OpenStackErrorReason},
		{name: "waiting for the cluster: a whole reconcile",
			set: func(o *infrav1.OpenStackMachine, w *warnings) {
				setMachineStatus(o, w, machineConditionTypes, &machineFindings{normal: true, waitingForCluster: true})
			},
			cond: infrav1.InstanceReadyCondition, status: metav1.ConditionFalse, reason: infrav1.WaitingForClusterInfrastructureReason,
			check: func(g Gomega, o *infrav1.OpenStackMachine) {
				g.Expect(conditions.GetReason(o, infrav1.ReadyCondition)).To(Equal(clusterv1.NotReadyReason))
			}},
	})
}

func TestMachineIngressAndDeletionSetters(t *testing.T) {
	active := &servers.Server{ID: "s-1", Status: "ACTIVE"}
	lb := func(name, id string) infrav1.LoadBalancer { return infrav1.LoadBalancer{Name: name, ID: id} }
	ingress := func(in ingressFound) func(*infrav1.OpenStackMachine, *warnings) {
		if in.server == nil {
			in.server = active
		}
		return func(o *infrav1.OpenStackMachine, w *warnings) { setIngressCondition(o, w, &in) }
	}
	runSetters(t, setterMachine, []setterCase[*infrav1.OpenStackMachine]{
		{name: "a member", set: ingress(ingressFound{address: "10.6.0.11", membership: zones.Membership{Targets: []infrav1.LoadBalancer{lb("lb-az1", "1")}, Done: true}}),
			cond: infrav1.APIServerIngressReadyCondition, status: metav1.ConditionTrue, reason: infrav1.ReadyReason, message: "10.6.0.11 is a member of lb-az1"},
		{name: "a disabled member in maintenance", set: ingress(ingressFound{address: "10.6.0.11", zone: "az1",
			membership: zones.Membership{Targets: []infrav1.LoadBalancer{lb("lb-az1", "1")}, Done: true, Disabled: true}}),
			cond: infrav1.APIServerIngressReadyCondition, status: metav1.ConditionTrue, reason: infrav1.ReadyReason, message: "availability zone az1 is in maintenance"},
		{name: "registering", set: ingress(ingressFound{address: "10.6.0.11", membership: zones.Membership{Targets: []infrav1.LoadBalancer{lb("lb-az1", "1")}}}),
			cond: infrav1.APIServerIngressReadyCondition, status: metav1.ConditionFalse, reason: infrav1.WaitingForLoadBalancerReason, message: "registering 10.6.0.11 with lb-az1"},
		{name: "a zone without a load balancer: warned", set: ingress(ingressFound{address: "10.6.0.11", zone: "az9", membership: zones.Membership{ZoneMissing: true, MappedZones: "az1, az2"}}),
			cond: infrav1.APIServerIngressReadyCondition, status: metav1.ConditionFalse, reason: infrav1.NoLoadBalancerInAvailabilityZoneReason,
			message: `availability zone "az9" has no API server load balancer`, warns: []string{infrav1.NoLoadBalancerInAvailabilityZoneReason}},
		{name: "its zone's load balancer planned", set: ingress(ingressFound{address: "10.6.0.11", zone: "az2", membership: zones.Membership{ZoneMissing: true, ZonePlanned: true}}),
			cond: infrav1.APIServerIngressReadyCondition, status: metav1.ConditionFalse, reason: infrav1.WaitingForLoadBalancerReason, message: "availability zone az2 is not created yet"},
		{name: "no load balancer ID yet", set: ingress(ingressFound{address: "10.6.0.11", membership: zones.Membership{Targets: []infrav1.LoadBalancer{lb("lb", "")}}}),
			cond: infrav1.APIServerIngressReadyCondition, status: metav1.ConditionFalse, reason: infrav1.WaitingForLoadBalancerReason, message: "not created yet"},
		{name: "not required", set: ingress(ingressFound{notRequired: true}),
			cond: infrav1.APIServerIngressReadyCondition, status: metav1.ConditionTrue, reason: infrav1.NotRequiredReason},
		{name: "server not ACTIVE", set: ingress(ingressFound{server: &servers.Server{ID: "s-1", Status: "BUILD"}}),
			cond: infrav1.APIServerIngressReadyCondition, status: metav1.ConditionFalse, reason: infrav1.WaitingForInstanceReason, message: "server s-1 is BUILD"},
		{name: "no address yet", set: ingress(ingressFound{network: "net"}),
			cond: infrav1.APIServerIngressReadyCondition, status: metav1.ConditionFalse, reason: infrav1.WaitingForInstanceReason, message: "no address on the cluster network net"},
		{name: "the floating IP not allocated yet", set: ingress(ingressFound{address: "10.6.0.11", floating: &networking.EndpointFloatingIP{}}),
			cond: infrav1.APIServerIngressReadyCondition, status: metav1.ConditionFalse, reason: infrav1.WaitingForAPIServerFloatingIPReason},
		{name: "the floating IP on this machine", set: ingress(ingressFound{address: "10.6.0.11", floating: &networking.EndpointFloatingIP{Address: "172.24.4.5", FixedIP: "10.6.0.11"}}),
			cond: infrav1.APIServerIngressReadyCondition, status: metav1.ConditionTrue, reason: infrav1.ReadyReason, message: "on this machine's address 10.6.0.11"},
		{name: "the floating IP on another machine", set: ingress(ingressFound{address: "10.6.0.11", floating: &networking.EndpointFloatingIP{Address: "172.24.4.5", FixedIP: "10.6.0.12"}}),
			cond: infrav1.APIServerIngressReadyCondition, status: metav1.ConditionTrue, reason: infrav1.ReadyReason, message: "not this machine's"},
		{name: "membership failed", set: ingress(ingressFound{Outcome: outcome.Failed(errCloud)}),
			cond: infrav1.APIServerIngressReadyCondition, status: metav1.ConditionFalse, reason: infrav1.OpenStackErrorReason},
		{name: "deleting: leaving the load balancers",
			set: func(o *infrav1.OpenStackMachine, w *warnings) {
				setMachineDeletionStatus(o, w, &machineDeletionFound{membershipLeft: true})
			},
			cond: infrav1.APIServerIngressReadyCondition, status: metav1.ConditionFalse, reason: infrav1.DeletingReason, message: "removing the machine"},
		{name: "deleting: Nova deletes the server",
			set: func(o *infrav1.OpenStackMachine, w *warnings) {
				setMachineDeletionStatus(o, w, &machineDeletionFound{membershipGone: true, deletingServer: "s-1"})
			},
			cond: infrav1.InstanceReadyCondition, status: metav1.ConditionFalse, reason: infrav1.DeletingReason, message: "Nova is deleting server s-1"},
		{name: "deleting: done",
			set: func(o *infrav1.OpenStackMachine, w *warnings) {
				setMachineDeletionStatus(o, w, &machineDeletionFound{done: true})
			},
			cond: infrav1.InstanceReadyCondition, status: metav1.ConditionFalse, reason: infrav1.DeletingReason, message: "the server and its ports are deleted"},
		{name: "deleting: the server's deletion failed",
			set: func(o *infrav1.OpenStackMachine, w *warnings) {
				setMachineDeletionStatus(o, w, &machineDeletionFound{instanceErr: errCloud})
			},
			cond: infrav1.InstanceReadyCondition, status: metav1.ConditionFalse, reason: infrav1.OpenStackErrorReason},
		{name: "deleting: membership failed",
			set: func(o *infrav1.OpenStackMachine, w *warnings) {
				setMachineDeletionStatus(o, w, &machineDeletionFound{membershipErr: errCloud})
			},
			cond: infrav1.APIServerIngressReadyCondition, status: metav1.ConditionFalse, reason: infrav1.OpenStackErrorReason},
	})
}
