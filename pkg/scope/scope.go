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

// Package scope turns an identityRef (a Secret holding clouds.yaml) into authenticated OpenStack
// clients. Authenticated provider clients are cached per credential, so reconciles reuse tokens;
// gophercloud re-authenticates by itself when a token expires.
//
// Nothing in this package logs or returns credential values: errors name the Secret, the key and
// the cloud, never what is in them.
package scope

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/gophercloud/utils/v2/openstack/clientconfig"
	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1alpha1"
	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
)

const (
	// CloudsSecretKey is the key of the identity Secret that holds clouds.yaml.
	CloudsSecretKey = "clouds.yaml"
	// CACertSecretKey is the optional key of the identity Secret that holds a PEM CA bundle.
	CACertSecretKey = "cacert"

	// envPrefixNobodySets keeps the manager's own environment (OS_CLOUD, OS_PASSWORD, ...) out of
	// the credentials: gophercloud's clientconfig reads variables with this prefix.
	envPrefixNobodySets = "CAPO_MULTIAZ_SCOPE_UNUSED_"

	defaultCacheSize = 256
	// defaultTimeout bounds each request to OpenStack when SecretFactory.Timeout is 0.
	defaultTimeout = 60 * time.Second
)

// ErrNoIdentityRef is returned when an object names no identity Secret.
var ErrNoIdentityRef = errors.New("spec.identityRef is not set: name the Secret that holds clouds.yaml and the cloud to use")

// Clients are the OpenStack clients for one credential.
type Clients struct {
	Network      clients.NetworkClient
	LoadBalancer clients.LoadBalancerClient
	Compute      clients.ComputeClient
	Image        clients.ImageClient
	// Volume is Cinder's client; on a cloud without Cinder, one whose every call says so, for
	// the machines that ask for volumes.
	Volume clients.VolumeClient

	// ProjectID is the project the credentials are scoped to, when Keystone says so.
	ProjectID string

	// CloudKey identifies the cloud and credential these clients talk to, without revealing
	// either: caches of what a cloud can do (its Octavia capabilities) are keyed by it.
	CloudKey string

	// Warnings are what the authentication that built these clients let pass but the owner of
	// the identity should hear about (a cacert that holds no certificate). Only the call that
	// authenticated returns them, so that each is reported once per credential.
	Warnings []string
}

// Factory builds Clients from an identityRef. Controllers take a Factory so that tests can hand
// them fake OpenStack clients.
type Factory interface {
	NewClients(ctx context.Context, namespace string, ref *infrav1.OpenStackIdentityReference) (*Clients, error)
}

// SecretFactory reads the identity Secret and authenticates, caching authenticated provider clients
// per credential.
type SecretFactory struct {
	// Reader reads Secrets. Pass the manager's API reader, so that Secrets are not cached.
	Reader client.Reader
	// Log receives warnings such as TLS verification being off. Never credentials.
	Log logr.Logger
	// Timeout bounds each HTTP request to OpenStack; 0 means 60 seconds.
	Timeout time.Duration
	// AllowedAuthHosts, when not empty, are the only endpoints a clouds.yaml's auth_url may name:
	// the operator's Keystones, each a host with perhaps a scheme and a port (AuthEndpoint). A
	// tenant's auth_url is otherwise a URL the manager fetches for it.
	AllowedAuthHosts []AuthEndpoint

	// AuthGrace is how long the reconcile that starts an authentication waits for it; 0 means
	// DefaultAuthGrace.
	AuthGrace time.Duration

	mu    sync.Mutex
	cache *lru.Cache
	// failed remembers, per credential, why its authentication failed and until when that answer
	// stands (FailedAuthMemory); authenticating are the authentications under way, by
	// credential, and perNamespace how many of them each namespace's credentials have.
	failed         *lru.Cache
	authenticating map[string]*authCall
	perNamespace   map[string]int
	// undelivered are the warnings of authentications whose clients nobody took yet.
	undelivered map[string][]string
}

