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

// Package webhooks holds the admission webhooks of the provider: the rules that the CRD schema and
// its CEL rules cannot express, mostly which fields may change after creation.
package webhooks

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// SetupWithManager registers every webhook of the provider with the manager's webhook server.
func SetupWithManager(mgr ctrl.Manager) error {
	if err := ctrl.NewWebhookManagedBy(mgr, &infrav1.OpenStackCluster{}).WithValidator(&OpenStackCluster{}).Complete(); err != nil {
		return fmt.Errorf("setting up the OpenStackCluster webhook: %w", err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &infrav1.OpenStackClusterTemplate{}).WithValidator(&OpenStackClusterTemplate{}).Complete(); err != nil {
		return fmt.Errorf("setting up the OpenStackClusterTemplate webhook: %w", err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &infrav1.OpenStackMachine{}).WithValidator(&OpenStackMachine{}).Complete(); err != nil {
		return fmt.Errorf("setting up the OpenStackMachine webhook: %w", err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &infrav1.OpenStackMachineTemplate{}).WithValidator(&OpenStackMachineTemplate{}).Complete(); err != nil {
		return fmt.Errorf("setting up the OpenStackMachineTemplate webhook: %w", err)
	}
	return nil
}
