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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OpenStackClusterTemplateSpec is the desired state of an OpenStackClusterTemplate.
type OpenStackClusterTemplateSpec struct {
	// +required
	Template OpenStackClusterTemplateResource `json:"template"`
}

// OpenStackClusterTemplateResource is the OpenStackCluster a ClusterClass stamps out.
type OpenStackClusterTemplateResource struct {
	// +required
	Spec OpenStackClusterSpec `json:"spec"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=openstackclustertemplates,scope=Namespaced,categories=cluster-api,shortName=osct
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1_v1beta2"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// OpenStackClusterTemplate is a template for OpenStackClusters, used by ClusterClass.
type OpenStackClusterTemplate struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec OpenStackClusterTemplateSpec `json:"spec"`
}

// +kubebuilder:object:root=true

// OpenStackClusterTemplateList is a list of OpenStackClusterTemplates.
type OpenStackClusterTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenStackClusterTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &OpenStackClusterTemplate{}, &OpenStackClusterTemplateList{})
}
