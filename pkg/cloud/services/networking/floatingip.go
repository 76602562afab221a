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

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// APIServerFloatingIPDescription marks the floating IP the controller allocates for a cluster's
// API server, so that it is found again after a lost status and deleted with the cluster.
func APIServerFloatingIPDescription(namespace, cluster string) string {
	return fmt.Sprintf("Cluster API OpenStack provider: API server of %s/%s", namespace, cluster)
}

// ReconcileAPIServerFloatingIP returns the floating IP address of the API server: the user's
// address when given (allocated if it does not exist yet, never deleted), or one the controller
// allocates on the external network and finds again by its description.
func (s *Service) ReconcileAPIServerFloatingIP(ctx context.Context, description, externalNetworkID string, userAddress *string) (string, error) {
	opts := floatingips.ListOpts{FloatingNetworkID: externalNetworkID, Description: description}
	create := floatingips.CreateOpts{FloatingNetworkID: externalNetworkID, Description: description}
	if userAddress != nil {
		opts = floatingips.ListOpts{FloatingIP: *userAddress}
		create = floatingips.CreateOpts{FloatingNetworkID: externalNetworkID, FloatingIP: *userAddress}
	}
	found, err := s.client.ListFloatingIPs(ctx, opts)
	if err != nil {
		return "", fmt.Errorf("listing floating IPs: %w", err)
	}
	if len(found) > 0 {
		return found[0].FloatingIP, nil
	}
	fip, err := s.client.CreateFloatingIP(ctx, create)
	if err != nil {
		return "", fmt.Errorf("allocating the API server floating IP on network %s: %w", externalNetworkID, err)
	}
	s.report.Changed("CreatedFloatingIP", report.Resource{Kind: "FloatingIP", Name: fip.FloatingIP, ID: fip.ID}, "Allocated floating IP %s for the API server", fip.FloatingIP)
	return fip.FloatingIP, nil
}

// DeleteAPIServerFloatingIP releases the floating IP the controller allocated for the API server.
// The user's apiServerFloatingIP is never found this way: it does not carry the description.
func (s *Service) DeleteAPIServerFloatingIP(ctx context.Context, description string) error {
	found, err := s.client.ListFloatingIPs(ctx, floatingips.ListOpts{Description: description})
	if err != nil {
		return fmt.Errorf("listing floating IPs: %w", err)
	}
	for _, fip := range found {
		if err := s.client.DeleteFloatingIP(ctx, fip.ID); err != nil && !clients.IsNotFound(err) {
			return fmt.Errorf("releasing floating IP %s: %w", fip.FloatingIP, err)
		}
		s.report.Changed("DeletedFloatingIP", report.Resource{Kind: "FloatingIP", Name: fip.FloatingIP, ID: fip.ID}, "Released floating IP %s of the API server", fip.FloatingIP)
	}
	return nil
}
