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
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
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
	portSpecs, err := compute.ResolvePorts(ctx, net, m.portsRequest())
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
		SchedulerHints:   compute.SchedulerHints(s.SchedulerHintAdditionalProperties),
		UserData:         userData,
		ConfigDrive:      s.ConfigDrive,
		Metadata:         metadata,
		Tags:             slices.Clone(s.Tags),
		Ports:            portSpecs,
		RootVolume:       rootVolume,
		BlockDevices:     blockDevices,
	}, nil
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

// portsRequest is what the machine's ports are resolved from: its spec, the cluster's managed
// security group for its role, the cluster network, and its zone's machine subnet.
func (m *machineReconcile) portsRequest() *compute.PortsRequest {
	status := &m.osc.Status
	r := &compute.PortsRequest{Machine: m.osm, DisablePortSecurity: m.osc.Spec.DisablePortSecurity,
		ZoneMapped: machineSubnetMapped(&m.osc.Spec, m.machine.Spec.FailureDomain), Zone: m.machine.Spec.FailureDomain,
		ZoneSubnet: status.MachineSubnetOf(m.machine.Spec.FailureDomain)}
	if g := status.WorkerSecurityGroup; !m.controlPlane && g != nil {
		r.ManagedGroupID = g.ID
	}
	if g := status.ControlPlaneSecurityGroup; m.controlPlane && g != nil {
		r.ManagedGroupID = g.ID
	}
	r.ClusterNetworkID, r.ClusterSubnetID = clusterPortNetwork(m.osc)
	return r
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

// clusterPortNetwork is where a port on the cluster network goes: the network, and the primary
// subnet when spec.primarySubnet names one (the network phase puts it first in the status).
func clusterPortNetwork(osc *infrav1.OpenStackCluster) (network, subnet string) {
	n := osc.Status.Network
	if n == nil {
		return "", ""
	}
	if osc.Spec.PrimarySubnet != nil && len(n.Subnets) > 0 {
		subnet = n.Subnets[0].ID
	}
	return n.ID, subnet
}
