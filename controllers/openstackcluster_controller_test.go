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
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	infrav1beta2 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta2"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

const (
	eventually = 30 * time.Second
	poll       = 100 * time.Millisecond
)

var ctx = context.Background()

// newCloud is a fake OpenStack with two zones and an external network, for one namespace.
// namespaces numbers the namespaces the tests make, so that a test run twice in one process
// (go test -count) starts in a namespace of its own.
var namespaces atomic.Int64

// testNamespace is a namespace name for one run of a test: base and a number.
func testNamespace(base string) string { return fmt.Sprintf("%s-%d", base, namespaces.Add(1)) }

func newCloud(t *testing.T, g *WithT, namespace string) *fakeopenstack.Cloud {
	t.Helper()
	return newCloudWith(t, g, namespace, fakeopenstack.Options{})
}

func newCloudWith(t *testing.T, g *WithT, namespace string, opts fakeopenstack.Options) *fakeopenstack.Cloud {
	t.Helper()
	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})).To(Succeed())
	cloud := fakeopenstack.New(opts)
	cloud.SetAvailabilityZones("az1", "az2")
	ext := cloud.AddNetwork("public", true)
	cloud.AddSubnet(ext, "public-subnet", "172.24.4.0/24")
	clouds.set(namespace, cloud)
	return cloud
}

// newCluster creates a Cluster and an OpenStackCluster it owns, as Cluster API would.
func newCluster(g *WithT, namespace string, paused bool, spec infrav1.OpenStackClusterSpec, withOwner bool) *infrav1.OpenStackCluster {
	return newNamedCluster(g, namespace, "c", paused, spec, withOwner)
}

// newNamedCluster is newCluster with a name other than "c".
func newNamedCluster(g *WithT, namespace, name string, paused bool, spec infrav1.OpenStackClusterSpec, withOwner bool) *infrav1.OpenStackCluster {
	return newNamedClusterIn(g, "v1beta1", namespace, name, paused, spec, withOwner)
}

// newNamedClusterIn is newNamedCluster with the OpenStackCluster written in an API version.
func newNamedClusterIn(g *WithT, version, namespace, name string, paused bool, spec infrav1.OpenStackClusterSpec, withOwner bool) *infrav1.OpenStackCluster {
	// Cluster v1beta2 wants a non-empty spec; paused is set either way.
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Spec: clusterv1.ClusterSpec{
		Paused:            ptr.To(paused),
		InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "OpenStackCluster", Name: name},
	}}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	osc := &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Spec: spec}
	if withOwner {
		osc.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: cluster.Name, UID: cluster.UID}}
	}
	createIn(g, version, osc, &infrav1beta2.OpenStackCluster{})
	return osc
}

// createIn creates obj, built in v1beta1, as a client of version writes it: in v1beta2 it is
// converted to spoke (through the provider's conversion) and sent as v1beta2, and the API server
// converts it back through the webhook to store it. obj is then read back in v1beta1.
func createIn(g *WithT, version string, obj interface {
	client.Object
	conversion.Hub
}, spoke interface {
	client.Object
	conversion.Convertible
}) {
	if version == "v1beta1" {
		g.Expect(env.Client.Create(ctx, obj)).To(Succeed())
		return
	}
	g.Expect(version).To(Equal("v1beta2"))
	g.Expect(spoke.ConvertFrom(obj)).To(Succeed())
	g.Expect(env.Client.Create(ctx, spoke)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(spoke), obj)).To(Succeed())
}

func managedSpec() infrav1.OpenStackClusterSpec {
	return infrav1.OpenStackClusterSpec{
		IdentityRef:           &infrav1.OpenStackIdentityReference{Name: "cloud-config", CloudName: "openstack"},
		ManagedSubnets:        []infrav1.SubnetSpec{{CIDR: "10.6.0.0/24"}},
		ManagedSecurityGroups: &infrav1.ManagedSecurityGroups{},
		Tags:                  []string{"e2e"},
	}
}

// wipeStatus changes the status as a restore from backup would, retrying on conflicts with the
// controller's own updates.
func wipeStatus(g *WithT, osc *infrav1.OpenStackCluster, wipe func(*infrav1.OpenStackClusterStatus)) {
	g.Eventually(func() error {
		cur := &infrav1.OpenStackCluster{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(osc), cur); err != nil {
			return err
		}
		wipe(&cur.Status)
		return env.Client.Status().Update(ctx, cur)
	}, eventually, poll).Should(Succeed())
}

func get(g Gomega, osc *infrav1.OpenStackCluster) *infrav1.OpenStackCluster {
	got := &infrav1.OpenStackCluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(osc), got)).To(Succeed())
	return got
}

