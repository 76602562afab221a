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

// Package benchmark measures the OpenStackCluster reconciler against the fake OpenStack: how long
// a cluster takes to converge when Octavia needs a fixed time to provision, how many reconciles
// and OpenStack calls that takes, how many calls a converged cluster costs per reconcile, and how
// long a deletion takes. Time is simulated: a reconcile that asks to be requeued after d moves
// the clock by d, one that changed the object is followed at once (its watch event), so the
// figures are what the controller's logic costs, independent of the machine. Run with
// `make bench`.
package benchmark

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/controllers"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	managerscheme "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scheme"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

// provisioningDelay is how long the fake Octavia keeps a load balancer PENDING_* after each
// change: the middle of the 4-8 s the real Octavia of the local reference needs.
const provisioningDelay = 6 * time.Second

// run is one cluster driven from creation to converged and to deleted.
type run struct {
	converge, deletion time.Duration
	reconciles         int
	callsToConverge    int
	steadyCalls        int
	leftOver           int
}

func BenchmarkAPIServerLoadBalancers(b *testing.B) {
	for _, zones := range []int{1, 3, 6} {
		b.Run(fmt.Sprintf("zones=%d", zones), func(b *testing.B) {
			var last run
			for b.Loop() {
				last = drive(b, zones)
			}
			b.ReportMetric(last.converge.Seconds(), "converge-s")
			b.ReportMetric(float64(last.reconciles), "reconciles")
			b.ReportMetric(float64(last.callsToConverge), "calls-to-converge")
			b.ReportMetric(float64(last.steadyCalls), "calls/steady-reconcile")
			b.ReportMetric(last.deletion.Seconds(), "delete-s")
			if last.leftOver != 0 {
				b.Fatalf("%d resources left behind after deletion", last.leftOver)
			}
		})
	}
}

// drive creates a cluster with zones load balancers (zones=1 is the single load balancer mode,
// as upstream users have it), converges it, measures a steady reconcile and deletes it.
func drive(b *testing.B, zones int) run {
	ctx := ctrl.LoggerInto(context.Background(), ctrl.Log)
	clk := fakeopenstack.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cloud := fakeopenstack.New(fakeopenstack.Options{PendingDuration: provisioningDelay, Now: clk.Now})
	azs := make([]string, zones)
	for i := range azs {
		azs[i] = fmt.Sprintf("az%d", i+1)
	}
	cloud.SetAvailabilityZones(azs...)
	ext := cloud.AddNetwork("public", true)
	cloud.AddSubnet(ext, "public", "172.24.4.0/24")

	spec := infrav1.OpenStackClusterSpec{
		IdentityRef:           &infrav1.OpenStackIdentityReference{Name: "cloud-config", CloudName: "openstack"},
		ManagedSubnets:        []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24"}},
		ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{},
		APIServerLoadBalancer: &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true), AdditionalPorts: []int{8132}},
	}
	if zones > 1 {
		lbNet, mappings := fakeOperatorLBNetwork(ctx, b, cloud, ext, azs, "10.20.%d.0/24")
		spec.ControlPlaneEndpoint = &clusterv1.APIEndpoint{Host: "api.example.com", Port: 6443}
		spec.APIServerLoadBalancer.Network = &infrav1.NetworkParam{ID: ptr.To(lbNet)}
		spec.APIServerLoadBalancer.AvailabilityZoneSubnets = mappings
	}
	before := countAll(ctx, cloud)

	scheme, err := managerscheme.New()
	must(b, err)
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "bench", UID: "cluster-uid"}}
	osc := &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "bench",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "c", UID: "cluster-uid"}}}, Spec: spec}
	kube := fakeclient.NewClientBuilder().WithScheme(scheme).WithObjects(cluster, osc).WithStatusSubresource(osc).Build()
	memory := loadbalancer.NewMemory()
	r := &controllers.OpenStackClusterReconciler{Client: kube, Recorder: &events.FakeRecorder{}, ScopeFactory: cloud.Factory(), LoadBalancerMemory: memory}
	key := client.ObjectKeyFromObject(osc)

	// step reconciles once and moves the clock to the next reconcile. It reports whether the
	// object is gone.
	var out run
	step := func() bool {
		p := reconcileOnce(ctx, kube, r, key, &infrav1.OpenStackCluster{})
		if p.ran {
			out.reconciles++
		}
		switch {
		case p.gone:
			return true
		case p.err != nil:
			b.Fatalf("reconcile %d: %v", out.reconciles, p.err)
		case !p.changed:
			clk.Advance(p.res.RequeueAfter)
		}
		return false
	}

	start := clk.Now()
	for !converged(ctx, kube, key, zones) {
		if out.reconciles > 500 {
			b.Fatalf("not converged after %d reconciles", out.reconciles)
		}
		step()
	}
	out.converge = clk.Now().Sub(start)
	out.callsToConverge = cloud.TotalCalls()
	if os.Getenv("CAPO_BENCH_VERBOSE") != "" {
		b.Logf("calls to converge with %d zones: %v", zones, cloud.Calls())
	}

	// One more reconcile to let the status settle, then the measured one.
	step()
	cloud.ResetCalls()
	step()
	out.steadyCalls = cloud.TotalCalls()

	cur := &infrav1.OpenStackCluster{}
	must(b, kube.Get(ctx, key, cur))
	must(b, kube.Delete(ctx, cur))
	start = clk.Now()
	for !step() {
		if out.reconciles > 1000 {
			b.Fatalf("not deleted after %d reconciles", out.reconciles)
		}
	}
	out.deletion = clk.Now().Sub(start)
	out.leftOver = countAll(ctx, cloud) - before
	return out
}

