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

package controllers

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	managerscheme "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scheme"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/takeover"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/envtestutil"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

var (
	env    *envtestutil.Environment
	clouds = &cloudsByNamespace{m: map[string]*fakeopenstack.Cloud{}}
)

// cloudsByNamespace hands each test namespace its own fake OpenStack.
type cloudsByNamespace struct {
	mu sync.Mutex
	m  map[string]*fakeopenstack.Cloud
	// refused are the namespaces whose credentials do not work, with the error they get.
	refused map[string]error
	// real are the namespaces whose credentials go through a real factory (their Secret, the
	// manager's identity code, a real cloud or the hostile one).
	real map[string]scope.Factory
}

// useReal has namespace's credentials read and used by factory.
func (c *cloudsByNamespace) useReal(namespace string, factory scope.Factory) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.real == nil {
		c.real = map[string]scope.Factory{}
	}
	c.real[namespace] = factory
}

// refuse makes the credentials of namespace fail with err (nil: work again).
func (c *cloudsByNamespace) refuse(namespace string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refused == nil {
		c.refused = map[string]error{}
	}
	c.refused[namespace] = err
}

func (c *cloudsByNamespace) set(namespace string, cloud *fakeopenstack.Cloud) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[namespace] = cloud
}

func (c *cloudsByNamespace) NewClients(ctx context.Context, namespace string, ref *infrav1.OpenStackIdentityReference) (*scope.Clients, error) {
	c.mu.Lock()
	cloud, refused, real := c.m[namespace], c.refused[namespace], c.real[namespace]
	c.mu.Unlock()
	if refused != nil {
		return nil, refused
	}
	if real != nil {
		return real.NewClients(ctx, namespace, ref)
	}
	if cloud == nil {
		return nil, fmt.Errorf("test setup: no fake cloud for namespace %s", namespace)
	}
	return cloud.Factory().NewClients(ctx, namespace, ref)
}

func TestMain(m *testing.M) {
	flag.Parse()
	// The manager's own log is not the test's output: it is discarded (tests that read the log
	// give the reconcilers a logger of their own).
	ctrl.SetLogger(logr.Discard())
	var err error
	env, err = envtestutil.StartWithCRDs(filepath.Join(envtestutil.RepoRoot(), "test", "envtestutil", "testdata", "externaldns"),
		filepath.Join(envtestutil.RepoRoot(), "test", "envtestutil", "testdata", "orc"))
	if errors.Is(err, envtestutil.ErrNoAssets) && testing.Short() {
		fmt.Println("skipping the controller suite in -short mode:", err)
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done, err := startManager(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		env.Stop()
		os.Exit(1)
	}
	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
	}
	env.Stop()
	os.Exit(code)
}

func startManager(ctx context.Context) (chan error, error) {
	scheme, err := managerscheme.New()
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		return nil, err
	}
	// A load balancer in ERROR is recreated after three observations a second apart rather than
	// ten seconds apart, so that the test of the recovery is quick.
	memory := loadbalancer.NewMemory()
	memory.ErrorInterval = time.Second
	// The takeover record is read at every reconcile, so that a test that records a takeover
	// sees it at once.
	record := &takeover.Record{Reader: mgr.GetAPIReader(), Key: takeoverRecord, MaxAge: time.Nanosecond}
	if err := mgr.GetAPIReader().Get(ctx, client.ObjectKey{Name: takeoverRecord.Namespace}, &corev1.Namespace{}); apierrors.IsNotFound(err) {
		if err := mgr.GetClient().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: takeoverRecord.Namespace}}); err != nil {
			return nil, err
		}
	}
	if err := (&OpenStackClusterReconciler{
		Client:             mgr.GetClient(),
		APIReader:          mgr.GetAPIReader(),
		Recorder:           mgr.GetEventRecorder("openstackcluster-controller"),
		ScopeFactory:       clouds,
		LoadBalancerMemory: memory,
		Takeover:           record,
		// Every endpoint host of the tests is under example.com.
		DNSSuffixes: []string{"example.com"},
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 4}); err != nil {
		return nil, err
	}
	if err := (&OpenStackMachineReconciler{
		Client:       mgr.GetClient(),
		APIReader:    mgr.GetAPIReader(),
		Recorder:     mgr.GetEventRecorder("openstackmachine-controller"),
		ScopeFactory: clouds,
		Takeover:     record,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 4}); err != nil {
		return nil, err
	}
	if err := (&OpenStackFloatingIPPoolReconciler{
		Client:       mgr.GetClient(),
		APIReader:    mgr.GetAPIReader(),
		Recorder:     mgr.GetEventRecorder("openstackfloatingippool-controller"),
		ScopeFactory: clouds,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 2}); err != nil {
		return nil, err
	}
	if err := (&OpenStackMachineTemplateReconciler{Client: mgr.GetClient(), ScopeFactory: clouds}).
		SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 2}); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return done, nil
}

// takeoverRecord is the operator's takeover record the test manager reads.
var takeoverRecord = types.NamespacedName{Namespace: "capo-system", Name: takeover.DefaultName}

// recordTakeover records, as the pre-flight does, the operator's takeover of each object from
// upstream CAPO.
func recordTakeover(ctx context.Context, g gomega.Gomega, objs ...client.Object) {
	g.Eventually(func() error {
		cm := &corev1.ConfigMap{}
		err := env.Client.Get(ctx, takeoverRecord, cm)
		if apierrors.IsNotFound(err) {
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: takeoverRecord.Namespace, Name: takeoverRecord.Name}}
		} else if err != nil {
			return err
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		for _, obj := range objs {
			g.Expect(obj.GetUID()).NotTo(gomega.BeEmpty(), "a takeover is recorded for an object that exists")
			kind := "OpenStackCluster"
			if _, ok := obj.(*infrav1.OpenStackMachine); ok {
				kind = "OpenStackMachine"
			}
			cm.Data[takeover.Entry(kind, obj.GetNamespace(), obj.GetName())] = string(obj.GetUID())
		}
		if cm.ResourceVersion == "" {
			return env.Client.Create(ctx, cm)
		}
		return env.Client.Update(ctx, cm)
	}).WithTimeout(10 * time.Second).Should(gomega.Succeed())
	// The record is read at each reconcile and changes in it start none: each object is
	// touched, so that the takeover begins now rather than at its next requeue.
	for _, obj := range objs {
		g.Eventually(func() error {
			cur := obj.DeepCopyObject().(client.Object)
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
				return err
			}
			a := cur.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			a["test/takeover-recorded"] = "true"
			cur.SetAnnotations(a)
			return env.Client.Update(ctx, cur)
		}).WithTimeout(10 * time.Second).Should(gomega.Succeed())
	}
}

// reasonsOf are the reasons of obj's conditions.
func reasonsOf(osc *infrav1.OpenStackCluster) []string {
	var out []string
	for _, c := range osc.Status.Conditions {
		out = append(out, c.Reason)
	}
	return out
}
