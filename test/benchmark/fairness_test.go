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

package benchmark

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/controllers"
	managerscheme "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scheme"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/envtestutil"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

// BenchmarkFairness measures how long a victim's cluster takes to become Ready in a manager that
// hostile tenants share with it, as a ratio to its time alone in the same run. The manager runs
// both controllers with the components' worker counts (10 each) against a real kube-apiserver
// (envtest); the victim's cloud is the fake OpenStack. Each hostile tenant is a namespace whose
// identity Secret names an auth_url that never answers (a tarpit: the manager's real identity
// code, with its HTTP timeout), with CAPO_BENCH_FAIRNESS_CLUSTERS clusters (4) of its own. It
// reports the medians of
// CAPO_BENCH_FAIRNESS_RUNS (3) victims alone, then as many beside CAPO_BENCH_FAIRNESS_TENANTS
// (5) hostile tenants. Outside CI: set CAPO_BENCH_FAIRNESS=1 and KUBEBUILDER_ASSETS
// (`make bench-fairness`).
func BenchmarkFairness(b *testing.B) {
	if os.Getenv("CAPO_BENCH_FAIRNESS") == "" {
		b.Skip("set CAPO_BENCH_FAIRNESS=1 to run the fairness benchmark (minutes; outside CI)")
	}
	ctrllog.SetLogger(logr.Discard())
	tenants, clustersEach, runs := envInt(b, "CAPO_BENCH_FAIRNESS_TENANTS", 5), envInt(b, "CAPO_BENCH_FAIRNESS_CLUSTERS", 4), envInt(b, "CAPO_BENCH_FAIRNESS_RUNS", 3)
	env, err := envtestutil.Start()
	must(b, err)
	defer env.Stop()
	// A Keystone that never answers: each request is held until the client gives up, or the
	// benchmark ends.
	ended := make(chan struct{})
	tarpit := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-ended:
		}
	}))
	defer tarpit.Close()
	defer close(ended)
	ctx, cancel := context.WithCancel(ctrl.LoggerInto(context.Background(), logr.Discard()))
	defer cancel()
	factory := &fairnessFactory{fake: map[string]*fakeopenstack.Cloud{},
		real: &scope.SecretFactory{Reader: env.Client, Log: logr.Discard(), Timeout: 60 * time.Second}}
	startFairnessManager(ctx, b, env, factory)

	var alone, beside []time.Duration
	for i := range runs {
		alone = append(alone, victimReady(ctx, b, env.Client, factory, fmt.Sprintf("victim-alone-%d", i)))
	}
	for t := range tenants {
		hostileTenant(ctx, b, env.Client, fmt.Sprintf("hostile-%d", t), tarpit.URL, clustersEach)
	}
	// The hostile reconciles hold their workers before the victims start.
	time.Sleep(2 * time.Second)
	for i := range runs {
		beside = append(beside, victimReady(ctx, b, env.Client, factory, fmt.Sprintf("victim-beside-%d", i)))
	}
	a, h, worst := median(alone), median(beside), slices.Max(beside)
	b.Logf("victim ready alone %v (median of %v), beside %d hostile tenants with %d clusters each %v (median of %v): %.2fx; the slowest beside them %.2fx",
		a.Round(10*time.Millisecond), roundAll(alone), tenants, clustersEach, h.Round(10*time.Millisecond), roundAll(beside), h.Seconds()/a.Seconds(), worst.Seconds()/a.Seconds())
	b.ReportMetric(a.Seconds(), "alone-s")
	b.ReportMetric(h.Seconds(), "beside-s")
	b.ReportMetric(h.Seconds()/a.Seconds(), "ratio")
	b.ReportMetric(worst.Seconds()/a.Seconds(), "worst-ratio")
}

// fairnessFactory hands each victim namespace its fake cloud, and every other namespace the
// manager's real identity code.
type fairnessFactory struct {
	mu   sync.Mutex
	fake map[string]*fakeopenstack.Cloud
	real *scope.SecretFactory
}

