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
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"
	"sigs.k8s.io/randfill"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// The round trips fill every field of one version at random, convert to the other version and
// back, and want the object unchanged: a field added to one version without its conversion fails
// here. They run 10000 objects per kind and direction.

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := infrav1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestFuzzyConversion(t *testing.T) {
	s := testScheme(t)
	funcs := []fuzzer.FuzzerFuncs{fuzzerFuncs}
	t.Run("OpenStackCluster", utilconversion.FuzzTestFunc(utilconversion.FuzzTestFuncInput{
		Scheme: s, Hub: &infrav1.OpenStackCluster{}, Spoke: &OpenStackCluster{}, FuzzerFuncs: funcs,
	}))
	t.Run("OpenStackClusterTemplate", utilconversion.FuzzTestFunc(utilconversion.FuzzTestFuncInput{
		Scheme: s, Hub: &infrav1.OpenStackClusterTemplate{}, Spoke: &OpenStackClusterTemplate{}, FuzzerFuncs: funcs,
	}))
	t.Run("OpenStackMachine", utilconversion.FuzzTestFunc(utilconversion.FuzzTestFuncInput{
		Scheme: s, Hub: &infrav1.OpenStackMachine{}, Spoke: &OpenStackMachine{}, FuzzerFuncs: funcs,
	}))
	t.Run("OpenStackMachineTemplate", utilconversion.FuzzTestFunc(utilconversion.FuzzTestFuncInput{
		Scheme: s, Hub: &infrav1.OpenStackMachineTemplate{}, Spoke: &OpenStackMachineTemplate{}, FuzzerFuncs: funcs,
	}))
}

// fuzzerFuncs keep the random objects to what the CRD schemas admit, where a value outside them
// has no place in the other version: an API server port or MTU is a small positive number, and
// v1beta2's groups (apiServer, managedNetwork, managedRouter, flavor.filter) are never empty
// (the schema refuses an empty one, and v1beta1 has no way to say "present but empty").
func fuzzerFuncs(_ runtimeserializer.CodecFactory) []any {
	return []any{
		func(in *infrav1.OpenStackClusterSpec, c randfill.Continue) {
			c.FillNoCustom(in)
			in.APIServerPort = int(c.Uint32() % 65536)
			if in.NetworkMTU != nil {
				in.NetworkMTU = new(68 + int(c.Uint32()%65000))
			}
		},
		func(in *OpenStackClusterSpec, c randfill.Continue) {
			c.FillNoCustom(in)
			if in.ManagedRouter != nil && len(in.ManagedRouter.ExternalIPs) == 0 {
				in.ManagedRouter = nil
			}
			if in.ManagedNetwork != nil && *in.ManagedNetwork == (ManagedNetwork{}) {
				in.ManagedNetwork = nil
			}
			if a := in.APIServer; a != nil {
				if a.Port != nil {
					a.Port = new(int32(1 + c.Uint32()%65535))
				}
				if *a == (APIServer{}) {
					in.APIServer = nil
				}
			}
		},
		func(in *FlavorFilter, c randfill.Continue) {
			c.FillNoCustom(in)
			if in.Name == nil {
				in.Name = new(c.String(20))
			}
		},
	}
}

