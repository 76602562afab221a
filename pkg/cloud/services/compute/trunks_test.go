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
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/attributestags"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/trunks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	. "github.com/onsi/gomega"
	"go.uber.org/mock/gomock"
)

// A port that asks for a trunk gets one, marked with the machine's description, once: an
// attempt that finds the trunk on the port makes none.
func TestEnsurePortMakesItsTrunkOnce(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	m, svc := newMocked(t)
	spec := portSpec()
	spec.Trunk = true
	existing := []ports.Port{{ID: "port-1", Name: "m1-0", Description: DefaultPortDescription(owner), Tags: []string{"team-a", svc.owner.Tag()}}}

	gomock.InOrder(
		m.net.EXPECT().ListPorts(ctx, gomock.Any()).Return(existing, nil),
		m.net.EXPECT().ReplaceAllTags(ctx, "ports", "port-1", gomock.Any()).Return([]string{"team-a"}, nil).AnyTimes(),
		m.net.EXPECT().ListTrunks(ctx, trunks.ListOpts{PortID: "port-1"}).Return(nil, nil),
		m.net.EXPECT().CreateTrunk(ctx, trunks.CreateOpts{PortID: "port-1", Name: "m1-0", Description: mark}).Return(&trunks.Trunk{ID: "trunk-1"}, nil),
	)
	_, err := svc.ensurePort(ctx, &spec)
	g.Expect(err).NotTo(HaveOccurred())

	m.net.EXPECT().ListPorts(ctx, gomock.Any()).Return(existing, nil)
	m.net.EXPECT().ReplaceAllTags(ctx, "ports", "port-1", attributestags.ReplaceAllOpts{Tags: []string{"team-a"}}).Return([]string{"team-a"}, nil).AnyTimes()
	m.net.EXPECT().ListTrunks(ctx, trunks.ListOpts{PortID: "port-1"}).Return([]trunks.Trunk{{ID: "trunk-1", PortID: "port-1"}}, nil)
	_, err = svc.ensurePort(ctx, &spec)
	g.Expect(err).NotTo(HaveOccurred(), "no second trunk: the mock refuses another CreateTrunk")
}

// Deleting a machine's port deletes the trunks on it that the machine (or upstream) made, first;
// another's trunk is left, and Neutron then refuses the port, which the machine reports.
func TestDeletePortsDeletesTheirTrunksFirst(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	m, svc := newMocked(t)
	id := PortIdentity{Name: "m1-0", Description: "the storage port", UpstreamDescription: UpstreamPortDescription("c"), Trunk: true}
	gomock.InOrder(
		m.net.EXPECT().ListPorts(ctx, ports.ListOpts{Name: "m1-0"}).Return([]ports.Port{
			{ID: "port-1", Name: "m1-0", Description: "the storage port", Tags: []string{svc.owner.Tag()}},
		}, nil),
		m.net.EXPECT().ListTrunks(ctx, trunks.ListOpts{PortID: "port-1"}).Return([]trunks.Trunk{
			{ID: "mine", PortID: "port-1", Description: mark},
			{ID: "upstreams", PortID: "port-1", Description: UpstreamPortDescription("c")},
			{ID: "upstreams-with-the-specs-words", PortID: "port-1", Description: "the storage port"},
			{ID: "someone-elses", PortID: "port-1", Description: "a trunk of mine"},
		}, nil),
		m.net.EXPECT().DeleteTrunk(ctx, "mine").Return(nil),
		m.net.EXPECT().DeleteTrunk(ctx, "upstreams").Return(nil),
		m.net.EXPECT().DeleteTrunk(ctx, "upstreams-with-the-specs-words").Return(nil),
		m.net.EXPECT().DeletePort(ctx, "port-1").Return(nil),
	)
	g.Expect(svc.DeletePorts(ctx, []PortIdentity{id})).To(Succeed())
}
