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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/compute"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/outcome"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
)

// The bastion: a server on the cluster network, in the bastion's managed security group, with a
// floating IP, made from spec.bastion as a machine is made from its spec (the compute service),
// marked as the OpenStackCluster's (compute.BastionMetadataKey).

// bastionFound is where the bastion stands after a reconcile.
type bastionFound struct {
	outcome.Outcome
	// status is the bastion's server; nil when there is none.
	status *infrav1.BastionStatus
	// waiting says what the bastion waits for ("" when it does not).
	waiting string
	// removed: spec.bastion asks for no bastion, and none is left.
	removed bool
}

// bastionDeleting is the state status.bastion records while the server of a bastion that is
// removed or replaced is being deleted.
const bastionDeleting = "DELETING"

// bastionName is the name of the bastion's server (upstream CAPO's name for it).
func bastionName(cluster string) string { return cluster + "-bastion" }

// bastionMachine is the bastion as the compute service makes a machine: an OpenStackMachine that
// exists only here, named like the bastion's server, with the bastion's spec.
func bastionMachine(osc *infrav1.OpenStackCluster, cluster string) *infrav1.OpenStackMachine {
	m := &infrav1.OpenStackMachine{ObjectMeta: metav1.ObjectMeta{Namespace: osc.Namespace, Name: bastionName(cluster),
		Labels: map[string]string{clusterv1.ClusterNameLabel: cluster}}}
	if b := osc.Spec.Bastion; b != nil && b.Spec != nil {
		m.Spec = *b.Spec.DeepCopy()
	}
	return m
}

// bastionPorts are the identities of the bastion's ports: named like a machine's, and described
// as the OpenStackCluster's unless the spec gives a description.
func bastionPorts(m *infrav1.OpenStackMachine, owner string) []compute.PortIdentity {
	ids := compute.PortIdentities(m)
	for i := range ids {
		if ids[i].Description == compute.DefaultPortDescription(m.Namespace+"/"+m.Name) {
			ids[i].Description = owner
		}
	}
	return ids
}

// bastionDigest is a digest of what the bastion is made from (its spec, zone and floating IP): a
// change replaces it.
func bastionDigest(b *infrav1.Bastion) string {
	data, err := json.Marshal(struct {
		Spec       *infrav1.OpenStackMachineSpec `json:"spec"`
		Zone       *string                       `json:"zone"`
		FloatingIP *string                       `json:"floatingIP,omitempty"`
	}{b.Spec, b.AvailabilityZone, b.FloatingIP})
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:12])
}

func (c *clusterReconcile) bastionService() *compute.Service {
	cl := c.clients
	return compute.NewBastionService(cl.Compute, cl.Image, cl.Volume, cl.Network, c.report, c.owner())
}

