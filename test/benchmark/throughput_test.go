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
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/controllers"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	managerscheme "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scheme"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
)

// BenchmarkRealCloudThroughput applies CAPO_BENCH_CLUSTERS (default 10) two-zone clusters at
// once to one reconciler, with one worker per cluster (a manager with
// --openstackcluster-concurrency at least that many), and has the ideal client (ideal_test.go)
// create the same clusters at once, with both strategies, in the same run: the time until every
// cluster is ready, then until every one is deleted, with the ratio of the controller to the
// faster ideal strategy. Same variables as BenchmarkRealCloud; it needs two zones. Outside CI.
func BenchmarkRealCloudThroughput(b *testing.B) {
	cloudsYAML, cloudName, zones := realCloud(b)
	if len(zones) < 2 {
		b.Skip("the throughput benchmark needs two zones")
	}
	zones = zones[:2]
	n := 10
	if v, err := strconv.Atoi(os.Getenv("CAPO_BENCH_CLUSTERS")); err == nil && v > 0 {
		n = v
	}
	ctx := ctrl.LoggerInto(context.Background(), logr.Discard())
	scheme, err := managerscheme.New()
	must(b, err)
	secret, ref, cl := benchIdentity(ctx, b, scheme, cloudsYAML, cloudName)
	// The ideal clients do not retry, so they wait for as long as the cloud takes to answer: on a
	// small cloud many creates at once keep Octavia's API busy past the manager's 60 s, after
	// which the controller retries and finds by name what the timed-out request made.
	_, _, patient := benchIdentityWaiting(ctx, b, scheme, cloudsYAML, cloudName, idealRequestTimeout)
	var cleanup []func()
	defer func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			cleanup[i]()
		}
	}()
	lbNet, mapping := operatorLBNetwork(ctx, b, cl, "throughput", zones, &cleanup)
	vipSubnets := []string{*mapping[0].Subnet.ID, *mapping[1].Subnet.ID}

	t := newRatioTable()
	for b.Loop() {
		for _, strategy := range strategies() {
			ready, deleted, err := idealAtOnce(ctx, patient, strategy, n, zones, vipSubnets)
			must(b, err)
			lim := "limit:" + string(strategy)
			t.add(fmt.Sprintf("%d clusters of 2 zones ready", n), lim, ready)
			t.add(fmt.Sprintf("%d clusters deleted", n), lim, deleted)
		}
		ready, deleted, err := oursAtOnce(ctx, b, scheme, secret, ref, cl, n, lbNet, mapping)
		must(b, err)
		t.add(fmt.Sprintf("%d clusters of 2 zones ready", n), "ours", ready)
		t.add(fmt.Sprintf("%d clusters deleted", n), "ours", deleted)
	}
	fmt.Printf("one reconciler, %d workers (one per cluster); Octavia, Neutron and Nova of the same cloud\n", n)
	fmt.Print(t.String(1))
	for _, row := range t.rows {
		b.ReportMetric(t.ratio(row), "ratio-"+strings.NewReplacer(" ", "-").Replace(row))
	}
}

// idealRequestTimeout is how long an ideal client's request waits for its answer.
const idealRequestTimeout = 5 * time.Minute

// throughputWait bounds each side's wait for its clusters to be ready, or deleted: one Octavia
// worker builds twenty load balancers one after the other.
const throughputWait = 15 * time.Minute

// idealAtOnce has n ideal clients, one per cluster, create n two-zone clusters at once, then
// delete them at once.
func idealAtOnce(ctx context.Context, cl *scope.Clients, strategy idealStrategy, n int, zones, vipSubnets []string) (ready, deleted time.Duration, err error) {
	xs, made := make([]*ideal, n), make([]*idealCluster, n)
	for i := range xs {
		if xs[i], err = newIdeal(ctx, cl, strategy); err != nil {
			return 0, 0, err
		}
		xs[i].wait = throughputWait
	}
	start := time.Now()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			made[i], errs[i] = xs[i].create(ctx, fmt.Sprintf("bench-tp-%s-%d", strategy, i), zones, vipSubnets)
		})
	}
	wg.Wait()
	ready = time.Since(start)
	unavailable := 0
	for _, x := range xs {
		unavailable += int(x.unavailable.Load())
	}
	fmt.Printf("limit:%s: Octavia answered 503 to %d creates (tried again)\n", strategy, unavailable)
	start = time.Now()
	for i := range n {
		if made[i] != nil {
			wg.Go(func() {
				del := xs[i].delete(ctx, made[i], false)
				// A create that failed leaves load balancers Octavia is still building (409
				// until they settle): the cleanup comes back for them.
				for deadline := time.Now().Add(5 * time.Minute); errs[i] != nil && del != nil && time.Now().Before(deadline); {
					time.Sleep(5 * time.Second)
					del = xs[i].delete(ctx, made[i], false)
				}
				errs[i] = errors.Join(errs[i], del)
			})
		}
	}
	wg.Wait()
	return ready, time.Since(start), errors.Join(errs...)
}

