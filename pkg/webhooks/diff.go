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

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// forbidChanges compares two API structs by their JSON form and returns one Forbidden error per
// field that differs. It descends into nested objects so that the error names the deepest field
// that changed (spec.apiServerLoadBalancer.provider rather than spec), but treats lists as values.
//
// Callers first copy every field that may change from newObj into oldObj; what still differs is
// an immutable field that the user tried to change.
func forbidChanges(path *field.Path, oldObj, newObj any, detail string) field.ErrorList {
	oldMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(oldObj)
	if err != nil {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("converting the stored object: %w", err))}
	}
	newMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(newObj)
	if err != nil {
		return field.ErrorList{field.InternalError(path, fmt.Errorf("converting the new object: %w", err))}
	}
	return diffMaps(path, oldMap, newMap, detail)
}

func diffMaps(path *field.Path, oldMap, newMap map[string]any, detail string) field.ErrorList {
	keys := make([]string, 0, len(oldMap)+len(newMap))
	for k := range oldMap {
		keys = append(keys, k)
	}
	for k := range newMap {
		if _, ok := oldMap[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)

	var errs field.ErrorList
	for _, k := range keys {
		oldV, newV := oldMap[k], newMap[k]
		if equality.Semantic.DeepEqual(oldV, newV) {
			continue
		}
		oldChild, oldIsMap := oldV.(map[string]any)
		newChild, newIsMap := newV.(map[string]any)
		if oldIsMap && newIsMap {
			errs = append(errs, diffMaps(path.Child(k), oldChild, newChild, detail)...)
			continue
		}
		errs = append(errs, field.Forbidden(path.Child(k), detail))
	}
	return errs
}
