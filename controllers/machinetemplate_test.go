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
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// Cluster API's autoscaling from zero reads a node group's capacity from its machine template:
// the flavor's CPUs and memory and the root volume's size, with the cluster's credentials when
// the template names none, or the template's own.
func TestMachineTemplateReportsItsCapacity(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("template-capacity")
	cloud := newCloud(t, g, ns)
	addMachineImages(cloud)
	cloud.AddFlavor("m1.large", 8, 16384)
	newCluster(g, ns, false, managedSpec(), true)
	osmt := &infrav1.OpenStackMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "workers", Labels: map[string]string{clusterv1.ClusterNameLabel: "c"}},
		Spec: infrav1.OpenStackMachineTemplateSpec{Template: infrav1.OpenStackMachineTemplateResource{Spec: infrav1.OpenStackMachineSpec{
			Flavor:     ptr.To("m1.small"),
			Image:      infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("ubuntu")}},
			RootVolume: &infrav1.RootVolume{SizeGiB: 20},
		}}},
	}
	g.Expect(env.Client.Create(ctx, osmt)).To(Succeed())
	capacity := func(g Gomega) corev1.ResourceList {
		got := &infrav1.OpenStackMachineTemplate{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(osmt), got)).To(Succeed())
		g.Expect(got.Status.NodeInfo).To(HaveValue(HaveField("OperatingSystem", "linux")))
		return got.Status.Capacity
	}
	g.Eventually(func(g Gomega) {
		c := capacity(g)
		g.Expect(c.Cpu().Equal(resource.MustParse("2"))).To(BeTrue(), "cpu %v", c.Cpu())
		g.Expect(c.Memory().Equal(resource.MustParse("2Gi"))).To(BeTrue(), "memory %v", c.Memory())
		g.Expect(c.StorageEphemeral().Equal(resource.MustParse("20Gi"))).To(BeTrue(), "ephemeral-storage %v", c.StorageEphemeral())
	}, eventually, poll).Should(Succeed())

	// A template that names its own credentials needs no cluster.
	own := &infrav1.OpenStackMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "large"},
		Spec: infrav1.OpenStackMachineTemplateSpec{Template: infrav1.OpenStackMachineTemplateResource{Spec: infrav1.OpenStackMachineSpec{
			Flavor: ptr.To("m1.large"),
			// An image the cloud does not have leaves only the architecture out.
			Image:       infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("not-uploaded-yet")}},
			IdentityRef: &infrav1.OpenStackIdentityReference{Name: "cloud-config", CloudName: "openstack"},
		}}},
	}
	g.Expect(env.Client.Create(ctx, own)).To(Succeed())
	osmt = own
	g.Eventually(func(g Gomega) {
		c := capacity(g)
		g.Expect(c.Cpu().Equal(resource.MustParse("8"))).To(BeTrue(), "cpu %v", c.Cpu())
		g.Expect(c.Memory().Equal(resource.MustParse("16Gi"))).To(BeTrue(), "memory %v", c.Memory())
		g.Expect(c).NotTo(HaveKey(corev1.ResourceEphemeralStorage), "the flavor has no disk and there is no root volume")
	}, eventually, poll).Should(Succeed())
}
