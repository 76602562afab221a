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
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/compute"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

// instanceSpec resolves everything the machine's spec names into the server to create.
func (m *machineReconcile) instanceSpec(ctx context.Context, svc *compute.Service, net *networking.Service) (*compute.InstanceSpec, error) {
	s := &m.osm.Spec
	flavorID, err := svc.ResolveFlavor(ctx, s.Flavor, s.FlavorID)
	if err != nil {
		return nil, err
	}
	image := s.Image
	if image.ImageRef != nil {
		// ORC's answer is checked with Glance like an ID the spec gives.
		id, err := m.orcImageID(ctx)
		if err != nil {
			return nil, err
		}
		image = infrav1.ImageParam{ID: &id}
	}
	imageID, err := svc.ResolveImage(ctx, &image)
	if _, refuted := report.AsSpecError(err); refuted && s.Image.ImageRef != nil {
		return nil, report.Refuted(infrav1.InstanceConfigurationErrorReason, imageRefPath,
			"%s: ORC Image reports Glance image %s, which does not exist for this machine's credentials", s.Image.ImageRef.Name, *image.ID)
	}
	if err != nil {
		return nil, err
	}
	groupID, err := svc.ResolveServerGroup(ctx, s.ServerGroup)
	if err != nil {
		return nil, err
	}
	if err := svc.CheckKeyPair(ctx, s.SSHKeyName); err != nil {
		return nil, err
	}
	portSpecs, err := machinePorts(ctx, net, m)
	if err != nil {
		return nil, err
	}
	userData, err := m.bootstrapData(ctx)
	if err != nil {
		return nil, err
	}
	rootVolume, blockDevices, err := svc.ResolveVolumes(ctx, m.osm.Name, imageID, m.machine.Spec.FailureDomain, s.RootVolume, s.AdditionalBlockDevices)
	if err != nil {
		return nil, err
	}
	metadata := map[string]string{}
	for _, kv := range s.ServerMetadata {
		metadata[kv.Key] = kv.Value
	}
	return &compute.InstanceSpec{
		Name:             m.osm.Name,
		FlavorID:         flavorID,
		ImageID:          imageID,
		KeyName:          s.SSHKeyName,
		AvailabilityZone: zones.RequestedZone(ptr.Deref(m.osc.Spec.ControlPlaneOmitAvailabilityZone, false), m.controlPlane, m.machine.Spec.FailureDomain),
		ServerGroupID:    groupID,
		UserData:         userData,
		ConfigDrive:      s.ConfigDrive,
		Metadata:         metadata,
		Tags:             slices.Clone(s.Tags),
		Ports:            portSpecs,
		RootVolume:       rootVolume,
		BlockDevices:     blockDevices,
	}, nil
}

