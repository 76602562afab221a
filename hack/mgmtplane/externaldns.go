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

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// dnsServer is what hack/dns/up.sh's env file says about the DNS server ExternalDNS updates.
type dnsServer struct {
	server, port, zone, keyname, algorithm, secretFile string
}

func readDNSEnv(path string) (*dnsServer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	values := map[string]string{}
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		if k, v, ok := strings.Cut(scanner.Text(), "="); ok {
			values[k] = v
		}
	}
	if err := scanner.Err(); err != nil {
		return nil, err
	}
	d := &dnsServer{server: values["server"], port: values["port"], zone: values["zone"], keyname: values["keyname"],
		algorithm: values["algorithm"], secretFile: values["secret_file"]}
	for k, v := range map[string]string{"server": d.server, "port": d.port, "zone": d.zone, "keyname": d.keyname, "algorithm": d.algorithm, "secret_file": d.secretFile} {
		if v == "" {
			return nil, fmt.Errorf("%s: no %s", path, k)
		}
	}
	return d, nil
}

// externalDNS installs ExternalDNS's DNSEndpoint CRD (from dir, which hack/external-dns.sh
// fills) and returns the ExternalDNS process that publishes every DNSEndpoint into the DNS
// server dns describes, by RFC 2136 updates signed with its TSIG key: the crd source, the sync
// policy (records whose endpoint is gone are deleted, which needs the zone transfer), events on,
// so that a change is published within seconds. Its TSIG secret is passed in the environment,
// never on the command line.
//
// Several planes (the demo's and the end-to-end suite's) may publish into one zone: each has
// its own owner in ExternalDNS's TXT registry (owner), so that the sync policy of one never
// deletes the records of another, and only names under domain are its.
func externalDNS(ctx context.Context, c client.Client, dir string, dns *dnsServer, owner, domain, kubeconfig string, health int) (*process, error) {
	secret, err := os.ReadFile(dns.secretFile)
	if err != nil {
		return nil, err
	}
	crds, err := readObjects(filepath.Join(dir, "dnsendpoints.yaml"))
	if err != nil {
		return nil, err
	}
	if err := (&components{install: crds}).apply(ctx, c); err != nil {
		return nil, err
	}
	return &process{
		name: "external-dns", binary: filepath.Join(dir, "external-dns"), health: health, healthPath: "/healthz",
		env: []string{"EXTERNAL_DNS_RFC2136_TSIG_SECRET=" + strings.TrimSpace(string(secret))},
		args: []string{
			"--kubeconfig", kubeconfig,
			"--source=crd",
			"--provider=rfc2136",
			"--rfc2136-host=" + dns.server, "--rfc2136-port=" + dns.port, "--rfc2136-zone=" + dns.zone,
			"--rfc2136-tsig-keyname=" + dns.keyname, "--rfc2136-tsig-secret-alg=" + dns.algorithm,
			"--rfc2136-tsig-axfr",
			"--domain-filter=" + domain,
			"--managed-record-types=A", "--managed-record-types=AAAA",
			"--registry=txt", "--txt-owner-id=" + owner, "--txt-prefix=edns-",
			"--policy=sync",
			"--events", "--interval=10s", "--min-event-sync-interval=1s",
			fmt.Sprintf("--metrics-address=127.0.0.1:%d", health),
		},
	}, nil
}
