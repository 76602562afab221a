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
	"fmt"
	"slices"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/rules"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// SecurityGroupNames are the names of a cluster's managed security groups, as upstream CAPO
// names them.
func SecurityGroupNames(namespace, cluster string) (controlPlane, worker string) {
	prefix := fmt.Sprintf("k8s-cluster-%s-%s-secgroup-", namespace, cluster)
	return prefix + "controlplane", prefix + "worker"
}

// ruleKey is what makes two rules the same rule for Neutron; descriptions do not count.
type ruleKey struct {
	direction, etherType, protocol string
	portMin, portMax               int
	remoteIPPrefix, remoteGroupID  string
}

type desiredRule struct {
	key         ruleKey
	description string
}

const anywhere = "0.0.0.0/0"

func tcp(description string, portMin, portMax int, remoteIPPrefix, remoteGroupID string) desiredRule {
	return desiredRule{description: description, key: ruleKey{direction: "ingress", etherType: "IPv4", protocol: "tcp",
		portMin: portMin, portMax: portMax, remoteIPPrefix: remoteIPPrefix, remoteGroupID: remoteGroupID}}
}

// defaultEgress are the rules Neutron puts in every new group; keeping them in the desired set
// means they are neither deleted nor created twice.
func defaultEgress() []desiredRule {
	return []desiredRule{
		{description: "egress IPv4", key: ruleKey{direction: "egress", etherType: "IPv4"}},
		{description: "egress IPv6", key: ruleKey{direction: "egress", etherType: "IPv6"}},
	}
}

// BastionSecurityGroupName is the name of the bastion's managed security group, as upstream CAPO
// names it.
func BastionSecurityGroupName(namespace, cluster string) string {
	return fmt.Sprintf("k8s-cluster-%s-%s-secgroup-bastion", namespace, cluster)
}

// ManagedGroups are the managed security groups of a cluster: as the status recorded them (nil
// when lost or not made), or as ReconcileSecurityGroups found them.
type ManagedGroups struct {
	ControlPlane, Worker, Bastion *infrav1.SecurityGroupStatus
}

// ReconcileSecurityGroups creates (or adopts by name) the control plane and worker security
// groups when spec.managedSecurityGroups is set, and the bastion's while spec.bastion is enabled,
// and makes their rules exactly what the spec asks for: this provider's rule set, or upstream
// CAPO's in groups upstream created (subnetCIDRs are the cluster's subnets, from which upstream
// opens the NodePorts). known is what the status recorded: a known group is read by ID, which
// returns its rules in the same call. It returns no groups when security groups are not managed.
//
// Once the bastion is disabled, its group is deleted when the status records one, after the
// rules of the other groups no longer name it; while the bastion's port still uses it, it is
// kept (and returned) for a later reconcile to delete.
func (s *Service) ReconcileSecurityGroups(ctx context.Context, namespace, cluster string, spec *infrav1.OpenStackClusterSpec, subnetCIDRs []string, known ManagedGroups) (ManagedGroups, error) {
	if spec.ManagedSecurityGroups == nil {
		return ManagedGroups{}, nil
	}
	cpName, workerName := SecurityGroupNames(namespace, cluster)
	cp, err := s.findOrCreateGroup(ctx, cpName, spec.Tags, known.ControlPlane)
	if err != nil {
		return ManagedGroups{}, err
	}
	w, err := s.findOrCreateGroup(ctx, workerName, spec.Tags, known.Worker)
	if err != nil {
		return ManagedGroups{}, err
	}
	ids := groupIDs{controlPlane: cp.ID, worker: w.ID}
	var bastion *groupWithRules
	if spec.BastionEnabled() {
		if bastion, err = s.findOrCreateGroup(ctx, BastionSecurityGroupName(namespace, cluster), spec.Tags, known.Bastion); err != nil {
			return ManagedGroups{}, err
		}
		ids.bastion = bastion.ID
	}
	cpRules, workerRules, err := desiredRules(spec, ids)
	if cp.Description == UpstreamGroupDescription {
		// A cluster taken over from upstream CAPO: its groups keep upstream's rules.
		cpRules, workerRules, err = upstreamRules(spec, ids, subnetCIDRs)
	}
	if err != nil {
		return ManagedGroups{}, err
	}
	if err := s.reconcileRules(ctx, cp, cpRules); err != nil {
		return ManagedGroups{}, err
	}
	if err := s.reconcileRules(ctx, w, workerRules); err != nil {
		return ManagedGroups{}, err
	}
	out := ManagedGroups{ControlPlane: &infrav1.SecurityGroupStatus{Name: cp.Name, ID: cp.ID}, Worker: &infrav1.SecurityGroupStatus{Name: w.Name, ID: w.ID}}
	switch {
	case bastion != nil:
		if err := s.reconcileRules(ctx, bastion, bastionRules(bastion.Description == UpstreamGroupDescription)); err != nil {
			return ManagedGroups{}, err
		}
		out.Bastion = &infrav1.SecurityGroupStatus{Name: bastion.Name, ID: bastion.ID}
	case known.Bastion != nil:
		err := s.deleteGroupsNamed(ctx, BastionSecurityGroupName(namespace, cluster))
		if errors.Is(err, ErrWaitingForPorts) {
			out.Bastion = known.Bastion
			err = nil
		}
		if err != nil {
			return ManagedGroups{}, err
		}
	}
	return out, nil
}

