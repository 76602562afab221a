//go:build contract

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

// Package contract checks that the fake OpenStack behaves as a real one in what the controllers
// rely on. Every scenario runs against the fake, and against a real cloud when one is given:
//
//	CAPO_CONTRACT_CLOUDS_YAML=/path/to/clouds.yaml CAPO_CONTRACT_CLOUD=probe-demo \
//	  go test -tags contract -v ./test/contract/
//
// Optional: CAPO_CONTRACT_AZ (an Octavia availability zone, default az1) and
// CAPO_CONTRACT_EXTERNAL_NETWORK (name of the external network, default: the only one).
// The scenarios create their own network and subnet and delete everything they create.
package contract

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/attributestags"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/external"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

type target struct {
	name    string
	clients *scope.Clients
	az      string
	extNet  string // name of the external network; "" for the only one
}

func targets(t *testing.T) []target {
	t.Helper()
	cloud := fakeopenstack.New(fakeopenstack.Options{PendingReads: 2})
	cloud.SetAvailabilityZones("az1", "az2")
	ext := cloud.AddNetwork("public", true)
	cloud.AddSubnet(ext, "public-subnet", "172.24.4.0/24")
	cloud.AddFlavor("m1.tiny", 1, 512)
	cloud.AddImage("fake-image")
	out := []target{{name: "fake", clients: cloud.Clients(), az: "az1"}}

	path, cloudName := os.Getenv("CAPO_CONTRACT_CLOUDS_YAML"), os.Getenv("CAPO_CONTRACT_CLOUD")
	if path == "" || cloudName == "" {
		t.Log("CAPO_CONTRACT_CLOUDS_YAML and CAPO_CONTRACT_CLOUD are not set: running against the fake only")
		return out
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "contract", Namespace: "contract"}, Data: map[string][]byte{scope.CloudsSecretKey: data}}
	factory := &scope.SecretFactory{Reader: fake.NewClientBuilder().WithScheme(scheme).WithObjects(secret).Build(), Log: logr.Discard(),
		AuthGrace: scope.AuthDeadline(0)}
	real, err := factory.NewClients(context.Background(), "contract", &infrav1.OpenStackIdentityReference{Name: "contract", CloudName: cloudName})
	if err != nil {
		t.Fatal(err)
	}
	az := os.Getenv("CAPO_CONTRACT_AZ")
	if az == "" {
		az = "az1"
	}
	return append(out, target{name: "real", clients: real, az: az, extNet: os.Getenv("CAPO_CONTRACT_EXTERNAL_NETWORK")})
}

