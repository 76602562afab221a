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

package localenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// PlaneValue is one value of the management cluster's ready file (hack/mgmt/up.sh), "" when the
// file lacks it.
func PlaneValue(mgmtDir, key string) (string, error) {
	data, err := os.ReadFile(filepath.Join(mgmtDir, "ready"))
	if err != nil {
		return "", fmt.Errorf("the management plane's ready file: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, key+"="); ok {
			return v, nil
		}
	}
	return "", nil
}

// LookupA asks the DNS server at server (host:port) for host's A records, directly (no cache, no
// search domains), and returns the addresses sorted; none when the name does not exist.
func LookupA(ctx context.Context, server, host string) ([]string, error) {
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		d := net.Dialer{Timeout: 2 * time.Second}
		return d.DialContext(ctx, network, server)
	}}
	ips, err := r.LookupIP(ctx, "ip4", strings.TrimSuffix(host, ".")+".")
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = ip.String()
	}
	slices.Sort(out)
	return out, nil
}
