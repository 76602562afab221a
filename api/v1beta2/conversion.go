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
	"encoding/json"
	"fmt"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// TemplateMetadataAnnotation keeps, on the v1beta1 form (the hub) of an OpenStackClusterTemplate,
// the spec.template.metadata a v1beta2 client wrote: v1beta1 has no field for it. It is JSON of
// clusterv1.ObjectMeta, and reading the template as v1beta2 puts it back in its field.
const TemplateMetadataAnnotation = "infrastructure.cluster.x-k8s.io/v1beta2-template-metadata"

// Every converter below is total: each field of one version has its place in the other, and the
// fuzz round trips in conversion_test.go fail when a field is added to one side only.

// ConvertTo converts this OpenStackCluster to the hub version (v1beta1).
func (src *OpenStackCluster) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*infrav1.OpenStackCluster)
	if !ok {
		return fmt.Errorf("want a v1beta1 OpenStackCluster, got %T", dstRaw)
	}
	dst.ObjectMeta = src.ObjectMeta
	clusterSpecToHub(&src.Spec, &dst.Spec)
	clusterStatusToHub(&src.Status, &dst.Status)
	return nil
}

// ConvertFrom converts from the hub version (v1beta1) to this OpenStackCluster.
func (dst *OpenStackCluster) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*infrav1.OpenStackCluster)
	if !ok {
		return fmt.Errorf("want a v1beta1 OpenStackCluster, got %T", srcRaw)
	}
	dst.ObjectMeta = src.ObjectMeta
	clusterSpecFromHub(&src.Spec, &dst.Spec)
	clusterStatusFromHub(&src.Status, &dst.Status)
	return nil
}

// ConvertTo converts this OpenStackClusterTemplate to the hub version (v1beta1). The template
// metadata, which v1beta1 cannot hold, goes into TemplateMetadataAnnotation.
func (src *OpenStackClusterTemplate) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*infrav1.OpenStackClusterTemplate)
	if !ok {
		return fmt.Errorf("want a v1beta1 OpenStackClusterTemplate, got %T", dstRaw)
	}
	dst.ObjectMeta = *src.ObjectMeta.DeepCopy()
	clusterSpecToHub(&src.Spec.Template.Spec, &dst.Spec.Template.Spec)
	delete(dst.Annotations, TemplateMetadataAnnotation)
	if md := src.Spec.Template.Metadata; len(md.Labels) > 0 || len(md.Annotations) > 0 {
		data, err := json.Marshal(md)
		if err != nil {
			return fmt.Errorf("keeping spec.template.metadata: %w", err)
		}
		if dst.Annotations == nil {
			dst.Annotations = map[string]string{}
		}
		dst.Annotations[TemplateMetadataAnnotation] = string(data)
	}
	return nil
}

// ConvertFrom converts from the hub version (v1beta1) to this OpenStackClusterTemplate, taking
// the template metadata back out of TemplateMetadataAnnotation.
func (dst *OpenStackClusterTemplate) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*infrav1.OpenStackClusterTemplate)
	if !ok {
		return fmt.Errorf("want a v1beta1 OpenStackClusterTemplate, got %T", srcRaw)
	}
	dst.ObjectMeta = *src.ObjectMeta.DeepCopy()
	clusterSpecFromHub(&src.Spec.Template.Spec, &dst.Spec.Template.Spec)
	dst.Spec.Template.Metadata = clusterv1.ObjectMeta{}
	// An annotation that does not hold metadata (written by hand) stays as it is, visible, rather
	// than making the template unreadable in v1beta2.
	var kept clusterv1.ObjectMeta
	if data, ok := dst.Annotations[TemplateMetadataAnnotation]; ok && json.Unmarshal([]byte(data), &kept) == nil {
		dst.Spec.Template.Metadata = kept
		delete(dst.Annotations, TemplateMetadataAnnotation)
		if len(dst.Annotations) == 0 {
			dst.Annotations = nil
		}
	}
	return nil
}

// ConvertTo converts this OpenStackMachine to the hub version (v1beta1).
func (src *OpenStackMachine) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*infrav1.OpenStackMachine)
	if !ok {
		return fmt.Errorf("want a v1beta1 OpenStackMachine, got %T", dstRaw)
	}
	dst.ObjectMeta = src.ObjectMeta
	machineSpecToHub(&src.Spec, &dst.Spec)
	dst.Status = src.Status
	return nil
}

