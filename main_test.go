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
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/controllers"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	managerscheme "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scheme"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/envtestutil"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/framework"
)

func parse(t *testing.T, args ...string) (*options, error) {
	t.Helper()
	o := newOptions()
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	o.addFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return o, o.validate()
}

func TestFlags(t *testing.T) {
	g := NewWithT(t)
	o, err := parse(t)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(o.webhookPort).To(Equal(9443))
	g.Expect(o.syncPeriod).To(Equal(10 * time.Minute))
	g.Expect(o.leaderElect).To(BeFalse())

	o, err = parse(t, "--leader-elect", "--openstackcluster-concurrency=3", "--openstackmachine-concurrency=7",
		"--watch-filter=team-a", "--namespace=capi", "--sync-period=1m", "--v=4", "--health-addr=:9999",
		"--diagnostics-address=:8080", "--insecure-diagnostics")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(o.leaderElect).To(BeTrue())
	g.Expect(o.clusterConcurrency).To(Equal(3))
	g.Expect(o.machineConcurrency).To(Equal(7))
	g.Expect(o.watchFilterValue).To(Equal("team-a"))
	g.Expect(o.watchNamespace).To(Equal("capi"))
	g.Expect(o.manager.InsecureDiagnostics).To(BeTrue())

	// The tenants' policy: the components file's empty default ("") is no entry.
	o, err = parse(t, `--dns-suffixes=""`, `--allowed-auth-url-hosts=""`)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(o.dnsSuffixes).To(BeEmpty(), "DNS publishing off")
	g.Expect(o.authEndpoints).To(BeEmpty(), "any auth_url")
	o, err = parse(t, "--dns-suffixes=Example.COM.,clusters.example.org", "--allowed-auth-url-hosts=Keystone.example.com,10.0.0.5:35357,https://id.example.org:5000")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(o.dnsSuffixes).To(Equal([]string{"example.com", "clusters.example.org"}))
	g.Expect(o.authEndpoints).To(Equal([]scope.AuthEndpoint{{Host: "keystone.example.com"}, {Host: "10.0.0.5", Port: "35357"},
		{Scheme: "https", Host: "id.example.org", Port: "5000"}}))
	_, err = parse(t, "--dns-suffixes=*.example.com", "--allowed-auth-url-hosts=http://user:pw@keystone:5000/v3")
	g.Expect(err).To(MatchError(And(ContainSubstring(`--dns-suffixes: "*.example.com" is not a DNS suffix`),
		ContainSubstring(`--allowed-auth-url-hosts: "http://user:pw@keystone:5000/v3" is not a host, host:port or scheme://host:port`))))

	_, err = parse(t, "--openstackcluster-concurrency=0", "--sync-period=0s")
	g.Expect(err).To(MatchError(And(ContainSubstring("--openstackcluster-concurrency must be at least 1, got 0"),
		ContainSubstring("--sync-period must be positive"))))
}

// fqName reads the metric name out of a prometheus.Desc's description.
var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// TestManagerStartsAndServesWebhooks runs the manager as main builds it, with its controllers,
// against a real API server whose webhook configuration points at it.
func TestManagerStartsAndServesWebhooks(t *testing.T) {
	if testing.Short() {
		t.Skip("needs envtest")
	}
	g := NewWithT(t)
	root := envtestutil.RepoRoot()
	capiCRDs, err := envtestutil.CAPICRDPath()
	g.Expect(err).NotTo(HaveOccurred())
	scheme, err := managerscheme.New()
	g.Expect(err).NotTo(HaveOccurred())
	// With the scheme, the CRDs' conversion webhooks point at the manager, as the release's do:
	// the CRDs store v1beta2, and the webhooks below see v1beta1.
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases"), capiCRDs},
		CRDInstallOptions:     envtest.CRDInstallOptions{Scheme: scheme},
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{Paths: []string{filepath.Join(root, "config", "webhook")}},
	}
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred(), "is KUBEBUILDER_ASSETS set? 'make test' sets it")
	defer func() { _ = env.Stop() }()

	wio := env.WebhookInstallOptions
	healthPort := freePort(t)
	o, err := parse(t,
		fmt.Sprintf("--health-addr=127.0.0.1:%d", healthPort),
		"--diagnostics-address=0",
		fmt.Sprintf("--webhook-port=%d", wio.LocalServingPort),
		"--webhook-cert-dir="+wio.LocalServingCertDir)
	g.Expect(err).NotTo(HaveOccurred())

	mgr, err := newManager(cfg, o)
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	g.Expect(setupControllers(ctx, mgr, o)).To(Succeed())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		g.Expect(<-done).To(Succeed())
	}()

	probe := func(path string) func() (int, error) {
		return func() (int, error) {
			resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s", healthPort, path))
			if err != nil {
				return 0, err
			}
			defer func() { _ = resp.Body.Close() }()
			return resp.StatusCode, nil
		}
	}
	g.Eventually(probe("/healthz"), 30*time.Second, 100*time.Millisecond).Should(Equal(http.StatusOK))
	g.Eventually(probe("/readyz"), 30*time.Second, 100*time.Millisecond).Should(Equal(http.StatusOK))

	// The API server calls this manager's webhooks: an immutable change is rejected by them.
	c, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme()})
	g.Expect(err).NotTo(HaveOccurred())
	cluster := &infrav1.OpenStackCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "default"},
		Spec:       infrav1.OpenStackClusterSpec{APIServerLoadBalancer: &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true)}},
	}
	g.Expect(c.Create(ctx, cluster)).To(Succeed())
	cluster.Spec.APIServerLoadBalancer.Provider = ptr.To("ovn")
	err = c.Update(ctx, cluster)
	g.Expect(err).To(HaveOccurred())
	g.Expect(strings.Contains(err.Error(), "spec.apiServerLoadBalancer.provider: Forbidden")).To(BeTrue(), err.Error())

	// Every metric the Grafana dashboard in docs/ queries is one this manager exports: the
	// provider's own (declared whether or not they have a series yet) and controller-runtime's.
	exported := map[string]bool{}
	descs := make(chan *prometheus.Desc, 16)
	go func() {
		for _, c := range slices.Concat(clients.Collectors(), loadbalancer.Collectors(), controllers.Collectors()) {
			c.Describe(descs)
		}
		close(descs)
	}()
	for d := range descs {
		exported[fqName.FindStringSubmatch(d.String())[1]] = true
	}
	queried, err := framework.DashboardMetrics(filepath.Join(root, "docs", "grafana-dashboard.json"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(queried).To(ContainElements("capo_apiserver_loadbalancers", "capo_openstack_api_requests_total", "controller_runtime_reconcile_time_seconds", "workqueue_depth"))
	// controller-runtime's series appear once the OpenStackCluster above was reconciled.
	g.Eventually(func(g Gomega) {
		families, err := ctrlmetrics.Registry.Gather()
		g.Expect(err).NotTo(HaveOccurred())
		for _, f := range families {
			exported[f.GetName()] = true
		}
		var missing []string
		for _, m := range queried {
			if !exported[m] {
				missing = append(missing, m)
			}
		}
		g.Expect(missing).To(BeEmpty(), "metrics the dashboard queries that the manager does not export")
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
}
