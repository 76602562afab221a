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

package clients

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

func serviceClient(url string) *gophercloud.ServiceClient {
	provider := &gophercloud.ProviderClient{HTTPClient: *http.DefaultClient}
	return &gophercloud.ServiceClient{ProviderClient: provider, Endpoint: url + "/", ResourceBase: url + "/v2.0/"}
}

func TestEveryCallIsCountedByStatusClass(t *testing.T) {
	g := NewWithT(t)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v2.0/networks/missing":
			w.WriteHeader(http.StatusNotFound)
		case "/v2.0/networks/broken":
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			_, _ = w.Write([]byte(`{"network":{"id":"ok","name":"n"}}`))
		}
	}))
	defer server.Close()
	network := NewNetworkClient(serviceClient(server.URL))

	count := func(code string) float64 {
		return testutil.ToFloat64(requestsTotal.WithLabelValues("network", "GetNetwork", code))
	}
	before2xx, before4xx, before5xx := count("2xx"), count("4xx"), count("5xx")

	n, err := network.GetNetwork(context.Background(), "ok")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n.ID).To(Equal("ok"))
	_, err = network.GetNetwork(context.Background(), "missing")
	g.Expect(gophercloud.ResponseCodeIs(err, http.StatusNotFound)).To(BeTrue())
	_, err = network.GetNetwork(context.Background(), "broken")
	g.Expect(err).To(HaveOccurred())

	g.Expect(count("2xx") - before2xx).To(Equal(1.0))
	g.Expect(count("4xx") - before4xx).To(Equal(1.0))
	g.Expect(count("5xx") - before5xx).To(Equal(1.0))

	// Both metrics are on controller-runtime's registry, which the manager serves.
	families, err := metrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
	}
	g.Expect(names).To(ContainElements("capo_openstack_api_requests_total", "capo_openstack_api_request_duration_seconds"))
}

func TestStatusClass(t *testing.T) {
	g := NewWithT(t)
	g.Expect(statusClass(nil)).To(Equal("2xx"))
	g.Expect(statusClass(gophercloud.ErrUnexpectedResponseCode{Actual: 409})).To(Equal("4xx"))
	g.Expect(statusClass(errors.New("dial tcp: connection refused"))).To(Equal("error"))
}
