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
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
)

const password = "s3cr3t-p4ssw0rd"

// keystone is a minimal Keystone v3 plus one endpoint per service, enough to authenticate and to
// see which endpoint a client calls.
type keystone struct {
	server *httptest.Server
	mu     sync.Mutex
	auths  []map[string]any // bodies of POST /v3/auth/tokens
	hits   []string         // paths of every other request
}

func newKeystone(t *testing.T, useTLS bool) *keystone {
	k := &keystone{}
	handler := http.HandlerFunc(k.serve)
	if useTLS {
		k.server = httptest.NewTLSServer(handler)
	} else {
		k.server = httptest.NewServer(handler)
	}
	t.Cleanup(k.server.Close)
	return k
}

func (k *keystone) serve(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if r.Method == http.MethodPost && r.URL.Path == "/v3/auth/tokens" {
		body, _ := io.ReadAll(r.Body)
		var parsed map[string]any
		_ = json.Unmarshal(body, &parsed)
		k.auths = append(k.auths, parsed)
		if strings.Contains(string(body), "wrong") {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"code":401,"message":"The request you have made requires authentication."}}`))
			return
		}
		w.Header().Set("X-Subject-Token", "token-1")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(k.tokenBody()))
		return
	}
	if strings.Count(strings.Trim(r.URL.Path, "/"), "/") == 0 {
		// An endpoint's root: its version document, which gophercloud reads once per service.
		_, _ = w.Write([]byte(`{"versions":[{"id":"v2.0","status":"CURRENT"}]}`))
		return
	}
	k.hits = append(k.hits, r.URL.Path)
	_, _ = w.Write([]byte(`{"availability_zones":[{"name":"az1","resource":"router","state":"available"}]}`))
}

func (k *keystone) tokenBody() string {
	var services []string
	for _, svc := range []string{"network", "load-balancer", "compute", "image"} {
		var endpoints []string
		for _, region := range []string{"RegionOne", "RegionTwo"} {
			for _, iface := range []string{"public", "internal"} {
				endpoints = append(endpoints, fmt.Sprintf(`{"id":"%s-%s-%s","interface":"%s","region":"%s","region_id":"%s","url":"%s/%s-%s-%s"}`,
					svc, region, iface, iface, region, region, k.server.URL, svc, strings.ToLower(region), iface))
			}
		}
		services = append(services, fmt.Sprintf(`{"type":"%s","name":"%s","endpoints":[%s]}`, svc, svc, strings.Join(endpoints, ",")))
	}
	return `{"token":{"expires_at":"2099-01-01T00:00:00.000000Z","methods":["password"],` +
		`"project":{"id":"project-1","name":"demo","domain":{"id":"default","name":"Default"}},` +
		`"catalog":[` + strings.Join(services, ",") + `]}}`
}

func (k *keystone) authCount() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.auths)
}

func (k *keystone) lastHit() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.hits[len(k.hits)-1]
}

func cloudsYAML(authURL, extra string) string {
	return fmt.Sprintf(`clouds:
  openstack:
    auth:
      auth_url: %s/v3
      username: demo
      password: %s
      project_name: demo
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
%s
`, authURL, password, extra)
}

func secret(data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "cloud-config", Namespace: "ns"}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func newFactory(t *testing.T, log logr.Logger, objs ...*corev1.Secret) (*SecretFactory, client.Client) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	builder := fake.NewClientBuilder().WithScheme(scheme)
	for _, o := range objs {
		builder = builder.WithObjects(o)
	}
	c := builder.Build()
	// The tests call once and look at the answer: they wait for the authentication (the ones
	// about the grace set their own).
	return &SecretFactory{Reader: c, Log: log, AuthGrace: AuthDeadline(0)}, c
}

var ref = &infrav1.OpenStackIdentityReference{Name: "cloud-config", CloudName: "openstack"}

func TestPasswordAuthCachingAndRegion(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	k := newKeystone(t, false)
	f, _ := newFactory(t, logr.Discard(), secret(map[string]string{CloudsSecretKey: cloudsYAML(k.server.URL, "")}))

	c, err := f.NewClients(ctx, "ns", ref)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.ProjectID).To(Equal("project-1"))
	g.Expect(k.authCount()).To(Equal(1))
	g.Expect(k.auths[0]).To(HaveKeyWithValue("auth", HaveKeyWithValue("identity", HaveKeyWithValue("methods", ConsistOf("password")))))

	_, err = c.Network.ListAvailabilityZones(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k.lastHit()).To(Equal("/network-regionone-public/v2.0/availability_zones"))
	_, err = c.LoadBalancer.ListAvailabilityZones(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k.lastHit()).To(Equal("/load-balancer-regionone-public/v2.0/lbaas/availabilityzones"))

	// A second reconcile reuses the authenticated provider client.
	_, err = f.NewClients(ctx, "ns", ref)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k.authCount()).To(Equal(1))
}

func TestIdentityRefRegionOverridesTheCloudsRegion(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	k := newKeystone(t, false)
	f, _ := newFactory(t, logr.Discard(), secret(map[string]string{CloudsSecretKey: cloudsYAML(k.server.URL, "")}))

	// clouds.yaml says RegionOne; identityRef.region (as upstream CAPO's YAML may carry) wins.
	inTwo := &infrav1.OpenStackIdentityReference{Name: ref.Name, CloudName: ref.CloudName, Region: "RegionTwo"}
	c, err := f.NewClients(ctx, "ns", inTwo)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = c.Network.ListAvailabilityZones(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k.lastHit()).To(Equal("/network-regiontwo-public/v2.0/availability_zones"))

	// The same Secret without the override is another set of clients, in the cloud's region.
	c, err = f.NewClients(ctx, "ns", ref)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = c.Network.ListAvailabilityZones(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k.lastHit()).To(Equal("/network-regionone-public/v2.0/availability_zones"))
}

func TestEditedSecretTakesEffect(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	k := newKeystone(t, false)
	s := secret(map[string]string{CloudsSecretKey: cloudsYAML(k.server.URL, "")})
	f, c := newFactory(t, logr.Discard(), s)

	_, err := f.NewClients(ctx, "ns", ref)
	g.Expect(err).NotTo(HaveOccurred())

	// Move the cloud to the other region and the internal interface.
	edited := strings.Replace(cloudsYAML(k.server.URL, "    interface: internal"), "RegionOne", "RegionTwo", 1)
	s.Data[CloudsSecretKey] = []byte(edited)
	g.Expect(c.Update(ctx, s)).To(Succeed())

	clients, err := f.NewClients(ctx, "ns", ref)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k.authCount()).To(Equal(2), "an edited Secret authenticates again")
	_, err = clients.Network.ListAvailabilityZones(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k.lastHit()).To(Equal("/network-regiontwo-internal/v2.0/availability_zones"))
}

func TestApplicationCredentialAndTokenAuth(t *testing.T) {
	tests := []struct {
		name       string
		yaml       string
		wantMethod string
	}{
		{
			name: "application credential",
			yaml: `clouds:
  openstack:
    auth_type: v3applicationcredential
    auth:
      auth_url: %s/v3
      application_credential_id: appcred-id
      application_credential_secret: ` + password + "\n",
			wantMethod: "application_credential",
		},
		{
			name: "token",
			yaml: `clouds:
  openstack:
    auth_type: token
    auth:
      auth_url: %s/v3
      token: ` + password + `
      project_id: project-1
`,
			wantMethod: "token",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			k := newKeystone(t, false)
			f, _ := newFactory(t, logr.Discard(), secret(map[string]string{CloudsSecretKey: fmt.Sprintf(tt.yaml, k.server.URL)}))
			_, err := f.NewClients(context.Background(), "ns", ref)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(k.auths).To(HaveLen(1))
			g.Expect(k.auths[0]).To(HaveKeyWithValue("auth", HaveKeyWithValue("identity", HaveKeyWithValue("methods", ConsistOf(tt.wantMethod)))))
		})
	}
}

func TestCustomCAAndVerifyFalse(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	k := newKeystone(t, true)
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: k.server.Certificate().Raw}))

	// Without the CA the server's certificate is not trusted.
	f, _ := newFactory(t, logr.Discard(), secret(map[string]string{CloudsSecretKey: cloudsYAML(k.server.URL, "")}))
	_, err := f.NewClients(ctx, "ns", ref)
	g.Expect(err).To(MatchError(ContainSubstring("certificate")))

	// With the CA from the Secret's cacert key it is.
	f, _ = newFactory(t, logr.Discard(), secret(map[string]string{CloudsSecretKey: cloudsYAML(k.server.URL, ""), CACertSecretKey: caPEM}))
	_, err = f.NewClients(ctx, "ns", ref)
	g.Expect(err).NotTo(HaveOccurred())

	// verify: false skips verification, with a warning in the log that names no credential.
	var logged []string
	log := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{})
	f, _ = newFactory(t, log, secret(map[string]string{CloudsSecretKey: cloudsYAML(k.server.URL, "    verify: false")}))
	_, err = f.NewClients(ctx, "ns", ref)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.Join(logged, "\n")).To(And(ContainSubstring("verification is off"), ContainSubstring("ns/cloud-config"), Not(ContainSubstring(password))))

	// A cacert that holds no certificate (upstream's env.rc writes "Cg==", a newline, without a
	// CA file) is ignored, as upstream ignores it: the system's authorities are used, and the
	// call that authenticated says so once, by key.
	for _, ca := range []string{"\n", "not a certificate"} {
		f, _ = newFactory(t, logr.Discard(), secret(map[string]string{CloudsSecretKey: cloudsYAML(k.server.URL, ""), CACertSecretKey: ca}))
		_, err = f.NewClients(ctx, "ns", ref)
		g.Expect(err).To(MatchError(And(ContainSubstring("authenticating"), ContainSubstring(`key "cacert" holds no PEM certificate`),
			ContainSubstring("ignored, the system's certificate authorities are used"))), "the test Keystone's certificate is no system authority's, and the error says why")
		f, _ = newFactory(t, logr.Discard(), secret(map[string]string{CloudsSecretKey: cloudsYAML(k.server.URL, "    verify: false"), CACertSecretKey: ca}))
		first, err := f.NewClients(ctx, "ns", ref)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(first.Warnings).To(ConsistOf(HavePrefix(`identity Secret ns/cloud-config: key "cacert" holds no PEM certificate (`)))
		again, err := f.NewClients(ctx, "ns", ref)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(again.Warnings).To(BeEmpty(), "said once per credential")
	}
}

func TestErrorsNameSecretKeyAndCloudButNoCredential(t *testing.T) {
	k := newKeystone(t, false)
	tests := []struct {
		name    string
		secret  *corev1.Secret
		ref     *infrav1.OpenStackIdentityReference
		wantErr string
	}{
		{name: "no identityRef", ref: nil, wantErr: "spec.identityRef is not set"},
		{name: "missing Secret", ref: ref, wantErr: "identity Secret ns/cloud-config named by identityRef does not exist"},
		{name: "missing key", ref: ref, secret: secret(map[string]string{"other": "x"}), wantErr: `identity Secret ns/cloud-config has no "clouds.yaml" key`},
		{
			name: "invalid YAML", ref: ref,
			secret:  secret(map[string]string{CloudsSecretKey: "clouds:\n  openstack:\n    auth: [" + password}),
			wantErr: `identity Secret ns/cloud-config: key "clouds.yaml" is not valid clouds.yaml (error at line`,
		},
		{
			name: "unknown cloud", ref: &infrav1.OpenStackIdentityReference{Name: "cloud-config", CloudName: "prod"},
			secret:  secret(map[string]string{CloudsSecretKey: cloudsYAML(k.server.URL, "")}),
			wantErr: `identity Secret ns/cloud-config: cloud "prod" is not in "clouds.yaml" (it has: openstack)`,
		},
		{
			// A malformed auth_url with credentials in it: the parser quotes the URL, which never
			// reaches the error.
			name: "malformed auth_url with user information", ref: ref,
			secret:  secret(map[string]string{CloudsSecretKey: cloudsYAML("http://user:"+password+"@keystone:50x0/v3", "")}),
			wantErr: `identity Secret ns/cloud-config, cloud "openstack": auth_url is not a valid URL`,
		},
		{
			name: "rejected credentials", ref: ref,
			secret:  secret(map[string]string{CloudsSecretKey: strings.Replace(cloudsYAML(k.server.URL, ""), password, "wrong", 1)}),
			wantErr: `identity Secret ns/cloud-config, cloud "openstack": authenticating:`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var objs []*corev1.Secret
			if tt.secret != nil {
				objs = append(objs, tt.secret)
			}
			f, _ := newFactory(t, logr.Discard(), objs...)
			_, err := f.NewClients(context.Background(), "ns", tt.ref)
			g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
			g.Expect(err.Error()).NotTo(ContainSubstring(password))
			g.Expect(err.Error()).NotTo(ContainSubstring("wrong"))
			fault, isFault := clients.FaultOf(err)
			if tt.name == "rejected credentials" {
				// Keystone's 401, as a rotated credential gets: a fault the controller backs off
				// from, naming the service and the status.
				g.Expect(isFault).To(BeTrue())
				g.Expect(fault.String()).To(Equal("Keystone (identity API) answered HTTP 401 Unauthorized to Authenticate"))
				g.Expect(fault.String()).NotTo(ContainSubstring(password))
			} else {
				g.Expect(isFault).To(BeFalse(), "a problem of the Secret is the user's to fix, not the cloud's")
			}
		})
	}
}

// An operator's allow-list keeps a tenant's auth_url from making the manager fetch any other
// URL: nothing is requested from a host not on it.
func TestOnlyAllowedAuthURLHostsAreAsked(t *testing.T) {
	g := NewWithT(t)
	k := newKeystone(t, false)
	f, _ := newFactory(t, logr.Discard(), secret(map[string]string{CloudsSecretKey: cloudsYAML(k.server.URL, "")}))
	f.AllowedAuthHosts = []AuthEndpoint{{Host: "keystone.example.com"}}
	_, err := f.NewClients(context.Background(), "ns", ref)
	g.Expect(err).To(MatchError(MatchRegexp(`^identity Secret ns/cloud-config, cloud "openstack": auth_url's endpoint http://127\.0\.0\.1:\d+ is not one the operator allows \(the manager's --allowed-auth-url-hosts: keystone\.example\.com\)$`)))
	g.Expect(k.authCount()).To(BeZero(), "nothing was asked of a host not allowed")

	f, _ = newFactory(t, logr.Discard(), secret(map[string]string{CloudsSecretKey: cloudsYAML(k.server.URL, "")}))
	u, _ := url.Parse(k.server.URL)
	f.AllowedAuthHosts = []AuthEndpoint{{Host: "keystone.example.com"}, {Host: "127.0.0.1"}}
	_, err = f.NewClients(context.Background(), "ns", ref)
	g.Expect(err).To(MatchError(ContainSubstring("is not one the operator allows")), "the right host on a port that is not Keystone's")
	g.Expect(k.authCount()).To(BeZero())

	f, _ = newFactory(t, logr.Discard(), secret(map[string]string{CloudsSecretKey: cloudsYAML(k.server.URL, "")}))
	f.AllowedAuthHosts = []AuthEndpoint{{Host: "keystone.example.com"}, {Scheme: "http", Host: "127.0.0.1", Port: u.Port()}}
	_, err = f.NewClients(context.Background(), "ns", ref)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k.authCount()).To(Equal(1))
}
