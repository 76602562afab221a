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
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// The endpoint host's DNS records, published as an ExternalDNS DNSEndpoint when
// spec.apiServerLoadBalancer.dns asks for it. The object is read from the API server rather than
// the cache, so that the manager needs no watch on a kind that may not be installed.

// +kubebuilder:rbac:groups=externaldns.k8s.io,resources=dnsendpoints,verbs=get;create;update;patch;delete

// dnsEndpointGVK is ExternalDNS's DNSEndpoint.
var dnsEndpointGVK = schema.GroupVersionKind{Group: "externaldns.k8s.io", Version: "v1alpha1", Kind: "DNSEndpoint"}

// dnsEndpointName is the name of the DNSEndpoint of an OpenStackCluster.
func dnsEndpointName(osc *infrav1.OpenStackCluster) string { return osc.Name + "-apiserver" }

// dnsSettings are the cluster's DNS publishing settings, nil when it publishes nothing.
func dnsSettings(spec *infrav1.OpenStackClusterSpec) *infrav1.APIServerDNS {
	if !spec.APIServerLoadBalancerEnabled() {
		return nil
	}
	return spec.APIServerLoadBalancer.DNS
}

// reconcileDNS keeps the DNSEndpoint's records at the addresses the load balancer service
// publishes (loadbalancer.Publication: the zones that serve, never an empty answer).
func (c *clusterReconcile) reconcileDNS(ctx context.Context, lbs *loadbalancer.Result) *dnsFound {
	osc := c.osc
	dns := dnsSettings(&osc.Spec)
	if dns == nil {
		if published(osc) {
			if err := c.r.deleteDNSEndpoint(ctx, c); err != nil {
				return &dnsFound{outcome: failedWith(err)}
			}
		}
		return &dnsFound{notRequired: true}
	}
	found := &dnsFound{publication: lbs.Publication, host: strings.TrimSuffix(osc.Spec.ControlPlaneEndpoint.Host, ".")}
	if len(found.publication.Addresses) == 0 {
		return found
	}
	verb, err := c.r.applyDNSEndpoint(ctx, c, dnsRecords(found.host, found.publication.Addresses, dns.TTL))
	switch {
	case meta.IsNoMatchError(err):
		found.crdMissing = true
		found.outcome = after(specErrorRequeue)
		return found
	case err != nil:
		found.outcome = failedWith(err)
		return found
	}
	if verb != "" {
		// The record set as the resource's version: each new set is an event of its own.
		res := report.Resource{Kind: "DNSEndpoint", Name: osc.Namespace + "/" + dnsEndpointName(osc), ID: strings.Join(found.publication.Addresses, ",")}
		c.report.Changed(verb+"DNSEndpoint", res, "Published %s as %s", found.host, found.publication.Where)
	}
	return found
}

// published says whether a DNSEndpoint may exist: unless a reconcile already found that the
// cluster publishes nothing (a status rebuilt after a loss, or a write that failed after the
// DNSEndpoint was created, count as "may"). Looking costs one request, once.
func published(osc *infrav1.OpenStackCluster) bool {
	cond := meta.FindStatusCondition(osc.Status.Conditions, infrav1.APIServerDNSReadyCondition)
	return cond == nil || cond.Reason != infrav1.NotRequiredReason
}

// dnsRecords are the DNSEndpoint's endpoints: an A record set for the IPv4 addresses and an AAAA
// record set for the IPv6 ones.
func dnsRecords(host string, addresses []string, ttl int32) []any {
	var v4, v6 []any
	for _, a := range addresses {
		if ip, err := netip.ParseAddr(a); err == nil && ip.Is6() {
			v6 = append(v6, a)
		} else {
			v4 = append(v4, a)
		}
	}
	var out []any
	for _, set := range []struct {
		kind    string
		targets []any
	}{{"A", v4}, {"AAAA", v6}} {
		if len(set.targets) > 0 {
			out = append(out, map[string]any{"dnsName": host, "recordType": set.kind, "recordTTL": int64(ttl), "targets": set.targets})
		}
	}
	return out
}