// eventReasons are the reasons of the events recorded in namespace.
func eventReasons(g Gomega, namespace string) []string {
	var reasons []string
	for _, e := range eventsIn(g, namespace) {
		reasons = append(reasons, e.Reason)
	}
	return reasons
}

func eventsIn(g Gomega, namespace string) []eventsv1.Event {
	list := &eventsv1.EventList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
	return list.Items
}

// counts is what the fake holds of the cluster's resources.
type counts struct{ networks, routers, groups, fips, ports int }

func countResources(cloud *fakeopenstack.Cloud) counts {
	n := cloud.Network()
	nets, _ := n.ListNetworks(ctx, networks.ListOpts{})
	rs, _ := n.ListRouters(ctx, routers.ListOpts{})
	gs, _ := n.ListSecGroups(ctx, groups.ListOpts{})
	fs, _ := n.ListFloatingIPs(ctx, floatingips.ListOpts{})
	ps, _ := n.ListPorts(ctx, ports.ListOpts{})
	return counts{networks: len(nets), routers: len(rs), groups: len(gs), fips: len(fs), ports: len(ps)}
}

func TestClusterConvergesAdoptsAndDeletes(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("converges")
	cloud := newCloud(t, g, ns)
	osc := newCluster(g, ns, false, managedSpec(), true)

	g.Eventually(func(g Gomega) {
		got := get(g, osc)
		g.Expect(got.Status.Initialization).NotTo(BeNil())
		g.Expect(got.Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
		g.Expect(conditions.IsTrue(got, infrav1.ReadyCondition)).To(BeTrue())
	}, eventually, poll).Should(Succeed())

	got := get(g, osc)
	g.Expect(got.Finalizers).To(ContainElement(infrav1.ClusterFinalizer))
	g.Expect(got.Status.ExternalNetwork.Name).To(Equal("public"))
	g.Expect(got.Status.Network.Name).To(Equal("k8s-clusterapi-cluster-" + ns + "-c"))
	g.Expect(got.Status.Network.Subnets).To(HaveLen(1))
	g.Expect(got.Status.Network.Tags).To(ContainElement("e2e"))
	g.Expect(got.Status.Router.IPs).To(HaveLen(1))
	g.Expect(got.Status.ControlPlaneSecurityGroup.Name).To(Equal("k8s-cluster-" + ns + "-c-secgroup-controlplane"))
	g.Expect(got.Status.WorkerSecurityGroup).NotTo(BeNil())
	g.Expect(got.Status.FailureDomains).To(Equal([]clusterv1.FailureDomain{{Name: "az1", ControlPlane: ptr.To(true)}, {Name: "az2", ControlPlane: ptr.To(true)}}))
	// No load balancer: the endpoint is a floating IP on the external network.
	g.Expect(got.Spec.ControlPlaneEndpoint.Host).To(HavePrefix("172.24.4."))
	g.Expect(got.Spec.ControlPlaneEndpoint.Port).To(Equal(int32(6443)))
	created := countResources(cloud)
	g.Expect(created).To(Equal(counts{networks: 2, routers: 1, groups: 2, fips: 1, ports: 1}))
	// A clean create reports what it created and adopts nothing: no reconcile went looking by
	// name for what the one before it had just created.
	g.Eventually(func(g Gomega) {
		g.Expect(eventReasons(g, ns)).To(ContainElements("CreatedNetwork", "CreatedRouter", "CreatedSecurityGroup", "CreatedFloatingIP"))
	}, eventually, poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(eventReasons(g, ns)).NotTo(ContainElement(HavePrefix("Adopted")))
	}, 2*time.Second, poll).Should(Succeed())

	// Status lost: the controller rebuilds it from the cloud, creating nothing twice.
	networkID, endpoint := got.Status.Network.ID, *got.Spec.ControlPlaneEndpoint
	wipeStatus(g, osc, func(s *infrav1.OpenStackClusterStatus) { *s = infrav1.OpenStackClusterStatus{} })
	g.Eventually(func(g Gomega) {
		again := get(g, osc)
		g.Expect(again.Status.Initialization).NotTo(BeNil())
		g.Expect(again.Status.Network).NotTo(BeNil())
		g.Expect(again.Status.Network.ID).To(Equal(networkID))
		g.Expect(*again.Spec.ControlPlaneEndpoint).To(Equal(endpoint))
	}, eventually, poll).Should(Succeed())
	g.Expect(countResources(cloud)).To(Equal(created))
	// ... and says so: the network it found in the cloud is reported as adopted.
	g.Eventually(func(g Gomega) {
		g.Expect(eventReasons(g, ns)).To(ContainElements("CreatedNetwork", "CreatedRouter", "AdoptedNetwork", "AdoptedRouter", "AdoptedSecurityGroup"))
	}, eventually, poll).Should(Succeed())

	// Deletion removes everything the cluster created, and only that.
	g.Expect(env.Client.Delete(ctx, osc)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(osc), &infrav1.OpenStackCluster{}))
	}, eventually, poll).Should(BeTrue())
	g.Expect(countResources(cloud)).To(Equal(counts{networks: 1}), "only the external network the operator made is left")
}