// groupIDs are the IDs of the managed groups rules may name; bastion is "" while the bastion is
// disabled.
type groupIDs struct{ controlPlane, worker, bastion string }

// bastionRules are the rules of the bastion's group: SSH from anywhere, and Neutron's egress. In
// the group upstream CAPO made (upstream), SSH is open as upstream opens it, without a remote
// prefix, so that a takeover changes no rule.
func bastionRules(upstream bool) []desiredRule {
	if upstream {
		return append(defaultEgress(), tcp("SSH", 22, 22, "", ""))
	}
	return append(defaultEgress(), tcp("SSH", 22, 22, anywhere, ""))
}

// sshFromBastion is the rule of the control plane and worker groups that lets the bastion reach
// the nodes over SSH, while there is a bastion.
func sshFromBastion(ids groupIDs) []desiredRule {
	if ids.bastion == "" {
		return nil
	}
	r := tcp("SSH from the bastion", 22, 22, "", ids.bastion)
	return []desiredRule{r}
}

func desiredRules(spec *infrav1.OpenStackClusterSpec, ids groupIDs) (cpRules, workerRules []desiredRule, err error) {
	cpID, workerID := ids.controlPlane, ids.worker
	apiPort := spec.EffectiveAPIServerPort()
	cpRules = append(defaultEgress(),
		tcp("Kubernetes API", apiPort, apiPort, anywhere, ""),
		tcp("etcd", 2379, 2380, "", cpID),
		tcp("kubelet API from control plane", 10250, 10250, "", cpID),
		tcp("kubelet API from workers", 10250, 10250, "", workerID),
	)
	// Every additional load balancer port reaches the control plane machines too. Upstream
	// opened only 6443, whatever the API server port; we open what the listeners forward to.
	if spec.APIServerLoadBalancerEnabled() {
		for _, port := range spec.APIServerLoadBalancer.AdditionalPorts {
			cpRules = append(cpRules, tcp(fmt.Sprintf("load balancer port %d", port), port, port, anywhere, ""))
		}
	}
	workerRules = append(defaultEgress(),
		tcp("NodePort services", 30000, 32767, anywhere, ""),
		tcp("kubelet API from control plane", 10250, 10250, "", cpID),
		tcp("kubelet API from workers", 10250, 10250, "", workerID),
	)

	cpRules = append(cpRules, sshFromBastion(ids)...)
	workerRules = append(workerRules, sshFromBastion(ids)...)
	msg := spec.ManagedSecurityGroups
	if msg.AllowAllInClusterTraffic {
		for _, group := range []struct{ name, id string }{{"control plane", cpID}, {"workers", workerID}} {
			all := desiredRule{description: "all traffic from " + group.name, key: ruleKey{direction: "ingress", etherType: "IPv4", remoteGroupID: group.id}}
			cpRules = append(cpRules, all)
			workerRules = append(workerRules, all)
		}
	}
	cpUser, workerUser, err := userRules(msg, ids)
	if err != nil {
		return nil, nil, err
	}
	return append(cpRules, cpUser...), append(workerRules, workerUser...), nil
}

