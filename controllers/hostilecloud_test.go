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
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/hostilecloud"
)

// reconcilePanics is how many reconciles of this process panicked (controller-runtime turns a
// panic inside Reconcile into an error and counts it; one in a goroutine of its own would end
// the test binary).
func reconcilePanics(g *WithT) float64 {
	families, err := metrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	total := 0.0
	for _, f := range families {
		if f.GetName() == "controller_runtime_reconcile_panics_total" {
			for _, m := range f.GetMetric() {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}

// Tenants whose identity Secret names the hostile cloud, one per kind of answer, from the services
// and from Keystone itself, all at once, through the manager's own identity code: each cluster
// ends in NetworkReady=False saying what failed, without the password; no reconcile panics, and
// no redirect is followed.
func TestAHostileCloudEndsEachClusterInACondition(t *testing.T) {
	g := NewWithT(t)
	h := hostilecloud.New()
	t.Cleanup(h.Close)
	const password = "hostile-s3cr3t"
	panics := reconcilePanics(g)

	type tenant struct {
		what string
		osc  *infrav1.OpenStackCluster
	}
	var tenants []tenant
	for i, a := range hostilecloud.Answers {
		for _, from := range []string{"Keystone", "the services"} {
			ns := testNamespace(fmt.Sprintf("hostile-%d", i))
			g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
			authURL := h.Services(i)
			if from == "Keystone" {
				authURL = h.Keystone(i)
			}
			g.Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cloud-config", Namespace: ns},
				StringData: map[string]string{scope.CloudsSecretKey: hostilecloud.CloudsYAML(authURL, password)}})).To(Succeed())
			// The manager's timeout is 60 s; a short one here, so that "no answer" ends soon.
			clouds.useReal(ns, &scope.SecretFactory{Reader: env.Client, Log: logr.Discard(), Timeout: time.Second})
			tenants = append(tenants, tenant{what: a.Name + " from " + from, osc: newCluster(g, ns, false, managedSpec(), true)})
		}
	}

	for _, tn := range tenants {
		g.Eventually(func(g Gomega) {
			c := conditions.Get(get(g, tn.osc), infrav1.NetworkReadyCondition)
			g.Expect(c).NotTo(BeNil(), tn.what)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse), tn.what)
			g.Expect(c.Message).NotTo(BeEmpty(), tn.what)
			g.Expect(c.Message).NotTo(ContainSubstring(password), tn.what)
			// A panic recovered on a goroutine of its own (a phase, a zone, an authentication)
			// becomes such a message; controller-runtime's count does not see it.
			g.Expect(c.Message).NotTo(ContainSubstring("internal error"), tn.what)
		}, 2*eventually, poll).Should(Succeed())
		t.Logf("%s: %s", tn.what, conditions.Get(get(g, tn.osc), infrav1.NetworkReadyCondition).Message)
	}
	g.Expect(reconcilePanics(g)).To(Equal(panics), "no reconcile panicked")
	g.Expect(h.Trapped()).To(BeZero(), "no redirect was followed")

	// Nothing of theirs can be deleted in a cloud that answers nothing sensible: their objects go
	// without the finalizer.
	for _, tn := range tenants {
		g.Expect(env.Client.Delete(ctx, tn.osc)).To(Succeed())
		g.Expect(client.IgnoreNotFound(env.Client.Patch(ctx, tn.osc, client.RawPatch(client.Merge.Type(), []byte(`{"metadata":{"finalizers":null}}`))))).To(Succeed())
	}
}