func TestDeletionAfterLostStatusLeavesNothing(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("lost-status")
	cloud := newCloud(t, g, ns)
	osc := newCluster(g, ns, false, managedSpec(), true)
	g.Eventually(func(g Gomega) {
		g.Expect(get(g, osc).Status.Initialization).NotTo(BeNil())
	}, eventually, poll).Should(Succeed())

	// Wipe the status and delete at once: deletion finds the resources by name.
	wipeStatus(g, osc, func(s *infrav1.OpenStackClusterStatus) { *s = infrav1.OpenStackClusterStatus{} })
	g.Expect(env.Client.Delete(ctx, osc)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(osc), &infrav1.OpenStackCluster{}))
	}, eventually, poll).Should(BeTrue())
	g.Expect(countResources(cloud)).To(Equal(counts{networks: 1}))
}

func TestPausedClusterIsLeftAlone(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("paused")
	cloud := newCloud(t, g, ns)
	osc := newCluster(g, ns, true, managedSpec(), true)
	g.Eventually(func(g Gomega) {
		g.Expect(conditions.IsTrue(get(g, osc), clusterv1.PausedCondition)).To(BeTrue())
	}, eventually, poll).Should(Succeed())
	g.Consistently(cloud.TotalCalls, 2*time.Second, poll).Should(BeZero())
	g.Expect(get(g, osc).Finalizers).To(BeEmpty())
}

func TestWaitsForTheOwnerCluster(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("no-owner")
	cloud := newCloud(t, g, ns)
	osc := newCluster(g, ns, false, managedSpec(), false)
	g.Consistently(func(g Gomega) {
		g.Expect(get(g, osc).Finalizers).To(BeEmpty())
		g.Expect(cloud.TotalCalls()).To(BeZero())
	}, 2*time.Second, poll).Should(Succeed())
}

func TestMissingIdentityIsReported(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("no-identity")
	newCloud(t, g, ns)
	spec := managedSpec()
	spec.IdentityRef = nil
	osc := newCluster(g, ns, false, spec, true)
	g.Eventually(func(g Gomega) {
		c := conditions.Get(get(g, osc), infrav1.NetworkReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.IdentityErrorReason))
		g.Expect(c.Message).To(ContainSubstring("spec.identityRef is not set"))
	}, eventually, poll).Should(Succeed())

	// With nothing created, deletion does not wait for credentials.
	g.Expect(env.Client.Delete(ctx, osc)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(osc), &infrav1.OpenStackCluster{}))
	}, eventually, poll).Should(BeTrue())
}