// reconcileBastion makes the bastion while spec.bastion is enabled, replaces it when its spec
// changed, and removes it once it is not. network and groups are what this reconcile found.
func (c *clusterReconcile) reconcileBastion(ctx context.Context, network *infrav1.NetworkStatusWithSubnets, external *infrav1.NetworkStatus, groups *groupsFound) *bastionFound {
	osc := c.osc
	svc := c.bastionService()
	server, err := c.findBastion(ctx, svc, network)
	if err != nil {
		return &bastionFound{Outcome: outcome.Failed(err), status: osc.Status.Bastion}
	}
	if !osc.Spec.BastionEnabled() {
		return c.removeBastion(ctx, svc, server, "", false)
	}
	want := bastionDigest(osc.Spec.Bastion)
	if st := osc.Status.Bastion; server == nil && st != nil && st.State == bastionDeleting {
		// The server of a bastion being replaced is gone: its ports and volumes go before the new
		// one is made, so that it gets ports of its own spec.
		return c.removeBastion(ctx, svc, nil, "its spec changed", false)
	}
	if server != nil {
		if have, marked := server.Metadata[compute.BastionSpecMetadataKey]; marked && have != want {
			return c.removeBastion(ctx, svc, server, "its spec changed", false)
		}
		return c.bastionServing(ctx, server, network, external)
	}
	switch {
	case network == nil:
		return &bastionFound{status: osc.Status.Bastion, waiting: "the cluster network", Outcome: outcome.Outcome{RequeueAfter: requeue.Wait}}
	case osc.Spec.ManagedSecurityGroups != nil && (groups == nil || groups.Bastion == nil):
		return &bastionFound{status: osc.Status.Bastion, waiting: "the bastion's security group", Outcome: outcome.Outcome{RequeueAfter: requeue.Wait}}
	}
	spec, err := c.bastionInstance(ctx, svc, network, groups, want)
	if err != nil {
		// What an interrupted create recorded stays recorded, so that a removal finds its ports.
		return &bastionFound{status: osc.Status.Bastion, Outcome: outcome.Failed(bastionPaths(err))}
	}
	created, err := svc.Create(ctx, spec)
	if err != nil {
		// Ports or volumes may be made already: the status names the bastion, so that a removal
		// deletes them.
		return &bastionFound{status: &infrav1.BastionStatus{Name: spec.Name, SSHKeyName: spec.KeyName}, Outcome: outcome.Failed(bastionPaths(err))}
	}
	return &bastionFound{status: &infrav1.BastionStatus{ID: created.ID, Name: spec.Name, SSHKeyName: spec.KeyName, State: "BUILD"},
		waiting: "Nova to build the bastion's server", Outcome: outcome.Outcome{RequeueAfter: requeue.Build}}
}

// findBastion is the bastion's server: the one the status records, else the one named like it
// that carries the cluster's mark, or that upstream CAPO made for the cluster on its network.
func (c *clusterReconcile) findBastion(ctx context.Context, svc *compute.Service, network *infrav1.NetworkStatusWithSubnets) (*servers.Server, error) {
	osc := c.osc
	var legacy *compute.Legacy
	if network != nil && network.Name != "" {
		legacy = &compute.Legacy{Network: network.Name, NotBefore: osc.CreationTimestamp.Add(-5 * time.Minute)}
	}
	name := bastionName(c.cluster.Name)
	known := ""
	if osc.Status.Bastion != nil {
		known = osc.Status.Bastion.ID
	}
	server, gone, err := svc.Find(ctx, known, name, legacy)
	if err == nil && gone {
		server, _, err = svc.Find(ctx, "", name, legacy)
	}
	return server, err
}

