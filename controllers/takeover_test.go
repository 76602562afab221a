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
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"

	managerscheme "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scheme"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// Taking over what upstream CAPO v0.14 left.

func TestConditionsAnotherControllerLeftAreDropped(t *testing.T) {
	g := NewWithT(t)
	osc := &infrav1.OpenStackCluster{}
	osc.Status.Conditions = []metav1.Condition{
		{Type: "RouterReady", Status: metav1.ConditionTrue},                                  // upstream CAPO v0.14's, no reason
		{Type: infrav1.ReadyCondition, Status: metav1.ConditionTrue},                         // upstream's Ready: no reason either
		{Type: infrav1.NetworkReadyCondition, Status: metav1.ConditionTrue, Reason: "Ready"}, // ours
	}
	dropForeignConditions(osc, append([]string{infrav1.ReadyCondition}, clusterConditions...))
	g.Expect(osc.Status.Conditions).To(HaveLen(1))
	g.Expect(osc.Status.Conditions[0].Type).To(Equal(infrav1.NetworkReadyCondition))
}

func TestAnExternallyManagedClusterIsLeftAlone(t *testing.T) {
	g := NewWithT(t)
	scheme, err := managerscheme.New()
	g.Expect(err).NotTo(HaveOccurred())
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", UID: "uid-cluster"}}
	osc := &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns",
		Annotations:     map[string]string{clusterv1.ManagedByAnnotation: "someone-else"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "c", UID: "uid-cluster"}}}}
	kube := fakeclient.NewClientBuilder().WithScheme(scheme).WithObjects(cluster, osc).WithStatusSubresource(osc).Build()
	r := &OpenStackClusterReconciler{Client: kube}

	res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(osc)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(BeZero())
	got := &infrav1.OpenStackCluster{}
	g.Expect(kube.Get(ctx, client.ObjectKeyFromObject(osc), got)).To(Succeed())
	g.Expect(got.Finalizers).To(BeEmpty(), "no finalizer: nothing of it is this provider's")
	g.Expect(got.Status.Conditions).To(BeEmpty(), "no status written")
}

func TestTheServerIDComesFromTheStatusElseTheProviderID(t *testing.T) {
	g := NewWithT(t)
	const id = "8d8e5d2a-8a3b-4b4e-9f3f-5b2a1c0d9e7f"
	osm := func(instanceID, providerID string) *infrav1.OpenStackMachine {
		m := &infrav1.OpenStackMachine{}
		if instanceID != "" {
			m.Status.InstanceID = &instanceID
		}
		if providerID != "" {
			m.Spec.ProviderID = &providerID
		}
		return m
	}
	g.Expect(knownServerID(osm(id, "openstack:///other"))).To(Equal(id))
	g.Expect(knownServerID(osm("", "openstack:///"+id))).To(Equal(id), "after clusterctl move")
	g.Expect(knownServerID(osm("", "openstack://RegionOne/"+id))).To(Equal(id), "as upstream CAPO writes it with a region")
	g.Expect(knownServerID(osm("", "aws:///"+id))).To(BeEmpty())
	g.Expect(knownServerID(osm("", "openstack:///not-a-server-id"))).To(BeEmpty())
	g.Expect(knownServerID(osm("", ""))).To(BeEmpty())
}
