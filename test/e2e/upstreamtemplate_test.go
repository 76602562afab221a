//go:build e2e

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

package e2e

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/framework"
)

// Upstream CAPO's default cluster template (templates/cluster-template.yaml of the commit that
// ../shared/upstream-v1beta2/SOURCES names), as its quick start has a user apply it: the
// variables from the Secret-making script upstream ships (templates/env.rc: the chosen cloud's
// clouds.yaml, and a cacert of one newline when the cloud names no CA file), rendered by
// `clusterctl generate cluster`, applied with kubectl. Cluster API's kubeadm providers, which
// `clusterctl init` installs with the core, reconcile its KubeadmControlPlane; nothing boots on
// the local OpenStack's fake Nova driver, so the first control plane machine is as far as a
// cluster gets: its server ACTIVE and a member of the cluster's load balancer.
var _ = Describe("Upstream's default cluster template", Ordered, func() {
	It("becomes Ready with the Secret upstream's env.rc makes, its first control plane machine behind the load balancer, and leaves nothing when deleted", func(ctx SpecContext) {
		template := upstreamFile("templates/cluster-template.yaml")
		ns, name := "upstream-default-"+runID, "quickstart"
		Expect(kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(kube.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
			waitGone(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		}, NodeTimeout(6*time.Minute))
		keyName := "upstream-default-" + runID
		Expect(keypairs.Create(ctx, computeClient(ctx), keypairs.CreateOpts{Name: keyName, PublicKey: newSSHPublicKey()}).Err).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(keypairs.Delete(ctx, computeClient(ctx), keyName, nil).ExtractErr()).To(Succeed())
		}, NodeTimeout(time.Minute))
		nets, err := openstack.Network.ListNetworks(ctx, networks.ListOpts{Name: cfg.externalNetwork})
		Expect(err).NotTo(HaveOccurred())
		Expect(nets).To(HaveLen(1), "the external network %s", cfg.externalNetwork)
		baseline := takeInventory(ctx)

		By("rendering the template with clusterctl, the identity variables as env.rc sets them, and applying it with kubectl")
		env := append(envrcVariables(cfg.cloudsYAML, cfg.cloudName),
			"OPENSTACK_EXTERNAL_NETWORK_ID="+nets[0].ID,
			"OPENSTACK_DNS_NAMESERVERS=10.254.0.1",
			"OPENSTACK_FAILURE_DOMAIN="+cfg.zones[0],
			"OPENSTACK_CONTROL_PLANE_MACHINE_FLAVOR="+cfg.flavor,
			"OPENSTACK_NODE_MACHINE_FLAVOR="+cfg.flavor,
			"OPENSTACK_IMAGE_NAME="+cfg.image,
			"OPENSTACK_SSH_KEY_NAME="+keyName)
		rendered := quietRun(ctx, env, planeTool("clusterctl"), "generate", "cluster", name, "--from", template,
			"--config", planeTool("clusterctl_config"), "--target-namespace", ns, "--kubernetes-version", "v1.34.1",
			"--control-plane-machine-count", "1", "--worker-machine-count", "0")
		// Not Gomega's ContainSubstring: its failure would print the Secret.
		Expect(strings.Contains(rendered, "cacert: Cg==")).To(BeTrue(), "the Secret env.rc's variables make")
		key := client.ObjectKey{Namespace: ns, Name: name}
		DeferCleanup(func(ctx SpecContext) {
			// A failed spec (an apply refused halfway included) leaves nothing either: the
			// Cluster goes, and its machines and OpenStackCluster with it, while the identity
			// Secret is still there.
			Expect(client.IgnoreNotFound(kube.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}))).To(Succeed())
			waitGone(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
		}, NodeTimeout(6*time.Minute))
		start := time.Now()
		run(ctx, rendered, planeTool("kubectl"), "apply", "--validate=strict", "-f", "-")

		By("waiting for the OpenStackCluster to be Ready, and for the warning about the cacert")
		Eventually(func(g Gomega) {
			osc := getCluster(ctx, g, key)
			g.Expect(conditionTrue(osc.Status.Conditions, infrav1.ReadyCondition)).To(Succeed())
			g.Expect(osc.Status.APIServerLoadBalancer).NotTo(BeNil())
			g.Expect(osc.Spec.ControlPlaneEndpoint).NotTo(BeNil())
			g.Expect(osc.Spec.ControlPlaneEndpoint.Host).To(Equal(osc.Status.APIServerLoadBalancer.IP), "the load balancer's floating IP is the endpoint")
		}).WithTimeout(4*time.Minute).WithPolling(2*time.Second).Should(Succeed(), "the OpenStackCluster is Ready")
		GinkgoWriter.Printf("upstream's default template: OpenStackCluster Ready %s after the apply\n", time.Since(start).Round(100*time.Millisecond))
		Eventually(func(g Gomega) []string {
			list := &corev1.EventList{}
			g.Expect(kube.List(ctx, list, client.InNamespace(ns))).To(Succeed())
			var out []string
			for _, e := range list.Items {
				if e.Reason == "IdentityWarning" {
					out = append(out, e.Type+": "+e.Message)
				}
			}
			return out
		}).WithTimeout(time.Minute).WithPolling(2*time.Second).Should(ContainElement(And(HavePrefix("Warning: "),
			ContainSubstring(`key "cacert" holds no PEM certificate (1 bytes): ignored`))), "a warning event says the cacert is ignored")

		By("waiting for the KubeadmControlPlane's first machine: its server ACTIVE with the key pair, a member of the load balancer")
		var machine string
		Eventually(func(g Gomega) {
			osms := &infrav1.OpenStackMachineList{}
			g.Expect(kube.List(ctx, osms, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterNameLabel: name, clusterv1.MachineControlPlaneLabel: ""})).To(Succeed())
			g.Expect(osms.Items).To(HaveLen(1), "the control plane's one OpenStackMachine")
			osm := osms.Items[0]
			machine = osm.Name
			g.Expect(conditionTrue(osm.Status.Conditions, infrav1.ReadyCondition)).To(Succeed())
			server, err := openstack.Compute.GetServer(ctx, ptr.Deref(osm.Status.InstanceID, ""))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(server.Status).To(Equal("ACTIVE"))
			g.Expect(server.KeyName).To(Equal(keyName), "the template's sshKeyName")
			osc := getCluster(ctx, g, key)
			g.Expect(observe(ctx, g, osc.Status.APIServerLoadBalancer.ID).members).To(HaveKeyWithValue(osm.Name, ConsistOf(internalIP(&osm))))
		}).WithTimeout(5*time.Minute).WithPolling(2*time.Second).Should(Succeed(), "the first control plane machine")
		GinkgoWriter.Printf("upstream's default template: control plane machine %s ready %s after the apply\n", machine, time.Since(start).Round(100*time.Millisecond))

		By("deleting the Cluster: nothing is left in the project")
		deleteCluster(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, baseline)
	}, NodeTimeout(14*time.Minute))
})

