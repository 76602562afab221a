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
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/internal/localenv"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/framework"
)

// The management cluster is a real single-node Kubernetes (hack/kube, hack/mgmt): the provider
// runs as its Deployment's pod, as `clusterctl init` installed it. These helpers act on it as an
// operator would: through the API server, and, for what only a node shows (a container killed
// as the kernel kills it), through the node's container runtime.

const (
	providerNamespace  = "capo-system"
	providerPDB        = "capo-controller-manager"
	providerDeployment = "capo-controller-manager"
	// diagnosticsPort serves the manager's /metrics (plain HTTP: hack/mgmt/up.sh sets
	// CAPO_INSECURE_DIAGNOSTICS), on the pod's address, which this machine reaches.
	diagnosticsPort = 8443
)

// mgmtDir is the management cluster's directory (hack/mgmt/up.sh).
func mgmtDir() string {
	return framework.EnvOr("CAPO_MGMT_DIR", "/var/tmp/capo-management-plane")
}

func clientset() *kubernetes.Clientset {
	restConfig, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	Expect(err).NotTo(HaveOccurred())
	cs, err := kubernetes.NewForConfig(restConfig)
	Expect(err).NotTo(HaveOccurred())
	return cs
}

// providerPods are the provider Deployment's pods that are not being deleted.
func providerPods(ctx context.Context, g Gomega) []corev1.Pod {
	pods := &corev1.PodList{}
	g.Expect(kube.List(ctx, pods, client.InNamespace(providerNamespace), client.MatchingLabels{"control-plane": providerDeployment})).To(Succeed())
	var out []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// providerPod is the provider's pod named name.
func providerPod(ctx context.Context, g Gomega, name string) *corev1.Pod {
	pod := &corev1.Pod{}
	g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: providerNamespace, Name: name}, pod)).To(Succeed())
	return pod
}

// podOf is the pod a lease holder runs in: the holder is "<host name>_<uuid>", and a pod's host
// name is its name.
func podOf(holder string) string {
	pod, _, _ := strings.Cut(holder, "_")
	return pod
}

// leaderPod is the provider's pod that holds the leader election lease.
func leaderPod(ctx context.Context, g Gomega) *corev1.Pod {
	holder, _ := leaseHolder(ctx, g)
	return providerPod(ctx, g, podOf(holder))
}

// killManager SIGKILLs the manager container of the pod through the node's containerd, as an
// out-of-memory kill would: the kubelet starts it again.
func killManager(ctx context.Context, pod *corev1.Pod) {
	var id string
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == "manager" {
			id = s.ContainerID
		}
	}
	id, ok := strings.CutPrefix(id, "containerd://")
	Expect(ok).To(BeTrue(), "pod %s's manager container runs in containerd: %q", pod.Name, id)
	socket, err := localenv.PlaneValue(mgmtDir(), "containerd")
	Expect(err).NotTo(HaveOccurred())
	out, err := exec.CommandContext(ctx, "ctr", "--address", socket, "--namespace", "k8s.io", "tasks", "kill", "--signal", "SIGKILL", id).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "ctr tasks kill: %s", out)
}

// waitProviderReady waits until the Deployment has as many ready pods as it asks for (this
// provider's components ask for two; upstream's and older releases' for one) and no other.
func waitProviderReady(ctx context.Context) {
	var replicas int32
	Eventually(func(g Gomega) {
		d := &appsv1.Deployment{}
		g.Expect(kube.Get(ctx, client.ObjectKey{Namespace: providerNamespace, Name: providerDeployment}, d)).To(Succeed())
		replicas = ptr.Deref(d.Spec.Replicas, 1)
		g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
		g.Expect(d.Status.ReadyReplicas).To(Equal(replicas))
		g.Expect(d.Status.Replicas).To(Equal(replicas))
		pods := &corev1.PodList{}
		g.Expect(kube.List(ctx, pods, client.InNamespace(providerNamespace), client.MatchingLabels{"control-plane": providerDeployment})).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(int(replicas)), "no pod of another replica set or being deleted remains")
	}).WithTimeout(3*time.Minute).WithPolling(time.Second).Should(Succeed(), "%d provider pods ready", replicas)
	// Its webhooks answer through the Service, with the CA cert-manager injected (a reinstalled
	// provider gets a new certificate, injected some seconds after its pod is ready).
	Eventually(func(g Gomega) {
		osc := &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: "webhook-probe", Namespace: namespace}, Spec: clusterSpec("webhook-probe")}
		g.Expect(kube.Create(ctx, osc, client.DryRunAll)).To(Succeed())
	}).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(Succeed(), "the provider's webhooks answer")
}

// providerMetrics are the lines of the leading provider pod's /metrics.
func providerMetrics(ctx context.Context, g Gomega) []string {
	return podMetrics(ctx, g, leaderPod(ctx, g))
}

func podMetrics(ctx context.Context, g Gomega, pod *corev1.Pod) []string {
	g.Expect(pod.Status.PodIP).NotTo(BeEmpty(), "pod %s has an address", pod.Name)
	url := fmt.Sprintf("http://%s:%d/metrics", pod.Status.PodIP, diagnosticsPort)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	g.Expect(err).NotTo(HaveOccurred())
	resp, err := http.DefaultClient.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK), url)
	var lines []string
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		lines = append(lines, scanner.Text())
	}
	g.Expect(scanner.Err()).NotTo(HaveOccurred())
	return lines
}

// providerLogs is the output of every provider pod's manager container, the one that runs and
// the one before it, as `kubectl logs [--previous]` shows it.
func providerLogs(ctx context.Context) string {
	cs := clientset()
	var all strings.Builder
	for _, pod := range providerPods(ctx, Default) {
		for _, previous := range []bool{false, true} {
			stream, err := cs.CoreV1().Pods(providerNamespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: "manager", Previous: previous}).Stream(ctx)
			if err != nil {
				// No previous container: it never restarted.
				continue
			}
			data, err := io.ReadAll(stream)
			_ = stream.Close()
			Expect(err).NotTo(HaveOccurred())
			all.Write(data)
		}
	}
	return all.String()
}
