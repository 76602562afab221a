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

package framework

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// metricName matches the metric families the dashboard may query: the provider's, and
// controller-runtime's reconcile and work queue metrics.
var metricName = regexp.MustCompile(`\b(capo_[a-z_]+|controller_runtime_[a-z_]+|workqueue_[a-z_]+)\b`)

// DashboardMetrics reads a Grafana dashboard and returns the metric families its panels and
// variables query, sorted (histogram series such as _bucket named by their family). Every query
// must name at least one.
func DashboardMetrics(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Query string `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []string
	add := func(where, expr string) error {
		found := metricName.FindAllString(expr, -1)
		if len(found) == 0 {
			return fmt.Errorf("%s: %q queries no metric", where, expr)
		}
		for _, m := range found {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if strings.HasSuffix(m, "_seconds"+suffix) {
					m = strings.TrimSuffix(m, suffix)
				}
			}
			out = append(out, m)
		}
		return nil
	}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			return nil, fmt.Errorf("panel %q has no query", p.Title)
		}
		for _, t := range p.Targets {
			if err := add("panel "+p.Title, t.Expr); err != nil {
				return nil, err
			}
		}
	}
	for _, v := range dash.Templating.List {
		if err := add("variable "+v.Name, v.Query); err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
