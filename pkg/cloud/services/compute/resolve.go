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
	"context"
	"fmt"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// The spec fields resolved here, for messages.
var (
	imagePath       = field.NewPath("spec", "image")
	serverGroupPath = field.NewPath("spec", "serverGroup")
)

// ResolveFlavor returns the ID of the flavor spec.flavor names, or checks spec.flavorID.
func (s *Service) ResolveFlavor(ctx context.Context, name, id *string) (string, error) {
	if id != nil {
		f, err := s.compute.GetFlavor(ctx, *id)
		if clients.IsNotFound(err) {
			return "", report.Refuted(infrav1.InstanceConfigurationErrorReason, field.NewPath("spec", "flavorID"), "flavor %s does not exist", *id)
		}
		if err != nil {
			return "", fmt.Errorf("getting flavor %s: %w", *id, err)
		}
		return f.ID, nil
	}
	if name == nil {
		return "", report.Refuted(infrav1.InstanceConfigurationErrorReason, field.NewPath("spec", "flavor"), "set flavor or flavorID")
	}
	all, err := s.compute.ListFlavors(ctx, flavors.ListOpts{AccessType: flavors.AllAccess})
	if err != nil {
		return "", fmt.Errorf("listing flavors: %w", err)
	}
	var ids []string
	for _, f := range all {
		if f.Name == *name {
			ids = append(ids, f.ID)
		}
	}
	if len(ids) != 1 {
		return "", report.Refuted(infrav1.InstanceConfigurationErrorReason, field.NewPath("spec", "flavor"), "%d flavors are named %q, want exactly one", len(ids), *name)
	}
	return ids[0], nil
}

// ResolveImage returns the ID of the image spec.image selects.
func (s *Service) ResolveImage(ctx context.Context, param *infrav1.ImageParam) (string, error) {
	if param.ID != nil {
		i, err := s.image.GetImage(ctx, *param.ID)
		if clients.IsNotFound(err) {
			return "", report.Refuted(infrav1.InstanceConfigurationErrorReason, imagePath.Child("id"), "image %s does not exist", *param.ID)
		}
		if err != nil {
			return "", fmt.Errorf("getting image %s: %w", *param.ID, err)
		}
		return i.ID, nil
	}
	if param.Filter == nil {
		return "", report.Refuted(infrav1.InstanceConfigurationErrorReason, imagePath, "set id, filter or imageRef")
	}
	opts := images.ListOpts{Tags: param.Filter.Tags}
	if param.Filter.Name != nil {
		opts.Name = *param.Filter.Name
	}
	found, err := s.image.ListImages(ctx, opts)
	if err != nil {
		return "", fmt.Errorf("listing images: %w", err)
	}
	if len(found) != 1 {
		return "", report.Refuted(infrav1.InstanceConfigurationErrorReason, imagePath.Child("filter"), "%s matches %d images, want exactly one", describeImageFilter(param.Filter), len(found))
	}
	return found[0].ID, nil
}

func describeImageFilter(f *infrav1.ImageFilter) string {
	return report.Filter("name", ptr.Deref(f.Name, ""), "tags", strings.Join(f.Tags, ","))
}

// ResolveServerGroup returns the ID of the server group spec.serverGroup selects; "" for nil. A
// group selected by name is used only when none of its servers is another namespace's machine
// or bastion: anyone may name a group, and a server that joins another's hard anti-affinity
// group takes a host from it. A group given by ID is the user's choice.
func (s *Service) ResolveServerGroup(ctx context.Context, param *infrav1.ServerGroupParam) (string, error) {
	g, err := s.ServerGroup(ctx, param)
	if g == nil || err != nil {
		return "", err
	}
	if param.ID == nil {
		if err := s.groupOfThisNamespace(ctx, g); err != nil {
			return "", err
		}
	}
	return g.ID, nil
}

// maxGroupMembersRead is how many servers of a group found by name are read to tell whose they
// are; a larger group is used only by ID.
const maxGroupMembersRead = 32

// groupOfThisNamespace refuses group g, found by name, when one of its servers carries the mark
// of a machine or bastion of another namespace, or when it holds more servers than are read.
func (s *Service) groupOfThisNamespace(ctx context.Context, g *servergroups.ServerGroup) error {
	path := serverGroupPath.Child("filter", "name")
	if len(g.Members) > maxGroupMembersRead {
		return report.Refuted(infrav1.InstanceConfigurationErrorReason, path,
			"server group %s (%s) holds %d servers, more than the %d read to tell whose they are: give its id to use it", g.Name, g.ID, len(g.Members), maxGroupMembersRead)
	}
	for _, id := range g.Members {
		sv, err := s.compute.GetServer(ctx, id)
		if clients.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading server %s of server group %s: %w", id, g.Name, err)
		}
		for _, key := range []string{OwnerMetadataKey, BastionMetadataKey} {
			if ns, _, ok := strings.Cut(sv.Metadata[key], "/"); ok && ns != s.owner.Namespace {
				return report.Refuted(infrav1.ResourceOwnedElsewhereReason, path,
					"server group %s (%s) holds servers of another namespace's machines: a group found by name is used only when it is this namespace's; give its id to use it", g.Name, g.ID)
			}
		}
	}
	return nil
}

// ServerGroup returns the server group spec.serverGroup selects; nil for nil.
func (s *Service) ServerGroup(ctx context.Context, param *infrav1.ServerGroupParam) (*servergroups.ServerGroup, error) {
	if param == nil {
		return nil, nil
	}
	if param.ID == nil && (param.Filter == nil || param.Filter.Name == nil) {
		return nil, report.Refuted(infrav1.InstanceConfigurationErrorReason, serverGroupPath, "set id or filter.name")
	}
	all, err := s.compute.ListServerGroups(ctx, servergroups.ListOpts{})
	if err != nil {
		return nil, fmt.Errorf("listing server groups: %w", err)
	}
	var matched []servergroups.ServerGroup
	for _, g := range all {
		if (param.ID != nil && g.ID == *param.ID) || (param.ID == nil && g.Name == *param.Filter.Name) {
			matched = append(matched, g)
		}
	}
	switch {
	case len(matched) == 1:
		return &matched[0], nil
	case param.ID != nil:
		return nil, report.Refuted(infrav1.InstanceConfigurationErrorReason, serverGroupPath.Child("id"), "server group %s does not exist", *param.ID)
	default:
		return nil, report.Refuted(infrav1.InstanceConfigurationErrorReason, serverGroupPath.Child("filter", "name"), "%d server groups are named %q, want exactly one", len(matched), *param.Filter.Name)
	}
}

// GroupPolicy is a server group's policy (anti-affinity, soft-anti-affinity, affinity,
// soft-affinity), as Nova shows it before microversion 2.64 (a list) and since (one policy).
func GroupPolicy(g *servergroups.ServerGroup) string {
	if g.Policy != nil && *g.Policy != "" {
		return *g.Policy
	}
	return strings.Join(g.Policies, ",")
}

// CheckKeyPair checks that the key pair spec.sshKeyName names exists, so that a typo is reported
// with the field rather than as Nova's 400 on create.
func (s *Service) CheckKeyPair(ctx context.Context, name string) error {
	if name == "" {
		return nil
	}
	_, err := s.compute.GetKeyPair(ctx, name)
	if clients.IsNotFound(err) {
		return report.Refuted(infrav1.InstanceConfigurationErrorReason, field.NewPath("spec", "sshKeyName"), "key pair %q does not exist", name)
	}
	if err != nil {
		return fmt.Errorf("getting key pair %s: %w", name, err)
	}
	return nil
}
