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
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// upstreamPorts are the ports upstream CAPO's manager listens on.
type upstreamPorts struct{ webhook, health, diagnostics int }

// switcher swaps the infrastructure provider of the plane between this provider (as the plane
// starts) and upstream CAPO, the way docs/switching-from-upstream.md has an operator do it, for
// the end-to-end takeover spec: to upstream, this provider's manager stops, its webhook
// configurations go and upstream's CRDs replace its own (the plane stands in for an operator who
// installed upstream); to this provider, upstream's manager stops and this provider's components
// are applied again (its CRDs replace upstream's, upstream's other CRDs stay), then its manager
// starts. Objects and their status stay in the API server all along: the in-place switch.
// Upstream's manager runs as a process with an administrator's kubeconfig and without admission
// webhooks: it is the "before" of the spec, not under test.
type switcher struct {
	sup         *supervisor
	c           client.Client
	comps       *components
	ours        *process
	upstream    *process
	crds        []*unstructured.Unstructured
	oursWebhook int
	caPEM       []byte
	logs        string

	mu      sync.Mutex
	running string
}

func newSwitcher(dir string, sup *supervisor, c client.Client, comps *components, ours *process, oursWebhook int, caPEM []byte,
	logs, certs, kubeconfig string, ports upstreamPorts) (*switcher, error) {
	files, err := filepath.Glob(filepath.Join(dir, "crds", "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no CRDs in %s", filepath.Join(dir, "crds"))
	}
	var crds []*unstructured.Unstructured
	for _, f := range files {
		objs, err := readObjects(f)
		if err != nil {
			return nil, err
		}
		crds = append(crds, objs...)
	}
	manager := filepath.Join(dir, "manager")
	if _, err := os.Stat(manager); err != nil {
		return nil, err
	}
	s := &switcher{
		sup: sup, c: c, comps: comps, ours: ours, crds: crds, oursWebhook: oursWebhook, caPEM: caPEM, logs: logs,
		running: "ours",
		upstream: &process{
			name: "upstream-capo-manager", binary: manager, health: ports.health,
			env: []string{"KUBECONFIG=" + kubeconfig},
			args: []string{
				"--webhook-port", strconv.Itoa(ports.webhook), "--webhook-cert-dir", certs,
				"--health-addr", fmt.Sprintf("127.0.0.1:%d", ports.health),
				"--diagnostics-address", fmt.Sprintf("127.0.0.1:%d", ports.diagnostics), "--insecure-diagnostics",
			},
		},
	}
	sup.add(s.upstream)
	return s, nil
}

// routes adds POST /provider/upstream and POST /provider/ours to the control endpoint: each
// returns once the named provider's manager is ready (200), or says why it is not (500).
func (s *switcher) routes(mux *http.ServeMux) {
	mux.HandleFunc("POST /provider/{to}", func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if err := s.switchTo(r.Context(), r.PathValue("to")); err != nil {
			logf("switching to %s: %v", r.PathValue("to"), err)
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		logf("switched to %s in %s", r.PathValue("to"), time.Since(start).Round(time.Millisecond))
		_, _ = fmt.Fprintf(w, "running=%s\nswitched_in=%s\n", r.PathValue("to"), time.Since(start).Round(time.Millisecond))
	})
}

func (s *switcher) switchTo(ctx context.Context, to string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// The supervisor neither restarts nor lets the control endpoint touch a manager mid-switch.
	s.sup.mu.Lock()
	defer s.sup.mu.Unlock()
	if to != "ours" && to != "upstream" {
		return fmt.Errorf("no provider %q: ours or upstream", to)
	}
	if to == s.running {
		return nil
	}
	if to == "upstream" {
		s.ours.stop()
		s.running = "none"
		for _, w := range s.comps.webhooks {
			obj := &unstructured.Unstructured{}
			obj.SetGroupVersionKind(w.GroupVersionKind())
			obj.SetName(w.GetName())
			if err := s.c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting %s %s: %w", w.GetKind(), w.GetName(), err)
			}
		}
		if err := (&components{install: s.crds}).apply(ctx, s.c); err != nil {
			return err
		}
		if err := s.upstream.start(s.logs, s.sup.exited); err != nil {
			return err
		}
		s.running = to
		return s.upstream.waitReady(ctx)
	}
	s.upstream.stop()
	s.running = "none"
	if err := s.comps.apply(ctx, s.c); err != nil {
		return err
	}
	if err := installProviderWebhooks(ctx, s.c, s.comps, s.oursWebhook, s.caPEM); err != nil {
		return err
	}
	if err := s.ours.start(s.logs, s.sup.exited); err != nil {
		return err
	}
	s.running = to
	return s.ours.waitReady(ctx)
}

// stop stops upstream's manager if it runs.
func (s *switcher) stop() { s.upstream.stop() }
