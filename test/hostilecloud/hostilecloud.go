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

// Package hostilecloud is an OpenStack as a tenant's own auth_url could name one: Keystone and
// every service the manager calls, answering with objects missing, keys of the wrong type,
// bodies that never end, endless pages, no answer at all, or redirects elsewhere. The tests of
// the clients (pkg/scope) and of the controllers drive the manager's own code through it.
//
// One server serves every case at once, each under a path of its own: under Keystone(i),
// Keystone itself answers the token request with Answers[i]; under Services(i), Keystone is
// honest and gives a catalog whose every service answers with Answers[i].
package hostilecloud

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// ID is the ID the tests call methods with; Collection skips it in paths.
const ID = "id-x"

// Answer is one kind of hostile answer to a request.
type Answer struct {
	Name  string
	write func(w http.ResponseWriter, r *http.Request, c *Cloud)
}

// NoAnswer is the name of the answer that never comes: the client's timeout must end it.
const NoAnswer = "no answer"

// Answers are every kind of hostile answer.
var Answers = []Answer{
	{"an empty object", func(w http.ResponseWriter, r *http.Request, _ *Cloud) {
		w.WriteHeader(successFor(r))
		_, _ = w.Write([]byte(`{}`))
	}},
	{"null", func(w http.ResponseWriter, r *http.Request, _ *Cloud) {
		w.WriteHeader(successFor(r))
		_, _ = w.Write([]byte(`null`))
	}},
	{"a list where an object belongs", func(w http.ResponseWriter, r *http.Request, _ *Cloud) {
		w.WriteHeader(successFor(r))
		_, _ = w.Write([]byte(`[1, 2, 3]`))
	}},
	{"the resource's keys with null", func(w http.ResponseWriter, r *http.Request, _ *Cloud) {
		plural, singular := Collection(r.URL.Path)
		w.WriteHeader(successFor(r))
		_, _ = fmt.Fprintf(w, `{%q: null, %q: null, "token": null}`, plural, singular)
	}},
	{"the resource's keys with the wrong types", func(w http.ResponseWriter, r *http.Request, _ *Cloud) {
		plural, singular := Collection(r.URL.Path)
		w.WriteHeader(successFor(r))
		_, _ = fmt.Fprintf(w, `{%q: "x", %q: 42, "token": "t"}`, plural, singular)
	}},
	{"objects whose fields have the wrong types", func(w http.ResponseWriter, r *http.Request, _ *Cloud) {
		plural, singular := Collection(r.URL.Path)
		w.WriteHeader(successFor(r))
		bad := `{"id": 7, "name": ["n"], "status": {}, "provisioning_status": 1, "fixed_ips": "x", "tags": "t", "addresses": 3, ` +
			`"listeners": "l", "members": {}, "catalog": "c", "project": "p", "expires_at": 5}`
		_, _ = fmt.Fprintf(w, `{%q: [%s], %q: %s, "token": %s}`, plural, bad, singular, bad, bad)
	}},
	{"objects without an ID", func(w http.ResponseWriter, r *http.Request, _ *Cloud) {
		plural, singular := Collection(r.URL.Path)
		w.WriteHeader(successFor(r))
		_, _ = fmt.Fprintf(w, `{%q: [{"name": "n"}], %q: {"name": "n"}, "token": {"catalog": [{"type": "network", "endpoints": [{"interface": "public"}]}]}}`, plural, singular)
	}},
	{"a truncated body", func(w http.ResponseWriter, r *http.Request, _ *Cloud) {
		plural, _ := Collection(r.URL.Path)
		w.WriteHeader(successFor(r))
		_, _ = fmt.Fprintf(w, `{%q: [{"id": "a", "na`, plural)
	}},
	{"an HTML error page", func(w http.ResponseWriter, _ *http.Request, _ *Cloud) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`<html><body>Internal Server Error</body></html>`))
	}},
	{"a body that never ends", func(w http.ResponseWriter, r *http.Request, _ *Cloud) {
		plural, _ := Collection(r.URL.Path)
		w.WriteHeader(successFor(r))
		if _, err := fmt.Fprintf(w, `{%q: [{"id": "a", "name": "`, plural); err != nil {
			return
		}
		chunk := []byte(strings.Repeat("a", 64<<10))
		// Until the client hangs up, or 1 GiB.
		for i := 0; i < 1<<14 && r.Context().Err() == nil; i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}},
	{"endless next pages", func(w http.ResponseWriter, r *http.Request, _ *Cloud) {
		plural, singular := Collection(r.URL.Path)
		marker := r.URL.Query().Get("marker") + "p"
		next := fmt.Sprintf("http://%s%s?marker=%s", r.Host, r.URL.Path, marker)
		w.WriteHeader(successFor(r))
		_, _ = fmt.Fprintf(w, `{%q: [{"id": %q, "name": "n"}], "%s_links": [{"rel": "next", "href": %q}], "next": %q, %q: {"id": %q}}`,
			plural, marker, plural, next, r.URL.Path+"?marker="+marker, singular, marker)
	}},
	{"a redirect elsewhere", func(w http.ResponseWriter, r *http.Request, c *Cloud) {
		http.Redirect(w, r, c.trap.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}},
	{NoAnswer, func(_ http.ResponseWriter, r *http.Request, c *Cloud) {
		select {
		case <-r.Context().Done():
		case <-c.done:
		case <-time.After(2 * time.Minute):
		}
	}},
}