// userRules are the rules of the spec's rule lists, per group: allNodesSecurityGroupRules in
// both, then each group's own list.
func userRules(msg *infrav1.ManagedSecurityGroups, ids groupIDs) (cpRules, workerRules []desiredRule, err error) {
	groupIDs := map[infrav1.ManagedSecurityGroupName]string{"controlplane": ids.controlPlane, "worker": ids.worker}
	if ids.bastion != "" {
		groupIDs["bastion"] = ids.bastion
	}
	user := func(list []infrav1.SecurityGroupRuleSpec, name string) ([]desiredRule, error) {
		var out []desiredRule
		for i, r := range list {
			converted, err := convertRule(r, groupIDs, field.NewPath("spec", "managedSecurityGroups", name).Index(i))
			if err != nil {
				return nil, err
			}
			out = append(out, converted...)
		}
		return out, nil
	}
	all, err := user(msg.AllNodesSecurityGroupRules, "allNodesSecurityGroupRules")
	if err != nil {
		return nil, nil, err
	}
	cpOnly, err := user(msg.ControlPlaneNodesSecurityGroupRules, "controlPlaneNodesSecurityGroupRules")
	if err != nil {
		return nil, nil, err
	}
	workerOnly, err := user(msg.WorkerNodesSecurityGroupRules, "workerNodesSecurityGroupRules")
	if err != nil {
		return nil, nil, err
	}
	cpRules = append(append(cpRules, all...), cpOnly...)
	workerRules = append(append(workerRules, all...), workerOnly...)
	return cpRules, workerRules, nil
}

// convertRule turns a user rule into Neutron rules: one per remote managed group.
func convertRule(r infrav1.SecurityGroupRuleSpec, groupIDs map[infrav1.ManagedSecurityGroupName]string, path *field.Path) ([]desiredRule, error) {
	base := desiredRule{description: ptr.Deref(r.Description, r.Name), key: ruleKey{
		direction: r.Direction, etherType: ptr.Deref(r.EtherType, "IPv4"), protocol: ptr.Deref(r.Protocol, ""),
		portMin: ptr.Deref(r.PortRangeMin, 0), portMax: ptr.Deref(r.PortRangeMax, 0),
		remoteIPPrefix: ptr.Deref(r.RemoteIPPrefix, ""), remoteGroupID: ptr.Deref(r.RemoteGroupID, ""),
	}}
	if len(r.RemoteManagedGroups) == 0 {
		return []desiredRule{base}, nil
	}
	var out []desiredRule
	for _, g := range r.RemoteManagedGroups {
		id, ok := groupIDs[g]
		if !ok && g == "bastion" {
			return nil, report.Refuted(infrav1.ProvisioningReason, path.Child("remoteManagedGroups"), "names the bastion's group, and the cluster has no bastion (spec.bastion is not enabled)")
		}
		if !ok {
			return nil, report.Refuted(infrav1.ProvisioningReason, path.Child("remoteManagedGroups"), "unknown group %q", g)
		}
		rule := base
		rule.key.remoteGroupID = id
		out = append(out, rule)
	}
	return out, nil
}

