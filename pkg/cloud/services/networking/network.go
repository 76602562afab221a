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
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/attributestags"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/mtu"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/portsecurity"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// ResolveExternalNetwork finds the external network: the one spec.externalNetwork selects, or the
// only external network of the cloud. It returns nil when the cluster has no external network.
func (s *Service) ResolveExternalNetwork(ctx context.Context, spec *infrav1.OpenStackClusterSpec) (*infrav1.NetworkStatus, error) {
	if ptr.Deref(spec.DisableExternalNetwork, false) {
		return nil, nil
	}
	return s.resolveExternal(ctx, spec.ExternalNetwork, field.NewPath("spec", "externalNetwork"), "spec.disableExternalNetwork to true")
}

// ResolveFloatingIPNetwork finds the external network of an OpenStackFloatingIPPool: param, or
// the cloud's only external network when param is nil. path is where param is in the pool.
func (s *Service) ResolveFloatingIPNetwork(ctx context.Context, param *infrav1.NetworkParam, path *field.Path) (*infrav1.NetworkStatus, error) {
	return s.resolveExternal(ctx, param, path, "")
}

// resolveExternal is the external network param names, or the cloud's only one when param is
// nil; path is where param is, and instead names the setting that does without one ("" for none).
func (s *Service) resolveExternal(ctx context.Context, param *infrav1.NetworkParam, path *field.Path, instead string) (*infrav1.NetworkStatus, error) {
	if param != nil && param.ID != nil {
		n, err := s.client.GetNetwork(ctx, *param.ID)
		if clients.IsNotFound(err) {
			return nil, report.Refuted(infrav1.ExternalNetworkNotFoundReason, path.Child("id"), "network %s does not exist", *param.ID)
		}
		if err != nil {
			return nil, fmt.Errorf("getting external network %s: %w", *param.ID, err)
		}
		return &infrav1.NetworkStatus{Name: n.Name, ID: n.ID, Tags: n.Tags}, nil
	}

	opts := networks.ListOpts{}
	filtered := param != nil && param.Filter != nil
	if filtered {
		opts = networkListOpts(param.Filter)
	}
	found, err := s.client.ListNetworks(ctx, external.ListOptsExt{ListOptsBuilder: opts, External: ptr.To(true)})
	if err != nil {
		return nil, fmt.Errorf("listing external networks: %w", err)
	}
	if len(found) == 1 {
		return &infrav1.NetworkStatus{Name: found[0].Name, ID: found[0].ID, Tags: found[0].Tags}, nil
	}
	if filtered {
		return nil, report.Refuted(infrav1.ExternalNetworkNotFoundReason, path.Child("filter"), "%s matches %d external networks%s, want exactly one",
			describeNetworkFilter(param.Filter), len(found), nameList(found))
	}
	if len(found) == 0 {
		if instead != "" {
			return nil, report.Refuted(infrav1.ExternalNetworkNotFoundReason, path, "not set, and the cloud has no external network: set it, or %s", instead)
		}
		return nil, report.Refuted(infrav1.ExternalNetworkNotFoundReason, path, "not set, and the cloud has no external network: set it")
	}
	return nil, report.Refuted(infrav1.ExternalNetworkNotFoundReason, path, "not set, and the cloud has %d external networks%s: set it to choose one", len(found), nameList(found))
}

// nameList lists networks' names for messages, sorted, in parentheses after a space; "" for none.
func nameList(found []networks.Network) string {
	if len(found) == 0 {
		return ""
	}
	out := make([]string, 0, len(found))
	for _, n := range found {
		out = append(out, n.Name)
	}
	slices.Sort(out)
	return " (" + strings.Join(out, ", ") + ")"
}

func networkListOpts(f *infrav1.NetworkFilter) networks.ListOpts {
	tags, tagsAny, notTags, notTagsAny := tagsOf(f.FilterByNeutronTags)
	return networks.ListOpts{Name: f.Name, Description: f.Description, ProjectID: f.ProjectID, Tags: tags, TagsAny: tagsAny, NotTags: notTags, NotTagsAny: notTagsAny}
}

func describeNetworkFilter(f *infrav1.NetworkFilter) string {
	tags, tagsAny, notTags, notTagsAny := tagsOf(f.FilterByNeutronTags)
	return report.Filter("name", f.Name, "description", f.Description, "projectID", f.ProjectID,
		"tags", tags, "tagsAny", tagsAny, "notTags", notTags, "notTagsAny", notTagsAny)
}

