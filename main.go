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

// The manager of the OpenStack infrastructure provider for Cluster API.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/logs"
	logsv1 "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capiflags "sigs.k8s.io/cluster-api/util/flags"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/capo-multiaz/cluster-api-provider-openstack/controllers"
	managerscheme "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scheme"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/storagemigration"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/takeover"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/webhooks"
)

// Leader election and events are the manager's own needs; each controller declares the rest.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=system,resources=leases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",namespace=system,resources=configmaps,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// Leader election records its events through the core API's events, not events.k8s.io's.
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// The metrics endpoint authenticates and authorizes its callers (unless --insecure-diagnostics).
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// version is the release the binary was built for; make sets it with
// -ldflags "-X main.version=<release>" (make build, make image).
var version = "dev"

// options are the manager's command line flags.
type options struct {
	printVersion bool

	logs    *logs.Options
	manager capiflags.ManagerOptions

	leaderElect              bool
	leaderElectLeaseDuration time.Duration
	leaderElectRenewDeadline time.Duration
	leaderElectRetryPeriod   time.Duration

	healthAddr         string
	webhookHost        string
	webhookPort        int
	webhookCertDir     string
	webhookCertName    string
	webhookKeyName     string
	syncPeriod         time.Duration
	watchNamespace     string
	watchFilterValue   string
	clusterConcurrency int
	machineConcurrency int

	// allowedAuthHosts and dnsSuffixes are the operator's policy for tenants.
	allowedAuthHosts []string
	authEndpoints    []scope.AuthEndpoint
	dnsSuffixes      []string
	// takeoverRecord is the ConfigMap, namespace/name, of the operator's takeover record.
	takeoverRecord string
}

func newOptions() *options {
	return &options{logs: logs.NewOptions()}
}

func (o *options) addFlags(fs *pflag.FlagSet) {
	logsv1.AddFlags(o.logs, fs)
	capiflags.AddManagerOptions(fs, &o.manager)

	fs.BoolVar(&o.printVersion, "version", false, "Print the release this binary was built for, and exit.")

	fs.BoolVar(&o.leaderElect, "leader-elect", false,
		"Enable leader election, so that only one replica of the manager reconciles at a time.")
	fs.DurationVar(&o.leaderElectLeaseDuration, "leader-elect-lease-duration", 15*time.Second,
		"How long non-leaders wait before they may take over the lease.")
	fs.DurationVar(&o.leaderElectRenewDeadline, "leader-elect-renew-deadline", 10*time.Second,
		"How long the leader retries renewing its lease before it gives up leadership.")
	fs.DurationVar(&o.leaderElectRetryPeriod, "leader-elect-retry-period", 2*time.Second,
		"How long candidates wait between attempts to acquire or renew the lease.")

	fs.StringVar(&o.healthAddr, "health-addr", ":9440",
		"The address the health (/healthz) and readiness (/readyz) probes are served on.")
	fs.StringVar(&o.webhookHost, "webhook-host", "",
		"The address the admission webhook server binds to; every address when empty.")
	fs.IntVar(&o.webhookPort, "webhook-port", 9443,
		"The port the admission webhook server listens on; 0 disables the webhooks.")
	fs.StringVar(&o.webhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs/",
		"The directory holding the webhook server's certificate and key.")
	fs.StringVar(&o.webhookCertName, "webhook-cert-name", "tls.crt", "The webhook server's certificate file name.")
	fs.StringVar(&o.webhookKeyName, "webhook-key-name", "tls.key", "The webhook server's key file name.")

	fs.DurationVar(&o.syncPeriod, "sync-period", 10*time.Minute,
		"How often every watched object is reconciled even when nothing changed.")
	fs.StringVar(&o.watchNamespace, "namespace", "",
		"Watch only this namespace; all namespaces when empty.")
	fs.StringVar(&o.watchFilterValue, "watch-filter", "",
		fmt.Sprintf("Reconcile only objects whose %s label has this value; all objects when empty.", clusterv1.WatchLabel))
	fs.IntVar(&o.clusterConcurrency, "openstackcluster-concurrency", 10,
		"How many OpenStackClusters are reconciled at once.")
	fs.IntVar(&o.machineConcurrency, "openstackmachine-concurrency", 10,
		"How many OpenStackMachines (and, apart, OpenStackMachineTemplates) are reconciled at once.")

	fs.StringSliceVar(&o.allowedAuthHosts, "allowed-auth-url-hosts", nil,
		"The endpoints an identity Secret's auth_url may name, comma separated: host (on Keystone's usual ports, 5000 or "+
			"the scheme's), host:port, or scheme://host:port; any when empty. "+
			"Set it to your Keystones so that a tenant cannot have the manager fetch another URL.")
	fs.StringSliceVar(&o.dnsSuffixes, "dns-suffixes", nil,
		"The DNS suffixes under which clusters may publish their endpoint's records (spec.apiServerLoadBalancer.dns), "+
			"comma separated (example.com allows api.prod.example.com); DNS publishing is off when empty.")
	fs.StringVar(&o.takeoverRecord, "takeover-record", "",
		"The ConfigMap, namespace/name, that records the objects whose resources upstream CAPO made and this provider may adopt "+
			"(written by the pre-flight's --record-takeover); default "+takeover.DefaultName+" in the manager's namespace ($POD_NAMESPACE).")
}

