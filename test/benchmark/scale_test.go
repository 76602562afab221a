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
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/controllers"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	managerscheme "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scheme"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

// BenchmarkScale runs one manager (both reconcilers, one worker) for many three-zone clusters
// with three control plane machines each, against one fake OpenStack that keeps load balancers
// pending for provisioningDelay and servers building for two reads. Simulated time moves by
// each reconcile's wall time (the work of one worker on this machine) and jumps to the next
// requeue when the queue is empty. It reports, for each size: simulated time until every cluster
// and machine is ready, reconcile wall time p50 and p99, the deepest queue, OpenStack calls per
// simulated minute per cluster once converged, the process's peak RSS, and the time to delete
// everything. It is long: set CAPO_BENCH_SCALE=1 (`make bench-scale`); CI skips it.
func BenchmarkScale(b *testing.B) {
	if os.Getenv("CAPO_BENCH_SCALE") == "" {
		b.Skip("set CAPO_BENCH_SCALE=1 to run the scale benchmark (minutes; outside CI)")
	}
	// The reconcilers' logs would cost more than they do; controller-runtime warns when no
	// logger was ever set.
	ctrllog.SetLogger(logr.Discard())
	sizes := []int{50, 100, 200}
	if s := os.Getenv("CAPO_BENCH_SCALE_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			must(b, err)
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("clusters=%d", n), func(b *testing.B) {
			var r scaleRun
			for b.Loop() {
				r = driveScale(b, n)
			}
			b.ReportMetric(r.converge.Seconds(), "converge-s")
			b.ReportMetric(float64(r.p50.Microseconds())/1000, "reconcile-p50-ms")
			b.ReportMetric(float64(r.p99.Microseconds())/1000, "reconcile-p99-ms")
			b.ReportMetric(float64(r.maxQueue), "max-queue")
			b.ReportMetric(r.steadyCallsPerMinute, "calls/min/cluster")
			b.ReportMetric(float64(r.peakRSS)/(1<<20), "peak-RSS-MiB")
			b.ReportMetric(r.deletion.Seconds(), "delete-s")
			b.ReportMetric(float64(r.reconciles), "reconciles")
		})
	}
}

type scaleRun struct {
	converge, deletion, p50, p99 time.Duration
	maxQueue, reconciles         int
	steadyCallsPerMinute         float64
	peakRSS                      int64
}

// scaleKey is one object in the queue: an OpenStackCluster (machine false) or an
// OpenStackMachine.
type scaleKey struct {
	key     types.NamespacedName
	machine bool
}