// findOrCreateGroup returns the group with its rules (withRules) when it was read by ID; groups
// found by listing or just created carry no rules and have them listed by reconcileRules.
func (s *Service) findOrCreateGroup(ctx context.Context, name string, tags []string, known *infrav1.SecurityGroupStatus) (*groupWithRules, error) {
	group := &groupWithRules{}
	if known != nil && known.ID != "" {
		g, err := s.client.GetSecGroup(ctx, known.ID)
		switch {
		case err == nil && g.Name == name && ownership.Mine(s.claim(true, g.ID, g.Name, g.Description, g.Tags, g.TenantID, g.CreatedAt)):
			group = &groupWithRules{SecGroup: g, rulesKnown: true}
		case err != nil && !clients.IsNotFound(err):
			return nil, fmt.Errorf("getting security group %s: %w", known.ID, err)
		}
	}
	if group.SecGroup == nil {
		g, err := s.findOrCreateGroupByName(ctx, name)
		if err != nil {
			return nil, err
		}
		group.SecGroup = g
	}
	var err error
	if group.Tags, err = s.ensureTags(ctx, "security-groups", group.ID, group.Tags, s.markedTags(group.Description, tags)); err != nil {
		return nil, err
	}
	return group, nil
}

// groupWithRules is a security group, and whether its Rules field is the group's full rule set.
type groupWithRules struct {
	*groups.SecGroup
	rulesKnown bool
}

func (s *Service) findOrCreateGroupByName(ctx context.Context, name string) (*groups.SecGroup, error) {
	found, err := s.client.ListSecGroups(ctx, groups.ListOpts{Name: name})
	if err != nil {
		return nil, fmt.Errorf("listing security groups named %s: %w", name, err)
	}
	claim := func(g *groups.SecGroup) ownership.Candidate {
		return s.claim(true, g.ID, g.Name, g.Description, g.Tags, g.TenantID, g.CreatedAt)
	}
	return findOrCreate(s, "SecurityGroup", name, found, claim, func() (*groups.SecGroup, error) {
		return s.client.CreateSecGroup(ctx, groups.CreateOpts{Name: name, Description: s.owner.Description()})
	})
}

func keyOf(r *rules.SecGroupRule) ruleKey {
	return ruleKey{direction: r.Direction, etherType: r.EtherType, protocol: r.Protocol, portMin: r.PortRangeMin, portMax: r.PortRangeMax,
		remoteIPPrefix: r.RemoteIPPrefix, remoteGroupID: r.RemoteGroupID}
}

// reconcileRules deletes the rules of a group that are not wanted and creates the missing ones.
func (s *Service) reconcileRules(ctx context.Context, group *groupWithRules, want []desiredRule) error {
	have := group.Rules
	if !group.rulesKnown {
		var err error
		if have, err = s.client.ListSecGroupRules(ctx, rules.ListOpts{SecGroupID: group.ID}); err != nil {
			return fmt.Errorf("listing the rules of security group %s: %w", group.Name, err)
		}
	}
	wanted := func(k ruleKey) bool { return slices.ContainsFunc(want, func(d desiredRule) bool { return d.key == k }) }
	for i := range have {
		if wanted(keyOf(&have[i])) {
			continue
		}
		if err := s.client.DeleteSecGroupRule(ctx, have[i].ID); err != nil && !clients.IsNotFound(err) {
			return fmt.Errorf("deleting rule %s of security group %s: %w", have[i].ID, group.Name, err)
		}
	}
	// The missing rules are created in one request: a new group's rules cost one call, and
	// Neutron creates all of them or none.
	var missing []rules.CreateOpts
	planned := map[ruleKey]bool{}
	for _, d := range want {
		exists := slices.ContainsFunc(have, func(r rules.SecGroupRule) bool { return keyOf(&r) == d.key })
		if exists || planned[d.key] {
			continue
		}
		missing = append(missing, rules.CreateOpts{
			SecGroupID: group.ID, Description: d.description, Direction: rules.RuleDirection(d.key.direction),
			EtherType: rules.RuleEtherType(d.key.etherType), Protocol: rules.RuleProtocol(d.key.protocol),
			PortRangeMin: d.key.portMin, PortRangeMax: d.key.portMax, RemoteIPPrefix: d.key.remoteIPPrefix, RemoteGroupID: d.key.remoteGroupID,
		})
		planned[d.key] = true
	}
	if len(missing) == 0 {
		return nil
	}
	if _, err := s.client.CreateSecGroupRules(ctx, missing); err != nil {
		return fmt.Errorf("creating %d rules in security group %s: %w", len(missing), group.Name, err)
	}
	return nil
}

