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

// Package envtestutil starts a real kube-apiserver and etcd (envtest) with the provider's CRDs and
// admission webhooks installed, for the tests that need an API server.
package envtestutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	managerscheme "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scheme"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/webhooks"
)

// ErrNoAssets means KUBEBUILDER_ASSETS is not set. Suites skip on it only in -short mode, so that
// a run that was meant to exercise the API server can never pass without one. `make test` sets it.
var ErrNoAssets = errors.New("KUBEBUILDER_ASSETS is not set; run the tests with 'make test', which builds kube-apiserver and etcd")

// Environment is a running API server with the provider's CRDs and webhooks.
type Environment struct {
	Config *rest.Config
	Client client.Client
	env    *envtest.Environment
	cancel context.CancelFunc
	done   chan error
}

// RepoRoot is the root of the repository, found from this file's location.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// CAPICRDPath is the directory of Cluster API's core CRDs in the module cache, at the version
// go.mod requires.
func CAPICRDPath() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/cluster-api").Output()
	if err != nil {
		return "", fmt.Errorf("finding the cluster-api module: %w", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "core", "config", "crd", "bases"), nil
}

// Start starts etcd and kube-apiserver, installs the CRDs from config/crd/bases (and Cluster API's
// core CRDs) and the webhook configuration from config/webhook, and serves the webhooks and the
// v1beta1 <-> v1beta2 conversion from a manager in this process.
func Start() (*Environment, error) { return StartWithCRDs() }

// StartWithCRDs is Start with the CRDs of more directories installed too.
func StartWithCRDs(crdDirs ...string) (*Environment, error) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, ErrNoAssets
	}
	root := RepoRoot()
	capiCRDs, err := CAPICRDPath()
	if err != nil {
		return nil, err
	}
	scheme, err := managerscheme.New()
	if err != nil {
		return nil, err
	}
	// With the scheme, envtest points the conversion webhook of each CRD whose kind converts
	// (ours: v1beta1 <-> v1beta2) at the manager below, as the release's CRDs point at its Service.
	env := &envtest.Environment{
		CRDDirectoryPaths:     append([]string{filepath.Join(root, "config", "crd", "bases"), capiCRDs}, crdDirs...),
		ErrorIfCRDPathMissing: true,
		CRDInstallOptions:     envtest.CRDInstallOptions{Scheme: scheme},
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			Paths: []string{filepath.Join(root, "config", "webhook")},
		},
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting envtest: %w", err)
	}
	e := &Environment{Config: cfg, env: env, done: make(chan error, 1)}

	wio := &env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{
			Host:    wio.LocalServingHost,
			Port:    wio.LocalServingPort,
			CertDir: wio.LocalServingCertDir,
		}),
	})
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("creating the webhook manager: %w", err)
	}
	if err := webhooks.SetupWithManager(mgr); err != nil {
		_ = env.Stop()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	go func() { e.done <- mgr.Start(ctx) }()

	if err := waitForWebhooks(ctx, mgr); err != nil {
		e.Stop()
		return nil, err
	}
	e.Client, err = client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		e.Stop()
		return nil, fmt.Errorf("creating the client: %w", err)
	}
	return e, nil
}

// waitForWebhooks polls, with a bound, until the webhook server answers TLS connections.
func waitForWebhooks(ctx context.Context, mgr ctrl.Manager) error {
	deadline := time.Now().Add(30 * time.Second)
	checker := mgr.GetWebhookServer().StartedChecker()
	for {
		err := checker(nil)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the webhook server did not start within 30s: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop stops the webhook manager and the API server.
func (e *Environment) Stop() {
	if e.cancel != nil {
		e.cancel()
		if err := <-e.done; err != nil {
			fmt.Fprintln(os.Stderr, "the webhook manager stopped with an error:", err)
		}
	}
	_ = e.env.Stop()
}

// EtcdURL is the address of the environment's etcd, for tests that read what the API server
// stored.
func (e *Environment) EtcdURL() string { return e.env.ControlPlane.Etcd.URL.String() }

// GVK is the group, version and kind of one of the provider's kinds.
func GVK(kind string) schema.GroupVersionKind {
	return infrav1.GroupVersion.WithKind(kind)
}