// TestConversionOfUpstreamShapes converts the shapes of upstream's book
// (docs/book/src/topics/crd-changes/v1beta1-to-v1beta2.md) and wants each v1beta2 field in its
// v1beta1 place, booleans inverted: a round trip alone cannot see a conversion that is wrong the
// same way in both directions.
func TestConversionOfUpstreamShapes(t *testing.T) {
	cluster := &OpenStackCluster{}
	if err := yaml.UnmarshalStrict([]byte(`
spec:
  apiServer:
    floatingIP: 192.0.2.4
    fixedIP: 10.0.0.1
    port: 6444
    enableFloatingIP: false
    managedLoadBalancer:
      enabled: true
      allowedCIDRs: [0.0.0.0/0]
  enableExternalNetwork: false
  managedNetwork:
    mtu: 1450
    enablePortSecurity: false
  managedRouter:
    externalIPs:
    - fixedIP: 192.0.2.9
      subnet: {filter: {name: ext}}
  managedSecurityGroups:
    clusterNodesSecurityGroupRules:
    - {name: ssh, direction: ingress}
status:
  apiServerManagedLoadBalancer: {name: lb, id: lb-1, ip: "", internalIP: "", availabilityZone: ""}
`), cluster); err != nil {
		t.Fatal(err)
	}
	hub := &infrav1.OpenStackCluster{}
	if err := cluster.ConvertTo(hub); err != nil {
		t.Fatal(err)
	}
	s := hub.Spec
	switch {
	case s.APIServerFloatingIP == nil || *s.APIServerFloatingIP != "192.0.2.4",
		s.APIServerFixedIP == nil || *s.APIServerFixedIP != "10.0.0.1",
		s.APIServerPort != 6444,
		s.DisableAPIServerFloatingIP == nil || !*s.DisableAPIServerFloatingIP,
		s.APIServerLoadBalancer == nil || len(s.APIServerLoadBalancer.AllowedCIDRs) != 1,
		s.DisableExternalNetwork == nil || !*s.DisableExternalNetwork,
		s.NetworkMTU == nil || *s.NetworkMTU != 1450,
		s.DisablePortSecurity == nil || !*s.DisablePortSecurity,
		len(s.ExternalRouterIPs) != 1 || s.ExternalRouterIPs[0].FixedIP != "192.0.2.9",
		s.ManagedSecurityGroups == nil || len(s.ManagedSecurityGroups.AllNodesSecurityGroupRules) != 1,
		hub.Status.APIServerLoadBalancer == nil || hub.Status.APIServerLoadBalancer.ID != "lb-1":
		t.Fatalf("v1beta2 fields not in their v1beta1 places: %+v status %+v", s, hub.Status)
	}

	machine := &OpenStackMachine{}
	if err := yaml.UnmarshalStrict([]byte(`
spec:
  flavor: {filter: {name: m1.small}}
  image: {filter: {name: ubuntu}}
  ports:
  - enablePortSecurity: false
`), machine); err != nil {
		t.Fatal(err)
	}
	hubMachine := &infrav1.OpenStackMachine{}
	if err := machine.ConvertTo(hubMachine); err != nil {
		t.Fatal(err)
	}
	m := hubMachine.Spec
	if m.Flavor == nil || *m.Flavor != "m1.small" || m.FlavorID != nil || len(m.Ports) != 1 ||
		m.Ports[0].DisablePortSecurity == nil || !*m.Ports[0].DisablePortSecurity {
		t.Fatalf("v1beta2 machine fields not in their v1beta1 places: %+v", m)
	}

	tmpl := &OpenStackClusterTemplate{}
	tmpl.Spec.Template.Metadata.Labels = map[string]string{"environment": "production"}
	hubTmpl := &infrav1.OpenStackClusterTemplate{}
	if err := tmpl.ConvertTo(hubTmpl); err != nil {
		t.Fatal(err)
	}
	if got := hubTmpl.Annotations[TemplateMetadataAnnotation]; got != `{"labels":{"environment":"production"}}` {
		t.Fatalf("template metadata kept as %q", got)
	}
	back := &OpenStackClusterTemplate{}
	if err := back.ConvertFrom(hubTmpl); err != nil {
		t.Fatal(err)
	}
	if back.Spec.Template.Metadata.Labels["environment"] != "production" || len(back.Annotations) != 0 {
		t.Fatalf("template metadata not restored: %+v, annotations %v", back.Spec.Template.Metadata, back.Annotations)
	}
}

// A template-metadata annotation that is not metadata (written by hand on the v1beta1 object)
// leaves the template readable in v1beta2, the annotation in place.
func TestAMalformedTemplateMetadataAnnotationStaysVisible(t *testing.T) {
	hub := &infrav1.OpenStackClusterTemplate{}
	hub.Annotations = map[string]string{TemplateMetadataAnnotation: "not json"}
	spoke := &OpenStackClusterTemplate{}
	if err := spoke.ConvertFrom(hub); err != nil {
		t.Fatalf("reading the template as v1beta2: %v", err)
	}
	if spoke.Annotations[TemplateMetadataAnnotation] != "not json" || len(spoke.Spec.Template.Metadata.Labels) != 0 {
		t.Fatalf("want the annotation kept and no metadata, got %v and %+v", spoke.Annotations, spoke.Spec.Template.Metadata)
	}
}

// The lists convert their items with the objects' converters.
func TestListsConvertTheirItems(t *testing.T) {
	list := &OpenStackMachineList{Items: []OpenStackMachine{{}, {}}}
	list.Items[1].Spec.Flavor.ID = new("f-1")
	hub := &infrav1.OpenStackMachineList{}
	if err := list.ConvertTo(hub); err != nil {
		t.Fatal(err)
	}
	if len(hub.Items) != 2 || hub.Items[1].Spec.FlavorID == nil || *hub.Items[1].Spec.FlavorID != "f-1" {
		t.Fatalf("hub items: %+v", hub.Items)
	}
	back := &OpenStackMachineList{}
	if err := back.ConvertFrom(hub); err != nil {
		t.Fatal(err)
	}
	if len(back.Items) != 2 || back.Items[1].Spec.Flavor.ID == nil || *back.Items[1].Spec.Flavor.ID != "f-1" {
		t.Fatalf("spoke items: %+v", back.Items)
	}
}
