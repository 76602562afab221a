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
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/attributestags"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	. "github.com/onsi/gomega"
	"go.uber.org/mock/gomock"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients/mock"
)

// These tests pin the calls of each path with mocks: an unexpected call fails the test, so they
// also prove what is not done (no second server, no second port, no port of another machine
// deleted).

var err404 = gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusNotFound}

const (
	owner    = "ns/m1"
	netID    = "44444444-4444-4444-8444-444444444444"
	subnetID = "55555555-5555-4555-8555-555555555555"
)

type mocked struct {
	compute  *mock.MockComputeClient
	image    *mock.MockImageClient
	volume   *mock.MockVolumeClient
	net      *mock.MockNetworkClient
	recorder *events.FakeRecorder
}

func newMocked(t *testing.T) (*mocked, *Service) {
	c := gomock.NewController(t)
	m := &mocked{compute: mock.NewMockComputeClient(c), image: mock.NewMockImageClient(c), volume: mock.NewMockVolumeClient(c), net: mock.NewMockNetworkClient(c), recorder: events.NewFakeRecorder(20)}
	return m, m.serviceFor("m1")
}

// serviceFor is a service for the machine name of namespace ns.
func (m *mocked) serviceFor(name string) *Service {
	return NewService(m.compute, m.image, m.volume, m.net, report.NewRecorder(m.recorder, &infrav1.OpenStackMachine{}, logr.Discard()),
		ownership.Owner{Kind: "OpenStackMachine", Namespace: "ns", Name: name, Takeover: true})
}

// wire is a request body as OpenStack receives it: through JSON.
func wire(g *WithT, body func() (map[string]any, error)) map[string]any {
	m, err := body()
	g.Expect(err).NotTo(HaveOccurred())
	raw, err := json.Marshal(m)
	g.Expect(err).NotTo(HaveOccurred())
	out := map[string]any{}
	g.Expect(json.Unmarshal(raw, &out)).To(Succeed())
	return out
}

func portSpec() PortSpec {
	return PortSpec{
		PortIdentity:     PortIdentity{Name: "m1-0", Description: DefaultPortDescription(owner)},
		NetworkID:        netID,
		FixedIPs:         []ports.IP{{SubnetID: subnetID}},
		SecurityGroupIDs: []string{"sg-cp"},
		Tags:             []string{"team-a"},
	}
}

func instanceSpec() *InstanceSpec {
	return &InstanceSpec{
		Name: "m1", FlavorID: "flavor-1", ImageID: "image-1", KeyName: "ops", AvailabilityZone: "az2",
		ServerGroupID: "group-1", UserData: []byte("#cloud-config\n"), Metadata: map[string]string{"role": "cp"},
		Tags: []string{"team-a"}, Ports: []PortSpec{portSpec()},
	}
}

func TestCreateMakesPortsThenTheServer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	m, svc := newMocked(t)

	gomock.InOrder(
		m.net.EXPECT().ListPorts(ctx, ports.ListOpts{Name: "m1-0", NetworkID: netID}).Return(nil, nil),
		m.net.EXPECT().CreatePort(ctx, gomock.Any()).DoAndReturn(func(_ context.Context, opts ports.CreateOptsBuilder) (*ports.Port, error) {
			port := wire(g, opts.ToPortCreateMap)["port"].(map[string]any)
			g.Expect(port).To(HaveKeyWithValue("name", "m1-0"))
			g.Expect(port).To(HaveKeyWithValue("description", DefaultPortDescription(owner)))
			g.Expect(port).To(HaveKeyWithValue("network_id", netID))
			g.Expect(port).To(HaveKeyWithValue("security_groups", []any{"sg-cp"}))
			g.Expect(port).NotTo(HaveKey("port_security_enabled"))
			return &ports.Port{ID: "port-1", Name: "m1-0"}, nil
		}),
		m.net.EXPECT().ReplaceAllTags(ctx, "ports", "port-1", attributestags.ReplaceAllOpts{Tags: []string{"team-a"}}).Return([]string{"team-a"}, nil),
		m.compute.EXPECT().CreateServer(ctx, gomock.Any(), servers.SchedulerHintOpts{Group: "group-1"}).DoAndReturn(
			func(_ context.Context, opts servers.CreateOptsBuilder, _ servers.SchedulerHintOptsBuilder) (*servers.Server, error) {
				s := wire(g, opts.ToServerCreateMap)["server"].(map[string]any)
				g.Expect(s).To(HaveKeyWithValue("name", "m1"))
				g.Expect(s).To(HaveKeyWithValue("flavorRef", "flavor-1"))
				g.Expect(s).To(HaveKeyWithValue("imageRef", "image-1"))
				g.Expect(s).To(HaveKeyWithValue("key_name", "ops"))
				g.Expect(s).To(HaveKeyWithValue("availability_zone", "az2"))
				g.Expect(s).To(HaveKeyWithValue("networks", []any{map[string]any{"port": "port-1"}}))
				g.Expect(s).To(HaveKeyWithValue("metadata", map[string]any{"role": "cp", OwnerMetadataKey: owner}))
				g.Expect(s).To(HaveKeyWithValue("tags", []any{"team-a"}))
				// Base64 once, even though the bootstrap data is not base64 itself.
				g.Expect(s).To(HaveKeyWithValue("user_data", base64.StdEncoding.EncodeToString([]byte("#cloud-config\n"))))
				return &servers.Server{ID: "server-1", Name: "m1", Status: "BUILD"}, nil
			}),
	)
	server, err := svc.Create(ctx, instanceSpec())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(server.ID).To(Equal("server-1"))
	g.Expect(<-m.recorder.Events).To(ContainSubstring("CreatedPort"))
	g.Expect(<-m.recorder.Events).To(ContainSubstring("Created server m1 (server-1) in az2"))
}

