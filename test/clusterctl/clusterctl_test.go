//go:build clusterctl

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

// Package clusterctl proves the release artifacts with the real clusterctl: `clusterctl init`
// from a local repository, `clusterctl generate cluster` for every flavor (the result must pass
// admission), and `clusterctl move` of a multi-AZ cluster between two API servers, after which
// the provider adopts the load balancers without creating any.
//
// `make test-clusterctl` builds the release and clusterctl and sets:
//
//	CAPO_CLUSTERCTL       the clusterctl binary
//	CAPO_KUSTOMIZE        the kustomize binary (renders the Cluster API providers' components)
//	CAPO_CAPI_SOURCE      the cluster-api module's source directory
//	CAPO_RELEASE_DIR      this provider's release (make release: out/)
//	KUBEBUILDER_ASSETS    kube-apiserver and etcd
package clusterctl

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/controllers"
	"github.com/capo-multiaz/cluster-api-provider-openstack/internal/localenv"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	managerscheme "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scheme"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/storagemigration"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/webhooks"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/envtestutil"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/framework"
)

const (
	capiVersion    = "v1.14.2"
	releaseVersion = "v0.3.0"
)

type setup struct {
	clusterctl, kustomize, capiSource, release string
	// config is the clusterctl configuration naming the local repository.
	config string
	scheme *runtime.Scheme
}

func mustEnv(t *testing.T, key string) string {
	v := os.Getenv(key)
	if v == "" {
		t.Fatalf("%s is not set: run these tests with 'make test-clusterctl'", key)
	}
	return v
}

func TestClusterctl(t *testing.T) {
	g := NewWithT(t)
	ctrl.SetLogger(framework.DiscardLogger())
	s := &setup{
		clusterctl: mustEnv(t, "CAPO_CLUSTERCTL"),
		kustomize:  mustEnv(t, "CAPO_KUSTOMIZE"),
		capiSource: mustEnv(t, "CAPO_CAPI_SOURCE"),
		release:    mustEnv(t, "CAPO_RELEASE_DIR"),
	}
	var err error
	s.scheme, err = managerscheme.New()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(apiextensionsv1.AddToScheme(s.scheme)).To(Succeed())
	s.config = localRepository(t, s)

	source := startAPIServer(t, s, "source")
	t.Run("the components file passes a server-side dry run", func(t *testing.T) { componentsDryRun(t, s, source) })
	t.Run("the CRDs carry the labels Cluster API needs", func(t *testing.T) { contractLabels(t, s) })
	t.Run("clusterctl init installs the core provider and ours", func(t *testing.T) { initProviders(t, s, source) })
	t.Run("clusterctl generate cluster renders every flavor, and admission accepts it", func(t *testing.T) { generateFlavors(t, s, source) })
	t.Run("clusterctl move carries a multi-AZ cluster, whose load balancers are adopted", func(t *testing.T) { moveCluster(t, s, source) })
}

// apiServer is a kube-apiserver with etcd, and an administrator's kubeconfig for it.
type apiServer struct {
	kubeconfig string
	client     client.Client
	// convert is where this process serves the provider's CRD conversion for this API server,
	// and caBundle the CA of its certificate.
	convert  string
	caBundle []byte
}

func startAPIServer(t *testing.T, s *setup, name string) *apiServer {
	t.Helper()
	// No webhook configuration is installed; envtest makes the serving certificate for the
	// conversion this process serves (serveConversion).
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting the %s API server: %v", name, err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	wio := &env.WebhookInstallOptions
	serveConversion(t, s, cfg, wio)
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if _, err := localenv.WriteAdminKubeconfig(env, path); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s.scheme})
	if err != nil {
		t.Fatal(err)
	}
	// The cert-manager API stand-in (testdata/cert-manager-api.yaml), so that clusterctl init
	// finds cert-manager's API and does not try to download and run cert-manager.
	for _, obj := range decodeFile(t, "testdata/cert-manager-api.yaml") {
		if err := c.Create(context.Background(), obj); err != nil {
			t.Fatal(err)
		}
	}
	NewWithT(t).Eventually(func() error {
		return c.List(context.Background(), &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "cert-manager.io/v1", "kind": "IssuerList"}})
	}).WithTimeout(30 * time.Second).Should(Succeed())
	return &apiServer{kubeconfig: path, client: c, caBundle: wio.LocalServingCAData,
		convert: fmt.Sprintf("https://%s/convert", net.JoinHostPort(wio.LocalServingHost, strconv.Itoa(wio.LocalServingPort)))}
}

