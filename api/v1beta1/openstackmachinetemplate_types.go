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

package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// OpenStackMachineTemplateStatus is what a machine of the template will have, for Cluster API's
// autoscaling from zero: the cluster autoscaler reads it when the node group has no node yet.
type OpenStackMachineTemplateStatus struct {
	// Capacity is what a machine's node will have: cpu and memory of the flavor, and
	// ephemeral-storage of its root disk (the root volume's size, else the flavor's disk).
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty"`

	// NodeInfo is the node's operating system and architecture.
	// +optional
	NodeInfo *NodeInfo `json:"nodeInfo,omitempty"`
}

// NodeInfo is what Cluster API's autoscaling from zero reads of a node to be.
type NodeInfo struct {
	// Architecture is the node's CPU architecture (amd64, arm64), from the image's
	// architecture property; not set when the image has none.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Architecture string `json:"architecture,omitempty"`

	// OperatingSystem is the node's operating system: linux.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	OperatingSystem string `json:"operatingSystem,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=openstackmachinetemplates,scope=Namespaced,categories=cluster-api,shortName=osmt
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1_v1beta2"
// +kubebuilder:printcolumn:name="Flavor",type="string",JSONPath=".spec.template.spec.flavor",description="Nova flavor of the machines"
// +kubebuilder:printcolumn:name="Image",type="string",JSONPath=".spec.template.spec.image.filter.name",description="Glance image of the machines, when selected by name"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// OpenStackMachineTemplate is a template for OpenStackMachines.
type OpenStackMachineTemplate struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec OpenStackMachineTemplateSpec `json:"spec"`

	// +optional
	Status OpenStackMachineTemplateStatus `json:"status,omitempty"`
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