// Collection is the resource a request is about, from its path: the last segment that is not
// the tests' ID nor a verb (…/networks/id-x/tags is about tags; /servers/detail about servers).
func Collection(path string) (plural, singular string) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i := len(segs) - 1; i >= 0; i-- {
		switch s := segs[i]; s {
		case ID, "detail", "action", "statuses", "":
		default:
			plural = strings.ReplaceAll(s, "-", "_")
			return plural, strings.TrimSuffix(plural, "s")
		}
	}
	return "", ""
}

// successFor is the status a real service gives a success of the request's method.
func successFor(r *http.Request) int {
	switch r.Method {
	case http.MethodPost:
		return http.StatusCreated
	case http.MethodDelete:
		return http.StatusNoContent
	}
	return http.StatusOK
}

// Cloud is the hostile cloud's server.
type Cloud struct {
	server, trap *httptest.Server
	done         chan struct{}
	trapped      atomic.Int32
	requests     atomic.Int32
	// hostileRoots makes the services' version documents hostile too (they are honest until
	// the clients are made).
	hostileRoots atomic.Bool
}

// New starts the hostile cloud on the loopback address; Close stops it.
func New() *Cloud {
	c, err := NewOn("127.0.0.1")
	if err != nil {
		panic(err) // as httptest.NewServer does
	}
	return c
}

// NewOn starts the hostile cloud on an address of this machine, host, which a manager in a pod
// can reach (the node's address); Close stops it.
func NewOn(host string) (*Cloud, error) {
	c := &Cloud{done: make(chan struct{})}
	start := func(h http.Handler) (*httptest.Server, error) {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, fmt.Errorf("listening on %s: %w", host, err)
		}
		s := httptest.NewUnstartedServer(h)
		_ = s.Listener.Close()
		s.Listener = l
		s.Start()
		return s, nil
	}
	var err error
	if c.trap, err = start(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		c.trapped.Add(1)
		_, _ = w.Write([]byte(`{}`))
	})); err != nil {
		return nil, err
	}
	if c.server, err = start(http.HandlerFunc(c.serve)); err != nil {
		c.trap.Close()
		return nil, err
	}
	return c, nil
}

// Close ends the answers still being written or withheld, then stops the servers.
func (c *Cloud) Close() {
	close(c.done)
	c.server.CloseClientConnections()
	c.server.Close()
	c.trap.Close()
}

// Keystone is the auth_url under which Keystone itself answers with Answers[i].
func (c *Cloud) Keystone(i int) string { return fmt.Sprintf("%s/k%d/v3", c.server.URL, i) }

// Services is the auth_url of an honest Keystone whose catalog's services answer with Answers[i].
func (c *Cloud) Services(i int) string { return fmt.Sprintf("%s/s%d/v3", c.server.URL, i) }

// Trapped is how many requests followed a redirect.
func (c *Cloud) Trapped() int { return int(c.trapped.Load()) }

// Requests is how many service requests got a hostile answer.
func (c *Cloud) Requests() int { return int(c.requests.Load()) }

// HostileRoots makes the services' version documents hostile as well.
func (c *Cloud) HostileRoots() { c.hostileRoots.Store(true) }

// CloudsYAML is a clouds.yaml whose cloud "openstack" authenticates at authURL with password.
func CloudsYAML(authURL, password string) string {
	return fmt.Sprintf(`clouds:
  openstack:
    auth:
      auth_url: %s
      username: demo
      password: %s
      project_name: demo
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
`, authURL, password)
}

func (c *Cloud) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	// /<k|s><i>/<rest>
	head, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	i, err := strconv.Atoi(head[min(1, len(head)):])
	if err != nil || i < 0 || i >= len(Answers) {
		http.NotFound(w, r)
		return
	}
	answer := Answers[i]
	if rest == "v3/auth/tokens" {
		w.Header().Set("X-Subject-Token", "token-1")
		if head[0] == 'k' {
			answer.write(w, r, c)
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(c.token(head)))
		return
	}
	if !strings.Contains(strings.Trim(rest, "/"), "/") && !c.hostileRoots.Load() {
		// A service's root: its version document.
		_, _ = w.Write([]byte(`{"versions":[{"id":"v2.0","status":"CURRENT"},{"id":"v3.0","status":"CURRENT"}]}`))
		return
	}
	c.requests.Add(1)
	answer.write(w, r, c)
}

// token is an honest token whose catalog has every service under /<head>/<service>.
func (c *Cloud) token(head string) string {
	var services []string
	for _, svc := range []string{"network", "load-balancer", "compute", "image", "block-storage"} {
		services = append(services, fmt.Sprintf(`{"type":%q,"name":%q,"endpoints":[{"id":"%s-1","interface":"public","region":"RegionOne","region_id":"RegionOne","url":"%s/%s/%s"}]}`,
			svc, svc, svc, c.server.URL, head, svc))
	}
	return `{"token":{"expires_at":"2099-01-01T00:00:00.000000Z","methods":["password"],` +
		`"project":{"id":"project-1","name":"demo","domain":{"id":"default","name":"Default"}},` +
		`"catalog":[` + strings.Join(services, ",") + `]}}`
}