func (o *options) validate() error {
	var errs []error
	if ns, name, ok := strings.Cut(o.takeoverRecord, "/"); ok && (ns == "" || name == "" || strings.Contains(name, "/")) {
		errs = append(errs, fmt.Errorf("--takeover-record %q: want namespace/name, or a name", o.takeoverRecord))
	}
	// An empty list reaches the manager as "" (the components file's default, as clusterctl
	// needs one): no entry.
	o.allowedAuthHosts = slices.DeleteFunc(o.allowedAuthHosts, func(h string) bool { return strings.TrimSpace(h) == "" })
	o.authEndpoints = nil
	for _, h := range o.allowedAuthHosts {
		e, err := scope.ParseAuthEndpoint(h)
		if err != nil {
			errs = append(errs, fmt.Errorf("--allowed-auth-url-hosts: %w", err))
			continue
		}
		o.authEndpoints = append(o.authEndpoints, e)
	}
	o.dnsSuffixes = slices.DeleteFunc(o.dnsSuffixes, func(d string) bool { return strings.TrimSpace(d) == "" })
	for i, d := range o.dnsSuffixes {
		o.dnsSuffixes[i] = strings.ToLower(strings.Trim(strings.TrimSpace(d), "."))
		if o.dnsSuffixes[i] == "" || strings.ContainsAny(o.dnsSuffixes[i], "*/: \"") {
			errs = append(errs, fmt.Errorf("--dns-suffixes: %q is not a DNS suffix", d))
		}
	}
	if o.clusterConcurrency < 1 {
		errs = append(errs, fmt.Errorf("--openstackcluster-concurrency must be at least 1, got %d", o.clusterConcurrency))
	}
	if o.machineConcurrency < 1 {
		errs = append(errs, fmt.Errorf("--openstackmachine-concurrency must be at least 1, got %d", o.machineConcurrency))
	}
	if o.syncPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--sync-period must be positive, got %s", o.syncPeriod))
	}
	if o.webhookPort < 0 || o.webhookPort > 65535 {
		errs = append(errs, fmt.Errorf("--webhook-port must be between 0 and 65535, got %d", o.webhookPort))
	}
	return errors.Join(errs...)
}

// newManager builds the controller-runtime manager from the options. It registers the webhooks
// (unless the webhook port is 0); controllers register themselves in later phases.
func newManager(restConfig *rest.Config, o *options) (manager.Manager, error) {
	scheme, err := managerscheme.New()
	if err != nil {
		return nil, fmt.Errorf("building the scheme: %w", err)
	}
	tlsOptions, metricsOptions, err := capiflags.GetManagerOptions(o.manager)
	if err != nil {
		return nil, fmt.Errorf("reading the TLS and diagnostics options: %w", err)
	}

	var watchNamespaces map[string]cache.Config
	if o.watchNamespace != "" {
		watchNamespaces = map[string]cache.Config{o.watchNamespace: {}}
	}

	mgrOptions := ctrl.Options{
		Scheme:                     scheme,
		LeaderElection:             o.leaderElect,
		LeaderElectionID:           "controller-leader-election-capo-multiaz",
		LeaderElectionResourceLock: "leases",
		LeaseDuration:              &o.leaderElectLeaseDuration,
		RenewDeadline:              &o.leaderElectRenewDeadline,
		RetryPeriod:                &o.leaderElectRetryPeriod,
		HealthProbeBindAddress:     o.healthAddr,
		Metrics:                    *metricsOptions,
		Cache: cache.Options{
			DefaultNamespaces: watchNamespaces,
			SyncPeriod:        &o.syncPeriod,
		},
	}
	if o.webhookPort > 0 {
		mgrOptions.WebhookServer = webhook.NewServer(webhook.Options{
			Host:     o.webhookHost,
			Port:     o.webhookPort,
			CertDir:  o.webhookCertDir,
			CertName: o.webhookCertName,
			KeyName:  o.webhookKeyName,
			TLSOpts:  tlsOptions,
		})
	}

	mgr, err := ctrl.NewManager(restConfig, mgrOptions)
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding the health check: %w", err)
	}
	if o.webhookPort > 0 {
		if err := webhooks.SetupWithManager(mgr); err != nil {
			return nil, err
		}
		if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
			return nil, fmt.Errorf("adding the webhook readiness check: %w", err)
		}
	} else if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding the readiness check: %w", err)
	}
	return mgr, nil
}

