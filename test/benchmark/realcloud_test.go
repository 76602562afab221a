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

package benchmark

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/controllers"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	managerscheme "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scheme"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
)

// BenchmarkRealCloud drives the cluster reconciler against a real OpenStack in real time, with
// the requeues a manager would make, and reports what a user sees: seconds from apply to every
// load balancer ready (ready-s) and to the OpenStackCluster provisioned (provisioned-s: with
// availabilityZoneSubnets one zone ready is enough), OpenStack calls per converged reconcile,
// seconds spent inside reconciles (on OpenStack calls: nothing waits there), and seconds from
// delete to the finalizer removed. It fails when anything is left behind. Skipped without a
// cloud:
//
//	CAPO_BENCH_CLOUDS_YAML=/path/clouds.yaml CAPO_BENCH_CLOUD=mycloud CAPO_BENCH_ZONES=az1,az2 \
//	  go test -run '^$' -bench RealCloud -benchtime 1x ./test/benchmark/
//
// CAPO_BENCH_VERBOSE=1 logs each reconcile with the calls it made and their latency. It runs the
// single load balancer mode (as upstream CAPO users have it) and the multi-AZ mode over the first
// two and three zones listed (default az1,az2). The cluster gets its own
// network and router; the multi-AZ load balancer network, with one subnet per zone, is created
// and deleted by the benchmark as an operator would.
func BenchmarkRealCloud(b *testing.B) {
	cloudsYAML, cloudName, zones := realCloud(b)
	cases := []int{1}
	for n := 2; n <= len(zones) && n <= 3; n++ {
		cases = append(cases, n)
	}
	type run struct {
		name  string
		zones []string
		mode  realMode
	}
	runs := []run{{"single", zones[:1], single}}
	for _, n := range cases[1:] {
		runs = append(runs, run{fmt.Sprintf("zones=%d", n), zones[:n], multi})
	}
	if len(zones) > 1 {
		runs = append(runs, run{"migrate-to-zones=2", zones[:2], migrate})
	}
	for _, rn := range runs {
		b.Run(rn.name, func(b *testing.B) {
			var last realRun
			for b.Loop() {
				last = driveReal(b, cloudsYAML, cloudName, rn.zones, rn.mode)
			}
			if rn.mode == migrate {
				b.ReportMetric(last.migration.Seconds(), "migrate-s")
			}
			b.ReportMetric(last.ready.Seconds(), "ready-s")
			b.ReportMetric(last.provisioned.Seconds(), "provisioned-s")
			b.ReportMetric(last.inReconcile.Seconds(), "in-reconcile-s")
			b.ReportMetric(float64(last.steadyCalls), "calls/steady-reconcile")
			b.ReportMetric(last.deletion.Seconds(), "delete-s")
		})
	}
}

// BenchmarkRealCloudOctaviaAlone is the floor the figures above compare with: how long the
// same cloud's Octavia takes to bring 1, 2 or 3 load balancers created at once (each with two
// listeners, pools and monitors, fully populated as the controller creates them) to ACTIVE,
// polled every 250 ms with nothing else running, and to delete them again (a cascade delete).
// Same variables as BenchmarkRealCloud.
func BenchmarkRealCloudOctaviaAlone(b *testing.B) {
	cloudsYAML, cloudName, zones := realCloud(b)
	scheme, err := managerscheme.New()
	must(b, err)
	ctx := context.Background()
	_, _, cl := benchIdentity(ctx, b, scheme, cloudsYAML, cloudName)
	netw, err := cl.Network.CreateNetwork(ctx, networks.CreateOpts{Name: "bench-octavia-alone"})
	must(b, err)
	defer func() { _ = cl.Network.DeleteNetwork(ctx, netw.ID) }()
	sn, err := cl.Network.CreateSubnet(ctx, subnets.CreateOpts{NetworkID: netw.ID, IPVersion: 4, CIDR: "10.31.0.0/24"})
	must(b, err)

	for n := 1; n <= len(zones) && n <= 3; n++ {
		b.Run(fmt.Sprintf("lbs=%d", n), func(b *testing.B) {
			var active, deleted time.Duration
			for b.Loop() {
				active, deleted = octaviaAlone(b, ctx, cl, slices.Repeat([]string{sn.ID}, n), zones[:n])
			}
			b.ReportMetric(active.Seconds(), "active-s")
			b.ReportMetric(deleted.Seconds(), "delete-s")
		})
	}
}

