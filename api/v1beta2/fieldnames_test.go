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
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// The table of renamed fields is held against the conversion: each v1beta1 field, set to its
// sample in an object of its kind, is found at its v1beta2 path once converted (negated when its
// polarity differs), and its v1beta1 name is not there; converted back, the sample is where it
// was. A field renamed in the conversion but not in the table, or the other way, fails here or in
// the round trips of conversion_test.go.
func TestRenamedFieldsFollowTheConversion(t *testing.T) {
	for _, f := range RenamedFields {
		t.Run(string(f.Scope)+"."+f.V1beta1, func(t *testing.T) {
			g := NewWithT(t)
			var raw any
			g.Expect(json.Unmarshal([]byte(f.Sample), &raw)).To(Succeed())
			hub, spoke, where := objectsFor(f.Scope)
			v1beta1 := map[string]any{}
			setPath(v1beta1, append(where, strings.Split(f.V1beta1, ".")...), raw)
			roundTrip(g, v1beta1, hub)
			// The sample as v1beta1 writes it back (with the fields its types always write).
			decoded := map[string]any{}
			roundTrip(g, hub, &decoded)
			sample := getPath(decoded, append(where, strings.Split(f.V1beta1, ".")...))
			g.Expect(sample).NotTo(BeNil(), "the sample is a value of %s", f.V1beta1)
			want := sample
			if f.Inverted {
				want = !sample.(bool)
			}
			g.Expect(spoke.ConvertFrom(hub)).To(Succeed())
			v1beta2 := map[string]any{}
			roundTrip(g, spoke, &v1beta2)
			g.Expect(getPath(v1beta2, append(where, strings.Split(f.V1beta2, ".")...))).To(Equal(want), "%s at %s in v1beta2", f.V1beta1, f.V1beta2)
			if !strings.HasPrefix(f.V1beta2, f.V1beta1+".") {
				g.Expect(getPath(v1beta2, append(where, strings.Split(f.V1beta1, ".")...))).To(BeNil(), "no %s in v1beta2", f.V1beta1)
			}

			back := newHub(f.Scope)
			g.Expect(spoke.ConvertTo(back)).To(Succeed())
			again := map[string]any{}
			roundTrip(g, back, &again)
			g.Expect(getPath(again, append(where, strings.Split(f.V1beta1, ".")...))).To(Equal(sample))
		})
	}
}

func TestRenameFields(t *testing.T) {
	g := NewWithT(t)
	for in, want := range map[string]string{
		"spec.apiServerLoadBalancer.availabilityZoneSubnets[1].subnet.id: subnet x does not exist": "spec.apiServer.managedLoadBalancer.availabilityZoneSubnets[1].subnet.id: subnet x does not exist",
		"spec.template.spec.disableAPIServerFloatingIP":                                            "spec.template.spec.apiServer.enableFloatingIP",
		"spec.flavorID and spec.flavor, then spec.flavor":                                          "spec.flavor.id and spec.flavor.filter.name, then spec.flavor.filter.name",
		"spec.ports[2].disablePortSecurity":                                                        "spec.ports[2].enablePortSecurity",
		"status.apiServerLoadBalancer.name, status.apiServerLoadBalancers[0]":                      "status.apiServerManagedLoadBalancer.name, status.apiServerLoadBalancers[0]",
		"spec.managedSecurityGroups.allNodesSecurityGroupRules[0]":                                 "spec.managedSecurityGroups.clusterNodesSecurityGroupRules[0]",
		"apiServerLoadBalancer without a path stays":                                               "apiServerLoadBalancer without a path stays",
	} {
		g.Expect(RenameFields(in)).To(Equal(want), in)
	}
	g.Expect(InvertedField("spec.apiServer.enableFloatingIP")).To(BeTrue())
	g.Expect(InvertedField("spec.ports[0].enablePortSecurity")).To(BeTrue())
	g.Expect(InvertedField("spec.apiServer.floatingIP")).To(BeFalse())
}

// objectsFor are a v1beta1 object and a v1beta2 one of the kind a scope's fields belong to, and
// the path of the scope in them.
func objectsFor(scope Scope) (conversion.Hub, conversion.Convertible, []string) {
	switch scope {
	case MachineSpec:
		return newHub(scope), &OpenStackMachine{}, []string{"spec"}
	case Port:
		return newHub(scope), &OpenStackMachine{}, []string{"spec", "ports", "0"}
	case SecurityGroups:
		return newHub(scope), &OpenStackCluster{}, []string{"spec", "managedSecurityGroups"}
	case Status:
		return newHub(scope), &OpenStackCluster{}, []string{"status"}
	}
	return newHub(scope), &OpenStackCluster{}, []string{"spec"}
}

func newHub(scope Scope) conversion.Hub {
	if scope == MachineSpec || scope == Port {
		return &infrav1.OpenStackMachine{}
	}
	return &infrav1.OpenStackCluster{}
}

// roundTrip decodes the JSON of from into to.
func roundTrip(g Gomega, from, to any) {
	raw, err := json.Marshal(from)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(json.Unmarshal(raw, to)).To(Succeed())
}

// setPath sets value at path in m; a path element "0" is the first entry of a list.
func setPath(m map[string]any, path []string, value any) {
	for i, key := range path[:len(path)-1] {
		if path[i+1] == "0" {
			entry := map[string]any{}
			m[key] = []any{entry}
			setPath(entry, path[i+2:], value)
			return
		}
		next, ok := m[key].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[key] = next
		}
		m = next
	}
	m[path[len(path)-1]] = value
}

// getPath is the value at path in m, nil when there is none.
func getPath(m map[string]any, path []string) any {
	var cur any = m
	for _, key := range path {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[key]
		case []any:
			if key != "0" || len(c) == 0 {
				return nil
			}
			cur = c[0]
		default:
			return nil
		}
	}
	return cur
}

func TestInBothVersions(t *testing.T) {
	g := NewWithT(t)
	g.Expect(InBothVersions("spec.apiServerLoadBalancer.availabilityZoneSubnets[1].subnet.id: subnet x does not exist; spec.apiServerLoadBalancer.availabilityZoneSubnets[1].subnet.id again")).To(Equal(
		"spec.apiServerLoadBalancer.availabilityZoneSubnets[1].subnet.id: subnet x does not exist; spec.apiServerLoadBalancer.availabilityZoneSubnets[1].subnet.id again" +
			" [v1beta2: spec.apiServer.managedLoadBalancer.availabilityZoneSubnets[1].subnet.id]"))
	g.Expect(InBothVersions(`spec.flavor: 0 flavors are named "m1.smal", want exactly one`)).To(Equal(
		`spec.flavor: 0 flavors are named "m1.smal", want exactly one [v1beta2: spec.flavor.filter.name]`))
	g.Expect(InBothVersions("spec.network.filter: {name=x} matches 0 networks")).To(Equal("spec.network.filter: {name=x} matches 0 networks"), "the same in both")
	once := InBothVersions("spec.apiServerPort is 443")
	g.Expect(InBothVersions(once)).To(Equal(once), "never twice")
}
