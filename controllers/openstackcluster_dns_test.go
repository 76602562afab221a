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
	"testing"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
	managerscheme "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scheme"
)

// publishedTargets reads the A record set of the cluster's DNSEndpoint.
func publishedTargets(g Gomega, osc *infrav1.OpenStackCluster) (targets []string, ttl int64, owner *metav1.OwnerReference) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(dnsEndpointGVK)
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: osc.Namespace, Name: osc.Name + "-apiserver"}, obj)).To(Succeed())
	endpoints, _, _ := unstructured.NestedSlice(obj.Object, "spec", "endpoints")
	g.Expect(endpoints).To(HaveLen(1))
	e := endpoints[0].(map[string]any)
	g.Expect(e["dnsName"]).To(Equal("api.example.com"))
	g.Expect(e["recordType"]).To(Equal("A"))
	for _, t := range e["targets"].([]any) {
		targets = append(targets, t.(string))
	}
	return targets, e["recordTTL"].(int64), metav1.GetControllerOf(obj)
}

func TestDNSFollowsTheHealthyZonesAndIsNeverEmpty(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("dns-follows")
	cloud := newCloud(t, g, ns)
	n := addLBNetwork(t, g, cloud, "az1", "az2")
	spec := multiAZSpec(n, "az1", "az2")
	spec.APIServerLoadBalancer.DNS = &infrav1.APIServerDNS{Publish: infrav1.DNSPublishDNSEndpoint, TTL: 30}
	osc := newCluster(g, ns, false, spec, true)

	var entries []infrav1.LoadBalancer
	g.Eventually(func(g Gomega) {
		got := lbReady(g, osc)
		entries = got.Status.APIServerLoadBalancers
		g.Expect(entries).To(HaveLen(2))
		for _, e := range entries {
			g.Expect(e.Healthy).To(HaveValue(BeTrue()))
			g.Expect(e.OperatingStatus).To(Equal("ONLINE"))
		}
		targets, ttl, owner := publishedTargets(g, got)
		g.Expect(targets).To(ConsistOf(entries[0].IP, entries[1].IP), "both zones' floating IPs")
		g.Expect(ttl).To(Equal(int64(30)))
		g.Expect(owner).NotTo(BeNil())
		g.Expect(owner.UID).To(Equal(got.UID), "the OpenStackCluster owns it")
		g.Expect(conditions.IsTrue(got, infrav1.APIServerDNSReadyCondition)).To(BeTrue())
	}, eventually, poll).Should(Succeed())

	g.Expect(conditions.Get(get(g, osc), infrav1.APIServerLoadBalancersReadyCondition).Message).To(HavePrefix("2/2 zones ready: "),
		"the condition counts the zones the column counts and DNS publishes")

	// az2's control plane is down, as Octavia's health monitors see it: az2 is withdrawn.
	cloud.SetOperatingStatus(entries[1].ID, "ERROR", nil)
	g.Eventually(func(g Gomega) {
		got := get(g, osc)
		targets, _, _ := publishedTargets(g, got)
		g.Expect(targets).To(Equal([]string{entries[0].IP}))
		g.Expect(got.Status.ZonesReady).To(Equal("1/2"), "the column counts the zones DNS publishes")
		c := conditions.Get(got, infrav1.APIServerLoadBalancersReadyCondition)
		g.Expect(c.Reason).To(Equal(infrav1.LoadBalancerUnhealthyReason))
		g.Expect(c.Message).To(ContainSubstring("az2: load balancer " + entries[1].Name + " is ERROR"))
		g.Expect(conditions.Get(got, infrav1.APIServerDNSReadyCondition).Message).To(HaveSuffix("withdrawn: az2 (its load balancer cannot take traffic)"))
	}, eventually, poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(eventReasons(g, ns)).To(ContainElements("LoadBalancerUnhealthy", "UpdatedDNSEndpoint"))
	}, eventually, poll).Should(Succeed())

	// Both down: every zone is kept, rather than an empty answer, and the condition says so.
	cloud.SetOperatingStatus(entries[0].ID, "ERROR", nil)
	g.Eventually(func(g Gomega) {
		got := get(g, osc)
		targets, _, _ := publishedTargets(g, got)
		g.Expect(targets).To(ConsistOf(entries[0].IP, entries[1].IP))
		c := conditions.Get(got, infrav1.APIServerDNSReadyCondition)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(infrav1.NoHealthyZoneReason))
		g.Expect(got.Status.ZonesReady).To(Equal("0/2"), "every address is kept in DNS, but no zone serves")
	}, eventually, poll).Should(Succeed())

	// Recovered: both published again.
	cloud.SetOperatingStatus(entries[0].ID, "ONLINE", nil)
	cloud.SetOperatingStatus(entries[1].ID, "ONLINE", nil)
	g.Eventually(func(g Gomega) {
		got := get(g, osc)
		g.Expect(conditions.IsTrue(got, infrav1.APIServerDNSReadyCondition)).To(BeTrue())
		g.Expect(got.Status.ZonesReady).To(Equal("2/2"))
		g.Expect(eventReasons(g, ns)).To(ContainElement("LoadBalancerHealthy"))
	}, eventually, poll).Should(Succeed())

	// Deleting the cluster deletes its DNSEndpoint (no garbage collector runs here).
	g.Expect(env.Client.Delete(ctx, get(g, osc))).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(osc), &infrav1.OpenStackCluster{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	}, eventually, poll).Should(Succeed())
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(dnsEndpointGVK)
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c-apiserver"}, obj)
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the DNSEndpoint is gone with the cluster")
}