// poll calls f until it returns true, at most for limit.
func poll(limit time.Duration, f func() (bool, error)) error {
	deadline := time.Now().Add(limit)
	for {
		done, err := f()
		if err != nil || done {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not done within %s", limit)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func isCode(err error, code int) bool { return gophercloud.ResponseCodeIs(err, code) }

// answer is the body of the cloud's answer to a failed call: the provider's errors never repeat
// it (clients.CallError), but they keep it for whoever unwraps them.
func answer(err error) string {
	var unexpected gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &unexpected) {
		return string(unexpected.Body)
	}
	return ""
}

// scratchSubnet creates a network and subnet for one scenario and removes them after it.
func scratchSubnet(t *testing.T, tg target) (networkID, subnetID string) {
	t.Helper()
	ctx := context.Background()
	name := fmt.Sprintf("capo-contract-%d", time.Now().UnixNano())
	n, err := tg.clients.Network.CreateNetwork(ctx, networks.CreateOpts{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	s, err := tg.clients.Network.CreateSubnet(ctx, subnets.CreateOpts{NetworkID: n.ID, Name: name, CIDR: "10.250.0.0/24", IPVersion: gophercloud.IPv4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = poll(60*time.Second, func() (bool, error) {
			err := tg.clients.Network.DeleteNetwork(ctx, n.ID)
			return err == nil || isCode(err, http.StatusNotFound), nil
		})
	})
	return n.ID, s.ID
}

// deleteWhenDone deletes a load balancer with its children when the test ends, whatever
// happens in it (cleanups run before the scratch network's).
func deleteWhenDone(t *testing.T, tg target, id string) {
	t.Helper()
	ctx := context.Background()
	t.Cleanup(func() {
		_ = poll(120*time.Second, func() (bool, error) {
			err := tg.clients.LoadBalancer.DeleteLoadBalancer(ctx, id, loadbalancers.DeleteOpts{Cascade: true})
			_, getErr := tg.clients.LoadBalancer.GetLoadBalancer(ctx, id)
			return isCode(err, http.StatusNotFound) || isCode(getErr, http.StatusNotFound), nil
		})
	})
}

func TestContract(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			t.Run("load balancer state machine", func(t *testing.T) { loadBalancerStateMachine(t, tg) })
			t.Run("unknown availability zone is 400", func(t *testing.T) { unknownAZ(t, tg) })
			t.Run("tag filters", func(t *testing.T) { tagFilters(t, tg) })
			t.Run("fully populated load balancer in the status tree", func(t *testing.T) { fullyPopulatedStatusTree(t, tg) })
			t.Run("security group rules in bulk", func(t *testing.T) { bulkSecurityGroupRules(t, tg) })
			t.Run("server lifecycle", func(t *testing.T) { serverLifecycle(t, tg) })
			t.Run("server from volumes", func(t *testing.T) { serverFromVolumes(t, tg) })
			t.Run("membership", func(t *testing.T) { membership(t, tg) })
		})
	}
}

func loadBalancerStateMachine(t *testing.T, tg target) {
	ctx := context.Background()
	_, subnetID := scratchSubnet(t, tg)
	lb, err := tg.clients.LoadBalancer.CreateLoadBalancer(ctx, loadbalancers.CreateOpts{Name: "capo-contract", VipSubnetID: subnetID, AvailabilityZone: tg.az})
	if err != nil {
		t.Fatal(err)
	}
	deleteWhenDone(t, tg, lb.ID)
	if lb.ProvisioningStatus != "PENDING_CREATE" {
		t.Errorf("a new load balancer is %s, want PENDING_CREATE", lb.ProvisioningStatus)
	}
	// A mutation while pending answers 409 (unless the cloud was faster than us).
	_, err = tg.clients.LoadBalancer.CreateListener(ctx, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: listeners.ProtocolTCP, ProtocolPort: 6443})
	switch {
	case isCode(err, http.StatusConflict):
		t.Log("a listener on the pending load balancer was refused with 409")
	case err != nil:
		t.Errorf("a listener on a pending load balancer: want 409, got %v", err)
	default:
		t.Log("the load balancer was already ACTIVE when the listener was created")
	}
	active := func() (bool, error) {
		got, err := tg.clients.LoadBalancer.GetLoadBalancer(ctx, lb.ID)
		return err == nil && got.ProvisioningStatus == "ACTIVE", err
	}
	start := time.Now()
	if err := poll(120*time.Second, active); err != nil {
		t.Fatalf("load balancer never became ACTIVE: %v", err)
	}
	t.Logf("ACTIVE after %s", time.Since(start).Round(100*time.Millisecond))

	// A floating IP cannot reach the VIP port until a router joins its subnet to the external
	// network; then it points at the VIP address.
	ext, err := tg.clients.Network.ListNetworks(ctx, external.ListOptsExt{ListOptsBuilder: networks.ListOpts{Name: tg.extNet}, External: ptr.To(true)})
	if err != nil || len(ext) != 1 {
		t.Fatalf("want exactly one external network, got %d (%v)", len(ext), err)
	}
	got, _ := tg.clients.LoadBalancer.GetLoadBalancer(ctx, lb.ID)
	_, err = tg.clients.Network.CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: ext[0].ID, PortID: got.VipPortID})
	if !isCode(err, http.StatusNotFound) || !strings.Contains(answer(err), "ExternalGatewayForFloatingIPNotFound") {
		t.Errorf("a floating IP for an unrouted port: want 404 ExternalGatewayForFloatingIPNotFound, got %v", err)
	}
	router, err := tg.clients.Network.CreateRouter(ctx, routers.CreateOpts{Name: "capo-contract", GatewayInfo: &routers.GatewayInfo{NetworkID: ext[0].ID}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = tg.clients.Network.RemoveRouterInterface(ctx, router.ID, routers.RemoveInterfaceOpts{SubnetID: subnetID})
		_ = tg.clients.Network.DeleteRouter(ctx, router.ID)
	})
	if _, err := tg.clients.Network.AddRouterInterface(ctx, router.ID, routers.AddInterfaceOpts{SubnetID: subnetID}); err != nil {
		t.Fatal(err)
	}
	fip, err := tg.clients.Network.CreateFloatingIP(ctx, floatingips.CreateOpts{FloatingNetworkID: ext[0].ID, PortID: got.VipPortID})
	if err != nil {
		t.Fatal(err)
	}
	if fip.FixedIP != got.VipAddress {
		t.Errorf("floating IP points at %s, want the VIP %s", fip.FixedIP, got.VipAddress)
	}
	// Neutron keeps a router interface that a floating IP on the subnet goes through: a cluster's
	// router goes while Octavia deletes only once the floating IPs on its VIPs are released.
	if _, err := tg.clients.Network.RemoveRouterInterface(ctx, router.ID, routers.RemoveInterfaceOpts{SubnetID: subnetID}); !isCode(err, http.StatusConflict) {
		t.Errorf("removing the router interface a floating IP goes through: want 409, got %v", err)
	}
	if err := tg.clients.Network.DeleteFloatingIP(ctx, fip.ID); err != nil {
		t.Error(err)
	}

	// Cascade delete goes through PENDING_DELETE and ends in 404.
	if err := poll(60*time.Second, func() (bool, error) {
		err := tg.clients.LoadBalancer.DeleteLoadBalancer(ctx, lb.ID, loadbalancers.DeleteOpts{Cascade: true})
		return err == nil, ignoreCode(err, http.StatusConflict)
	}); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	defer func() { t.Logf("gone %s after the delete was accepted", time.Since(start).Round(100*time.Millisecond)) }()
	if err := poll(120*time.Second, func() (bool, error) {
		_, err := tg.clients.LoadBalancer.GetLoadBalancer(ctx, lb.ID)
		return isCode(err, http.StatusNotFound), ignoreCode(err, http.StatusNotFound)
	}); err != nil {
		t.Fatalf("load balancer not gone after cascade delete: %v", err)
	}
}

