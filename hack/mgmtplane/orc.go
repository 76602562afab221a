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

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// startORC installs the OpenStack Resource Controller's CRDs (from dir, which hack/orc.sh fills)
// and adds its manager (health on port 15) to the managers, when asked for. It reconciles ORC
// objects in every namespace with the credentials each object names, as ORC's own Deployment
// does; no leader election (one replica) and no metrics.
func (p *plane) startORC(ctx context.Context) error {
	if p.o.orc == "" {
		return nil
	}
	files, err := filepath.Glob(filepath.Join(p.o.orc, "crds", "*.yaml"))
	if err != nil {
		return fmt.Errorf("ORC: %w", err)
	}
	if len(files) == 0 {
		return fmt.Errorf("ORC: no CRDs in %s/crds", p.o.orc)
	}
	sort.Strings(files)
	var crds []*unstructured.Unstructured
	for _, f := range files {
		objs, err := readObjects(f)
		if err != nil {
			return fmt.Errorf("ORC: %w", err)
		}
		crds = append(crds, objs...)
	}
	if err := (&components{install: crds}).apply(ctx, p.c); err != nil {
		return fmt.Errorf("ORC: %w", err)
	}
	if _, err := os.Stat(filepath.Join(p.o.orc, "manager")); err != nil {
		return fmt.Errorf("ORC: %w", err)
	}
	p.managers = append(p.managers, &process{
		name: "orc", binary: filepath.Join(p.o.orc, "manager"), health: p.ports[15], healthPath: "/healthz",
		args: []string{
			"--kubeconfig", p.kubeconfig,
			"--metrics-bind-address=0",
			fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", p.ports[15]),
		},
	})
	p.ready = append(p.ready, "orc="+p.o.orc)
	return nil
}
