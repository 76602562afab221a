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
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// The machine templates three downstream projects generate, in the shapes their code emits with
// its defaults (read from their sources: vexxhost/magnum-cluster-api's Rust ClusterClass patches,
// azimuth-cloud/capi-helm-charts' openstack-cluster chart, SovereignCloudStack/cluster-stacks'
// scs2 ClusterClass), applied with kubectl's strict field validation and scaled by a
// MachineDeployment as Cluster API does: each machine becomes ready on the real Nova and Cinder.
var _ = Describe("Machine templates as Magnum, Azimuth and SCS generate them", Ordered, func() {
	var (
		name = "downstream-" + runID
		key  client.ObjectKey
	)

	BeforeAll(func(ctx SpecContext) {
		key, _ = createCluster(ctx, name, &infrav1.APIServerLoadBalancer{Enabled: ptr.To(false)}, func(s *infrav1.OpenStackClusterSpec) {
			s.ControlPlaneEndpoint = nil
			s.ManagedSubnets = []infrav1.SubnetSpec{{CIDR: "10.43.0.0/24"}}
		})
		Eventually(func(g Gomega) {
			g.Expect(conditionTrue(getCluster(ctx, g, key).Status.Conditions, infrav1.ReadyCondition)).To(Succeed())
		}).WithTimeout(3*time.Minute).WithPolling(2*time.Second).Should(Succeed(), "the cluster is Ready")
	}, NodeTimeout(4*time.Minute))

	It("runs the machines of each template: server groups and scheduler hints, volumes, a local disk with a volume block, a root volume in Cinder's default zone", func(ctx SpecContext) {
		glance, err := openstack.Image.ListImages(ctx, images.ListOpts{Name: cfg.image})
		Expect(err).NotTo(HaveOccurred())
		Expect(glance).To(HaveLen(1), "the image %s", cfg.image)
		group := createServerGroup(ctx, name+"-magnum", "soft-anti-affinity")
		// Magnum's and Azimuth's templates name a Secret of their own, with their cloud's name.
		identitySecret(ctx, name+"-cloud-config", "default")
		identitySecret(ctx, name+"-cloud-credentials", "openstack")

		shapes := map[string]string{
			// magnum-cluster-api: the image by ID, sshKeyName always set (empty without a key
			// pair), the server group and its different_failure_domain hint always, a docker
			// volume of the default type.
			"magnum": fmt.Sprintf(`
flavor: %s
identityRef:
  cloudName: default
  name: %s-cloud-config
image:
  id: %s
sshKeyName: ""
serverGroup:
  id: %s
schedulerHintAdditionalProperties:
- name: different_failure_domain
  value:
    type: Bool
    bool: false
additionalBlockDevices:
- name: docker
  sizeGiB: 1
  storage:
    type: Volume
    volume:
      type: "__DEFAULT__"
`, cfg.flavor, name, glance[0].ID, group.ID),
			// capi-helm-charts: a root volume whose zone is always written (from: Machine, here on
			// a machine with no failure domain), config drive on with block devices, a Local etcd
			// disk that still carries a volume block, server metadata.
			"azimuth": fmt.Sprintf(`
flavor: m1.ephemeral
identityRef:
  cloudName: openstack
  name: %s-cloud-credentials
image:
  filter:
    name: %s
configDrive: true
rootVolume:
  sizeGiB: 2
  availabilityZone:
    from: Machine
additionalBlockDevices:
- name: etcd
  sizeGiB: 1
  storage:
    type: Local
    volume:
      availabilityZone:
        from: Machine
serverMetadata:
- key: "azimuth-node-group"
  value: "md-0"
`, name, cfg.image),
			// cluster-stacks scs2: no identityRef (the cluster's), the image by name, a root
			// volume of 50 GiB by default, a data volume of type __DEFAULT__.
			"scs": fmt.Sprintf(`
flavor: %s
image:
  filter:
    name: %s
rootVolume:
  sizeGiB: 50
additionalBlockDevices:
- name: data
  sizeGiB: 20
  storage:
    type: Volume
    volume:
      type: __DEFAULT__
`, cfg.flavor, cfg.image),
		}
		var docs []string
		for shape, spec := range shapes {
			docs = append(docs, machineTemplateYAML(name+"-"+shape, spec), machineDeploymentYAML(name, name+"-"+shape))
			secret := createBootstrapSecret(ctx, namespace, name+"-"+shape)
			DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(kube.Delete(ctx, secret))).To(Succeed()) }, NodeTimeout(time.Minute))
		}
		// Registered before the apply, and so run before the identity Secrets go: a spec that
		// fails, even halfway through the apply, leaves no machine without its credentials.
		DeferCleanup(func(ctx SpecContext) { deleteDeployments(ctx, name, shapes) }, NodeTimeout(6*time.Minute))
		run(ctx, strings.Join(docs, "---\n"), planeTool("kubectl"), "apply", "--validate=strict", "-n", namespace, "-f", "-")

		servers := map[string]string{}
		Eventually(func(g Gomega) {
			for shape := range shapes {
				osm := deploymentMachine(ctx, g, name+"-"+shape)
				g.Expect(conditionTrue(osm.Status.Conditions, infrav1.ReadyCondition)).To(Succeed(), shape)
				servers[shape] = ptr.Deref(osm.Status.InstanceID, "")
			}
		}).WithTimeout(5*time.Minute).WithPolling(2*time.Second).Should(Succeed(), "a ready machine of each template")

		By("Magnum's: in the server group, with its docker volume")
		server, err := openstack.Compute.GetServer(ctx, servers["magnum"])
		Expect(err).NotTo(HaveOccurred())
		Expect(server.Status).To(Equal("ACTIVE"))
		g, err := servergroups.Get(ctx, computeClient(ctx), group.ID).Extract()
		Expect(err).NotTo(HaveOccurred())
		Expect(g.Members).To(ConsistOf(server.ID), "the group Magnum made holds the server")
		magnum := deploymentMachine(ctx, Default, name+"-magnum")
		docker := volumeNamed(ctx, magnum.Name+"-docker")
		Expect(*docker).To(And(HaveField("Size", 1), HaveField("Status", "in-use"), HaveField("VolumeType", "__DEFAULT__")))
		Expect(server.AttachedVolumes).To(ConsistOf(HaveField("ID", docker.ID)))

		By("Azimuth's: booted from a root volume in Cinder's default zone, the Local disk no volume, its metadata on the server")
		server, err = openstack.Compute.GetServer(ctx, servers["azimuth"])
		Expect(err).NotTo(HaveOccurred())
		Expect(server.Status).To(Equal("ACTIVE"))
		azimuth := deploymentMachine(ctx, Default, name+"-azimuth")
		Expect(azimuth.Spec.RootVolume).NotTo(BeNil())
		root := volumeNamed(ctx, azimuth.Name+"-root")
		Expect(*root).To(And(HaveField("Size", 2), HaveField("Bootable", "true"), HaveField("Status", "in-use")))
		Expect(root.AvailabilityZone).NotTo(BeEmpty())
		GinkgoWriter.Printf("Azimuth's root volume, asked for with from: Machine on a machine without a failure domain: in Cinder's zone %s; the server in %s\n", root.AvailabilityZone, server.AvailabilityZone)
		Expect(server.AttachedVolumes).To(ConsistOf(HaveField("ID", root.ID)), "the Local etcd disk is no volume")
		Expect(volumesNamed(ctx, azimuth.Name+"-etcd")).To(BeEmpty())
		Expect(server.Metadata).To(HaveKeyWithValue("azimuth-node-group", "md-0"))
		Expect(server.ConfigDrive).To(BeTrue(), "configDrive")

		By("SCS's: a root volume of 50 GiB and a data volume, with the cluster's credentials")
		server, err = openstack.Compute.GetServer(ctx, servers["scs"])
		Expect(err).NotTo(HaveOccurred())
		Expect(server.Status).To(Equal("ACTIVE"))
		scs := deploymentMachine(ctx, Default, name+"-scs")
		Expect(*volumeNamed(ctx, scs.Name+"-root")).To(And(HaveField("Size", 50), HaveField("Bootable", "true")))
		Expect(*volumeNamed(ctx, scs.Name+"-data")).To(And(HaveField("Size", 20), HaveField("VolumeType", "__DEFAULT__")))
		Expect(server.AttachedVolumes).To(HaveLen(2))

		By("deleting the MachineDeployments: the servers and volumes go")
		deleteDeployments(ctx, name, shapes)
		Eventually(func(g Gomega) []string {
			var left []string
			for _, v := range []string{magnum.Name + "-docker", azimuth.Name + "-root", scs.Name + "-root", scs.Name + "-data"} {
				found, err := openstack.Volume.ListVolumes(ctx, volumes.ListOpts{Name: v})
				g.Expect(err).NotTo(HaveOccurred())
				if len(found) > 0 {
					left = append(left, v)
				}
			}
			return left
		}).WithTimeout(2*time.Minute).WithPolling(2*time.Second).Should(BeEmpty(), "the machines' volumes")
	}, NodeTimeout(12*time.Minute))

	It("gives a machine a floating IP from upstream's OpenStackFloatingIPPool, and releases it with the machine and the pool", func(ctx SpecContext) {
		pool := name + "-pool"
		shapes := map[string]string{"pooled": fmt.Sprintf(`
flavor: %s
image:
  filter:
    name: %s
floatingIPPoolRef:
  apiGroup: infrastructure.cluster.x-k8s.io
  kind: OpenStackFloatingIPPool
  name: %s
`, cfg.flavor, cfg.image, pool)}
		// The pool in upstream's v1alpha1 shape, with the cluster's credentials.
		poolYAML := fmt.Sprintf(`apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: OpenStackFloatingIPPool
metadata:
  name: %s
spec:
  identityRef:
    name: cloud
    cloudName: %s
  floatingIPNetwork:
    filter:
      name: %s
  maxIPs: 1
  reclaimPolicy: Delete
`, pool, cfg.cloudName, cfg.externalNetwork)
		secret := createBootstrapSecret(ctx, namespace, name+"-pooled")
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(kube.Delete(ctx, secret))).To(Succeed()) }, NodeTimeout(time.Minute))
		poolObj := &unstructured.Unstructured{}
		poolObj.SetGroupVersionKind(schema.GroupVersionKind{Group: infrav1.GroupVersion.Group, Version: "v1alpha1", Kind: "OpenStackFloatingIPPool"})
		poolObj.SetNamespace(namespace)
		poolObj.SetName(pool)
		// Registered before the apply: the machine goes first, then the pool.
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(kube.Delete(ctx, poolObj))).To(Succeed())
			waitGone(ctx, poolObj)
		}, NodeTimeout(6*time.Minute))
		DeferCleanup(func(ctx SpecContext) { deleteDeployments(ctx, name, shapes) }, NodeTimeout(6*time.Minute))
		docs := []string{poolYAML, machineTemplateYAML(name+"-pooled", shapes["pooled"]), machineDeploymentYAML(name, name+"-pooled")}
		run(ctx, strings.Join(docs, "---\n"), planeTool("kubectl"), "apply", "--validate=strict", "-n", namespace, "-f", "-")

		var osm *infrav1.OpenStackMachine
		Eventually(func(g Gomega) {
			osm = deploymentMachine(ctx, g, name+"-pooled")
			g.Expect(conditionTrue(osm.Status.Conditions, infrav1.FloatingAddressFromPoolReadyCondition)).To(Succeed())
			g.Expect(conditionTrue(osm.Status.Conditions, infrav1.ReadyCondition)).To(Succeed())
		}).WithTimeout(5*time.Minute).WithPolling(2*time.Second).Should(Succeed(), "the machine is ready with its floating IP")

		By("the pool's floating IP, described with its mark, is on the server's port in Neutron")
		claim := &ipamv1.IPAddressClaim{}
		Expect(kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: osm.Name + "-floating-ip-address"}, claim)).To(Succeed())
		address := &ipamv1.IPAddress{}
		Expect(kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: claim.Status.AddressRef.Name}, address)).To(Succeed())
		fips, err := openstack.Network.ListFloatingIPs(ctx, floatingips.ListOpts{FloatingIP: address.Spec.Address})
		Expect(err).NotTo(HaveOccurred())
		Expect(fips).To(HaveLen(1))
		fip := fips[0]
		Expect(fip.Description).To(Equal("Cluster API OpenStack provider: floating IP pool " + namespace + "/" + pool))
		onServer, err := openstack.Network.ListPorts(ctx, ports.ListOpts{DeviceID: ptr.Deref(osm.Status.InstanceID, "")})
		Expect(err).NotTo(HaveOccurred())
		Expect(onServer).To(HaveLen(1))
		Expect(fip.PortID).To(Equal(onServer[0].ID))
		Eventually(func(g Gomega) {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(poolObj.GroupVersionKind())
			g.Expect(kube.Get(ctx, client.ObjectKeyFromObject(poolObj), got)).To(Succeed())
			claimed, _, _ := unstructured.NestedStringSlice(got.Object, "status", "claimedIPs")
			g.Expect(claimed).To(ConsistOf(fip.FloatingIP))
		}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed(), "the pool's status lists the address")

		By("deleting the MachineDeployment: the pool releases the address (reclaimPolicy Delete)")
		deleteDeployments(ctx, name, shapes)
		Eventually(func(g Gomega) {
			_, err := openstack.Network.GetFloatingIP(ctx, fip.ID)
			g.Expect(gophercloud.ResponseCodeIs(err, http.StatusNotFound)).To(BeTrue(), "%v", err)
		}).WithTimeout(2*time.Minute).WithPolling(2*time.Second).Should(Succeed(), "floating IP %s is released", fip.FloatingIP)

		By("deleting the pool: it goes, and the cluster's deletion then finds the project as it was")
		Expect(kube.Delete(ctx, poolObj)).To(Succeed())
		waitGone(ctx, poolObj)
	}, NodeTimeout(15*time.Minute))
})

