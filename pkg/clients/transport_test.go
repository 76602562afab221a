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
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestAnswersAreReadUpToTheLimit(t *testing.T) {
	g := NewWithT(t)
	size := 0
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("chunked") != "" {
			w.(http.Flusher).Flush() // no Content-Length: the body is chunked
		}
		_, _ = w.Write([]byte(strings.Repeat("x", size)))
	}))
	defer server.Close()
	c := &http.Client{Transport: LimitBodies(http.DefaultTransport, 1000)}
	read := func(query string) (int, error) {
		resp, err := c.Get(server.URL + query)
		if err != nil {
			return 0, err
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		return len(body), err
	}

	for _, query := range []string{"", "?chunked=1"} {
		size = 1000
		n, err := read(query)
		g.Expect(err).NotTo(HaveOccurred(), "exactly the limit %q", query)
		g.Expect(n).To(Equal(1000))

		size = 1001
		_, err = read(query)
		g.Expect(err).To(MatchError(ContainSubstring(ErrResponseTooLarge.Error())), "one byte past the limit %q", query)

		size = 5 << 20
		_, err = read(query)
		g.Expect(err).To(MatchError(ContainSubstring(ErrResponseTooLarge.Error())), "far past the limit %q", query)
	}
}