// ConvertFrom converts from the hub version (v1beta1) to this OpenStackMachine.
func (dst *OpenStackMachine) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*infrav1.OpenStackMachine)
	if !ok {
		return fmt.Errorf("want a v1beta1 OpenStackMachine, got %T", srcRaw)
	}
	dst.ObjectMeta = src.ObjectMeta
	machineSpecFromHub(&src.Spec, &dst.Spec)
	dst.Status = src.Status
	return nil
}

// ConvertTo converts this OpenStackMachineTemplate to the hub version (v1beta1).
func (src *OpenStackMachineTemplate) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*infrav1.OpenStackMachineTemplate)
	if !ok {
		return fmt.Errorf("want a v1beta1 OpenStackMachineTemplate, got %T", dstRaw)
	}
	dst.ObjectMeta = src.ObjectMeta
	machineSpecToHub(&src.Spec.Template.Spec, &dst.Spec.Template.Spec)
	dst.Status = src.Status
	return nil
}

// ConvertFrom converts from the hub version (v1beta1) to this OpenStackMachineTemplate.
func (dst *OpenStackMachineTemplate) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*infrav1.OpenStackMachineTemplate)
	if !ok {
		return fmt.Errorf("want a v1beta1 OpenStackMachineTemplate, got %T", srcRaw)
	}
	dst.ObjectMeta = src.ObjectMeta
	machineSpecFromHub(&src.Spec.Template.Spec, &dst.Spec.Template.Spec)
	dst.Status = src.Status
	return nil
}

// The lists convert item by item; conversion webhooks never see them, clients may.

// ConvertTo converts this list to the hub version (v1beta1).
func (src *OpenStackClusterList) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*infrav1.OpenStackClusterList)
	if !ok {
		return fmt.Errorf("want a v1beta1 OpenStackClusterList, got %T", dstRaw)
	}
	dst.ListMeta = src.ListMeta
	return itemsToHub(src.Items, &dst.Items)
}

// ConvertFrom converts from the hub version (v1beta1) to this list.
func (dst *OpenStackClusterList) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*infrav1.OpenStackClusterList)
	if !ok {
		return fmt.Errorf("want a v1beta1 OpenStackClusterList, got %T", srcRaw)
	}
	dst.ListMeta = src.ListMeta
	return itemsFromHub(src.Items, &dst.Items)
}

// ConvertTo converts this list to the hub version (v1beta1).
func (src *OpenStackClusterTemplateList) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*infrav1.OpenStackClusterTemplateList)
	if !ok {
		return fmt.Errorf("want a v1beta1 OpenStackClusterTemplateList, got %T", dstRaw)
	}
	dst.ListMeta = src.ListMeta
	return itemsToHub(src.Items, &dst.Items)
}

// ConvertFrom converts from the hub version (v1beta1) to this list.
func (dst *OpenStackClusterTemplateList) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*infrav1.OpenStackClusterTemplateList)
	if !ok {
		return fmt.Errorf("want a v1beta1 OpenStackClusterTemplateList, got %T", srcRaw)
	}
	dst.ListMeta = src.ListMeta
	return itemsFromHub(src.Items, &dst.Items)
}

// ConvertTo converts this list to the hub version (v1beta1).
func (src *OpenStackMachineList) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*infrav1.OpenStackMachineList)
	if !ok {
		return fmt.Errorf("want a v1beta1 OpenStackMachineList, got %T", dstRaw)
	}
	dst.ListMeta = src.ListMeta
	return itemsToHub(src.Items, &dst.Items)
}

// ConvertFrom converts from the hub version (v1beta1) to this list.
func (dst *OpenStackMachineList) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*infrav1.OpenStackMachineList)
	if !ok {
		return fmt.Errorf("want a v1beta1 OpenStackMachineList, got %T", srcRaw)
	}
	dst.ListMeta = src.ListMeta
	return itemsFromHub(src.Items, &dst.Items)
}

// ConvertTo converts this list to the hub version (v1beta1).
func (src *OpenStackMachineTemplateList) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*infrav1.OpenStackMachineTemplateList)
	if !ok {
		return fmt.Errorf("want a v1beta1 OpenStackMachineTemplateList, got %T", dstRaw)
	}
	dst.ListMeta = src.ListMeta
	return itemsToHub(src.Items, &dst.Items)
}