func subnetListOpts(f *infrav1.SubnetFilter, networkID string) subnets.ListOpts {
	tags, tagsAny, notTags, notTagsAny := tagsOf(f.FilterByNeutronTags)
	return subnets.ListOpts{NetworkID: networkID, Name: f.Name, Description: f.Description, ProjectID: f.ProjectID, IPVersion: f.IPVersion,
		GatewayIP: f.GatewayIP, CIDR: f.CIDR, IPv6AddressMode: f.IPv6AddressMode, IPv6RAMode: f.IPv6RAMode,
		Tags: tags, TagsAny: tagsAny, NotTags: notTags, NotTagsAny: notTagsAny}
}

func describeSubnetFilter(f *infrav1.SubnetFilter) string {
	tags, tagsAny, notTags, notTagsAny := tagsOf(f.FilterByNeutronTags)
	ipVersion := ""
	if f.IPVersion != 0 {
		ipVersion = fmt.Sprint(f.IPVersion)
	}
	return report.Filter("name", f.Name, "description", f.Description, "projectID", f.ProjectID, "ipVersion", ipVersion,
		"gatewayIP", f.GatewayIP, "cidr", f.CIDR, "ipv6AddressMode", f.IPv6AddressMode, "ipv6RAMode", f.IPv6RAMode,
		"tags", tags, "tagsAny", tagsAny, "notTags", notTags, "notTagsAny", notTagsAny)
}

// ReconcileNetwork returns the cluster network and its subnets. With spec.managedSubnets it
// creates them, or adopts those it created before (by name and tags); otherwise it resolves
// spec.network and spec.subnets. known is what the status recorded last time (nil when lost):
// the user's network is then not looked up again (spec.network is immutable), and a managed
// network is read by ID, its subnets reused when they are all still there.
//
// With spec.primarySubnet, that subnet (of the cluster network) comes first: the single load
// balancer's VIP and the machines' default ports are on it.
func (s *Service) ReconcileNetwork(ctx context.Context, name string, spec *infrav1.OpenStackClusterSpec, known *infrav1.NetworkStatusWithSubnets) (*infrav1.NetworkStatusWithSubnets, error) {
	status, err := s.reconcileNetwork(ctx, name, spec, known)
	if err != nil || spec.PrimarySubnet == nil {
		return status, err
	}
	return s.primaryFirst(ctx, spec.PrimarySubnet, status)
}

// primaryFirst is status with the subnet param selects first. A subnet given by ID that is first
// already costs no call; one given by filter is looked up each time, so that a change of the
// cloud or of the spec is followed.
func (s *Service) primaryFirst(ctx context.Context, param *infrav1.SubnetParam, status *infrav1.NetworkStatusWithSubnets) (*infrav1.NetworkStatusWithSubnets, error) {
	if param.ID != nil && len(status.Subnets) > 0 && status.Subnets[0].ID == *param.ID {
		return status, nil
	}
	sn, err := s.ResolveSubnet(ctx, param, status.ID, field.NewPath("spec", "primarySubnet"))
	if err != nil {
		return nil, err
	}
	out := *status
	out.Subnets = []infrav1.Subnet{SubnetStatus(sn)}
	for _, other := range status.Subnets {
		if other.ID != sn.ID {
			out.Subnets = append(out.Subnets, other)
		}
	}
	return &out, nil
}

func (s *Service) reconcileNetwork(ctx context.Context, name string, spec *infrav1.OpenStackClusterSpec, known *infrav1.NetworkStatusWithSubnets) (*infrav1.NetworkStatusWithSubnets, error) {
	if len(spec.ManagedSubnets) > 0 {
		return s.reconcileManagedNetwork(ctx, name, spec, known)
	}
	if spec.Network == nil {
		return nil, report.Refuted(infrav1.NetworkNotFoundReason, field.NewPath("spec", "network"), "not set, and spec.managedSubnets is empty: set managedSubnets to create a network, or network to use an existing one")
	}
	if known != nil && known.ID != "" && len(known.Subnets) > 0 {
		return known, nil
	}
	return s.resolveNetwork(ctx, spec)
}

