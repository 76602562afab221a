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
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// Service creates, finds and deletes the server, ports and volumes of one machine.
type Service struct {
	compute clients.ComputeClient
	image   clients.ImageClient
	volume  clients.VolumeClient
	network clients.NetworkClient
	report  *report.Recorder
	// owner is the OpenStackMachine the server and ports are for: they carry its mark (the
	// server in its Nova metadata, the ports in their description or a tag).
	owner ownership.Owner
	// markKey is the Nova metadata key of the server's mark: OwnerMetadataKey, or
	// BastionMetadataKey for the bastion of the OpenStackCluster owner.
	markKey string
}

// NewService returns a compute service for owner's server and ports, which reports what it
// changes to rep.
func NewService(compute clients.ComputeClient, image clients.ImageClient, volume clients.VolumeClient, network clients.NetworkClient, rep *report.Recorder, owner ownership.Owner) *Service {
	return &Service{compute: compute, image: image, volume: volume, network: network, report: rep, owner: owner, markKey: OwnerMetadataKey}
}

// NewBastionService returns a compute service for the bastion of the OpenStackCluster owner: its
// server carries the mark BastionMetadataKey, so that no machine's server is taken for it.
func NewBastionService(compute clients.ComputeClient, image clients.ImageClient, volume clients.VolumeClient, network clients.NetworkClient, rep *report.Recorder, owner ownership.Owner) *Service {
	s := NewService(compute, image, volume, network, rep, owner)
	s.markKey = BastionMetadataKey
	return s
}
