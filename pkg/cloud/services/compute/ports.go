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
	"slices"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/portsbinding"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/portsecurity"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/trunks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"k8s.io/apimachinery/pkg/util/validation/field"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// PortSpec is one port of a machine's server, with every reference resolved to an ID.
//
// A port is the machine's when it has the machine's port name and description: Neutron sets
// both in the create call, while tags come in a second call, so they cannot identify a port
// that an interrupted reconcile left behind.
type PortSpec struct {
	PortIdentity
	NetworkID string
	// FixedIPs hold a subnet ID and/or an address each.
	FixedIPs []ports.IP
	// SecurityGroupIDs are the port's groups; nil leaves Neutron's default.
	SecurityGroupIDs    []string
	DisablePortSecurity *bool
	Tags                []string
	// Options are the port's further Neutron attributes, as the spec gives them.
	Options PortOptions
}

// PortOptions are the attributes of a port the spec passes to Neutron as they are.
type PortOptions struct {
	AdminStateUp          *bool
	MACAddress            string
	AllowedAddressPairs   []ports.AddressPair
	HostID, VNICType      string
	Profile               map[string]any
	PropagateUplinkStatus *bool
	ValueSpecs            map[string]string
}

// PortIdentity is what identifies a machine's port. It derives from the spec alone, so that
// deletion finds the ports without resolving anything.
type PortIdentity struct {
	Name        string
	Description string
	// UpstreamDescription is the description upstream CAPO v0.14 gave the port when it made the
	// machine's server (UpstreamPortDescription); a detached port so named and described is the
	// machine's too, and is deleted with it.
	UpstreamDescription string
	// Trunk: the port is the parent of a trunk the controller makes with it and deletes before
	// it.
	Trunk bool
}

// UpstreamPortDescription is the description upstream CAPO v0.14 gives the ports of the
// machines of the Cluster named cluster (its name only, without the namespace).
func UpstreamPortDescription(cluster string) string {
	return "Created by cluster-api-provider-openstack cluster " + cluster
}

// DefaultPortDescription is the description of the ports the provider creates for a machine
// when the spec gives none; owner is "<namespace>/<name>".
func DefaultPortDescription(owner string) string {
	return "Created by the Cluster API OpenStack provider for OpenStackMachine " + owner
}

// ensurePort returns the machine's port, creating and tagging it when needed.
func (s *Service) ensurePort(ctx context.Context, spec *PortSpec) (*ports.Port, error) {
	found, err := s.network.ListPorts(ctx, ports.ListOpts{Name: spec.Name, NetworkID: spec.NetworkID})
	if err != nil {
		return nil, fmt.Errorf("listing ports named %s: %w", spec.Name, err)
	}
	// A port a failed attempt left for this server carries its name and description and is
	// attached to nothing: one attached elsewhere is not this machine's.
	port, err := ownership.Find("port", spec.Name, found, func(p *ports.Port) ownership.Candidate {
		if p.DeviceID != "" {
			return ownership.Candidate{ID: p.ID, Name: p.Name}
		}
		return notAConflict(s.portClaim(p, spec.PortIdentity))
	})
	if err != nil {
		return nil, err
	}
	if port == nil {
		// The port is made with the machine's mark as its description, whatever the spec's, so
		// that it is the machine's from its first moment: a crash before the tag below leaves a
		// port the next attempt finds by its mark. The user's description replaces the mark once
		// the tag carries it.
		opts := ports.CreateOpts{Name: spec.Name, Description: s.owner.Description(), NetworkID: spec.NetworkID}
		if len(spec.FixedIPs) > 0 {
			// Not even an empty list: Neutron refuses "fixed_ips": null.
			opts.FixedIPs = spec.FixedIPs
		}
		disabled := spec.DisablePortSecurity != nil && *spec.DisablePortSecurity
		if spec.SecurityGroupIDs != nil && !disabled {
			ids := slices.Clone(spec.SecurityGroupIDs)
			opts.SecurityGroups = &ids
		}
		o := spec.Options
		opts.AdminStateUp, opts.MACAddress, opts.AllowedAddressPairs, opts.PropagateUplinkStatus = o.AdminStateUp, o.MACAddress, o.AllowedAddressPairs, o.PropagateUplinkStatus
		if len(o.ValueSpecs) > 0 {
			opts.ValueSpecs = &o.ValueSpecs
		}
		var builder ports.CreateOptsBuilder = opts
		if o.HostID != "" || o.VNICType != "" || len(o.Profile) > 0 {
			builder = portsbinding.CreateOptsExt{CreateOptsBuilder: builder, HostID: o.HostID, VNICType: o.VNICType, Profile: o.Profile}
		}
		if spec.DisablePortSecurity != nil {
			builder = portsecurity.PortCreateOptsExt{CreateOptsBuilder: builder, PortSecurityEnabled: new(!disabled)}
		}
		port, err = s.network.CreatePort(ctx, builder)
		if err != nil {
			return nil, fmt.Errorf("creating port %s on network %s: %w", spec.Name, spec.NetworkID, err)
		}
		s.report.Changed("CreatedPort", report.Resource{Kind: "Port", Name: spec.Name, ID: port.ID}, "Created port %s (%s)", spec.Name, port.ID)
	}
	tags := spec.Tags
	if spec.Description != s.owner.Description() {
		// The description is the user's: the machine's mark goes into a tag.
		tags = networking.Union(tags, []string{s.owner.Tag()})
	}
	if _, err := networking.EnsureTags(ctx, s.network, "ports", port.ID, port.Tags, tags); err != nil {
		return nil, fmt.Errorf("port %s: %w", spec.Name, err)
	}
	if port.Description == s.owner.Description() && spec.Description != port.Description {
		description := spec.Description
		updated, err := s.network.UpdatePort(ctx, port.ID, ports.UpdateOpts{Description: &description})
		if err != nil {
			return nil, fmt.Errorf("giving port %s its description: %w", spec.Name, err)
		}
		port = updated
	}
	if spec.Trunk {
		if err := s.ensureTrunk(ctx, port); err != nil {
			return nil, err
		}
	}
	return port, nil
}