// bastionInstance resolves the bastion's spec into the server to create.
func (c *clusterReconcile) bastionInstance(ctx context.Context, svc *compute.Service, network *infrav1.NetworkStatusWithSubnets, groups *groupsFound, digest string) (*compute.InstanceSpec, error) {
	osc := c.osc
	b := osc.Spec.Bastion
	m := bastionMachine(osc, c.cluster.Name)
	s := &m.Spec
	flavorID, err := svc.ResolveFlavor(ctx, s.Flavor, s.FlavorID)
	if err != nil {
		return nil, err
	}
	if s.Image.ImageRef != nil {
		return nil, report.Refuted(infrav1.InstanceConfigurationErrorReason, field.NewPath("spec", "bastion", "spec", "image", "imageRef"),
			"is not supported for the bastion: give image.id or image.filter")
	}
	imageID, err := svc.ResolveImage(ctx, &s.Image)
	if err != nil {
		return nil, err
	}
	if err := svc.CheckKeyPair(ctx, s.SSHKeyName); err != nil {
		return nil, err
	}
	request := &compute.PortsRequest{Machine: m, DisablePortSecurity: osc.Spec.DisablePortSecurity, ClusterNetworkID: network.ID}
	if osc.Spec.PrimarySubnet != nil && len(network.Subnets) > 0 {
		request.ClusterSubnetID = network.Subnets[0].ID
	}
	if groups != nil && groups.Bastion != nil {
		request.ManagedGroupID = groups.Bastion.ID
	}
	ports, err := compute.ResolvePorts(ctx, c.net, request)
	if err != nil {
		return nil, err
	}
	ids := bastionPorts(m, c.owner().Description())
	for i := range ports {
		ports[i].PortIdentity = ids[i]
	}
	zone := ptr.Deref(b.AvailabilityZone, "")
	rootVolume, blockDevices, err := svc.ResolveVolumes(ctx, m.Name, imageID, zone, s.RootVolume, s.AdditionalBlockDevices)
	if err != nil {
		return nil, err
	}
	metadata := map[string]string{}
	for _, kv := range s.ServerMetadata {
		metadata[kv.Key] = kv.Value
	}
	// After the spec's metadata, which the schema keeps from this key anyway.
	metadata[compute.BastionSpecMetadataKey] = digest
	return &compute.InstanceSpec{
		Name:             m.Name,
		FlavorID:         flavorID,
		ImageID:          imageID,
		KeyName:          s.SSHKeyName,
		AvailabilityZone: zone,
		SchedulerHints:   compute.SchedulerHints(s.SchedulerHintAdditionalProperties),
		ConfigDrive:      s.ConfigDrive,
		Metadata:         metadata,
		Tags:             networking.Union(osc.Spec.Tags, s.Tags),
		Ports:            ports,
		RootVolume:       rootVolume,
		BlockDevices:     blockDevices,
	}, nil
}

// bastionServing follows the bastion's server until it is ACTIVE, then gives it its floating IP.
func (c *clusterReconcile) bastionServing(ctx context.Context, server *servers.Server, network *infrav1.NetworkStatusWithSubnets, external *infrav1.NetworkStatus) *bastionFound {
	osc := c.osc
	st := &infrav1.BastionStatus{ID: server.ID, Name: server.Name, SSHKeyName: server.KeyName, State: server.Status}
	if network != nil {
		st.IP = compute.FixedAddress(server, network.Name)
	}
	if old := osc.Status.Bastion; old != nil && old.ID == server.ID {
		st.FloatingIP = old.FloatingIP
	}
	switch server.Status {
	case "ACTIVE":
	case "ERROR":
		fault := "no fault reported"
		if server.Fault.Message != "" {
			fault = server.Fault.Message
		}
		// Not a failure to retry: the server stays in ERROR until the user replaces it.
		return &bastionFound{status: st, Outcome: outcome.Failed(&report.SpecError{Reason: infrav1.InstanceErrorReason,
			Message: fmt.Sprintf("the bastion's server %s is in ERROR: %s; set spec.bastion.enabled to false, then true, to replace it", server.ID, fault)})}
	default:
		return &bastionFound{status: st, waiting: fmt.Sprintf("Nova to build the bastion's server (%s)", server.Status), Outcome: outcome.Outcome{RequeueAfter: requeue.Build}}
	}
	if external == nil || ptr.Deref(osc.Spec.DisableExternalNetwork, false) || st.IP == "" {
		return &bastionFound{status: st}
	}
	address, err := c.net.ReconcileServerFloatingIP(ctx, networking.BastionFloatingIPMarks(osc.Namespace, c.cluster.Name, c.takeover), external.ID, osc.Spec.Bastion.FloatingIP, server.ID, st.IP)
	if err != nil {
		return &bastionFound{status: st, Outcome: outcome.Failed(err)}
	}
	st.FloatingIP = address
	return &bastionFound{status: st}
}

