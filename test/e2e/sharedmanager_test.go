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
	"fmt"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/hostilecloud"
)

// hostileToManager is the part of the tenants corpus aimed at the shared manager, on the real
// management cluster: tenants whose identity Secret names a cloud of their own that answers
// every request in a hostile way (objects missing, wrong types, bodies that never end, endless
// pages, no answer, redirects; from Keystone and from every service), one whose auth_url carries
// a password as user info, and zone-maintenance annotations too large to read, at creation and
// as an update. Each tenant ends in a condition that names no password, each annotation in a
// short admission error; the manager's pods never restart and no reconcile panics; the victim
// (key, with machine) is as it was, and still served.
func hostileToManager(ctx context.Context, key client.ObjectKey, machine string) {
	waitClusterReady(ctx, key, 2)
	var before victimView
	Eventually(func(g Gomega) { before = viewVictim(ctx, g, key, machine) }).WithTimeout(time.Minute).Should(Succeed())
	restarts := podRestarts(ctx)
	panics := reconcilePanics(ctx)

	// The hostile cloud listens on the node's address, where the manager's pods reach this
	// machine.
	nodes := &corev1.NodeList{}
	Expect(kube.List(ctx, nodes)).To(Succeed())
	Expect(nodes.Items).NotTo(BeEmpty())
	nodeIP := ""
	for _, a := range nodes.Items[0].Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			nodeIP = a.Address
		}
	}
	Expect(nodeIP).NotTo(BeEmpty(), "the node's internal address")
	h, err := hostilecloud.NewOn(nodeIP)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(h.Close)
	password := "hostile-pw-" + runID

	type tenant struct{ what, ns string }
	var tenants []tenant
	add := func(what, authURL string) {
		ns := fmt.Sprintf("%s-hostile-%d", namespace, len(tenants))
		Expect(kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(kube.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
		}, NodeTimeout(time.Minute))
		// Run before the namespace's deletion (cleanups run last first): when the spec fails
		// before it deletes the cluster, the namespace can still go.
		DeferCleanup(func(ctx SpecContext) { letGo(ctx, client.ObjectKey{Namespace: ns, Name: "h"}) }, NodeTimeout(time.Minute))
		Expect(kube.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cloud", Namespace: ns},
			StringData: map[string]string{scope.CloudsSecretKey: hostilecloud.CloudsYAML(authURL, password)}})).To(Succeed())
		spec := clusterSpec("h" + strconv.Itoa(len(tenants)))
		spec.IdentityRef.CloudName = "openstack"
		createTenantCluster(ctx, ns, "h", spec)
		tenants = append(tenants, tenant{what: what, ns: ns})
	}
	By("giving tenants clouds of their own that answer in every hostile way, and one an auth_url with a password in it")
	for i, a := range hostilecloud.Answers {
		add(a.Name+" from Keystone", h.Keystone(i))
		add(a.Name+" from the services", h.Services(i))
	}
	add("an auth_url with user info", "http://tenant:"+password+"@"+strings.TrimPrefix(h.Keystone(0), "http://"))

	By("refusing zone-maintenance annotations too large to read, with a short answer, at creation and as an update")
	zones := func(n int) string {
		names := make([]string, n)
		for i := range names {
			names[i] = strconv.FormatInt(int64(i), 36)
		}
		return strings.Join(names, ",")
	}
	for _, value := range []string{zones(47988), zones(4438)} {
		spec := clusterSpec("huge")
		spec.IdentityRef.CloudName = "openstack"
		osc := &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: "huge", Namespace: tenants[0].ns,
			Annotations: map[string]string{infrav1.ZoneMaintenanceAnnotation: value}}, Spec: spec}
		err := kube.Create(ctx, osc)
		Expect(err).To(MatchError(ContainSubstring("Too long: may not be more than 4096 bytes")), "%d bytes", len(value))
		Expect(len(err.Error())).To(BeNumerically("<", 8<<10), "the answer to %d bytes is short", len(value))
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, infrav1.ZoneMaintenanceAnnotation, value)
		err = kube.Patch(ctx, &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: "h", Namespace: tenants[1].ns}},
			client.RawPatch(client.Merge.Type(), []byte(patch)))
		Expect(err).To(MatchError(ContainSubstring("Too long: may not be more than 4096 bytes")), "%d bytes as an update", len(value))
		Expect(len(err.Error())).To(BeNumerically("<", 8<<10))
		GinkgoWriter.Printf("a zone-maintenance annotation of %d bytes: refused in %d bytes\n", len(value), len(err.Error()))
	}

	By("ending each such tenant in a condition that names no password")
	for _, tn := range tenants {
		Eventually(func(g Gomega) {
			osc := tenantCluster(ctx, g, tn.ns, "h")
			c := conditionOf(osc, infrav1.NetworkReadyCondition)
			g.Expect(c).NotTo(BeNil(), tn.what)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse), tn.what)
			g.Expect(c.Message).NotTo(BeEmpty(), tn.what)
			g.Expect(c.Message).NotTo(ContainSubstring("internal error"), tn.what)
			for _, c := range osc.Status.Conditions {
				g.Expect(c.Message).NotTo(ContainSubstring(password), "%s: condition %s", tn.what, c.Type)
			}
		}).WithTimeout(4 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		GinkgoWriter.Printf("%s: %s\n", tn.what, conditionOf(tenantCluster(ctx, Default, tn.ns, "h"), infrav1.NetworkReadyCondition).Message)
		events := &corev1.EventList{}
		Expect(kube.List(ctx, events, client.InNamespace(tn.ns))).To(Succeed())
		for _, e := range events.Items {
			Expect(e.Message).NotTo(ContainSubstring(password), "%s: event %s", tn.what, e.Reason)
		}
	}
	Expect(h.Requests()).To(BeNumerically(">", 0), "the manager reached the hostile services")
	Expect(h.Trapped()).To(BeZero(), "no redirect was followed")
	Expect(providerLogs(ctx)).NotTo(ContainSubstring(password), "the manager's logs")

	By("finding the manager's pods never restarted, no reconcile panicked, and the victim as it was")
	Expect(podRestarts(ctx)).To(Equal(restarts), "the manager's pods and their restarts")
	Expect(reconcilePanics(ctx)).To(Equal(panics), "reconciles that panicked")
	// Nothing of theirs exists in a cloud that answers nothing sensible: a cluster the provider
	// has not let go yet goes without its finalizer, as an operator does for a cloud that is gone.
	for _, tn := range tenants {
		cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: tn.ns, Name: "h"}}
		Expect(kube.Delete(ctx, cluster)).To(Succeed())
		key := client.ObjectKey{Namespace: tn.ns, Name: "h"}
		Eventually(func(g Gomega) {
			osc := &infrav1.OpenStackCluster{}
			if err := kube.Get(ctx, key, osc); !apierrors.IsNotFound(err) {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(osc.DeletionTimestamp).NotTo(BeNil(), "Cluster API deletes the OpenStackCluster")
			}
		}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		letGo(ctx, key)
	}
	for _, tn := range tenants {
		waitGone(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: tn.ns, Name: "h"}})
	}
	expectVictimAsBefore(ctx, key, machine, before)
}