// serveConversion serves the provider's webhooks (conversion among them) from this process, as
// the manager's pods would: the CRDs store v1beta2, and an object written or read as v1beta1
// goes through the conversion webhook.
func serveConversion(t *testing.T, s *setup, cfg *rest.Config, wio *envtest.WebhookInstallOptions) {
	t.Helper()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:        s.scheme,
		Metrics:       metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{Host: wio.LocalServingHost, Port: wio.LocalServingPort, CertDir: wio.LocalServingCertDir}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := webhooks.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the webhook server: %v", err)
		}
	})
	NewWithT(t).Eventually(func() error { return mgr.GetWebhookServer().StartedChecker()(nil) }).
		WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(Succeed())
}

// localRepository lays out a clusterctl local repository: Cluster API's core, kubeadm bootstrap
// and kubeadm control plane providers rendered from the cluster-api module, and this provider's
// release. It returns the clusterctl configuration file that names it.
func localRepository(t *testing.T, s *setup) string {
	t.Helper()
	repo := t.TempDir()
	// clusterctl wants <repository>/<provider label>/<version>/<components file>.
	capi := []struct{ name, kind, label, dir, file string }{
		{"cluster-api", "CoreProvider", "cluster-api", "core", "core-components.yaml"},
		{"kubeadm", "BootstrapProvider", "bootstrap-kubeadm", "bootstrap/kubeadm", "bootstrap-components.yaml"},
		{"kubeadm", "ControlPlaneProvider", "control-plane-kubeadm", "controlplane/kubeadm", "control-plane-components.yaml"},
	}
	var providers strings.Builder
	providers.WriteString("providers:\n")
	for _, p := range capi {
		out, err := exec.Command(s.kustomize, "build", filepath.Join(s.capiSource, p.dir, "config", "default")).Output()
		if err != nil {
			t.Fatalf("rendering %s: %v", p.dir, err)
		}
		dir := filepath.Join(repo, p.label, capiVersion)
		writeFile(t, filepath.Join(dir, p.file), out)
		copyFile(t, filepath.Join(s.capiSource, "metadata.yaml"), filepath.Join(dir, "metadata.yaml"))
		fmt.Fprintf(&providers, "- name: %s\n  type: %s\n  url: file://%s\n", p.name, p.kind, filepath.Join(dir, p.file))
	}
	ours := filepath.Join(repo, "infrastructure-openstack", releaseVersion)
	files, err := filepath.Glob(filepath.Join(s.release, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no release in %s: run 'make release' (%v)", s.release, err)
	}
	for _, f := range files {
		copyFile(t, f, filepath.Join(ours, filepath.Base(f)))
	}
	fmt.Fprintf(&providers, "- name: openstack\n  type: InfrastructureProvider\n  url: file://%s\n", filepath.Join(ours, "infrastructure-components.yaml"))
	config := filepath.Join(repo, "clusterctl.yaml")
	writeFile(t, config, []byte(providers.String()))
	return config
}

func componentsDryRun(t *testing.T, s *setup, api *apiServer) {
	g := NewWithT(t)
	objs := s.components(t)
	g.Expect(objs).NotTo(BeEmpty())
	kinds := map[string]int{}
	for _, obj := range objs {
		kinds[obj.GetKind()]++
		// Namespaced objects need their namespace to exist even in a dry run: create it for real.
		if obj.GetKind() == "Namespace" {
			g.Expect(api.client.Create(context.Background(), obj.DeepCopy())).To(Succeed())
			continue
		}
		g.Expect(api.client.Create(context.Background(), obj, client.DryRunAll)).To(Succeed(), "%s %s", obj.GetKind(), obj.GetName())
	}
	g.Expect(kinds).To(HaveKeyWithValue("CustomResourceDefinition", 6), "four kinds of the Cluster API contract, OpenStackClusterIdentity and OpenStackFloatingIPPool")
	g.Expect(kinds).To(HaveKeyWithValue("Deployment", 1))
	g.Expect(kinds).To(HaveKeyWithValue("Certificate", 1))
	g.Expect(kinds).To(HaveKeyWithValue("ValidatingWebhookConfiguration", 1))
	g.Expect(kinds).To(HaveKeyWithValue("PodDisruptionBudget", 1), "one manager stays through a voluntary disruption")
	// The namespace stays (nothing runs namespace deletion here); clusterctl init applies over it.
}

func contractLabels(t *testing.T, s *setup) {
	g := NewWithT(t)
	for _, obj := range s.components(t) {
		labels := obj.GetLabels()
		g.Expect(labels).To(HaveKeyWithValue("cluster.x-k8s.io/provider", "infrastructure-openstack"), "%s %s", obj.GetKind(), obj.GetName())
		switch obj.GetKind() {
		case "CustomResourceDefinition":
			// Cluster API reads the API versions that implement its contract from this label, and
			// uses the latest (v1beta2), converted by the provider's webhook with cert-manager's CA.
			g.Expect(labels).To(HaveKeyWithValue("cluster.x-k8s.io/v1beta2", "v1beta1_v1beta2"), obj.GetName())
			g.Expect(obj.GetAnnotations()).To(HaveKeyWithValue("cert-manager.io/inject-ca-from", "capo-system/capo-serving-cert"))
			strategy, _, _ := unstructured.NestedString(obj.Object, "spec", "conversion", "strategy")
			service, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "conversion", "webhook", "clientConfig", "service")
			g.Expect(strategy).To(Equal("Webhook"), obj.GetName())
			g.Expect(service).To(Equal(map[string]string{"namespace": "capo-system", "name": "capo-webhook-service", "path": "/convert"}), obj.GetName())
		case "ValidatingWebhookConfiguration":
			g.Expect(obj.GetAnnotations()).To(HaveKeyWithValue("cert-manager.io/inject-ca-from", "capo-system/capo-serving-cert"))
		case "Deployment":
			var d appsv1.Deployment
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &d)).To(Succeed())
			g.Expect(d.Spec.Template.Spec.Containers[0].Image).To(HaveSuffix(":" + releaseVersion))
			g.Expect(d.Spec.Replicas).To(HaveValue(BeNumerically("==", 2)), "two managers: one leads, both serve the webhooks")
			g.Expect(d.Spec.Template.Spec.Containers[0].Env).To(ContainElement(HaveField("Name", "POD_NAMESPACE")), "the takeover record is read in the manager's namespace")
		case "PodDisruptionBudget":
			selector, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "selector", "matchLabels")
			g.Expect(selector).To(HaveKeyWithValue("control-plane", "capo-controller-manager"), "the budget selects the manager's pods")
			minAvailable, _, _ := unstructured.NestedInt64(obj.Object, "spec", "minAvailable")
			g.Expect(minAvailable).To(BeNumerically("==", 1))
		}
	}
}

