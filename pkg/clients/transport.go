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
	"io"
	"net/http"
	"sync/atomic"
)

// MaxResponseBody is the most the clients read of an answer's body: 16 MiB, well above what a
// list in a busy project returns. A cloud is whatever auth_url a tenant names, and an answer read
// without a bound could take the manager's memory, and every tenant's admission with it.
const MaxResponseBody = 16 << 20

// ErrResponseTooLarge is what reading past MaxResponseBody returns.
var ErrResponseTooLarge = errors.New("the answer's body is larger than the clients read")

// LimitBodies wraps next so that reading any answer's body past limit bytes fails with
// ErrResponseTooLarge.
func LimitBodies(next http.RoundTripper, limit int64) http.RoundTripper {
	return limitedTransport{next: next, limit: limit}
}

type limitedTransport struct {
	next  http.RoundTripper
	limit int64
}

func (t limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	budget := listBudgetOf(req.Context())
	if budget != nil && budget.requests.Add(-1) < 0 {
		return nil, fmt.Errorf("%w (%d)", ErrTooManyPages, MaxPages) // no request past the bound is sent
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	limit := t.limit
	if budget != nil {
		limit = min(limit, budget.bytes.Load())
	}
	if resp.ContentLength > limit {
		_ = resp.Body.Close()
		return nil, fmt.Errorf("%w (%d bytes announced, at most %d read)", ErrResponseTooLarge, resp.ContentLength, limit)
	}
	resp.Body = &limitedBody{body: resp.Body, left: limit, budget: budget}
	return resp, nil
}

// listBudget is what the answers of one list (allPages) may still take: requests (pages) and
// bytes together. It rides in the requests' context.
type listBudget struct {
	bytes, requests atomic.Int64
}

type budgetKey struct{}

func withListBudget(ctx context.Context, bytes, requests int64) context.Context {
	b := &listBudget{}
	b.bytes.Store(bytes)
	b.requests.Store(requests)
	return context.WithValue(ctx, budgetKey{}, b)
}

func listBudgetOf(ctx context.Context) *listBudget {
	b, _ := ctx.Value(budgetKey{}).(*listBudget)
	return b
}

// limitedBody reads at most left bytes of body, then fails; what it reads also comes off the
// list's budget, when it has one.
type limitedBody struct {
	body   io.ReadCloser
	left   int64
	budget *listBudget
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly the limit from a longer one.
		var one [1]byte
		if n, _ := b.body.Read(one[:]); n > 0 {
			return 0, ErrResponseTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	if b.budget != nil {
		b.budget.bytes.Add(-int64(n))
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.body.Close() }
