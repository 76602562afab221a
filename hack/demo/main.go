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

// Command demo applies examples/multi-az-cluster.yaml to a management plane and an OpenStack,
// waits for the cluster and its three control plane machines, and prints, per availability zone,
// the load balancer, its addresses and members, and the DNS records to publish. hack/demo.sh
// brings up the local OpenStack and management plane first.
//
//	demo up      prepare, apply, wait, print (idempotent)
//	demo down    delete the demo cluster and wait until its OpenStack resources are gone
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/internal/localenv"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
	managerscheme "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scheme"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
)

const (
	namespace    = "capo-demo"
	clusterName  = "demo"
	identityName = "capo-demo-cloud"
	// networkName is what examples/multi-az-cluster.yaml selects its load balancer network and
	// subnets by: capo-demo-lb, capo-demo-lb-<zone>.
	networkName = "capo-demo"
)

type options struct {
	cloudsYAML string
	cloud      string
	example    string
	zones      string
	mgmtDir    string
	timeout    time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.cloudsYAML, "clouds-yaml", "/var/tmp/capo-local-openstack/clouds.yaml", "clouds.yaml of the OpenStack to use.")
	flag.StringVar(&o.cloud, "cloud", "capo-e2e", "The cloud of clouds.yaml the example's identityRef names.")
	flag.StringVar(&o.example, "example", "examples/multi-az-cluster.yaml", "The manifests to apply.")
	flag.StringVar(&o.zones, "zones", "az1,az2", "The availability zones the example maps.")
	flag.StringVar(&o.mgmtDir, "mgmt-dir", "/var/tmp/capo-management-plane", "The management plane's directory (its ready file says where the DNS server is).")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "How long to wait for the cluster and its machines.")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	var err error
	switch flag.Arg(0) {
	case "up":
		err = up(ctx, o)
	case "down":
		err = down(ctx, o)
	default:
		err = errors.New("usage: demo [flags] up|down")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
}

func say(start time.Time, format string, args ...any) {
	fmt.Printf("[%5.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
}

func connect(ctx context.Context, o options) (client.Client, *scope.Clients, []byte, error) {
	restConfig, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("reading KUBECONFIG: %w", err)
	}
	scheme, err := managerscheme.New()
	if err != nil {
		return nil, nil, nil, err
	}
	kube, err := client.New(restConfig, client.Options{Scheme: scheme})
	if err != nil {
		return nil, nil, nil, err
	}
	clouds, err := os.ReadFile(o.cloudsYAML)
	if err != nil {
		return nil, nil, nil, err
	}
	cl, err := localenv.Clients(ctx, clouds, o.cloud)
	return kube, cl, clouds, err
}

