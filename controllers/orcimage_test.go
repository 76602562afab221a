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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cluster-api/util/conditions"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

// orcImage is an ORC Image as ORC leaves it: id "" and available false for one not ready yet.
func orcImage(namespace, name, id string, available bool, message string) *unstructured.Unstructured {
	image := &unstructured.Unstructured{}
	image.SetGroupVersionKind(orcImageGVK)
	image.SetNamespace(namespace)
	image.SetName(name)
	status := map[string]any{"conditions": []any{map[string]any{"type": "Available", "status": string(metav1.ConditionFalse),
		"reason": "Progressing", "message": message, "lastTransitionTime": "2026-11-25T00:00:00Z"}}}
	if available {
		status["conditions"] = []any{map[string]any{"type": "Available", "status": string(metav1.ConditionTrue), "reason": "Success",
			"message": "OpenStack resource is available", "lastTransitionTime": "2026-11-25T00:00:00Z"}}
	}
	if id != "" {
		status["id"] = id
	}
	image.Object["status"] = status
	return image
}

func TestMachineImageFromAnORCImage(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("machines-orc")
	cloud := newCloudWith(t, g, ns, fakeopenstack.Options{})
	addMachineImages(cloud)
	glance := cloud.AddImage("ubuntu-orc")
	clusterReady(g, newCluster(g, ns, false, managedSpec(), true))

	fromORC := func(s *infrav1.OpenStackMachineSpec) {
		s.Image = infrav1.ImageParam{ImageRef: &infrav1.ResourceReference{Name: "ubuntu"}}
	}
	osm := newMachine(g, ns, "vm1", "az1", false, fromORC)
	waitingFor := func(want string) {
		g.Eventually(func(g Gomega) {
			c := conditions.Get(getMachine(g, osm), infrav1.InstanceReadyCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(infrav1.WaitingForImageReason))
			g.Expect(c.Message).To(Equal(want))
		}, eventually, poll).Should(Succeed())
		g.Expect(cloud.Calls()["CreateServer"]).To(BeZero())
	}
	waitingFor("spec.image.imageRef.name: waiting for ORC Image " + ns + "/ubuntu, which does not exist")

	// ORC is still uploading the image.
	image := orcImage(ns, "ubuntu", "", false, "Waiting for glance image content to be uploaded")
	status := image.Object["status"]
	g.Expect(env.Client.Create(ctx, image)).To(Succeed())
	image.Object["status"] = status
	g.Expect(env.Client.Status().Update(ctx, image)).To(Succeed())
	waitingFor("spec.image.imageRef.name: waiting for ORC Image " + ns + "/ubuntu to be available (ORC: Waiting for glance image content to be uploaded)")

	// Available: the server boots from the Glance image ORC reports.
	image.Object["status"] = orcImage(ns, "ubuntu", glance, true, "").Object["status"]
	g.Expect(env.Client.Status().Update(ctx, image)).To(Succeed())
	g.Eventually(func(g Gomega) {
		_, server := machineProvisioned(g, cloud, osm)
		g.Expect(server.Image["id"]).To(Equal(glance))
	}, eventually, poll).Should(Succeed())

	// An Image of another namespace is not this machine's, whatever its name.
	other := testNamespace("machines-orc-other")
	newCloudWith(t, g, other, fakeopenstack.Options{})
	g.Expect(env.Client.Create(ctx, orcImage(other, "foreign", "", false, ""))).To(Succeed())
	foreign := newMachine(g, ns, "vm2", "az1", false, func(s *infrav1.OpenStackMachineSpec) {
		s.Image = infrav1.ImageParam{ImageRef: &infrav1.ResourceReference{Name: "foreign"}}
	})
	g.Eventually(func(g Gomega) {
		c := conditions.Get(getMachine(g, foreign), infrav1.InstanceReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Message).To(Equal("spec.image.imageRef.name: waiting for ORC Image " + ns + "/foreign, which does not exist"))
	}, eventually, poll).Should(Succeed())
	deleteAllMachines(g, ns, osm, foreign)
}