// DeleteManagedSecurityGroups deletes the cluster's managed security groups, the bastion's
// included, found by name so that a lost status does not leave them behind. It returns
// ErrWaitingForPorts while ports still use them.
func (s *Service) DeleteManagedSecurityGroups(ctx context.Context, namespace, cluster string) error {
	cpName, workerName := SecurityGroupNames(namespace, cluster)
	// The bastion's group first: the others' rules name it.
	return s.deleteGroupsNamed(ctx, BastionSecurityGroupName(namespace, cluster), cpName, workerName)
}

// deleteGroupsNamed deletes the groups of these names that are the cluster's.
func (s *Service) deleteGroupsNamed(ctx context.Context, names ...string) error {
	for _, name := range names {
		found, err := s.client.ListSecGroups(ctx, groups.ListOpts{Name: name})
		if err != nil {
			return fmt.Errorf("listing security groups named %s: %w", name, err)
		}
		for _, g := range found {
			if !ownership.Mine(s.claim(true, g.ID, g.Name, g.Description, g.Tags, g.TenantID, g.CreatedAt)) {
				continue // named like the cluster's, but not the cluster's: never deleted
			}
			if err := s.deleted(s.client.DeleteSecGroup(ctx, g.ID), "SecurityGroup", g.Name, g.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// ResolveSecurityGroup returns the ID of the one security group a SecurityGroupParam selects.
// path is the parameter's field, for messages (spec.securityGroups[0], spec.ports[1].securityGroups[0]).
func (s *Service) ResolveSecurityGroup(ctx context.Context, param *infrav1.SecurityGroupParam, path *field.Path) (string, error) {
	if param.ID != nil {
		g, err := s.client.GetSecGroup(ctx, *param.ID)
		if clients.IsNotFound(err) {
			return "", report.Refuted(infrav1.InstanceConfigurationErrorReason, path.Child("id"), "security group %s does not exist", *param.ID)
		}
		if err != nil {
			return "", fmt.Errorf("getting security group %s: %w", *param.ID, err)
		}
		return g.ID, nil
	}
	if param.Filter == nil {
		return "", report.Refuted(infrav1.InstanceConfigurationErrorReason, path, "set id or filter")
	}
	f := param.Filter
	tags, tagsAny, notTags, notTagsAny := tagsOf(f.FilterByNeutronTags)
	found, err := s.client.ListSecGroups(ctx, groups.ListOpts{Name: f.Name, Description: f.Description, ProjectID: f.ProjectID,
		Tags: tags, TagsAny: tagsAny, NotTags: notTags, NotTagsAny: notTagsAny})
	if err != nil {
		return "", fmt.Errorf("listing security groups: %w", err)
	}
	if len(found) != 1 {
		return "", report.Refuted(infrav1.InstanceConfigurationErrorReason, path.Child("filter"), "%s matches %d security groups, want exactly one",
			report.Filter("name", f.Name, "description", f.Description, "projectID", f.ProjectID,
				"tags", tags, "tagsAny", tagsAny, "notTags", notTags, "notTagsAny", notTagsAny), len(found))
	}
	return found[0].ID, nil
}
