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

// Command mgmtplane runs a Cluster API management plane on this machine, for the end-to-end tests
// and the demo, where no Kubernetes node exists: etcd and kube-apiserver (as envtest starts them)
// with the Cluster API core CRDs, the Cluster API core manager as a process, and this provider as
// `clusterctl init` installs it: the release's components file applied (CRDs, ServiceAccount,
// RBAC, webhook configurations) and its manager Deployment's container run from the release's
// image with runc, with the Deployment's arguments, user and mounts, on the host's network. Both
// managers serve their admission webhooks on 127.0.0.1. With --external-dns and --dns-env it also
// runs ExternalDNS (its DNSEndpoint CRD installed), which publishes the DNSEndpoints the provider
// writes into the DNS server hack/dns/up.sh started.
//
// Once ready it supervises the managers as a kubelet would (supervisor.go): one that exits
// unasked is started again, so a crashed or killed provider costs the plane nothing. A control
// endpoint on 127.0.0.1 kills (SIGKILL), stops and starts managers by name, including a second
// replica of the provider (provider-manager-1, not started at first) for the leader election
// spec; the provider's webhook configurations point at a port where the plane stands in for the
// Service in front of the replicas. With --upstream the endpoint also runs upstream CAPO's manager
// in place of this provider's and back (upstream.go). With --orc it also runs the OpenStack
// Resource Controller (orc.go), its CRDs installed.
//
// It runs until SIGINT or SIGTERM, then stops the managers and the API server. hack/mgmt/up.sh
// starts it in the background and hack/mgmt/down.sh stops it; everything it writes is under --dir:
//
//	kubeconfig            an administrator's kubeconfig for the API server
//	logs/*.log            each manager's output; logs/mgmtplane.log this program's
//	certs/                the webhook serving certificate and its CA
//	provider/             the provider containers' root file system and a runc bundle per replica
//	ready                 written once every process answers its readiness probe; says where
//	                      the API server, the provider's metrics (replica 0's), the DNS server
//	                      and the control endpoint are, and upstream CAPO's directory if given
//
// The provider's manager authenticates with a token of the components' ServiceAccount, bound
// only to the components' roles, so a permission missing from them fails the end-to-end tests as
// it would in a cluster.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/capo-multiaz/cluster-api-provider-openstack/internal/localenv"
)

type options struct {
	dir           string
	capiSource    string
	capiManager   string
	components    string
	providerImage string
	providerArgs  string
	externalDNS   string
	dnsEnv        string
	dnsOwner      string
	dnsDomain     string
	upstream      string
	orc           string
}