func TestCreateAdoptsThePortAnInterruptedAttemptLeft(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	m, svc := newMocked(t)
	spec := instanceSpec()
	spec.KeyName, spec.ServerGroupID, spec.UserData = "", "", nil
	spec.Ports[0].DisablePortSecurity = ptr.To(true)

	left := []ports.Port{
		{ID: "elsewhere", Name: "m1-0", Description: DefaultPortDescription(owner), DeviceID: "another-server"},
		{ID: "other-machine", Name: "m1-0", Description: DefaultPortDescription("other/m1")},
		{ID: "left", Name: "m1-0", Description: DefaultPortDescription(owner)},
	}
	gomock.InOrder(
		m.net.EXPECT().ListPorts(ctx, ports.ListOpts{Name: "m1-0", NetworkID: netID}).Return(left, nil),
		// Tagged in a second call after its create: the tags are what may be missing.
		m.net.EXPECT().ReplaceAllTags(ctx, "ports", "left", attributestags.ReplaceAllOpts{Tags: []string{"team-a"}}).Return([]string{"team-a"}, nil),
		m.compute.EXPECT().CreateServer(ctx, gomock.Any(), nil).DoAndReturn(
			func(_ context.Context, opts servers.CreateOptsBuilder, _ servers.SchedulerHintOptsBuilder) (*servers.Server, error) {
				s := wire(g, opts.ToServerCreateMap)["server"].(map[string]any)
				g.Expect(s).To(HaveKeyWithValue("networks", []any{map[string]any{"port": "left"}}))
				g.Expect(s).NotTo(HaveKey("key_name"))
				g.Expect(s).NotTo(HaveKey("user_data"))
				return &servers.Server{ID: "server-1"}, nil
			}),
	)
	_, err := svc.Create(ctx, spec)
	g.Expect(err).NotTo(HaveOccurred())
}

func TestCreateWithPortSecurityOffSendsNoGroups(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	m, svc := newMocked(t)
	p := portSpec()
	p.DisablePortSecurity, p.Tags = ptr.To(true), nil

	m.net.EXPECT().ListPorts(ctx, gomock.Any()).Return(nil, nil)
	m.net.EXPECT().CreatePort(ctx, gomock.Any()).DoAndReturn(func(_ context.Context, opts ports.CreateOptsBuilder) (*ports.Port, error) {
		port := wire(g, opts.ToPortCreateMap)["port"].(map[string]any)
		g.Expect(port).To(HaveKeyWithValue("port_security_enabled", false))
		g.Expect(port).NotTo(HaveKey("security_groups"))
		return &ports.Port{ID: "port-1"}, nil
	})
	_, err := svc.ensurePort(ctx, &p)
	g.Expect(err).NotTo(HaveOccurred())
}

