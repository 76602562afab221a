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

// v1beta1 is the conversion hub: the version the controllers read and write. v1beta2, the
// storage version from v0.3 on, converts to and from it (api/v1beta2/conversion.go).

// Hub marks OpenStackCluster as the conversion hub.
func (*OpenStackCluster) Hub() {}

// Hub marks OpenStackClusterList as the conversion hub.
func (*OpenStackClusterList) Hub() {}

// Hub marks OpenStackClusterTemplate as the conversion hub.
func (*OpenStackClusterTemplate) Hub() {}

// Hub marks OpenStackClusterTemplateList as the conversion hub.
func (*OpenStackClusterTemplateList) Hub() {}

// Hub marks OpenStackMachine as the conversion hub.
func (*OpenStackMachine) Hub() {}

// Hub marks OpenStackMachineList as the conversion hub.
func (*OpenStackMachineList) Hub() {}

// Hub marks OpenStackMachineTemplate as the conversion hub.
func (*OpenStackMachineTemplate) Hub() {}

// Hub marks OpenStackMachineTemplateList as the conversion hub.
func (*OpenStackMachineTemplateList) Hub() {}
