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

// Package localenv is what the local environments (the demo, the management plane of processes)
// share with the tests against a real OpenStack: clients made from a clouds.yaml, the network an
// operator prepares for per-zone load balancers, kubeconfigs for an envtest API server, and a
// multi-document YAML reader.
package localenv

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-logr/logr"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"github.com/gophercloud/utils/v2/openstack/clientconfig"
	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	managerscheme "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scheme"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
)

// Clients authenticates to cloud cloudName of cloudsYAML the way the manager does.
func Clients(ctx context.Context, cloudsYAML []byte, cloudName string) (*scope.Clients, error) {
	scheme, err := managerscheme.New()
	if err != nil {
		return nil, err
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cloud", Namespace: "default"}, Data: map[string][]byte{scope.CloudsSecretKey: cloudsYAML}}
	// One call, not a reconcile that looks again: it waits for the authentication to end.
	factory := &scope.SecretFactory{Reader: fakeclient.NewClientBuilder().WithScheme(scheme).WithObjects(secret).Build(), Log: logr.Discard(),
		AuthGrace: scope.AuthDeadline(0)}
	return factory.NewClients(ctx, "default", &infrav1.OpenStackIdentityReference{Name: "cloud", CloudName: cloudName})
}

// ServiceClient is a bare gophercloud client of service ("compute", "load-balancer", ...) of
// cloud cloudName, for what tests do to a cloud that the provider never does (stop a server).
func ServiceClient(ctx context.Context, cloudsYAML []byte, cloudName, service string) (*gophercloud.ServiceClient, error) {
	var parsed clientconfig.Clouds
	if err := yaml.Unmarshal(cloudsYAML, &parsed); err != nil {
		return nil, fmt.Errorf("clouds.yaml: %w", err)
	}
	return clientconfig.NewServiceClient(ctx, service, &clientconfig.ClientOpts{Cloud: cloudName, YAMLOpts: cloudsOnly(parsed.Clouds)})
}

// cloudsOnly is a clouds.yaml held in memory, without secure.yaml or clouds-public.yaml.
type cloudsOnly map[string]clientconfig.Cloud

func (c cloudsOnly) LoadCloudsYAML() (map[string]clientconfig.Cloud, error)     { return c, nil }
func (cloudsOnly) LoadSecureCloudsYAML() (map[string]clientconfig.Cloud, error) { return nil, nil }
func (cloudsOnly) LoadPublicCloudsYAML() (map[string]clientconfig.Cloud, error) { return nil, nil }

// externalNetworks lists the networks with router:external set.
type externalNetworks struct{}

func (externalNetworks) ToNetworkListQuery() (string, error) { return "?router:external=true", nil }

// LBNetwork is what an operator prepares for per-zone load balancers: a network with one subnet
// per availability zone, each routed to the external network so that floating IPs can reach the
// VIPs on it.
type LBNetwork struct {
	NetworkID string
	RouterID  string
	// Mapping binds each zone to its subnet, in the order the zones were given.
	Mapping []infrav1.AZSubnetMapping
	// SubnetCIDRs maps each zone to its subnet's CIDR.
	SubnetCIDRs map[string]string
}

// LBNetworkNames are the names EnsureLBNetwork gives: the network and router are called
// name+"-lb", each zone's subnet name+"-lb-"+zone.
func LBNetworkNames(name, zone string) (network, subnet string) {
	return name + "-lb", name + "-lb-" + zone
}

// EnsureLBNetwork finds or creates the load balancer network called after name, with the zones'
// subnets 10.<octet>.<i>.0/24, a router with its gateway on the external network and an
// interface on every subnet. It is idempotent; what it returns on an error is what exists, for
// Delete.
func EnsureLBNetwork(ctx context.Context, cl *scope.Clients, name string, octet int, zones []string) (*LBNetwork, error) {
	return lbNetwork(ctx, cl, name, octet, zones, true)
}

// FindLBNetwork finds what EnsureLBNetwork created, creating nothing; what it finds is in the
// result even when some of it is missing.
func FindLBNetwork(ctx context.Context, cl *scope.Clients, name string, zones []string) (*LBNetwork, error) {
	return lbNetwork(ctx, cl, name, 0, zones, false)
}

func lbNetwork(ctx context.Context, cl *scope.Clients, name string, octet int, zones []string, create bool) (*LBNetwork, error) {
	out := &LBNetwork{SubnetCIDRs: map[string]string{}}
	netName, _ := LBNetworkNames(name, "")
	nets, err := cl.Network.ListNetworks(ctx, networks.ListOpts{Name: netName})
	if err != nil {
		return out, err
	}
	switch {
	case len(nets) > 0:
		out.NetworkID = nets[0].ID
	case !create:
		return out, nil
	default:
		n, err := cl.Network.CreateNetwork(ctx, networks.CreateOpts{Name: netName})
		if err != nil {
			return out, fmt.Errorf("creating network %s: %w", netName, err)
		}
		out.NetworkID = n.ID
	}
	rs, err := cl.Network.ListRouters(ctx, routers.ListOpts{Name: netName})
	if err != nil {
		return out, err
	}
	switch {
	case len(rs) > 0:
		out.RouterID = rs[0].ID
	case !create:
	default:
		ext, err := cl.Network.ListNetworks(ctx, externalNetworks{})
		if err != nil {
			return out, err
		}
		if len(ext) == 0 {
			return out, errors.New("the cloud has no external network")
		}
		r, err := cl.Network.CreateRouter(ctx, routers.CreateOpts{Name: netName, GatewayInfo: &routers.GatewayInfo{NetworkID: ext[0].ID}})
		if err != nil {
			return out, fmt.Errorf("creating router %s: %w", netName, err)
		}
		out.RouterID = r.ID
	}
	routed, err := cl.Network.ListPorts(ctx, ports.ListOpts{DeviceID: out.RouterID, NetworkID: out.NetworkID})
	if err != nil {
		return out, err
	}
	for i, zone := range zones {
		_, snName := LBNetworkNames(name, zone)
		cidr := fmt.Sprintf("10.%d.%d.0/24", octet, i)
		sns, err := cl.Network.ListSubnets(ctx, subnets.ListOpts{Name: snName, NetworkID: out.NetworkID})
		if err != nil {
			return out, err
		}
		var sn *subnets.Subnet
		if len(sns) > 0 {
			sn = &sns[0]
		} else if !create {
			continue
		} else if sn, err = cl.Network.CreateSubnet(ctx, subnets.CreateOpts{NetworkID: out.NetworkID, Name: snName, IPVersion: 4, CIDR: cidr}); err != nil {
			return out, fmt.Errorf("creating subnet %s: %w", snName, err)
		}
		out.Mapping = append(out.Mapping, infrav1.AZSubnetMapping{AvailabilityZone: zone, Subnet: infrav1.SubnetParam{ID: ptr.To(sn.ID)}})
		out.SubnetCIDRs[zone] = sn.CIDR
		onSubnet := slices.ContainsFunc(routed, func(p ports.Port) bool {
			return slices.ContainsFunc(p.FixedIPs, func(ip ports.IP) bool { return ip.SubnetID == sn.ID })
		})
		if !onSubnet && create {
			if _, err := cl.Network.AddRouterInterface(ctx, out.RouterID, routers.AddInterfaceOpts{SubnetID: sn.ID}); err != nil {
				return out, fmt.Errorf("routing subnet %s: %w", snName, err)
			}
		}
	}
	return out, nil
}

// Delete removes the router's interfaces, the router and the network (with its subnets).
func (n *LBNetwork) Delete(ctx context.Context, cl *scope.Clients) error {
	var errs []error
	if n.RouterID != "" {
		for _, m := range n.Mapping {
			if _, err := cl.Network.RemoveRouterInterface(ctx, n.RouterID, routers.RemoveInterfaceOpts{SubnetID: ptr.Deref(m.Subnet.ID, "")}); err != nil {
				errs = append(errs, err)
			}
		}
		if err := cl.Network.DeleteRouter(ctx, n.RouterID); err != nil {
			errs = append(errs, err)
		}
	}
	if n.NetworkID != "" {
		if err := cl.Network.DeleteNetwork(ctx, n.NetworkID); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
