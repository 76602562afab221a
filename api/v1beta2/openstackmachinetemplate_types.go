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

package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// OpenStackMachineTemplateSpec is the desired state of an OpenStackMachineTemplate.
type OpenStackMachineTemplateSpec struct {
	// +required
	Template OpenStackMachineTemplateResource `json:"template"`
}

// OpenStackMachineTemplateResource is the OpenStackMachine a MachineDeployment or control plane
// stamps out.
type OpenStackMachineTemplateResource struct {
	// +required
	Spec OpenStackMachineSpec `json:"spec"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=openstackmachinetemplates,scope=Namespaced,categories=cluster-api,shortName=osmt
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Flavor",type="string",JSONPath=".spec.template.spec.flavor.filter.name",description="Nova flavor of the machines, when selected by name"
// +kubebuilder:printcolumn:name="Image",type="string",JSONPath=".spec.template.spec.image.filter.name",description="Glance image of the machines, when selected by name"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// OpenStackMachineTemplate is a template for OpenStackMachines.
type OpenStackMachineTemplate struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec OpenStackMachineTemplateSpec `json:"spec"`

	// Status is what a machine of the template will have, for autoscaling from zero.
	// +optional
	Status infrav1.OpenStackMachineTemplateStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// OpenStackMachineTemplateList is a list of OpenStackMachineTemplates.
type OpenStackMachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenStackMachineTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &OpenStackMachineTemplate{}, &OpenStackMachineTemplateList{})
}