func main() {
	var o options
	flag.StringVar(&o.dir, "dir", "/var/tmp/capo-management-plane", "Where the kubeconfig, certificates and logs go.")
	flag.StringVar(&o.capiSource, "capi-source", "", "The cluster-api module's source directory (CRDs and webhooks of the core provider).")
	flag.StringVar(&o.capiManager, "capi-manager", "", "The Cluster API core manager binary.")
	flag.StringVar(&o.components, "components", "", "This provider's infrastructure-components.yaml (make release); clusterctl variables come from the environment.")
	flag.StringVar(&o.providerImage, "provider-image", "", "This provider's image, an OCI archive (make image).")
	flag.StringVar(&o.providerArgs, "provider-args", "", "Extra flags for the provider's manager, space separated.")
	flag.StringVar(&o.externalDNS, "external-dns", "", "ExternalDNS's directory (hack/external-dns.sh: the binary and its DNSEndpoint CRD); with --dns-env, ExternalDNS publishes DNSEndpoints.")
	flag.StringVar(&o.dnsEnv, "dns-env", "", "The env file of the DNS server ExternalDNS updates (hack/dns/up.sh).")
	flag.StringVar(&o.dnsOwner, "dns-owner", "", "ExternalDNS's owner in the zone's TXT registry: each plane that publishes into one zone needs its own (default capo-<the base name of --dir>).")
	flag.StringVar(&o.dnsDomain, "dns-domain", "", "The domain under which ExternalDNS manages records (default: the whole zone).")
	flag.StringVar(&o.orc, "orc", "", "The OpenStack Resource Controller's directory (hack/orc.sh: its manager and CRDs); the plane then runs ORC, which resolves the ORC Images machines name.")
	flag.StringVar(&o.upstream, "upstream", "", "Upstream CAPO's directory (hack/upstream-capo.sh: its manager and CRDs); the plane then serves a control endpoint that runs upstream's manager in place of this provider's, and back.")
	flag.Parse()
	if (o.externalDNS == "") != (o.dnsEnv == "") {
		fmt.Fprintln(os.Stderr, "mgmtplane: --external-dns and --dns-env go together")
		os.Exit(2)
	}
	for name, value := range map[string]string{"capi-source": o.capiSource, "capi-manager": o.capiManager, "components": o.components, "provider-image": o.providerImage} {
		if value == "" {
			fmt.Fprintf(os.Stderr, "mgmtplane: --%s is required\n", name)
			os.Exit(2)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintf(os.Stderr, "mgmtplane: %v\n", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s mgmtplane: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// plane is the management plane run starts: each step below sets up a part, in order, and
// registers how to undo it; stop undoes them in reverse.
type plane struct {
	o                       options
	logs, certs, kubeconfig string
	start                   time.Time
	undo                    []func()

	server string // the API server's address
	admin  *rest.Config
	c      client.Client
	comps  *components
	caPEM  []byte
	// ports are free ports on 127.0.0.1: see the steps for which is whose.
	ports        []int
	replicaPorts []providerPorts
	// managers are started at once; replicas[1], the provider's second replica, waits for the
	// control endpoint (the leader election spec).
	managers, replicas []*process
	sup                *supervisor
	// ready are the lines of the ready file the steps add.
	ready []string
}

func run(ctx context.Context, o options) error {
	p := &plane{o: o, logs: filepath.Join(o.dir, "logs"), certs: filepath.Join(o.dir, "certs"), kubeconfig: filepath.Join(o.dir, "kubeconfig"), start: time.Now()}
	defer p.stop()
	for _, step := range []func(context.Context) error{p.startAPIServer, p.prepareManagers, p.startExternalDNS, p.startORC, p.installWebhooks, p.startManagers, p.serveControl} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	if err := p.writeReady(); err != nil {
		return err
	}
	return p.supervise(ctx)
}

// stop undoes what the steps did, the last first.
func (p *plane) stop() {
	for i := len(p.undo) - 1; i >= 0; i-- {
		p.undo[i]()
	}
}

// startAPIServer starts etcd and kube-apiserver with Cluster API's CRDs, writes the
// administrator's kubeconfig and applies the provider's components.
func (p *plane) startAPIServer(ctx context.Context) error {
	for _, d := range []string{p.logs, p.certs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	_ = os.Remove(filepath.Join(p.o.dir, "ready"))
	comps, err := readComponents(p.o.components)
	if err != nil {
		return err
	}
	p.comps = comps
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(p.o.capiSource, "core", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		return fmt.Errorf("starting etcd and kube-apiserver: %w", err)
	}
	p.undo = append(p.undo, func() {
		if err := env.Stop(); err != nil {
			logf("stopping the API server: %v", err)
		}
	})
	p.server = cfg.Host
	logf("API server up at %s (%s)", cfg.Host, time.Since(p.start).Round(time.Millisecond))
	if p.admin, err = localenv.WriteAdminKubeconfig(env, p.kubeconfig); err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return err
	}
	if p.c, err = client.New(p.admin, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	return p.comps.apply(ctx, p.c)
}

// prepareManagers makes the webhook serving certificate, chooses the ports, and prepares the
// Cluster API core manager and the provider's replicas (ports 0-9), with the stand-in for the
// Service in front of the replicas' webhooks (port 1).
func (p *plane) prepareManagers(ctx context.Context) error {
	var err error
	if p.caPEM, err = writeServingCertificate(p.certs); err != nil {
		return err
	}
	if p.ports, err = freePorts(16); err != nil {
		return err
	}
	ports := p.ports
	p.managers = []*process{{
		name: "capi-manager", binary: p.o.capiManager, health: ports[2],
		args: []string{
			"--kubeconfig", p.kubeconfig,
			"--webhook-cert-dir", p.certs, "--webhook-port", strconv.Itoa(ports[0]),
			"--health-addr", fmt.Sprintf("127.0.0.1:%d", ports[2]),
			"--diagnostics-address", fmt.Sprintf("127.0.0.1:%d", ports[3]), "--insecure-diagnostics",
		},
	}}
	p.replicaPorts = []providerPorts{
		{webhook: ports[4], health: ports[5], diagnostics: ports[6]},
		{webhook: ports[7], health: ports[8], diagnostics: ports[9]},
	}
	if p.replicas, err = providerContainers(ctx, p.c, p.admin, p.comps, p.o.providerImage, p.o.dir, p.certs, p.replicaPorts, strings.Fields(p.o.providerArgs)); err != nil {
		return err
	}
	// One replica runs, as the release's Deployment asks.
	p.managers = append(p.managers, p.replicas[0])
	svc, err := webhookService(ports[1], []int{p.replicaPorts[0].webhook, p.replicaPorts[1].webhook})
	if err != nil {
		return err
	}
	p.undo = append(p.undo, func() { _ = svc.Close() })
	return nil
}

// startExternalDNS adds ExternalDNS (health on port 10) to the managers, when asked for.
func (p *plane) startExternalDNS(ctx context.Context) error {
	if p.o.externalDNS == "" {
		return nil
	}
	dns, err := readDNSEnv(p.o.dnsEnv)
	if err != nil {
		return fmt.Errorf("ExternalDNS: %w", err)
	}
	owner, domain := p.o.dnsOwner, p.o.dnsDomain
	if owner == "" {
		owner = "capo-" + filepath.Base(p.o.dir)
	}
	if domain == "" {
		domain = dns.zone
	}
	edns, err := externalDNS(ctx, p.c, p.o.externalDNS, dns, owner, domain, p.kubeconfig, p.ports[10])
	if err != nil {
		return fmt.Errorf("ExternalDNS: %w", err)
	}
	p.managers = append(p.managers, edns)
	p.ready = append(p.ready, "dns_server="+dns.server+":"+dns.port, "dns_zone="+dns.zone, "dns_owner="+owner, "dns_domain="+domain)
	return nil
}

// installWebhooks points Cluster API's webhook configurations at its manager, and the
// provider's at the stand-in Service.
func (p *plane) installWebhooks(ctx context.Context) error {
	capiWebhooks, err := readObjects(filepath.Join(p.o.capiSource, "core", "config", "webhook", "manifests.yaml"))
	if err != nil {
		return err
	}
	if err := installWebhooks(ctx, p.c, capiWebhooks, "capi-", p.ports[0], p.caPEM); err != nil {
		return err
	}
	return installProviderWebhooks(ctx, p.c, p.comps, p.ports[1], p.caPEM)
}

// installProviderWebhooks points the provider's webhook configurations and its CRDs' conversion
// at the stand-in Service on port.
func installProviderWebhooks(ctx context.Context, c client.Client, comps *components, port int, caPEM []byte) error {
	if err := installWebhooks(ctx, c, comps.webhooks, "", port, caPEM); err != nil {
		return err
	}
	return pointConversions(ctx, c, comps.install, port, caPEM)
}

// startManagers starts the managers under the supervisor and waits until each is ready.
func (p *plane) startManagers(ctx context.Context) error {
	p.sup = newSupervisor(p.logs, p.managers...)
	p.sup.add(p.replicas[1])
	p.undo = append(p.undo, func() {
		p.sup.shutdown()
		p.replicas[1].stop()
		for i := len(p.managers) - 1; i >= 0; i-- {
			p.managers[i].stop()
		}
	})
	for _, m := range p.managers {
		if err := m.start(p.logs, p.sup.exited); err != nil {
			return err
		}
	}
	for _, m := range p.managers {
		if err := m.waitReady(ctx); err != nil {
			return err
		}
	}
	return nil
}

// serveControl serves the control endpoint (port 14), with upstream CAPO's switch (ports 11-13)
// when asked for.
func (p *plane) serveControl(context.Context) error {
	mux := http.NewServeMux()
	p.sup.routes(mux)
	if p.o.upstream != "" {
		sw, err := newSwitcher(p.o.upstream, p.sup, p.c, p.comps, p.replicas[0], p.ports[1], p.caPEM, p.logs, p.certs,
			p.kubeconfig, upstreamPorts{webhook: p.ports[11], health: p.ports[12], diagnostics: p.ports[13]})
		if err != nil {
			return fmt.Errorf("upstream CAPO: %w", err)
		}
		p.undo = append(p.undo, sw.stop)
		sw.routes(mux)
		p.ready = append(p.ready, "upstream="+p.o.upstream)
	}
	control, err := serveControl(p.ports[14], mux)
	if err != nil {
		return err
	}
	p.undo = append(p.undo, func() { _ = control.Close() })
	return nil
}

// writeReady writes the ready file, and from now on the supervisor restarts a manager that exits
// unasked.
func (p *plane) writeReady() error {
	metrics := "https"
	if slices.Contains(p.replicas[0].args, "--insecure-diagnostics=true") || slices.Contains(p.comps.deployment.Spec.Template.Spec.Containers[0].Args, "--insecure-diagnostics=true") {
		metrics = "http"
	}
	lines := append([]string{
		"server=" + p.server,
		"kubeconfig=" + p.kubeconfig,
		"logs=" + p.logs,
		fmt.Sprintf("provider_metrics=%s://127.0.0.1:%d/metrics", metrics, p.replicaPorts[0].diagnostics),
		fmt.Sprintf("control=http://127.0.0.1:%d", p.ports[14]),
	}, p.ready...)
	lines = append(lines, "started_in="+time.Since(p.start).Round(time.Millisecond).String())
	if err := os.WriteFile(filepath.Join(p.o.dir, "ready"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	p.sup.mu.Lock()
	p.sup.ready = true
	p.sup.mu.Unlock()
	logf("management plane ready in %s", time.Since(p.start).Round(time.Millisecond))
	return nil
}

// supervise runs until the context ends, restarting a manager that exits unasked.
func (p *plane) supervise(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			logf("stopping")
			return nil
		case e := <-p.sup.exited:
			if e.wanted {
				continue // stopped or killed through the control endpoint
			}
			if err := p.sup.exitedUnasked(e); err != nil {
				return err
			}
		}
	}
}

// installWebhooks creates the webhook configurations among objs, renamed with prefix, with each
// webhook pointed at https://127.0.0.1:port instead of an in-cluster Service.
func installWebhooks(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, prefix string, port int, caPEM []byte) error {
	for _, obj := range objs {
		if kind := obj.GetKind(); kind != "MutatingWebhookConfiguration" && kind != "ValidatingWebhookConfiguration" {
			continue
		}
		obj = obj.DeepCopy()
		obj.SetName(prefix + obj.GetName())
		hooks, _, err := unstructured.NestedSlice(obj.Object, "webhooks")
		if err != nil {
			return fmt.Errorf("%s: %w", obj.GetName(), err)
		}
		for _, h := range hooks {
			hook, ok := h.(map[string]any)
			if !ok {
				return fmt.Errorf("a webhook of %s is not an object", obj.GetName())
			}
			path, _, _ := unstructured.NestedString(hook, "clientConfig", "service", "path")
			hook["clientConfig"] = map[string]any{
				"url":      fmt.Sprintf("https://127.0.0.1:%d%s", port, path),
				"caBundle": base64.StdEncoding.EncodeToString(caPEM),
			}
		}
		if err := unstructured.SetNestedSlice(obj.Object, hooks, "webhooks"); err != nil {
			return err
		}
		if err := createOrReplace(ctx, c, obj); err != nil {
			return err
		}
	}
	return nil
}

// pointConversions points the conversion webhook of each CRD among objs that converts through a
// webhook (ours: v1beta1 <-> v1beta2) at https://127.0.0.1:port/convert, the stand-in for the
// webhook Service, trusting caPEM: what cert-manager's CA injection and the Service do in a real
// cluster.
func pointConversions(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, port int, caPEM []byte) error {
	for _, obj := range objs {
		if strategy, _, _ := unstructured.NestedString(obj.Object, "spec", "conversion", "strategy"); obj.GetKind() != "CustomResourceDefinition" || strategy != "Webhook" {
			continue
		}
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(obj.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKey{Name: obj.GetName()}, crd); err != nil {
			return fmt.Errorf("CRD %s: %w", obj.GetName(), err)
		}
		clientConfig := map[string]any{
			"url":      fmt.Sprintf("https://127.0.0.1:%d/convert", port),
			"caBundle": base64.StdEncoding.EncodeToString(caPEM),
		}
		if err := unstructured.SetNestedMap(crd.Object, clientConfig, "spec", "conversion", "webhook", "clientConfig"); err != nil {
			return err
		}
		if err := c.Update(ctx, crd); err != nil {
			return fmt.Errorf("pointing the conversion webhook of CRD %s: %w", obj.GetName(), err)
		}
	}
	return nil
}

func readObjects(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	objs, err := localenv.DecodeYAML(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return objs, nil
}

func writeServingCertificate(dir string) ([]byte, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "capo management plane webhook CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serving := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(30 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, serving, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	files := map[string][]byte{
		"ca.crt":  caPEM,
		"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"tls.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, err
		}
	}
	return caPEM, nil
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

type process struct {
	name   string
	binary string
	args   []string
	health int
	// healthPath is the readiness probe's path on health (default /readyz).
	healthPath string
	// env is added to this program's environment.
	env []string
	// cleanup, when set, runs once the process has exited.
	cleanup func()
	// killer, when set, SIGKILLs the process (a container's runc would survive its own kill).
	killer  func() error
	cmd     *exec.Cmd
	done    chan struct{}
	started time.Time
	// stopping is set by stop: the exit is wanted.
	stopping atomic.Bool
	// runs counts the starts; the log is truncated at the first only.
	runs int
}

// exit is a process's end: wanted when stop ended it.
type exit struct {
	name   string
	wanted bool
}

// start runs the process (again, once a previous run has exited); its exit is sent to exited.
func (p *process) start(logs string, exited chan<- exit) error {
	mode := os.O_CREATE | os.O_WRONLY | os.O_APPEND
	if p.runs == 0 {
		mode |= os.O_TRUNC
	}
	p.runs++
	p.stopping.Store(false)
	out, err := os.OpenFile(filepath.Join(logs, p.name+".log"), mode, 0o644)
	if err != nil {
		return err
	}
	p.cmd = exec.Command(p.binary, p.args...)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if len(p.env) > 0 {
		p.cmd.Env = append(os.Environ(), p.env...)
	}
	if err := p.cmd.Start(); err != nil {
		_ = out.Close()
		return fmt.Errorf("starting %s: %w", p.name, err)
	}
	done := make(chan struct{})
	p.done = done
	p.started = time.Now()
	logf("started %s (pid %d)", p.name, p.cmd.Process.Pid)
	go func() {
		err := p.cmd.Wait()
		_ = out.Close()
		if p.cleanup != nil {
			p.cleanup()
		}
		logf("%s exited: %v", p.name, err)
		e := exit{name: p.name, wanted: p.stopping.Load()}
		close(done)
		exited <- e
	}()
	return nil
}

// readyTimeout is how long a manager may take to answer its readiness probe.
const readyTimeout = 3 * time.Minute

func (p *process) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(readyTimeout)
	path := p.healthPath
	if path == "" {
		path = "/readyz"
	}
	url := fmt.Sprintf("http://127.0.0.1:%d%s", p.health, path)
	for {
		resp, err := http.Get(url) //nolint:gosec,noctx // loopback probe of a child process
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				logf("%s ready", p.name)
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.done:
			return fmt.Errorf("%s exited before it was ready; see logs/%s.log", p.name, p.name)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready within %s", p.name, readyTimeout)
		}
	}
}

// running reports whether the process was started and has not exited.
func (p *process) running() bool {
	if p.done == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// kill SIGKILLs the process, as an out-of-memory kill or a node's loss would, and returns once it
// has exited; the exit counts as wanted.
func (p *process) kill() error {
	p.stopping.Store(true)
	var err error
	if p.killer != nil {
		err = p.killer()
	} else {
		err = p.cmd.Process.Kill()
	}
	if err != nil {
		return fmt.Errorf("killing %s: %w", p.name, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(20 * time.Second):
		return fmt.Errorf("%s still runs 20s after SIGKILL", p.name)
	}
}

func (p *process) stop() {
	if !p.running() {
		return
	}
	p.stopping.Store(true)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}
