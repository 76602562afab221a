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

package webhooks

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

func machineSpec() infrav1.OpenStackMachineSpec {
	return infrav1.OpenStackMachineSpec{
		Flavor: ptr.To("m1.medium"),
		Image:  infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("ubuntu")}},
		Ports:  []infrav1.PortOpts{{Tags: []string{"a"}}},
	}
}

func TestOpenStackMachineValidateUpdate(t *testing.T) {
	tests := []struct {
		name       string
		change     func(*infrav1.OpenStackMachineSpec)
		wantFields []string
	}{
		{name: "providerID may be set", change: func(s *infrav1.OpenStackMachineSpec) { s.ProviderID = ptr.To("openstack:///id") }},
		{name: "identityRef may change", change: func(s *infrav1.OpenStackMachineSpec) {
			s.IdentityRef = &infrav1.OpenStackIdentityReference{Name: "other", CloudName: "openstack"}
		}},
		{name: "flavor may not change", change: func(s *infrav1.OpenStackMachineSpec) { s.Flavor = ptr.To("m1.large") }, wantFields: []string{"spec.flavor"}},
		{name: "image may not change", change: func(s *infrav1.OpenStackMachineSpec) { s.Image.Filter.Name = ptr.To("debian") }, wantFields: []string{"spec.image.filter.name"}},
		{name: "ports may not change", change: func(s *infrav1.OpenStackMachineSpec) { s.Ports[0].Tags = []string{"b"} }, wantFields: []string{"spec.ports"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			oldObj := &infrav1.OpenStackMachine{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Spec: machineSpec()}
			newObj := oldObj.DeepCopy()
			tt.change(&newObj.Spec)
			_, err := (&OpenStackMachine{}).ValidateUpdate(context.Background(), oldObj, newObj)
			if len(tt.wantFields) == 0 {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
			for _, f := range tt.wantFields {
				g.Expect(err.Error()).To(ContainSubstring(f + ": Forbidden"))
			}
		})
	}
}

// dryRunContext is what the topology controller's server-side dry-run looks like to a webhook.
func dryRunContext(obj metav1.Object) context.Context {
	obj.SetAnnotations(map[string]string{clusterv1.TopologyDryRunAnnotation: ""})
	return admission.NewContextWithRequest(context.Background(), admission.Request{
		AdmissionRequest: admissionv1.AdmissionRequest{DryRun: ptr.To(true)},
	})
}

func TestTemplatesAreImmutable(t *testing.T) {
	g := NewWithT(t)

	oldMT := &infrav1.OpenStackMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: "mt"}}
	oldMT.Spec.Template.Spec = machineSpec()
	newMT := oldMT.DeepCopy()
	newMT.Spec.Template.Spec.Flavor = ptr.To("m1.large")
	_, err := (&OpenStackMachineTemplate{}).ValidateUpdate(context.Background(), oldMT, newMT)
	g.Expect(err).To(MatchError(ContainSubstring("spec.template.spec.flavor: Forbidden: " + templateImmutableDetail)))
	_, err = (&OpenStackMachineTemplate{}).ValidateUpdate(dryRunContext(newMT), oldMT, newMT)
	g.Expect(err).NotTo(HaveOccurred(), "the topology controller's dry-run requests are allowed")
	_, err = (&OpenStackMachineTemplate{}).ValidateUpdate(context.Background(), oldMT, oldMT.DeepCopy())
	g.Expect(err).NotTo(HaveOccurred())

	oldCT := &infrav1.OpenStackClusterTemplate{ObjectMeta: metav1.ObjectMeta{Name: "ct"}}
	oldCT.Spec.Template.Spec = multiAZCluster().Spec
	newCT := oldCT.DeepCopy()
	newCT.Spec.Template.Spec.APIServerLoadBalancer.AllowCrossAZLoadBalancerMembers = ptr.To(true)
	_, err = (&OpenStackClusterTemplate{}).ValidateUpdate(context.Background(), oldCT, newCT)
	g.Expect(err).To(MatchError(ContainSubstring("spec.template.spec.apiServerLoadBalancer.allowCrossAZLoadBalancerMembers: Forbidden")))
	_, err = (&OpenStackClusterTemplate{}).ValidateUpdate(dryRunContext(newCT), oldCT, newCT)
	g.Expect(err).NotTo(HaveOccurred())
}

func TestForbidChangesNamesTheDeepestField(t *testing.T) {
	g := NewWithT(t)
	older := multiAZCluster().Spec
	newer := *older.DeepCopy()
	newer.APIServerLoadBalancer.Monitor = &infrav1.APIServerLoadBalancerMonitor{Delay: 1}
	newer.APIServerLoadBalancer.Network.ID = ptr.To(sub3)
	errs := forbidChanges(nil, &older, &newer, "x")
	g.Expect(errs).To(HaveLen(2))
	g.Expect(errs[0].Field).To(Equal("apiServerLoadBalancer.monitor"))
	g.Expect(errs[1].Field).To(Equal("apiServerLoadBalancer.network.id"))
	g.Expect(forbidChanges(nil, &older, older.DeepCopy(), "x")).To(BeEmpty())
}

func TestVolumeOfALocalDeviceIsAcceptedWithAWarning(t *testing.T) {
	g := NewWithT(t)
	spec := machineSpec()
	spec.AdditionalBlockDevices = []infrav1.AdditionalBlockDevice{
		{Name: "data", SizeGiB: 2, Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice, Volume: &infrav1.BlockDeviceVolume{Type: "ssd"}}},
		{Name: "etcd", SizeGiB: 1, Storage: infrav1.BlockDeviceStorage{Type: infrav1.LocalBlockDevice, Volume: &infrav1.BlockDeviceVolume{Type: "ssd"}}},
	}
	warnings, err := (&OpenStackMachine{}).ValidateCreate(context.Background(), &infrav1.OpenStackMachine{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Spec: spec})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(warnings).To(Equal(admission.Warnings{"spec.additionalBlockDevices[1].storage.volume: ignored: the device's storage type is Local"}))

	template := &infrav1.OpenStackMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t"}}
	template.Spec.Template.Spec = spec
	warnings, err = (&OpenStackMachineTemplate{}).ValidateCreate(context.Background(), template)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(warnings).To(Equal(admission.Warnings{"spec.template.spec.additionalBlockDevices[1].storage.volume: ignored: the device's storage type is Local"}))

	spec.AdditionalBlockDevices = spec.AdditionalBlockDevices[:1]
	warnings, _ = (&OpenStackMachine{}).ValidateCreate(context.Background(), &infrav1.OpenStackMachine{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Spec: spec})
	g.Expect(warnings).To(BeEmpty())
}