// ConvertFrom converts from the hub version (v1beta1) to this list.
func (dst *OpenStackMachineTemplateList) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*infrav1.OpenStackMachineTemplateList)
	if !ok {
		return fmt.Errorf("want a v1beta1 OpenStackMachineTemplateList, got %T", srcRaw)
	}
	dst.ListMeta = src.ListMeta
	return itemsFromHub(src.Items, &dst.Items)
}

// itemsToHub converts each of a list's items to the hub version.
func itemsToHub[S, H any, PS interface {
	*S
	ConvertTo(conversion.Hub) error
}, PH interface {
	*H
	conversion.Hub
}](src []S, dst *[]H) error {
	*dst = make([]H, len(src))
	for i := range src {
		if err := PS(&src[i]).ConvertTo(PH(&(*dst)[i])); err != nil {
			return err
		}
	}
	return nil
}

// itemsFromHub converts each of a hub list's items to this version.
func itemsFromHub[H, S any, PH interface {
	*H
	conversion.Hub
}, PS interface {
	*S
	ConvertFrom(conversion.Hub) error
}](src []H, dst *[]S) error {
	*dst = make([]S, len(src))
	for i := range src {
		if err := PS(&(*dst)[i]).ConvertFrom(PH(&src[i])); err != nil {
			return err
		}
	}
	return nil
}

func clusterSpecToHub(src *OpenStackClusterSpec, dst *infrav1.OpenStackClusterSpec) {
	*dst = infrav1.OpenStackClusterSpec{
		IdentityRef:                      src.IdentityRef,
		ManagedSubnets:                   src.ManagedSubnets,
		Router:                           src.Router,
		ExternalNetwork:                  src.ExternalNetwork,
		DisableExternalNetwork:           negate(src.EnableExternalNetwork),
		Network:                          src.Network,
		Subnets:                          src.Subnets,
		PrimarySubnet:                    src.PrimarySubnet,
		Tags:                             src.Tags,
		ControlPlaneEndpoint:             src.ControlPlaneEndpoint,
		ControlPlaneAvailabilityZones:    src.ControlPlaneAvailabilityZones,
		AvailabilityZoneMachineSubnets:   src.AvailabilityZoneMachineSubnets,
		ControlPlaneOmitAvailabilityZone: src.ControlPlaneOmitAvailabilityZone,
	}
	if r := src.ManagedRouter; r != nil {
		dst.ExternalRouterIPs = r.ExternalIPs
	}
	if n := src.ManagedNetwork; n != nil {
		if n.MTU != nil {
			dst.NetworkMTU = new(int(*n.MTU))
		}
		dst.DisablePortSecurity = negate(n.EnablePortSecurity)
	}
	if a := src.APIServer; a != nil {
		if a.Port != nil {
			dst.APIServerPort = int(*a.Port)
		}
		dst.APIServerFixedIP = a.FixedIP
		dst.APIServerFloatingIP = a.FloatingIP
		dst.DisableAPIServerFloatingIP = negate(a.EnableFloatingIP)
		dst.APIServerLoadBalancer = a.ManagedLoadBalancer
	}
	if g := src.ManagedSecurityGroups; g != nil {
		dst.ManagedSecurityGroups = &infrav1.ManagedSecurityGroups{
			AllNodesSecurityGroupRules:          g.ClusterNodesSecurityGroupRules,
			ControlPlaneNodesSecurityGroupRules: g.ControlPlaneNodesSecurityGroupRules,
			WorkerNodesSecurityGroupRules:       g.WorkerNodesSecurityGroupRules,
			AllowAllInClusterTraffic:            g.AllowAllInClusterTraffic,
		}
	}
	if b := src.Bastion; b != nil {
		dst.Bastion = &infrav1.Bastion{Enabled: b.Enabled, AvailabilityZone: b.AvailabilityZone, FloatingIP: b.FloatingIP}
		if b.Spec != nil {
			dst.Bastion.Spec = &infrav1.OpenStackMachineSpec{}
			machineSpecToHub(b.Spec, dst.Bastion.Spec)
		}
	}
}

