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
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/internal/localenv"
)

// dnsServer is where the management cluster's ExternalDNS publishes (hack/dns, hack/mgmt/up.sh).
func dnsServer() string {
	server, err := localenv.PlaneValue(mgmtDir(), "dns_server")
	Expect(err).NotTo(HaveOccurred())
	Expect(server).NotTo(BeEmpty(), "the management plane runs no ExternalDNS: hack/e2e.sh starts the DNS server before it")
	return server
}

// otherPlaneExternalDNS runs, once, an ExternalDNS as another management plane would run it
// against the same DNS zone (hack/mgmt/up.sh's arguments, the whole zone, the sync policy), with
// owner in the zone's TXT registry and a source that holds nothing (a namespace without
// DNSEndpoints), and returns its output. CAPO_E2E_EXTERNAL_DNS and CAPO_E2E_DNS_ENV (hack/e2e.sh)
// say where ExternalDNS and the DNS server's env file are.
func otherPlaneExternalDNS(ctx context.Context, owner string) string {
	dir, envFile := os.Getenv("CAPO_E2E_EXTERNAL_DNS"), os.Getenv("CAPO_E2E_DNS_ENV")
	if dir == "" || envFile == "" {
		Skip("CAPO_E2E_EXTERNAL_DNS and CAPO_E2E_DNS_ENV are not set (hack/e2e.sh sets them)")
	}
	data, err := os.ReadFile(envFile)
	Expect(err).NotTo(HaveOccurred())
	env := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	secret, err := os.ReadFile(env["secret_file"])
	Expect(err).NotTo(HaveOccurred())
	empty := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other-plane-" + runID}}
	Expect(client.IgnoreAlreadyExists(kube.Create(ctx, empty))).To(Succeed())
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "external-dns"),
		"--kubeconfig", os.Getenv("KUBECONFIG"), "--source=crd", "--namespace="+empty.Name,
		"--provider=rfc2136", "--rfc2136-host="+env["server"], "--rfc2136-port="+env["port"], "--rfc2136-zone="+env["zone"],
		"--rfc2136-tsig-keyname="+env["keyname"], "--rfc2136-tsig-secret-alg="+env["algorithm"], "--rfc2136-tsig-axfr",
		"--domain-filter="+env["zone"], "--managed-record-types=A", "--managed-record-types=AAAA",
		"--registry=txt", "--txt-owner-id="+owner, "--txt-prefix=edns-", "--policy=sync", "--once")
	cmd.Env = append(os.Environ(), "EXTERNAL_DNS_RFC2136_TSIG_SECRET="+strings.TrimSpace(string(secret)))
	out, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "%s", out)
	return fmt.Sprintf("%d lines of log", strings.Count(string(out), "\n"))
}

// waitDNS waits until the DNS server answers exactly want for host's A records.
func waitDNS(ctx context.Context, host string, want ...string) {
	server := dnsServer()
	slices.Sort(want)
	Eventually(func(g Gomega) {
		got, err := localenv.LookupA(ctx, server, host)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(want))
	}).WithTimeout(2*time.Minute).WithPolling(250*time.Millisecond).Should(Succeed(), "the A records of %s", host)
}

// watchDNS asks the DNS server for host's A records four times a second until the returned
// function is called, which returns the answers that lacked must (with the time they were seen).
func watchDNS(ctx context.Context, host, must string) func() []string {
	return watchAnswers(ctx, host, func(got []string) bool { return !slices.Contains(got, must) })
}

// watchDNSWithout is watchDNS for the answers that hold mustNot.
func watchDNSWithout(ctx context.Context, host, mustNot string) func() []string {
	return watchAnswers(ctx, host, func(got []string) bool { return slices.Contains(got, mustNot) })
}

// watchAnswers asks the DNS server for host's A records four times a second until the returned
// function is called, which returns the answers bad found wrong, and failed lookups (with the
// time they were seen).
func watchAnswers(ctx context.Context, host string, bad func([]string) bool) func() []string {
	server := dnsServer()
	var (
		mu    sync.Mutex
		wrong []string
	)
	stop := fourTimesASecond(ctx, func(ctx context.Context) {
		got, err := localenv.LookupA(ctx, server, host)
		if ctx.Err() != nil {
			return
		}
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsTimeout {
			// No answer at all (the DNS server or this machine busy): a client asks again,
			// and this is no answer that lacks the zone.
			GinkgoWriter.Printf("%s: DNS lookup timed out: %v\n", time.Now().Format("15:04:05.000"), err)
			return
		}
		if err != nil || bad(got) {
			mu.Lock()
			wrong = append(wrong, fmt.Sprintf("%s %v %s", time.Now().Format("15:04:05.000"), got, errString(err)))
			mu.Unlock()
		}
	})
	return func() []string {
		stop()
		mu.Lock()
		defer mu.Unlock()
		return wrong
	}
}

