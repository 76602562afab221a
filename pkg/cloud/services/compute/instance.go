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
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// OwnerMetadataKey is the Nova metadata key that marks the server of an OpenStackMachine; its
// value is "<namespace>/<name>". Nova sets it with the server, in the same call, so a server is
// never without it.
const OwnerMetadataKey = "capo-openstackmachine"

// BastionMetadataKey is the Nova metadata key that marks the bastion of an OpenStackCluster; its
// value is "<namespace>/<name>" of the OpenStackCluster.
const BastionMetadataKey = "capo-bastion"

// BastionSpecMetadataKey is the Nova metadata key holding a digest of the bastion spec the server
// was created from, so that a changed spec is seen from the cloud alone.
const BastionSpecMetadataKey = "capo-bastion-spec"

// InstanceSpec is the server of one machine, with every reference resolved to an ID.
type InstanceSpec struct {
	Name             string
	FlavorID         string
	ImageID          string
	KeyName          string
	AvailabilityZone string
	ServerGroupID    string
	// SchedulerHints are further Nova scheduler hints, by name (SchedulerHints).
	SchedulerHints map[string]any
	UserData       []byte
	ConfigDrive    *bool
	Metadata       map[string]string
	Tags           []string
	Ports          []PortSpec
	// RootVolume is the volume the server boots from; nil to boot from the image on the
	// flavor's disk.
	RootVolume *VolumeSpec
	// BlockDevices are the server's additional devices, in the spec's order.
	BlockDevices []BlockDeviceSpec
}

// SchedulerHints are spec.schedulerHintAdditionalProperties as Nova takes them: each value as
// its type says, under its name.
func SchedulerHints(props []infrav1.SchedulerHintAdditionalProperty) map[string]any {
	if len(props) == 0 {
		return nil
	}
	out := make(map[string]any, len(props))
	for _, p := range props {
		v := p.Value
		switch {
		case v.Type == "Bool" && v.Bool != nil:
			out[p.Name] = *v.Bool
		case v.Type == "Number" && v.Number != nil:
			out[p.Name] = *v.Number
		case v.Type == "String" && v.String != nil:
			out[p.Name] = *v.String
		}
	}
	return out
}

// Legacy says how to recognise the server upstream CAPO v0.14 created for a machine: it names a
// server after its machine and marks it no other way. Such a server has an address on the
// cluster network Network and was created after the machine (NotBefore, the OpenStackMachine's
// creation less a clock skew allowance): a server older than the machine is another's.
type Legacy struct {
	Network   string
	NotBefore time.Time
}

