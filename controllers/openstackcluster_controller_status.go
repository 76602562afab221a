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

func setCondition(obj conditions.Setter, conditionType string, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(obj, metav1.Condition{Type: conditionType, Status: status, Reason: reason, Message: message})
}

// setReadySummary sets Ready from the conditions the controller owns, also during deletion.
func setReadySummary(osc *infrav1.OpenStackCluster) {
	if err := conditions.SetSummaryCondition(osc, osc, infrav1.ReadyCondition, conditions.ForConditionTypes(clusterConditions)); err != nil {
		setCondition(osc, infrav1.ReadyCondition, metav1.ConditionUnknown, infrav1.NotReadyReason, err.Error())
	}
}
