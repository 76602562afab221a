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

package scope

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
)

func TestAuthEndpointsMatchSchemeHostAndPort(t *testing.T) {
	for _, tc := range []struct {
		entry   string
		allowed []string
		refused []string
	}{
		{entry: "Keystone.example.com",
			allowed: []string{"http://keystone.example.com:5000/v3", "https://keystone.example.com/identity/v3", "http://KEYSTONE.example.com:80/v3"},
			refused: []string{"http://keystone.example.com:6379/", "https://keystone.example.com:8443/v3", "ftp://keystone.example.com/", "http://keystone.example.com.evil.org:5000/"}},
		{entry: "10.0.0.5:35357",
			allowed: []string{"http://10.0.0.5:35357/v3", "https://10.0.0.5:35357/v3"},
			refused: []string{"http://10.0.0.5:5000/v3", "http://10.0.0.5/v3"}},
		{entry: "https://id.example.org:5000",
			allowed: []string{"https://id.example.org:5000/v3"},
			refused: []string{"http://id.example.org:5000/v3", "https://id.example.org/v3"}},
		{entry: "https://id.example.org",
			allowed: []string{"https://id.example.org/v3", "https://id.example.org:5000/v3"},
			refused: []string{"http://id.example.org:5000/v3"}},
	} {
		t.Run(tc.entry, func(t *testing.T) {
			g := NewWithT(t)
			e, err := ParseAuthEndpoint(tc.entry)
			g.Expect(err).NotTo(HaveOccurred())
			for _, s := range tc.allowed {
				u, _ := url.Parse(s)
				g.Expect(e.allows(u)).To(BeTrue(), s)
			}
			for _, s := range tc.refused {
				u, _ := url.Parse(s)
				g.Expect(e.allows(u)).To(BeFalse(), s)
			}
		})
	}
	for _, bad := range []string{"http://user:pw@keystone:5000", "keystone:5000/v3", "ftp://keystone", "keystone?x=1", ""} {
		_, err := ParseAuthEndpoint(bad)
		NewWithT(t).Expect(err).To(HaveOccurred(), bad)
	}
}

// A redirect from a tenant's auth_url is never followed: it would take the manager where the
// allow-list did not look.
func TestRedirectsAreNotFollowed(t *testing.T) {
	g := NewWithT(t)
	followed := 0
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { followed++ }))
	defer target.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	f, _ := newFactory(t, logr.Discard(), secret(map[string]string{CloudsSecretKey: cloudsYAML(redirector.URL+"/v3", "")}))
	_, err := f.NewClients(context.Background(), "ns", ref)
	g.Expect(err).To(HaveOccurred())
	g.Expect(followed).To(BeZero(), "the manager asked only the auth_url")
}

// Many objects sharing a broken credential cost Keystone one request per FailedAuthMemory, and
// while one reconcile authenticates a credential the others do not wait on it.
func TestFailedAuthenticationIsRememberedPerCredential(t *testing.T) {
	g := NewWithT(t)
	k := newKeystone(t, false)
	wrong := secret(map[string]string{CloudsSecretKey: strings.Replace(cloudsYAML(k.server.URL, ""), password, "wrong", 1)})
	f, c := newFactory(t, logr.Discard(), wrong)
	for range 5 {
		_, err := f.NewClients(context.Background(), "ns", ref)
		g.Expect(err).To(MatchError(ContainSubstring("401")))
	}
	g.Expect(k.authCount()).To(Equal(1), "one request for five reconciles")

	// The Secret fixed: a new credential, asked at once.
	fixed := secret(map[string]string{CloudsSecretKey: cloudsYAML(k.server.URL, "")})
	g.Expect(c.Update(context.Background(), fixed)).To(Succeed())
	_, err := f.NewClients(context.Background(), "ns", ref)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k.authCount()).To(Equal(2))
}

func TestAnAuthenticationInProgressIsNotWaitedOn(t *testing.T) {
	g := NewWithT(t)
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		arrived <- struct{}{}
		<-release
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer slow.Close()
	f, _ := newFactory(t, logr.Discard(), secret(map[string]string{CloudsSecretKey: cloudsYAML(slow.URL, "")}))
	first := make(chan error, 1)
	go func() {
		_, err := f.NewClients(context.Background(), "ns", ref)
		first <- err
	}()
	<-arrived
	_, err := f.NewClients(context.Background(), "ns", ref)
	g.Expect(errors.Is(err, ErrAuthenticationInProgress)).To(BeTrue(), "%v", err)
	close(release)
	g.Expect(<-first).To(HaveOccurred())
}
