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

// EffectiveAPIServerPort is the API server port: spec.apiServerPort, or DefaultAPIServerPort
// when it is not set.
func (s *OpenStackClusterSpec) EffectiveAPIServerPort() int {
	if s.APIServerPort == 0 {
		return DefaultAPIServerPort
	}
	return s.APIServerPort
}

// APIServerLoadBalancerEnabled says whether the spec asks for API server load balancers:
// apiServerLoadBalancer is set and not disabled.
func (s *OpenStackClusterSpec) APIServerLoadBalancerEnabled() bool {
	return s.APIServerLoadBalancer != nil && (s.APIServerLoadBalancer.Enabled == nil || *s.APIServerLoadBalancer.Enabled)
}