// The spec's port options reach Neutron as its API names them, port security and binding
// extensions included.
func TestCreateSendsThePortOptions(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	m, svc := newMocked(t)
	p := portSpec()
	p.DisablePortSecurity, p.Tags = ptr.To(false), nil
	p.Options = PortOptions{AdminStateUp: ptr.To(false), MACAddress: "fa:16:3e:12:34:56",
		AllowedAddressPairs: []ports.AddressPair{{IPAddress: "10.6.0.250"}, {IPAddress: "10.6.1.0/24", MACAddress: "fa:16:3e:00:00:01"}},
		HostID:              "compute-3", VNICType: "direct", Profile: map[string]any{"trusted": true}, PropagateUplinkStatus: ptr.To(true),
		ValueSpecs: map[string]string{"dns_name": "cp-0"}}

	m.net.EXPECT().ListPorts(ctx, gomock.Any()).Return(nil, nil)
	m.net.EXPECT().CreatePort(ctx, gomock.Any()).DoAndReturn(func(_ context.Context, opts ports.CreateOptsBuilder) (*ports.Port, error) {
		port := wire(g, opts.ToPortCreateMap)["port"].(map[string]any)
		g.Expect(port).To(HaveKeyWithValue("port_security_enabled", true))
		g.Expect(port).To(HaveKeyWithValue("admin_state_up", false))
		g.Expect(port).To(HaveKeyWithValue("mac_address", "fa:16:3e:12:34:56"))
		g.Expect(port).To(HaveKeyWithValue("allowed_address_pairs", []any{
			map[string]any{"ip_address": "10.6.0.250"}, map[string]any{"ip_address": "10.6.1.0/24", "mac_address": "fa:16:3e:00:00:01"}}))
		g.Expect(port).To(HaveKeyWithValue("binding:host_id", "compute-3"))
		g.Expect(port).To(HaveKeyWithValue("binding:vnic_type", "direct"))
		g.Expect(port).To(HaveKeyWithValue("binding:profile", map[string]any{"trusted": true}))
		g.Expect(port).To(HaveKeyWithValue("propagate_uplink_status", true))
		g.Expect(port).To(HaveKeyWithValue("dns_name", "cp-0"))
		g.Expect(port).To(HaveKeyWithValue("name", p.Name), "a value spec adds; it never replaces")
		return &ports.Port{ID: "port-1"}, nil
	})
	_, err := svc.ensurePort(ctx, &p)
	g.Expect(err).NotTo(HaveOccurred())
}