// oursAtOnce creates n two-zone OpenStackClusters at once and reconciles each in a worker of its
// own, as controller-runtime would (at once after a change, else after the requeue asked for),
// until all are ready; then deletes them all and reconciles until all are gone. Nothing of any
// cluster may be left.
func oursAtOnce(ctx context.Context, b *testing.B, scheme *runtime.Scheme, secret client.Object, ref *infrav1.OpenStackIdentityReference, cl *scope.Clients, n int, lbNet string, mapping []infrav1.AZSubnetMapping) (ready, deleted time.Duration, err error) {
	objs := []client.Object{secret.DeepCopyObject().(client.Object)}
	keys := make([]client.ObjectKey, n)
	base := fmt.Sprintf("t%d", time.Now().UnixNano()%100_000)
	var oscs []client.Object
	for i := range n {
		name := fmt.Sprintf("%s-%d", base, i)
		uid := "cluster-uid-" + name
		spec := infrav1.OpenStackClusterSpec{
			IdentityRef:           ref,
			ManagedSubnets:        []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24"}},
			ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{},
			ControlPlaneEndpoint:  &clusterv1.APIEndpoint{Host: name + ".bench.example.com", Port: 6443},
			APIServerLoadBalancer: &infrav1.APIServerLoadBalancer{Enabled: ptr.To(true), AdditionalPorts: []int{8132},
				Network: &infrav1.NetworkParam{ID: ptr.To(lbNet)}, AvailabilityZoneSubnets: mapping},
		}
		cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: benchNamespace, UID: types.UID(uid)}}
		osc := &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: benchNamespace,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: name, UID: types.UID(uid)}}}, Spec: spec}
		objs = append(objs, cluster, osc)
		oscs = append(oscs, osc)
		keys[i] = client.ObjectKeyFromObject(osc)
	}
	kube := fakeclient.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(oscs...).Build()
	r := &controllers.OpenStackClusterReconciler{Client: kube, Recorder: &events.FakeRecorder{},
		ScopeFactory: &scope.SecretFactory{Reader: kube, Log: logr.Discard()}, LoadBalancerMemory: loadbalancer.NewMemory()}

	// work reconciles key until done says so, as one controller-runtime worker would.
	work := func(key client.ObjectKey, done func() bool) error {
		deadline := time.Now().Add(throughputWait)
		for !done() {
			if time.Now().After(deadline) {
				cur := &infrav1.OpenStackCluster{}
				_ = kube.Get(ctx, key, cur)
				return fmt.Errorf("%s: not done after %s: %+v", key.Name, throughputWait, cur.Status.Conditions)
			}
			p := reconcileOnce(ctx, kube, r, key, &infrav1.OpenStackCluster{})
			switch {
			case p.gone:
			case p.err != nil:
				time.Sleep(100 * time.Millisecond)
			case !p.changed:
				time.Sleep(p.res.RequeueAfter)
			}
		}
		return nil
	}
	all := func(f func(key client.ObjectKey) error) (time.Duration, error) {
		start := time.Now()
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { errs[i] = f(keys[i]) })
		}
		wg.Wait()
		return time.Since(start), errors.Join(errs...)
	}
	ready, err = all(func(key client.ObjectKey) error {
		return work(key, func() bool { return converged(ctx, kube, key, 2) })
	})
	if err != nil {
		return ready, 0, err
	}
	deleted, err = all(func(key client.ObjectKey) error {
		cur := &infrav1.OpenStackCluster{}
		if err := kube.Get(ctx, key, cur); err != nil {
			return err
		}
		if err := kube.Delete(ctx, cur); err != nil {
			return err
		}
		return work(key, func() bool { return kube.Get(ctx, key, &infrav1.OpenStackCluster{}) != nil })
	})
	if err != nil {
		return ready, deleted, err
	}
	var left []string
	for _, key := range keys {
		left = append(left, leftOf(ctx, b, cl, key.Namespace, key.Name)...)
	}
	if len(left) > 0 {
		return ready, deleted, fmt.Errorf("left behind: %s", strings.Join(left, ", "))
	}
	return ready, deleted, nil
}

// strategies are the ideal client's strategies the throughput benchmark runs:
// CAPO_BENCH_STRATEGIES (comma-separated), by default both; "none" runs no ideal client.
func strategies() []idealStrategy {
	v := os.Getenv("CAPO_BENCH_STRATEGIES")
	if v == "" {
		return []idealStrategy{populated, stepwise}
	}
	var out []idealStrategy
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "none" {
			out = append(out, idealStrategy(s))
		}
	}
	return out
}
