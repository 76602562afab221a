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

package v1beta2

import (
	"regexp"
	"slices"
	"strings"
)

// The fields whose name or place differs between v1beta1 and v1beta2: the one table that says so.
// The webhooks rename the fields in their errors and warnings from it (pkg/webhooks/versions.go),
// the controllers name both spellings in their conditions from it (RenameFields), and a test
// holds it against the conversion (fieldnames_test.go).

// Scope is where a renamed field sits.
type Scope string

const (
	// ClusterSpec and MachineSpec are fields of a spec, also under a template's spec.template.spec.
	ClusterSpec Scope = "spec"
	MachineSpec Scope = "machine spec"
	// Port is a field of an entry of a machine's spec.ports.
	Port Scope = "port"
	// SecurityGroups is a field of a cluster's spec.managedSecurityGroups.
	SecurityGroups Scope = "managedSecurityGroups"
	// Status is a field of a cluster's status.
	Status Scope = "status"
)

// RenamedField is one field whose name or place differs. It is not an API type.
// +kubebuilder:object:generate=false
type RenamedField struct {
	Scope Scope
	// V1beta1 and V1beta2 are its paths in its scope, dot-separated.
	V1beta1, V1beta2 string
	// Inverted is set for a boolean whose polarity differs (disable* in v1beta1, enable* in
	// v1beta2).
	Inverted bool
	// Sample is a JSON value of the field, which the test sets in v1beta1 and finds in v1beta2.
	Sample string
}

// RenamedFields are every field whose name or place differs between v1beta1 and v1beta2.
var RenamedFields = []RenamedField{
	{Scope: ClusterSpec, V1beta1: "apiServerLoadBalancer", V1beta2: "apiServer.managedLoadBalancer", Sample: `{"enabled":true,"provider":"ovn"}`},
	{Scope: ClusterSpec, V1beta1: "apiServerFloatingIP", V1beta2: "apiServer.floatingIP", Sample: `"172.24.4.9"`},
	{Scope: ClusterSpec, V1beta1: "apiServerFixedIP", V1beta2: "apiServer.fixedIP", Sample: `"10.6.0.9"`},
	{Scope: ClusterSpec, V1beta1: "apiServerPort", V1beta2: "apiServer.port", Sample: `6444`},
	{Scope: ClusterSpec, V1beta1: "disableAPIServerFloatingIP", V1beta2: "apiServer.enableFloatingIP", Inverted: true, Sample: `true`},
	{Scope: ClusterSpec, V1beta1: "disableExternalNetwork", V1beta2: "enableExternalNetwork", Inverted: true, Sample: `true`},
	{Scope: ClusterSpec, V1beta1: "networkMTU", V1beta2: "managedNetwork.mtu", Sample: `1400`},
	{Scope: ClusterSpec, V1beta1: "disablePortSecurity", V1beta2: "managedNetwork.enablePortSecurity", Inverted: true, Sample: `true`},
	{Scope: ClusterSpec, V1beta1: "externalRouterIPs", V1beta2: "managedRouter.externalIPs", Sample: `[{"fixedIP":"172.24.4.5"}]`},
	{Scope: SecurityGroups, V1beta1: "allNodesSecurityGroupRules", V1beta2: "clusterNodesSecurityGroupRules", Sample: `[{"name":"vxlan","direction":"ingress","protocol":"udp"}]`},
	{Scope: Port, V1beta1: "disablePortSecurity", V1beta2: "enablePortSecurity", Inverted: true, Sample: `true`},
	{Scope: MachineSpec, V1beta1: "flavorID", V1beta2: "flavor.id", Sample: `"3c5e1d2a-0000-4000-8000-000000000001"`},
	{Scope: MachineSpec, V1beta1: "flavor", V1beta2: "flavor.filter.name", Sample: `"m1.small"`},
	{Scope: Status, V1beta1: "apiServerLoadBalancer", V1beta2: "apiServerManagedLoadBalancer", Sample: `{"name":"lb","id":"lb-id"}`},
}

// renaming is one rule of RenameFields: the v1beta1 path, where it may stand, and its v1beta2
// replacement.
type renaming struct {
	from *regexp.Regexp
	to   string
}

// renamings are RenamedFields as rules over text: a field's v1beta1 path, after what its scope
// puts before it ("spec." or "spec.template.spec.", "ports[i].", "managedSecurityGroups.",
// "status."), becomes its v1beta2 path. A v1beta1 name that its v1beta2 path starts with
// ("flavor", "flavor.filter.name") is renamed only where nothing follows it.
var renamings = func() []renaming {
	out := make([]renaming, 0, len(RenamedFields))
	for _, f := range RenamedFields {
		var before string
		switch f.Scope {
		case ClusterSpec, MachineSpec:
			before = `spec\.(?:template\.spec\.)?`
		case Port:
			before = `ports\[\d+\]\.`
		case SecurityGroups:
			before = `managedSecurityGroups\.`
		case Status:
			before = `status\.`
		}
		after := `\b`
		if strings.HasPrefix(f.V1beta2, f.V1beta1+".") {
			after = `\b([^.]|$)`
		}
		from := regexp.MustCompile(`\b(` + before + `)` + regexp.QuoteMeta(f.V1beta1) + after)
		to := "${1}" + f.V1beta2
		if after != `\b` {
			to += "${2}"
		}
		out = append(out, renaming{from: from, to: to})
	}
	return out
}()

// RenameFields rewrites the v1beta1 field paths in s as v1beta2 paths.
func RenameFields(s string) string {
	for _, r := range renamings {
		s = r.from.ReplaceAllString(s, r.to)
	}
	return s
}

// InvertedField says whether a v1beta2 field path ends in a boolean whose polarity differs from
// v1beta1's.
func InvertedField(path string) bool {
	for _, f := range RenamedFields {
		if f.Inverted && strings.HasSuffix(path, f.V1beta2) {
			return true
		}
	}
	return false
}

// fieldPath is a field path in a message: spec or status, then dot-separated names, each
// perhaps indexed.
var fieldPath = regexp.MustCompile(`\b(?:spec|status)(?:\.[A-Za-z]+(?:\[\d+\])?)+`)

// InBothVersions is message, which names fields as v1beta1 does, followed by the v1beta2 paths of
// those whose name differs ("... [v1beta2: spec.apiServer.managedLoadBalancer.network]"): a
// condition is read in either version, and kubectl shows v1beta2 by default. A message that names
// no such field is returned as it is.
func InBothVersions(message string) string {
	if strings.Contains(message, "[v1beta2: ") {
		return message
	}
	var renamed []string
	for _, path := range fieldPath.FindAllString(message, -1) {
		if r := RenameFields(path); r != path && !slices.Contains(renamed, r) {
			renamed = append(renamed, r)
		}
	}
	if len(renamed) == 0 {
		return message
	}
	return message + " [v1beta2: " + strings.Join(renamed, ", ") + "]"
}