// machinePorts resolves the machine's ports: the spec's, or one on the cluster network. Every
// port gets the cluster's managed security group for the machine's role, then the port's own
// security groups or else the machine's; none when port security is off.
func machinePorts(ctx context.Context, net *networking.Service, m *machineReconcile) ([]compute.PortSpec, error) {
	s, status := &m.osm.Spec, &m.osc.Status
	var managed []string
	if g := status.WorkerSecurityGroup; !m.controlPlane && g != nil {
		managed = append(managed, g.ID)
	}
	if g := status.ControlPlaneSecurityGroup; m.controlPlane && g != nil {
		managed = append(managed, g.ID)
	}
	machineGroups, err := resolveGroups(ctx, net, s.SecurityGroups, field.NewPath("spec", "securityGroups"))
	if err != nil {
		return nil, err
	}
	opts := s.Ports
	if len(opts) == 0 {
		opts = []infrav1.PortOpts{{}}
	}
	ids := portIdentities(m.osm)
	out := make([]compute.PortSpec, len(opts))
	for i, o := range opts {
		path := field.NewPath("spec", "ports").Index(i)
		p := compute.PortSpec{PortIdentity: ids[i], DisablePortSecurity: o.DisablePortSecurity}
		if p.DisablePortSecurity == nil {
			p.DisablePortSecurity = m.osc.Spec.DisablePortSecurity
		}
		switch zone := m.osc.Status.MachineSubnetOf(m.machine.Spec.FailureDomain); {
		case o.Network == nil && len(o.FixedIPs) == 0 && machineSubnetMapped(&m.osc.Spec, m.machine.Spec.FailureDomain):
			// The zone's own subnet (spec.availabilityZoneMachineSubnets).
			if zone == nil {
				return nil, fmt.Errorf("the machine subnet of availability zone %s is not resolved yet", m.machine.Spec.FailureDomain)
			}
			p.NetworkID = zone.Network.ID
			p.FixedIPs = []ports.IP{{SubnetID: zone.Subnet.ID}}
		case o.Network != nil:
			n, err := net.ResolveNetworkParam(ctx, o.Network, path.Child("network"))
			if err != nil {
				return nil, err
			}
			p.NetworkID = n.ID
		case status.Network != nil:
			p.NetworkID = status.Network.ID
		default:
			return nil, report.Refuted(infrav1.InstanceConfigurationErrorReason, path.Child("network"), "not set, and the cluster has no network")
		}
		for j, f := range o.FixedIPs {
			ip := ports.IP{IPAddress: ptr.Deref(f.IPAddress, "")}
			if f.Subnet != nil {
				sn, err := net.ResolveSubnet(ctx, f.Subnet, p.NetworkID, path.Child("fixedIPs").Index(j).Child("subnet"))
				if err != nil {
					return nil, err
				}
				ip.SubnetID = sn.ID
			}
			p.FixedIPs = append(p.FixedIPs, ip)
		}
		if !ptr.Deref(p.DisablePortSecurity, false) {
			groups := machineGroups
			if o.SecurityGroups != nil {
				if groups, err = resolveGroups(ctx, net, o.SecurityGroups, path.Child("securityGroups")); err != nil {
					return nil, err
				}
			}
			p.SecurityGroupIDs = networking.Union(managed, groups)
		}
		p.Tags = networking.Union(s.Tags, o.Tags)
		p.Options = portOptions(&o)
		out[i] = p
	}
	return out, nil
}

// portOptions are the attributes of a port's spec passed to Neutron as they are.
func portOptions(o *infrav1.PortOpts) compute.PortOptions {
	out := compute.PortOptions{AdminStateUp: o.AdminStateUp, MACAddress: ptr.Deref(o.MACAddress, ""), HostID: ptr.Deref(o.HostID, ""),
		VNICType: ptr.Deref(o.VNICType, ""), PropagateUplinkStatus: o.PropagateUplinkStatus}
	for _, pair := range o.AllowedAddressPairs {
		out.AllowedAddressPairs = append(out.AllowedAddressPairs, ports.AddressPair{IPAddress: pair.IPAddress, MACAddress: ptr.Deref(pair.MACAddress, "")})
	}
	// A profile key is sent only to turn its feature on: false is what no key means.
	if p := o.Profile; p != nil && (ptr.Deref(p.OVSHWOffload, false) || ptr.Deref(p.TrustedVF, false)) {
		out.Profile = map[string]any{}
		if ptr.Deref(p.OVSHWOffload, false) {
			out.Profile["capabilities"] = []string{"switchdev"} // a switchdev-capable virtual function
		}
		if ptr.Deref(p.TrustedVF, false) {
			out.Profile["trusted"] = true
		}
	}
	for _, v := range o.ValueSpecs {
		if out.ValueSpecs == nil {
			out.ValueSpecs = map[string]string{}
		}
		out.ValueSpecs[v.Key] = v.Value
	}
	return out
}

