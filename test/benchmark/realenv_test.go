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
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
)

// realCloud is the cloud the real-cloud benchmarks run against, from CAPO_BENCH_CLOUDS_YAML,
// CAPO_BENCH_CLOUD and CAPO_BENCH_ZONES (default az1,az2); the benchmark is skipped without one.
func realCloud(b *testing.B) (cloudsYAML []byte, cloudName string, zones []string) {
	path, cloudName := os.Getenv("CAPO_BENCH_CLOUDS_YAML"), os.Getenv("CAPO_BENCH_CLOUD")
	if path == "" || cloudName == "" {
		b.Skip("CAPO_BENCH_CLOUDS_YAML and CAPO_BENCH_CLOUD are not set")
	}
	zones = strings.Split(os.Getenv("CAPO_BENCH_ZONES"), ",")
	if zones[0] == "" {
		zones = []string{"az1", "az2"}
	}
	cloudsYAML, err := os.ReadFile(path)
	must(b, err)
	return cloudsYAML, cloudName, zones
}

// benchIdentity is the identity Secret of namespace ns holding cloudsYAML, the reference to it,
// and clients made from it for the benchmark's own checks.
func benchIdentity(ctx context.Context, b *testing.B, scheme *runtime.Scheme, ns string, cloudsYAML []byte, cloudName string) (*corev1.Secret, *infrav1.OpenStackIdentityReference, *scope.Clients) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cloud", Namespace: ns}, Data: map[string][]byte{scope.CloudsSecretKey: cloudsYAML}}
	ref := &infrav1.OpenStackIdentityReference{Name: "cloud", CloudName: cloudName}
	factory := &scope.SecretFactory{Reader: fakeclient.NewClientBuilder().WithScheme(scheme).WithObjects(secret).Build(), Log: logr.Discard()}
	cl, err := factory.NewClients(ctx, ns, ref)
	must(b, err)
	return secret, ref, cl
}

// operatorLBNetwork creates what an operator prepares for per-zone load balancers: a network
// with one subnet per zone, routed to the external network. It returns the network's ID and the
// zone mappings; cleanup receives what deletes them, to run in reverse order.
func operatorLBNetwork(ctx context.Context, b *testing.B, cl *scope.Clients, name string, zones []string, cleanup *[]func()) (string, []infrav1.AZSubnetMapping) {
	lbNet, err := cl.Network.CreateNetwork(ctx, networks.CreateOpts{Name: name + "-lb"})
	must(b, err)
	*cleanup = append(*cleanup, func() { _ = cl.Network.DeleteNetwork(ctx, lbNet.ID) })
	ext, err := cl.Network.ListNetworks(ctx, externalOnly{})
	must(b, err)
	if len(ext) == 0 {
		b.Fatal("no external network")
	}
	router, err := cl.Network.CreateRouter(ctx, routers.CreateOpts{Name: name + "-lb", GatewayInfo: &routers.GatewayInfo{NetworkID: ext[0].ID}})
	must(b, err)
	*cleanup = append(*cleanup, func() { _ = cl.Network.DeleteRouter(ctx, router.ID) })
	var mapping []infrav1.AZSubnetMapping
	for i, az := range zones {
		sn, err := cl.Network.CreateSubnet(ctx, subnets.CreateOpts{NetworkID: lbNet.ID, Name: name + "-lb-" + az, IPVersion: 4, CIDR: fmt.Sprintf("10.30.%d.0/24", i)})
		must(b, err)
		_, err = cl.Network.AddRouterInterface(ctx, router.ID, routers.AddInterfaceOpts{SubnetID: sn.ID})
		must(b, err)
		*cleanup = append(*cleanup, func() {
			_, _ = cl.Network.RemoveRouterInterface(ctx, router.ID, routers.RemoveInterfaceOpts{SubnetID: sn.ID})
		})
		mapping = append(mapping, infrav1.AZSubnetMapping{AvailabilityZone: az, Subnet: infrav1.SubnetParam{ID: ptr.To(sn.ID)}})
	}
	return lbNet.ID, mapping
}
