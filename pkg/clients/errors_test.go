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
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	. "github.com/onsi/gomega"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
)

func answered(status int, header http.Header) error {
	return gophercloud.ErrUnexpectedResponseCode{Actual: status, ResponseHeader: header, Body: []byte(`{}`)}
}

func TestFaultOfTellsTheCloudsFaultsFromTheObjects(t *testing.T) {
	g := NewWithT(t)
	limited := WrapCall(serviceLoadBalancer, "ListLoadBalancers", answered(http.StatusTooManyRequests, http.Header{"Retry-After": {"30"}}))
	f, ok := FaultOf(fmt.Errorf("listing load balancers: %w", limited))
	g.Expect(ok).To(BeTrue())
	g.Expect(f).To(Equal(Fault{Service: "loadbalancer", Operation: "ListLoadBalancers", Status: 429, RetryAfter: 30 * time.Second}))
	g.Expect(f.String()).To(Equal("Octavia (loadbalancer API) answered HTTP 429 Too Many Requests to ListLoadBalancers"))
	g.Expect(limited.Error()).To(Equal("Octavia (loadbalancer API) answered HTTP 429 Too Many Requests to ListLoadBalancers"),
		"the service, the operation and the status: not the answer's body")

	for _, status := range []int{401, 403, 500, 502, 503} {
		f, ok := FaultOf(WrapCall(serviceNetwork, "ListPorts", answered(status, nil)))
		g.Expect(ok).To(BeTrue(), "%d", status)
		g.Expect(f.Status).To(Equal(status))
	}
	for _, status := range []int{400, 404, 409} {
		_, ok := FaultOf(WrapCall(serviceNetwork, "ListPorts", answered(status, nil)))
		g.Expect(ok).To(BeFalse(), "%d says something about the object, not the cloud", status)
	}

	f, ok = FaultOf(WrapCall(serviceCompute, "GetServer", context.DeadlineExceeded))
	g.Expect(ok).To(BeTrue())
	g.Expect(f.String()).To(Equal("Nova (compute API) did not answer to GetServer"))

	// One zone's 503 among other errors, as the per-zone reconcile aggregates them.
	agg := kerrors.NewAggregate([]error{errors.New("zone az1: spec problem"), WrapCall(serviceLoadBalancer, "GetLoadBalancer", answered(503, nil))})
	f, ok = FaultOf(agg)
	g.Expect(ok).To(BeTrue())
	g.Expect(f.Status).To(Equal(503))
	_, ok = FaultOf(errors.Join(errors.New("a"), errors.New("b")))
	g.Expect(ok).To(BeFalse())
	_, ok = FaultOf(nil)
	g.Expect(ok).To(BeFalse())
}

// What a cloud answers is never repeated: a tenant's auth_url may name an internal service whose
// answers the tenant must not read in its conditions.
func TestCallErrorsNeverCarryTheAnswersBody(t *testing.T) {
	g := NewWithT(t)
	secret := gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusBadRequest, URL: "http://10.0.0.1:8500/v1/kv/secret",
		Method: "GET", Body: []byte(`{"token":"s3cr3t"}`)}
	for _, err := range []error{
		WrapCall(ServiceIdentity, "Authenticate", secret),
		WrapCall(serviceLoadBalancer, "CreateLoadBalancer", gophercloud.ErrResourceNotFound{}),
		WrapCall(serviceNetwork, "ListPorts", fmt.Errorf("decoding: %w", secret)),
		// No answer: Go's error names the URL, which may carry credentials.
		WrapCall(serviceNetwork, "ListPorts", fmt.Errorf("request: %w", &url.Error{Op: "Get", URL: "http://admin:s3cr3t@10.0.0.1:9696/v2.0/ports", Err: syscall.ECONNREFUSED})),
	} {
		msg := fmt.Errorf("creating it: %w", err).Error()
		g.Expect(msg).NotTo(ContainSubstring("s3cr3t"))
		g.Expect(msg).NotTo(ContainSubstring("10.0.0.1"))
	}
	g.Expect(WrapCall(ServiceIdentity, "Authenticate", secret).Error()).To(Equal("Keystone (identity API) answered HTTP 400 Bad Request to Authenticate"))
	g.Expect(WrapCall(serviceCompute, "GetServer", context.DeadlineExceeded).Error()).To(Equal("Nova (compute API), GetServer: context deadline exceeded"))
	g.Expect(WrapCall(serviceCompute, "GetServer", &url.Error{Op: "Get", URL: "https://nova.internal:8774/v2.1/servers/x", Err: syscall.ECONNREFUSED}).Error()).To(
		Equal("Nova (compute API), GetServer: Get: connection refused"))
}
