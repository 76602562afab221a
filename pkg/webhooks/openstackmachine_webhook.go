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
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-infrastructure-cluster-x-k8s-io-v1beta1-openstackmachine,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=infrastructure.cluster.x-k8s.io,resources=openstackmachines,versions=v1beta1,name=validation.openstackmachine.infrastructure.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// OpenStackMachine validates OpenStackMachines: a server is not rebuilt in place, so its spec is
// immutable apart from the provider ID (set by the controller) and the credentials.
type OpenStackMachine struct{}

var _ admission.Validator[*infrav1.OpenStackMachine] = &OpenStackMachine{}

// ValidateCreate accepts everything the schema accepted, and warns of what the controller
// ignores (ignoredMachineFields).
func (*OpenStackMachine) ValidateCreate(_ context.Context, obj *infrav1.OpenStackMachine) (admission.Warnings, error) {
	return ignoredMachineFields(field.NewPath("spec"), &obj.Spec), nil
}

// ignoredMachineFields are the warnings for what upstream CAPO accepts and ignores, and so does
// the controller: a volume under an additional block device of type Local (Azimuth's chart
// writes one under every device).
func ignoredMachineFields(path *field.Path, spec *infrav1.OpenStackMachineSpec) admission.Warnings {
	var warnings admission.Warnings
	for i, d := range spec.AdditionalBlockDevices {
		if d.Storage.Type == infrav1.LocalBlockDevice && d.Storage.Volume != nil {
			warnings = append(warnings, fmt.Sprintf("%s: ignored: the device's storage type is %s", path.Child("additionalBlockDevices").Index(i).Child("storage", "volume"), d.Storage.Type))
		}
	}
	return warnings
}

// ValidateDelete accepts every deletion.
func (*OpenStackMachine) ValidateDelete(context.Context, *infrav1.OpenStackMachine) (admission.Warnings, error) {
	return nil, nil
}

// ValidateUpdate rejects changes to anything but spec.providerID and spec.identityRef.
func (*OpenStackMachine) ValidateUpdate(ctx context.Context, oldObj, newObj *infrav1.OpenStackMachine) (admission.Warnings, error) {
	older, newer := oldObj.Spec.DeepCopy(), newObj.Spec.DeepCopy()
	older.ProviderID = newer.ProviderID
	older.IdentityRef = newer.IdentityRef
	errs := forbidChanges(field.NewPath("spec"), older, newer, "cannot be changed: the server is not rebuilt in place; replace the Machine instead")
	if len(errs) > 0 {
		return nil, invalid(ctx, infrav1.GroupVersion.WithKind("OpenStackMachine").GroupKind(), newObj.Name, errs)
	}
	return nil, nil
}