func resolveGroups(ctx context.Context, net *networking.Service, params []infrav1.SecurityGroupParam, path *field.Path) ([]string, error) {
	var ids []string
	for i := range params {
		id, err := net.ResolveSecurityGroup(ctx, &params[i], path.Index(i))
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func (m *machineReconcile) bootstrapData(ctx context.Context) ([]byte, error) {
	reader := readerOr(m.r.APIReader, m.r.Client)
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: m.machine.Namespace, Name: *m.machine.Spec.Bootstrap.DataSecretName}
	if err := reader.Get(ctx, key, secret); err != nil {
		return nil, fmt.Errorf("reading bootstrap data secret %s: %w", key.Name, err)
	}
	data, ok := secret.Data["value"]
	if !ok {
		return nil, fmt.Errorf("bootstrap data secret %s has no value key", key.Name)
	}
	return data, nil
}

// portIdentities are the names and descriptions of the machine's ports, from the spec alone:
// "<machine>-<nameSuffix or index>", and the spec's description or the provider's; and whether
// each is a trunk's parent (the port's trunk, else the machine's).
func portIdentities(osm *infrav1.OpenStackMachine) []compute.PortIdentity {
	owner := osm.Namespace + "/" + osm.Name
	upstream := ""
	if cluster := osm.Labels[clusterv1.ClusterNameLabel]; cluster != "" {
		upstream = compute.UpstreamPortDescription(cluster)
	}
	if len(osm.Spec.Ports) == 0 {
		return []compute.PortIdentity{{Name: osm.Name + "-0", Description: compute.DefaultPortDescription(owner), UpstreamDescription: upstream,
			Trunk: osm.Spec.Trunk}}
	}
	out := make([]compute.PortIdentity, len(osm.Spec.Ports))
	for i, p := range osm.Spec.Ports {
		suffix := strconv.Itoa(i)
		if p.NameSuffix != nil {
			suffix = *p.NameSuffix
		}
		desc := ptr.Deref(p.Description, compute.DefaultPortDescription(owner))
		up := upstream
		if p.Description != nil {
			up = "" // upstream used the spec's description too
		}
		out[i] = compute.PortIdentity{Name: osm.Name + "-" + suffix, Description: desc, UpstreamDescription: up, Trunk: ptr.Deref(p.Trunk, osm.Spec.Trunk)}
	}
	return out
}

// knownServerID is the ID of the machine's server when something recorded it: the status, or
// else the provider ID, which a machine moved with clusterctl move (status does not travel), or
// taken over from upstream CAPO (openstack://<region>/<id>), still has.
func knownServerID(osm *infrav1.OpenStackMachine) string {
	if id := ptr.Deref(osm.Status.InstanceID, ""); id != "" {
		return id
	}
	rest, ok := strings.CutPrefix(ptr.Deref(osm.Spec.ProviderID, ""), "openstack://")
	if !ok {
		return ""
	}
	id := rest[strings.LastIndex(rest, "/")+1:]
	if !serverIDPattern.MatchString(id) {
		return ""
	}
	return id
}

// serverIDPattern is a Nova server ID: a UUID.
var serverIDPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// upstreamServer says how to recognise the server upstream CAPO v0.14 created for the machine
// (nil when the cluster has no network yet): on the cluster network, and not older than the
// OpenStackMachine, allowing five minutes of clock skew between Kubernetes and Nova.
func upstreamServer(m *machineReconcile) *compute.Legacy {
	if m.osc == nil || m.osc.Status.Network == nil || m.osc.Status.Network.Name == "" {
		return nil
	}
	return &compute.Legacy{Network: m.osc.Status.Network.Name, NotBefore: m.osm.CreationTimestamp.Add(-5 * time.Minute)}
}

// machineSubnetMapped says whether spec.availabilityZoneMachineSubnets gives availability zone az
// a subnet of its own.
func machineSubnetMapped(spec *infrav1.OpenStackClusterSpec, az string) bool {
	return az != "" && slices.ContainsFunc(spec.AvailabilityZoneMachineSubnets, func(z infrav1.ZoneMachineSubnet) bool { return z.AvailabilityZone == az })
}
