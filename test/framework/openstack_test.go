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

package framework

import (
	"context"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	. "github.com/onsi/gomega"

	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

func TestDuplicatesFindsNamesCarriedTwiceAmongTheMarked(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	cloud := fakeopenstack.New(fakeopenstack.Options{})
	ext := cloud.AddNetwork("public", true)
	cloud.AddSubnet(ext, "public-subnet", "172.24.4.0/24")
	n := cloud.AddNetwork("k8s-crash-a", false)
	cloud.AddSubnet(n, "k8s-crash-a", "10.0.0.0/24")
	cl := cloud.Clients()

	dups, err := Duplicates(ctx, cl, "crash-a")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(dups).To(BeEmpty(), "one of each")

	for _, name := range []string{"crash-a-cp", "crash-a-cp", "crash-a-worker", "unmarked", "unmarked"} {
		_, err := cl.Network.CreatePort(ctx, ports.CreateOpts{NetworkID: n, Name: name})
		g.Expect(err).NotTo(HaveOccurred())
	}
	for range 2 {
		_, err := cl.Network.CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: ext, Description: "API server of ns/crash-a"})
		g.Expect(err).NotTo(HaveOccurred())
	}
	cloud.AddNetwork("k8s-crash-a", false)

	dups, err = Duplicates(ctx, cl, "crash-a")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(dups).To(ConsistOf(
		"port crash-a-cp x2",
		"floating IP described API server of ns/crash-a x2",
		"network k8s-crash-a x2",
	), "the unmarked ports and the single ones are not reported")
}