func TestFind(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	m, svc := newMocked(t)

	m.compute.EXPECT().GetServer(ctx, "known").Return(&servers.Server{ID: "known", Name: "m1", Metadata: map[string]string{OwnerMetadataKey: owner}}, nil)
	server, gone, err := svc.Find(ctx, "known", "m1", nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(gone).To(BeFalse())
	g.Expect(server.ID).To(Equal("known"))

	// The ID the status or the provider ID records is a hint: a server another machine's mark
	// claims, or none, is not this machine's, and nothing is done to it.
	for _, metadata := range []map[string]string{{OwnerMetadataKey: "team-a/db"}, {}} {
		m.compute.EXPECT().GetServer(ctx, "known").Return(&servers.Server{ID: "known", Name: "m1", Metadata: metadata}, nil)
		server, gone, err = svc.Find(ctx, "known", "m1", nil)
		g.Expect(err).To(MatchError(ContainSubstring("server m1 (known) belongs to ")))
		specErr, ok := report.AsSpecError(err)
		g.Expect(ok).To(BeTrue())
		g.Expect(specErr.Reason).To(Equal(infrav1.ResourceOwnedElsewhereReason))
		g.Expect(server).To(BeNil())
		g.Expect(gone).To(BeFalse())
	}

	// A recorded server that Nova no longer has is reported, not looked up by name again.
	m.compute.EXPECT().GetServer(ctx, "known").Return(nil, err404)
	server, gone, err = svc.Find(ctx, "known", "m1", nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(gone).To(BeTrue())
	g.Expect(server).To(BeNil())

	// Without a recorded ID: by exact name and the owner metadata.
	now := time.Now()
	mine := servers.Server{ID: "mine", Name: "m1.a", Created: now, Metadata: map[string]string{OwnerMetadataKey: "ns/m1.a"}}
	m.compute.EXPECT().ListServers(ctx, servers.ListOpts{Name: `^m1\.a$`}).Return([]servers.Server{
		{ID: "someone-elses", Name: "m1.a", Metadata: map[string]string{OwnerMetadataKey: "other/m1.a"}},
		{ID: "prefixed", Name: "m1.ab", Metadata: map[string]string{OwnerMetadataKey: "ns/m1.a"}},
		mine,
	}, nil)
	server, _, err = m.serviceFor("m1.a").Find(ctx, "", "m1.a", nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(server.ID).To(Equal("mine"))

	// Two servers with the machine's mark (its metadata copied by hand): never a guess.
	copied := mine
	copied.ID, copied.Created = "copied", now.Add(-time.Minute)
	m.compute.EXPECT().ListServers(ctx, gomock.Any()).Return([]servers.Server{mine, copied}, nil)
	_, _, err = m.serviceFor("m1.a").Find(ctx, "", "m1.a", nil)
	g.Expect(err).To(MatchError("2 servers named m1.a (copied, mine) are all this object's: delete all but one"))

	m.compute.EXPECT().ListServers(ctx, gomock.Any()).Return([]servers.Server{{ID: "x", Name: "m1", Metadata: map[string]string{}}}, nil)
	server, gone, err = svc.Find(ctx, "", "m1", nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(server).To(BeNil())
	g.Expect(gone).To(BeFalse())
}

func TestFindRecognisesTheServerUpstreamCAPOCreated(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	m, svc := newMocked(t)
	machineCreated := time.Now().Add(-time.Hour)
	legacy := &Legacy{Network: "k8s-clusterapi-cluster-ns-c", NotBefore: machineCreated.Add(-5 * time.Minute)}
	onNet := map[string]any{"k8s-clusterapi-cluster-ns-c": []any{map[string]any{"addr": "10.6.0.10"}}}
	upstream := servers.Server{ID: "upstream", Name: "m1", Created: machineCreated.Add(time.Second), Metadata: map[string]string{}, Addresses: onNet}
	list := func(found ...servers.Server) {
		m.compute.EXPECT().ListServers(ctx, servers.ListOpts{Name: `^m1$`}).Return(found, nil)
	}

	list(upstream)
	server, _, err := svc.Find(ctx, "", "m1", legacy)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(server.ID).To(Equal("upstream"), "named after the machine, unmarked, on the cluster network, younger than the machine")

	older := upstream
	older.ID, older.Created = "older", machineCreated.Add(-time.Hour)
	otherNet := upstream
	otherNet.ID, otherNet.Addresses = "other-network", map[string]any{"shared": []any{}}
	marked := upstream
	marked.ID, marked.Metadata = "another-machines", map[string]string{OwnerMetadataKey: "other/m1"}
	list(older, otherNet, marked)
	server, _, err = svc.Find(ctx, "", "m1", legacy)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(server).To(BeNil(), "older than the machine, on another network, or marked for another machine: not this machine's")

	list(upstream)
	server, _, err = svc.Find(ctx, "", "m1", nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(server).To(BeNil(), "only when asked")

	twin := upstream
	twin.ID = "twin"
	list(upstream, twin)
	_, _, err = svc.Find(ctx, "", "m1", legacy)
	g.Expect(err).To(MatchError("2 servers named m1 (twin, upstream) are all this object's: delete all but one"))
	_, isSpec := report.AsSpecError(err)
	g.Expect(isSpec).To(BeTrue(), "a choice only the user can make")

	ourMark := upstream
	ourMark.ID, ourMark.Metadata = "ours", map[string]string{OwnerMetadataKey: owner}
	list(upstream, ourMark)
	server, _, err = svc.Find(ctx, "", "m1", legacy)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(server.ID).To(Equal("ours"), "this provider's mark wins")
}

func TestDeleteAndDeletePorts(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	m, svc := newMocked(t)
	server := &servers.Server{ID: "server-1", Name: "m1", Status: "ACTIVE"}

	m.compute.EXPECT().DeleteServer(ctx, "server-1").Return(nil)
	done, err := svc.Delete(ctx, server)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeFalse(), "Nova deletes asynchronously: look again")

	m.compute.EXPECT().DeleteServer(ctx, "server-1").Return(err404)
	done, err = svc.Delete(ctx, server)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeTrue())

	ids := []PortIdentity{{Name: "m1-0", Description: DefaultPortDescription(owner)}, {Name: "m1-storage", Description: "user's words"}}
	m.net.EXPECT().ListPorts(ctx, ports.ListOpts{Name: "m1-0"}).Return([]ports.Port{
		{ID: "mine", Name: "m1-0", Description: DefaultPortDescription(owner)},
		{ID: "other-namespace", Name: "m1-0", Description: DefaultPortDescription("other/m1")},
	}, nil)
	m.net.EXPECT().DeletePort(ctx, "mine").Return(nil)
	m.net.EXPECT().ListPorts(ctx, ports.ListOpts{Name: "m1-storage"}).Return([]ports.Port{{ID: "gone", Name: "m1-storage", Description: "user's words"}}, nil)
	m.net.EXPECT().DeletePort(ctx, "gone").Return(err404)
	g.Expect(svc.DeletePorts(ctx, ids)).To(Succeed())
}

func TestDeletePortsTakesThePortsUpstreamCAPOMade(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	m, svc := newMocked(t)
	ids := []PortIdentity{{Name: "m1-0", Description: DefaultPortDescription(owner), UpstreamDescription: UpstreamPortDescription("c")}}
	m.net.EXPECT().ListPorts(ctx, ports.ListOpts{Name: "m1-0"}).Return([]ports.Port{
		{ID: "upstreams", Name: "m1-0", Description: UpstreamPortDescription("c")},
		{ID: "attached", Name: "m1-0", Description: UpstreamPortDescription("c"), DeviceID: "another-server"},
		{ID: "other-cluster", Name: "m1-0", Description: UpstreamPortDescription("d")},
	}, nil)
	m.net.EXPECT().DeletePort(ctx, "upstreams").Return(nil)
	g.Expect(svc.DeletePorts(ctx, ids)).To(Succeed(), "only the detached port of this cluster's machine goes")
}

func TestResolveNamesTheField(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	m, svc := newMocked(t)

	m.compute.EXPECT().ListFlavors(ctx, gomock.Any()).Return([]flavors.Flavor{{ID: "f1", Name: "m1.small"}, {ID: "f2", Name: "m1.large"}}, nil).Times(2)
	id, err := svc.ResolveFlavor(ctx, ptr.To("m1.small"), nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(id).To(Equal("f1"))
	_, err = svc.ResolveFlavor(ctx, ptr.To("m1.tiny"), nil)
	_, isSpec := report.AsSpecError(err)
	g.Expect(isSpec).To(BeTrue())
	g.Expect(err).To(MatchError(`spec.flavor: 0 flavors are named "m1.tiny", want exactly one`))

	m.compute.EXPECT().GetFlavor(ctx, "nope").Return(nil, err404)
	_, err = svc.ResolveFlavor(ctx, nil, ptr.To("nope"))
	g.Expect(err).To(MatchError("spec.flavorID: flavor nope does not exist"))

	m.image.EXPECT().ListImages(ctx, images.ListOpts{Name: "ubuntu", Tags: []string{"k8s"}}).Return([]images.Image{{ID: "i1"}, {ID: "i2"}}, nil)
	_, err = svc.ResolveImage(ctx, &infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("ubuntu"), Tags: []string{"k8s"}}})
	_, isSpec = report.AsSpecError(err)
	g.Expect(isSpec).To(BeTrue())
	g.Expect(err).To(MatchError(`spec.image.filter: {name=ubuntu, tags=k8s} matches 2 images, want exactly one`))

	m.image.EXPECT().GetImage(ctx, "i9").Return(nil, err404)
	_, err = svc.ResolveImage(ctx, &infrav1.ImageParam{ID: ptr.To("i9")})
	g.Expect(err).To(MatchError("spec.image.id: image i9 does not exist"))

	m.compute.EXPECT().ListServerGroups(ctx, gomock.Any()).Return([]servergroups.ServerGroup{{ID: "g1", Name: "cp"}}, nil).Times(2)
	groupID, err := svc.ResolveServerGroup(ctx, &infrav1.ServerGroupParam{Filter: &infrav1.ServerGroupFilter{Name: ptr.To("cp")}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(groupID).To(Equal("g1"))
	_, err = svc.ResolveServerGroup(ctx, &infrav1.ServerGroupParam{ID: ptr.To("g2")})
	g.Expect(err).To(MatchError("spec.serverGroup.id: server group g2 does not exist"))
	groupID, err = svc.ResolveServerGroup(ctx, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(groupID).To(BeEmpty())

	m.compute.EXPECT().GetKeyPair(ctx, "typo").Return(nil, err404)
	g.Expect(svc.CheckKeyPair(ctx, "typo")).To(MatchError(`spec.sshKeyName: key pair "typo" does not exist`))
	g.Expect(svc.CheckKeyPair(ctx, "")).To(Succeed())
}

func TestAddresses(t *testing.T) {
	g := NewWithT(t)
	server := &servers.Server{Name: "m1", Addresses: map[string]any{
		"cluster-net": []any{
			map[string]any{"addr": "fd00::5", "OS-EXT-IPS:type": "fixed"},
			map[string]any{"addr": "10.6.0.7", "OS-EXT-IPS:type": "fixed"},
			map[string]any{"addr": "172.24.4.9", "OS-EXT-IPS:type": "floating"},
		},
		"a-storage": []any{map[string]any{"addr": "192.168.9.4", "OS-EXT-IPS:type": "fixed"}},
	}}
	g.Expect(Addresses(server)).To(Equal([]clusterv1.MachineAddress{
		{Type: clusterv1.MachineInternalDNS, Address: "m1"},
		{Type: clusterv1.MachineInternalIP, Address: "192.168.9.4"},
		{Type: clusterv1.MachineInternalIP, Address: "fd00::5"},
		{Type: clusterv1.MachineInternalIP, Address: "10.6.0.7"},
		{Type: clusterv1.MachineExternalIP, Address: "172.24.4.9"},
	}))
	g.Expect(FixedAddress(server, "cluster-net")).To(Equal("10.6.0.7"), "IPv4 first, never the floating address")
	g.Expect(FixedAddress(server, "missing")).To(BeEmpty())
}

// Magnum's server groups feature asks for its hints in spec.schedulerHintAdditionalProperties:
// each reaches Nova in os:scheduler_hints under its name, with its type, beside the group.
func TestCreatePassesTheSchedulerHints(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	m, svc := newMocked(t)
	spec := instanceSpec()
	spec.Ports[0].DisablePortSecurity = ptr.To(true)
	spec.ServerGroupID = "5b9a3c1e-2f4d-4c6a-9e8b-1d2c3b4a5f60"
	spec.SchedulerHints = SchedulerHints([]infrav1.SchedulerHintAdditionalProperty{
		{Name: "different_host", Value: infrav1.SchedulerHintAdditionalValue{Type: "String", String: ptr.To("server-9")}},
		{Name: "magnum.openstack.org/nodegroup", Value: infrav1.SchedulerHintAdditionalValue{Type: "Bool", Bool: ptr.To(true)}},
		{Name: "weight", Value: infrav1.SchedulerHintAdditionalValue{Type: "Number", Number: ptr.To(3)}},
	})
	m.net.EXPECT().ListPorts(ctx, gomock.Any()).Return([]ports.Port{{ID: "left", Name: "m1-0", Description: DefaultPortDescription(owner)}}, nil)
	m.net.EXPECT().ReplaceAllTags(ctx, "ports", "left", gomock.Any()).Return([]string{"team-a"}, nil)
	m.compute.EXPECT().CreateServer(ctx, gomock.Any(), gomock.Any()).DoAndReturn(
		func(_ context.Context, _ servers.CreateOptsBuilder, hints servers.SchedulerHintOptsBuilder) (*servers.Server, error) {
			g.Expect(wire(g, hints.ToSchedulerHintsMap)).To(Equal(map[string]any{"os:scheduler_hints": map[string]any{
				"group": "5b9a3c1e-2f4d-4c6a-9e8b-1d2c3b4a5f60", "different_host": "server-9", "magnum.openstack.org/nodegroup": true, "weight": float64(3),
			}}))
			return &servers.Server{ID: "server-1"}, nil
		})
	_, err := svc.Create(ctx, spec)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(SchedulerHints(nil)).To(BeNil(), "no hints, no extra field")
}

// A hint named group would replace the server group in Nova's request: refused before anything
// is made.
func TestCreateRefusesAGroupHintBesideTheServerGroup(t *testing.T) {
	g := NewWithT(t)
	_, svc := newMocked(t)
	spec := instanceSpec()
	spec.SchedulerHints = map[string]any{"group": "another-group"}
	_, err := svc.Create(context.Background(), spec)
	g.Expect(err).To(MatchError(ContainSubstring("spec.schedulerHintAdditionalProperties: names the hint group, which spec.serverGroup sets already")))
}