// deleteDeployments deletes the MachineDeployments <name>-<shape> of shapes at once, and waits
// until each is gone with its machines.
func deleteDeployments(ctx SpecContext, name string, shapes map[string]string) {
	for shape := range shapes {
		md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name + "-" + shape}}
		Expect(client.IgnoreNotFound(kube.Delete(ctx, md))).To(Succeed())
	}
	for shape := range shapes {
		waitGone(ctx, &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name + "-" + shape}})
	}
}

// identitySecret makes an identity Secret called secretName in the suite's namespace that holds
// the suite's cloud under the name cloud, as another project's tooling names it; deleted when the
// calling node ends.
func identitySecret(ctx SpecContext, secretName, cloud string) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: namespace},
		Data: map[string][]byte{"clouds.yaml": oneCloud(cfg.cloudsYAML, cfg.cloudName, cloud)}}
	Expect(kube.Create(ctx, secret)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		Expect(client.IgnoreNotFound(kube.Delete(ctx, secret))).To(Succeed())
	}, NodeTimeout(time.Minute))
}

// machineTemplateYAML is an OpenStackMachineTemplate in v1beta1, as the downstream projects
// write it, with spec (YAML) as its template's spec.
func machineTemplateYAML(name, spec string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: infrastructure.cluster.x-k8s.io/v1beta1\nkind: OpenStackMachineTemplate\nmetadata:\n  name: %s\nspec:\n  template:\n    spec:\n", name)
	for _, line := range strings.Split(strings.TrimSpace(spec), "\n") {
		b.WriteString("      " + line + "\n")
	}
	return b.String()
}

