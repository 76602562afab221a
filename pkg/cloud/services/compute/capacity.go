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

package compute

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// TemplateCapacity is what a machine of spec will have, for autoscaling from zero: the flavor's
// vCPUs and memory, the root volume's size or else the flavor's disk as ephemeral storage, linux,
// and the image's architecture when Glance records one (x86_64 is amd64, aarch64 is arm64). An
// image given only by an ORC reference, or one the cloud does not resolve, leaves the
// architecture out.
func TemplateCapacity(ctx context.Context, s *Service, spec *infrav1.OpenStackMachineSpec) (*infrav1.OpenStackMachineTemplateStatus, error) {
	id, err := s.ResolveFlavor(ctx, spec.Flavor, spec.FlavorID)
	if err != nil {
		return nil, err
	}
	flavor, err := s.compute.GetFlavor(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("getting flavor %s: %w", id, err)
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewQuantity(int64(flavor.VCPUs), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(int64(flavor.RAM)*1024*1024, resource.BinarySI),
	}
	disk := flavor.Disk
	if spec.RootVolume != nil && spec.RootVolume.SizeGiB > 0 {
		disk = spec.RootVolume.SizeGiB
	}
	if disk > 0 {
		capacity[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(int64(disk)*1024*1024*1024, resource.BinarySI)
	}
	status := &infrav1.OpenStackMachineTemplateStatus{Capacity: capacity, NodeInfo: &infrav1.NodeInfo{OperatingSystem: "linux"}}
	if spec.Image.ImageRef == nil {
		// The architecture is a hint: an image the cloud does not resolve leaves it out, and the
		// capacity stands.
		if imageID, err := s.ResolveImage(ctx, &spec.Image); err == nil {
			if image, err := s.image.GetImage(ctx, imageID); err == nil {
				status.NodeInfo.Architecture = architecture(image.Properties["architecture"])
			}
		}
	}
	return status, nil
}

// architecture is Glance's architecture property as Kubernetes names it.
func architecture(v any) string {
	switch a, _ := v.(string); a {
	case "x86_64", "amd64":
		return "amd64"
	case "aarch64", "arm64":
		return "arm64"
	default:
		if len(a) > 32 {
			return ""
		}
		return a
	}
}