func (s *Service) resolveNetwork(ctx context.Context, spec *infrav1.OpenStackClusterSpec) (*infrav1.NetworkStatusWithSubnets, error) {
	path := field.NewPath("spec", "network")
	network, err := s.ResolveNetworkParam(ctx, spec.Network, path)
	if err != nil {
		return nil, err
	}
	status := &infrav1.NetworkStatusWithSubnets{NetworkStatus: infrav1.NetworkStatus{Name: network.Name, ID: network.ID, Tags: network.Tags}}

	if len(spec.Subnets) == 0 {
		all, err := s.client.ListSubnets(ctx, subnets.ListOpts{NetworkID: network.ID})
		if err != nil {
			return nil, fmt.Errorf("listing the subnets of network %s: %w", network.ID, err)
		}
		if len(all) == 0 {
			return nil, report.Refuted(infrav1.NetworkNotFoundReason, path, "network %s (%s) has no subnet", network.Name, network.ID)
		}
		for _, sn := range all {
			status.Subnets = append(status.Subnets, SubnetStatus(&sn))
		}
		return status, nil
	}
	for i := range spec.Subnets {
		sn, err := s.ResolveSubnet(ctx, &spec.Subnets[i], network.ID, field.NewPath("spec", "subnets").Index(i))
		if err != nil {
			return nil, err
		}
		status.Subnets = append(status.Subnets, SubnetStatus(sn))
	}
	return status, nil
}

// ResolveNetworkParam finds the one network a NetworkParam selects. path is the parameter's
// field, for messages (spec.network, spec.apiServerLoadBalancer.network).
func (s *Service) ResolveNetworkParam(ctx context.Context, param *infrav1.NetworkParam, path *field.Path) (*networks.Network, error) {
	if param.ID != nil {
		n, err := s.client.GetNetwork(ctx, *param.ID)
		if clients.IsNotFound(err) {
			return nil, report.Refuted(infrav1.NetworkNotFoundReason, path.Child("id"), "network %s does not exist", *param.ID)
		}
		if err != nil {
			return nil, fmt.Errorf("getting network %s: %w", *param.ID, err)
		}
		return n, nil
	}
	if param.Filter == nil {
		return nil, report.Refuted(infrav1.NetworkNotFoundReason, path, "set id or filter")
	}
	found, err := s.client.ListNetworks(ctx, networkListOpts(param.Filter))
	if err != nil {
		return nil, fmt.Errorf("listing networks: %w", err)
	}
	if len(found) != 1 {
		return nil, report.Refuted(infrav1.NetworkNotFoundReason, path.Child("filter"), "%s matches %d networks, want exactly one", describeNetworkFilter(param.Filter), len(found))
	}
	return &found[0], nil
}

// ResolveSubnet finds the one subnet a SubnetParam selects, and checks that it is on networkID
// (when set). path is the parameter's field, for messages.
func (s *Service) ResolveSubnet(ctx context.Context, param *infrav1.SubnetParam, networkID string, path *field.Path) (*subnets.Subnet, error) {
	if param.ID != nil {
		sn, err := s.client.GetSubnet(ctx, *param.ID)
		if clients.IsNotFound(err) {
			return nil, report.Refuted(infrav1.NetworkNotFoundReason, path.Child("id"), "subnet %s does not exist", *param.ID)
		}
		if err != nil {
			return nil, fmt.Errorf("getting subnet %s: %w", *param.ID, err)
		}
		if networkID != "" && sn.NetworkID != networkID {
			return nil, report.Refuted(infrav1.NetworkNotFoundReason, path.Child("id"), "subnet %s (%s) is on network %s, not on network %s", sn.Name, sn.ID, sn.NetworkID, networkID)
		}
		return sn, nil
	}
	found, err := s.client.ListSubnets(ctx, subnetListOpts(param.Filter, networkID))
	if err != nil {
		return nil, fmt.Errorf("listing subnets: %w", err)
	}
	if len(found) != 1 {
		where := ""
		if networkID != "" {
			where = " on network " + networkID
		}
		return nil, report.Refuted(infrav1.NetworkNotFoundReason, path.Child("filter"), "%s matches %d subnets%s, want exactly one", describeSubnetFilter(param.Filter), len(found), where)
	}
	return &found[0], nil
}

// SubnetStatus is how the status records a subnet.
func SubnetStatus(sn *subnets.Subnet) infrav1.Subnet {
	return infrav1.Subnet{Name: sn.Name, ID: sn.ID, CIDR: sn.CIDR, Tags: sn.Tags}
}

