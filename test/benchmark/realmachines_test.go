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
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
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
	managerscheme "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scheme"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/framework"
)

// BenchmarkRealCloudMachines drives the cluster and machine reconcilers together against a real
// OpenStack, as a manager would: a cluster with a load balancer per zone (the first two zones of
// CAPO_BENCH_ZONES) and a control plane machine per zone, applied at once. It reports seconds
// from apply to the cluster ready (cluster-ready-s) and to every control plane machine ready
// and a member of its zone's load balancer (machines-ready-s), OpenStack calls per converged
// machine reconcile, seconds for cross-AZ members to be added everywhere (cross-az-s), seconds
// to delete one machine (machine-delete-s) and the rest (delete-s). It checks the membership in
// Octavia at each step and fails when anything is left behind. Same variables as
// BenchmarkRealCloud; CAPO_BENCH_FLAVOR and CAPO_BENCH_IMAGE name the flavor and image
// (default m1.tiny and fake-image, as the local OpenStack has them).
func BenchmarkRealCloudMachines(b *testing.B) {
	cloudsYAML, cloudName, zones := realCloud(b)
	if len(zones) < 2 {
		b.Skip("CAPO_BENCH_ZONES lists fewer than two zones")
	}
	var last machinesRun
	for b.Loop() {
		last = driveMachines(b, cloudsYAML, cloudName, zones[:2])
	}
	b.ReportMetric(last.clusterReady.Seconds(), "cluster-ready-s")
	b.ReportMetric(last.machinesReady.Seconds(), "machines-ready-s")
	b.ReportMetric(float64(last.steadyCalls), "calls/steady-machine-reconcile")
	b.ReportMetric(last.crossAZ.Seconds(), "cross-az-s")
	b.ReportMetric(last.machineDelete.Seconds(), "machine-delete-s")
	b.ReportMetric(last.deletion.Seconds(), "delete-s")
}

type machinesRun struct {
	clusterReady, machinesReady, crossAZ, machineDelete, deletion time.Duration
	steadyCalls                                                   int
}

// queued is one object as a manager's work queue holds it.
type queued struct {
	key  client.ObjectKey
	obj  client.Object
	r    reconcile.Reconciler
	due  time.Time
	idle bool
	gone bool
}