// authCall is an authentication under way; done is closed once clients or err is set.
type authCall struct {
	done    chan struct{}
	clients *Clients
	err     error
}

// DefaultAuthGrace is how long the reconcile that starts an authentication waits for Keystone
// before it lets its worker go: an honest Keystone answers well within it.
const DefaultAuthGrace = time.Second

// MaxAuthentications bounds the authentications under way at once, and
// MaxAuthenticationsPerNamespace the share of them one namespace's credentials may have: a tenant
// with many Secrets naming a Keystone that never answers cannot keep the others' out.
const (
	MaxAuthentications             = 64
	MaxAuthenticationsPerNamespace = 4
)

// AuthDeadline bounds one authentication, which runs off the workers: the token request, of at
// most timeout (0: 60 s), and slack.
func AuthDeadline(timeout time.Duration) time.Duration {
	if timeout == 0 {
		timeout = defaultTimeout
	}
	return timeout + 5*time.Second
}

func (f *SecretFactory) authGrace() time.Duration {
	if f.AuthGrace > 0 {
		return f.AuthGrace
	}
	return DefaultAuthGrace
}

// FailedAuthMemory is how long a credential's failed authentication is the answer without asking
// Keystone again: many objects sharing a broken or hostile credential cost one request per
// credential in that time, not one per object. An edited Secret is a new credential, asked at once.
const FailedAuthMemory = 30 * time.Second

// ErrAuthenticationInProgress is the answer while the credential's authentication is under way (or
// waits for its namespace's share): no worker waits on a Keystone for longer than AuthGrace.
var ErrAuthenticationInProgress = errors.New("the credential is being authenticated; this object looks again shortly")

// failedAuth is a remembered failure.
type failedAuth struct {
	err   error
	until time.Time
}

var _ Factory = &SecretFactory{}

// credential is what one identityRef resolves to.
type credential struct {
	namespace string // of the object whose identityRef this is
	secretRef string // namespace/name, for messages
	cloudName string
	cloud     *clientconfig.Cloud
	clouds    map[string]clientconfig.Cloud
	caPEM     []byte
	cacheKey  string
}

// NewClients returns authenticated clients for the identityRef of an object in namespace.
func (f *SecretFactory) NewClients(ctx context.Context, namespace string, ref *infrav1.OpenStackIdentityReference) (*Clients, error) {
	if ref == nil {
		return nil, ErrNoIdentityRef
	}
	cred, err := f.readCredential(ctx, namespace, ref)
	if err != nil {
		return nil, err
	}
	return f.cachedClients(ctx, cred)
}

func (f *SecretFactory) readCredential(ctx context.Context, namespace string, ref *infrav1.OpenStackIdentityReference) (*credential, error) {
	secretNamespace, secretName := namespace, ref.Name
	if ref.Type == ClusterIdentityType {
		var err error
		if secretNamespace, secretName, err = f.clusterIdentitySecret(ctx, namespace, ref.Name); err != nil {
			return nil, err
		}
	}
	secretRef := secretNamespace + "/" + secretName
	secret := &corev1.Secret{}
	if err := f.Reader.Get(ctx, client.ObjectKey{Namespace: secretNamespace, Name: secretName}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("identity Secret %s named by identityRef does not exist", secretRef)
		}
		return nil, fmt.Errorf("reading identity Secret %s: %w", secretRef, err)
	}
	raw, ok := secret.Data[CloudsSecretKey]
	if !ok || len(raw) == 0 {
		return nil, fmt.Errorf("identity Secret %s has no %q key", secretRef, CloudsSecretKey)
	}
	var parsed clientconfig.Clouds
	if err := yaml.Unmarshal(raw, &parsed); err != nil {
		// yaml's message can quote the offending value, which may be a password: keep only the
		// line number.
		return nil, fmt.Errorf("identity Secret %s: key %q is not valid clouds.yaml%s", secretRef, CloudsSecretKey, yamlErrorLine(err))
	}
	cloud, ok := parsed.Clouds[ref.CloudName]
	if !ok {
		names := make([]string, 0, len(parsed.Clouds))
		for name := range parsed.Clouds {
			names = append(names, name)
		}
		slices.Sort(names)
		return nil, fmt.Errorf("identity Secret %s: cloud %q is not in %q (it has: %s)", secretRef, ref.CloudName, CloudsSecretKey, strings.Join(names, ", "))
	}
	caPEM := secret.Data[CACertSecretKey]
	if ref.Region != "" {
		// identityRef.region overrides the cloud's region, as upstream CAPO's does.
		cloud.RegionName = ref.Region
	}

	sum := sha256.New()
	for _, part := range [][]byte{[]byte(secretRef), []byte(ref.CloudName), []byte(ref.Region), raw, caPEM} {
		sum.Write(part)
		sum.Write([]byte{0})
	}
	return &credential{
		namespace: namespace,
		secretRef: secretRef,
		cloudName: ref.CloudName,
		cloud:     &cloud,
		clouds:    parsed.Clouds,
		caPEM:     caPEM,
		cacheKey:  hex.EncodeToString(sum.Sum(nil)),
	}, nil
}

