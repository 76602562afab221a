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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OpenStackClusterIdentitySpec says where the credential is and which namespaces may use it.
type OpenStackClusterIdentitySpec struct {
	// SecretRef is the Secret that holds clouds.yaml (key "clouds.yaml") and, optionally, a CA
	// bundle (key "cacert"), as the Secret an identityRef of type Secret names.
	// +required
	SecretRef OpenStackCredentialSecretReference `json:"secretRef"`

	// NamespaceSelector selects the namespaces whose objects may use this identity, by the
	// namespace's labels (every namespace has kubernetes.io/metadata.name). Not set: every
	// namespace may (upstream CAPO's meaning). An empty selector ({}) also selects every namespace.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
}

// OpenStackCredentialSecretReference names a Secret in a namespace.
type OpenStackCredentialSecretReference struct {
	// Name is the Secret's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// Namespace is the Secret's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Namespace string `json:"namespace"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=openstackclusteridentities,scope=Cluster,categories=cluster-api,shortName=osci
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Secret Namespace",type="string",JSONPath=".spec.secretRef.namespace",description="Namespace of the credential's Secret"
// +kubebuilder:printcolumn:name="Secret",type="string",JSONPath=".spec.secretRef.name",description="Name of the credential's Secret"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// OpenStackClusterIdentity is an OpenStack credential kept in one namespace, that the objects of
// the namespaces it selects name with identityRef {type: ClusterIdentity, name: <this>}.
type OpenStackClusterIdentity struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says where the credential is and who may use it.
	// +required
	Spec OpenStackClusterIdentitySpec `json:"spec"`
}

// +kubebuilder:object:root=true

// OpenStackClusterIdentityList is a list of OpenStackClusterIdentity.
type OpenStackClusterIdentityList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenStackClusterIdentity `json:"items"`
}
