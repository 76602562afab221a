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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/cluster-api/util/topology"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-infrastructure-cluster-x-k8s-io-v1beta1-openstackclustertemplate,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=infrastructure.cluster.x-k8s.io,resources=openstackclustertemplates,versions=v1beta1,name=validation.openstackclustertemplate.infrastructure.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1
// +kubebuilder:webhook:verbs=create;update,path=/validate-infrastructure-cluster-x-k8s-io-v1beta1-openstackmachinetemplate,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=infrastructure.cluster.x-k8s.io,resources=openstackmachinetemplates,versions=v1beta1,name=validation.openstackmachinetemplate.infrastructure.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

const templateImmutableDetail = "cannot be changed: templates are immutable; create a new template and point the ClusterClass or the owner at it"

// OpenStackClusterTemplate validates OpenStackClusterTemplates: their spec is immutable.
type OpenStackClusterTemplate struct{}

var _ admission.Validator[*infrav1.OpenStackClusterTemplate] = &OpenStackClusterTemplate{}

// ValidateCreate accepts everything the schema accepted.
func (*OpenStackClusterTemplate) ValidateCreate(context.Context, *infrav1.OpenStackClusterTemplate) (admission.Warnings, error) {
	return nil, nil
}

// ValidateDelete accepts every deletion.
func (*OpenStackClusterTemplate) ValidateDelete(context.Context, *infrav1.OpenStackClusterTemplate) (admission.Warnings, error) {
	return nil, nil
}

// ValidateUpdate rejects any change of spec.template.spec, except in the topology controller's
// dry-run requests (it uses them to compute what a ClusterClass would change).
func (*OpenStackClusterTemplate) ValidateUpdate(ctx context.Context, oldObj, newObj *infrav1.OpenStackClusterTemplate) (admission.Warnings, error) {
	return nil, validateTemplateUpdate(ctx, newObj, infrav1.GroupVersion.WithKind("OpenStackClusterTemplate").GroupKind(),
		&oldObj.Spec.Template.Spec, &newObj.Spec.Template.Spec)
}

// OpenStackMachineTemplate validates OpenStackMachineTemplates: their spec is immutable.
type OpenStackMachineTemplate struct{}

var _ admission.Validator[*infrav1.OpenStackMachineTemplate] = &OpenStackMachineTemplate{}

// ValidateCreate accepts everything the schema accepted, and warns of what the controller
// ignores (ignoredMachineFields).
func (*OpenStackMachineTemplate) ValidateCreate(_ context.Context, obj *infrav1.OpenStackMachineTemplate) (admission.Warnings, error) {
	return ignoredMachineFields(field.NewPath("spec", "template", "spec"), &obj.Spec.Template.Spec), nil
}

// ValidateDelete accepts every deletion.
func (*OpenStackMachineTemplate) ValidateDelete(context.Context, *infrav1.OpenStackMachineTemplate) (admission.Warnings, error) {
	return nil, nil
}

// ValidateUpdate rejects any change of spec.template.spec, except in the topology controller's
// dry-run requests.
func (*OpenStackMachineTemplate) ValidateUpdate(ctx context.Context, oldObj, newObj *infrav1.OpenStackMachineTemplate) (admission.Warnings, error) {
	return nil, validateTemplateUpdate(ctx, newObj, infrav1.GroupVersion.WithKind("OpenStackMachineTemplate").GroupKind(),
		&oldObj.Spec.Template.Spec, &newObj.Spec.Template.Spec)
}

func validateTemplateUpdate(ctx context.Context, obj metav1.Object, gk schema.GroupKind, oldSpec, newSpec any) error {
	if req, err := admission.RequestFromContext(ctx); err == nil && topology.IsDryRunRequest(req, obj) {
		return nil
	}
	errs := forbidChanges(field.NewPath("spec", "template", "spec"), oldSpec, newSpec, templateImmutableDetail)
	if len(errs) > 0 {
		return invalid(ctx, gk, obj.GetName(), errs)
	}
	return nil
}
