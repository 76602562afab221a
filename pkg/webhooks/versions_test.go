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

import "testing"

func TestFieldNamesInV1beta2(t *testing.T) {
	for in, want := range map[string]string{
		"spec.apiServerLoadBalancer.availabilityZoneSubnets[0].subnet": "spec.apiServer.managedLoadBalancer.availabilityZoneSubnets[0].subnet",
		"spec.template.spec.apiServerLoadBalancer.network":             "spec.template.spec.apiServer.managedLoadBalancer.network",
		"spec.apiServerFloatingIP":                                     "spec.apiServer.floatingIP",
		"spec.apiServerFixedIP":                                        "spec.apiServer.fixedIP",
		"spec.apiServerPort":                                           "spec.apiServer.port",
		"spec.disableAPIServerFloatingIP":                              "spec.apiServer.enableFloatingIP",
		"spec.disableExternalNetwork":                                  "spec.enableExternalNetwork",
		"spec.networkMTU":                                              "spec.managedNetwork.mtu",
		"spec.disablePortSecurity":                                     "spec.managedNetwork.enablePortSecurity",
		"spec.externalRouterIPs[1].subnet":                             "spec.managedRouter.externalIPs[1].subnet",
		"spec.managedSecurityGroups.allNodesSecurityGroupRules[0]":     "spec.managedSecurityGroups.clusterNodesSecurityGroupRules[0]",
		"spec.ports[2].disablePortSecurity":                            "spec.ports[2].enablePortSecurity",
		"spec.template.spec.ports[0].disablePortSecurity":              "spec.template.spec.ports[0].enablePortSecurity",
		"spec.flavor":                  "spec.flavor.filter.name",
		"spec.flavorID":                "spec.flavor.id",
		"spec.template.spec.flavor":    "spec.template.spec.flavor.filter.name",
		"status.apiServerLoadBalancer": "status.apiServerManagedLoadBalancer",
		// Unchanged: names that are the same in both versions.
		"spec.apiServerLoadBalancer.flavor":                                               "spec.apiServer.managedLoadBalancer.flavor",
		"status.apiServerLoadBalancers[0]":                                                "status.apiServerLoadBalancers[0]",
		"spec.controlPlaneEndpoint.host":                                                  "spec.controlPlaneEndpoint.host",
		"zone \"az3\" is not in spec.apiServerLoadBalancer.availabilityZoneSubnets (az1)": "zone \"az3\" is not in spec.apiServer.managedLoadBalancer.availabilityZoneSubnets (az1)",
	} {
		if got := inV1beta2(in); got != want {
			t.Errorf("inV1beta2(%q) = %q, want %q", in, got, want)
		}
	}
}