func ignoreCode(err error, code int) error {
	if err == nil || isCode(err, code) {
		return nil
	}
	return err
}

func unknownAZ(t *testing.T, tg target) {
	ctx := context.Background()
	_, subnetID := scratchSubnet(t, tg)
	lb, err := tg.clients.LoadBalancer.CreateLoadBalancer(ctx, loadbalancers.CreateOpts{VipSubnetID: subnetID, AvailabilityZone: "capo-contract-no-such-az"})
	if err == nil {
		_ = tg.clients.LoadBalancer.DeleteLoadBalancer(ctx, lb.ID, loadbalancers.DeleteOpts{Cascade: true})
	}
	if !isCode(err, http.StatusBadRequest) {
		t.Errorf("unknown availability zone: want 400, got %v", err)
	}
}

func tagFilters(t *testing.T, tg target) {
	ctx := context.Background()
	networkID, _ := scratchSubnet(t, tg)
	if _, err := tg.clients.Network.ReplaceAllTags(ctx, "networks", networkID, attributestags.ReplaceAllOpts{Tags: []string{"capo-contract", "a"}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		opts networks.ListOpts
		want bool
	}{
		{networks.ListOpts{ID: networkID, Tags: "capo-contract,a"}, true},
		{networks.ListOpts{ID: networkID, Tags: "capo-contract,b"}, false},
		{networks.ListOpts{ID: networkID, TagsAny: "b,a"}, true},
		{networks.ListOpts{ID: networkID, NotTags: "capo-contract,a"}, false},
		{networks.ListOpts{ID: networkID, NotTagsAny: "b"}, true},
	} {
		got, err := tg.clients.Network.ListNetworks(ctx, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if (len(got) == 1) != tc.want {
			t.Errorf("filter %+v: found %d networks, want match=%v", tc.opts, len(got), tc.want)
		}
	}
}
