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
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/capo-multiaz/cluster-api-provider-openstack/internal/localenv"
	"github.com/capo-multiaz/cluster-api-provider-openstack/internal/preflight"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/envtestutil"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/framework"
)

// Upstream CAPO's own files (../shared/upstream-v1beta2 beside the work tree; its SOURCES names
// the repository, commit and path of each), used as they are: every kustomization rendered, every
// template, with the variables clusterctl would fill in. Each of this provider's objects in them
// is created with strict field validation in the version it is written in, and read back through
// the other version with nothing lost; each patch of upstream's ClusterClass names a field of
// this provider's schema.

// upstreamFilesDir is where upstream's files are (framework.UpstreamFilesDir); the test is skipped
// on a machine that has none.
func upstreamFilesDir(t *testing.T) string {
	t.Helper()
	dir, err := framework.UpstreamFilesDir(envtestutil.RepoRoot())
	if err != nil {
		t.Fatal(err)
	}
	if dir == "" {
		t.Skip("upstream CAPO's files are not on this machine (set CAPO_UPSTREAM_FILES to their directory)")
	}
	return dir
}

// upstreamVariables are the values clusterctl would be given for upstream's templates.
var upstreamVariables = map[string]string{
	"CLUSTER_NAME":                           "upstream",
	"KUBERNETES_VERSION":                     "v1.34.1",
	"OPENSTACK_SSH_KEY_NAME":                 "ops",
	"OPENSTACK_CLOUD":                        "openstack",
	"OPENSTACK_CLOUD_CACERT_B64":             "Cg==",
	"OPENSTACK_CLOUD_YAML_B64":               "Y2xvdWRzOiB7fQo=",
	"OPENSTACK_CLOUD_PROVIDER_CONF_B64":      "Cg==",
	"CONTROL_PLANE_MACHINE_COUNT":            "3",
	"WORKER_MACHINE_COUNT":                   "2",
	"OPENSTACK_FAILURE_DOMAIN":               "az1",
	"OPENSTACK_FAILURE_DOMAIN_ALT":           "az2",
	"OPENSTACK_NODE_MACHINE_FLAVOR":          "m1.medium",
	"OPENSTACK_CONTROL_PLANE_MACHINE_FLAVOR": "m1.large",
	"OPENSTACK_BASTION_MACHINE_FLAVOR":       "m1.small",
	"OPENSTACK_IMAGE_NAME":                   "ubuntu-2404-kube-v1.34.1",
	"OPENSTACK_IMAGE_NAME_UPGRADE_FROM":      "ubuntu-2404-kube-v1.33.5",
	"OPENSTACK_BASTION_IMAGE_NAME":           "cirros",
	"OPENSTACK_FLATCAR_IMAGE_NAME":           "flatcar",
	"FLATCAR_IMAGE_NAME":                     "flatcar",
	"OPENSTACK_EXTERNAL_NETWORK_ID":          "6c90b532-7ba0-418a-a276-5ae55060b5b0",
	"OPENSTACK_EXTERNAL_NETWORK_NAME":        "public",
	"OPENSTACK_DNS_NAMESERVERS":              "192.0.2.53",
	"OPENSTACK_VOLUME_TYPE_ALT":              "ssd",
	"CLUSTER_EXTRA_NET_1":                    "cad5a91a-36de-4388-823b-b0cc82cadfdc",
	"CLUSTER_EXTRA_NET_2":                    "e2407c18-c4e7-4d3d-befa-8eec5d8756f2",
	"COREOS_OPENSTACK_INSTANCE_UUID":         "${COREOS_OPENSTACK_INSTANCE_UUID}",
	"COREOS_OPENSTACK_HOSTNAME":              "${COREOS_OPENSTACK_HOSTNAME}",
}