func (s *Service) reconcileManagedNetwork(ctx context.Context, name string, spec *infrav1.OpenStackClusterSpec, known *infrav1.NetworkStatusWithSubnets) (*infrav1.NetworkStatusWithSubnets, error) {
	var network *networks.Network
	if known != nil && known.ID != "" {
		n, err := s.client.GetNetwork(ctx, known.ID)
		switch {
		case err == nil && ownership.Mine(s.claim(n.Name == name, n.ID, n.Name, n.Description, n.Tags, n.ProjectID, n.CreatedAt)):
			if status, ok := s.knownSubnetsStillThere(n, known, spec); ok {
				return status, nil
			}
			network = n // still there, but its subnets or tags need work
		case err == nil:
			// The status names a network that is not the cluster's: a hint, never proof.
		case !clients.IsNotFound(err):
			return nil, fmt.Errorf("getting network %s: %w", known.ID, err)
		}
	}
	if network == nil {
		var err error
		if network, err = s.findOrCreateNetwork(ctx, name, spec); err != nil {
			return nil, err
		}
	}
	tags, err := s.ensureTags(ctx, "networks", network.ID, network.Tags, s.markedTags(network.Description, spec.Tags))
	if err != nil {
		return nil, err
	}
	status := &infrav1.NetworkStatusWithSubnets{NetworkStatus: infrav1.NetworkStatus{Name: network.Name, ID: network.ID, Tags: tags}}

	existing, err := s.client.ListSubnets(ctx, subnets.ListOpts{NetworkID: network.ID})
	if err != nil {
		return nil, fmt.Errorf("listing the subnets of network %s: %w", network.ID, err)
	}
	for i, want := range spec.ManagedSubnets {
		sn, err := s.reconcileManagedSubnet(ctx, name, network.ID, &want, field.NewPath("spec", "managedSubnets").Index(i).Child("cidr"), existing)
		if err != nil {
			return nil, err
		}
		snTags, err := s.ensureTags(ctx, "subnets", sn.ID, sn.Tags, s.markedTags(sn.Description, spec.Tags))
		if err != nil {
			return nil, err
		}
		st := SubnetStatus(sn)
		st.Tags = snTags
		status.Subnets = append(status.Subnets, st)
	}
	return status, nil
}

// findOrCreateNetwork adopts the cluster's network named name, or creates it.
func (s *Service) findOrCreateNetwork(ctx context.Context, name string, spec *infrav1.OpenStackClusterSpec) (*networks.Network, error) {
	found, err := s.client.ListNetworks(ctx, networks.ListOpts{Name: name})
	if err != nil {
		return nil, fmt.Errorf("listing networks named %s: %w", name, err)
	}
	claim := func(n *networks.Network) ownership.Candidate {
		return s.claim(true, n.ID, n.Name, n.Description, n.Tags, n.ProjectID, n.CreatedAt)
	}
	return findOrCreate(s, "Network", name, found, claim, func() (*networks.Network, error) {
		var opts networks.CreateOptsBuilder = networks.CreateOpts{Name: name, AdminStateUp: ptr.To(true), Description: s.owner.Description()}
		if spec.NetworkMTU != nil {
			opts = mtu.CreateOptsExt{CreateOptsBuilder: opts, MTU: *spec.NetworkMTU}
		}
		if ptr.Deref(spec.DisablePortSecurity, false) {
			opts = portsecurity.NetworkCreateOptsExt{CreateOptsBuilder: opts, PortSecurityEnabled: ptr.To(false)}
		}
		return s.client.CreateNetwork(ctx, opts)
	})
}

// knownSubnetsStillThere reuses the recorded subnets when the network still has every one of them,
// they cover every CIDR of spec.managedSubnets, and the tags are all there: nothing to do then.
func (s *Service) knownSubnetsStillThere(n *networks.Network, known *infrav1.NetworkStatusWithSubnets, spec *infrav1.OpenStackClusterSpec) (*infrav1.NetworkStatusWithSubnets, bool) {
	if !ContainsAll(n.Tags, s.markedTags(n.Description, spec.Tags)) {
		return nil, false
	}
	for _, want := range spec.ManagedSubnets {
		prefix, err := netip.ParsePrefix(want.CIDR)
		if err != nil {
			return nil, false
		}
		covered := slices.ContainsFunc(known.Subnets, func(sn infrav1.Subnet) bool {
			return sn.CIDR == prefix.Masked().String() && slices.Contains(n.Subnets, sn.ID) && ContainsAll(sn.Tags, spec.Tags)
		})
		if !covered {
			return nil, false
		}
	}
	return &infrav1.NetworkStatusWithSubnets{NetworkStatus: infrav1.NetworkStatus{Name: n.Name, ID: n.ID, Tags: n.Tags}, Subnets: known.Subnets}, true
}