// applyDNSEndpoint creates the cluster's DNSEndpoint, or updates its endpoints; verb says which
// ("Created", "Updated"), or "" when nothing changed. A DNSEndpoint of that name that another
// object owns is left alone, with an error.
func (r *OpenStackClusterReconciler) applyDNSEndpoint(ctx context.Context, c *clusterReconcile, endpoints []any) (string, error) {
	osc := c.osc
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(dnsEndpointGVK)
	err := readerOr(r.APIReader, r.Client).Get(ctx, client.ObjectKey{Namespace: osc.Namespace, Name: dnsEndpointName(osc)}, obj)
	if apierrors.IsNotFound(err) {
		obj = &unstructured.Unstructured{}
		obj.SetGroupVersionKind(dnsEndpointGVK)
		obj.SetNamespace(osc.Namespace)
		obj.SetName(dnsEndpointName(osc))
		obj.SetLabels(map[string]string{clusterv1.ClusterNameLabel: c.cluster.Name})
		if err := controllerutil.SetControllerReference(osc, obj, r.Client.Scheme()); err != nil {
			return "", err
		}
		if err := unstructured.SetNestedSlice(obj.Object, endpoints, "spec", "endpoints"); err != nil {
			return "", err
		}
		return "Created", r.Client.Create(ctx, obj)
	}
	if err != nil {
		return "", err
	}
	if owner := metav1.GetControllerOf(obj); owner != nil && (owner.Kind != "OpenStackCluster" || owner.Name != osc.Name) {
		return "", fmt.Errorf("DNSEndpoint %s/%s belongs to %s %s, not to this OpenStackCluster: rename or delete it", obj.GetNamespace(), obj.GetName(), owner.Kind, owner.Name)
	}
	have, _, _ := unstructured.NestedSlice(obj.Object, "spec", "endpoints")
	owned := metav1.GetControllerOf(obj) != nil && metav1.GetControllerOf(obj).UID == osc.UID
	if owned && equality.Semantic.DeepEqual(normalize(have), normalize(endpoints)) {
		return "", nil
	}
	// A DNSEndpoint moved with its cluster (clusterctl move) names the cluster's former UID.
	obj.SetOwnerReferences(slices.DeleteFunc(obj.GetOwnerReferences(), func(o metav1.OwnerReference) bool { return o.Kind == "OpenStackCluster" }))
	if err := controllerutil.SetControllerReference(osc, obj, r.Client.Scheme()); err != nil {
		return "", err
	}
	if err := unstructured.SetNestedSlice(obj.Object, endpoints, "spec", "endpoints"); err != nil {
		return "", err
	}
	return "Updated", r.Client.Update(ctx, obj)
}

// normalize turns what JSON decoding gives (float64, []interface{}) and what dnsRecords builds
// into one form for comparison.
func normalize(endpoints []any) []map[string]string {
	var out []map[string]string
	for _, e := range endpoints {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		n := map[string]string{}
		for k, v := range m {
			n[k] = fmt.Sprint(v)
		}
		out = append(out, n)
	}
	return out
}

func (r *OpenStackClusterReconciler) deleteDNSEndpoint(ctx context.Context, c *clusterReconcile) error {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(dnsEndpointGVK)
	obj.SetNamespace(c.osc.Namespace)
	obj.SetName(dnsEndpointName(c.osc))
	err := r.Client.Delete(ctx, obj)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil
	}
	if err == nil {
		c.report.Changed("DeletedDNSEndpoint", report.Resource{Kind: "DNSEndpoint", Name: obj.GetNamespace() + "/" + obj.GetName()},
			"Deleted DNSEndpoint %s: the endpoint's records are no longer published", obj.GetName())
	}
	return err
}