var variable = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)(:=([^}]*))?\}`)

// substitute fills in the variables as clusterctl does: the value given, else the default, else
// a plausible word.
func substitute(text string) string {
	return variable.ReplaceAllStringFunc(text, func(m string) string {
		parts := variable.FindStringSubmatch(m)
		if v, ok := upstreamVariables[parts[1]]; ok {
			return v
		}
		if parts[2] != "" {
			return strings.Trim(parts[3], `"`)
		}
		return "value-of-" + strings.ToLower(strings.ReplaceAll(parts[1], "_", "-"))
	})
}

// upstreamDocuments are the rendered documents of upstream's files, by where they come from:
// each kustomization (not a component) rendered, and each template.
func upstreamDocuments(t *testing.T, dir string) map[string][]*unstructured.Unstructured {
	t.Helper()
	out := map[string][]*unstructured.Unstructured{}
	fsys := filesys.MakeFsOnDisk()
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsNone
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		var rendered []byte
		switch {
		case d.Name() == "kustomization.yaml":
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if strings.Contains(string(data), "kind: Component") {
				return nil
			}
			m, err := krusty.MakeKustomizer(opts).Run(fsys, filepath.Dir(path))
			if err != nil {
				return fmt.Errorf("rendering %s: %w", rel, err)
			}
			if rendered, err = m.AsYaml(); err != nil {
				return err
			}
			rel = filepath.Dir(rel)
		case strings.HasPrefix(rel, "templates/") && strings.HasSuffix(rel, ".yaml"):
			if rendered, err = os.ReadFile(path); err != nil {
				return err
			}
		default:
			return nil
		}
		docs, err := localenv.DecodeYAML([]byte(substitute(string(rendered))))
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		out[rel] = docs
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestUpstreamFilesApplyAndReadBackInTheOtherVersion applies every object of this provider's
// kinds in upstream's files, as written, and reads it back through the other version.
func TestUpstreamFilesApplyAndReadBackInTheOtherVersion(t *testing.T) {
	dir := upstreamFilesDir(t)
	ctx := context.Background()
	sources := upstreamDocuments(t, dir)
	if len(sources) < 20 {
		t.Fatalf("rendered %d kustomizations and templates, want every one of upstream's (20 or more)", len(sources))
	}
	checked := 0
	for _, source := range slices.Sorted(maps.Keys(sources)) {
		t.Run(source, func(t *testing.T) {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "upstream-files-"}}
			if err := env.Client.Create(ctx, ns); err != nil {
				t.Fatal(err)
			}
			for _, doc := range sources[source] {
				version, ok := strings.CutPrefix(doc.GetAPIVersion(), "infrastructure.cluster.x-k8s.io/")
				if !ok {
					continue // Cluster API's, ORC's, core kinds: not this provider's to serve
				}
				checked++
				obj := doc.DeepCopy()
				if obj.GetKind() != "OpenStackClusterIdentity" {
					obj.SetNamespace(ns.Name)
				} else {
					obj.SetName(ns.Name + "-" + obj.GetName())
				}
				what := fmt.Sprintf("%s %s (%s)", obj.GetKind(), obj.GetName(), version)
				if err := env.Client.Create(ctx, obj, &client.CreateOptions{Raw: &metav1.CreateOptions{FieldValidation: "Strict"}}); err != nil {
					t.Errorf("%s as upstream wrote it is refused: %v", what, err)
					continue
				}
				other := map[string]string{"v1beta1": "v1beta2", "v1beta2": "v1beta1"}[version]
				if other == "" {
					continue // a kind served in one version only
				}
				// Read in the other version, write that as a new object, read it back in the
				// version written: what upstream wrote must all be there.
				read := &unstructured.Unstructured{}
				read.SetAPIVersion("infrastructure.cluster.x-k8s.io/" + other)
				read.SetKind(obj.GetKind())
				if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), read); err != nil {
					t.Errorf("%s read as %s: %v", what, other, err)
					continue
				}
				copyOf := &unstructured.Unstructured{Object: map[string]any{"apiVersion": read.GetAPIVersion(), "kind": read.GetKind(), "spec": read.Object["spec"]}}
				copyOf.SetNamespace(ns.Name)
				// What v1beta1 keeps of a v1beta2 template's metadata is an annotation: it travels.
				copyOf.SetAnnotations(read.GetAnnotations())
				copyOf.SetLabels(read.GetLabels())
				copyOf.SetName(obj.GetName() + "-via-" + other)
				if err := env.Client.Create(ctx, copyOf, &client.CreateOptions{Raw: &metav1.CreateOptions{FieldValidation: "Strict"}}); err != nil {
					t.Errorf("%s as read in %s is refused when written back: %v", what, other, err)
					continue
				}
				back := &unstructured.Unstructured{}
				back.SetAPIVersion(doc.GetAPIVersion())
				back.SetKind(obj.GetKind())
				if err := env.Client.Get(ctx, client.ObjectKeyFromObject(copyOf), back); err != nil {
					t.Errorf("%s read back in %s: %v", what, version, err)
					continue
				}
				if path, ok := holds(back.Object["spec"], doc.Object["spec"], "spec"); !ok {
					t.Errorf("%s loses or changes %s through %s:\nwrote %v\nread  %v", what, path, other, doc.Object["spec"], back.Object["spec"])
				}
			}
		})
	}
	if checked < 60 {
		t.Fatalf("checked %d objects of this provider's kinds in upstream's files, want 60 or more", checked)
	}
	t.Logf("%d objects of this provider's kinds in %d of upstream's kustomizations and templates", checked, len(sources))
}

