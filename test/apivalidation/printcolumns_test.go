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

package apivalidation

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// TestPrinterColumns asks the API server for the Table form of each kind, as kubectl get does,
// and checks every column and its value for an object that looks converged. A column whose
// JSONPath does not parse makes the API server drop every column, and a JSONPath with [*] shows
// only the first element: both are caught here.
func TestPrinterColumns(t *testing.T) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "printer-columns"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kind, resource, object, status string
		// columns are the columns kubectl get shows; wide are those of -o wide too.
		columns, wide []string
		// cells are the values of the columns, Age left out.
		cells map[string]any
	}{{
		kind: "OpenStackCluster", resource: "openstackclusters",
		object: `
metadata:
  name: c1
  labels: {cluster.x-k8s.io/cluster-name: prod}
spec:
  controlPlaneEndpoint: {host: api.prod.example.com, port: 6443}
  apiServerLoadBalancer:
    enabled: true
    network: {id: 6c90b532-7ba0-418a-a276-5ae55060b5b0}
    availabilityZoneSubnets:
    - {availabilityZone: az1, subnet: {id: cad5a91a-36de-4388-823b-b0cc82cadfdc}}
    - {availabilityZone: az2, subnet: {id: e2407c18-c4e7-4d3d-befa-8eec5d8756f2}}`,
		status: `
zonesReady: 2/2
conditions:
- {type: Ready, status: "True", reason: Ready, message: ok, lastTransitionTime: "2026-11-23T10:00:00Z"}
apiServerLoadBalancers:
- {name: lb1, id: id1, ip: 172.24.4.10, internalIP: 10.20.0.5, availabilityZone: az1}
- {name: lb2, id: id2, ip: 172.24.4.11, internalIP: 10.20.1.5, availabilityZone: az2}
bastion: {id: id3, name: prod-bastion, state: ACTIVE, ip: 10.20.0.9, floatingIP: 172.24.4.12}`,
		columns: []string{"Name", "Cluster", "Ready", "Endpoint", "Zones", "Age"},
		wide:    []string{"Bastion IP"},
		cells: map[string]any{"Name": "c1", "Cluster": "prod", "Ready": "True", "Endpoint": "api.prod.example.com", "Zones": "2/2",
			"Bastion IP": "172.24.4.12"},
	}, {
		kind: "OpenStackMachine", resource: "openstackmachines",
		object: `
metadata:
  name: m1
  labels: {cluster.x-k8s.io/cluster-name: prod}
  ownerReferences:
  - {apiVersion: cluster.x-k8s.io/v1beta2, kind: Machine, name: prod-cp-abcde, uid: 6b1d8a7c-0000-4000-8000-000000000001}
spec:
  providerID: openstack:///b1e2c3d4-0000-4000-8000-000000000002
  flavor: m1.medium
  image: {filter: {name: ubuntu}}`,
		status: `
failureDomain: az2
instanceState: ACTIVE
conditions:
- {type: Ready, status: "True", reason: Ready, message: ok, lastTransitionTime: "2026-11-23T10:00:00Z"}`,
		columns: []string{"Name", "Cluster", "Failure Domain", "State", "Ready", "ProviderID", "Age"},
		wide:    []string{"Machine"},
		cells: map[string]any{"Name": "m1", "Cluster": "prod", "Failure Domain": "az2", "State": "ACTIVE", "Ready": "True",
			"ProviderID": "openstack:///b1e2c3d4-0000-4000-8000-000000000002", "Machine": "prod-cp-abcde"},
	}, {
		kind: "OpenStackClusterTemplate", resource: "openstackclustertemplates",
		object: `
metadata: {name: ct}
spec:
  template:
    spec:
      apiServerLoadBalancer:
        enabled: true
        network: {id: 6c90b532-7ba0-418a-a276-5ae55060b5b0}
        availabilityZoneSubnets:
        - {availabilityZone: az1, subnet: {id: cad5a91a-36de-4388-823b-b0cc82cadfdc}}
        - {availabilityZone: az2, subnet: {id: e2407c18-c4e7-4d3d-befa-8eec5d8756f2}}`,
		columns: []string{"Name", "Age"},
		cells:   map[string]any{"Name": "ct"},
	}, {
		kind: "OpenStackMachineTemplate", resource: "openstackmachinetemplates",
		object: `
metadata: {name: mt}
spec:
  template:
    spec:
      flavor: m1.medium
      image: {filter: {name: ubuntu-2404}}`,
		columns: []string{"Name", "Flavor", "Image", "Age"},
		cells:   map[string]any{"Name": "mt", "Flavor": "m1.medium", "Image": "ubuntu-2404"},
	}} {
		t.Run(tc.kind, func(t *testing.T) {
			g := NewWithT(t)
			obj := &unstructured.Unstructured{}
			g.Expect(yaml.Unmarshal([]byte(tc.object), &obj.Object)).To(Succeed())
			obj.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta1")
			obj.SetKind(tc.kind)
			obj.SetNamespace(ns.Name)
			g.Expect(env.Client.Create(ctx, obj)).To(Succeed())
			if tc.status != "" {
				status := map[string]any{}
				g.Expect(yaml.Unmarshal([]byte(tc.status), &status)).To(Succeed())
				g.Expect(unstructured.SetNestedMap(obj.Object, status, "status")).To(Succeed())
				g.Expect(env.Client.Status().Update(ctx, obj)).To(Succeed())
			}

			// kubectl asks for v1beta2, the version it prefers; v1beta1 when named: both show the same.
			for _, version := range []string{"v1beta1", "v1beta2"} {
				table := getTable(g, fmt.Sprintf("/apis/infrastructure.cluster.x-k8s.io/%s/namespaces/%s/%s/%s", version, ns.Name, tc.resource, obj.GetName()))
				var shown, wide []string
				for _, c := range table.ColumnDefinitions {
					if c.Priority == 0 {
						shown = append(shown, c.Name)
					} else {
						wide = append(wide, c.Name)
					}
				}
				g.Expect(shown).To(Equal(tc.columns), "the columns of kubectl get, %s", version)
				g.Expect(wide).To(Equal(tc.wide), "the columns kubectl get -o wide adds")
				g.Expect(table.Rows).To(HaveLen(1))
				cells := table.Rows[0].Cells
				g.Expect(cells).To(HaveLen(len(table.ColumnDefinitions)))
				for i, c := range table.ColumnDefinitions {
					if c.Name == "Age" {
						g.Expect(cells[i]).NotTo(BeEmpty(), "age")
						continue
					}
					g.Expect(cells[i]).To(Equal(tc.cells[c.Name]), "column %s, %s", c.Name, version)
				}
			}
		})
	}
}

// getTable reads path in the Table form kubectl asks for.
func getTable(g Gomega, path string) *metav1.Table {
	httpClient, err := rest.HTTPClientFor(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(env.Config.Host, "/")+path, nil)
	g.Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := httpClient.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK), "%s %s: %s", env.Config.Host, path, body)
	table := &metav1.Table{}
	g.Expect(json.Unmarshal(body, table)).To(Succeed())
	g.Expect(table.Kind).To(Equal("Table"))
	return table
}
