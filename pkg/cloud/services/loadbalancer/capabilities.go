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

package loadbalancer

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"k8s.io/apimachinery/pkg/util/validation/field"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
)

// capabilityTTL is how long what a cloud's Octavia can do is trusted before it is read again, so
// that an operator enabling an availability zone is noticed without a restart.
const capabilityTTL = 10 * time.Minute

// capabilities is what one cloud's Octavia supports. Each part is read the first time it is
// needed and kept for capabilityTTL.
type capabilities struct {
	mu      sync.Mutex
	expires time.Time

	versionRead bool
	// minor is the highest 2.x API minor version Octavia reports.
	minor int

	azsRead bool
	// azs are Octavia's enabled availability zones; azsError says why they could not be read.
	azs      map[string]bool
	azsError string

	// providerAZs says, per provider, whether it reports any availability zone capability.
	providerAZs map[string]bool
	// noAllowedCIDRs are providers that answered 501 to allowed_cidrs.
	noAllowedCIDRs map[string]bool

	flavorsRead bool
	flavors     map[string]string
}

// cloud returns the capabilities of the service's cloud, fresh if they expired.
func (s *Service) cloud() *capabilities {
	m := s.memory
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.capabilities[s.cloudKey]
	if !ok || time.Now().After(c.expires) {
		c = &capabilities{expires: time.Now().Add(capabilityTTL), providerAZs: map[string]bool{}, noAllowedCIDRs: map[string]bool{}}
		m.capabilities[s.cloudKey] = c
	}
	return c
}

// azHint decides whether the Octavia availability zone hint az can be passed for provider. It
// returns the hint to use ("" to omit it) and, when omitted, why.
func (s *Service) azHint(ctx context.Context, provider, az string) (string, string, error) {
	if az == "" {
		return "", "", nil
	}
	c := s.cloud()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.azsRead {
		zones, err := s.lb.ListAvailabilityZones(ctx)
		switch {
		case gophercloud.ResponseCodeIs(err, http.StatusForbidden), clients.IsNotFound(err):
			c.azsError = "Octavia does not let this project list its availability zones"
		case err != nil:
			return "", "", fmt.Errorf("listing Octavia availability zones: %w", err)
		}
		c.azs = map[string]bool{}
		for _, z := range zones {
			if z.Enabled {
				c.azs[z.Name] = true
			}
		}
		c.azsRead = true
	}
	if c.azsError != "" {
		return "", c.azsError, nil
	}
	if !c.azs[az] {
		return "", fmt.Sprintf("Octavia has no enabled availability zone %q", az), nil
	}
	if provider == "" {
		return az, "", nil
	}
	supported, read := c.providerAZs[provider]
	if !read {
		caps, err := s.lb.ListAvailabilityZoneCapabilities(ctx, provider)
		switch {
		case gophercloud.ResponseCodeIs(err, http.StatusForbidden):
			// Only administrators may read capabilities on some clouds: trust the zone list.
			supported = true
		case err != nil && !clients.IsNotFound(err):
			return "", "", fmt.Errorf("listing the availability zone capabilities of Octavia provider %s: %w", provider, err)
		default:
			supported = len(caps) > 0
		}
		c.providerAZs[provider] = supported
	}
	if !supported {
		return "", fmt.Sprintf("Octavia provider %s does not support availability zones", provider), nil
	}
	return az, "", nil
}

// allowedCIDRsSupport says whether listeners of provider accept allowed_cidrs, and why not.
func (s *Service) allowedCIDRsSupport(ctx context.Context, provider string) (bool, string, error) {
	c := s.cloud()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.versionRead {
		versions, err := s.lb.ListAPIVersions(ctx)
		if err != nil {
			return false, "", fmt.Errorf("listing Octavia API versions: %w", err)
		}
		for _, v := range versions {
			if minor, ok := minorOf(v.ID); ok && minor > c.minor {
				c.minor = minor
			}
		}
		c.versionRead = true
	}
	if c.minor < 12 {
		return false, fmt.Sprintf("Octavia's API is version 2.%d; allowed CIDRs need 2.12", c.minor), nil
	}
	if c.noAllowedCIDRs[provider] {
		return false, fmt.Sprintf("Octavia provider %s does not support allowed CIDRs", providerName(provider)), nil
	}
	return true, "", nil
}

// rejectAllowedCIDRs remembers that provider answered 501 to allowed_cidrs.
func (s *Service) rejectAllowedCIDRs(provider string) {
	c := s.cloud()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.noAllowedCIDRs[provider] = true
}

func providerName(p string) string {
	if p == "" {
		return "(the default)"
	}
	return p
}

// minorOf reads the minor version out of "v2.27".
func minorOf(id string) (int, bool) {
	rest, ok := strings.CutPrefix(id, "v2.")
	if !ok {
		return 0, false
	}
	minor, err := strconv.Atoi(rest)
	return minor, err == nil
}

// flavorID resolves an Octavia flavor name (or ID) to its ID.
func (s *Service) flavorID(ctx context.Context, name string) (string, error) {
	if name == "" {
		return "", nil
	}
	c := s.cloud()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.flavorsRead {
		flavors, err := s.lb.ListFlavors(ctx)
		if err != nil {
			return "", fmt.Errorf("listing Octavia flavors: %w", err)
		}
		c.flavors = map[string]string{}
		for _, f := range flavors {
			if f.Enabled {
				c.flavors[f.Name], c.flavors[f.ID] = f.ID, f.ID
			}
		}
		c.flavorsRead = true
	}
	id, ok := c.flavors[name]
	if !ok {
		return "", report.Refuted(infrav1.LoadBalancerConfigurationErrorReason, field.NewPath("spec", "apiServerLoadBalancer", "flavor"), "Octavia has no enabled flavor %q", name)
	}
	return id, nil
}