func up(ctx context.Context, o options) error {
	start := time.Now()
	kube, cl, clouds, err := connect(ctx, o)
	if err != nil {
		return err
	}
	azs := strings.Split(o.zones, ",")
	if _, err := localenv.EnsureLBNetwork(ctx, cl, networkName, 50, azs); err != nil {
		return fmt.Errorf("preparing the load balancer network: %w", err)
	}
	lbNet, _ := localenv.LBNetworkNames(networkName, "")
	say(start, "load balancer network %s ready, one subnet per zone (%s)", lbNet, o.zones)

	if err := applyExample(ctx, kube, o.example, clouds); err != nil {
		return err
	}
	say(start, "applied %s", o.example)

	key := client.ObjectKey{Namespace: namespace, Name: clusterName}
	var osc *infrav1.OpenStackCluster
	if err := poll(ctx, func() (bool, error) {
		osc = &infrav1.OpenStackCluster{}
		if err := kube.Get(ctx, key, osc); err != nil {
			return false, err
		}
		ready := meta.IsStatusConditionTrue(osc.Status.Conditions, infrav1.ReadyCondition)
		return ready && len(osc.Status.APIServerLoadBalancers) == len(azs), nil
	}); err != nil {
		return fmt.Errorf("waiting for the OpenStackCluster to be ready: %w%s", err, conditions(osc))
	}
	say(start, "OpenStackCluster %s ready: %d load balancers", clusterName, len(osc.Status.APIServerLoadBalancers))

	var machines infrav1.OpenStackMachineList
	if err := poll(ctx, func() (bool, error) {
		if err := kube.List(ctx, &machines, client.InNamespace(namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: clusterName}); err != nil {
			return false, err
		}
		for i := range machines.Items {
			if !meta.IsStatusConditionTrue(machines.Items[i].Status.Conditions, infrav1.ReadyCondition) {
				return false, nil
			}
		}
		return len(machines.Items) > 0, nil
	}); err != nil {
		return fmt.Errorf("waiting for the control plane machines: %w", err)
	}
	say(start, "%d control plane machines running and behind their zone's load balancer", len(machines.Items))
	// Octavia's health checks see the members ONLINE a few seconds after they join.
	if err := poll(ctx, func() (bool, error) {
		if err := kube.Get(ctx, key, osc); err != nil {
			return false, err
		}
		for _, lb := range osc.Status.APIServerLoadBalancers {
			if !zones.Serves(&lb, osc.Spec.EffectiveAPIServerPort()) {
				return false, nil
			}
		}
		return len(osc.Status.APIServerLoadBalancers) == len(azs), nil
	}); err != nil {
		return fmt.Errorf("waiting for every zone to serve: %w%s", err, conditions(osc))
	}
	say(start, "every zone healthy, with its control plane machines ONLINE in Octavia")
	if err := report(ctx, os.Stdout, cl, osc); err != nil {
		return err
	}
	return showDNS(ctx, start, o, osc)
}

// applyExample creates the example's objects that do not exist yet: the namespace first, then
// the identity Secret (credentials never go into examples/), then the rest.
func applyExample(ctx context.Context, kube client.Client, example string, clouds []byte) error {
	objects, err := readManifests(example)
	if err != nil {
		return err
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: identityName, Namespace: namespace,
		Labels: map[string]string{"clusterctl.cluster.x-k8s.io/move": "true"}},
		Data: map[string][]byte{scope.CloudsSecretKey: clouds}}
	all := []client.Object{objects[0], secret}
	for _, obj := range objects[1:] {
		all = append(all, obj)
	}
	for _, obj := range all {
		if err := createIfMissing(ctx, kube, obj); err != nil {
			return err
		}
	}
	return nil
}

// showDNS waits until the DNS server answers the endpoint host with the addresses the cluster
// publishes, and prints the answer, when the cluster publishes its records and the management
// plane runs ExternalDNS.
func showDNS(ctx context.Context, start time.Time, o options, osc *infrav1.OpenStackCluster) error {
	if osc.Spec.APIServerLoadBalancer == nil || osc.Spec.APIServerLoadBalancer.DNS == nil {
		return nil
	}
	server, err := localenv.PlaneValue(o.mgmtDir, "dns_server")
	if err != nil || server == "" {
		fmt.Printf("\nThe management plane runs no ExternalDNS (%v): the DNSEndpoint %s/%s-apiserver is not published.\n", err, namespace, clusterName)
		return nil
	}
	want := zones.Publish(loadbalancer.RecordedInput(osc, clusterName)).Addresses
	host := osc.Spec.ControlPlaneEndpoint.Host
	var got []string
	if err := poll(ctx, func() (bool, error) {
		got, err = localenv.LookupA(ctx, server, host)
		return err == nil && slices.Equal(got, want), nil
	}); err != nil {
		return fmt.Errorf("waiting for %s to answer %v for %s (it answers %v): %w", server, want, host, got, err)
	}
	say(start, "ExternalDNS published the DNSEndpoint %s-apiserver", clusterName)
	addr, port, _ := strings.Cut(server, ":")
	fmt.Printf("\n$ dig @%s -p %s %s A +short\n%s\n", addr, port, host, strings.Join(got, "\n"))
	fmt.Println("(the provider withdraws a zone whose load balancer cannot take traffic, and publishes it again when it can)")
	return nil
}

