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
	"errors"
	"fmt"
	"net/netip"
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
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/outcome"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

// The endpoint host's DNS records, published as an ExternalDNS DNSEndpoint when
// spec.apiServerLoadBalancer.dns asks for it. The object is read from the API server rather than
// the cache, so that the manager needs no watch on a kind that may not be installed.

// +kubebuilder:rbac:groups=externaldns.k8s.io,resources=dnsendpoints,verbs=get;list;create;update;patch;delete

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
// publishes (zones.Publication: the zones that serve, never an empty answer).
func (c *clusterReconcile) reconcileDNS(ctx context.Context, lbs *zones.Result) *dnsFound {
	osc := c.osc
	dns := dnsSettings(&osc.Spec)
	if dns == nil {
		if published(osc) {
			if err := c.r.deleteDNSEndpoint(ctx, c); err != nil {
				return &dnsFound{Outcome: outcome.Failed(err)}
			}
		}
		return &dnsFound{notRequired: true}
	}
	found := &dnsFound{publication: lbs.Publication, host: strings.ToLower(strings.TrimSuffix(osc.Spec.ControlPlaneEndpoint.Host, "."))}
	if why := dnsAllowed(c.r.DNSSuffixes, found.host); why != "" {
		// Records published before the policy changed are withdrawn.
		if err := c.r.deleteDNSEndpoint(ctx, c); err != nil {
			return &dnsFound{Outcome: outcome.Failed(err)}
		}
		found.refusal = &dnsRefusal{reason: infrav1.DNSPublishingNotAllowedReason, message: why}
		found.Outcome = outcome.After(requeue.Config)
		return found
	}
	if len(found.publication.Addresses) == 0 {
		return found
	}
	verb, takenUp, err := c.r.applyDNSEndpoint(ctx, c, found.host, dnsRecords(found.host, found.publication.Addresses, dns.TTL))
	found.takenUp = takenUp
	var refusal *dnsRefusal
	switch {
	case meta.IsNoMatchError(err):
		found.crdMissing = true
		found.Outcome = outcome.After(requeue.Config)
		return found
	case errors.As(err, &refusal):
		found.refusal = refusal
		found.Outcome = outcome.After(requeue.Config)
		return found
	case err != nil:
		found.Outcome = outcome.Failed(err)
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
// ("Created", "Updated"), or "" when nothing changed. takenUp says, when nothing changed, whether
// ExternalDNS has read the records as they are (its crd source sets status.observedGeneration
// when it reads a DNSEndpoint). A DNSEndpoint of that name that this OpenStackCluster does not
// control (by UID) is never written: the answer is a dnsRefusal.
func (r *OpenStackClusterReconciler) applyDNSEndpoint(ctx context.Context, c *clusterReconcile, host string, endpoints []any) (verb string, takenUp bool, err error) {
	verb, err = r.writeDNSEndpoint(ctx, c, host, endpoints, &takenUp)
	return verb, takenUp && verb == "" && err == nil, err
}

func (r *OpenStackClusterReconciler) writeDNSEndpoint(ctx context.Context, c *clusterReconcile, host string, endpoints []any, takenUp *bool) (string, error) {
	osc := c.osc
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(dnsEndpointGVK)
	err := readerOr(r.APIReader, r.Client).Get(ctx, client.ObjectKey{Namespace: osc.Namespace, Name: dnsEndpointName(osc)}, obj)
	if client.IgnoreNotFound(err) != nil {
		return "", err
	}
	exists := err == nil
	if exists && !controlledBy(obj, osc) {
		return "", &dnsRefusal{reason: infrav1.DNSNameTakenReason, message: fmt.Sprintf(
			"DNSEndpoint %s/%s exists and this OpenStackCluster does not control it (%s): it is never written; delete or rename it",
			obj.GetNamespace(), obj.GetName(), controllerWords(obj))}
	}
	have, _, _ := unstructured.NestedSlice(obj.Object, "spec", "endpoints")
	if exists && equality.Semantic.DeepEqual(normalize(have), normalize(endpoints)) {
		observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
		*takenUp = observed >= obj.GetGeneration()
		return "", nil
	}
	if holder, err := r.hostHolder(ctx, osc, host); err != nil || holder != "" {
		if err != nil {
			return "", err
		}
		// Another namespace's object is not named: its namespace and name are that tenant's.
		whose := "DNSEndpoint " + holder
		if !strings.HasPrefix(holder, osc.Namespace+"/") {
			whose = "a DNSEndpoint of another namespace"
		}
		return "", &dnsRefusal{reason: infrav1.DNSNameTakenReason, message: fmt.Sprintf(
			"%s is already published by %s: a name has one holder; choose another spec.controlPlaneEndpoint.host", host, whose)}
	}
	if !exists {
		obj = &unstructured.Unstructured{}
		obj.SetGroupVersionKind(dnsEndpointGVK)
		obj.SetNamespace(osc.Namespace)
		obj.SetName(dnsEndpointName(osc))
		obj.SetLabels(map[string]string{clusterv1.ClusterNameLabel: c.cluster.Name})
		if err := controllerutil.SetControllerReference(osc, obj, r.Client.Scheme()); err != nil {
			return "", err
		}
	}
	if err := unstructured.SetNestedSlice(obj.Object, endpoints, "spec", "endpoints"); err != nil {
		return "", err
	}
	if !exists {
		return "Created", r.Client.Create(ctx, obj)
	}
	return "Updated", r.Client.Update(ctx, obj)
}

// dnsRefusal is why a cluster's records are not published: the operator's policy, or a name or
// an object another holds.
type dnsRefusal struct{ reason, message string }

func (e *dnsRefusal) Error() string { return e.message }

// controlledBy says whether obj's controller is osc itself (by UID): a DNSEndpoint of another
// object, or of a former OpenStackCluster of the same name, is not.
func controlledBy(obj client.Object, osc *infrav1.OpenStackCluster) bool {
	owner := metav1.GetControllerOf(obj)
	return owner != nil && owner.UID == osc.UID
}

// controllerWords says who controls obj, for messages.
func controllerWords(obj client.Object) string {
	if owner := metav1.GetControllerOf(obj); owner != nil {
		return fmt.Sprintf("its controller is %s %s, UID %s", owner.Kind, owner.Name, owner.UID)
	}
	return "it has no controller"
}

// hostHolder is the DNSEndpoint, in any namespace, that already publishes host and that osc does
// not control ("namespace/name"), or "". Read from the API server: the manager watches no
// DNSEndpoint.
func (r *OpenStackClusterReconciler) hostHolder(ctx context.Context, osc *infrav1.OpenStackCluster, host string) (string, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(dnsEndpointGVK.GroupVersion().WithKind("DNSEndpointList"))
	if err := readerOr(r.APIReader, r.Client).List(ctx, list); err != nil {
		return "", err
	}
	for i := range list.Items {
		item := &list.Items[i]
		if controlledBy(item, osc) {
			continue
		}
		endpoints, _, _ := unstructured.NestedSlice(item.Object, "spec", "endpoints")
		for _, e := range normalize(endpoints) {
			if strings.EqualFold(strings.TrimSuffix(e["dnsName"], "."), host) {
				return item.GetNamespace() + "/" + item.GetName(), nil
			}
		}
	}
	return "", nil
}

// dnsAllowed says why the operator's policy (the manager's --dns-suffixes) does not let host be
// published, or "".
func dnsAllowed(suffixes []string, host string) string {
	if len(suffixes) == 0 {
		return "the operator allows no DNS publishing here (the manager's --dns-suffixes is empty): remove spec.apiServerLoadBalancer.dns and publish the records yourself"
	}
	host = strings.ToLower(host)
	for _, s := range suffixes {
		if strings.HasSuffix(host, "."+s) {
			return ""
		}
	}
	return fmt.Sprintf("%s is not under a DNS suffix the operator allows (%s)", host, strings.Join(suffixes, ", "))
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
	err := readerOr(r.APIReader, r.Client).Get(ctx, client.ObjectKey{Namespace: c.osc.Namespace, Name: dnsEndpointName(c.osc)}, obj)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !controlledBy(obj, c.osc) {
		// Someone else's: never deleted.
		return nil
	}
	uid := obj.GetUID()
	err = r.Client.Delete(ctx, obj, client.Preconditions{UID: &uid})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		c.report.Changed("DeletedDNSEndpoint", report.Resource{Kind: "DNSEndpoint", Name: obj.GetNamespace() + "/" + obj.GetName()},
			"Deleted DNSEndpoint %s: the endpoint's records are no longer published", obj.GetName())
	}
	return err
}