// machineDeploymentYAML is a MachineDeployment of one machine of cluster from the template
// called name, its bootstrap data the Secret <name>-bootstrap (no bootstrap provider runs it).
func machineDeploymentYAML(cluster, name string) string {
	return fmt.Sprintf(`apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  name: %[2]s
spec:
  clusterName: %[1]s
  replicas: 1
  selector:
    matchLabels:
      e2e.capo.example.com/template: %[2]s
  template:
    metadata:
      labels:
        e2e.capo.example.com/template: %[2]s
    spec:
      clusterName: %[1]s
      bootstrap:
        dataSecretName: %[2]s-bootstrap
      infrastructureRef:
        apiGroup: infrastructure.cluster.x-k8s.io
        kind: OpenStackMachineTemplate
        name: %[2]s
`, cluster, name)
}

// deploymentMachine is the OpenStackMachine of the one Machine of the MachineDeployment md.
func deploymentMachine(ctx SpecContext, g Gomega, md string) *infrav1.OpenStackMachine {
	machines := &clusterv1.MachineList{}
	g.Expect(kube.List(ctx, machines, client.InNamespace(namespace), client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: md})).To(Succeed())
	g.Expect(machines.Items).To(HaveLen(1), "the machines of %s", md)
	osm := &infrav1.OpenStackMachine{}
	g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: machines.Items[0].Spec.InfrastructureRef.Name}, osm)).To(Succeed())
	return osm
}