// ClusterIdentityType is the identityRef type that names an OpenStackClusterIdentity.
const ClusterIdentityType = "ClusterIdentity"

// clusterIdentitySecret is the Secret of the OpenStackClusterIdentity name, for an object in
// namespace: only when the identity's namespaceSelector selects that namespace (or it has none).
// The identity and the namespace are read each time, so that an identity that stops selecting a
// namespace stops serving it at its next reconcile.
func (f *SecretFactory) clusterIdentitySecret(ctx context.Context, namespace, name string) (secretNamespace, secretName string, err error) {
	identity := &infrav1alpha1.OpenStackClusterIdentity{}
	if err := f.Reader.Get(ctx, client.ObjectKey{Name: name}, identity); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return "", "", fmt.Errorf("OpenStackClusterIdentity %s named by identityRef does not exist", name)
		}
		return "", "", fmt.Errorf("reading OpenStackClusterIdentity %s: %w", name, err)
	}
	if sel := identity.Spec.NamespaceSelector; sel != nil {
		selector, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			return "", "", fmt.Errorf("OpenStackClusterIdentity %s: spec.namespaceSelector is not valid: %w", name, err)
		}
		ns := &corev1.Namespace{}
		if err := f.Reader.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
			return "", "", fmt.Errorf("reading namespace %s to check the namespaceSelector of OpenStackClusterIdentity %s: %w", namespace, name, err)
		}
		if !selector.Matches(labels.Set(ns.Labels)) {
			return "", "", fmt.Errorf("OpenStackClusterIdentity %s does not allow namespace %s: its spec.namespaceSelector does not select it; "+
				"its owner may add the namespace, or use an identity Secret in the namespace", name, namespace)
		}
	}
	return identity.Spec.SecretRef.Namespace, identity.Spec.SecretRef.Name, nil
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

func yamlErrorLine(err error) string {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		return " (error at line " + m[1] + ")"
	}
	return ""
}

