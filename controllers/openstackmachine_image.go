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
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// +kubebuilder:rbac:groups=openstack.k-orc.cloud,resources=images,verbs=get

// orcImageGVK is the OpenStack Resource Controller's Image, which spec.image.imageRef names.
var orcImageGVK = schema.GroupVersionKind{Group: "openstack.k-orc.cloud", Version: "v1alpha1", Kind: "Image"}

var imageRefPath = field.NewPath("spec", "image", "imageRef", "name")

// imageWaiting is the answer of orcImageID while the machine waits for its ORC Image.
type imageWaiting struct{ message string }

func (e *imageWaiting) Error() string { return e.message }

// orcImageID is the Glance image ID of the ORC Image spec.image.imageRef names, in the machine's
// namespace and no other: ORC writes it into the Image's status once the image is available. An
// Image that does not exist yet, or that ORC has not made available, is an *imageWaiting; a
// management cluster without ORC's Image kind is a refusal naming the field.
func (m *machineReconcile) orcImageID(ctx context.Context) (string, error) {
	name := m.osm.Spec.Image.ImageRef.Name
	image := &unstructured.Unstructured{}
	image.SetGroupVersionKind(orcImageGVK)
	err := readerOr(m.r.APIReader, m.r.Client).Get(ctx, client.ObjectKey{Namespace: m.osm.Namespace, Name: name}, image)
	switch {
	case apierrors.IsNotFound(err):
		return "", &imageWaiting{fmt.Sprintf("%s: waiting for ORC Image %s/%s, which does not exist", imageRefPath, m.osm.Namespace, name)}
	case meta.IsNoMatchError(err):
		return "", report.Refuted(infrav1.InstanceConfigurationErrorReason, imageRefPath,
			"%s: this management cluster has no ORC Image kind (openstack.k-orc.cloud/v1alpha1): install the OpenStack Resource Controller, or give the image by id or filter", name)
	case err != nil:
		return "", fmt.Errorf("reading ORC Image %s: %w", name, err)
	}
	id, _, _ := unstructured.NestedString(image.Object, "status", "id")
	available, message := orcAvailable(image)
	if id == "" || !available {
		waiting := fmt.Sprintf("%s: waiting for ORC Image %s/%s to be available", imageRefPath, m.osm.Namespace, name)
		if message != "" {
			waiting += " (ORC: " + message + ")"
		}
		return "", &imageWaiting{waiting}
	}
	return id, nil
}

// orcAvailable reads the Available condition ORC sets on its objects, and its message.
func orcAvailable(obj *unstructured.Unstructured) (bool, string) {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		cond, _ := c.(map[string]any)
		if cond["type"] == "Available" {
			message, _ := cond["message"].(string)
			return cond["status"] == "True", message
		}
	}
	return false, ""
}
