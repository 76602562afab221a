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

// Package chaos drives both reconcilers through a cluster's whole life against the fake
// OpenStack while it fails calls at random, loses responses, drives load balancers and servers
// into ERROR, and while the manager is restarted or killed in the middle of a reconcile, with
// its status sometimes lost. After every reconcile it checks that no two OpenStack objects
// exist for one purpose; after each phase, once faults stop, that the cluster converges; at the
// end, that deletion left exactly what the user brought, and that no log line or event holds a
// secret's value. Every seed is one reproducible run:
//
//	go test ./test/chaos/ -run TestChaos -v -seed 17
package chaos

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

var (
	seedFlag  = flag.Int64("seed", 0, "run this seed alone, logging every step")
	seedsFlag = flag.Int("seeds", 240, "how many seeds TestChaos runs (20 with -short unless set)")
)

func TestChaos(t *testing.T) {
	if *seedFlag != 0 {
		w := newWorld(t, *seedFlag, true)
		w.run()
		t.Logf("seed %d: %+v", *seedFlag, w.n)
		return
	}
	seeds := *seedsFlag
	if testing.Short() && !flagSet("seeds") {
		seeds = 20
	}
	var mu sync.Mutex
	var total counts
	t.Run("seeds", func(t *testing.T) {
		for seed := int64(1); seed <= int64(seeds); seed++ {
			t.Run(fmt.Sprint(seed), func(t *testing.T) {
				t.Parallel()
				w := newWorld(t, seed, false)
				w.run()
				mu.Lock()
				defer mu.Unlock()
				total.add(w.n)
			})
		}
	})
	t.Logf("%d seeds: %d reconciles, %d faults injected (%d calls failed by them), %d manager restarts, %d kills in a reconcile, "+
		"%d status wipes, %d machines remediated, %d invariant checks", seeds, total.reconciles, total.faults, total.faultsFired,
		total.restarts, total.kills, total.wipes, total.remediations, total.checks)
}

func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// scenario is what a seed's cluster looks like.
type scenario struct {
	// single is upstream CAPO's one load balancer, migrated in place to zones later.
	single  bool
	zones   []string
	ports   []int
	cidrs   []string
	crossAZ bool
	// controlPlane are the zones of the control plane machines; workers is how many workers.
	controlPlane []string
	workers      int
}

var allZones = []string{"az1", "az2", "az3"}

func (w *world) pickScenario() {
	r := w.rng
	sc := scenario{single: r.Intn(3) == 0, crossAZ: r.Intn(2) == 0, workers: r.Intn(2)}
	if sc.single {
		sc.zones = []string{"az1"}
	} else {
		sc.zones = slices.Clone(allZones[:1+r.Intn(3)])
	}
	for _, p := range []int{8132, 9345} {
		if r.Intn(2) == 0 {
			sc.ports = append(sc.ports, p)
		}
	}
	if r.Intn(2) == 0 {
		sc.cidrs = []string{"10.0.0.0/8", "192.168.0.0/16"}[:1+r.Intn(2)]
	}
	for range r.Intn(4) {
		sc.controlPlane = append(sc.controlPlane, allZones[r.Intn(len(allZones))])
	}
	w.sc = sc
}

// run is a seed's whole life: create, migrate or change zones, change zones, delete the
// machines, delete the cluster; each phase under chaos, then converged without it.
func (w *world) run() {
	w.pickScenario()
	w.step("scenario %+v", w.sc)
	w.setUpCloud()
	w.start()
	w.create()
	w.phase("create")

	if w.sc.single {
		w.sc.single, w.sc.zones = false, []string{"az1", "az2"}
		w.updateSpec("migrate to zones az1, az2")
	} else {
		w.toggleZone()
	}
	w.phase("zones 1")
	w.toggleZone()
	w.phase("zones 2")

	for _, name := range w.machineNames() {
		w.deleteMachine(name)
	}
	w.phase("machines deleted")

	osc := &infrav1.OpenStackCluster{}
	w.must(w.kube.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: "c"}, osc))
	w.must(w.kube.Delete(context.Background(), osc))
	w.enqueueAll()
	w.step("OpenStackCluster deleted")
	w.phase("cluster deleted")
	w.checkSecretsNeverShown()
}

// toggleZone adds a zone when the cluster has fewer than three, else removes the last.
func (w *world) toggleZone() {
	if len(w.sc.zones) < len(allZones) && (len(w.sc.zones) == 1 || w.rng.Intn(2) == 0) {
		w.sc.zones = append(w.sc.zones, allZones[len(w.sc.zones)])
		w.updateSpec("zone " + w.sc.zones[len(w.sc.zones)-1] + " added")
		return
	}
	removed := w.sc.zones[len(w.sc.zones)-1]
	w.sc.zones = w.sc.zones[:len(w.sc.zones)-1]
	w.updateSpec("zone " + removed + " removed")
}

