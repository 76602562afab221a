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

package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clienttesting "k8s.io/client-go/testing"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/controllers"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	managerscheme "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scheme"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

// The world of one seed: a fake OpenStack, an API server (controller-runtime's fake client), a
// manager made of the two reconcilers, and a work queue on simulated time. A manager restart
// throws the reconcilers away with everything they remember; a kill also loses every OpenStack
// call and API write from a chosen call of a reconcile on.

const (
	namespace = "chaos"
	// blockLimit is the longest a reconcile may take on the wall clock: the fake answers in
	// microseconds, so a reconcile that sleeps or waits for OpenStack shows here. A busy machine
	// (CI runs every package at once on two cores) may stall one reconcile of a seed past it;
	// a reconcile that waits does so every time: a seed fails on its second reconcile past the
	// limit, or on one past blockLimit*5.
	blockLimit = 2 * time.Second
	// The work queue's per-object backoff after an error, as controller-runtime's default rate
	// limiter has it: 5 ms doubling up to 1000 s.
	backoffBase = 5 * time.Millisecond
	backoffCap  = 1000 * time.Second
)

// target is one object the queue holds: the OpenStackCluster (machine "") or a machine.
type target struct{ machine string }

func (t target) String() string {
	if t.machine == "" {
		return "OpenStackCluster"
	}
	return "OpenStackMachine " + t.machine
}

// manager is what a restart throws away.
type manager struct {
	cluster *controllers.OpenStackClusterReconciler
	machine *controllers.OpenStackMachineReconciler
	// background is the load balancer service's background work in flight.
	background *sync.WaitGroup
}

// counts are what a seed did, summed over seeds for the closing log line.
type counts struct {
	reconciles, restarts, kills, wipes, faults, faultsFired, checks, remediations int
}

func (c *counts) add(o counts) {
	c.reconciles += o.reconciles
	c.restarts += o.restarts
	c.kills += o.kills
	c.wipes += o.wipes
	c.faults += o.faults
	c.faultsFired += o.faultsFired
	c.checks += o.checks
	c.remediations += o.remediations
}

type world struct {
	t       testing.TB
	seed    int64
	verbose bool
	rng     *rand.Rand
	clk     *fakeopenstack.Clock
	cloud   *fakeopenstack.Cloud
	kube    client.Client
	dead    *deadSwitch
	mgr     *manager
	logs    *lockedBuffer
	events  *recorder

	due   map[target]time.Time
	fails map[target]int
	trace []string
	n     counts
	// slow counts the reconciles past blockLimit (see there).
	slow int

	sc       scenario
	lbNet    string
	subnets  map[string]string
	machines map[string]*machineState
	serial   int
	faults   []*fakeopenstack.Fault
	baseline []fakeopenstack.Resource
	secrets  []string
}

type machineState struct {
	zone     string
	deleting bool
}

func newWorld(t testing.TB, seed int64, verbose bool) *world {
	w := &world{t: t, seed: seed, verbose: verbose, rng: rand.New(rand.NewSource(seed)), //nolint:gosec // seeded on purpose: a seed replays
		clk: fakeopenstack.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), logs: &lockedBuffer{}, events: &recorder{},
		due: map[target]time.Time{}, fails: map[target]int{}, subnets: map[string]string{}, machines: map[string]*machineState{},
		dead: &deadSwitch{}}
	w.cloud = fakeopenstack.New(fakeopenstack.Options{
		PendingDuration:  time.Duration(1+w.rng.Intn(8)) * time.Second,
		ServerBuildReads: w.rng.Intn(3),
		Seed:             seed,
		Now:              w.clk.Now,
	})
	scheme, err := managerscheme.New()
	w.must(err)
	// A plain object tracker: the default one keeps managed fields, which costs most of the run
	// and which nothing here reads.
	tracker := clienttesting.NewObjectTracker(scheme, serializer.NewCodecFactory(scheme).UniversalDecoder())
	raw := fakeclient.NewClientBuilder().WithScheme(scheme).WithObjectTracker(tracker).
		WithStatusSubresource(&infrav1.OpenStackCluster{}, &infrav1.OpenStackMachine{}, &clusterv1.Cluster{}, &clusterv1.Machine{}).Build()
	w.kube = raw
	return w
}

func (w *world) must(err error) {
	w.t.Helper()
	if err != nil {
		w.fail("%v", err)
	}
}

// fail stops the seed, printing the seed, how to replay it and the last steps.
func (w *world) fail(format string, args ...any) {
	w.t.Helper()
	last := w.trace
	if len(last) > 80 {
		last = last[len(last)-80:]
	}
	w.t.Fatalf("seed %d: %s\n(replay every step: go test ./test/chaos/ -run TestChaos -v -seed %d)\nlast %d of %d steps:\n%s",
		w.seed, fmt.Sprintf(format, args...), w.seed, len(last), len(w.trace), strings.Join(last, "\n"))
}

