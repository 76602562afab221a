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

package preflight

import (
	"fmt"
	"io/fs"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/capo-multiaz/cluster-api-provider-openstack/config/crd/bases"
)

// Schemas are the structural schemas this provider's CRDs give each kind, per version served
// (v1beta1, which upstream CAPO v0.14 stores, and v1beta2, which its v0.15 stores), keyed
// "<version>/<kind>": what the API server keeps of a stored object once these CRDs replace
// upstream's.
type Schemas map[string]*apiextensionsv1.JSONSchemaProps

// Of is the schema of kind in version, or nil.
func (s Schemas) Of(version, kind string) *apiextensionsv1.JSONSchemaProps {
	return s[version+"/"+kind]
}

// OurSchemas reads the schemas of the CRDs built into this binary.
func OurSchemas() (Schemas, error) {
	files, err := fs.Glob(bases.CRDs, "*.yaml")
	if err != nil {
		return nil, err
	}
	out := Schemas{}
	for _, f := range files {
		data, err := fs.ReadFile(bases.CRDs, f)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, v := range crd.Spec.Versions {
			if v.Served && v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
				out[v.Name+"/"+crd.Spec.Names.Kind] = v.Schema.OpenAPIV3Schema
			}
		}
	}
	return out, nil
}

// pruned lists the paths under value that schema does not know, which the API server drops
// (structural pruning) when it reads or writes the object through a CRD with that schema. path
// is value's own path, "spec.bastion" style; list items are written [i].
func pruned(path string, value any, schema *apiextensionsv1.JSONSchemaProps) []string {
	if schema == nil || (schema.XPreserveUnknownFields != nil && *schema.XPreserveUnknownFields) {
		return nil
	}
	switch v := value.(type) {
	case map[string]any:
		var out []string
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			child := join(path, k)
			if prop, ok := schema.Properties[k]; ok {
				out = append(out, pruned(child, v[k], &prop)...)
				continue
			}
			if schema.AdditionalProperties != nil {
				if schema.AdditionalProperties.Schema != nil {
					out = append(out, pruned(child, v[k], schema.AdditionalProperties.Schema)...)
				}
				continue
			}
			out = append(out, child)
		}
		return out
	case []any:
		if schema.Items == nil || schema.Items.Schema == nil {
			return nil
		}
		var out []string
		for i, item := range v {
			out = append(out, pruned(fmt.Sprintf("%s[%d]", path, i), item, schema.Items.Schema)...)
		}
		return out
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	if strings.ContainsAny(key, ".[]/") {
		return fmt.Sprintf("%s[%q]", path, key)
	}
	return path + "." + key
}