func driveScale(b *testing.B, n int) scaleRun {
	ctx := ctrl.LoggerInto(context.Background(), ctrl.Log)
	clk := fakeopenstack.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cloud := fakeopenstack.New(fakeopenstack.Options{PendingDuration: provisioningDelay, ServerBuildReads: 2, Now: clk.Now})
	azs := []string{"az1", "az2", "az3"}
	cloud.SetAvailabilityZones(azs...)
	ext := cloud.AddNetwork("public", true)
	cloud.AddSubnet(ext, "public", "172.24.0.0/16")
	cloud.AddFlavor("m1.small", 2, 2048)
	cloud.AddImage("ubuntu")
	lbNet, mappings := fakeOperatorLBNetwork(ctx, b, cloud, ext, azs, "10.2%d.0.0/16")

	scheme, err := managerscheme.New()
	must(b, err)
	tracker := clienttesting.NewObjectTracker(scheme, serializer.NewCodecFactory(scheme).UniversalDecoder())
	kube := fakeclient.NewClientBuilder().WithScheme(scheme).WithObjectTracker(tracker).
		WithStatusSubresource(&infrav1.OpenStackCluster{}, &infrav1.OpenStackMachine{}, &clusterv1.Cluster{}).Build()
	memory := loadbalancer.NewMemory()
	memory.ErrorInterval = 0
	cr := &controllers.OpenStackClusterReconciler{Client: kube, Recorder: &events.FakeRecorder{}, ScopeFactory: cloud.Factory(), LoadBalancerMemory: memory}
	mr := &controllers.OpenStackMachineReconciler{Client: kube, Recorder: &events.FakeRecorder{}, ScopeFactory: cloud.Factory()}

	due := map[scaleKey]time.Time{}
	machinesOf := map[string][]scaleKey{}
	for i := range n {
		ns := fmt.Sprintf("c%03d", i)
		must(b, kube.Create(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: ns, UID: types.UID("cluster-" + ns)},
			Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackCluster", Name: "c"}}}))
		spec := infrav1.OpenStackClusterSpec{
			IdentityRef:           &infrav1.OpenStackIdentityReference{Name: "cloud-config", CloudName: "openstack"},
			ManagedSubnets:        []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24"}},
			ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{},
			ControlPlaneEndpoint:  &clusterv1.APIEndpoint{Host: "api." + ns + ".example.com", Port: 6443},
			APIServerLoadBalancer: &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true), Network: &infrav1.NetworkParam{ID: ptr.To(lbNet)},
				AvailabilityZoneSubnets: mappings},
		}
		must(b, kube.Create(ctx, &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: ns,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "c", UID: types.UID("cluster-" + ns)}}}, Spec: spec}))
		due[scaleKey{key: types.NamespacedName{Namespace: ns, Name: "c"}}] = clk.Now()
		for j, az := range azs {
			name := fmt.Sprintf("cp%d", j)
			must(b, kube.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-bootstrap", Namespace: ns}, Data: map[string][]byte{"value": []byte("#cloud-config")}}))
			labels := map[string]string{clusterv1.ClusterNameLabel: "c", clusterv1.MachineControlPlaneLabel: ""}
			machine := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, UID: types.UID(ns + name)}, Spec: clusterv1.MachineSpec{
				ClusterName: "c", Bootstrap: clusterv1.Bootstrap{DataSecretName: ptr.To(name + "-bootstrap")}, FailureDomain: az,
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackMachine", Name: name},
			}}
			must(b, kube.Create(ctx, machine))
			must(b, kube.Create(ctx, &infrav1.OpenStackMachine{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: "c"},
					OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: machine.UID}}},
				Spec: infrav1.OpenStackMachineSpec{Flavor: ptr.To("m1.small"), Image: infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("ubuntu")}}},
			}))
			k := scaleKey{key: types.NamespacedName{Namespace: ns, Name: name}, machine: true}
			machinesOf[ns] = append(machinesOf[ns], k)
			due[k] = clk.Now()
		}
	}

	var out scaleRun
	var took []time.Duration
	var rss int64
	sample := func() {
		if v := peakRSS(); v > rss {
			rss = v
		}
	}
	// step runs the earliest due reconcile, moving the clock by its wall time, or jumps to the
	// next requeue. It reports false when nothing is queued.
	step := func() bool {
		now := clk.Now()
		var next scaleKey
		var at time.Time
		ready := 0
		for k, t := range due {
			if !t.After(now) {
				ready++
			}
			if at.IsZero() || t.Before(at) || (t.Equal(at) && (k.key.String() < next.key.String())) {
				next, at = k, t
			}
		}
		if at.IsZero() {
			return false
		}
		out.maxQueue = max(out.maxQueue, ready)
		if at.After(now) {
			clk.Advance(at.Sub(now))
		}
		delete(due, next)
		var obj client.Object = &infrav1.OpenStackCluster{}
		if next.machine {
			obj = &infrav1.OpenStackMachine{}
		}
		before := ""
		if err := kube.Get(ctx, next.key, obj); err == nil {
			before = obj.GetResourceVersion()
		}
		start := time.Now()
		var res ctrl.Result
		if next.machine {
			res, err = mr.Reconcile(ctx, ctrl.Request{NamespacedName: next.key})
		} else {
			res, err = cr.Reconcile(ctx, ctrl.Request{NamespacedName: next.key})
		}
		d := time.Since(start)
		took = append(took, d)
		out.reconciles++
		clk.Advance(d)
		if out.reconciles%500 == 0 {
			sample()
		}
		requeue := res.RequeueAfter
		if err != nil {
			requeue = time.Second
		}
		if requeue > 0 {
			due[next] = clk.Now().Add(requeue)
		}
		if err := kube.Get(ctx, next.key, obj); err == nil && obj.GetResourceVersion() != before {
			// The watches: the object itself, and for a cluster its machines.
			due[next] = clk.Now()
			if !next.machine {
				markProvisioned(ctx, b, kube, next.key.Namespace)
				for _, m := range machinesOf[next.key.Namespace] {
					due[m] = clk.Now()
				}
			}
		}
		return true
	}

	start := clk.Now()
	for !allReady(ctx, kube, n, machinesOf) {
		for range 200 {
			if !step() {
				if why := notReady(ctx, kube, n, machinesOf); why != "" {
					b.Fatalf("nothing queued and not converged: %s", why)
				}
				break
			}
		}
		if clk.Now().Sub(start) > 2*time.Hour {
			b.Fatalf("not converged after 2 simulated hours")
		}
	}
	out.converge = clk.Now().Sub(start)
	slices.Sort(took)
	out.p50, out.p99 = took[len(took)/2], took[len(took)*99/100]

	// Steady state: thirty simulated minutes of what the controllers requeue on their own, plus
	// the manager's resync (--sync-period, 10 minutes by default), which reconciles everything.
	cloud.ResetCalls()
	steadyStart := clk.Now()
	for r := 1; r <= 3; r++ {
		resync := steadyStart.Add(time.Duration(r) * resyncPeriod)
		for earliest(due).Before(resync) && step() {
		}
		if clk.Now().Before(resync) {
			clk.Advance(resync.Sub(clk.Now()))
		}
		for _, k := range allKeys(machinesOf) {
			due[k] = clk.Now()
		}
	}
	for earliest(due).Equal(clk.Now()) && step() {
	}
	out.steadyCallsPerMinute = float64(cloud.TotalCalls()) / clk.Now().Sub(steadyStart).Minutes() / float64(n)
	sample()
	out.peakRSS = rss

	// Delete everything: the machines first, as Cluster API does, then the clusters.
	delStart := clk.Now()
	for ns, ms := range machinesOf {
		for _, m := range ms {
			osm := &infrav1.OpenStackMachine{}
			must(b, kube.Get(ctx, m.key, osm))
			must(b, kube.Delete(ctx, osm))
			due[m] = clk.Now()
		}
		osc := &infrav1.OpenStackCluster{}
		must(b, kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: "c"}, osc))
		must(b, kube.Delete(ctx, osc))
		due[scaleKey{key: types.NamespacedName{Namespace: ns, Name: "c"}}] = clk.Now()
	}
	for step() {
		if clk.Now().Sub(delStart) > 2*time.Hour {
			b.Fatalf("not deleted after 2 simulated hours")
		}
	}
	out.deletion = clk.Now().Sub(delStart)
	if lbs := len(inventoryOf(cloud, "LoadBalancer")); lbs != 0 {
		b.Fatalf("%d load balancers left after deletion", lbs)
	}
	if servers := len(inventoryOf(cloud, "Server")); servers != 0 {
		b.Fatalf("%d servers left after deletion", servers)
	}
	return out
}