// octaviaAlone creates a load balancer in each of zones at once, the i-th with its VIP on
// subnetIDs[i], each with two listeners, pools and monitors in the one create call, and returns
// how long Octavia took to bring them all to ACTIVE and then to delete them (a cascade delete
// each), both polled every 250 ms.
func octaviaAlone(b *testing.B, ctx context.Context, cl *scope.Clients, subnetIDs []string, zones []string) (active, deleted time.Duration) {
	start := time.Now()
	ids := make([]string, len(zones))
	var wg sync.WaitGroup
	errs := make([]error, len(zones))
	for i, az := range zones {
		wg.Go(func() {
			var ls []listeners.CreateOpts
			for _, port := range []int{6443, 8132} {
				name := fmt.Sprintf("bench-alone-%s-%d", az, port)
				ls = append(ls, listeners.CreateOpts{Name: name, Protocol: listeners.ProtocolTCP, ProtocolPort: port,
					DefaultPool: &pools.CreateOpts{Name: name, Protocol: pools.ProtocolTCP, LBMethod: pools.LBMethodRoundRobin,
						Monitor: monitors.CreateOpts{Name: name, Type: monitors.TypeTCP, Delay: 10, Timeout: 5, MaxRetries: 5}}})
			}
			lb, err := cl.LoadBalancer.CreateLoadBalancer(ctx, loadbalancers.CreateOpts{Name: "bench-alone-" + az, VipSubnetID: subnetIDs[i],
				AvailabilityZone: az, Listeners: ls})
			if err == nil {
				ids[i] = lb.ID
			}
			errs[i] = err
		})
	}
	wg.Wait()
	// Whatever happens, the load balancers are deleted; deleted is how long Octavia took to
	// remove them, polled every 250 ms.
	deleteAll := func() time.Duration {
		start := time.Now()
		for _, id := range ids {
			for deadline := time.Now().Add(time.Minute); id != "" && time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
				err := cl.LoadBalancer.DeleteLoadBalancer(ctx, id, loadbalancers.DeleteOpts{Cascade: true})
				if err == nil || gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
					break
				}
			}
		}
		for _, id := range ids {
			for deadline := time.Now().Add(time.Minute); id != "" && time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
				if _, err := cl.LoadBalancer.GetLoadBalancer(ctx, id); gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
					break
				}
			}
		}
		return time.Since(start)
	}
	cleaned := false
	defer func() {
		if !cleaned {
			deleteAll()
		}
	}()
	for _, err := range errs {
		must(b, err)
	}
	for deadline := start.Add(3 * time.Minute); ; time.Sleep(250 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("not ACTIVE after 3 minutes")
		}
		all := true
		for _, id := range ids {
			lb, err := cl.LoadBalancer.GetLoadBalancer(ctx, id)
			must(b, err)
			all = all && lb.ProvisioningStatus == "ACTIVE"
		}
		if all {
			active = time.Since(start)
			cleaned = true
			return active, deleteAll()
		}
	}
}

// realMode is what a real-cloud run creates.
type realMode int

const (
	// single is the single load balancer on the cluster network, as upstream users have it.
	single realMode = iota
	// multi is one load balancer per zone on a load balancer network.
	multi
	// migrate starts with the single load balancer on the first zone's subnet of the load
	// balancer network, then adds availabilityZoneSubnets.
	migrate
)