func driveMachines(b *testing.B, cloudsYAML []byte, cloudName string, zones []string) machinesRun {
	ctx := ctrl.LoggerInto(context.Background(), logr.Discard())
	scheme, err := managerscheme.New()
	must(b, err)
	ns := benchNamespace
	name := fmt.Sprintf("m%d", time.Now().UnixNano()%1_000_000)
	secret, ref, cl := benchIdentity(ctx, b, scheme, cloudsYAML, cloudName)
	var cleanup []func()
	defer func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			cleanup[i]()
		}
	}()
	lbNet, mapping := operatorLBNetwork(ctx, b, cl, name, zones, &cleanup)
	spec := infrav1.OpenStackClusterSpec{
		IdentityRef:           ref,
		ManagedSubnets:        []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24"}},
		ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{},
		ControlPlaneEndpoint:  &clusterv1.APIEndpoint{Host: "api.bench.example.com", Port: 6443},
		APIServerLoadBalancer: &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true), AdditionalPorts: []int{8132},
			Network: &infrav1.NetworkParam{ID: ptr.To(lbNet)}, AvailabilityZoneSubnets: mapping},
		ControlPlaneAvailabilityZones: zones,
	}

	// What clusterctl and Cluster API would have created: the Cluster, the OpenStackCluster, a
	// control plane Machine per zone with its bootstrap data and its OpenStackMachine.
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: "cluster-uid"},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackCluster", Name: name}}}
	osc := &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: name, UID: "cluster-uid"}}}, Spec: spec}
	objects := []client.Object{cluster, osc, secret.DeepCopy()}
	var machineKeys []client.ObjectKey
	for _, az := range zones {
		m := name + "-cp-" + az
		labels := map[string]string{clusterv1.ClusterNameLabel: name, clusterv1.MachineControlPlaneLabel: ""}
		objects = append(objects,
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: m + "-bootstrap", Namespace: ns}, Data: map[string][]byte{"value": []byte("#cloud-config\n")}},
			&clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: m, Namespace: ns, Labels: labels, UID: k8stypes.UID("uid-" + m)}, Spec: clusterv1.MachineSpec{
				ClusterName: name, FailureDomain: az, Bootstrap: clusterv1.Bootstrap{DataSecretName: ptr.To(m + "-bootstrap")},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackMachine", Name: m}}},
			&infrav1.OpenStackMachine{ObjectMeta: metav1.ObjectMeta{Name: m, Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: name},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: m, UID: k8stypes.UID("uid-" + m)}}},
				Spec: infrav1.OpenStackMachineSpec{Flavor: ptr.To(framework.EnvOr("CAPO_BENCH_FLAVOR", "m1.tiny")),
					Image: infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To(framework.EnvOr("CAPO_BENCH_IMAGE", "fake-image"))}}}},
		)
		machineKeys = append(machineKeys, client.ObjectKey{Namespace: ns, Name: m})
	}
	kube := fakeclient.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).
		WithStatusSubresource(&infrav1.OpenStackCluster{}, &infrav1.OpenStackMachine{}, &clusterv1.Cluster{}).Build()
	sf := &scope.SecretFactory{Reader: kube, Log: logr.Discard()}
	clusterR := &controllers.OpenStackClusterReconciler{Client: kube, Recorder: &events.FakeRecorder{}, ScopeFactory: sf}
	machineR := &controllers.OpenStackMachineReconciler{Client: kube, APIReader: kube, Recorder: &events.FakeRecorder{}, ScopeFactory: sf}
	oscKey := client.ObjectKeyFromObject(osc)
	queue := []*queued{{key: oscKey, obj: &infrav1.OpenStackCluster{}, r: clusterR}}
	for _, k := range machineKeys {
		queue = append(queue, &queued{key: k, obj: &infrav1.OpenStackMachine{}, r: machineR})
	}
	wake := func() {
		for _, q := range queue {
			if !q.gone {
				q.idle, q.due = false, time.Now()
			}
		}
	}
	// run works the queue until done says so: a reconcile that changed its object comes back at
	// once (its watch event), else after its requeue; a change of the OpenStackCluster wakes the
	// machines (their watch), and its provisioning is copied to the Cluster as Cluster API does.
	verbose, begin := os.Getenv("CAPO_BENCH_VERBOSE") != "", time.Now()
	run := func(what string, done func() bool) time.Duration {
		start := time.Now()
		for !done() {
			if time.Since(start) > 4*time.Minute {
				b.Fatalf("%s: not done after 4 minutes; cluster: %v; machines: %v", what, conditionsOf(ctx, kube, oscKey, &infrav1.OpenStackCluster{}),
					pluckKeys(ctx, kube, machineKeys))
			}
			var next *queued
			for _, q := range queue {
				if !q.idle && !q.gone && (next == nil || q.due.Before(next.due)) {
					next = q
				}
			}
			if next == nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			time.Sleep(time.Until(next.due))
			p := reconcileOnce(ctx, kube, next.r, next.key, next.obj)
			if verbose {
				fmt.Fprintf(os.Stderr, "%s at %s: %s, requeue %s, changed %v, err %v; %v\n", next.key.Name, time.Since(begin).Round(100*time.Millisecond),
					p.took.Round(time.Millisecond), p.res.RequeueAfter, p.changed, p.err, conditionsOf(ctx, kube, next.key, next.obj.DeepCopyObject().(withConditions)))
			}
			switch {
			case p.gone || !p.ran:
				next.gone = true
			case p.err != nil:
				next.due = time.Now().Add(200 * time.Millisecond)
			case p.changed:
				next.due = time.Now()
			case p.res.RequeueAfter > 0:
				next.due = time.Now().Add(p.res.RequeueAfter)
			default:
				next.idle = true
			}
			if next.key == oscKey && p.changed {
				wake()
				if provisioned(ctx, kube, oscKey) {
					cur := &clusterv1.Cluster{}
					must(b, kube.Get(ctx, client.ObjectKeyFromObject(cluster), cur))
					if !ptr.Deref(cur.Status.Initialization.InfrastructureProvisioned, false) {
						cur.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
						must(b, kube.Status().Update(ctx, cur))
					}
				}
			}
		}
		return time.Since(start)
	}

	var out machinesRun
	lbs := func() []infrav1.LoadBalancer {
		cur := &infrav1.OpenStackCluster{}
		must(b, kube.Get(ctx, oscKey, cur))
		return cur.Status.APIServerLoadBalancers
	}
	// members is, per zone, the machines in every pool of that zone's load balancer, read from
	// Octavia; it fails when the two pools disagree.
	members := func() map[string][]string {
		outm := map[string][]string{}
		for _, lb := range lbs() {
			tree, err := cl.LoadBalancer.GetLoadBalancerStatuses(ctx, lb.ID)
			must(b, err)
			var perPool [][]string
			for _, l := range tree.Loadbalancer.Listeners {
				for _, p := range l.Pools {
					var names []string
					for _, m := range p.Members {
						names = append(names, m.Name)
					}
					slices.Sort(names)
					perPool = append(perPool, names)
				}
			}
			if len(perPool) != 2 || !reflect.DeepEqual(perPool[0], perPool[1]) {
				b.Fatalf("load balancer %s: pools with different members: %v", lb.Name, perPool)
			}
			outm[lb.AvailabilityZone] = perPool[0]
		}
		return outm
	}
	machinesReady := func() bool {
		for _, k := range machineKeys {
			m := &infrav1.OpenStackMachine{}
			if kube.Get(ctx, k, m) != nil || !conditions.IsTrue(m, infrav1.ReadyCondition) {
				return false
			}
		}
		return true
	}

	start := time.Now()
	out.clusterReady = run("cluster", func() bool { return converged(ctx, kube, oscKey, len(zones)) })
	run("machines", machinesReady)
	out.machinesReady = time.Since(start)
	want := map[string][]string{}
	for i, az := range zones {
		want[az] = []string{machineKeys[i].Name}
	}
	if got := members(); !reflect.DeepEqual(got, want) {
		b.Fatalf("same-zone membership: got %v, want %v", got, want)
	}
	for i, k := range machineKeys {
		m := &infrav1.OpenStackMachine{}
		must(b, kube.Get(ctx, k, m))
		server, err := cl.Compute.GetServer(ctx, *m.Status.InstanceID)
		must(b, err)
		if server.AvailabilityZone != zones[i] {
			b.Fatalf("%s: server in %s, want %s", k.Name, server.AvailabilityZone, zones[i])
		}
	}

	// A converged machine reconcile: the server, and the status tree of each load balancer.
	before := totalCalls(b)
	p := reconcileOnce(ctx, kube, machineR, machineKeys[0], &infrav1.OpenStackMachine{})
	must(b, p.err)
	out.steadyCalls = totalCalls(b) - before

	// Cross-AZ members on: every machine in every zone's load balancer.
	cur := &infrav1.OpenStackCluster{}
	must(b, kube.Get(ctx, oscKey, cur))
	cur.Spec.APIServerLoadBalancer.AllowCrossAZLoadBalancerMembers = ptr.To(true)
	must(b, kube.Update(ctx, cur))
	wake()
	all := pluck(machineKeys, func(k client.ObjectKey) string { return k.Name })
	everywhere := map[string][]string{}
	for _, az := range zones {
		everywhere[az] = all
	}
	out.crossAZ = run("cross-AZ members", func() bool { return machinesReady() && reflect.DeepEqual(members(), everywhere) })

	// One machine deleted: no member of it left anywhere, its server gone.
	m := &infrav1.OpenStackMachine{}
	must(b, kube.Get(ctx, machineKeys[1], m))
	serverID := *m.Status.InstanceID
	must(b, kube.Delete(ctx, m))
	wake()
	out.machineDelete = run("machine delete", func() bool { return kube.Get(ctx, machineKeys[1], m) != nil })
	for az, names := range members() {
		if slices.Contains(names, machineKeys[1].Name) {
			b.Fatalf("a deleted machine is still a member of the load balancer of %s", az)
		}
	}
	if _, err := cl.Compute.GetServer(ctx, serverID); err == nil {
		b.Fatal("the deleted machine's server is still there")
	}

	// The rest, machine first as Cluster API orders it, then the cluster.
	must(b, kube.Get(ctx, machineKeys[0], m))
	must(b, kube.Delete(ctx, m))
	wake()
	start = time.Now()
	run("last machine delete", func() bool { return kube.Get(ctx, machineKeys[0], m) != nil })
	must(b, kube.Get(ctx, oscKey, cur))
	must(b, kube.Delete(ctx, cur))
	wake()
	run("cluster delete", func() bool { return kube.Get(ctx, oscKey, cur) != nil })
	out.deletion = time.Since(start)

	left := leftOf(ctx, b, cl, ns, name)
	list, err := cl.Compute.ListServers(ctx, servers.ListOpts{Name: "^" + name + "-"})
	must(b, err)
	for _, s := range list {
		left = append(left, "server "+s.Name)
	}
	if len(left) > 0 {
		b.Fatalf("left behind: %s", strings.Join(left, ", "))
	}
	return out
}

// withConditions is an object of ours with metav1 conditions.
type withConditions interface {
	client.Object
	GetConditions() []metav1.Condition
}

func conditionsOf(ctx context.Context, kube client.Client, key client.ObjectKey, obj withConditions) []string {
	if kube.Get(ctx, key, obj) != nil {
		return nil
	}
	var out []string
	for _, c := range obj.GetConditions() {
		out = append(out, fmt.Sprintf("%s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message))
	}
	return out
}

func pluckKeys(ctx context.Context, kube client.Client, keys []client.ObjectKey) map[string][]string {
	out := map[string][]string{}
	for _, k := range keys {
		out[k.Name] = conditionsOf(ctx, kube, k, &infrav1.OpenStackMachine{})
	}
	return out
}
