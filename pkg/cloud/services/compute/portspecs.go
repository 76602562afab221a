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
	"strconv"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// A machine's ports as its spec asks for them, resolved in Neutron into PortSpecs: which network
// and subnet, which security groups, which tags and attributes, under which name.

// PortResolver finds what a port's spec names in Neutron; the networking service is one.
type PortResolver interface {
	ResolveNetworkParam(ctx context.Context, param *infrav1.NetworkParam, path *field.Path) (*networks.Network, error)
	ResolveSubnet(ctx context.Context, param *infrav1.SubnetParam, networkID string, path *field.Path) (*subnets.Subnet, error)
	ResolveSecurityGroup(ctx context.Context, param *infrav1.SecurityGroupParam, path *field.Path) (string, error)
}

// PortsRequest is what a machine's ports are resolved from.
type PortsRequest struct {
	// Machine is the OpenStackMachine: its ports (none means one on the cluster network, or on
	// its zone's machine subnet), security groups and tags, and the names its ports get.
	Machine *infrav1.OpenStackMachine
	// ManagedGroupID is the cluster's managed security group for the machine's role; "" for none.
	ManagedGroupID string
	// DisablePortSecurity is the cluster's spec.disablePortSecurity, for ports that do not say.
	DisablePortSecurity *bool
	// ClusterNetworkID is the cluster network; "" when the cluster has none.
	ClusterNetworkID string
	// ClusterSubnetID is the subnet of the cluster network a port there gets its address from
	// when its spec gives no fixed IP (spec.primarySubnet); "" lets Neutron choose.
	ClusterSubnetID string
	// Zone is the machine's failure domain; ZoneMapped says whether
	// spec.availabilityZoneMachineSubnets gives it a subnet of its own, and ZoneSubnet is that
	// subnet as resolved (nil until it is).
	Zone       string
	ZoneMapped bool
	ZoneSubnet *infrav1.ZoneMachineSubnetStatus
}

// ResolvePorts resolves the machine's ports: the spec's, or one on the cluster network (or its
// zone's machine subnet). Every port gets the cluster's managed security group for the machine's
// role, then the port's own security groups or else the machine's; none when port security is
// off.
func ResolvePorts(ctx context.Context, res PortResolver, r *PortsRequest) ([]PortSpec, error) {
	s := &r.Machine.Spec
	var managed []string
	if r.ManagedGroupID != "" {
		managed = []string{r.ManagedGroupID}
	}
	machineGroups, err := resolveGroups(ctx, res, s.SecurityGroups, field.NewPath("spec", "securityGroups"))
	if err != nil {
		return nil, err
	}
	opts := s.Ports
	if len(opts) == 0 {
		opts = []infrav1.PortOpts{{}}
	}
	ids := PortIdentities(r.Machine)
	out := make([]PortSpec, len(opts))
	for i, o := range opts {
		path := field.NewPath("spec", "ports").Index(i)
		p := PortSpec{PortIdentity: ids[i], DisablePortSecurity: o.DisablePortSecurity}
		if p.DisablePortSecurity == nil {
			p.DisablePortSecurity = r.DisablePortSecurity
		}
		switch {
		case o.Network == nil && len(o.FixedIPs) == 0 && r.ZoneMapped:
			// The zone's own subnet (spec.availabilityZoneMachineSubnets).
			if r.ZoneSubnet == nil {
				return nil, fmt.Errorf("the machine subnet of availability zone %s is not resolved yet", r.Zone)
			}
			p.NetworkID = r.ZoneSubnet.Network.ID
			p.FixedIPs = []ports.IP{{SubnetID: r.ZoneSubnet.Subnet.ID}}
		case o.Network != nil:
			n, err := res.ResolveNetworkParam(ctx, o.Network, path.Child("network"))
			if err != nil {
				return nil, err
			}
			p.NetworkID = n.ID
		case r.ClusterNetworkID != "":
			p.NetworkID = r.ClusterNetworkID
			if len(o.FixedIPs) == 0 && r.ClusterSubnetID != "" {
				p.FixedIPs = []ports.IP{{SubnetID: r.ClusterSubnetID}}
			}
		default:
			return nil, report.Refuted(infrav1.InstanceConfigurationErrorReason, path.Child("network"), "not set, and the cluster has no network")
		}
		for j, f := range o.FixedIPs {
			ip := ports.IP{IPAddress: ptr.Deref(f.IPAddress, "")}
			if f.Subnet != nil {
				sn, err := res.ResolveSubnet(ctx, f.Subnet, p.NetworkID, path.Child("fixedIPs").Index(j).Child("subnet"))
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
				if groups, err = resolveGroups(ctx, res, o.SecurityGroups, path.Child("securityGroups")); err != nil {
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
func portOptions(o *infrav1.PortOpts) PortOptions {
	out := PortOptions{AdminStateUp: o.AdminStateUp, MACAddress: ptr.Deref(o.MACAddress, ""), HostID: ptr.Deref(o.HostID, ""),
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

func resolveGroups(ctx context.Context, res PortResolver, params []infrav1.SecurityGroupParam, path *field.Path) ([]string, error) {
	var ids []string
	for i := range params {
		id, err := res.ResolveSecurityGroup(ctx, &params[i], path.Index(i))
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// PortIdentities are the names and descriptions of the machine's ports, from the spec alone:
// "<machine>-<nameSuffix or index>", and the spec's description or the provider's; and whether
// each is a trunk's parent (the port's trunk, else the machine's).
func PortIdentities(osm *infrav1.OpenStackMachine) []PortIdentity {
	owner := osm.Namespace + "/" + osm.Name
	upstream := ""
	if cluster := osm.Labels[clusterv1.ClusterNameLabel]; cluster != "" {
		upstream = UpstreamPortDescription(cluster)
	}
	if len(osm.Spec.Ports) == 0 {
		return []PortIdentity{{Name: osm.Name + "-0", Description: DefaultPortDescription(owner), UpstreamDescription: upstream,
			Trunk: osm.Spec.Trunk}}
	}
	out := make([]PortIdentity, len(osm.Spec.Ports))
	for i, p := range osm.Spec.Ports {
		suffix := strconv.Itoa(i)
		if p.NameSuffix != nil {
			suffix = *p.NameSuffix
		}
		desc := ptr.Deref(p.Description, DefaultPortDescription(owner))
		up := upstream
		if p.Description != nil {
			up = "" // upstream used the spec's description too
		}
		out[i] = PortIdentity{Name: osm.Name + "-" + suffix, Description: desc, UpstreamDescription: up, Trunk: ptr.Deref(p.Trunk, osm.Spec.Trunk)}
	}
	return out
}