// realMemory is what the controller learns about the cloud, shared by the runs as one manager
// would share it between clusters: the first load balancer tells how this Octavia creates them.
var realMemory = loadbalancer.NewMemory()

type realRun struct {
	ready, provisioned, inReconcile, deletion, migration time.Duration
	steadyCalls                                          int
}

func driveReal(b *testing.B, cloudsYAML []byte, cloudName string, zones []string, mode realMode) realRun {
	ctx := ctrl.LoggerInto(context.Background(), logr.Discard())
	scheme, err := managerscheme.New()
	must(b, err)
	ns := benchNamespace
	name := fmt.Sprintf("b%d", time.Now().UnixNano()%1_000_000)
	secret, ref, cl := benchIdentity(ctx, b, scheme, cloudsYAML, cloudName)

	spec := infrav1.OpenStackClusterSpec{
		IdentityRef:           ref,
		ManagedSubnets:        []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24"}},
		ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{},
		APIServerLoadBalancer: &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true), AdditionalPorts: []int{8132}},
	}
	var cleanup []func()
	defer func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			cleanup[i]()
		}
	}()
	var mapping []infrav1.AZSubnetMapping
	if mode != single {
		var lbNet string
		lbNet, mapping = operatorLBNetwork(ctx, b, cl, name, zones, &cleanup)
		spec.ControlPlaneEndpoint = &clusterv1.APIEndpoint{Host: "api.bench.example.com", Port: 6443}
		spec.APIServerLoadBalancer.Network = &infrav1.NetworkParam{ID: ptr.To(lbNet)}
		if mode == multi {
			spec.APIServerLoadBalancer.AvailabilityZoneSubnets = mapping
		} else {
			spec.APIServerLoadBalancer.Subnets = []infrav1.SubnetParam{mapping[0].Subnet}
		}
	}

	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: "cluster-uid"}}
	osc := &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: name, UID: "cluster-uid"}}}, Spec: spec}
	kube := fakeclient.NewClientBuilder().WithScheme(scheme).WithObjects(cluster, osc, secret.DeepCopy()).WithStatusSubresource(osc).Build()
	r := &controllers.OpenStackClusterReconciler{Client: kube, Recorder: &events.FakeRecorder{},
		ScopeFactory: &scope.SecretFactory{Reader: kube, Log: logr.Discard()}, LoadBalancerMemory: realMemory}
	key := client.ObjectKeyFromObject(osc)

	var out realRun
	reconciles := 0
	verbose := os.Getenv("CAPO_BENCH_VERBOSE") != ""
	begin := time.Now()
	// step reconciles once and waits as controller-runtime would: not at all after a change
	// (its watch event), else the requeue asked for. It reports whether the object is gone.
	step := func() bool {
		start := time.Now()
		var ops map[string]opTime
		if verbose {
			ops = opTimes(b)
		}
		p := reconcileOnce(ctx, kube, r, key, &infrav1.OpenStackCluster{})
		if !p.ran {
			return true
		}
		out.inReconcile += p.took
		reconciles++
		if verbose {
			fmt.Fprintf(os.Stderr, "reconcile %d at %s: %s, requeue %s, err %v; calls: %s\n", reconciles, start.Sub(begin).Round(time.Millisecond),
				p.took.Round(time.Millisecond), p.res.RequeueAfter, p.err, opDiff(ops, opTimes(b)))
		}
		if p.err != nil {
			b.Logf("reconcile %d: %v", reconciles, p.err)
			time.Sleep(100 * time.Millisecond)
		}
		if p.gone {
			return true
		}
		if !p.changed {
			time.Sleep(p.res.RequeueAfter)
		}
		return false
	}

	start := time.Now()
	deadline := start.Add(3 * time.Minute)
	want := 1
	if mode == multi {
		want = len(zones)
	}
	for !converged(ctx, kube, key, want) {
		if out.provisioned == 0 && provisioned(ctx, kube, key) {
			out.provisioned = time.Since(start)
		}
		if time.Now().After(deadline) {
			cur := &infrav1.OpenStackCluster{}
			_ = kube.Get(ctx, key, cur)
			b.Fatalf("not ready after 3 minutes: %+v", cur.Status.Conditions)
		}
		step()
	}
	out.ready = time.Since(start)
	if out.provisioned == 0 {
		out.provisioned = out.ready
	}

	step()
	before := totalCalls(b)
	step()
	out.steadyCalls = totalCalls(b) - before

	if mode == migrate {
		out.migration = migrateReal(ctx, b, kube, key, cl, mapping, step)
	}

	cur := &infrav1.OpenStackCluster{}
	must(b, kube.Get(ctx, key, cur))
	must(b, kube.Delete(ctx, cur))
	start = time.Now()
	deadline = start.Add(3 * time.Minute)
	for !step() {
		if time.Now().After(deadline) {
			b.Fatal("not deleted after 3 minutes")
		}
	}
	out.deletion = time.Since(start)

	// Nothing of the cluster may be left: its load balancers, floating IPs, ports, network,
	// router and security groups.
	if left := leftOf(ctx, b, cl, ns, name); len(left) > 0 {
		b.Fatalf("left behind: %s", strings.Join(left, ", "))
	}
	return out
}

