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
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/internal/localenv"
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

// benchNamespace is the namespace of the real-cloud benchmarks' objects.
const benchNamespace = "bench"

// benchIdentity is the identity Secret of benchNamespace holding cloudsYAML, the reference to it,
// and clients made from it for the benchmark's own checks.
func benchIdentity(ctx context.Context, b *testing.B, scheme *runtime.Scheme, cloudsYAML []byte, cloudName string) (*corev1.Secret, *infrav1.OpenStackIdentityReference, *scope.Clients) {
	secret, ref, cl := benchIdentityWaiting(ctx, b, scheme, cloudsYAML, cloudName, 0)
	return secret, ref, cl
}

// benchIdentityWaiting is benchIdentity with clients whose requests wait up to timeout for an
// answer (0: the manager's default).
func benchIdentityWaiting(ctx context.Context, b *testing.B, scheme *runtime.Scheme, cloudsYAML []byte, cloudName string, timeout time.Duration) (*corev1.Secret, *infrav1.OpenStackIdentityReference, *scope.Clients) {
	ns := benchNamespace
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cloud", Namespace: ns}, Data: map[string][]byte{scope.CloudsSecretKey: cloudsYAML}}
	ref := &infrav1.OpenStackIdentityReference{Name: "cloud", CloudName: cloudName}
	factory := &scope.SecretFactory{Reader: fakeclient.NewClientBuilder().WithScheme(scheme).WithObjects(secret).Build(), Log: logr.Discard(), Timeout: timeout,
		AuthGrace: scope.AuthDeadline(timeout)}
	cl, err := factory.NewClients(ctx, ns, ref)
	must(b, err)
	return secret, ref, cl
}

// operatorLBNetwork creates what an operator prepares for per-zone load balancers (see
// localenv.EnsureLBNetwork). It returns the network's ID and the zone mappings; cleanup receives
// what deletes them.
func operatorLBNetwork(ctx context.Context, b *testing.B, cl *scope.Clients, name string, zones []string, cleanup *[]func()) (string, []infrav1.AZSubnetMapping) {
	lbNet, err := localenv.EnsureLBNetwork(ctx, cl, name, 30, zones)
	*cleanup = append(*cleanup, func() { _ = lbNet.Delete(ctx, cl) })
	must(b, err)
	return lbNet.NetworkID, lbNet.Mapping
}