// setUpCloud makes what the operator brings: the external network, a network for the VIPs
// with a subnet per zone routed to it, a flavor and an image. The baseline is what deletion
// must leave.
func (w *world) setUpCloud() {
	ctx := context.Background()
	w.cloud.SetAvailabilityZones(allZones...)
	ext := w.cloud.AddNetwork("public", true)
	w.cloud.AddSubnet(ext, "public-subnet", "172.24.4.0/24")
	w.lbNet = w.cloud.AddNetwork("lb-net", false)
	router, err := w.cloud.Network().CreateRouter(ctx, routers.CreateOpts{Name: "operator-router", GatewayInfo: &routers.GatewayInfo{NetworkID: ext}})
	w.must(err)
	for i, az := range allZones {
		w.subnets[az] = w.cloud.AddSubnet(w.lbNet, "lb-"+az, fmt.Sprintf("10.20.%d.0/24", i))
		_, err := w.cloud.Network().AddRouterInterface(ctx, router.ID, routers.AddInterfaceOpts{SubnetID: w.subnets[az]})
		w.must(err)
	}
	w.cloud.AddFlavor("m1.small", 2, 2048)
	w.cloud.AddImage("ubuntu")
	// The operator's volume carries the name a machine's volume will have: it is never taken,
	// attached or deleted.
	_, err = w.cloud.Volume().CreateVolume(ctx, volumes.CreateOpts{Name: "m1-data", Size: 1, Description: "the operator's"})
	w.must(err)
	w.baseline = w.cloud.Inventory()
}

func (w *world) spec() infrav1.OpenStackClusterSpec {
	spec := infrav1.OpenStackClusterSpec{
		IdentityRef:           &infrav1.OpenStackIdentityReference{Name: "cloud-config", CloudName: "openstack"},
		ManagedSubnets:        []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24"}},
		ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{},
		APIServerLoadBalancer: &infrav1.APIServerLoadBalancer{
			Enabled: ptr.To(true), AdditionalPorts: w.sc.ports, AllowedCIDRs: w.sc.cidrs,
			Network: &infrav1.NetworkParam{ID: ptr.To(w.lbNet)},
		},
	}
	if w.sc.single {
		spec.APIServerLoadBalancer.Subnets = []infrav1.SubnetParam{{ID: ptr.To(w.subnets["az1"])}}
		return spec
	}
	spec.ControlPlaneEndpoint = &clusterv1.APIEndpoint{Host: "api.example.com", Port: 6443}
	spec.APIServerLoadBalancer.AllowCrossAZLoadBalancerMembers = ptr.To(w.sc.crossAZ)
	for _, az := range w.sc.zones {
		spec.APIServerLoadBalancer.AvailabilityZoneSubnets = append(spec.APIServerLoadBalancer.AvailabilityZoneSubnets,
			infrav1.AZSubnetMapping{AvailabilityZone: az, Subnet: infrav1.SubnetParam{ID: ptr.To(w.subnets[az])}})
	}
	return spec
}

func (w *world) secretValue(what string) string {
	v := fmt.Sprintf("chaos-%s-%d-%x", what, w.seed, w.rng.Uint64())
	w.secrets = append(w.secrets, v)
	return v
}

func (w *world) create() {
	ctx := context.Background()
	identity := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "cloud-config"}, Data: map[string][]byte{
		"clouds.yaml": []byte("clouds:\n  openstack:\n    auth:\n      auth_url: http://127.0.0.1:5000/v3\n      application_credential_id: " +
			w.secretValue("credential-id") + "\n      application_credential_secret: " + w.secretValue("credential-secret") + "\n"),
	}}
	w.must(w.kube.Create(ctx, identity))
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: namespace, UID: "cluster-uid"}, Spec: clusterv1.ClusterSpec{
		InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackCluster", Name: "c"},
	}}
	w.must(w.kube.Create(ctx, cluster))
	osc := &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: namespace,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "c", UID: cluster.UID}}}, Spec: w.spec()}
	w.must(w.kube.Create(ctx, osc))
	w.step("OpenStackCluster created")
	for _, az := range w.sc.controlPlane {
		w.addMachine(az)
	}
	for range w.sc.workers {
		w.addMachine("")
	}
	w.enqueueAll()
}