// fourTimesASecond calls look four times a second, in a goroutine, until the returned function
// is called; that function returns once look has returned for the last time.
func fourTimesASecond(ctx context.Context, look func(ctx context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer GinkgoRecover()
		defer wg.Done()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			look(ctx)
		}
	}()
	return func() {
		cancel()
		wg.Wait()
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// allocateFloatingIP allocates a floating IP on the external network, as an operator does
// before giving it to a zone, and releases it when the calling node's cleanups run (after those
// registered later, such as the cluster's deletion).
func allocateFloatingIP(ctx context.Context) string {
	nets, err := openstack.Network.ListNetworks(ctx, networks.ListOpts{Name: cfg.externalNetwork})
	Expect(err).NotTo(HaveOccurred())
	Expect(nets).To(HaveLen(1), "external network %s", cfg.externalNetwork)
	fip, err := openstack.Network.CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: nets[0].ID, Description: "capo e2e: an operator's address for a zone"})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		got, err := openstack.Network.ListFloatingIPs(ctx, floatingips.ListOpts{ID: fip.ID})
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(HaveLen(1), "the operator's floating IP %s outlives the cluster", fip.FloatingIP)
		Expect(openstack.Network.DeleteFloatingIP(ctx, fip.ID)).To(Succeed())
	}, NodeTimeout(time.Minute))
	return fip.FloatingIP
}

// serverOf is the Nova server ID of an OpenStackMachine.
func serverOf(ctx context.Context, machine string) string {
	osm := &infrav1.OpenStackMachine{}
	Expect(kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: machine}, osm)).To(Succeed())
	id := ptr.Deref(osm.Status.InstanceID, "")
	Expect(id).NotTo(BeEmpty(), "the server of %s", machine)
	return id
}

// computeClient is a bare Nova client, for what the provider never does: stop and start servers.
func computeClient(ctx context.Context) *gophercloud.ServiceClient {
	c, err := localenv.ServiceClient(ctx, cfg.cloudsYAML, cfg.cloudName, "compute")
	Expect(err).NotTo(HaveOccurred())
	return c
}

// failoverTimeline watches, four times a second from now on, the steps by which zone i of the
// OpenStackCluster at key (of Cluster clusterName) leaves DNS after its control plane failed at fault: Octavia reports
// its load balancer not ONLINE (detection), the status records it unhealthy (the provider
// noticed), and the cluster's DNSEndpoint no longer holds its address (the provider published).
// The returned function stops the watch and returns each step's time after fault (zero when
// not seen).
func failoverTimeline(ctx context.Context, key client.ObjectKey, clusterName string, i int, fault time.Time) func() (detected, noticed, published time.Duration) {
	osc := getCluster(ctx, Default, key)
	lb := osc.Status.APIServerLoadBalancers[i]
	var (
		mu                           sync.Mutex
		detected, noticed, published time.Duration
	)
	seen := func(step *time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		if *step == 0 {
			*step = time.Since(fault)
		}
	}
	stop := fourTimesASecond(ctx, func(ctx context.Context) {
		if tree, err := openstack.LoadBalancer.GetLoadBalancerStatuses(ctx, lb.ID); err == nil && tree.Loadbalancer != nil && tree.Loadbalancer.OperatingStatus != "ONLINE" {
			seen(&detected)
		}
		got := &infrav1.OpenStackCluster{}
		if err := kube.Get(ctx, key, got); err == nil && len(got.Status.APIServerLoadBalancers) > i && got.Status.APIServerLoadBalancers[i].Healthy != nil && !*got.Status.APIServerLoadBalancers[i].Healthy {
			seen(&noticed)
		}
		record := &unstructured.Unstructured{}
		record.SetGroupVersionKind(schema.GroupVersionKind{Group: "externaldns.k8s.io", Version: "v1alpha1", Kind: "DNSEndpoint"})
		if err := kube.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: clusterName + "-apiserver"}, record); err == nil {
			if targets := endpointTargets(record); len(targets) > 0 && !slices.Contains(targets, lb.IP) {
				seen(&published)
			}
		}
	})
	return func() (time.Duration, time.Duration, time.Duration) {
		stop()
		mu.Lock()
		defer mu.Unlock()
		return detected, noticed, published
	}
}

// endpointTargets are the targets of every endpoint of a DNSEndpoint.
func endpointTargets(record *unstructured.Unstructured) []string {
	endpoints, _, _ := unstructured.NestedSlice(record.Object, "spec", "endpoints")
	var out []string
	for _, e := range endpoints {
		if m, ok := e.(map[string]any); ok {
			targets, _, _ := unstructured.NestedStringSlice(m, "targets")
			out = append(out, targets...)
		}
	}
	return out
}