// TestUpstreamClusterClassPatchesNameOurFields resolves every JSON patch of upstream's
// ClusterClass that selects one of this provider's kinds against this provider's schema.
func TestUpstreamClusterClassPatchesNameOurFields(t *testing.T) {
	dir := upstreamFilesDir(t)
	schemas, err := preflight.OurSchemas()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "templates", "clusterclass-dev-test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs, err := localenv.DecodeYAML([]byte(substitute(string(data))))
	if err != nil {
		t.Fatal(err)
	}
	resolved := 0
	for _, doc := range docs {
		if doc.GetKind() != "ClusterClass" {
			continue
		}
		patches, _, _ := unstructured.NestedSlice(doc.Object, "spec", "patches")
		for _, p := range patches {
			patch, _ := p.(map[string]any)
			definitions, _, _ := unstructured.NestedSlice(patch, "definitions")
			for _, d := range definitions {
				def, _ := d.(map[string]any)
				apiVersion, _, _ := unstructured.NestedString(def, "selector", "apiVersion")
				kind, _, _ := unstructured.NestedString(def, "selector", "kind")
				version, ours := strings.CutPrefix(apiVersion, "infrastructure.cluster.x-k8s.io/")
				if !ours {
					continue
				}
				schema := schemas.Of(version, kind)
				if schema == nil {
					t.Errorf("patch %v selects %s %s, which this provider does not serve", patch["name"], apiVersion, kind)
					continue
				}
				ops, _, _ := unstructured.NestedSlice(def, "jsonPatches")
				for _, o := range ops {
					op, _ := o.(map[string]any)
					path, _ := op["path"].(string)
					if !schemaHasPath(schema, path, op["op"] == "add") {
						t.Errorf("patch %v: %s %s does not resolve in %s %s's schema", patch["name"], op["op"], path, version, kind)
						continue
					}
					resolved++
				}
			}
		}
	}
	if resolved < 5 {
		t.Fatalf("resolved %d patch paths of upstream's ClusterClass, want 5 or more", resolved)
	}
}

// schemaHasPath says whether a JSON pointer names a field of schema (an add may name a list's
// end, "-", or an index).
func schemaHasPath(schema *apiextensionsv1.JSONSchemaProps, path string, add bool) bool {
	s := schema
	for _, part := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		switch {
		case s.Items != nil && s.Items.Schema != nil && (part == "-" && add || isIndex(part)):
			s = s.Items.Schema
		case s.Properties != nil:
			next, ok := s.Properties[part]
			if !ok {
				return false
			}
			s = &next
		case s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
			s = s.AdditionalProperties.Schema
		case s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields:
			return true
		default:
			return false
		}
	}
	return true
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
