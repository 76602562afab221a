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
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// gatedKeystone is the stub Keystone behind a gate: token requests wait until open is closed,
// then are answered as the stub answers them.
type gatedKeystone struct {
	*keystone
	open    chan struct{}
	arrived atomic.Int32
}

func newGatedKeystone(t *testing.T) *gatedKeystone {
	k := &gatedKeystone{keystone: &keystone{}, open: make(chan struct{})}
	k.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v3/auth/tokens" {
			k.arrived.Add(1)
			select {
			case <-k.open:
			case <-r.Context().Done():
				return
			}
		}
		k.serve(w, r)
	}))
	t.Cleanup(func() {
		select {
		case <-k.open:
		default:
			close(k.open)
		}
		k.server.Close()
	})
	return k
}

// A Keystone that does not answer holds the reconcile that asked for at most the grace: the
// authentication goes on aside, the others that need the credential do not wait at all, and its
// answer is the cache's once it comes.
func TestAKeystoneThatDoesNotAnswerHoldsNoWorker(t *testing.T) {
	g := NewWithT(t)
	k := newGatedKeystone(t)
	f, _ := newFactory(t, logr.Discard(), secret(map[string]string{CloudsSecretKey: cloudsYAML(k.server.URL, "")}))
	f.AuthGrace = 500 * time.Millisecond

	start := time.Now()
	_, err := f.NewClients(context.Background(), "ns", ref)
	g.Expect(errors.Is(err, ErrAuthenticationInProgress)).To(BeTrue(), "%v", err)
	g.Expect(time.Since(start)).To(And(BeNumerically(">=", f.AuthGrace), BeNumerically("<", 10*time.Second)), "the grace, not Keystone's answer, ends the wait")
	for range 3 {
		start = time.Now()
		_, err = f.NewClients(context.Background(), "ns", ref)
		g.Expect(errors.Is(err, ErrAuthenticationInProgress)).To(BeTrue(), "%v", err)
		g.Expect(time.Since(start)).To(BeNumerically("<", f.AuthGrace/2), "no wait for an authentication another reconcile started")
	}
	g.Expect(k.arrived.Load()).To(BeEquivalentTo(1), "one token request for the credential")

	close(k.open)
	g.Eventually(func() error {
		_, err := f.NewClients(context.Background(), "ns", ref)
		return err
	}).Should(Succeed())
	g.Expect(k.authCount()).To(Equal(1))
	g.Expect(k.arrived.Load()).To(BeEquivalentTo(1))
}

// One namespace's credentials may have MaxAuthenticationsPerNamespace authentications under way:
// its next credential waits for its share and sends nothing; another namespace's is not held up.
func TestANamespaceHasAShareOfTheAuthentications(t *testing.T) {
	g := NewWithT(t)
	k := newGatedKeystone(t)
	var secrets []*corev1.Secret
	for i := range MaxAuthenticationsPerNamespace + 1 {
		s := secret(map[string]string{CloudsSecretKey: cloudsYAML(k.server.URL, "")})
		s.Name = fmt.Sprintf("cloud-%d", i)
		secrets = append(secrets, s)
	}
	other := secret(map[string]string{CloudsSecretKey: cloudsYAML(k.server.URL, "")})
	other.Namespace = "other"
	f, _ := newFactory(t, logr.Discard(), append(secrets, other)...)
	f.AuthGrace = 10 * time.Millisecond
	refOf := func(name string) *infrav1.OpenStackIdentityReference {
		return &infrav1.OpenStackIdentityReference{Name: name, CloudName: "openstack"}
	}

	for i := range MaxAuthenticationsPerNamespace {
		_, err := f.NewClients(context.Background(), "ns", refOf(secrets[i].Name))
		g.Expect(errors.Is(err, ErrAuthenticationInProgress)).To(BeTrue(), "%v", err)
	}
	g.Eventually(k.arrived.Load).Should(BeEquivalentTo(MaxAuthenticationsPerNamespace))
	_, err := f.NewClients(context.Background(), "ns", refOf(secrets[MaxAuthenticationsPerNamespace].Name))
	g.Expect(errors.Is(err, ErrAuthenticationInProgress)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring(fmt.Sprintf("%d of this namespace's credentials", MaxAuthenticationsPerNamespace)))
	g.Consistently(k.arrived.Load, "100ms").Should(BeEquivalentTo(MaxAuthenticationsPerNamespace), "nothing sent beyond the share")

	_, err = f.NewClients(context.Background(), "other", ref)
	g.Expect(errors.Is(err, ErrAuthenticationInProgress)).To(BeTrue(), "%v", err)
	g.Eventually(k.arrived.Load).Should(BeEquivalentTo(MaxAuthenticationsPerNamespace+1), "another namespace's credential is asked")

	close(k.open)
	g.Eventually(func() error {
		_, err := f.NewClients(context.Background(), "ns", refOf(secrets[MaxAuthenticationsPerNamespace].Name))
		return err
	}).Should(Succeed(), "the share frees as the others end")
}

// At most MaxAuthentications are under way in all: once that many namespaces' credentials wait on
// a Keystone that does not answer, another namespace's next credential sends nothing until one
// ends.
func TestAuthenticationsUnderWayAreBoundedInAll(t *testing.T) {
	g := NewWithT(t)
	k := newGatedKeystone(t)
	perNamespace := MaxAuthenticationsPerNamespace
	namespaces := MaxAuthentications / perNamespace
	var secrets []*corev1.Secret
	for n := range namespaces + 1 {
		for i := range perNamespace {
			s := secret(map[string]string{CloudsSecretKey: cloudsYAML(k.server.URL, "")})
			s.Namespace, s.Name = fmt.Sprintf("ns-%d", n), fmt.Sprintf("cloud-%d", i)
			secrets = append(secrets, s)
		}
	}
	f, _ := newFactory(t, logr.Discard(), secrets...)
	f.AuthGrace = time.Millisecond
	ask := func(s *corev1.Secret) error {
		_, err := f.NewClients(context.Background(), s.Namespace, &infrav1.OpenStackIdentityReference{Name: s.Name, CloudName: "openstack"})
		return err
	}
	for _, s := range secrets[:MaxAuthentications] {
		g.Expect(errors.Is(ask(s), ErrAuthenticationInProgress)).To(BeTrue())
	}
	g.Eventually(k.arrived.Load).Should(BeEquivalentTo(MaxAuthentications))
	late := secrets[MaxAuthentications]
	err := ask(late)
	g.Expect(errors.Is(err, ErrAuthenticationInProgress)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring(fmt.Sprintf("0 of this namespace's credentials and %d in all", MaxAuthentications)))
	g.Consistently(k.arrived.Load, "100ms").Should(BeEquivalentTo(MaxAuthentications), "nothing sent beyond the bound")

	close(k.open)
	g.Eventually(func() error { return ask(late) }).Should(Succeed(), "a place frees as the others end")
}