// leftOf lists what carries the name of cluster ns/name: load balancers, floating IPs (by their
// description), networks, routers, security groups and ports.
func leftOf(ctx context.Context, b *testing.B, cl *scope.Clients, ns, name string) []string {
	var names []string
	add := func(kind string, err error, values ...string) {
		must(b, err)
		for _, v := range values {
			if strings.Contains(v, "-"+ns+"-"+name) || strings.Contains(v, ns+"/"+name) {
				names = append(names, kind+" "+v)
			}
		}
	}
	lbs, err := cl.LoadBalancer.ListLoadBalancers(ctx, loadbalancers.ListOpts{})
	add("load balancer", err, pluck(lbs, func(x loadbalancers.LoadBalancer) string { return x.Name })...)
	fips, err := cl.Network.ListFloatingIPs(ctx, floatingips.ListOpts{})
	add("floating IP", err, pluck(fips, func(x floatingips.FloatingIP) string { return x.Description })...)
	nets, err := cl.Network.ListNetworks(ctx, networks.ListOpts{})
	add("network", err, pluck(nets, func(x networks.Network) string { return x.Name })...)
	rs, err := cl.Network.ListRouters(ctx, routers.ListOpts{})
	add("router", err, pluck(rs, func(x routers.Router) string { return x.Name })...)
	sgs, err := cl.Network.ListSecGroups(ctx, groups.ListOpts{})
	add("security group", err, pluck(sgs, func(x groups.SecGroup) string { return x.Name })...)
	ps, err := cl.Network.ListPorts(ctx, ports.ListOpts{})
	add("port", err, pluck(ps, func(x ports.Port) string { return x.Name })...)
	return names
}

func pluck[T any](items []T, f func(T) string) []string {
	out := make([]string, len(items))
	for i := range items {
		out[i] = f(items[i])
	}
	return out
}

