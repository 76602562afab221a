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
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
)

// AuthEndpoint is an entry of the operator's allow-list of auth_urls (--allowed-auth-url-hosts):
// a host, and perhaps a scheme and a port.
type AuthEndpoint struct {
	// Scheme is "http" or "https"; "" for either.
	Scheme string
	// Host is a host name or an address, lower case.
	Host string
	// Port is the port; "" for Keystone's usual ones: 5000, or the scheme's (80, 443).
	Port string
}

func (e AuthEndpoint) String() string {
	s := e.Host
	if e.Port != "" {
		s = net.JoinHostPort(e.Host, e.Port)
	}
	if e.Scheme != "" {
		s = e.Scheme + "://" + s
	}
	return s
}

// ParseAuthEndpoint reads an allow-list entry: "keystone.example.com", "keystone.example.com:5000"
// or "https://keystone.example.com:5000"; never a path, a query or user information.
func ParseAuthEndpoint(entry string) (AuthEndpoint, error) {
	entry = strings.ToLower(strings.TrimSpace(entry))
	raw := entry
	if !strings.Contains(raw, "://") {
		raw = "//" + raw
	}
	u, err := url.Parse(raw)
	bad := func() (AuthEndpoint, error) {
		return AuthEndpoint{}, fmt.Errorf("%q is not a host, host:port or scheme://host:port", entry)
	}
	if err != nil || u.Hostname() == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return bad()
	}
	if u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https" {
		return bad()
	}
	return AuthEndpoint{Scheme: u.Scheme, Host: u.Hostname(), Port: u.Port()}, nil
}

// allows says whether the auth_url u may be asked: its host is the entry's, and its scheme and
// port are the entry's, or, where the entry names none, Keystone's usual ones.
func (e AuthEndpoint) allows(u *url.URL) bool {
	scheme := strings.ToLower(u.Scheme)
	if strings.ToLower(u.Hostname()) != e.Host || (scheme != "http" && scheme != "https") {
		return false
	}
	if e.Scheme != "" && scheme != e.Scheme {
		return false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	if e.Port != "" {
		return port == e.Port
	}
	return slices.Contains([]string{"5000", map[string]string{"http": "80", "https": "443"}[scheme]}, port)
}
