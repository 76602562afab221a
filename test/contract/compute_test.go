//go:build contract

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

package contract

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/trunks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/compute"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/framework"
)

// machineService is the compute service of a machine called name, with the IDs of the flavor and
// image the scenarios boot: CAPO_CONTRACT_FLAVOR (default m1.tiny) and CAPO_CONTRACT_IMAGE
// (default fake-image).
func machineService(t *testing.T, tg target, name string) (svc *compute.Service, flavorID, imageID string) {
	t.Helper()
	ctx := context.Background()
	svc = compute.NewService(tg.clients.Compute, tg.clients.Image, tg.clients.Volume, tg.clients.Network, nil, ownership.Owner{Kind: "OpenStackMachine", Namespace: "contract", Name: name})
	flavorID, err := svc.ResolveFlavor(ctx, ptr.To(framework.EnvOr("CAPO_CONTRACT_FLAVOR", "m1.tiny")), nil)
	if err != nil {
		t.Fatal(err)
	}
	imageID, err = svc.ResolveImage(ctx, &infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To(framework.EnvOr("CAPO_CONTRACT_IMAGE", "fake-image"))}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, flavorID, imageID
}

// serverLifecycle drives the compute service as the machine controller does: resolve the
// flavor and image, create the port and the server in an availability zone, find the server
// again by name and owner, read its address, delete it and then its port. Flavor and image
// names: CAPO_CONTRACT_FLAVOR (default m1.tiny) and CAPO_CONTRACT_IMAGE (default fake-image).
func serverLifecycle(t *testing.T, tg target) {
	ctx := context.Background()
	networkID, subnetID := scratchSubnet(t, tg)
	network, err := tg.clients.Network.GetNetwork(ctx, networkID)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("capo-contract-%d", time.Now().UnixNano())
	svc, flavorID, imageID := machineService(t, tg, name)
	owner := "contract/" + name
	// The port is a trunk's parent, as a machine's with trunk: true.
	portID := compute.PortIdentity{Name: name + "-0", Description: compute.DefaultPortDescription(owner), Trunk: true}
	spec := &compute.InstanceSpec{
		Name: name, FlavorID: flavorID, ImageID: imageID, AvailabilityZone: tg.az,
		UserData: []byte("#cloud-config\n"), Metadata: map[string]string{"purpose": "contract"}, Tags: []string{"capo-contract"},
		Ports: []compute.PortSpec{{PortIdentity: portID, NetworkID: networkID, Tags: []string{"capo-contract"}}},
	}
	start := time.Now()
	created, err := svc.Create(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if created.Status != "" || created.Name != "" {
		t.Errorf("the create answer: want the ID alone (the controller takes the server as BUILD), got status %q, name %q", created.Status, created.Name)
	}
	t.Cleanup(func() {
		_ = poll(120*time.Second, func() (bool, error) { return svc.Delete(ctx, created) })
		_ = svc.DeletePorts(ctx, []compute.PortIdentity{portID})
	})

	// Without the ID (a status lost before it was written) the server is found by name and owner.
	found, gone, err := svc.Find(ctx, "", name, nil)
	if err != nil || gone || found == nil || found.ID != created.ID {
		t.Fatalf("find by name and owner: got %v, gone %v, err %v; want %s", found, gone, err, created.ID)
	}
	var server = found
	if err := poll(120*time.Second, func() (bool, error) {
		server, _, err = svc.Find(ctx, created.ID, name, nil)
		if err == nil && server.Status == "ERROR" {
			return false, fmt.Errorf("server in ERROR: %s", server.Fault.Message)
		}
		return err == nil && server.Status == "ACTIVE", err
	}); err != nil {
		t.Fatalf("server never became ACTIVE: %v", err)
	}
	t.Logf("server ACTIVE %s after the create call", time.Since(start).Round(100*time.Millisecond))
	if server.AvailabilityZone != tg.az {
		t.Errorf("server in availability zone %q, want %q", server.AvailabilityZone, tg.az)
	}
	if server.Tags == nil || !slices.Contains(*server.Tags, "capo-contract") {
		t.Errorf("server tags %v, want capo-contract (microversion 2.52+)", server.Tags)
	}
	if server.Metadata[compute.OwnerMetadataKey] != owner {
		t.Errorf("server metadata %v, want %s=%s", server.Metadata, compute.OwnerMetadataKey, owner)
	}
	list, err := tg.clients.Network.ListPorts(ctx, ports.ListOpts{Name: portID.Name})
	if err != nil || len(list) != 1 {
		t.Fatalf("want the one port %s, got %d (%v)", portID.Name, len(list), err)
	}
	port := list[0]
	if !slices.Contains(port.Tags, "capo-contract") || port.DeviceID != server.ID || port.FixedIPs[0].SubnetID != subnetID {
		t.Errorf("port %+v: want tagged, attached to %s, on subnet %s", port, server.ID, subnetID)
	}
	parents, err := tg.clients.Network.ListTrunks(ctx, trunks.ListOpts{PortID: port.ID})
	if err != nil || len(parents) != 1 || parents[0].Name != portID.Name {
		t.Errorf("trunks of port %s: want one named %s, got %+v (%v)", port.ID, portID.Name, parents, err)
	}
	// A trunk's parent port cannot be deleted: DeletePorts deletes the trunk first.
	if err := tg.clients.Network.DeletePort(ctx, port.ID); !isCode(err, http.StatusConflict) {
		t.Errorf("deleting a trunk's parent port: want 409, got %v", err)
	}
	if got := compute.FixedAddress(server, network.Name); got != port.FixedIPs[0].IPAddress {
		t.Errorf("address on %s: got %q, want the port's %s (addresses %v)", network.Name, got, port.FixedIPs[0].IPAddress, server.Addresses)
	}

	start = time.Now()
	if err := poll(120*time.Second, func() (bool, error) { return svc.Delete(ctx, server) }); err != nil {
		t.Fatalf("server never went away: %v", err)
	}
	t.Logf("server gone %s after the delete call", time.Since(start).Round(100*time.Millisecond))
	if err := svc.DeletePorts(ctx, []compute.PortIdentity{portID}); err != nil {
		t.Fatal(err)
	}
	if _, err := tg.clients.Network.GetPort(ctx, port.ID); !isCode(err, http.StatusNotFound) {
		t.Errorf("port after DeletePorts: want 404, got %v", err)
	}
	if left, err := tg.clients.Network.ListTrunks(ctx, trunks.ListOpts{PortID: port.ID}); err != nil || len(left) != 0 {
		t.Errorf("trunks after DeletePorts: want none, got %+v (%v)", left, err)
	}
}

// membership drives the load balancer service's ReconcileMembership as the machine controller
// does, once per reconcile, against a load balancer named and built as the controller builds
// them: a machine joins both pools, one Octavia change per call while the load balancer is
// PENDING_UPDATE in between, and leaves them again; a changed address replaces the member.
func membership(t *testing.T, tg target) {
	ctx := context.Background()
	networkID, subnetID := scratchSubnet(t, tg)
	cluster := fmt.Sprintf("c%d", time.Now().UnixNano()%1_000_000)
	name := zones.Name("contract", cluster, tg.az)
	lbID, active := populatedLoadBalancer(t, tg, subnetID, name, func(port int) string { return zones.ChildName(name, port) })
	tree, err := tg.clients.LoadBalancer.GetLoadBalancerStatuses(ctx, lbID)
	if err != nil {
		t.Fatal(err)
	}
	settleChildren(t, tg, tree, active)

	// Two addresses on the subnet, as two successive ports of a machine would have.
	var addresses []string
	for i := range 2 {
		p, err := tg.clients.Network.CreatePort(ctx, ports.CreateOpts{NetworkID: networkID, Name: fmt.Sprintf("capo-contract-member-%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tg.clients.Network.DeletePort(ctx, p.ID) })
		addresses = append(addresses, p.FixedIPs[0].IPAddress)
	}
	// The load balancer is unmarked and named as upstream names it: the test stands for a cluster
	// whose takeover the operator recorded.
	svc := loadbalancer.NewService(tg.clients.LoadBalancer, tg.clients.Network, nil, nil, "contract", ownership.Owner{Kind: "OpenStackCluster", Namespace: "contract", Name: cluster, Takeover: true}, cluster)
	all := []infrav1.LoadBalancer{{Name: name, ID: lbID, AvailabilityZone: tg.az}}
	converge := func(targets []string, address string) (calls int) {
		t.Helper()
		start := time.Now()
		err := poll(120*time.Second, func() (bool, error) {
			calls++
			return svc.ReconcileMembership(ctx, all, targets, []int{6443, 8132}, loadbalancer.Member{Name: "cp-1", Address: address, SubnetID: subnetID})
		})
		if err != nil {
			t.Fatalf("membership did not converge: %v", err)
		}
		t.Logf("membership converged in %d calls, %s", calls, time.Since(start).Round(100*time.Millisecond))
		return calls
	}
	members := func() map[int][]string {
		t.Helper()
		tree, err := tg.clients.LoadBalancer.GetLoadBalancerStatuses(ctx, lbID)
		if err != nil {
			t.Fatal(err)
		}
		out := map[int][]string{}
		for _, l := range tree.Loadbalancer.Listeners {
			for _, p := range l.Pools {
				for _, m := range p.Members {
					// The tree names no listener port; the member's is the pool's.
					out[m.ProtocolPort] = append(out[m.ProtocolPort], fmt.Sprintf("%s %s:%d", m.Name, m.Address, m.ProtocolPort))
				}
			}
		}
		return out
	}
	want := func(address string) map[int][]string {
		if address == "" {
			return map[int][]string{}
		}
		return map[int][]string{6443: {"cp-1 " + address + ":6443"}, 8132: {"cp-1 " + address + ":8132"}}
	}

	converge([]string{lbID}, addresses[0])
	if got := members(); !reflect.DeepEqual(got, want(addresses[0])) {
		t.Errorf("after joining: members %v, want %v", got, want(addresses[0]))
	}
	converge([]string{lbID}, addresses[1])
	if got := members(); !reflect.DeepEqual(got, want(addresses[1])) {
		t.Errorf("after the address changed: members %v, want %v", got, want(addresses[1]))
	}
	if calls := converge([]string{lbID}, addresses[1]); calls != 1 {
		t.Errorf("a converged membership took %d calls, want 1 (nothing to change)", calls)
	}
	converge(nil, "")
	if got := members(); !reflect.DeepEqual(got, want("")) {
		t.Errorf("after leaving: members %v, want none", got)
	}
}

// serverFromVolumes drives the compute service for a machine with a root volume and a data
// volume: Create answers VolumesPending while Cinder builds them (never a second volume), then
// creates the server, which boots from the root volume with both attached; the volumes are in the
// machine's zone (the spec names none, and Cinder has it); a zone Cinder does not have is a
// refusal naming the field; Nova deletes the volumes with the server; a volume made for a server
// that never came is deleted by DeleteVolumes.
func serverFromVolumes(t *testing.T, tg target) {
	ctx := context.Background()
	networkID, _ := scratchSubnet(t, tg)
	name := fmt.Sprintf("capo-contract-%d", time.Now().UnixNano())
	svc, flavorID, imageID := machineService(t, tg, name)
	devices := []infrav1.AdditionalBlockDevice{{Name: "data", SizeGiB: 1, Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice}}}
	root, blocks, err := svc.ResolveVolumes(ctx, name, imageID, tg.az, &infrav1.RootVolume{SizeGiB: 1}, devices)
	if err != nil {
		t.Fatal(err)
	}
	if root.AvailabilityZone != tg.az || blocks[0].Volume.AvailabilityZone != tg.az {
		t.Errorf("volume zones %q and %q, want the machine's %q (Cinder has it)", root.AvailabilityZone, blocks[0].Volume.AvailabilityZone, tg.az)
	}
	portID := compute.PortIdentity{Name: name + "-0", Description: compute.DefaultPortDescription("contract/" + name)}
	spec := &compute.InstanceSpec{Name: name, FlavorID: flavorID, ImageID: imageID, AvailabilityZone: tg.az,
		Ports: []compute.PortSpec{{PortIdentity: portID, NetworkID: networkID}}, RootVolume: root, BlockDevices: blocks}
	names := []string{root.Name, blocks[0].Volume.Name}
	t.Cleanup(func() {
		if found, _, _ := svc.Find(ctx, "", name, nil); found != nil {
			_ = poll(120*time.Second, func() (bool, error) { return svc.Delete(ctx, found) })
		}
		_ = svc.DeletePorts(ctx, []compute.PortIdentity{portID})
		_ = poll(60*time.Second, func() (bool, error) {
			err := svc.DeleteVolumes(ctx, name, names)
			return err == nil, nil
		})
	})

	start := time.Now()
	var created *servers.Server
	pendingAnswers := 0
	if err := poll(120*time.Second, func() (bool, error) {
		created, err = svc.Create(ctx, spec)
		if _, pending := err.(*compute.VolumesPending); pending {
			pendingAnswers++
			return false, nil
		}
		return err == nil, err
	}); err != nil {
		t.Fatalf("the server was not created: %v", err)
	}
	t.Logf("server created %s after the first call, after %d answers that Cinder was building", time.Since(start).Round(100*time.Millisecond), pendingAnswers)
	var server *servers.Server
	if err := poll(120*time.Second, func() (bool, error) {
		server, _, err = svc.Find(ctx, created.ID, name, nil)
		if err == nil && server.Status == "ERROR" {
			return false, fmt.Errorf("server in ERROR: %s", server.Fault.Message)
		}
		return err == nil && server.Status == "ACTIVE", err
	}); err != nil {
		t.Fatalf("server never became ACTIVE: %v", err)
	}
	for _, n := range names {
		list, err := tg.clients.Volume.ListVolumes(ctx, volumes.ListOpts{Name: n})
		if err != nil || len(list) != 1 {
			t.Fatalf("want the one volume %s, got %d (%v): Cinder filters by name when its resource_filters.json allows it", n, len(list), err)
		}
		v := list[0]
		if v.Status != "in-use" || len(v.Attachments) != 1 || v.Attachments[0].ServerID != server.ID || v.AvailabilityZone != tg.az {
			t.Errorf("volume %s: status %s, attachments %+v, zone %s; want in-use on %s in %s", n, v.Status, v.Attachments, v.AvailabilityZone, server.ID, tg.az)
		}
		if n == root.Name && v.Bootable != "true" {
			t.Errorf("root volume bootable %q, want true (made from the image)", v.Bootable)
		}
		// An attached volume cannot be deleted: DeleteVolumes never tries (it would be 400).
		if err := tg.clients.Volume.DeleteVolume(ctx, v.ID); !isCode(err, http.StatusBadRequest) {
			t.Errorf("deleting attached volume %s: want 400, got %v", n, err)
		}
	}

	// A zone Cinder does not have: refuted, naming the field.
	bad := &compute.VolumeSpec{Name: name + "-nowhere", SizeGiB: 1, AvailabilityZone: "capo-contract-no-such-zone", Path: field.NewPath("spec", "rootVolume")}
	_, err = svc.Create(ctx, &compute.InstanceSpec{Name: name + "-nowhere", FlavorID: flavorID, ImageID: imageID, RootVolume: bad})
	if specErr, ok := report.AsSpecError(err); !ok || !strings.HasPrefix(specErr.Message, "spec.rootVolume: Cinder refuses volume") {
		t.Errorf("a volume in an unknown zone: want a refusal of spec.rootVolume, got %v", err)
	}

	if err := poll(120*time.Second, func() (bool, error) { return svc.Delete(ctx, server) }); err != nil {
		t.Fatalf("server never went away: %v", err)
	}
	if err := poll(60*time.Second, func() (bool, error) {
		for _, n := range names {
			list, err := tg.clients.Volume.ListVolumes(ctx, volumes.ListOpts{Name: n})
			if err != nil || len(list) > 0 {
				return false, err
			}
		}
		return true, nil
	}); err != nil {
		t.Errorf("the volumes did not go with the server (Nova's delete_on_termination): %v", err)
	}

	// A volume made for a server that never came: DeleteVolumes deletes it.
	// Nova refuses the server's zone, after Cinder built the volume.
	orphan := &compute.InstanceSpec{Name: name, FlavorID: flavorID, ImageID: imageID, RootVolume: root, AvailabilityZone: "capo-contract-no-such-zone"}
	if err := poll(60*time.Second, func() (bool, error) {
		_, err := svc.Create(ctx, orphan)
		if _, pending := err.(*compute.VolumesPending); pending {
			return false, nil
		}
		if !isCode(err, http.StatusBadRequest) {
			return false, fmt.Errorf("creating a server in a zone Nova does not have: want 400, got %w", err)
		}
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := svc.DeleteVolumes(ctx, name, []string{root.Name}); err != nil {
		t.Fatal(err)
	}
	if err := poll(60*time.Second, func() (bool, error) {
		list, err := tg.clients.Volume.ListVolumes(ctx, volumes.ListOpts{Name: root.Name})
		return err == nil && (len(list) == 0 || list[0].Status == "deleting"), err
	}); err != nil {
		t.Errorf("the volume of a server that never came was not deleted: %v", err)
	}
}
