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

package fakeopenstack

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// requestBody renders a gophercloud create or update options value into the JSON object the real
// client would send, by calling its To...Map method, and returns the object under its single
// top-level key ({"network": {...}} gives {...}).
func requestBody(opts any) (map[string]any, error) {
	v := reflect.ValueOf(opts)
	if !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return map[string]any{}, nil
	}
	for i := 0; i < v.NumMethod(); i++ {
		name := v.Type().Method(i).Name
		if !strings.HasPrefix(name, "To") || !strings.HasSuffix(name, "Map") {
			continue
		}
		method := v.Method(i)
		if method.Type().NumIn() != 0 || method.Type().NumOut() != 2 {
			continue
		}
		out := method.Call(nil)
		if err, _ := out[1].Interface().(error); err != nil {
			return nil, err
		}
		// Round-trip through JSON, as the request would travel, so that nested lists and maps
		// have the same types whichever way gophercloud built them.
		raw, err := json.Marshal(out[0].Interface())
		if err != nil {
			return nil, err
		}
		var outer map[string]any
		if err := json.Unmarshal(raw, &outer); err != nil {
			return nil, err
		}
		if len(outer) == 1 {
			for _, inner := range outer {
				if m, ok := inner.(map[string]any); ok {
					return m, nil
				}
			}
		}
		return outer, nil
	}
	return nil, fmt.Errorf("fake: %T has no request body method", opts)
}

// decodeInto fills a gophercloud result struct from request-body fields, by their JSON names.
func decodeInto(fields map[string]any, into any) {
	raw, _ := json.Marshal(fields)
	_ = json.Unmarshal(raw, into)
}

// stringMap is a request body's object of strings (Nova's or Cinder's metadata) as the API
// stores it; empty, not nil, when the body has none.
func stringMap(v any) map[string]string {
	out := map[string]string{}
	if m, ok := v.(map[string]any); ok {
		for k := range m {
			out[k] = str(m, k)
		}
	}
	return out
}

func str(m map[string]any, key string) string {
	if v, ok := m[key]; ok && v != nil {
		return fmt.Sprint(v)
	}
	return ""
}
