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
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	managerscheme "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scheme"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/storagemigration"
)

// storedBefore are objects of the four kinds as a v0.2 management cluster stores them: v1beta1.
var storedBefore = []string{`
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: OpenStackCluster
metadata: {name: c}
spec:
  identityRef: {name: cloud, cloudName: openstack}
  controlPlaneEndpoint: {host: api.example.com, port: 6443}
  apiServerLoadBalancer:
    enabled: true
    network: {id: 6c90b532-7ba0-418a-a276-5ae55060b5b0}
    availabilityZoneSubnets:
    - availabilityZone: az1
      subnet: {id: cad5a91a-36de-4388-823b-b0cc82cadfdc}
`, `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: OpenStackMachine
metadata: {name: m}
spec:
  flavor: m1.medium
  image: {filter: {name: ubuntu}}
  providerID: openstack:///7d7f6b2e-1111-4c4c-9d9d-0123456789ab
`, `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: OpenStackClusterTemplate
metadata: {name: ct}
spec: {template: {spec: {apiServerPort: 6443}}}
`, `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: OpenStackMachineTemplate
metadata: {name: mt}
spec: {template: {spec: {flavor: m1.small, image: {filter: {name: ubuntu}}}}}
`}

// TestStoredObjectsMoveToV1beta2 is the upgrade from v0.2 (v1beta1 stored) to v0.3 (v1beta2
// stored): objects written while each CRD stores v1beta1, the CRDs replaced by this release's,
// then the manager's Migrator. In etcd every object is v1beta1 before and v1beta2 after, each
// CRD's status.storedVersions ends as [v1beta2], and no object's content or generation changed.
func TestStoredObjectsMoveToV1beta2(t *testing.T) {
	ctx := context.Background()
	scheme, err := managerscheme.New()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{env.EtcdURL()}, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = etcd.Close() }()
	stored := func(obj *unstructured.Unstructured) string {
		t.Helper()
		plural := strings.ToLower(obj.GetKind()) + "s"
		key := fmt.Sprintf("/registry/infrastructure.cluster.x-k8s.io/%s/%s/%s", plural, obj.GetNamespace(), obj.GetName())
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		resp, err := etcd.Get(cctx, key)
		if err != nil {
			t.Fatalf("reading %s from etcd: %v", key, err)
		}
		if len(resp.Kvs) != 1 {
			t.Fatalf("reading %s from etcd: %d keys", key, len(resp.Kvs))
		}
		var meta metav1.TypeMeta
		if err := json.Unmarshal(resp.Kvs[0].Value, &meta); err != nil {
			t.Fatalf("%s in etcd: %v", key, err)
		}
		return meta.APIVersion
	}

	// The CRDs as v0.2 has them: v1beta1 stored. Put back at the end whatever happens.
	ours := map[string]*apiextensionsv1.CustomResourceDefinition{}
	setStorage := func(name, version string) {
		t.Helper()
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			t.Fatal(err)
		}
		if ours[name] == nil {
			ours[name] = crd.DeepCopy()
		}
		for i := range crd.Spec.Versions {
			crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == version
		}
		if err := c.Update(ctx, crd); err != nil {
			t.Fatalf("storing %s as %s: %v", name, version, err)
		}
	}
	crds := storagemigration.CRDs
	t.Cleanup(func() {
		for _, name := range crds {
			if ours[name] != nil {
				setStorage(name, "v1beta2")
			}
		}
	})
	for _, name := range crds {
		setStorage(name, "v1beta1")
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "storage-migration"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, doc := range storedBefore {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
			t.Fatal(err)
		}
		obj.SetNamespace(ns.Name)
		// The API server takes up the CRD's storage version a moment after the change: write
		// until the object is stored as v1beta1.
		within(t, 30*time.Second, obj.GetKind()+" stored as v1beta1", func() bool {
			_ = c.Delete(ctx, obj.DeepCopy())
			if err := c.Create(ctx, obj.DeepCopy()); err != nil {
				return false
			}
			return stored(obj) == "infrastructure.cluster.x-k8s.io/v1beta1"
		})
		objs = append(objs, obj)
	}
	read := func(obj *unstructured.Unstructured) *unstructured.Unstructured {
		t.Helper()
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(obj.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	var before []*unstructured.Unstructured
	for _, obj := range objs {
		before = append(before, read(obj))
	}

	// This release's CRDs: v1beta2 stored, both versions listed in storedVersions.
	for _, name := range crds {
		setStorage(name, "v1beta2")
	}
	m := &storagemigration.Migrator{Reader: c, Writer: c, Log: logr.Discard(), Settle: 2 * time.Second}
	for _, name := range crds {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(crd.Status.StoredVersions, "v1beta1") {
			t.Fatalf("%s: storedVersions %v before the move lists no v1beta1", name, crd.Status.StoredVersions)
		}
		// A CRD first seen now is left for later, with an error saying so.
		if _, err := m.Move(ctx, name); err == nil || !strings.Contains(err.Error(), "may have changed lately: its objects are rewritten once it has been seen unchanged for") {
			t.Fatalf("%s moved right after its change: %v", name, err)
		}
	}
	moved := 0
	within(t, 30*time.Second, "every CRD moved", func() bool {
		for _, name := range crds {
			n, err := m.Move(ctx, name)
			if err != nil {
				return false
			}
			moved += n
		}
		return true
	})
	// The other tests' objects, in other namespaces, are moved too.
	if moved < len(objs) {
		t.Fatalf("objects rewritten: want at least %d, got %d", len(objs), moved)
	}
	for _, name := range crds {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(crd.Status.StoredVersions, []string{"v1beta2"}) {
			t.Fatalf("%s: storedVersions after the move: want [v1beta2], got %v", name, crd.Status.StoredVersions)
		}
	}
	for i, obj := range objs {
		if got := stored(obj); got != "infrastructure.cluster.x-k8s.io/v1beta2" {
			t.Fatalf("%s in etcd after the move: %s", obj.GetKind(), got)
		}
		after := read(obj)
		if !equality.Semantic.DeepEqual(after.Object["spec"], before[i].Object["spec"]) || after.GetGeneration() != before[i].GetGeneration() {
			t.Fatalf("%s changed in the move:\nbefore %v (generation %d)\nafter  %v (generation %d)", obj.GetKind(),
				before[i].Object["spec"], before[i].GetGeneration(), after.Object["spec"], after.GetGeneration())
		}
	}
	// Moved once: a second pass rewrites nothing.
	for _, name := range crds {
		if n, err := m.Move(ctx, name); err != nil || n != 0 {
			t.Fatalf("%s moved again: %d objects, %v", name, n, err)
		}
	}
}
