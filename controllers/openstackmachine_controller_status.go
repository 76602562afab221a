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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cluster-api/util/conditions"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// setMachineReadySummary sets Ready from the conditions the controller owns on the machine:
// InstanceReady, and APIServerIngressReady for control plane machines. Also during deletion.
func setMachineReadySummary(m *machineScope) {
	if err := conditions.SetSummaryCondition(m.osm, m.osm, infrav1.ReadyCondition, conditions.ForConditionTypes(m.conditionTypes())); err != nil {
		setCondition(m.osm, infrav1.ReadyCondition, metav1.ConditionUnknown, infrav1.NotReadyReason, err.Error())
	}
}