// Find returns the machine's server: the one whose ID the status or the provider ID names, when
// it carries the machine's mark (or is upstream CAPO's server of the machine, as legacy
// recognises it: Legacy), or else the one named name that carries the mark, or else, when legacy
// is given, the one so named that upstream made. Two alike are an error, never a guess
// (ownership.Choose). A recorded ID is a hint, never proof: a server it names that is another's
// is a ResourceOwnedElsewhere error, and nothing is done to it. gone reports that the recorded
// server no longer exists. A server Nova is deleting is returned like any other; its status says
// DELETED or its task state says deleting.
func (s *Service) Find(ctx context.Context, knownID, name string, legacy *Legacy) (server *servers.Server, gone bool, err error) {
	claim := func(sv *servers.Server) ownership.Candidate {
		r := ownership.Resource{ID: sv.ID, Name: sv.Name, ProjectID: sv.TenantID, Created: sv.Created}
		machine, isMachine := sv.Metadata[OwnerMetadataKey]
		bastion, isBastion := sv.Metadata[BastionMetadataKey]
		// A machine's mark is the controller's, set after the spec's metadata: a server that
		// carries it is that machine's, whatever else it carries, and never a bastion.
		switch {
		case isMachine:
			r.MarkedFor = "OpenStackMachine " + machine
		case s.markKey == BastionMetadataKey && isBastion:
			r.MarkedFor = s.owner.Kind + " " + bastion
		case isBastion:
			r.MarkedFor = "the bastion of OpenStackCluster " + bastion
		default:
			r.Legacy = sv.Name == name && legacy.recognises(sv)
		}
		return s.owner.Claim(r)
	}
	if knownID != "" {
		server, err := s.compute.GetServer(ctx, knownID)
		switch {
		case clients.IsNotFound(err):
			return nil, true, nil
		case err != nil:
			return nil, false, fmt.Errorf("getting server %s: %w", knownID, err)
		}
		c := claim(server)
		if c.Claim == ownership.Unrecorded {
			return nil, false, ownership.NotRecorded("server", c)
		}
		if !ownership.Mine(c) {
			if c.Claim != ownership.Foreign {
				c.Claim, c.Owner = ownership.Foreign, "no machine of this provider (it carries no mark, and is not upstream's server of this machine)"
			}
			return nil, false, ownership.OwnedElsewhere("server", c)
		}
		return server, false, nil
	}
	// Nova's name filter is a regular expression.
	found, err := s.compute.ListServers(ctx, servers.ListOpts{Name: "^" + regexp.QuoteMeta(name) + "$"})
	if err != nil {
		return nil, false, fmt.Errorf("listing servers named %s: %w", name, err)
	}
	found = slices.DeleteFunc(found, func(sv servers.Server) bool { return sv.Name != name })
	// A server is named after its machine, and machines of two namespaces may share a name: one
	// that another machine's mark claims is simply not this one's.
	server, err = ownership.Find("server", name, found, func(sv *servers.Server) ownership.Candidate {
		return notAConflict(claim(sv))
	})
	return server, false, err
}

// notAConflict is a claim where another machine's mark means "not this machine's" rather than a
// conflict: servers and ports are named after their machine, which need not be unique.
func notAConflict(c ownership.Candidate) ownership.Candidate {
	if c.Claim == ownership.Foreign {
		c.Claim = ownership.Unclaimed
	}
	return c
}

func (l *Legacy) recognises(sv *servers.Server) bool {
	return l != nil && l.Network != "" && sv.Addresses[l.Network] != nil && !sv.Created.Before(l.NotBefore)
}

// Create makes the server's ports and volumes, adopting those an interrupted attempt left, and
// then the server. While Cinder builds a volume the answer is a VolumesPending error, and nothing
// more is done: the next call looks again.
func (s *Service) Create(ctx context.Context, spec *InstanceSpec) (*servers.Server, error) {
	if _, named := spec.SchedulerHints["group"]; named && spec.ServerGroupID != "" {
		return nil, report.Refuted(infrav1.InstanceConfigurationErrorReason, field.NewPath("spec", "schedulerHintAdditionalProperties"),
			"names the hint group, which spec.serverGroup sets already: Nova would take the hint's group instead; remove one of them")
	}
	var networks []servers.Network
	for i := range spec.Ports {
		p, err := s.ensurePort(ctx, &spec.Ports[i])
		if err != nil {
			return nil, err
		}
		networks = append(networks, servers.Network{Port: p.ID})
	}
	mapping, err := s.blockDeviceMapping(ctx, spec)
	if err != nil {
		return nil, err
	}
	metadata := maps.Clone(spec.Metadata)
	if metadata == nil {
		metadata = map[string]string{}
	}
	metadata[s.markKey] = s.owner.Namespace + "/" + s.owner.Name
	opts := servers.CreateOpts{
		Name:             spec.Name,
		ImageRef:         spec.ImageID,
		FlavorRef:        spec.FlavorID,
		AvailabilityZone: spec.AvailabilityZone,
		Networks:         networks,
		Metadata:         metadata,
		ConfigDrive:      spec.ConfigDrive,
		Tags:             spec.Tags,
		BlockDevice:      mapping,
	}
	if spec.RootVolume != nil {
		// The server boots from its volume: Nova takes no image then.
		opts.ImageRef = ""
	}
	if spec.UserData != nil {
		// Encoded here: gophercloud would pass through bootstrap data that happens to be valid
		// base64 as it is.
		opts.UserData = []byte(base64.StdEncoding.EncodeToString(spec.UserData))
	}
	var builder servers.CreateOptsBuilder = opts
	if spec.KeyName != "" {
		builder = keypairs.CreateOptsExt{CreateOptsBuilder: opts, KeyName: spec.KeyName}
	}
	var hints servers.SchedulerHintOptsBuilder
	if spec.ServerGroupID != "" || len(spec.SchedulerHints) > 0 {
		hints = servers.SchedulerHintOpts{Group: spec.ServerGroupID, AdditionalProperties: spec.SchedulerHints}
	}
	server, err := s.compute.CreateServer(ctx, builder, hints)
	if err != nil {
		return nil, fmt.Errorf("creating server %s: %w", spec.Name, err)
	}
	where := spec.AvailabilityZone
	if where == "" {
		where = "any availability zone"
	}
	s.report.Changed("CreatedServer", report.Resource{Kind: "Server", Name: spec.Name, ID: server.ID, Zone: spec.AvailabilityZone}, "Created server %s (%s) in %s", spec.Name, server.ID, where)
	return server, nil
}