// cachedClients returns the clients of the credential, authenticating on a cache miss. A changed
// Secret has a new cache key, so an edit takes effect at once. Building a service client may read
// the endpoint's version document, so clients are built once per credential, not per reconcile;
// gophercloud's clients are safe for concurrent use and re-authenticate by themselves. A failed
// authentication is the answer for FailedAuthMemory.
//
// The authentication runs off the worker (authenticateAside): the reconcile that starts it waits
// for it at most AuthGrace, which an honest Keystone answers within, and the others that need the
// credential meanwhile do not wait at all. Either way they get ErrAuthenticationInProgress and
// look again shortly, when the answer is in the cache. So a Keystone that never answers holds no
// worker for longer than AuthGrace, however many tenants name one at once.
func (f *SecretFactory) cachedClients(ctx context.Context, cred *credential) (*Clients, error) {
	f.mu.Lock()
	if f.cache == nil {
		// Evictions happen in Add, with f.mu held: undelivered warnings go with their clients.
		f.cache = lru.NewWithEvictionFunc(defaultCacheSize, func(key lru.Key, _ any) { delete(f.undelivered, key.(string)) })
		f.failed = lru.New(defaultCacheSize)
		f.authenticating, f.perNamespace, f.undelivered = map[string]*authCall{}, map[string]int{}, map[string][]string{}
	}
	if clients, ok := f.fromCache(cred.cacheKey); ok {
		f.mu.Unlock()
		return clients, nil
	}
	if v, ok := f.failed.Get(cred.cacheKey); ok && time.Now().Before(v.(failedAuth).until) {
		f.mu.Unlock()
		return nil, v.(failedAuth).err
	}
	if f.authenticating[cred.cacheKey] != nil {
		f.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", cred.secretRef, ErrAuthenticationInProgress)
	}
	if ours, all := f.perNamespace[cred.namespace], len(f.authenticating); ours >= MaxAuthenticationsPerNamespace || all >= MaxAuthentications {
		f.mu.Unlock()
		return nil, fmt.Errorf("%s: %w (%d of this namespace's credentials and %d in all are being authenticated)",
			cred.secretRef, ErrAuthenticationInProgress, ours, all)
	}
	call := &authCall{done: make(chan struct{})}
	f.authenticating[cred.cacheKey] = call
	f.perNamespace[cred.namespace]++
	f.mu.Unlock()
	go f.authenticateAside(cred, call)

	grace := time.NewTimer(f.authGrace())
	defer grace.Stop()
	select {
	case <-call.done:
	case <-grace.C:
		return nil, fmt.Errorf("%s: %w", cred.secretRef, ErrAuthenticationInProgress)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if call.err != nil {
		return nil, call.err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if clients, ok := f.fromCache(cred.cacheKey); ok {
		return clients, nil
	}
	// Evicted already by other credentials: these clients are still good, and carry the
	// warnings.
	delete(f.undelivered, cred.cacheKey)
	fresh := *call.clients
	return &fresh, nil
}

// fromCache is the credential's cached clients, with the warnings of their authentication the
// first time they are handed out (to be reported once). f.mu is held.
func (f *SecretFactory) fromCache(key string) (*Clients, bool) {
	v, ok := f.cache.Get(key)
	if !ok {
		return nil, false
	}
	clients := *v.(*Clients)
	if w, ok := f.undelivered[key]; ok {
		clients.Warnings = w
		delete(f.undelivered, key)
	}
	return &clients, true
}

// authenticateAside authenticates cred on a goroutine of its own, bounded by AuthDeadline rather
// than by the reconcile that started it, and puts the answer in the cache: the clients, or the
// failure for FailedAuthMemory (a Keystone that does not answer within the deadline included). A
// panic is that authentication's error; the credential is never left "in progress" for good.
func (f *SecretFactory) authenticateAside(cred *credential, call *authCall) {
	defer func() {
		if r := recover(); r != nil {
			call.clients, call.err = nil, fmt.Errorf("identity Secret %s: authenticating stopped on an internal error: %v", cred.secretRef, r)
		}
		f.mu.Lock()
		if call.err != nil {
			f.failed.Add(cred.cacheKey, failedAuth{err: call.err, until: time.Now().Add(FailedAuthMemory)})
		} else {
			cached := *call.clients
			cached.Warnings = nil
			f.cache.Add(cred.cacheKey, &cached)
			if len(call.clients.Warnings) > 0 {
				f.undelivered[cred.cacheKey] = call.clients.Warnings
			}
		}
		delete(f.authenticating, cred.cacheKey)
		if f.perNamespace[cred.namespace]--; f.perNamespace[cred.namespace] <= 0 {
			delete(f.perNamespace, cred.namespace)
		}
		f.mu.Unlock()
		close(call.done)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), AuthDeadline(f.Timeout))
	defer cancel()
	clients, err := f.authenticate(ctx, cred)
	if err == nil {
		clients.CloudKey = cred.cacheKey
	}
	call.clients, call.err = clients, err
}

type staticClouds map[string]clientconfig.Cloud

func (s staticClouds) LoadCloudsYAML() (map[string]clientconfig.Cloud, error) { return s, nil }
func (s staticClouds) LoadSecureCloudsYAML() (map[string]clientconfig.Cloud, error) {
	return map[string]clientconfig.Cloud{}, nil
}
func (s staticClouds) LoadPublicCloudsYAML() (map[string]clientconfig.Cloud, error) {
	return map[string]clientconfig.Cloud{}, nil
}

func (f *SecretFactory) authenticate(ctx context.Context, cred *credential) (*Clients, error) {
	where := fmt.Sprintf("identity Secret %s, cloud %q", cred.secretRef, cred.cloudName)

	// clientconfig understands every auth_type of clouds.yaml (password, v3applicationcredential,
	// token, ...); it reads only the clouds we hand it and only environment variables nobody sets.
	authOpts, err := clientconfig.AuthOptions(&clientconfig.ClientOpts{
		Cloud:     cred.cloudName,
		EnvPrefix: envPrefixNobodySets,
		YAMLOpts:  staticClouds(cred.clouds),
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	authOpts.AllowReauth = true

	if err := f.checkAuthHost(authOpts.IdentityEndpoint, where); err != nil {
		return nil, err
	}
	tlsConfig, warnings := f.tlsConfig(cred)
	provider, err := openstack.NewClient(authOpts.IdentityEndpoint)
	if err != nil {
		// The parser's words quote the URL, and a URL may carry a user and a password.
		return nil, fmt.Errorf("%s: auth_url is not a valid URL", where)
	}
	timeout := f.Timeout
	if timeout == 0 {
		timeout = defaultTimeout
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tlsConfig
	provider.HTTPClient = http.Client{Transport: clients.LimitBodies(transport, clients.MaxResponseBody), Timeout: timeout,
		// A redirect is never followed: it would take the manager to a URL the allow-list did not
		// see, and Keystone and the services answer where the catalog says.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	provider.UserAgent.Prepend("capo-multiaz")

	if err := openstack.Authenticate(ctx, provider, *authOpts); err != nil {
		err = fmt.Errorf("%s: authenticating: %w", where, clients.WrapCall(clients.ServiceIdentity, "Authenticate", err))
		if len(warnings) > 0 {
			// An ignored cacert is the likely cause of a certificate error: said where it is seen.
			err = fmt.Errorf("%w (%s)", err, strings.Join(warnings, "; "))
		}
		return nil, err
	}

	serviceClients, err := newServiceClients(provider, endpointOpts(cred.cloud), where)
	if err != nil {
		return nil, err
	}
	serviceClients.ProjectID = projectID(provider)
	serviceClients.Warnings = warnings
	return serviceClients, nil
}

// checkAuthHost refuses an auth_url whose scheme, host or port the operator does not allow.
func (f *SecretFactory) checkAuthHost(authURL, where string) error {
	if len(f.AllowedAuthHosts) == 0 {
		return nil
	}
	u, err := url.Parse(authURL)
	if err != nil || u.Hostname() == "" {
		return fmt.Errorf("%s: auth_url is not a URL with a host", where)
	}
	if !slices.ContainsFunc(f.AllowedAuthHosts, func(e AuthEndpoint) bool { return e.allows(u) }) {
		allowed := make([]string, len(f.AllowedAuthHosts))
		for i, e := range f.AllowedAuthHosts {
			allowed[i] = e.String()
		}
		return fmt.Errorf("%s: auth_url's endpoint %s://%s is not one the operator allows (the manager's --allowed-auth-url-hosts: %s)",
			where, u.Scheme, u.Host, strings.Join(allowed, ", "))
	}
	return nil
}

// projectID is the project of a Keystone v3 token, or "" (v2, or a token without a project).
func projectID(provider *gophercloud.ProviderClient) string {
	result, ok := provider.GetAuthResult().(tokens.CreateResult)
	if !ok {
		return ""
	}
	project, err := result.ExtractProject()
	if err != nil || project == nil {
		return ""
	}
	return project.ID
}

// tlsConfig is the TLS configuration of cred's cloud: the system's certificate authorities, with
// the Secret's cacert added. A cacert that holds no PEM certificate (upstream's templates/env.rc
// writes "Cg==", a newline, when there is no CA file) is ignored, as upstream CAPO ignores it,
// and said in the warnings returned.
func (f *SecretFactory) tlsConfig(cred *credential) (*tls.Config, []string) {
	config := &tls.Config{MinVersion: tls.VersionTLS12}
	var warnings []string
	if len(cred.caPEM) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if pool.AppendCertsFromPEM(cred.caPEM) {
			config.RootCAs = pool
		} else {
			w := fmt.Sprintf("identity Secret %s: key %q holds no PEM certificate (%d bytes): ignored, the system's certificate authorities are used", cred.secretRef, CACertSecretKey, len(cred.caPEM))
			f.Log.Info(w)
			warnings = append(warnings, w)
		}
	}
	if cred.cloud.Verify != nil && !*cred.cloud.Verify {
		f.Log.Info("TLS certificate verification is off for this cloud (verify: false in clouds.yaml); do not use this in production",
			"secret", cred.secretRef, "cloud", cred.cloudName)
		config.InsecureSkipVerify = true //nolint:gosec // the user asked for it in clouds.yaml, and we warn.
	}
	return config, warnings
}

// endpointOpts picks the region and the endpoint interface (public, internal or admin).
func endpointOpts(cloud *clientconfig.Cloud) gophercloud.EndpointOpts {
	iface := cloud.Interface
	if iface == "" {
		iface = cloud.EndpointType
	}
	iface = strings.TrimSuffix(strings.ToLower(iface), "url")
	availability := gophercloud.AvailabilityPublic
	switch iface {
	case "internal":
		availability = gophercloud.AvailabilityInternal
	case "admin":
		availability = gophercloud.AvailabilityAdmin
	}
	return gophercloud.EndpointOpts{Region: cloud.RegionName, Availability: availability}
}

// computeMicroversion is the Nova API version the provider asks for.
const computeMicroversion = "2.60"

func newServiceClients(provider *gophercloud.ProviderClient, endpoint gophercloud.EndpointOpts, where string) (*Clients, error) {
	missing := func(service string, err error) error {
		return fmt.Errorf("%s: no usable %s endpoint (region %q, interface %s) in the service catalog: %w", where, service, endpoint.Region, endpoint.Availability, err)
	}
	network, err := openstack.NewNetworkV2(provider, endpoint)
	if err != nil {
		return nil, missing("network (Neutron)", err)
	}
	lb, err := openstack.NewLoadBalancerV2(provider, endpoint)
	if err != nil {
		return nil, missing("load-balancer (Octavia)", err)
	}
	compute, err := openstack.NewComputeV2(provider, endpoint)
	if err != nil {
		return nil, missing("compute (Nova)", err)
	}
	// 2.60: server tags at create (2.52) and the server's availability zone in its details.
	compute.Microversion = computeMicroversion
	image, err := openstack.NewImageV2(provider, endpoint)
	if err != nil {
		return nil, missing("image (Glance)", err)
	}
	var volume clients.VolumeClient
	if blockStorage, err := openstack.NewBlockStorageV3(provider, endpoint); err == nil {
		volume = clients.NewVolumeClient(blockStorage)
	} else {
		// Only machines with volumes need Cinder.
		volume = clients.NoVolumeClient(missing("block-storage (Cinder)", err))
	}
	return &Clients{
		Network:      clients.NewNetworkClient(network),
		LoadBalancer: clients.NewLoadBalancerClient(lb),
		Compute:      clients.NewComputeClient(compute),
		Image:        clients.NewImageClient(image),
		Volume:       volume,
	}, nil
}
