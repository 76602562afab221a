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

// Package v1alpha1 is the infrastructure.cluster.x-k8s.io/v1alpha1 API of the OpenStack
// provider: the kinds upstream CAPO serves in that version and this provider takes as they are.
// It holds OpenStackClusterIdentity, the cluster-scoped credential an identityRef of type
// ClusterIdentity names, and OpenStackFloatingIPPool, the IPAM pool of floating IPs a machine's
// floatingIPPoolRef names.
// +kubebuilder:object:generate=true
// +groupName=infrastructure.cluster.x-k8s.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this API.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this API to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &OpenStackClusterIdentity{}, &OpenStackClusterIdentityList{},
		&OpenStackFloatingIPPool{}, &OpenStackFloatingIPPoolList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