// ensureTrunk makes the trunk whose parent is the machine's port, named like it and marked with
// the machine's description, unless the port has one: a port is the parent of one trunk at most,
// so the trunk found on it is the one an earlier attempt made.
func (s *Service) ensureTrunk(ctx context.Context, port *ports.Port) error {
	found, err := s.network.ListTrunks(ctx, trunks.ListOpts{PortID: port.ID})
	if err != nil {
		return fmt.Errorf("listing the trunks of port %s: %w", port.Name, err)
	}
	if slices.ContainsFunc(found, func(t trunks.Trunk) bool { return t.PortID == port.ID }) {
		return nil
	}
	t, err := s.network.CreateTrunk(ctx, trunks.CreateOpts{PortID: port.ID, Name: port.Name, Description: s.owner.Description()})
	if clients.IsNotFound(err) {
		// Neutron answers 404 for a collection it does not serve.
		return report.Refuted(infrav1.InstanceConfigurationErrorReason, field.NewPath("spec", "trunk"),
			"port %s asks for a trunk, and Neutron has no trunk extension (or the port is gone): %v", port.Name, err)
	}
	if err != nil {
		return fmt.Errorf("creating the trunk of port %s: %w", port.Name, err)
	}
	s.report.Changed("CreatedTrunk", report.Resource{Kind: "Trunk", Name: port.Name, ID: t.ID}, "Created trunk %s (%s) with parent port %s", port.Name, t.ID, port.ID)
	return nil
}

// deleteTrunks deletes the trunks whose parent is the machine's port p, so that the port can go:
// those the machine made (its mark) and those upstream made with the port (upstream gives a trunk
// its port's description: upstream's default, or the spec's). Another trunk on the port is left,
// and Neutron then refuses the port's deletion, which the machine reports.
func (s *Service) deleteTrunks(ctx context.Context, p *ports.Port, id PortIdentity) error {
	found, err := s.network.ListTrunks(ctx, trunks.ListOpts{PortID: p.ID})
	if err != nil {
		return fmt.Errorf("listing the trunks of port %s: %w", p.Name, err)
	}
	for _, t := range found {
		mine := t.Description == s.owner.Description() || t.Description == id.Description ||
			(id.UpstreamDescription != "" && t.Description == id.UpstreamDescription)
		if t.PortID != p.ID || !mine {
			continue
		}
		if err := s.network.DeleteTrunk(ctx, t.ID); err != nil && !clients.IsNotFound(err) {
			return fmt.Errorf("deleting trunk %s (%s) of port %s: %w", t.Name, t.ID, p.Name, err)
		}
		s.report.Changed("DeletedTrunk", report.Resource{Kind: "Trunk", Name: t.Name, ID: t.ID}, "Deleted trunk %s (%s)", t.Name, t.ID)
	}
	return nil
}

// portClaim is what a port named after one of the machine's is to the machine: its mark is the
// machine's description (the default one) or the machine's tag (on a port whose description is
// the user's). Without a mark, a port attached to nothing that carries upstream's description,
// or the user's description without the tag (as upstream, or a release before marks, made it),
// is the machine's when it is younger than the machine, in its project, and the operator recorded
// the machine's takeover (ownership.Owner.Claim).
func (s *Service) portClaim(p *ports.Port, id PortIdentity) ownership.Candidate {
	described := p.Description == id.Description || (id.UpstreamDescription != "" && p.Description == id.UpstreamDescription)
	r := ownership.Resource{ID: p.ID, Name: p.Name, Tags: p.Tags, Description: p.Description, ProjectID: p.ProjectID, Created: p.CreatedAt,
		Legacy: described && p.DeviceID == ""}
	return s.owner.Claim(r)
}

// DeletePorts deletes the machine's ports; call it once the server is gone.
func (s *Service) DeletePorts(ctx context.Context, identities []PortIdentity) error {
	for _, id := range identities {
		found, err := s.network.ListPorts(ctx, ports.ListOpts{Name: id.Name})
		if err != nil {
			return fmt.Errorf("listing ports named %s: %w", id.Name, err)
		}
		for _, p := range found {
			// Once the server is gone its ports are attached to nothing: one attached to a
			// device is another's, whatever it carries.
			if p.DeviceID != "" || !ownership.Mine(s.portClaim(&p, id)) {
				continue
			}
			if id.Trunk {
				if err := s.deleteTrunks(ctx, &p, id); err != nil {
					return err
				}
			}
			if err := s.network.DeletePort(ctx, p.ID); err != nil && !clients.IsNotFound(err) {
				return fmt.Errorf("deleting port %s (%s): %w", p.Name, p.ID, err)
			}
			s.report.Changed("DeletedPort", report.Resource{Kind: "Port", Name: p.Name, ID: p.ID}, "Deleted port %s (%s)", p.Name, p.ID)
		}
	}
	return nil
}
