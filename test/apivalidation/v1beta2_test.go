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
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The v1beta2 twin of a case is its documents rewritten as a v1beta2 client writes them: each
// field moved where upstream's v1beta2 has it (upstream's book, "v1beta1 compared to v1beta2"),
// disable* booleans turned into enable* ones. This is written from the book, independently of the
// provider's conversion (api/v1beta2/conversion.go), so that the two check each other.

// move says where a v1beta1 field of a spec goes in v1beta2; invert turns a boolean around.
type move struct {
	from   []string
	to     []string
	invert bool
}

var clusterMoves = []move{
	{from: []string{"apiServerLoadBalancer"}, to: []string{"apiServer", "managedLoadBalancer"}},
	{from: []string{"apiServerFloatingIP"}, to: []string{"apiServer", "floatingIP"}},
	{from: []string{"apiServerFixedIP"}, to: []string{"apiServer", "fixedIP"}},
	{from: []string{"apiServerPort"}, to: []string{"apiServer", "port"}},
	{from: []string{"disableAPIServerFloatingIP"}, to: []string{"apiServer", "enableFloatingIP"}, invert: true},
	{from: []string{"disableExternalNetwork"}, to: []string{"enableExternalNetwork"}, invert: true},
	{from: []string{"networkMTU"}, to: []string{"managedNetwork", "mtu"}},
	{from: []string{"disablePortSecurity"}, to: []string{"managedNetwork", "enablePortSecurity"}, invert: true},
	{from: []string{"externalRouterIPs"}, to: []string{"managedRouter", "externalIPs"}},
	{from: []string{"managedSecurityGroups", "allNodesSecurityGroupRules"}, to: []string{"managedSecurityGroups", "clusterNodesSecurityGroupRules"}},
}

var machineMoves = []move{
	{from: []string{"flavor"}, to: []string{"flavor", "filter", "name"}},
	{from: []string{"flavorID"}, to: []string{"flavor", "id"}},
}

// fieldRenames turn the field paths a v1beta1 case expects, in the error's field and message,
// into v1beta2 paths.
var fieldRenames = []struct{ from, to string }{
	{"spec.apiServerLoadBalancer", "spec.apiServer.managedLoadBalancer"},
	{"spec.apiServerFloatingIP", "spec.apiServer.floatingIP"},
	{"spec.apiServerFixedIP", "spec.apiServer.fixedIP"},
	{"spec.apiServerPort", "spec.apiServer.port"},
	{"spec.disableAPIServerFloatingIP", "spec.apiServer.enableFloatingIP"},
	{"spec.disableExternalNetwork", "spec.enableExternalNetwork"},
	{"spec.networkMTU", "spec.managedNetwork.mtu"},
	{"spec.externalRouterIPs", "spec.managedRouter.externalIPs"},
	{"allNodesSecurityGroupRules", "clusterNodesSecurityGroupRules"},
	{"].disablePortSecurity", "].enablePortSecurity"},
	{"spec.flavorID", "spec.flavor.id"},
}

// inV1beta2 is the case's v1beta2 twin.
func (tc *testCase) inV1beta2() (*testCase, error) {
	twin := &testCase{path: tc.path, expect: tc.expect, fields: tc.v1beta2Fields, messages: tc.v1beta2Messages}
	if len(twin.fields) == 0 {
		for _, f := range tc.fields {
			for _, r := range fieldRenames {
				f = strings.ReplaceAll(f, r.from, r.to)
			}
			twin.fields = append(twin.fields, f)
		}
	}
	if len(twin.messages) == 0 {
		for _, m := range tc.messages {
			for _, r := range fieldRenames {
				m = strings.ReplaceAll(m, r.from, r.to)
			}
			twin.messages = append(twin.messages, m)
		}
	}
	for _, doc := range tc.docs {
		d, err := docInV1beta2(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tc.path, err)
		}
		twin.docs = append(twin.docs, d)
	}
	return twin, nil
}

func docInV1beta2(doc *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out := doc.DeepCopy()
	if out.GetAPIVersion() != "infrastructure.cluster.x-k8s.io/v1beta1" {
		return out, nil // a Secret, a Cluster API object: the same in both
	}
	out.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta2")
	var specPath []string
	var moves []move
	switch out.GetKind() {
	case "OpenStackCluster":
		specPath, moves = []string{"spec"}, clusterMoves
	case "OpenStackClusterTemplate":
		specPath, moves = []string{"spec", "template", "spec"}, clusterMoves
	case "OpenStackMachine":
		specPath, moves = []string{"spec"}, machineMoves
	case "OpenStackMachineTemplate":
		specPath, moves = []string{"spec", "template", "spec"}, machineMoves
	default:
		return nil, fmt.Errorf("no v1beta2 form for kind %s", out.GetKind())
	}
	spec, found, err := unstructured.NestedMap(out.Object, specPath...)
	if err != nil || !found {
		return out, err
	}
	if err := applyMoves(spec, moves); err != nil {
		return nil, err
	}
	// The bastion's spec is a machine's.
	if bastion, ok, _ := unstructured.NestedMap(spec, "bastion", "spec"); ok && out.GetKind() != "OpenStackMachine" && out.GetKind() != "OpenStackMachineTemplate" {
		if err := applyMoves(bastion, machineMoves); err != nil {
			return nil, err
		}
		if err := unstructured.SetNestedMap(spec, bastion, "bastion", "spec"); err != nil {
			return nil, err
		}
	}
	if err := unstructured.SetNestedMap(out.Object, spec, specPath...); err != nil {
		return nil, err
	}
	return out, nil
}