// report prints one row per zone (load balancer, VIP, floating IP, members as Octavia has them)
// and the DNS records to publish.
func report(ctx context.Context, out io.Writer, cl *scope.Clients, osc *infrav1.OpenStackCluster) error {
	w := &strings.Builder{}
	fmt.Fprintln(w)
	// Write errors surface at Flush.
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "ZONE\tLOAD BALANCER\tVIP\tFLOATING IP\tHEALTHY\tMEMBERS")
	for _, lb := range osc.Status.APIServerLoadBalancers {
		members, err := membersOf(ctx, cl, lb.ID)
		if err != nil {
			return err
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", lb.AvailabilityZone, lb.Name, lb.InternalIP, lb.IP, lb.Health, strings.Join(members, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	host := osc.Spec.ControlPlaneEndpoint.Host
	if osc.Spec.APIServerLoadBalancer.DNS != nil {
		fmt.Fprintf(w, "\nkubectl get openstackcluster -n %s %s -o yaml   # the status behind this table\n", namespace, clusterName)
		_, err := io.WriteString(out, w.String())
		return err
	}
	fmt.Fprintf(w, "\nPublish these DNS A records for %s (one per zone; clients move on to the next when a zone is lost):\n", host)
	for _, lb := range osc.Status.APIServerLoadBalancers {
		address := lb.IP
		if address == "" {
			address = lb.InternalIP
		}
		fmt.Fprintf(w, "  %s.  60  IN  A  %s    ; %s\n", host, address, lb.AvailabilityZone)
	}
	fmt.Fprintf(w, "\nkubectl get openstackcluster -n %s %s -o yaml   # the status behind this table\n", namespace, clusterName)
	_, err := io.WriteString(out, w.String())
	return err
}

// membersOf lists the members of a load balancer's pools as "name (address)".
func membersOf(ctx context.Context, cl *scope.Clients, id string) ([]string, error) {
	tree, err := cl.LoadBalancer.GetLoadBalancerStatuses(ctx, id)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range tree.Loadbalancer.Listeners {
		for _, p := range l.Pools {
			members, err := cl.LoadBalancer.ListMembers(ctx, p.ID, pools.ListMembersOpts{})
			if err != nil {
				return nil, err
			}
			for _, m := range members {
				s := fmt.Sprintf("%s (%s)", m.Name, m.Address)
				if !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

func down(ctx context.Context, o options) error {
	start := time.Now()
	kube, cl, _, err := connect(ctx, o)
	if err != nil {
		return err
	}
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: clusterName}}
	if err := kube.Delete(ctx, cluster); client.IgnoreNotFound(err) != nil {
		return err
	}
	if err := poll(ctx, func() (bool, error) {
		err := kube.Get(ctx, client.ObjectKeyFromObject(cluster), cluster)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	}); err != nil {
		return fmt.Errorf("waiting for the cluster to be deleted: %w", err)
	}
	say(start, "cluster %s/%s deleted with its load balancers, machines and network", namespace, clusterName)
	lbNet, err := localenv.FindLBNetwork(ctx, cl, networkName, strings.Split(o.zones, ","))
	if err == nil {
		err = lbNet.Delete(ctx, cl)
	}
	if err != nil {
		return fmt.Errorf("deleting the load balancer network: %w", err)
	}
	say(start, "load balancer network deleted")
	return nil
}

func readManifests(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out, err := localenv.DecodeYAML(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(out) == 0 || out[0].GetKind() != "Namespace" {
		return nil, fmt.Errorf("%s: the first document must be the Namespace", path)
	}
	return out, nil
}

func createIfMissing(ctx context.Context, kube client.Client, obj client.Object) error {
	if err := kube.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %s %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
	}
	return nil
}

// poll calls done every second until it says so, fails, or ctx ends.
func poll(ctx context.Context, done func() (bool, error)) error {
	for {
		ok, err := done()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func conditions(osc *infrav1.OpenStackCluster) string {
	if osc == nil {
		return ""
	}
	var parts []string
	for _, c := range osc.Status.Conditions {
		if c.Status != metav1.ConditionTrue {
			parts = append(parts, fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}