// fakeOperatorLBNetwork makes, in the fake cloud, what an operator brings for one load balancer
// per zone: a network for the VIPs with a subnet per zone (cidr formatted with the zone's index),
// routed to the external network ext. It returns the network and the zones' mappings.
func fakeOperatorLBNetwork(ctx context.Context, b *testing.B, cloud *fakeopenstack.Cloud, ext string, azs []string, cidr string) (string, []infrav1.AZSubnetMapping) {
	lbNet := cloud.AddNetwork("lb-net", false)
	router, err := cloud.Network().CreateRouter(ctx, routers.CreateOpts{Name: "operator", GatewayInfo: &routers.GatewayInfo{NetworkID: ext}})
	must(b, err)
	var mappings []infrav1.AZSubnetMapping
	for i, az := range azs {
		sn := cloud.AddSubnet(lbNet, "lb-"+az, fmt.Sprintf(cidr, i))
		_, err := cloud.Network().AddRouterInterface(ctx, router.ID, routers.AddInterfaceOpts{SubnetID: sn})
		must(b, err)
		mappings = append(mappings, infrav1.AZSubnetMapping{AvailabilityZone: az, Subnet: infrav1.SubnetParam{ID: ptr.To(sn)}})
	}
	return lbNet, mappings
}

// pass is one reconcile as a manager runs it.
type pass struct {
	// ran is false when the object was gone before the reconcile; gone says it is gone after.
	ran, gone bool
	// changed says the reconcile changed the object: its watch event brings the manager back at
	// once, whatever res asks for.
	changed bool
	res     ctrl.Result
	err     error
	took    time.Duration
}

// reconcileOnce reconciles the object key (of obj's kind) once and reports what a manager would
// do next.
func reconcileOnce(ctx context.Context, kube client.Client, r reconcile.Reconciler, key client.ObjectKey, obj client.Object) pass {
	before := obj.DeepCopyObject().(client.Object)
	if err := kube.Get(ctx, key, before); apierrors.IsNotFound(err) {
		return pass{gone: true}
	}
	start := time.Now()
	res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key})
	p := pass{ran: true, res: res, err: err, took: time.Since(start)}
	after := obj.DeepCopyObject().(client.Object)
	if err := kube.Get(ctx, key, after); apierrors.IsNotFound(err) {
		p.gone = true
		return p
	}
	p.changed = after.GetResourceVersion() != before.GetResourceVersion()
	return p
}

func converged(ctx context.Context, kube client.Client, key client.ObjectKey, zones int) bool {
	cur := &infrav1.OpenStackCluster{}
	if err := kube.Get(ctx, key, cur); err != nil {
		return false
	}
	if !conditions.IsTrue(cur, infrav1.APIServerLoadBalancersReadyCondition) || cur.Status.Initialization == nil {
		return false
	}
	if zones > 1 {
		return len(cur.Status.APIServerLoadBalancers) == zones
	}
	return cur.Status.APIServerLoadBalancer != nil
}

// countAll counts networks, routers, ports, security groups, floating IPs and load balancers.
func countAll(ctx context.Context, cloud *fakeopenstack.Cloud) int {
	n := cloud.Network()
	nets, _ := n.ListNetworks(ctx, networks.ListOpts{})
	rs, _ := n.ListRouters(ctx, routers.ListOpts{})
	ps, _ := n.ListPorts(ctx, ports.ListOpts{})
	gs, _ := n.ListSecGroups(ctx, groups.ListOpts{})
	fips, _ := n.ListFloatingIPs(ctx, floatingips.ListOpts{})
	all, _ := cloud.LoadBalancer().ListLoadBalancers(ctx, loadbalancers.ListOpts{})
	return len(nets) + len(rs) + len(ps) + len(gs) + len(fips) + len(all)
}

func must(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}
