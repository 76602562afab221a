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

package apivalidation

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

func newNamespace(t *testing.T, g *WithT, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	g.Expect(env.Client.Create(context.Background(), ns)).To(Succeed())
	return ns.Name
}

// TestDefaults checks what the API server fills in: the defaults are part of the API, and the
// controllers rely on them.
func TestDefaults(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, g, "defaults")

	cluster := &infrav1.OpenStackCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "defaults", Namespace: ns},
		Spec: infrav1.OpenStackClusterSpec{
			APIServerLoadBalancer: &infrav1.APIServerLoadBalancer{Monitor: &infrav1.APIServerLoadBalancerMonitor{}},
			ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{},
		},
	}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())

	got := &infrav1.OpenStackCluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), got)).To(Succeed())
	g.Expect(got.Spec.APIServerPort).To(Equal(infrav1.DefaultAPIServerPort))
	lb := got.Spec.APIServerLoadBalancer
	g.Expect(lb.Enabled).To(Equal(ptr.To(true)))
	g.Expect(lb.AllowCrossAZLoadBalancerMembers).To(Equal(ptr.To(false)))
	g.Expect(*lb.Monitor).To(Equal(infrav1.APIServerLoadBalancerMonitor{Delay: 10, Timeout: 5, MaxRetries: 5, MaxRetriesDown: 3}))
	g.Expect(got.Spec.ManagedSecurityGroups.AllowAllInClusterTraffic).To(BeFalse())

	// Without apiServerLoadBalancer there is no load balancer, and nothing is defaulted into one.
	bare := &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: "bare", Namespace: ns}}
	g.Expect(env.Client.Create(ctx, bare)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(bare), got)).To(Succeed())
	g.Expect(got.Spec.APIServerLoadBalancer).To(BeNil())
	g.Expect(got.Spec.APIServerPort).To(Equal(infrav1.DefaultAPIServerPort))
}

// TestStatusRoundTrip writes the v1beta2 contract status and the per-AZ list through the status
// subresource, as the controller will, and reads it back unchanged.
func TestStatusRoundTrip(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, g, "status")

	cluster := &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: "status", Namespace: ns}}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())

	lbAZ1 := infrav1.LoadBalancer{
		Name: "k8s-clusterapi-cluster-status-status-az1-kubeapi", ID: "lb1", IP: "172.24.4.10", InternalIP: "10.0.1.5",
		AvailabilityZone: "az1", AllowedCIDRs: []string{"10.0.0.0/8"}, Tags: []string{"t"},
		LoadBalancerNetwork: &infrav1.NetworkStatusWithSubnets{
			NetworkStatus: infrav1.NetworkStatus{Name: "lb-net", ID: "net"},
			Subnets:       []infrav1.Subnet{{Name: "lb-az1", ID: "s1", CIDR: "10.0.1.0/24"}},
		},
	}
	lbAZ2 := lbAZ1
	lbAZ2.Name, lbAZ2.ID, lbAZ2.AvailabilityZone = "k8s-clusterapi-cluster-status-status-az2-kubeapi", "lb2", "az2"
	cluster.Status = infrav1.OpenStackClusterStatus{
		Initialization:         &infrav1.OpenStackClusterInitializationStatus{Provisioned: ptr.To(true)},
		Conditions:             []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.Now()}},
		APIServerLoadBalancers: []infrav1.LoadBalancer{lbAZ1, lbAZ2},
		APIServerLoadBalancer:  &lbAZ1,
	}
	g.Expect(env.Client.Status().Update(ctx, cluster)).To(Succeed())

	got := &infrav1.OpenStackCluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), got)).To(Succeed())
	g.Expect(got.Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
	g.Expect(got.Status.APIServerLoadBalancers).To(Equal([]infrav1.LoadBalancer{lbAZ1, lbAZ2}))
	g.Expect(got.Status.APIServerLoadBalancer).To(Equal(&lbAZ1))

	// Two entries for one zone are rejected: the list is keyed by availability zone.
	got.Status.APIServerLoadBalancers = append(got.Status.APIServerLoadBalancers, lbAZ1)
	err := env.Client.Status().Update(ctx, got)
	g.Expect(err).To(MatchError(ContainSubstring("status.apiServerLoadBalancers[2]: Duplicate value")))
}