func clusterSpecFromHub(src *infrav1.OpenStackClusterSpec, dst *OpenStackClusterSpec) {
	*dst = OpenStackClusterSpec{
		IdentityRef:                      src.IdentityRef,
		ManagedSubnets:                   src.ManagedSubnets,
		Subnets:                          src.Subnets,
		PrimarySubnet:                    src.PrimarySubnet,
		Router:                           src.Router,
		Network:                          src.Network,
		ExternalNetwork:                  src.ExternalNetwork,
		EnableExternalNetwork:            negate(src.DisableExternalNetwork),
		Tags:                             src.Tags,
		ControlPlaneEndpoint:             src.ControlPlaneEndpoint,
		ControlPlaneAvailabilityZones:    src.ControlPlaneAvailabilityZones,
		ControlPlaneOmitAvailabilityZone: src.ControlPlaneOmitAvailabilityZone,
		AvailabilityZoneMachineSubnets:   src.AvailabilityZoneMachineSubnets,
	}
	if len(src.ExternalRouterIPs) > 0 {
		dst.ManagedRouter = &ManagedRouter{ExternalIPs: src.ExternalRouterIPs}
	}
	if src.NetworkMTU != nil || src.DisablePortSecurity != nil {
		dst.ManagedNetwork = &ManagedNetwork{EnablePortSecurity: negate(src.DisablePortSecurity)}
		if src.NetworkMTU != nil {
			dst.ManagedNetwork.MTU = new(int32(*src.NetworkMTU))
		}
	}
	api := APIServer{
		FixedIP:             src.APIServerFixedIP,
		FloatingIP:          src.APIServerFloatingIP,
		EnableFloatingIP:    negate(src.DisableAPIServerFloatingIP),
		ManagedLoadBalancer: src.APIServerLoadBalancer,
	}
	if src.APIServerPort != 0 {
		api.Port = new(int32(src.APIServerPort))
	}
	if api != (APIServer{}) {
		dst.APIServer = &api
	}
	if g := src.ManagedSecurityGroups; g != nil {
		dst.ManagedSecurityGroups = &ManagedSecurityGroups{
			ClusterNodesSecurityGroupRules:      g.AllNodesSecurityGroupRules,
			ControlPlaneNodesSecurityGroupRules: g.ControlPlaneNodesSecurityGroupRules,
			WorkerNodesSecurityGroupRules:       g.WorkerNodesSecurityGroupRules,
			AllowAllInClusterTraffic:            g.AllowAllInClusterTraffic,
		}
	}
	if b := src.Bastion; b != nil {
		dst.Bastion = &Bastion{Enabled: b.Enabled, AvailabilityZone: b.AvailabilityZone, FloatingIP: b.FloatingIP}
		if b.Spec != nil {
			dst.Bastion.Spec = &OpenStackMachineSpec{}
			machineSpecFromHub(b.Spec, dst.Bastion.Spec)
		}
	}
}

func clusterStatusToHub(src *OpenStackClusterStatus, dst *infrav1.OpenStackClusterStatus) {
	*dst = infrav1.OpenStackClusterStatus{
		Initialization:                 src.Initialization,
		Conditions:                     src.Conditions,
		FailureDomains:                 src.FailureDomains,
		Network:                        src.Network,
		ExternalNetwork:                src.ExternalNetwork,
		Router:                         src.Router,
		APIServerLoadBalancer:          src.APIServerManagedLoadBalancer,
		APIServerLoadBalancers:         src.APIServerLoadBalancers,
		ControlPlaneSecurityGroup:      src.ControlPlaneSecurityGroup,
		WorkerSecurityGroup:            src.WorkerSecurityGroup,
		BastionSecurityGroup:           src.BastionSecurityGroup,
		Bastion:                        src.Bastion,
		AvailabilityZoneMachineSubnets: src.AvailabilityZoneMachineSubnets,
		ZonesReady:                     src.ZonesReady,
	}
}

func clusterStatusFromHub(src *infrav1.OpenStackClusterStatus, dst *OpenStackClusterStatus) {
	*dst = OpenStackClusterStatus{
		Conditions:                     src.Conditions,
		Initialization:                 src.Initialization,
		Network:                        src.Network,
		ExternalNetwork:                src.ExternalNetwork,
		Router:                         src.Router,
		APIServerManagedLoadBalancer:   src.APIServerLoadBalancer,
		APIServerLoadBalancers:         src.APIServerLoadBalancers,
		FailureDomains:                 src.FailureDomains,
		ControlPlaneSecurityGroup:      src.ControlPlaneSecurityGroup,
		WorkerSecurityGroup:            src.WorkerSecurityGroup,
		BastionSecurityGroup:           src.BastionSecurityGroup,
		Bastion:                        src.Bastion,
		AvailabilityZoneMachineSubnets: src.AvailabilityZoneMachineSubnets,
		ZonesReady:                     src.ZonesReady,
	}
}