func TestDNSWithoutTheDNSEndpointKindIsReportedNotFatal(t *testing.T) {
	g := NewWithT(t)
	scheme, err := managerscheme.New()
	g.Expect(err).NotTo(HaveOccurred())
	// An API server without ExternalDNS's CRD answers a DNSEndpoint request as a client's
	// discovery-based REST mapper does: no such kind.
	noKind := func(obj client.Object) error {
		if obj.GetObjectKind().GroupVersionKind() == dnsEndpointGVK {
			return &meta.NoKindMatchError{GroupKind: dnsEndpointGVK.GroupKind(), SearchedVersions: []string{dnsEndpointGVK.Version}}
		}
		return nil
	}
	kube := fakeclient.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := noKind(obj); err != nil {
				return err
			}
			return c.Get(ctx, key, obj, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := noKind(obj); err != nil {
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
	osc := &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", UID: "uid-c"}}
	osc.Spec.ControlPlaneEndpoint = &clusterv1.APIEndpoint{Host: "api.example.com", Port: 6443}
	osc.Spec.APIServerLoadBalancer = &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true),
		DNS: &infrav1.APIServerDNS{Publish: infrav1.DNSPublishDNSEndpoint, TTL: 30}}
	osc.Status.APIServerLoadBalancer = &infrav1.LoadBalancer{Name: "lb", IP: "172.24.4.10", Healthy: ptr.To(true)}
	recorder := events.NewFakeRecorder(10)
	r := &OpenStackClusterReconciler{Client: kube, DNSSuffixes: []string{"example.com"}}
	c := &clusterReconcile{r: r, cluster: &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"}}, osc: osc,
		report: report.NewRecorder(recorder, osc, logr.Discard())}

	found := c.reconcileDNS(ctx, &zones.Result{Publication: zones.Publish(loadbalancer.RecordedInput(osc, "c"))})
	res, err := outcomes{found.Outcome}.result()
	g.Expect(err).NotTo(HaveOccurred(), "not an error to retry with backoff")
	g.Expect(res.RequeueAfter).To(Equal(requeue.Config))
	c.found = clusterFindings{normal: true, dns: found}
	c.updateStatus()
	cond := conditions.Get(osc, infrav1.APIServerDNSReadyCondition)
	g.Expect(cond.Reason).To(Equal(infrav1.DNSEndpointCRDMissingReason))
	g.Expect(cond.Message).To(ContainSubstring("the DNSEndpoint kind (externaldns.k8s.io/v1alpha1) is not installed"))
	g.Expect(<-recorder.Events).To(ContainSubstring(infrav1.DNSEndpointCRDMissingReason))
}