// components is the components file as clusterctl applies it when no variable is set: each
// ${VAR:=default} replaced by its default, by clusterctl itself.
func (s *setup) components(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	return decode(t, s.run(t, nil, "generate", "yaml", "--from", filepath.Join(s.release, "infrastructure-components.yaml")))
}

func (s *setup) run(t *testing.T, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(s.clusterctl, append(args, "--config", s.config)...)
	cmd.Env = append(append(os.Environ(), "CLUSTERCTL_DISABLE_VERSIONCHECK=true", "XDG_CONFIG_HOME="+t.TempDir()), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("clusterctl %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.Bytes()
}

// clusterctlInit installs the providers, then removes the webhook configurations: nothing runs
// the managers' pods here, and the tests below talk to the API server directly.
func clusterctlInit(t *testing.T, s *setup, api *apiServer) {
	t.Helper()
	s.run(t, nil, "init", "--kubeconfig", api.kubeconfig,
		"--core", "cluster-api:"+capiVersion, "--bootstrap", "kubeadm:"+capiVersion,
		"--control-plane", "kubeadm:"+capiVersion, "--infrastructure", "openstack:"+releaseVersion)
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(api.client.DeleteAllOf(ctx, &admissionv1.ValidatingWebhookConfiguration{})).To(Succeed())
	g.Expect(api.client.DeleteAllOf(ctx, &admissionv1.MutatingWebhookConfiguration{})).To(Succeed())
	// The CRDs' conversion goes to this process instead of the manager's Service (with the CA
	// cert-manager would inject).
	for _, name := range storagemigration.CRDs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(api.client.Get(ctx, client.ObjectKey{Name: name}, crd)).To(Succeed())
		g.Expect(crd.Spec.Conversion.Webhook).NotTo(BeNil(), name)
		crd.Spec.Conversion.Webhook.ClientConfig = &apiextensionsv1.WebhookClientConfig{URL: ptr.To(api.convert), CABundle: api.caBundle}
		g.Expect(api.client.Update(ctx, crd)).To(Succeed())
	}
	// Served once a v1beta1 object can be written (converted to the stored v1beta2).
	g.Eventually(func() error {
		probe := &infrav1.OpenStackMachineTemplate{ObjectMeta: metav1.ObjectMeta{Name: "conversion-probe", Namespace: "default"},
			Spec: infrav1.OpenStackMachineTemplateSpec{Template: infrav1.OpenStackMachineTemplateResource{Spec: infrav1.OpenStackMachineSpec{
				Flavor: ptr.To("m1.small"), Image: infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("ubuntu")}}}}}}
		return api.client.Create(ctx, probe, client.DryRunAll)
	}).WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
}

