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
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	. "github.com/onsi/gomega"
)

// A hostile cloud, as a tenant's auth_url may name one: answers without the object, objects
// without an ID, endless pages and pages too large together end in errors that name the service
// and the operation, never in a value to dereference or in the manager's memory.

// hostileNeutron serves handler as Neutron, through the same bounded transport the manager uses.
func hostileNeutron(t *testing.T, handler http.HandlerFunc) NetworkClient {
	t.Helper()
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		handler(w, r)
	}))
	t.Cleanup(server.Close)
	provider := &gophercloud.ProviderClient{HTTPClient: http.Client{Transport: LimitBodies(http.DefaultTransport, MaxResponseBody)}}
	return NewNetworkClient(&gophercloud.ServiceClient{ProviderClient: provider, Endpoint: server.URL + "/", ResourceBase: server.URL + "/v2.0/"})
}

func TestHostileAnswersEndInErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("201 {} to a create: no object", func(t *testing.T) {
		g := NewWithT(t)
		c := hostileNeutron(t, func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{}`))
		})
		sg, err := c.CreateSecGroup(ctx, groups.CreateOpts{Name: "g"})
		g.Expect(sg).To(BeNil())
		g.Expect(errors.Is(err, ErrMalformedAnswer)).To(BeTrue(), "%v", err)
		g.Expect(err.Error()).To(ContainSubstring("CreateSecGroup"))
	})
	t.Run("an object without an ID", func(t *testing.T) {
		g := NewWithT(t)
		c := hostileNeutron(t, func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"network": {"name": "n"}}`))
		})
		n, err := c.GetNetwork(ctx, "x")
		g.Expect(n).To(BeNil())
		g.Expect(errors.Is(err, ErrMalformedAnswer)).To(BeTrue(), "%v", err)
		g.Expect(err.Error()).To(ContainSubstring("GetNetwork"))
	})
	t.Run("endless next links", func(t *testing.T) {
		g := NewWithT(t)
		served := 0
		c := hostileNeutron(t, func(w http.ResponseWriter, r *http.Request) {
			served++
			_, _ = fmt.Fprintf(w, `{"networks": [{"id": "n%d"}], "networks_links": [{"rel": "next", "href": "http://%s/v2.0/networks?marker=n%d"}]}`, served, r.Host, served)
		})
		got, err := c.ListNetworks(ctx, networks.ListOpts{})
		g.Expect(got).To(BeEmpty())
		g.Expect(errors.Is(err, ErrTooManyPages)).To(BeTrue(), "%v", err)
		g.Expect(served).To(Equal(MaxPages), "no page past the bound is asked for")
	})
	t.Run("pages too large together", func(t *testing.T) {
		g := NewWithT(t)
		served := 0
		filler := strings.Repeat("x", 4<<20)
		c := hostileNeutron(t, func(w http.ResponseWriter, r *http.Request) {
			served++
			_, _ = fmt.Fprintf(w, `{"networks": [{"id": "n%d", "description": "%s"}], "networks_links": [{"rel": "next", "href": "http://%s/v2.0/networks?marker=n%d"}]}`,
				served, filler, r.Host, served)
		})
		_, err := c.ListNetworks(ctx, networks.ListOpts{})
		g.Expect(errors.Is(err, ErrResponseTooLarge)).To(BeTrue(), "%v", err)
		g.Expect(served).To(BeNumerically("<=", MaxListBody/(4<<20)+1), "no page is read once the list's budget is spent")
	})
	t.Run("a few honest pages", func(t *testing.T) {
		g := NewWithT(t)
		served := 0
		c := hostileNeutron(t, func(w http.ResponseWriter, r *http.Request) {
			served++
			next := ""
			if served < 3 {
				next = fmt.Sprintf(`, "networks_links": [{"rel": "next", "href": "http://%s/v2.0/networks?marker=n%d"}]`, r.Host, served)
			}
			_, _ = fmt.Fprintf(w, `{"networks": [{"id": "n%d"}]%s}`, served, next)
		})
		got, err := c.ListNetworks(ctx, networks.ListOpts{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(HaveLen(3))
	})
}

// A list that is one page whose body is an object (Nova's availability zones) is read as
// gophercloud reads it, within the list's bounds.
func TestASinglePageListIsReadWithinTheBounds(t *testing.T) {
	g := NewWithT(t)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"availabilityZoneInfo": [{"zoneName": "az1", "zoneState": {"available": true}}, {"zoneName": "az2", "zoneState": {"available": true}}]}`))
	}))
	defer server.Close()
	provider := &gophercloud.ProviderClient{HTTPClient: http.Client{Transport: LimitBodies(http.DefaultTransport, MaxResponseBody)}}
	c := NewComputeClient(&gophercloud.ServiceClient{ProviderClient: provider, Endpoint: server.URL + "/", ResourceBase: server.URL + "/"})
	zones, err := c.ListAvailabilityZones(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(zones).To(HaveLen(2))
}