// Delete asks Nova to delete the server; done reports that it is gone. Nova deletes
// asynchronously, so the caller looks again until done.
func (s *Service) Delete(ctx context.Context, server *servers.Server) (done bool, err error) {
	err = s.compute.DeleteServer(ctx, server.ID)
	switch {
	case clients.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("deleting server %s (%s): %w", server.Name, server.ID, err)
	}
	if server.Status != "DELETED" {
		s.report.Changed("DeletedServer", report.Resource{Kind: "Server", Name: server.Name, ID: server.ID, Zone: server.AvailabilityZone}, "Deleting server %s (%s)", server.Name, server.ID)
	}
	return false, nil
}

// NoValidHost says whether Nova put the server in ERROR because its scheduler found no host for
// it: with a server group, a hard policy its hosts cannot keep.
func NoValidHost(server *servers.Server) bool {
	return server.Status == "ERROR" && strings.Contains(server.Fault.Message, "No valid host")
}

// Addresses are a server's addresses as Cluster API wants them: its name, then its fixed
// addresses (InternalIP) and floating addresses (ExternalIP), network by network in name order.
func Addresses(server *servers.Server) []clusterv1.MachineAddress {
	out := []clusterv1.MachineAddress{{Type: clusterv1.MachineInternalDNS, Address: server.Name}}
	for _, network := range slices.Sorted(maps.Keys(server.Addresses)) {
		for _, a := range addressesOf(server, network) {
			kind := clusterv1.MachineInternalIP
			if a.kind == "floating" {
				kind = clusterv1.MachineExternalIP
			}
			out = append(out, clusterv1.MachineAddress{Type: kind, Address: a.addr})
		}
	}
	return out
}

// FixedAddress is the server's first fixed address on the network called network, preferring
// IPv4; "" when it has none there (yet).
func FixedAddress(server *servers.Server, network string) string {
	var fixed []netip.Addr
	for _, a := range addressesOf(server, network) {
		if ip, err := netip.ParseAddr(a.addr); err == nil && a.kind != "floating" {
			fixed = append(fixed, ip)
		}
	}
	if len(fixed) == 0 {
		return ""
	}
	slices.SortStableFunc(fixed, func(a, b netip.Addr) int { return cmp.Compare(a.BitLen(), b.BitLen()) })
	return fixed[0].String()
}

type address struct{ addr, kind string }

func addressesOf(server *servers.Server, network string) []address {
	list, _ := server.Addresses[network].([]any)
	var out []address
	for _, item := range list {
		m, _ := item.(map[string]any)
		addr, _ := m["addr"].(string)
		kind, _ := m["OS-EXT-IPS:type"].(string)
		if addr != "" {
			out = append(out, address{addr: addr, kind: kind})
		}
	}
	return out
}