func machineSpecToHub(src *OpenStackMachineSpec, dst *infrav1.OpenStackMachineSpec) {
	*dst = infrav1.OpenStackMachineSpec{
		ProviderID:                        src.ProviderID,
		FlavorID:                          src.Flavor.ID,
		Image:                             src.Image,
		SSHKeyName:                        src.SSHKeyName,
		Trunk:                             src.Trunk,
		SecurityGroups:                    src.SecurityGroups,
		Tags:                              src.Tags,
		ServerMetadata:                    src.ServerMetadata,
		ConfigDrive:                       src.ConfigDrive,
		ServerGroup:                       src.ServerGroup,
		SchedulerHintAdditionalProperties: src.SchedulerHintAdditionalProperties,
		RootVolume:                        src.RootVolume,
		AdditionalBlockDevices:            src.AdditionalBlockDevices,
		IdentityRef:                       src.IdentityRef,
		FloatingIPPoolRef:                 src.FloatingIPPoolRef,
	}
	if src.Flavor.Filter != nil {
		dst.Flavor = src.Flavor.Filter.Name
	}
	if src.Ports != nil {
		dst.Ports = make([]infrav1.PortOpts, len(src.Ports))
		for i := range src.Ports {
			portToHub(&src.Ports[i], &dst.Ports[i])
		}
	}
}

func machineSpecFromHub(src *infrav1.OpenStackMachineSpec, dst *OpenStackMachineSpec) {
	*dst = OpenStackMachineSpec{
		ProviderID:                        src.ProviderID,
		Flavor:                            FlavorParam{ID: src.FlavorID},
		Image:                             src.Image,
		SSHKeyName:                        src.SSHKeyName,
		Trunk:                             src.Trunk,
		SecurityGroups:                    src.SecurityGroups,
		Tags:                              src.Tags,
		ServerMetadata:                    src.ServerMetadata,
		ConfigDrive:                       src.ConfigDrive,
		ServerGroup:                       src.ServerGroup,
		SchedulerHintAdditionalProperties: src.SchedulerHintAdditionalProperties,
		RootVolume:                        src.RootVolume,
		AdditionalBlockDevices:            src.AdditionalBlockDevices,
		IdentityRef:                       src.IdentityRef,
		FloatingIPPoolRef:                 src.FloatingIPPoolRef,
	}
	if src.Flavor != nil {
		dst.Flavor.Filter = &FlavorFilter{Name: src.Flavor}
	}
	if src.Ports != nil {
		dst.Ports = make([]PortOpts, len(src.Ports))
		for i := range src.Ports {
			portFromHub(&src.Ports[i], &dst.Ports[i])
		}
	}
}

func portToHub(src *PortOpts, dst *infrav1.PortOpts) {
	*dst = infrav1.PortOpts{
		Network:               src.Network,
		Description:           src.Description,
		NameSuffix:            src.NameSuffix,
		FixedIPs:              src.FixedIPs,
		SecurityGroups:        src.SecurityGroups,
		Tags:                  src.Tags,
		Trunk:                 src.Trunk,
		DisablePortSecurity:   negate(src.EnablePortSecurity),
		AdminStateUp:          src.AdminStateUp,
		MACAddress:            src.MACAddress,
		AllowedAddressPairs:   src.AllowedAddressPairs,
		HostID:                src.HostID,
		VNICType:              src.VNICType,
		Profile:               src.Profile,
		PropagateUplinkStatus: src.PropagateUplinkStatus,
		ValueSpecs:            src.ValueSpecs,
	}
}

func portFromHub(src *infrav1.PortOpts, dst *PortOpts) {
	*dst = PortOpts{
		Network:               src.Network,
		Description:           src.Description,
		NameSuffix:            src.NameSuffix,
		FixedIPs:              src.FixedIPs,
		SecurityGroups:        src.SecurityGroups,
		Tags:                  src.Tags,
		Trunk:                 src.Trunk,
		EnablePortSecurity:    negate(src.DisablePortSecurity),
		AdminStateUp:          src.AdminStateUp,
		MACAddress:            src.MACAddress,
		AllowedAddressPairs:   src.AllowedAddressPairs,
		HostID:                src.HostID,
		VNICType:              src.VNICType,
		Profile:               src.Profile,
		PropagateUplinkStatus: src.PropagateUplinkStatus,
		ValueSpecs:            src.ValueSpecs,
	}
}

// negate turns a disable* boolean into its enable* twin and back; unset stays unset.
func negate(b *bool) *bool {
	if b == nil {
		return nil
	}
	return new(!*b)
}