func initProviders(t *testing.T, s *setup, api *apiServer) {
	g := NewWithT(t)
	ctx := context.Background()
	start := time.Now()
	clusterctlInit(t, s, api)
	t.Logf("clusterctl init: %s", time.Since(start).Round(100*time.Millisecond))

	for _, name := range []string{"openstackclusters", "openstackmachines", "openstackclustertemplates", "openstackmachinetemplates"} {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(api.client.Get(ctx, client.ObjectKey{Name: name + ".infrastructure.cluster.x-k8s.io"}, crd)).To(Succeed())
		g.Expect(crd.Labels).To(HaveKeyWithValue("clusterctl.cluster.x-k8s.io", ""))
	}
	deployment := &appsv1.Deployment{}
	g.Expect(api.client.Get(ctx, client.ObjectKey{Namespace: "capo-system", Name: "capo-controller-manager"}, deployment)).To(Succeed())
	args := strings.Join(deployment.Spec.Template.Spec.Containers[0].Args, " ")
	g.Expect(args).To(ContainSubstring("--openstackcluster-concurrency=10"), "clusterctl variables took their defaults")
	g.Expect(args).NotTo(ContainSubstring("${"))
	// clusterctl's inventory records each provider.
	providers := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "clusterctl.cluster.x-k8s.io/v1alpha3", "kind": "ProviderList"}}
	g.Expect(api.client.List(ctx, providers)).To(Succeed())
	var names []string
	for _, p := range providers.Items {
		names = append(names, fmt.Sprintf("%s/%s %s", p.GetNamespace(), p.GetName(), p.Object["version"]))
	}
	g.Expect(names).To(ContainElement("capo-system/infrastructure-openstack " + releaseVersion))
	g.Expect(names).To(ContainElement("capi-system/cluster-api " + capiVersion))
}