// addMachine creates a Machine, its bootstrap data and its OpenStackMachine, as Cluster API
// does; zone "" is a worker.
func (w *world) addMachine(zone string) {
	ctx := context.Background()
	w.serial++
	name := fmt.Sprintf("m%d", w.serial)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-bootstrap", Namespace: namespace},
		Data: map[string][]byte{"value": []byte("#cloud-config\n# join token " + w.secretValue("bootstrap") + "\n")}}
	w.must(w.kube.Create(ctx, secret))
	labels := map[string]string{clusterv1.ClusterNameLabel: "c"}
	if zone != "" {
		labels[clusterv1.MachineControlPlaneLabel] = ""
	}
	machine := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels, UID: types.UID("uid-" + name)}, Spec: clusterv1.MachineSpec{
		ClusterName:       "c",
		Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To(secret.Name)},
		InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackMachine", Name: name},
		FailureDomain:     zone,
	}}
	w.must(w.kube.Create(ctx, machine))
	osm := &infrav1.OpenStackMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{clusterv1.ClusterNameLabel: "c"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: machine.UID}}},
		Spec: infrav1.OpenStackMachineSpec{Flavor: ptr.To("m1.small"), Image: infrav1.ImageParam{Filter: &infrav1.ImageFilter{Name: ptr.To("ubuntu")}}},
	}
	// Every machine boots from a volume and has a data volume and a local disk: faults between
	// the volumes and the server must leave neither a second volume nor an orphan.
	osm.Spec.RootVolume = &infrav1.RootVolume{SizeGiB: 10}
	// Control plane machines' ports are trunk parents: the trunk goes before the port.
	osm.Spec.Trunk = zone != ""
	data := &infrav1.BlockDeviceVolume{}
	if zone != "" {
		data.AvailabilityZone = &infrav1.VolumeAvailabilityZone{From: infrav1.VolumeAZFromMachine}
	}
	osm.Spec.AdditionalBlockDevices = []infrav1.AdditionalBlockDevice{
		{Name: "data", SizeGiB: 2, Storage: infrav1.BlockDeviceStorage{Type: infrav1.VolumeBlockDevice, Volume: data}},
		{Name: "scratch", SizeGiB: 1, Storage: infrav1.BlockDeviceStorage{Type: infrav1.LocalBlockDevice}},
	}
	w.must(w.kube.Create(ctx, osm))
	w.machines[name] = &machineState{zone: zone}
	w.enqueue(target{machine: name}, w.clk.Now())
	w.step("machine %s created (zone %q)", name, zone)
}

// deleteMachine deletes the OpenStackMachine, as Cluster API does first when a Machine goes;
// the Machine is removed once it is gone.
func (w *world) deleteMachine(name string) {
	osm := &infrav1.OpenStackMachine{}
	w.must(w.kube.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, osm))
	w.must(w.kube.Delete(context.Background(), osm))
	w.machines[name].deleting = true
	w.enqueue(target{machine: name}, w.clk.Now())
	w.step("machine %s deleted", name)
}

func (w *world) updateSpec(what string) {
	osc := &infrav1.OpenStackCluster{}
	w.must(w.kube.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: "c"}, osc))
	osc.Spec = w.spec()
	w.must(w.kube.Update(context.Background(), osc))
	w.enqueueAll()
	w.step("spec changed: %s", what)
}

// phase runs a stretch of chaos, then lets the cluster converge without faults and checks the
// phase's end state.
func (w *world) phase(name string) {
	w.step("phase %q: chaos", name)
	for range 1 + w.rng.Intn(3) {
		w.injectFault()
	}
	for range 30 + w.rng.Intn(170) {
		w.chaos()
		if !w.tick() {
			break
		}
	}
	for _, f := range w.faults {
		w.n.faultsFired += f.Fired()
	}
	w.faults = nil
	w.cloud.ClearFaults()
	w.step("phase %q: faults stop", name)
	w.converge(name)
}

// chaos may, before a reconcile, inject another fault, restart the manager (losing the status
// sometimes), or arm a kill inside the next reconcile.
func (w *world) chaos() {
	switch r := w.rng.Float64(); {
	case r < 0.02:
		w.injectFault()
	case r < 0.04:
		if w.rng.Intn(3) == 0 {
			w.wipeStatus()
		}
		w.restart("at random")
	case r < 0.07:
		w.killInNextReconcile()
	}
}

// killInNextReconcile kills the manager at the kth OpenStack call from now: that call may or
// may not reach the cloud, no later call does, nor any write to the API server; then the
// manager starts again.
func (w *world) killInNextReconcile() {
	k := 1 + w.rng.Intn(8)
	var applied *fakeopenstack.Fault
	if w.rng.Intn(2) == 0 {
		applied = w.cloud.InjectFault(fakeopenstack.Fault{Operation: "*", Nth: k, LoseResponse: true})
		k++
	}
	death := w.cloud.InjectFault(fakeopenstack.Fault{Operation: "*", Nth: k, Times: 1 << 30, Timeout: true})
	w.dead.fault = death
	w.step("kill armed at OpenStack call %d from now", k)
	// The next reconcile, whichever it is, is where the manager dies.
	for w.tick() {
		if w.lastStepIsReconcile() {
			break
		}
	}
	killed := death.Fired() > 0
	w.dead.fault = nil
	w.cloud.RemoveFault(death)
	if applied != nil {
		w.cloud.RemoveFault(applied)
	}
	if killed {
		w.n.kills++
		w.restart("killed in a reconcile")
	}
}