// upstreamFile is the path of one of upstream CAPO's files kept unchanged beside the work tree
// (framework.UpstreamFilesDir); the spec is skipped, saying so, on a machine that has none.
func upstreamFile(rel string) string {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	Expect(err).NotTo(HaveOccurred())
	dir, err := framework.UpstreamFilesDir(root)
	Expect(err).NotTo(HaveOccurred())
	if dir == "" {
		Skip("upstream CAPO's files are not on this machine (set CAPO_UPSTREAM_FILES to their directory)")
	}
	return filepath.Join(dir, rel)
}

// envrcVariables are the identity variables upstream's templates/env.rc exports for cloud of
// cloudsYAML: OPENSTACK_CLOUD, OPENSTACK_CLOUD_YAML_B64 (a clouds.yaml holding only that cloud)
// and OPENSTACK_CLOUD_CACERT_B64, which is a newline when the cloud names no CA file.
func envrcVariables(cloudsYAML []byte, cloud string) []string {
	return []string{
		"OPENSTACK_CLOUD=" + cloud,
		"OPENSTACK_CLOUD_YAML_B64=" + base64.StdEncoding.EncodeToString(oneCloud(cloudsYAML, cloud, cloud)),
		"OPENSTACK_CLOUD_CACERT_B64=" + base64.StdEncoding.EncodeToString([]byte("\n")),
	}
}

// oneCloud is a clouds.yaml holding only cloud of cloudsYAML, under the name as, and no CA file.
func oneCloud(cloudsYAML []byte, cloud, as string) []byte {
	var all struct {
		Clouds map[string]map[string]any `json:"clouds"`
	}
	Expect(yaml.Unmarshal(cloudsYAML, &all)).To(Succeed())
	section, ok := all.Clouds[cloud]
	Expect(ok).To(BeTrue(), "cloud %s in the clouds.yaml", cloud)
	// Not Gomega's HaveKey: its failure would print the section, password included.
	_, hasCA := section["cacert"]
	Expect(hasCA).To(BeFalse(), "a cloud with a CA file: env.rc would put the file in the Secret")
	one, err := yaml.Marshal(map[string]any{"clouds": map[string]any{as: section}})
	Expect(err).NotTo(HaveOccurred())
	return one
}

// quietRun runs a command with env added and returns its standard output; unlike run, it prints
// neither the output (it holds a credential) nor the environment, only the command and, when it
// fails, the first line of its standard error (clusterctl quotes a document it cannot parse
// after it).
func quietRun(ctx context.Context, env []string, name string, args ...string) string {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(append(os.Environ(), "CLUSTERCTL_DISABLE_VERSIONCHECK=true"), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	GinkgoWriter.Printf("$ %s %s\n(%d bytes of output, not shown)\n", filepath.Base(name), strings.Join(args, " "), len(out))
	first, _, _ := strings.Cut(stderr.String(), "\n")
	Expect(err).NotTo(HaveOccurred(), "%s %s: %s", name, strings.Join(args, " "), first)
	return string(out)
}

// newSSHPublicKey is a fresh ed25519 public key in authorized_keys form, for a Nova key pair.
func newSSHPublicKey() string {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	var wire []byte
	for _, part := range [][]byte{[]byte("ssh-ed25519"), pub} {
		wire = binary.BigEndian.AppendUint32(wire, uint32(len(part)))
		wire = append(wire, part...)
	}
	return "ssh-ed25519 " + base64.StdEncoding.EncodeToString(wire) + " " + framework.EnvOr("USER", "e2e") + "@capo-e2e"
}