func (f *fairnessFactory) NewClients(ctx context.Context, namespace string, ref *infrav1.OpenStackIdentityReference) (*scope.Clients, error) {
	f.mu.Lock()
	cloud := f.fake[namespace]
	f.mu.Unlock()
	if cloud != nil {
		return cloud.Factory().NewClients(ctx, namespace, ref)
	}
	return f.real.NewClients(ctx, namespace, ref)
}

func startFairnessManager(ctx context.Context, b *testing.B, env *envtestutil.Environment, factory scope.Factory) {
	scheme, err := managerscheme.New()
	must(b, err)
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	must(b, err)
	workers := controller.Options{MaxConcurrentReconciles: 10, SkipNameValidation: ptr.To(true)}
	must(b, (&controllers.OpenStackClusterReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorder("openstackcluster-controller"), ScopeFactory: factory}).SetupWithManager(ctx, mgr, workers))
	must(b, (&controllers.OpenStackMachineReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorder("openstackmachine-controller"), ScopeFactory: factory}).SetupWithManager(ctx, mgr, workers))
	go func() { _ = mgr.Start(ctx) }()
}

// victimReady creates a cluster with a managed network and a load balancer in a namespace of its
// own, on a fake cloud of its own, and returns how long it took to become Ready.
func victimReady(ctx context.Context, b *testing.B, c client.Client, factory *fairnessFactory, ns string) time.Duration {
	cloud := fakeopenstack.New(fakeopenstack.Options{PendingDuration: 2 * time.Second})
	cloud.SetAvailabilityZones("az1")
	ext := cloud.AddNetwork("public", true)
	cloud.AddSubnet(ext, "public-subnet", "172.24.4.0/24")
	factory.mu.Lock()
	factory.fake[ns] = cloud
	factory.mu.Unlock()
	must(b, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	start := time.Now()
	osc := fairnessCluster(ctx, b, c, ns, "c", infrav1.OpenStackClusterSpec{
		IdentityRef:           &infrav1.OpenStackIdentityReference{Name: "cloud-config", CloudName: "openstack"},
		ManagedSubnets:        []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24"}},
		ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{},
		APIServerLoadBalancer: &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true)},
	})
	deadline := time.Now().Add(5 * time.Minute)
	for {
		got := &infrav1.OpenStackCluster{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(osc), got); err == nil && conditions.IsTrue(got, infrav1.ReadyCondition) {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			b.Fatalf("victim %s not Ready after 5 minutes", ns)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// hostileTenant makes namespace ns with an identity Secret whose auth_url is the tarpit, and n
// clusters.
func hostileTenant(ctx context.Context, b *testing.B, c client.Client, ns, tarpit string, n int) {
	must(b, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	clouds := fmt.Sprintf("clouds:\n  openstack:\n    auth:\n      auth_url: %s/v3\n      username: u\n      password: p\n      project_name: p\n      user_domain_name: Default\n      project_domain_name: Default\n    region_name: RegionOne\n", tarpit)
	must(b, c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cloud-config", Namespace: ns},
		Data: map[string][]byte{scope.CloudsSecretKey: []byte(clouds)}}))
	for i := range n {
		fairnessCluster(ctx, b, c, ns, fmt.Sprintf("h%d", i), infrav1.OpenStackClusterSpec{
			IdentityRef:           &infrav1.OpenStackIdentityReference{Name: "cloud-config", CloudName: "openstack"},
			ManagedSubnets:        []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24"}},
			ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{},
			APIServerLoadBalancer: &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true)},
		})
	}
}

// fairnessCluster creates a Cluster and the OpenStackCluster it owns, as Cluster API would.
func fairnessCluster(ctx context.Context, b *testing.B, c client.Client, ns, name string, spec infrav1.OpenStackClusterSpec) *infrav1.OpenStackCluster {
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: clusterv1.ClusterSpec{
		Paused:            ptr.To(false),
		InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackCluster", Name: name},
	}}
	must(b, c.Create(ctx, cluster))
	osc := &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: name, UID: cluster.UID}}}, Spec: spec}
	must(b, c.Create(ctx, osc))
	return osc
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	must(b, err)
	return n
}

func roundAll(d []time.Duration) []time.Duration {
	out := make([]time.Duration, len(d))
	for i, x := range d {
		out[i] = x.Round(10 * time.Millisecond)
	}
	return out
}