// applyMoves moves the fields of a v1beta1 spec (or a bastion's) to their v1beta2 places, and
// inverts the ports' disablePortSecurity.
func applyMoves(spec map[string]any, moves []move) error {
	// flavor becomes an object: take both flavor fields out before putting either back.
	taken := make([]any, len(moves))
	for i, m := range moves {
		v, ok, _ := unstructured.NestedFieldNoCopy(spec, m.from...)
		if !ok {
			continue
		}
		unstructured.RemoveNestedField(spec, m.from...)
		if b, isBool := v.(bool); isBool && m.invert {
			v = !b
		}
		taken[i] = v
	}
	for i, m := range moves {
		if taken[i] == nil {
			continue
		}
		if err := unstructured.SetNestedField(spec, taken[i], m.to...); err != nil {
			return err
		}
	}
	if ports, ok, _ := unstructured.NestedSlice(spec, "ports"); ok {
		for _, p := range ports {
			port, isMap := p.(map[string]any)
			if !isMap {
				continue
			}
			if v, ok := port["disablePortSecurity"]; ok {
				delete(port, "disablePortSecurity")
				if b, isBool := v.(bool); isBool {
					v = !b
				}
				port["enablePortSecurity"] = v
			}
		}
		if err := unstructured.SetNestedSlice(spec, ports, "ports"); err != nil {
			return err
		}
	}
	return nil
}

// TestReadInTheOtherVersion creates each accepted case in one version and reads it in the other:
// what the server serves must hold every field of the case's translation (the server adds its
// defaults). The conversion webhook does the work; the translation above is its independent check.
func TestReadInTheOtherVersion(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	n := 0
	for _, file := range files {
		tc, err := loadCase(file)
		if err != nil {
			t.Fatal(err)
		}
		if tc.expect != "accepted" || tc.skipV1beta2 != "" || strings.HasPrefix(filepath.Base(file), "update-") {
			continue
		}
		twin, err := tc.inV1beta2()
		if err != nil {
			t.Fatal(err)
		}
		for _, pair := range []struct {
			from, to string
			write    []*unstructured.Unstructured
			want     []*unstructured.Unstructured
		}{{"v1beta1", "v1beta2", tc.docs, twin.docs}, {"v1beta2", "v1beta1", twin.docs, tc.docs}} {
			n++
			t.Run(pair.from+"-read-as-"+pair.to+"/"+strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
				ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("read-%03d", n)}}
				if err := env.Client.Create(ctx, ns); err != nil {
					t.Fatalf("creating namespace: %v", err)
				}
				for i, doc := range pair.write {
					doc = doc.DeepCopy()
					doc.SetNamespace(ns.Name)
					if err := env.Client.Create(ctx, doc); err != nil {
						t.Fatalf("creating document %d in %s: %v", i+1, pair.from, err)
					}
					want := pair.want[i]
					got := &unstructured.Unstructured{}
					got.SetGroupVersionKind(want.GroupVersionKind())
					if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: doc.GetName()}, got); err != nil {
						t.Fatalf("reading document %d as %s: %v", i+1, pair.to, err)
					}
					if path, ok := holds(got.Object["spec"], want.Object["spec"], "spec"); !ok {
						t.Errorf("document %d written in %s and read in %s lacks or changes %s:\nwant spec %v\ngot spec  %v",
							i+1, pair.from, pair.to, path, want.Object["spec"], got.Object["spec"])
					}
				}
			})
		}
	}
	if n < 20 {
		t.Fatalf("expected at least 20 reads (10 accepted cases, both directions), found %d", n)
	}
}

// holds says whether got has every field of want with the same value (maps may have more keys:
// the server's defaults; an empty list may be missing), and if not, the first path where they
// differ.
func holds(got, want any, path string) (string, bool) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path, false
		}
		for k, v := range w {
			if p, ok := holds(g[k], v, path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		if len(w) == 0 && got == nil {
			return "", true // an empty list is no list, once it has gone through the Go types
		}
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path, false
		}
		for i := range w {
			if p, ok := holds(g[i], w[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	default:
		// JSON numbers come back as int64 and are written as int64 or float64.
		return path, fmt.Sprint(got) == fmt.Sprint(want)
	}
}
