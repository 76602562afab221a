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

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"

	"k8s.io/apimachinery/pkg/util/validation/field"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// ResolveMachineSubnets finds the subnets of spec.availabilityZoneMachineSubnets: each entry's
// network (or the cluster network, cluster), and its subnet on that network. Nothing is
// created: the subnets are the operator's. A reference that matches nothing, or a subnet of
// another network, is a report.SpecError naming the entry's field.
func (s *Service) ResolveMachineSubnets(ctx context.Context, spec *infrav1.OpenStackClusterSpec, cluster *infrav1.NetworkStatus) ([]infrav1.ZoneMachineSubnetStatus, error) {
	var out []infrav1.ZoneMachineSubnetStatus
	for i := range spec.AvailabilityZoneMachineSubnets {
		e := &spec.AvailabilityZoneMachineSubnets[i]
		path := field.NewPath("spec", "availabilityZoneMachineSubnets").Index(i)
		network := cluster
		if e.Network != nil {
			n, err := s.ResolveNetworkParam(ctx, e.Network, path.Child("network"))
			if err != nil {
				return nil, err
			}
			network = &infrav1.NetworkStatus{Name: n.Name, ID: n.ID, Tags: n.Tags}
		}
		if network == nil || network.ID == "" {
			return nil, report.Refuted(infrav1.NetworkNotFoundReason, path.Child("network"), "not set, and the cluster has no network")
		}
		sn, err := s.ResolveSubnet(ctx, &e.Subnet, network.ID, path.Child("subnet"))
		if err != nil {
			return nil, err
		}
		out = append(out, infrav1.ZoneMachineSubnetStatus{AvailabilityZone: e.AvailabilityZone, Network: *network, Subnet: SubnetStatus(sn)})
	}
	return out, nil
}

// SubnetsOn lists the subnets of network networkID, and says which are foreign: made by a third
// project, neither the credential's nor the one that owns the network (which may have shared the
// network with others, who may then make subnets on it, and tag them).
func (s *Service) SubnetsOn(ctx context.Context, networkID string) (found []subnets.Subnet, foreign map[string]bool, err error) {
	found, err = s.client.ListSubnets(ctx, subnets.ListOpts{NetworkID: networkID})
	if err != nil {
		return nil, nil, fmt.Errorf("listing the subnets of network %s: %w", networkID, err)
	}
	foreign = map[string]bool{}
	var (
		networkProject string
		networkRead    bool
	)
	for _, sn := range found {
		if s.owner.ProjectID == "" || sn.ProjectID == "" || sn.ProjectID == s.owner.ProjectID {
			continue
		}
		if !networkRead {
			n, err := s.client.GetNetwork(ctx, networkID)
			if err != nil {
				return nil, nil, fmt.Errorf("reading network %s: %w", networkID, err)
			}
			networkProject, networkRead = n.ProjectID, true
		}
		if sn.ProjectID != networkProject {
			foreign[sn.ID] = true
		}
	}
	return found, foreign, nil
}