// letGo removes the finalizers of OpenStackCluster key, if it still exists: what an operator
// does for a cluster whose cloud is gone.
func letGo(ctx context.Context, key client.ObjectKey) {
	osc := &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	Expect(client.IgnoreNotFound(kube.Patch(ctx, osc, client.RawPatch(client.Merge.Type(), []byte(`{"metadata":{"finalizers":null}}`))))).To(Succeed())
}

// podRestarts is each of the manager's pods, by name, with the restarts of its containers.
func podRestarts(ctx context.Context) map[string]int32 {
	out := map[string]int32{}
	for _, p := range providerPods(ctx, Default) {
		out[p.Name] = 0
		for _, s := range p.Status.ContainerStatuses {
			out[p.Name] += s.RestartCount
		}
	}
	return out
}

// reconciles is how many reconciles controller ran in the leading manager, whatever their
// result, by its metrics.
func reconciles(ctx context.Context, controller string) float64 {
	total := 0.0
	prefix := `controller_runtime_reconcile_total{controller="` + controller + `"`
	for _, line := range providerMetrics(ctx, Default) {
		if i := strings.LastIndex(line, " "); i > 0 && strings.HasPrefix(line, prefix) {
			v, err := strconv.ParseFloat(strings.TrimSpace(line[i:]), 64)
			Expect(err).NotTo(HaveOccurred(), line)
			total += v
		}
	}
	return total
}

// reconcilesOver is how many reconciles controller ran in the leading manager during the next
// window: a measurement, not a wait for something to happen.
// The counters are the leader's: a window during which another manager took the lead is
// measured again, three times at most.
func reconcilesOver(ctx context.Context, controller string, window time.Duration) float64 {
	for range 3 {
		leader := leaderPod(ctx, Default).Name
		start := reconciles(ctx, controller)
		select {
		case <-time.After(window):
		case <-ctx.Done():
			Fail("the spec ended during a measurement")
		}
		end := reconciles(ctx, controller)
		if leaderPod(ctx, Default).Name == leader && end >= start {
			return end - start
		}
	}
	Fail("the leading manager changed during three measurements of " + window.String())
	return 0
}

// reconcilePanics is the reconciles that panicked in the leading manager, by its metrics.
func reconcilePanics(ctx context.Context) float64 {
	total := 0.0
	for _, line := range providerMetrics(ctx, Default) {
		if i := strings.LastIndex(line, " "); i > 0 && strings.HasPrefix(line, "controller_runtime_reconcile_panics_total") {
			v, err := strconv.ParseFloat(strings.TrimSpace(line[i:]), 64)
			Expect(err).NotTo(HaveOccurred(), line)
			total += v
		}
	}
	return total
}