func (w *world) lastStepIsReconcile() bool {
	return len(w.trace) > 0 && strings.Contains(w.trace[len(w.trace)-1], " reconcile ")
}

// wipeStatus loses the status of the OpenStackCluster and of every OpenStackMachine, as a
// restore from a backup without status would.
func (w *world) wipeStatus() {
	ctx := context.Background()
	osc := &infrav1.OpenStackCluster{}
	if err := w.kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "c"}, osc); err == nil {
		osc.Status = infrav1.OpenStackClusterStatus{}
		w.must(w.kube.Status().Update(ctx, osc))
	}
	for _, name := range w.machineNames() {
		osm := &infrav1.OpenStackMachine{}
		if err := w.kube.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, osm); err == nil {
			osm.Status = infrav1.OpenStackMachineStatus{}
			w.must(w.kube.Status().Update(ctx, osm))
		}
	}
	w.n.wipes++
	w.step("status wiped")
}

var (
	mutations = []string{"CreateLoadBalancer", "UpdateLoadBalancer", "DeleteLoadBalancer", "CreateListener", "UpdateListener",
		"CreatePool", "UpdatePool", "CreateMonitor", "CreateMember", "DeleteMember", "CreateFloatingIP", "UpdateFloatingIP",
		"DeleteFloatingIP", "CreatePort", "UpdatePort", "DeletePort", "CreateServer", "DeleteServer", "CreateNetwork",
		"CreateSubnet", "CreateRouter", "AddRouterInterface", "RemoveRouterInterface", "DeleteRouter", "DeleteNetwork",
		"CreateSecGroup", "CreateSecGroupRules", "DeleteSecGroup", "ReplaceAllTags", "CreateVolume", "DeleteVolume", "CreateTrunk", "DeleteTrunk"}
	reads = []string{"ListLoadBalancers", "GetLoadBalancer", "GetLoadBalancerStatuses", "ListListeners", "ListPools", "ListMembers",
		"ListPorts", "ListFloatingIPs", "ListNetworks", "ListSubnets", "ListRouters", "ListSecGroups", "GetServer", "ListServers",
		"ListProviders", "ListAvailabilityZoneCapabilities", "ListVolumes", "ListVolumeAvailabilityZones", "ListTrunks"}
)

// injectFault adds one random fault: an HTTP error, a timeout, a lost response, or a load
// balancer, server or volume driven into ERROR; on one operation or on every one; on the nth call or
// on a fraction of calls, a bounded number of times.
func (w *world) injectFault() {
	r := w.rng
	f := fakeopenstack.Fault{Times: 1 + r.Intn(4)}
	if r.Intn(2) == 0 {
		f.Nth = 1 + r.Intn(5)
	} else {
		f.Probability = 0.05 + 0.35*r.Float64()
	}
	switch kind := r.Intn(10); {
	case kind < 4:
		f.Status = []int{http.StatusConflict, http.StatusInternalServerError, http.StatusServiceUnavailable}[r.Intn(3)]
		f.Operation = pickOperation(r.Intn, true)
	case kind < 6:
		f.Timeout = true
		f.Operation = pickOperation(r.Intn, true)
	case kind < 8:
		f.LoseResponse = true
		f.Operation = mutations[r.Intn(len(mutations))]
	default:
		f.DriveToError = true
		f.Operation = []string{"CreateLoadBalancer", "CreateServer", "CreateVolume"}[r.Intn(3)]
	}
	w.faults = append(w.faults, w.cloud.InjectFault(f))
	w.n.faults++
	w.step("fault injected: %s", describeFault(f))
}

func pickOperation(intn func(int) int, anyOp bool) string {
	switch n := intn(10); {
	case anyOp && n == 0:
		return "*"
	case n < 6:
		return mutations[intn(len(mutations))]
	default:
		return reads[intn(len(reads))]
	}
}

func describeFault(f fakeopenstack.Fault) string {
	what := fmt.Sprintf("HTTP %d", f.Status)
	switch {
	case f.Timeout:
		what = "timeout"
	case f.LoseResponse:
		what = "response lost after the change"
	case f.DriveToError:
		what = "driven to ERROR"
	}
	when := fmt.Sprintf("call %d", f.Nth)
	if f.Nth == 0 {
		when = fmt.Sprintf("p=%.2f", f.Probability)
	}
	return fmt.Sprintf("%s on %s, %s, up to %d times", what, f.Operation, when, f.Times)
}