// A cluster whose credentials never worked made nothing: its deletion, and its machines', does
// not wait for an identity that will never answer (an auth_url the operator does not allow, an
// address that does not answer). A machine whose spec names a server waits: only OpenStack can
// say whether that server is the machine's.
func TestDeletingWithCredentialsThatNeverWorked(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("never-worked")
	cloud := newCloud(t, g, ns)
	refusal := errors.New("clouds.yaml of Secret cloud-config: auth_url's endpoint http://10.0.0.1:5000 is not one the operator allows (the manager's --allowed-auth-url-hosts: keystone.example.com)")
	clouds.refuse(ns, refusal)
	osc := newCluster(g, ns, false, managedSpec(), true)
	g.Eventually(func(g Gomega) {
		c := conditions.Get(get(g, osc), infrav1.NetworkReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect([]string{c.Reason, c.Message}).To(Equal([]string{infrav1.IdentityErrorReason, refusal.Error()}))
	}, eventually, poll).Should(Succeed())
	markInfrastructureProvisioned(g, ns)
	plain := newMachine(g, ns, "plain", "az1", false)
	named := newMachine(g, ns, "named", "az1", false, func(s *infrav1.OpenStackMachineSpec) {
		s.ProviderID = ptr.To("openstack://RegionOne/" + missingID)
	})
	for _, osm := range []*infrav1.OpenStackMachine{plain, named} {
		g.Eventually(func(g Gomega) {
			g.Expect(getMachine(g, osm).Finalizers).To(ContainElement(infrav1.MachineFinalizer))
		}, eventually, poll).Should(Succeed())
		g.Expect(env.Client.Delete(ctx, osm)).To(Succeed())
	}
	gone := func(obj client.Object) func() bool {
		return func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object)))
		}
	}
	g.Eventually(gone(plain), eventually, poll).Should(BeTrue())
	waitsForCredentials := func(g Gomega) {
		got := getMachine(g, named)
		g.Expect(got.Finalizers).To(ContainElement(infrav1.MachineFinalizer))
		c := conditions.Get(got, infrav1.InstanceReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect([]string{c.Reason, c.Message}).To(Equal([]string{infrav1.IdentityErrorReason, refusal.Error()}))
	}
	// Its deletion's first reconcile may come after the plain machine is gone.
	g.Eventually(waitsForCredentials, eventually, poll).Should(Succeed())
	g.Consistently(waitsForCredentials, 2*time.Second, poll).Should(Succeed())
	g.Expect(cloud.TotalCalls()).To(BeZero(), "nothing called OpenStack")

	// With credentials that work, OpenStack says the server is not there, and the machine goes
	// (at its next look, which an edit brings forward).
	clouds.refuse(ns, nil)
	g.Eventually(func() error {
		cur := getMachine(g, named)
		cur.Annotations = map[string]string{"test": "credentials fixed"}
		return env.Client.Update(ctx, cur)
	}, eventually, poll).Should(Succeed())
	g.Eventually(gone(named), eventually, poll).Should(BeTrue())

	// The cluster, as Cluster API deletes it once its machines are gone.
	clouds.refuse(ns, refusal)
	calls := cloud.TotalCalls()
	g.Expect(env.Client.Delete(ctx, osc)).To(Succeed())
	g.Eventually(gone(osc), eventually, poll).Should(BeTrue())
	g.Expect(cloud.TotalCalls()).To(Equal(calls), "the cluster's deletion calls no OpenStack API")

	g.Eventually(func(g Gomega) {
		var said []string
		for _, e := range eventsIn(g, ns) {
			if e.Reason == "DeletedWithoutOpenStack" {
				g.Expect(e.Type).To(Equal(corev1.EventTypeWarning))
				said = append(said, e.Regarding.Kind+" "+e.Regarding.Name+": "+e.Note)
			}
		}
		// A reconcile that read the object from the cache before the finalizer's removal
		// reached it may say it again: once is what counts.
		slices.Sort(said)
		said = slices.Compact(said)
		g.Expect(said).To(Equal([]string{
			"OpenStackCluster c: Deleted without calling OpenStack: " + refusal.Error() + ", and the status records no OpenStack resource. Anything made and never recorded carries the tag " +
				clusterOwner(osc, "", false).Tag() + ` or the description "Created by the Cluster API OpenStack provider for OpenStackCluster ` + ns + `/c"`,
			"OpenStackMachine plain: Deleted without calling OpenStack: " + refusal.Error() + `, and neither the spec nor the status records a server. A port or a volume made and never recorded carries the description "Created by the Cluster API OpenStack provider for OpenStackMachine ` + ns + `/plain" (a port may carry the tag ` +
				machineOwner(plain, "", false).Tag() + " instead)",
		}))
	}, eventually, poll).Should(Succeed())
}

func TestSpecErrorsNameTheField(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("spec-error")
	newCloud(t, g, ns)
	spec := managedSpec()
	spec.ManagedSubnets = nil
	spec.Network = &infrav1.NetworkParam{Filter: &infrav1.NetworkFilter{Name: "does-not-exist"}}
	osc := newCluster(g, ns, false, spec, true)
	g.Eventually(func(g Gomega) {
		got := get(g, osc)
		c := conditions.Get(got, infrav1.NetworkReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.NetworkNotFoundReason))
		g.Expect(c.Message).To(Equal("spec.network.filter: {name=does-not-exist} matches 0 networks, want exactly one"))
		g.Expect(conditions.IsFalse(got, infrav1.ReadyCondition)).To(BeTrue())
	}, eventually, poll).Should(Succeed())
}

// A Cluster force-deleted before its OpenStackCluster: the deletion goes on under the Cluster's
// name (from the owner reference) and leaves nothing in the cloud, rather than waiting forever.
func TestDeletionGoesOnWhenTheClusterWasForceDeletedFirst(t *testing.T) {
	g := NewWithT(t)
	ns := testNamespace("orphaned")
	cloud := newCloud(t, g, ns)
	osc := newCluster(g, ns, false, managedSpec(), true)
	g.Eventually(func(g Gomega) {
		g.Expect(get(g, osc).Status.Initialization).NotTo(BeNil())
	}, eventually, poll).Should(Succeed())

	cluster := &clusterv1.Cluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c"}, cluster)).To(Succeed())
	cluster.Finalizers = nil
	g.Expect(env.Client.Update(ctx, cluster)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, cluster)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), &clusterv1.Cluster{}))
	}, eventually, poll).Should(BeTrue())

	g.Expect(env.Client.Delete(ctx, osc)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(osc), &infrav1.OpenStackCluster{}))
	}, eventually, poll).Should(BeTrue())
	g.Expect(countResources(cloud)).To(Equal(counts{networks: 1}), "only the external network the operator made is left")
}
