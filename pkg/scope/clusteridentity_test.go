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

package scope

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1alpha1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1alpha1"
	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// Upstream's cluster-identity flavor: identityRef {type: ClusterIdentity} names a cluster-scoped
// OpenStackClusterIdentity whose Secret lives in the operator's namespace. A namespace its
// namespaceSelector selects gets the credential; another gets an error that says why, and
// Keystone is never asked for it. An identity without a selector serves every namespace, as
// upstream's does.
func TestClusterIdentityServesTheNamespacesItSelects(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	k := newKeystone(t, false)
	scheme := runtime.NewScheme()
	g.Expect(corev1.AddToScheme(scheme)).To(Succeed())
	g.Expect(infrav1alpha1.AddToScheme(scheme)).To(Succeed())
	central := secret(map[string]string{CloudsSecretKey: cloudsYAML(k.server.URL, "")})
	central.Namespace = "capo-credentials"
	namespace := func(name string, labels map[string]string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	selective := &infrav1alpha1.OpenStackClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: "prod"}, Spec: infrav1alpha1.OpenStackClusterIdentitySpec{
		SecretRef:         infrav1alpha1.OpenStackCredentialSecretReference{Name: central.Name, Namespace: central.Namespace},
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"openstack-prod": "allowed"}},
	}}
	open := &infrav1alpha1.OpenStackClusterIdentity{ObjectMeta: metav1.ObjectMeta{Name: "shared"}, Spec: infrav1alpha1.OpenStackClusterIdentitySpec{
		SecretRef: infrav1alpha1.OpenStackCredentialSecretReference{Name: central.Name, Namespace: central.Namespace},
	}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(central, selective, open,
		namespace("team-a", map[string]string{"openstack-prod": "allowed"}), namespace("team-b", nil)).Build()
	f := &SecretFactory{Reader: c, Log: logr.Discard(), AuthGrace: AuthDeadline(0)}
	byIdentity := func(name string) *infrav1.OpenStackIdentityReference {
		return &infrav1.OpenStackIdentityReference{Type: ClusterIdentityType, Name: name, CloudName: "openstack"}
	}

	clients, err := f.NewClients(ctx, "team-a", byIdentity("prod"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(clients.ProjectID).To(Equal("project-1"))

	_, err = f.NewClients(ctx, "team-b", byIdentity("prod"))
	g.Expect(err).To(MatchError("OpenStackClusterIdentity prod does not allow namespace team-b: its spec.namespaceSelector does not select it; " +
		"its owner may add the namespace, or use an identity Secret in the namespace"))
	g.Expect(k.authCount()).To(Equal(1), "the refused namespace never reaches Keystone")

	_, err = f.NewClients(ctx, "team-b", byIdentity("shared"))
	g.Expect(err).NotTo(HaveOccurred(), "no selector: every namespace")

	_, err = f.NewClients(ctx, "team-a", byIdentity("missing"))
	g.Expect(err).To(MatchError("OpenStackClusterIdentity missing named by identityRef does not exist"))

	// The identity's Secret is not the namespace's: a Secret named like it in team-b is not read.
	_, err = f.NewClients(ctx, "team-b", &infrav1.OpenStackIdentityReference{Name: central.Name, CloudName: "openstack"})
	g.Expect(err).To(MatchError(ContainSubstring("identity Secret team-b/cloud-config named by identityRef does not exist")))

	// The identity stops selecting team-a: the next reconcile is refused, cached clients or not.
	selective.Spec.NamespaceSelector.MatchLabels["openstack-prod"] = "revoked"
	g.Expect(c.Update(ctx, selective)).To(Succeed())
	_, err = f.NewClients(ctx, "team-a", byIdentity("prod"))
	g.Expect(err).To(MatchError(ContainSubstring("does not allow namespace team-a")))
}
