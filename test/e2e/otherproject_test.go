//go:build e2e

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

package e2e

import (
	"context"
	"fmt"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/rbacpolicies"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"github.com/gophercloud/utils/v2/openstack/clientconfig"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/internal/localenv"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
)

// adminCloud is the rig's administrator in the suite's clouds.yaml: the tests use it to make a
// second project, as an operator would, never to act for a tenant.
const adminCloud = "capo-admin"

// The tenants corpus's attack from another project: a user of a second project makes a network
// and subnet named as a cluster's network will be, described with the cluster's mark, and shares
// them into the cluster's project with Neutron RBAC, which any user may do. The cluster, created
// after, makes its own network beside the look-alike, its router gets no interface on the
// look-alike's subnet, and its deletion leaves the look-alike as it was.
var _ = Describe("A network another project shares into the cluster's project", func() {
	It("is never adopted, though named and described as the cluster's own", func(ctx SpecContext) {
		name := "shared-" + runID
		other := otherProject(ctx)
		owner := ownership.Owner{Kind: "OpenStackCluster", Namespace: namespace, Name: name}
		lookalike, err := networks.Create(ctx, other, networks.CreateOpts{Name: networking.ResourceName(namespace, name), Description: owner.Description()}).Extract()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) { Expect(networks.Delete(ctx, other, lookalike.ID).ExtractErr()).To(Succeed()) }, NodeTimeout(time.Minute))
		// The range the cluster will ask for, with the attacker's DNS server and routes.
		subnet, err := subnets.Create(ctx, other, subnets.CreateOpts{NetworkID: lookalike.ID, Name: networking.ResourceName(namespace, name),
			Description: owner.Description(), CIDR: "10.41.0.0/24", IPVersion: gophercloud.IPv4, DNSNameservers: []string{"10.41.0.53"},
			HostRoutes: []subnets.HostRoute{{DestinationCIDR: "0.0.0.0/0", NextHop: "10.41.0.66"}}}).Extract()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) { Expect(subnets.Delete(ctx, other, subnet.ID).ExtractErr()).To(Succeed()) }, NodeTimeout(time.Minute))
		policy, err := rbacpolicies.Create(ctx, other, rbacpolicies.CreateOpts{Action: rbacpolicies.ActionAccessShared, ObjectType: "network",
			ObjectID: lookalike.ID, TargetTenant: openstack.ProjectID}).Extract()
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) { Expect(rbacpolicies.Delete(ctx, other, policy.ID).ExtractErr()).To(Succeed()) }, NodeTimeout(time.Minute))
		// The attack is in place: the cluster's project sees the look-alike by the cluster's name.
		seen, err := openstack.Network.ListNetworks(ctx, networks.ListOpts{Name: lookalike.Name})
		Expect(err).NotTo(HaveOccurred())
		Expect(seen).To(ContainElement(HaveField("ID", lookalike.ID)), "the shared network is visible in the cluster's project")

		key, _ := createCluster(ctx, name, nil)
		var osc *infrav1.OpenStackCluster
		Eventually(func(g Gomega) {
			osc = getCluster(ctx, g, key)
			g.Expect(conditionTrue(osc.Status.Conditions, infrav1.NetworkReadyCondition)).To(Succeed())
			g.Expect(osc.Status.Router).NotTo(BeNil())
		}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		Expect(osc.Status.Network.ID).NotTo(Equal(lookalike.ID), "the cluster's network is its own")
		own, err := openstack.Network.GetNetwork(ctx, osc.Status.Network.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(own.ProjectID).To(Equal(openstack.ProjectID), "the cluster's network is in its project")
		interfaces, err := openstack.Network.ListPorts(ctx, ports.ListOpts{DeviceID: osc.Status.Router.ID})
		Expect(err).NotTo(HaveOccurred())
		Expect(interfaces).NotTo(BeEmpty(), "the router has an interface on the cluster's subnet")
		for _, p := range interfaces {
			Expect(p.NetworkID).NotTo(Equal(lookalike.ID), "an interface of the cluster's router on the other project's network")
		}
		Expect(eventReasons(ctx, Default, name)).NotTo(ContainElement(HavePrefix("Adopted")), "the cluster adopted nothing")
		GinkgoWriter.Printf("the cluster made network %s beside the other project's look-alike %s\n", osc.Status.Network.ID, lookalike.ID)
		// createCluster's cleanup deletes the cluster first and finds the project as before; the
		// look-alike then goes with its project.
	})
})

// otherProject makes a second project with a member of its own through the rig's administrator,
// and returns a network client of that member; the cleanup removes both.
func otherProject(ctx context.Context) *gophercloud.ServiceClient {
	var clouds clientconfig.Clouds
	Expect(yaml.Unmarshal(cfg.cloudsYAML, &clouds)).To(Succeed())
	ours, ok := clouds.Clouds[cfg.cloudName]
	Expect(ok).To(BeTrue(), "cloud %s", cfg.cloudName)
	_, ok = clouds.Clouds[adminCloud]
	Expect(ok).To(BeTrue(), "the suite's clouds.yaml has the rig's administrator, %s", adminCloud)
	admin, err := localenv.ServiceClient(ctx, cfg.cloudsYAML, adminCloud, "identity")
	Expect(err).NotTo(HaveOccurred())

	name := "capo-e2e-other-" + runID
	project, err := projects.Create(ctx, admin, projects.CreateOpts{Name: name, DomainID: "default"}).Extract()
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) { Expect(projects.Delete(ctx, admin, project.ID).ExtractErr()).To(Succeed()) }, NodeTimeout(time.Minute))
	password := "other-" + runID + "-pw"
	user, err := users.Create(ctx, admin, users.CreateOpts{Name: name, DomainID: "default", Password: password, DefaultProjectID: project.ID}).Extract()
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) { Expect(users.Delete(ctx, admin, user.ID).ExtractErr()).To(Succeed()) }, NodeTimeout(time.Minute))
	pages, err := roles.List(admin, roles.ListOpts{Name: "member"}).AllPages(ctx)
	Expect(err).NotTo(HaveOccurred())
	member, err := roles.ExtractRoles(pages)
	Expect(err).NotTo(HaveOccurred())
	Expect(member).To(HaveLen(1), "Keystone's member role")
	Expect(roles.Assign(ctx, admin, member[0].ID, roles.AssignOpts{UserID: user.ID, ProjectID: project.ID}).ExtractErr()).To(Succeed())

	otherYAML := fmt.Sprintf(`clouds:
  other:
    auth:
      auth_url: %s
      username: %s
      password: %s
      project_name: %s
      user_domain_name: Default
      project_domain_name: Default
    region_name: %s
    identity_api_version: 3
    interface: public
`, ours.AuthInfo.AuthURL, name, password, name, ours.RegionName)
	network, err := localenv.ServiceClient(ctx, []byte(otherYAML), "other", "network")
	Expect(err).NotTo(HaveOccurred())
	return network
}
