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

package zones

import (
	"net/netip"
	"slices"
)

// CanonicalCIDRs is the form in which allowed CIDRs are compared and sent: host bits cleared, a
// bare address as a /32 or /128, sorted, without duplicates. Octavia stores what it is given, so
// comparing canonical forms is what keeps "10.0.0.1/24" in the spec from being rewritten on
// every reconcile. Entries that are not addresses or prefixes are dropped (admission rejects
// them).
func CanonicalCIDRs(in ...[]string) []string {
	var out []string
	for _, list := range in {
		for _, s := range list {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				addr, aerr := netip.ParseAddr(s)
				if aerr != nil {
					continue
				}
				p = netip.PrefixFrom(addr, addr.BitLen())
			}
			out = append(out, p.Masked().String())
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