// setupControllers registers the reconcilers with the manager.
func setupControllers(ctx context.Context, mgr manager.Manager, o *options) error {
	factory := &scope.SecretFactory{Reader: mgr.GetAPIReader(), Log: ctrl.Log.WithName("scope"), AllowedAuthHosts: o.authEndpoints}
	record := &takeover.Record{Reader: mgr.GetAPIReader(), Key: o.takeoverKey()}
	ctrl.Log.Info("Takeovers from upstream CAPO are read from ConfigMap " + record.Key.String())
	if err := (&controllers.OpenStackClusterReconciler{
		Client:           mgr.GetClient(),
		APIReader:        mgr.GetAPIReader(),
		Recorder:         mgr.GetEventRecorder("openstackcluster-controller"),
		ScopeFactory:     factory,
		WatchFilterValue: o.watchFilterValue,
		DNSSuffixes:      o.dnsSuffixes,
		Takeover:         record,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: o.clusterConcurrency}); err != nil {
		return fmt.Errorf("setting up the OpenStackCluster controller: %w", err)
	}
	if err := (&controllers.OpenStackMachineReconciler{
		Client:           mgr.GetClient(),
		APIReader:        mgr.GetAPIReader(),
		Recorder:         mgr.GetEventRecorder("openstackmachine-controller"),
		ScopeFactory:     factory,
		WatchFilterValue: o.watchFilterValue,
		Takeover:         record,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: o.machineConcurrency}); err != nil {
		return fmt.Errorf("setting up the OpenStackMachine controller: %w", err)
	}
	if err := (&controllers.OpenStackFloatingIPPoolReconciler{
		Client:           mgr.GetClient(),
		APIReader:        mgr.GetAPIReader(),
		Recorder:         mgr.GetEventRecorder("openstackfloatingippool-controller"),
		ScopeFactory:     factory,
		WatchFilterValue: o.watchFilterValue,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: o.machineConcurrency}); err != nil {
		return fmt.Errorf("setting up the OpenStackFloatingIPPool controller: %w", err)
	}
	// After an upgrade that changed a CRD's storage version, the leader rewrites the stored
	// objects in it and trims the CRD's status.storedVersions (docs/api.md).
	if err := mgr.Add(&storagemigration.Migrator{
		Reader: mgr.GetAPIReader(),
		Writer: mgr.GetClient(),
		Log:    ctrl.Log.WithName("storagemigration"),
	}); err != nil {
		return fmt.Errorf("setting up the storage migration: %w", err)
	}
	if err := (&controllers.OpenStackMachineTemplateReconciler{
		Client:           mgr.GetClient(),
		ScopeFactory:     factory,
		WatchFilterValue: o.watchFilterValue,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: o.machineConcurrency}); err != nil {
		return fmt.Errorf("setting up the OpenStackMachineTemplate controller: %w", err)
	}
	return nil
}

func main() {
	o := newOptions()
	fs := pflag.NewFlagSet(os.Args[0], pflag.ExitOnError)
	o.addFlags(fs)
	// controller-runtime registers --kubeconfig on the standard flag set.
	fs.AddGoFlagSet(flag.CommandLine)
	_ = fs.Parse(os.Args[1:])
	if o.printVersion {
		fmt.Println(version)
		return
	}

	if err := logsv1.ValidateAndApply(o.logs, nil); err != nil {
		fmt.Fprintf(os.Stderr, "invalid logging flags: %v\n", err)
		os.Exit(2)
	}
	ctrl.SetLogger(klog.Background())
	log := ctrl.Log.WithName("setup")

	if err := o.validate(); err != nil {
		log.Error(err, "invalid flags")
		os.Exit(2)
	}
	if len(o.authEndpoints) == 0 {
		log.Info("WARNING: --allowed-auth-url-hosts is empty: the manager asks any auth_url a tenant's identity Secret names, " +
			"from inside your network. Set it to your Keystones when tenants share this management cluster.")
	}

	restConfig, err := ctrl.GetConfig()
	if err != nil {
		log.Error(err, "loading the kubeconfig")
		os.Exit(1)
	}
	restConfig.UserAgent = "capo-multiaz-manager"

	mgr, err := newManager(restConfig, o)
	if err != nil {
		log.Error(err, "setting up the manager")
		os.Exit(1)
	}

	ctx := ctrl.SetupSignalHandler()
	if err := setupControllers(ctx, mgr, o); err != nil {
		log.Error(err, "setting up the controllers")
		os.Exit(1)
	}
	log.Info("starting the manager", "version", version)
	if err := mgr.Start(ctx); err != nil {
		log.Error(err, "running the manager")
		os.Exit(1)
	}
}

// takeoverKey is the takeover record's ConfigMap: --takeover-record, else takeover.DefaultName in
// the manager's namespace ($POD_NAMESPACE, else the service account's, else capo-system).
func (o *options) takeoverKey() types.NamespacedName {
	if ns, name, ok := strings.Cut(o.takeoverRecord, "/"); ok {
		return types.NamespacedName{Namespace: ns, Name: name}
	}
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
			ns = strings.TrimSpace(string(b))
		}
	}
	if ns == "" {
		ns = "capo-system"
	}
	name := o.takeoverRecord
	if name == "" {
		name = takeover.DefaultName
	}
	return types.NamespacedName{Namespace: ns, Name: name}
}
