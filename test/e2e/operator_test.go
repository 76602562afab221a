//go:build e2e

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

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capo-multiaz/cluster-api-provider-openstack/test/envtestutil"
)

// What an operator sees of a converged cluster: kubectl get's columns, and the metrics the
// dashboard in docs/ shows, as the manager running from the release's image exports them.

// expectTableRow asks the API server for the Table form of an OpenStackCluster, as kubectl get
// does, and checks the cells of the named columns.
func expectTableRow(ctx context.Context, g Gomega, key client.ObjectKey, want map[string]any) {
	restConfig, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	g.Expect(err).NotTo(HaveOccurred())
	httpClient, err := rest.HTTPClientFor(restConfig)
	g.Expect(err).NotTo(HaveOccurred())
	url := fmt.Sprintf("%s/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/%s/openstackclusters/%s",
		strings.TrimSuffix(restConfig.Host, "/"), key.Namespace, key.Name)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	g.Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := httpClient.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK), string(body))
	table := &metav1.Table{}
	g.Expect(json.Unmarshal(body, table)).To(Succeed())
	g.Expect(table.Rows).To(HaveLen(1))
	got := map[string]any{}
	for i, c := range table.ColumnDefinitions {
		got[c.Name] = table.Rows[0].Cells[i]
	}
	for column, value := range want {
		g.Expect(got).To(HaveKeyWithValue(column, value))
	}
}

// exportedMetrics reads the families the leading provider pod's manager exports.
func exportedMetrics(ctx context.Context, g Gomega) map[string]bool {
	families := map[string]bool{}
	for _, line := range providerMetrics(ctx, g) {
		if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
			families[strings.Fields(name)[0]] = true
		}
	}
	return families
}

// dashboardPath is the Grafana dashboard of docs/.
func dashboardPath() string {
	return filepath.Join(envtestutil.RepoRoot(), "docs", "grafana-dashboard.json")
}

var _ = Describe("The provider's manager", func() {
	It("has every permission it uses: its pods' logs hold no refusal of the API server", func(ctx SpecContext) {
		log := providerLogs(ctx)
		Expect(log).NotTo(BeEmpty())
		var refused []string
		for _, line := range strings.Split(log, "\n") {
			if strings.Contains(line, " is forbidden: ") {
				refused = append(refused, line)
			}
		}
		Expect(refused).To(BeEmpty(), "the components' RBAC misses what these lines needed")
	})
})