// flavorVariables are what a user sets before `clusterctl generate cluster`.
func flavorVariables() []string {
	clouds := base64.StdEncoding.EncodeToString([]byte("clouds:\n  openstack:\n    auth:\n      auth_url: https://keystone.example.com:5000/v3\n"))
	return []string{
		"OPENSTACK_CLOUD=openstack",
		"OPENSTACK_CLOUD_YAML_B64=" + clouds,
		"OPENSTACK_EXTERNAL_NETWORK_ID=5a8e5b5e-7d93-4c1e-9c55-2a0f5e4d6e01",
		"OPENSTACK_DNS_NAMESERVERS=192.0.2.53",
		"OPENSTACK_IMAGE_NAME=ubuntu-2404-kube-v1.33.1",
		"OPENSTACK_SSH_KEY_NAME=ops",
		"OPENSTACK_CONTROL_PLANE_MACHINE_FLAVOR=m1.medium",
		"OPENSTACK_NODE_MACHINE_FLAVOR=m1.small",
		"OPENSTACK_FAILURE_DOMAIN=az1",
		"OPENSTACK_CONTROL_PLANE_ENDPOINT_HOST=api.c1.example.com",
		"OPENSTACK_LB_NETWORK_ID=0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9",
		"OPENSTACK_LB_AZ_1=az1",
		"OPENSTACK_LB_AZ_1_SUBNET_ID=11111111-2222-4333-8444-555555555551",
		"OPENSTACK_LB_AZ_2=az2",
		"OPENSTACK_LB_AZ_2_SUBNET_ID=11111111-2222-4333-8444-555555555552",
	}
}

func generateFlavors(t *testing.T, s *setup, api *apiServer) {
	// Admission: our webhooks served by this process, with the CRDs of Cluster API's core and
	// kubeadm providers for the rest of the templates.
	env, err := envtestutil.StartWithCRDs(
		filepath.Join(s.capiSource, "bootstrap", "kubeadm", "config", "crd", "bases"),
		filepath.Join(s.capiSource, "controlplane", "kubeadm", "config", "crd", "bases"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(env.Stop)
	ctx := context.Background()

	for _, flavor := range []string{"", "multi-az", "without-lb", "clusterclass"} {
		name := "flavor-" + flavor
		if flavor == "" {
			name = "flavor-default"
		}
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
			args := []string{"generate", "cluster", "c1", "--kubeconfig", api.kubeconfig, "--infrastructure", "openstack:" + releaseVersion,
				"--kubernetes-version", "v1.33.1", "--control-plane-machine-count", "3", "--worker-machine-count", "2", "--target-namespace", name}
			if flavor != "" {
				args = append(args, "--flavor", flavor)
			}
			out := s.run(t, flavorVariables(), args...)
			g.Expect(string(out)).NotTo(ContainSubstring("${"), "every variable is substituted")
			objs := decode(t, out)
			kinds := map[string]int{}
			for _, obj := range objs {
				kinds[obj.GetKind()]++
				g.Expect(env.Client.Create(ctx, obj.DeepCopy(), client.DryRunAll)).To(Succeed(), "%s %s", obj.GetKind(), obj.GetName())
			}
			switch flavor {
			case "clusterclass":
				g.Expect(kinds).To(HaveKeyWithValue("ClusterClass", 1), "clusterctl adds the ClusterClass")
				g.Expect(kinds).To(HaveKeyWithValue("OpenStackClusterTemplate", 1))
				g.Expect(kinds).To(HaveKeyWithValue("OpenStackMachineTemplate", 2))
			default:
				g.Expect(kinds).To(HaveKeyWithValue("OpenStackCluster", 1))
				g.Expect(kinds).To(HaveKeyWithValue("KubeadmControlPlane", 1))
				g.Expect(kinds).To(HaveKeyWithValue("MachineDeployment", 1))
			}
			if flavor != "multi-az" {
				return
			}
			// Admission really runs: the same cluster with one subnet for both zones is refused.
			var osc *unstructured.Unstructured
			for _, obj := range objs {
				if obj.GetKind() == "OpenStackCluster" {
					osc = obj
				}
			}
			// The templates are v1beta2 (as upstream's book); v1beta1 is still accepted.
			g.Expect(osc.GetAPIVersion()).To(Equal("infrastructure.cluster.x-k8s.io/v1beta2"))
			zonesPath := []string{"spec", "apiServer", "managedLoadBalancer", "availabilityZoneSubnets"}
			zones, _, _ := unstructured.NestedSlice(osc.Object, zonesPath...)
			g.Expect(zones).To(HaveLen(2))
			zones[1].(map[string]any)["subnet"] = zones[0].(map[string]any)["subnet"]
			g.Expect(unstructured.SetNestedSlice(osc.Object, zones, zonesPath...)).To(Succeed())
			err := env.Client.Create(ctx, osc, client.DryRunAll)
			g.Expect(err).To(MatchError(ContainSubstring("availabilityZoneSubnets")))
		})
	}
}

