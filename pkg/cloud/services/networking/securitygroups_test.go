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
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	. "github.com/onsi/gomega"
	"go.uber.org/mock/gomock"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

func TestDesiredRules(t *testing.T) {
	g := NewWithT(t)
	spec := &infrav1.OpenStackClusterSpec{
		APIServerPort:         7443,
		APIServerLoadBalancer: &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true), AdditionalPorts: []int{8443}},
		ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{
			AllNodesSecurityGroupRules: []infrav1.SecurityGroupRuleSpec{{Name: "bgp", Direction: "ingress", Protocol: ptr.To("tcp"),
				PortRangeMin: ptr.To(179), PortRangeMax: ptr.To(179), RemoteManagedGroups: []infrav1.ManagedSecurityGroupName{"controlplane", "worker"}}},
			WorkerNodesSecurityGroupRules: []infrav1.SecurityGroupRuleSpec{{Name: "ssh", Direction: "ingress", Protocol: ptr.To("tcp"),
				PortRangeMin: ptr.To(22), PortRangeMax: ptr.To(22), RemoteIPPrefix: ptr.To("10.0.0.0/8")}},
		},
	}
	cp, worker, err := desiredRules(spec, groupIDs{controlPlane: "cp", worker: "w"})
	g.Expect(err).NotTo(HaveOccurred())
	keys := func(rs []desiredRule) []ruleKey {
		out := make([]ruleKey, len(rs))
		for i := range rs {
			out[i] = rs[i].key
		}
		return out
	}
	// The API server port is the configured one, not 6443, and every additional port is open.
	g.Expect(keys(cp)).To(ContainElements(
		ruleKey{direction: "ingress", etherType: "IPv4", protocol: "tcp", portMin: 7443, portMax: 7443, remoteIPPrefix: anywhere},
		ruleKey{direction: "ingress", etherType: "IPv4", protocol: "tcp", portMin: 8443, portMax: 8443, remoteIPPrefix: anywhere},
		ruleKey{direction: "ingress", etherType: "IPv4", protocol: "tcp", portMin: 179, portMax: 179, remoteGroupID: "cp"},
		ruleKey{direction: "ingress", etherType: "IPv4", protocol: "tcp", portMin: 179, portMax: 179, remoteGroupID: "w"},
	))
	g.Expect(keys(cp)).NotTo(ContainElement(ruleKey{direction: "ingress", etherType: "IPv4", protocol: "tcp", portMin: 6443, portMax: 6443, remoteIPPrefix: anywhere}))
	g.Expect(keys(worker)).To(ContainElement(ruleKey{direction: "ingress", etherType: "IPv4", protocol: "tcp", portMin: 22, portMax: 22, remoteIPPrefix: "10.0.0.0/8"}))
	g.Expect(keys(cp)).NotTo(ContainElement(ruleKey{direction: "ingress", etherType: "IPv4", protocol: "tcp", portMin: 22, portMax: 22, remoteIPPrefix: "10.0.0.0/8"}))

	spec.ManagedSecurityGroups.AllowAllInClusterTraffic = true
	cp, _, err = desiredRules(spec, groupIDs{controlPlane: "cp", worker: "w"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(keys(cp)).To(ContainElement(ruleKey{direction: "ingress", etherType: "IPv4", remoteGroupID: "w"}))
}

func TestReconcileSecurityGroupsConverges(t *testing.T) {
	g := NewWithT(t)
	cloud := fakeopenstack.New(fakeopenstack.Options{})
	s := NewService(cloud.Network(), nil, testOwner)
	spec := &infrav1.OpenStackClusterSpec{APIServerPort: 6443, ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{}}

	found, err := s.ReconcileSecurityGroups(ctx, "ns", "c", spec, nil, ManagedGroups{})
	g.Expect(err).NotTo(HaveOccurred())
	cp, worker := found.ControlPlane, found.Worker
	g.Expect(cloud.Calls()).To(HaveKeyWithValue("CreateSecGroupRules", 2), "one request per group for all its rules")
	g.Expect(cp.Name).To(Equal("k8s-cluster-ns-c-secgroup-controlplane"))
	g.Expect(worker.Name).To(Equal("k8s-cluster-ns-c-secgroup-worker"))
	cpRules, _ := cloud.Network().ListSecGroupRules(ctx, rules.ListOpts{SecGroupID: cp.ID})

	// A second pass changes nothing; a rule added by hand is removed; a changed spec is applied.
	cloud.ResetCalls()
	_, err = s.ReconcileSecurityGroups(ctx, "ns", "c", spec, nil, ManagedGroups{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cloud.Calls()).NotTo(HaveKey("CreateSecGroupRules"))
	g.Expect(cloud.Calls()).NotTo(HaveKey("DeleteSecGroupRule"))

	_, err = cloud.Network().CreateSecGroupRules(ctx, []rules.CreateOpts{{SecGroupID: cp.ID, Direction: "ingress", EtherType: "IPv4", Protocol: "tcp", PortRangeMin: 1, PortRangeMax: 1}})
	g.Expect(err).NotTo(HaveOccurred())
	spec.ManagedSecurityGroups.AllowAllInClusterTraffic = true
	_, err = s.ReconcileSecurityGroups(ctx, "ns", "c", spec, nil, ManagedGroups{})
	g.Expect(err).NotTo(HaveOccurred())
	after, _ := cloud.Network().ListSecGroupRules(ctx, rules.ListOpts{SecGroupID: cp.ID})
	g.Expect(after).To(HaveLen(len(cpRules)+2), "the stray rule is gone and the two allow-all rules are there")

	gs, _ := cloud.Network().ListSecGroups(ctx, groups.ListOpts{})
	g.Expect(gs).To(HaveLen(2))
	g.Expect(s.DeleteManagedSecurityGroups(ctx, "ns", "c")).To(Succeed())
	gs, _ = cloud.Network().ListSecGroups(ctx, groups.ListOpts{})
	g.Expect(gs).To(BeEmpty())
}

func TestEventWords(t *testing.T) {
	g := NewWithT(t)
	g.Expect(words("SecurityGroup")).To(Equal("security group"))
	g.Expect(words("Network")).To(Equal("network"))
}

func TestSecurityGroupsInUse(t *testing.T) {
	g := NewWithT(t)
	s, m, _ := newService(t)
	m.EXPECT().ListSecGroups(ctx, gomock.Any()).Return([]groups.SecGroup{{ID: "sg-1"}}, nil)
	m.EXPECT().DeleteSecGroup(ctx, "sg-1").Return(err409)
	g.Expect(s.DeleteManagedSecurityGroups(ctx, "ns", "c")).To(MatchError(ErrWaitingForPorts))
}

func TestAPIServerFloatingIP(t *testing.T) {
	desc := APIServerFloatingIPMarks("ns", "c", true)
	g0 := NewWithT(t)
	g0.Expect(desc.Ours).To(Equal("Cluster API OpenStack provider: API server of ns/c"), "the mark floating IPs already carry")

	t.Run("allocates once, finds it again by description, releases it", func(t *testing.T) {
		g := NewWithT(t)
		cloud := fakeopenstack.New(fakeopenstack.Options{})
		ext := cloud.AddNetwork("public", true)
		cloud.AddSubnet(ext, "public", "172.24.4.0/24")
		s := NewService(cloud.Network(), nil, testOwner)
		first, err := s.ReconcileAPIServerFloatingIP(ctx, desc, ext, nil)
		g.Expect(err).NotTo(HaveOccurred())
		again, err := s.ReconcileAPIServerFloatingIP(ctx, desc, ext, nil)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(again).To(Equal(first))
		g.Expect(s.DeleteAPIServerFloatingIP(ctx, desc)).To(Succeed())
		left, _ := cloud.Network().ListFloatingIPs(ctx, floatingips.ListOpts{})
		g.Expect(left).To(BeEmpty())
	})

	t.Run("the user's address is used and never released", func(t *testing.T) {
		g := NewWithT(t)
		cloud := fakeopenstack.New(fakeopenstack.Options{})
		ext := cloud.AddNetwork("public", true)
		cloud.AddSubnet(ext, "public", "172.24.4.0/24")
		s := NewService(cloud.Network(), nil, testOwner)
		addr, err := s.ReconcileAPIServerFloatingIP(ctx, desc, ext, ptr.To("172.24.4.77"))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(addr).To(Equal("172.24.4.77"))
		g.Expect(s.DeleteAPIServerFloatingIP(ctx, desc)).To(Succeed())
		left, _ := cloud.Network().ListFloatingIPs(ctx, floatingips.ListOpts{})
		g.Expect(left).To(HaveLen(1))
	})

	t.Run("allocation errors are returned", func(t *testing.T) {
		g := NewWithT(t)
		s, m, _ := newService(t)
		m.EXPECT().ListFloatingIPs(ctx, gomock.Any()).Return(nil, nil)
		m.EXPECT().CreateFloatingIP(ctx, gomock.Any()).Return(nil, errBoom)
		_, err := s.ReconcileAPIServerFloatingIP(ctx, desc, "ext", nil)
		g.Expect(err).To(MatchError("allocating a floating IP for the API server on network ext: boom"))
	})
}

func TestKnownSecurityGroupFallsBackWhenGone(t *testing.T) {
	g := NewWithT(t)
	s, m, _ := newService(t)
	spec := &infrav1.OpenStackClusterSpec{APIServerPort: 6443, ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{}}
	known := &infrav1.SecurityGroupStatus{ID: "gone", Name: "k8s-cluster-ns-c-secgroup-controlplane"}
	m.EXPECT().GetSecGroup(ctx, "gone").Return(nil, err404)
	m.EXPECT().ListSecGroups(ctx, gomock.Any()).Return(nil, errBoom)
	_, err := s.ReconcileSecurityGroups(ctx, "ns", "c", spec, nil, ManagedGroups{ControlPlane: known})
	g.Expect(err).To(MatchError(ContainSubstring("listing security groups named k8s-cluster-ns-c-secgroup-controlplane: boom")),
		"a known group that is gone is looked for by name")

	s, m, _ = newService(t)
	m.EXPECT().GetSecGroup(ctx, "gone").Return(nil, errBoom)
	_, err = s.ReconcileSecurityGroups(ctx, "ns", "c", spec, nil, ManagedGroups{ControlPlane: known})
	g.Expect(err).To(MatchError("getting security group gone: boom"))
}

func TestGroupsUpstreamCAPOCreatedKeepTheirRules(t *testing.T) {
	g := NewWithT(t)
	cloud := fakeopenstack.New(fakeopenstack.Options{})
	s := NewService(cloud.Network(), nil, testOwner)
	spec := &infrav1.OpenStackClusterSpec{APIServerPort: 6443, ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{},
		APIServerLoadBalancer: &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true), AdditionalPorts: []int{9345}}}

	// The groups and rules upstream CAPO v0.14 made for this spec, as its documentation lists them.
	cp, err := cloud.Network().CreateSecGroup(ctx, groups.CreateOpts{Name: "k8s-cluster-ns-c-secgroup-controlplane", Description: "Cluster API managed group"})
	g.Expect(err).NotTo(HaveOccurred())
	w, err := cloud.Network().CreateSecGroup(ctx, groups.CreateOpts{Name: "k8s-cluster-ns-c-secgroup-worker", Description: "Cluster API managed group"})
	g.Expect(err).NotTo(HaveOccurred())
	in := func(group, protocol string, min, max int, prefix, remote string) rules.CreateOpts {
		return rules.CreateOpts{SecGroupID: group, Direction: "ingress", EtherType: "IPv4", Protocol: rules.RuleProtocol(protocol),
			PortRangeMin: min, PortRangeMax: max, RemoteIPPrefix: prefix, RemoteGroupID: remote}
	}
	out := func(group, etherType string) rules.CreateOpts {
		return rules.CreateOpts{SecGroupID: group, Direction: "egress", EtherType: rules.RuleEtherType(etherType)}
	}
	_, err = cloud.Network().CreateSecGroupRules(ctx, []rules.CreateOpts{
		out(cp.ID, "IPv4"), out(cp.ID, "IPv6"), out(w.ID, "IPv4"), out(w.ID, "IPv6"), // Neutron's, in every new group
		in(cp.ID, "tcp", 6443, 6443, "", ""),
		in(cp.ID, "tcp", 9345, 9345, "", ""),
		in(cp.ID, "tcp", 2379, 2380, "", cp.ID),
		in(cp.ID, "tcp", 10250, 10250, "", cp.ID),
		in(cp.ID, "tcp", 10250, 10250, "", w.ID),
		in(w.ID, "tcp", 30000, 32767, "10.6.0.0/24", ""),
		in(w.ID, "udp", 30000, 32767, "10.6.0.0/24", ""),
		in(w.ID, "tcp", 30000, 32767, "", w.ID),
		in(w.ID, "udp", 30000, 32767, "", w.ID),
		in(w.ID, "tcp", 30000, 32767, "", cp.ID),
		in(w.ID, "udp", 30000, 32767, "", cp.ID),
		in(w.ID, "tcp", 10250, 10250, "", w.ID),
		in(w.ID, "tcp", 10250, 10250, "", cp.ID),
	})
	g.Expect(err).NotTo(HaveOccurred())

	cloud.ResetCalls()
	_, err = s.ReconcileSecurityGroups(ctx, "ns", "c", spec, []string{"10.6.0.0/24", "fd00::/64"}, ManagedGroups{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cloud.Calls()).NotTo(HaveKey("CreateSecGroupRules"), "taken over: no rule created")
	g.Expect(cloud.Calls()).NotTo(HaveKey("DeleteSecGroupRule"), "taken over: no rule deleted")

	// The spec still rules them, the way upstream did: allowAllInClusterTraffic replaces the
	// etcd and kubelet rules by all traffic between the groups.
	spec.ManagedSecurityGroups.AllowAllInClusterTraffic = true
	_, err = s.ReconcileSecurityGroups(ctx, "ns", "c", spec, []string{"10.6.0.0/24"}, ManagedGroups{})
	g.Expect(err).NotTo(HaveOccurred())
	after, _ := cloud.Network().ListSecGroupRules(ctx, rules.ListOpts{SecGroupID: cp.ID})
	var ports []int
	for _, r := range after {
		if r.Direction == "ingress" {
			ports = append(ports, r.PortRangeMin)
		}
	}
	g.Expect(ports).To(ConsistOf(6443, 9345, 0, 0))
}