func (s *Service) reconcileManagedSubnet(ctx context.Context, name, networkID string, want *infrav1.SubnetSpec, path *field.Path, existing []subnets.Subnet) (*subnets.Subnet, error) {
	prefix, err := netip.ParsePrefix(want.CIDR)
	if err != nil {
		return nil, report.Refuted(infrav1.NetworkNotFoundReason, path, "%q is not a CIDR", want.CIDR)
	}
	// On the cluster's own network, a subnet is the one of its CIDR.
	claim := func(sn *subnets.Subnet) ownership.Candidate {
		c := ownership.Candidate{ID: sn.ID, Name: sn.Name}
		if sn.CIDR == prefix.Masked().String() {
			c.Claim = ownership.Ours
		}
		return c
	}
	// Adopting the network adopts its subnets: only a creation is reported.
	if found, err := ownership.Find("subnet", name, existing, claim); found != nil || err != nil {
		return found, err
	}
	ipVersion := gophercloud.IPv4
	if prefix.Addr().Is6() {
		ipVersion = gophercloud.IPv6
	}
	opts := subnets.CreateOpts{
		NetworkID: networkID, Name: name, CIDR: want.CIDR, IPVersion: ipVersion,
		DNSNameservers: want.DNSNameservers, Description: s.owner.Description(),
	}
	for _, pool := range want.AllocationPools {
		opts.AllocationPools = append(opts.AllocationPools, subnets.AllocationPool{Start: pool.Start, End: pool.End})
	}
	sn, err := s.client.CreateSubnet(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("creating subnet %s (%s): %w", name, want.CIDR, err)
	}
	s.report.Changed("CreatedSubnet", report.Resource{Kind: "Subnet", Name: name, ID: sn.ID}, "Created subnet %s (%s, %s)", name, sn.ID, sn.CIDR)
	return sn, nil
}

// ensureTags makes a resource carry the spec's tags, and returns its tags.
func (s *Service) ensureTags(ctx context.Context, resourceType, id string, have, want []string) ([]string, error) {
	return EnsureTags(ctx, s.client, resourceType, id, have, want)
}

// EnsureTags adds to a Neutron resource (resourceType is Neutron's collection name: networks,
// ports, ...) the tags of want it lacks, keeping those it has, in one call and only when some
// are missing; it returns the resource's tags.
func EnsureTags(ctx context.Context, client clients.NetworkClient, resourceType, id string, have, want []string) ([]string, error) {
	if len(want) == 0 || ContainsAll(have, want) {
		return have, nil
	}
	tags, err := client.ReplaceAllTags(ctx, resourceType, id, attributestags.ReplaceAllOpts{Tags: Union(have, want)})
	if err != nil {
		return nil, fmt.Errorf("tagging %s %s: %w", resourceType, id, err)
	}
	return tags, nil
}

// ContainsAll says whether have holds every element of want (tags, security groups).
func ContainsAll(have, want []string) bool {
	for _, t := range want {
		if !slices.Contains(have, t) {
			return false
		}
	}
	return true
}

// Union is a followed by the elements of b, each once and in order: tags, or security groups,
// merged; nil when both are empty.
func Union(a, b []string) []string {
	var out []string
	for _, v := range append(slices.Clone(a), b...) {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// DeleteManagedNetwork deletes the network the controller created for the cluster, found by
// name and its mark so that a lost status does not leave it behind; its subnets go with it. It returns
// ErrWaitingForPorts while ports still use it.
func (s *Service) DeleteManagedNetwork(ctx context.Context, name string) error {
	found, err := s.client.ListNetworks(ctx, networks.ListOpts{Name: name})
	if err != nil {
		return fmt.Errorf("listing networks named %s: %w", name, err)
	}
	for _, n := range found {
		if !ownership.Mine(s.claim(true, n.ID, n.Name, n.Description, n.Tags, n.ProjectID, n.CreatedAt)) {
			continue // named like the cluster's, but not the cluster's: never deleted
		}
		if err := s.deleted(s.client.DeleteNetwork(ctx, n.ID), "Network", n.Name, n.ID); err != nil {
			return err
		}
	}
	return nil
}

// IsExternal says whether network id is an external network (router:external): one list call.
func (s *Service) IsExternal(ctx context.Context, id string) (bool, error) {
	found, err := s.client.ListNetworks(ctx, external.ListOptsExt{ListOptsBuilder: networks.ListOpts{ID: id}, External: ptr.To(true)})
	if err != nil {
		return false, fmt.Errorf("reading whether network %s is external: %w", id, err)
	}
	return slices.ContainsFunc(found, func(n networks.Network) bool { return n.ID == id }), nil
}