// resyncPeriod is the manager's default --sync-period.
const resyncPeriod = 10 * time.Minute

// earliest is when the next reconcile is due; far in the future when none is.
func earliest(due map[scaleKey]time.Time) time.Time {
	at := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, t := range due {
		if t.Before(at) {
			at = t
		}
	}
	return at
}

func allKeys(machinesOf map[string][]scaleKey) []scaleKey {
	var out []scaleKey
	for ns, ms := range machinesOf {
		out = append(out, scaleKey{key: types.NamespacedName{Namespace: ns, Name: "c"}})
		out = append(out, ms...)
	}
	return out
}

// markProvisioned does what Cluster API's Cluster controller does once the OpenStackCluster is
// provisioned.
func markProvisioned(ctx context.Context, b *testing.B, kube client.Client, ns string) {
	osc := &infrav1.OpenStackCluster{}
	if err := kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: "c"}, osc); err != nil || osc.Status.Initialization == nil || !ptr.Deref(osc.Status.Initialization.Provisioned, false) {
		return
	}
	cluster := &clusterv1.Cluster{}
	must(b, kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: "c"}, cluster))
	if ptr.Deref(cluster.Status.Initialization.InfrastructureProvisioned, false) {
		return
	}
	cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	must(b, kube.Status().Update(ctx, cluster))
}

func allReady(ctx context.Context, kube client.Client, n int, machinesOf map[string][]scaleKey) bool {
	return notReady(ctx, kube, n, machinesOf) == ""
}

// notReady names the first object that is not Ready, with its Ready condition.
func notReady(ctx context.Context, kube client.Client, n int, machinesOf map[string][]scaleKey) string {
	for i := range n {
		ns := fmt.Sprintf("c%03d", i)
		osc := &infrav1.OpenStackCluster{}
		if kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: "c"}, osc) != nil || !conditions.IsTrue(osc, infrav1.ReadyCondition) {
			return fmt.Sprintf("OpenStackCluster %s: %v", ns, conditions.Get(osc, infrav1.ReadyCondition))
		}
		for _, m := range machinesOf[ns] {
			osm := &infrav1.OpenStackMachine{}
			if kube.Get(ctx, m.key, osm) != nil || !conditions.IsTrue(osm, infrav1.ReadyCondition) {
				return fmt.Sprintf("OpenStackMachine %s: %v", m.key, conditions.Get(osm, infrav1.ReadyCondition))
			}
		}
	}
	return ""
}

func inventoryOf(cloud *fakeopenstack.Cloud, kind string) []fakeopenstack.Resource {
	var out []fakeopenstack.Resource
	for _, r := range cloud.Inventory() {
		if r.Kind == kind {
			out = append(out, r)
		}
	}
	return out
}

// peakRSS is the process's peak resident set (VmHWM) in bytes, or the Go runtime's view of the
// memory it holds where /proc is not there.
func peakRSS() int64 {
	if data, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				if err == nil {
					return kb << 10
				}
			}
		}
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.Sys)
}