// migrateReal adds availabilityZoneSubnets to a converged single load balancer cluster, waits
// for every zone to be ready, and checks that the single load balancer became the first zone's
// with its ID, VIP and floating IP, its listeners, pools and monitors renamed. It returns how
// long that took.
func migrateReal(ctx context.Context, b *testing.B, kube client.Client, key client.ObjectKey, cl *scope.Clients, mapping []infrav1.AZSubnetMapping, step func() bool) time.Duration {
	cur := &infrav1.OpenStackCluster{}
	must(b, kube.Get(ctx, key, cur))
	legacy := cur.Status.APIServerLoadBalancer.DeepCopy()
	cur.Spec.APIServerLoadBalancer.Subnets = nil
	cur.Spec.APIServerLoadBalancer.AvailabilityZoneSubnets = mapping
	must(b, kube.Update(ctx, cur))

	start := time.Now()
	for deadline := start.Add(3 * time.Minute); !converged(ctx, kube, key, len(mapping)); {
		if time.Now().After(deadline) {
			must(b, kube.Get(ctx, key, cur))
			b.Fatalf("not migrated after 3 minutes: %+v", cur.Status.Conditions)
		}
		step()
	}
	took := time.Since(start)

	must(b, kube.Get(ctx, key, cur))
	first := cur.Status.APIServerLoadBalancers[0]
	if first.ID != legacy.ID || first.InternalIP != legacy.InternalIP || first.IP != legacy.IP {
		b.Fatalf("the first zone's load balancer is not the single one kept: was %s %s %s, is %s %s %s",
			legacy.ID, legacy.InternalIP, legacy.IP, first.ID, first.InternalIP, first.IP)
	}
	tree, err := cl.LoadBalancer.GetLoadBalancerStatuses(ctx, first.ID)
	must(b, err)
	var names []string
	names = append(names, tree.Loadbalancer.Name)
	for _, l := range tree.Loadbalancer.Listeners {
		names = append(names, l.Name)
		for _, p := range l.Pools {
			names = append(names, p.Name, p.Monitor.Name)
		}
	}
	for _, n := range names {
		if !strings.HasPrefix(n, first.Name) {
			b.Fatalf("%s is not renamed after %s: %v", n, first.Name, names)
		}
	}
	if len(names) != 1+3*2 {
		b.Fatalf("want the load balancer and a listener, pool and monitor for two ports, got %v", names)
	}
	return took
}

// provisioned says whether Cluster API would see the infrastructure as provisioned: with
// availabilityZoneSubnets, as soon as one zone's load balancer is ready.
func provisioned(ctx context.Context, kube client.Client, key client.ObjectKey) bool {
	cur := &infrav1.OpenStackCluster{}
	return kube.Get(ctx, key, cur) == nil && cur.Status.Initialization != nil && ptr.Deref(cur.Status.Initialization.Provisioned, false)
}

// totalCalls sums capo_openstack_api_requests_total.
func totalCalls(b *testing.B) int {
	families, err := metrics.Registry.Gather()
	must(b, err)
	total := 0.0
	for _, f := range families {
		if f.GetName() != "capo_openstack_api_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if c := m.GetCounter(); c != nil {
				total += c.GetValue()
			}
		}
	}
	return int(total)
}

type opTime struct {
	count uint64
	sum   float64
}

// opTimes reads the count and total seconds of each OpenStack operation so far.
func opTimes(b *testing.B) map[string]opTime {
	families, err := metrics.Registry.Gather()
	must(b, err)
	out := map[string]opTime{}
	for _, f := range families {
		if f.GetName() != "capo_openstack_api_request_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			var op string
			for _, l := range m.GetLabel() {
				if l.GetName() == "operation" {
					op = l.GetValue()
				}
			}
			t := out[op]
			t.count += m.GetHistogram().GetSampleCount()
			t.sum += m.GetHistogram().GetSampleSum()
			out[op] = t
		}
	}
	return out
}

// opDiff describes the calls made between two opTimes, slowest first.
func opDiff(before, after map[string]opTime) string {
	type line struct {
		op    string
		count uint64
		sum   float64
	}
	var lines []line
	for op, a := range after {
		d := line{op, a.count - before[op].count, a.sum - before[op].sum}
		if d.count > 0 {
			lines = append(lines, d)
		}
	}
	slices.SortFunc(lines, func(a, c line) int { return cmp.Compare(c.sum, a.sum) })
	parts := make([]string, len(lines))
	for i, l := range lines {
		parts[i] = fmt.Sprintf("%s×%d %.0fms", l.op, l.count, 1000*l.sum)
	}
	return strings.Join(parts, ", ")
}