// step records what the driver did, at the simulated time.
func (w *world) step(format string, args ...any) {
	line := fmt.Sprintf("%8.3fs %s", w.clk.Now().Sub(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)).Seconds(), fmt.Sprintf(format, args...))
	w.trace = append(w.trace, line)
	if w.verbose {
		w.t.Log(line)
	}
}

// start starts a manager: new reconcilers that remember nothing, as after a restart; every
// object is reconciled at once, as a manager's first list does.
func (w *world) start() {
	memory := loadbalancer.NewMemory()
	// Observations of a load balancer in ERROR count on the wall clock; the simulated queue
	// already spaces them by the reconciler's requeue.
	memory.ErrorInterval = 0
	// An unanswered create is waited for in simulated time: the status keeps it across restarts.
	memory.Now = w.clk.Now
	// Background work (a floating IP allocated while Octavia builds) is counted, so that a
	// restart waits for it as a dying process's last calls would have been answered.
	background := &sync.WaitGroup{}
	memory.Background = func(work func()) { background.Go(work) }
	kube := &killableClient{Client: w.kube, dead: w.dead}
	w.mgr = &manager{
		background: background,
		cluster: &controllers.OpenStackClusterReconciler{Client: kube, Recorder: w.events, ScopeFactory: w.cloud.Factory(),
			LoadBalancerMemory: memory},
		machine: &controllers.OpenStackMachineReconciler{Client: kube, Recorder: w.events, ScopeFactory: w.cloud.Factory()},
	}
	w.fails = map[target]int{}
	w.enqueueAll()
}

// restart stops the manager after its background work ends (a process that dies takes its
// goroutines with it: the fake has answered them by then) and starts a new one.
func (w *world) restart(why string) {
	w.waitIdle()
	w.n.restarts++
	w.step("manager restarted (%s)", why)
	w.start()
}

func (w *world) waitIdle() {
	idle := make(chan struct{})
	go func() {
		w.mgr.background.Wait()
		close(idle)
	}()
	select {
	case <-idle:
	case <-time.After(5 * time.Second):
		w.fail("a background floating IP allocation did not end within 5 s")
	}
}

func (w *world) enqueueAll() {
	now := w.clk.Now()
	w.due[target{}] = now
	for name := range w.machines {
		w.due[target{machine: name}] = now
	}
}

func (w *world) enqueue(t target, at time.Time) {
	if cur, ok := w.due[t]; !ok || at.Before(cur) {
		w.due[t] = at
	}
}

