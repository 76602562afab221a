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

import (
	"encoding/json"
	"testing"

	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

func TestAStatusWithUpstreamsFailureDomainMapDecodes(t *testing.T) {
	// As upstream CAPO v0.14 stores it (the v1beta1 contract's map), beside fields that stay.
	upstream := `{"status":{"ready":true,"failureDomains":{"az1":{"controlPlane":true},"az2":{"controlPlane":true}},` +
		`"network":{"id":"n1","name":"k8s-clusterapi-cluster-ns-c"}}}`
	var osc OpenStackCluster
	if err := json.Unmarshal([]byte(upstream), &osc); err != nil {
		t.Fatalf("an upstream status does not decode: %v", err)
	}
	if osc.Status.FailureDomains != nil {
		t.Errorf("failure domains from a map: got %v, want none (the controller computes them again)", osc.Status.FailureDomains)
	}
	if osc.Status.Network == nil || osc.Status.Network.ID != "n1" {
		t.Errorf("the rest of the status is lost: %+v", osc.Status.Network)
	}

	ours := `{"status":{"failureDomains":[{"name":"az1","controlPlane":true}]}}`
	osc = OpenStackCluster{}
	if err := json.Unmarshal([]byte(ours), &osc); err != nil {
		t.Fatal(err)
	}
	want := []clusterv1.FailureDomain{{Name: "az1", ControlPlane: ptr.To(true)}}
	if len(osc.Status.FailureDomains) != 1 || osc.Status.FailureDomains[0].Name != want[0].Name || !*osc.Status.FailureDomains[0].ControlPlane {
		t.Errorf("the list: got %+v, want %+v", osc.Status.FailureDomains, want)
	}
	if err := json.Unmarshal([]byte(`{"status":{"failureDomains":"az1"}}`), &OpenStackCluster{}); err == nil {
		t.Error("a failureDomains that is neither a list nor a map decodes")
	}
}
