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

package apivalidation

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/internal/preflight"
	managerscheme "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scheme"
)

// upstreamV015Cluster is an OpenStackCluster as upstream's v0.15 stores it: v1beta2, with
// primarySubnet, a field of upstream's v1beta2 this provider serves too.
const upstreamV015Cluster = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: OpenStackCluster
metadata:
  name: from-v015
spec:
  identityRef: {type: Secret, name: cloud, cloudName: openstack}
  network: {filter: {name: cluster}}
  subnets: [{filter: {name: a}}, {filter: {name: b}}]
  primarySubnet: {filter: {name: a}}
  managedNetwork: {enablePortSecurity: false}
  enableExternalNetwork: false
  apiServer:
    port: 6443
    fixedIP: 10.0.0.5
    enableFloatingIP: false
    managedLoadBalancer: {enabled: true, additionalPorts: [9345]}
  managedSecurityGroups:
    clusterNodesSecurityGroupRules: [{name: bgp, direction: ingress, protocol: tcp, portRangeMin: 179, portRangeMax: 179}]
`

// TestObjectsStoredAsV1beta2AreTakenOver is a management cluster that ran upstream's v0.15 and
// switches to this provider in place: the OpenStackCluster CRD first stores v1beta2 (the schema
// of upstream's v1beta2 as far as this provider knows it, with upstream's primarySubnet added:
// upstream's own v1beta2 CRD cannot be fetched here, the module proxy serves no v0.15), an object
// is written through it, the pre-flight reads it in v1beta2 and finds nothing lost; then this provider's CRD replaces
// it, with the object still stored as v1beta2, and the controllers' version (v1beta1) reads it
// through the conversion webhook with every supported field in place.
func TestObjectsStoredAsV1beta2AreTakenOver(t *testing.T) {
	ctx := context.Background()
	scheme, err := managerscheme.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	crdName := "openstackclusters.infrastructure.cluster.x-k8s.io"
	ours := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: crdName}, ours); err != nil {
		t.Fatal(err)
	}
	restore := func(t *testing.T) {
		t.Helper()
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
			t.Fatal(err)
		}
		crd.Spec.Versions = ours.DeepCopy().Spec.Versions
		if err := c.Update(ctx, crd); err != nil {
			t.Fatalf("putting this provider's CRD back: %v", err)
		}
	}
	t.Cleanup(func() { restore(t) })

	// Upstream's v0.15 CRD: v1beta2 stored, primarySubnet known.
	upstream := ours.DeepCopy()
	for i := range upstream.Spec.Versions {
		v := &upstream.Spec.Versions[i]
		v.Storage = v.Name == "v1beta2"
		if v.Name == "v1beta2" {
			spec := v.Schema.OpenAPIV3Schema.Properties["spec"]
			spec.Properties["primarySubnet"] = apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}
			v.Schema.OpenAPIV3Schema.Properties["spec"] = spec
		}
	}
	if err := c.Update(ctx, upstream); err != nil {
		t.Fatalf("installing the v0.15-like CRD: %v", err)
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "stored-v1beta2"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(upstreamV015Cluster), &obj.Object); err != nil {
		t.Fatal(err)
	}
	obj.SetNamespace(ns.Name)
	key := client.ObjectKeyFromObject(obj)
	// The API server serves the new CRD after a moment: write until the object is written
	// through it with upstream's primarySubnet.
	within(t, 30*time.Second, "the object is stored as v1beta2 with upstream's primarySubnet", func() bool {
		_ = c.Delete(ctx, obj.DeepCopy())
		fresh := obj.DeepCopy()
		if err := c.Create(ctx, fresh); err != nil {
			return false
		}
		got := readAs(t, "v1beta2", key)
		_, kept, _ := unstructured.NestedMap(got.Object, "spec", "primarySubnet")
		return kept
	})

	// The pre-flight, while the v0.15-like CRD serves: reads v1beta2, names what is lost by its
	// v1beta2 path, and accepts the stored v1beta2.
	schemas, err := preflight.OurSchemas()
	if err != nil {
		t.Fatal(err)
	}
	report, err := preflight.Run(ctx, c, schemas)
	if err != nil {
		t.Fatal(err)
	}
	var lost []string
	for _, f := range report.Findings {
		if f.Severity == preflight.Lost && (f.Object == ns.Name+"/from-v015" || f.Kind == "CustomResourceDefinition") {
			lost = append(lost, f.Path)
		}
	}
	if len(lost) != 0 {
		t.Fatalf("the pre-flight of the v1beta2-stored object: want nothing lost (primarySubnet is served now), got %v", lost)
	}

	// The switch: this provider's CRD replaces upstream's; the object stays stored as v1beta2.
	restore(t)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
		t.Fatal(err)
	}
	if got := crd.Status.StoredVersions; !slices.Equal(got, []string{"v1beta2"}) {
		t.Fatalf("storedVersions: want [v1beta2] (both store it), got %v", got)
	}
	if _, kept, _ := unstructured.NestedMap(readAs(t, "v1beta2", key).Object, "spec", "primarySubnet"); !kept {
		t.Fatal("this provider's CRD lost upstream's primarySubnet")
	}
	osc := &infrav1.OpenStackCluster{}
	if err := c.Get(ctx, key, osc); err != nil {
		t.Fatalf("reading the v1beta2-stored object as v1beta1: %v", err)
	}
	s := osc.Spec
	switch {
	case s.IdentityRef == nil || s.IdentityRef.Name != "cloud",
		s.Network == nil || s.Network.Filter == nil || s.Network.Filter.Name != "cluster",
		len(s.Subnets) != 2,
		s.DisablePortSecurity == nil || !*s.DisablePortSecurity,
		s.DisableExternalNetwork == nil || !*s.DisableExternalNetwork,
		s.APIServerPort != 6443,
		s.APIServerFixedIP == nil || *s.APIServerFixedIP != "10.0.0.5",
		s.DisableAPIServerFloatingIP == nil || !*s.DisableAPIServerFloatingIP,
		s.APIServerLoadBalancer == nil || len(s.APIServerLoadBalancer.AdditionalPorts) != 1,
		s.PrimarySubnet == nil,
		s.ManagedSecurityGroups == nil || len(s.ManagedSecurityGroups.AllNodesSecurityGroupRules) != 1:
		t.Fatalf("the v1beta2-stored object read as v1beta1 lacks a field: %+v", s)
	}
	// A write in v1beta1 (what the controllers do) is accepted, and stored as v1beta2.
	osc.Labels = map[string]string{"example.com/switched": "true"}
	if err := c.Update(ctx, osc); err != nil {
		t.Fatalf("updating the v1beta2-stored object in v1beta1: %v", err)
	}
}

func readAs(t *testing.T, version string, key client.ObjectKey) *unstructured.Unstructured {
	t.Helper()
	got := &unstructured.Unstructured{}
	got.SetAPIVersion("infrastructure.cluster.x-k8s.io/" + version)
	got.SetKind("OpenStackCluster")
	if err := env.Client.Get(context.Background(), key, got); err != nil {
		t.Fatalf("reading %s as %s: %v", key, version, err)
	}
	return got
}

// within polls cond every 200 ms until it holds, failing the test after timeout.
func within(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", timeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