// tick runs the next reconcile, or moves the clock to the next one due. It reports false when
// nothing is queued at all.
func (w *world) tick() bool {
	now := w.clk.Now()
	var ready []target
	var next time.Time
	for t, at := range w.due {
		if !at.After(now) {
			ready = append(ready, t)
		} else if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	if len(ready) == 0 {
		if next.IsZero() {
			return false
		}
		w.clk.Set(next)
		return true
	}
	slices.SortFunc(ready, func(a, b target) int { return strings.Compare(a.machine, b.machine) })
	pick := ready[w.rng.Intn(len(ready))]
	delete(w.due, pick)
	w.reconcile(pick)
	return true
}

// reconcile runs one reconcile of t as a manager's worker would, then queues what a manager
// would queue after it: everything at once when it changed an object (the watches), t again
// after its RequeueAfter, or after the backoff when it failed.
func (w *world) reconcile(t target) {
	key := client.ObjectKey{Namespace: namespace, Name: "c"}
	var obj client.Object = &infrav1.OpenStackCluster{}
	if t.machine != "" {
		key.Name = t.machine
		obj = &infrav1.OpenStackMachine{}
	}
	if err := w.kube.Get(context.Background(), key, obj); apierrors.IsNotFound(err) {
		return
	}
	before := obj.GetResourceVersion()
	log := funcr.New(func(prefix, args string) { w.logs.write(prefix + " " + args) }, funcr.Options{Verbosity: 10})
	ctx, cancel := context.WithTimeout(ctrl.LoggerInto(context.Background(), log), 30*time.Second)
	defer cancel()
	start := time.Now()
	var res ctrl.Result
	var err error
	if t.machine == "" {
		res, err = w.mgr.cluster.Reconcile(ctx, ctrl.Request{NamespacedName: key})
	} else {
		res, err = w.mgr.machine.Reconcile(ctx, ctrl.Request{NamespacedName: key})
	}
	took := time.Since(start)
	w.waitIdle()
	w.n.reconciles++
	if took > blockLimit {
		w.slow++
		if w.slow > 1 || took > 5*blockLimit {
			w.fail("reconcile of %s blocked for %s (%d reconciles of this seed past %s)", t, took, w.slow, blockLimit)
		}
		w.step("reconcile of %s took %s on the wall clock (the machine busy?): once per seed is let pass", t, took)
	}
	changed := true
	if err := w.kube.Get(context.Background(), key, obj); err == nil {
		changed = obj.GetResourceVersion() != before
	}
	now := w.clk.Now()
	outcome := fmt.Sprintf("requeue %s", res.RequeueAfter)
	switch {
	case err != nil:
		w.fails[t]++
		d := backoffBase << min(w.fails[t]-1, 30)
		d = min(d, backoffCap)
		w.enqueue(t, now.Add(d))
		outcome = fmt.Sprintf("error, backoff %s: %v", d, err)
	case res.RequeueAfter > 0:
		w.fails[t] = 0
		w.enqueue(t, now.Add(res.RequeueAfter))
	default:
		w.fails[t] = 0
	}
	if changed {
		w.enqueueAll()
		outcome += ", changed"
	}
	w.step("reconcile %s: %s", t, outcome)
	w.checkInvariants()
	if changed {
		w.clusterAPI()
	}
}

// clusterAPI does what Cluster API's controllers do around ours: mark the Cluster's
// infrastructure provisioned, remove a Machine once its OpenStackMachine is gone, and replace a
// machine whose server Nova put in ERROR (a MachineHealthCheck or KCP remediation).
func (w *world) clusterAPI() {
	ctx := context.Background()
	osc := &infrav1.OpenStackCluster{}
	if err := w.kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "c"}, osc); err == nil &&
		osc.Status.Initialization != nil && osc.Status.Initialization.Provisioned != nil && *osc.Status.Initialization.Provisioned {
		cluster := &clusterv1.Cluster{}
		if err := w.kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "c"}, cluster); err == nil &&
			(cluster.Status.Initialization.InfrastructureProvisioned == nil || !*cluster.Status.Initialization.InfrastructureProvisioned) {
			provisioned := true
			cluster.Status.Initialization.InfrastructureProvisioned = &provisioned
			w.must(w.kube.Status().Update(ctx, cluster))
			w.step("Cluster API: infrastructure provisioned")
			w.enqueueAll()
		}
	}
	for _, name := range w.machineNames() {
		m := w.machines[name]
		osm := &infrav1.OpenStackMachine{}
		err := w.kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, osm)
		if apierrors.IsNotFound(err) && m.deleting {
			w.must(client.IgnoreNotFound(w.kube.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}})))
			w.must(client.IgnoreNotFound(w.kube.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name + "-bootstrap"}})))
			delete(w.machines, name)
			delete(w.due, target{machine: name})
			w.step("Cluster API: Machine %s removed", name)
			continue
		}
		w.must(err)
		if !m.deleting && reason(osm.Status.Conditions, infrav1.InstanceReadyCondition) == infrav1.InstanceErrorReason {
			w.n.remediations++
			w.step("Cluster API: machine %s remediated (server in ERROR)", name)
			w.deleteMachine(name)
			w.addMachine(m.zone)
		}
	}
}

func reason(conds []metav1.Condition, t string) string {
	for _, c := range conds {
		if c.Type == t {
			return c.Reason
		}
	}
	return ""
}

func isTrue(conds []metav1.Condition, t string) bool {
	for _, c := range conds {
		if c.Type == t {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

func (w *world) machineNames() []string {
	names := make([]string, 0, len(w.machines))
	for n := range w.machines {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// deadSwitch is on while the manager is being killed: from the chosen call of a reconcile on,
// nothing it does reaches the API server either.
type deadSwitch struct{ fault *fakeopenstack.Fault }

var errKilled = errors.New("chaos: the manager was killed before this write")

func (d *deadSwitch) dead() bool { return d.fault != nil && d.fault.Fired() > 0 }

// killableClient is the manager's client to the API server: its writes fail once the manager
// is dead.
type killableClient struct {
	client.Client
	dead *deadSwitch
}

func (k *killableClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if k.dead.dead() {
		return errKilled
	}
	return k.Client.Create(ctx, obj, opts...)
}

func (k *killableClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if k.dead.dead() {
		return errKilled
	}
	return k.Client.Update(ctx, obj, opts...)
}

func (k *killableClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if k.dead.dead() {
		return errKilled
	}
	return k.Client.Patch(ctx, obj, patch, opts...)
}

func (k *killableClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if k.dead.dead() {
		return errKilled
	}
	return k.Client.Delete(ctx, obj, opts...)
}

func (k *killableClient) Status() client.SubResourceWriter {
	return &killableStatus{SubResourceWriter: k.Client.Status(), dead: k.dead}
}

type killableStatus struct {
	client.SubResourceWriter
	dead *deadSwitch
}

func (k *killableStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if k.dead.dead() {
		return errKilled
	}
	return k.SubResourceWriter.Update(ctx, obj, opts...)
}

func (k *killableStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if k.dead.dead() {
		return errKilled
	}
	return k.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

type lockedBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *lockedBuffer) write(line string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, line)
}

func (b *lockedBuffer) all() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.lines)
}

// recorder keeps every event the reconcilers emit.
type recorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *recorder) Eventf(_ runtime.Object, _ runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, fmt.Sprintf("%s %s %s %s", eventtype, reason, action, fmt.Sprintf(note, args...)))
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lines)
}