// moveCluster converges a two-zone cluster against the fake OpenStack in the source API server,
// moves it with clusterctl to a second API server, and reconciles it there: the load balancers
// are adopted (same IDs, addresses), none is created.
func moveCluster(t *testing.T, s *setup, source *apiServer) {
	g := NewWithT(t)
	ctx := ctrl.LoggerInto(context.Background(), framework.DiscardLogger())
	target := startAPIServer(t, s, "target")
	clusterctlInit(t, s, target)

	cloud := fakeopenstack.New(fakeopenstack.Options{})
	cloud.SetAvailabilityZones("az1", "az2")
	ext := cloud.AddNetwork("public", true)
	cloud.AddSubnet(ext, "public", "172.24.4.0/24")
	// The operator's load balancer network, made the way the end-to-end suite makes it.
	operator, err := cloud.Factory().NewClients(ctx, "operator", &infrav1.OpenStackIdentityReference{Name: "cloud", CloudName: "openstack"})
	g.Expect(err).NotTo(HaveOccurred())
	lbNet, err := localenv.EnsureLBNetwork(ctx, operator, "operator", 20, []string{"az1", "az2"})
	g.Expect(err).NotTo(HaveOccurred())

	const ns, name = "moved", "c1"
	g.Expect(source.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	g.Expect(source.client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-cloud-config", Namespace: ns, Labels: map[string]string{"clusterctl.cluster.x-k8s.io/move": "true"}},
		Data:       map[string][]byte{"clouds.yaml": []byte("clouds: {}\n")},
	})).To(Succeed())
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: clusterv1.ClusterSpec{
		InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackCluster", Name: name},
	}}
	g.Expect(source.client.Create(ctx, cluster)).To(Succeed())
	// What Cluster API's controllers would have done: the owner reference, and the Cluster
	// seeing its infrastructure provisioned (clusterctl move insists on it).
	osc := &infrav1.OpenStackCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: name, UID: cluster.UID}}},
		Spec: infrav1.OpenStackClusterSpec{
			IdentityRef:           &infrav1.OpenStackIdentityReference{Name: name + "-cloud-config", CloudName: "openstack"},
			ManagedSubnets:        []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24"}},
			ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{},
			ControlPlaneEndpoint:  &clusterv1.APIEndpoint{Host: "api.c1.example.com", Port: 6443},
			APIServerLoadBalancer: &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true), Network: &infrav1.NetworkParam{ID: ptr.To(lbNet.NetworkID)}, AvailabilityZoneSubnets: lbNet.Mapping},
		},
	}
	g.Expect(source.client.Create(ctx, osc)).To(Succeed())
	key := client.ObjectKeyFromObject(osc)

	before := converge(t, source, cloud, key)
	g.Expect(before.Status.APIServerLoadBalancers).To(HaveLen(2))
	cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	meta.SetStatusCondition(&cluster.Status.Conditions, metav1.Condition{Type: clusterv1.ClusterControlPlaneInitializedCondition,
		Status: metav1.ConditionTrue, Reason: "Initialized"})
	g.Expect(source.client.Status().Update(ctx, cluster)).To(Succeed())
	created := cloud.Calls()["CreateLoadBalancer"]

	start := time.Now()
	s.run(t, nil, "move", "--kubeconfig", source.kubeconfig, "--to-kubeconfig", target.kubeconfig, "--namespace", ns)
	t.Logf("clusterctl move: %s", time.Since(start).Round(100*time.Millisecond))

	// Everything left the source, finalizers included, and nothing was deleted in OpenStack.
	err = source.client.Get(ctx, key, &infrav1.OpenStackCluster{})
	g.Expect(client.IgnoreNotFound(err)).To(Succeed())
	g.Expect(err).To(HaveOccurred(), "the OpenStackCluster left the source")
	moved := &infrav1.OpenStackCluster{}
	g.Expect(target.client.Get(ctx, key, moved)).To(Succeed())
	g.Expect(moved.Finalizers).NotTo(BeEmpty(), "the finalizer came along")
	// clusterctl v1.14 does not carry the status (it arrives empty): the provider rebuilds it
	// from OpenStack below, as after a restore from a backup.
	t.Logf("per-zone status entries after the move: %d", len(moved.Status.APIServerLoadBalancers))
	g.Expect(target.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-cloud-config"}, &corev1.Secret{})).To(Succeed(), "the identity Secret came along")
	movedCluster := &clusterv1.Cluster{}
	g.Expect(target.client.Get(ctx, key, movedCluster)).To(Succeed())
	g.Expect(ptr.Deref(movedCluster.Spec.Paused, false)).To(BeFalse(), "clusterctl resumes the moved cluster")

	after := converge(t, target, cloud, key)
	g.Expect(cloud.Calls()["CreateLoadBalancer"]).To(Equal(created), "no load balancer is created after the move")
	lbs, err := cloud.LoadBalancer().ListLoadBalancers(ctx, loadbalancers.ListOpts{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(lbs).To(HaveLen(2))
	g.Expect(after.Status.APIServerLoadBalancers).To(Equal(before.Status.APIServerLoadBalancers),
		"every zone keeps its load balancer, VIP and floating IP")
}

// converge reconciles the OpenStackCluster against the fake OpenStack, as the manager would,
// until it is Ready with a load balancer per zone.
func converge(t *testing.T, api *apiServer, cloud *fakeopenstack.Cloud, key client.ObjectKey) *infrav1.OpenStackCluster {
	t.Helper()
	ctx := ctrl.LoggerInto(context.Background(), framework.DiscardLogger())
	r := &controllers.OpenStackClusterReconciler{Client: api.client, Recorder: &events.FakeRecorder{},
		ScopeFactory: cloud.Factory(), LoadBalancerMemory: loadbalancer.NewMemory()}
	osc := &infrav1.OpenStackCluster{}
	for i := 0; i < 100; i++ {
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
			t.Logf("reconcile %d: %v", i, err)
		}
		if err := api.client.Get(ctx, key, osc); err != nil {
			t.Fatal(err)
		}
		if meta.IsStatusConditionTrue(osc.Status.Conditions, infrav1.ReadyCondition) && len(osc.Status.APIServerLoadBalancers) == 2 {
			return osc
		}
	}
	t.Fatalf("not converged after 100 reconciles: %+v", osc.Status.Conditions)
	return nil
}

func decodeFile(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, data)
}

func decode(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	objs, err := localenv.DecodeYAML(data)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, data)
}