// removeBastion releases the bastion's floating IP (the one the controller allocated or took
// over; the user's stays), deletes its server, then its ports and volumes. why says why the
// bastion is replaced; "" when it is removed. Without a server and a recorded bastion there is
// nothing to do, unless always (the cluster's deletion, which looks for what a lost status or an
// interrupted create left).
func (c *clusterReconcile) removeBastion(ctx context.Context, svc *compute.Service, server *servers.Server, why string, always bool) *bastionFound {
	osc := c.osc
	if server == nil && osc.Status.Bastion == nil && !always {
		return &bastionFound{removed: why == ""}
	}
	if err := c.net.ReleaseFloatingIPs(ctx, networking.BastionFloatingIPMarks(osc.Namespace, c.cluster.Name, c.takeover), "the bastion"); err != nil {
		return &bastionFound{status: osc.Status.Bastion, Outcome: outcome.Failed(err)}
	}
	waiting := "Nova to delete the bastion's server"
	if why != "" {
		waiting += ", which is replaced: " + why
	}
	if server != nil {
		done, err := svc.Delete(ctx, server)
		if err != nil {
			return &bastionFound{status: osc.Status.Bastion, Outcome: outcome.Failed(err)}
		}
		if !done {
			st := &infrav1.BastionStatus{ID: server.ID, Name: server.Name, SSHKeyName: server.KeyName, State: bastionDeleting}
			return &bastionFound{status: st, waiting: waiting, Outcome: outcome.Outcome{RequeueAfter: requeue.Build}}
		}
	}
	m := bastionMachine(osc, c.cluster.Name)
	ids, err := c.markedBastionPorts(ctx, bastionPorts(m, c.owner().Description()))
	if err != nil {
		return &bastionFound{status: osc.Status.Bastion, Outcome: outcome.Failed(err)}
	}
	if err := svc.DeletePorts(ctx, ids); err != nil {
		return &bastionFound{status: osc.Status.Bastion, Outcome: outcome.Failed(err)}
	}
	if err := svc.DeleteVolumes(ctx, m.Name, compute.VolumeNames(m.Name, m.Spec.RootVolume, m.Spec.AdditionalBlockDevices)); err != nil {
		return &bastionFound{status: osc.Status.Bastion, Outcome: outcome.Failed(err)}
	}
	if why != "" {
		// Replaced: the next reconcile creates the new one.
		return &bastionFound{waiting: "the new bastion, which replaces the old one: " + why, Outcome: outcome.Outcome{RequeueAfter: requeue.Build}}
	}
	return &bastionFound{removed: true}
}

// markedBastionPorts are the identities of the bastion's ports: those of the spec, and every
// port named <cluster>-bastion-... that carries the cluster's mark (its description, or its tag
// on a port whose description the spec gave), so that the ports of a spec since changed or
// removed are found too. DeletePorts checks each one's mark again.
func (c *clusterReconcile) markedBastionPorts(ctx context.Context, ids []compute.PortIdentity) ([]compute.PortIdentity, error) {
	owner := c.owner()
	prefix := bastionName(c.cluster.Name) + "-"
	seen := map[string]bool{}
	for _, id := range ids {
		seen[id.Name] = true
	}
	for _, opts := range []ports.ListOpts{{Description: owner.Description()}, {Tags: owner.Tag()}} {
		found, err := c.clients.Network.ListPorts(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("listing the bastion's ports: %w", err)
		}
		for _, p := range found {
			if strings.HasPrefix(p.Name, prefix) && !seen[p.Name] {
				seen[p.Name] = true
				// Possibly the parent of a trunk of an earlier spec: DeletePorts deletes the
				// trunks on it that carry the mark first.
				ids = append(ids, compute.PortIdentity{Name: p.Name, Description: p.Description, Trunk: true})
			}
		}
	}
	return ids, nil
}

// bastionPaths names the bastion's fields in an error about its spec: the compute service names
// a machine's (spec.flavor), and the bastion's spec is spec.bastion.spec.
func bastionPaths(err error) error {
	specErr, ok := report.AsSpecError(err)
	if !ok || !strings.HasPrefix(specErr.Message, "spec.") || strings.HasPrefix(specErr.Message, "spec.bastion.") {
		return err
	}
	return &report.SpecError{Reason: specErr.Reason, Message: "spec.bastion." + specErr.Message}
}
