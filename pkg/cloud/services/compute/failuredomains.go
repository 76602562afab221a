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

// Package compute holds what the provider asks of Nova: failure domains now, servers later.
package compute

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

// FailureDomains turns Nova's available availability zones into Cluster API failure domains,
// sorted by name. A zone is suitable for control plane machines when controlPlaneZones lists it,
// or when controlPlaneZones is empty.
func FailureDomains(ctx context.Context, client clients.ComputeClient, controlPlaneZones []string) ([]clusterv1.FailureDomain, error) {
	azs, err := client.ListAvailabilityZones(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing Nova availability zones: %w", err)
	}
	var out []clusterv1.FailureDomain
	for _, z := range azs {
		if !z.ZoneState.Available {
			continue
		}
		controlPlane := zones.ControlPlaneAllowed(controlPlaneZones, z.ZoneName)
		out = append(out, clusterv1.FailureDomain{Name: z.ZoneName, ControlPlane: &controlPlane})
	}
	slices.SortFunc(out, func(a, b clusterv1.FailureDomain) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}
