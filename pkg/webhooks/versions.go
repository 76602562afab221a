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

package webhooks

import (
	"context"
	"regexp"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// The webhooks validate v1beta1 objects: a request in v1beta2 reaches them converted (the
// configurations' matchPolicy is Equivalent). Their errors and warnings then name fields where
// v1beta1 has them; these rules move each name to where the client that wrote v1beta2 has it.

// v1beta2Fields maps a v1beta1 field path, under spec (or spec.template.spec) or status, to its
// v1beta2 path. The booleans among them also change polarity (invertedFields).
var v1beta2Fields = []struct {
	from *regexp.Regexp
	to   string
}{
	{regexp.MustCompile(`\b(spec\.(?:template\.spec\.)?)apiServerLoadBalancer\b`), "${1}apiServer.managedLoadBalancer"},
	{regexp.MustCompile(`\b(spec\.(?:template\.spec\.)?)apiServerFloatingIP\b`), "${1}apiServer.floatingIP"},
	{regexp.MustCompile(`\b(spec\.(?:template\.spec\.)?)apiServerFixedIP\b`), "${1}apiServer.fixedIP"},
	{regexp.MustCompile(`\b(spec\.(?:template\.spec\.)?)apiServerPort\b`), "${1}apiServer.port"},
	{regexp.MustCompile(`\b(spec\.(?:template\.spec\.)?)disableAPIServerFloatingIP\b`), "${1}apiServer.enableFloatingIP"},
	{regexp.MustCompile(`\b(spec\.(?:template\.spec\.)?)disableExternalNetwork\b`), "${1}enableExternalNetwork"},
	{regexp.MustCompile(`\b(spec\.(?:template\.spec\.)?)networkMTU\b`), "${1}managedNetwork.mtu"},
	{regexp.MustCompile(`\b(spec\.(?:template\.spec\.)?)disablePortSecurity\b`), "${1}managedNetwork.enablePortSecurity"},
	{regexp.MustCompile(`\b(spec\.(?:template\.spec\.)?)externalRouterIPs\b`), "${1}managedRouter.externalIPs"},
	{regexp.MustCompile(`\b(managedSecurityGroups\.)allNodesSecurityGroupRules\b`), "${1}clusterNodesSecurityGroupRules"},
	{regexp.MustCompile(`\b(ports\[\d+\]\.)disablePortSecurity\b`), "${1}enablePortSecurity"},
	{regexp.MustCompile(`\b(spec\.(?:template\.spec\.)?)flavorID\b`), "${1}flavor.id"},
	{regexp.MustCompile(`\b(spec\.(?:template\.spec\.)?)flavor\b([^.]|$)`), "${1}flavor.filter.name${2}"},
	{regexp.MustCompile(`\bstatus\.apiServerLoadBalancer\b`), "status.apiServerManagedLoadBalancer"},
}

// invertedFields are the v1beta2 names of the booleans whose polarity differs from v1beta1's.
var invertedFields = regexp.MustCompile(`(enableFloatingIP|enableExternalNetwork|enablePortSecurity)$`)

// inV1beta2 rewrites the v1beta1 field names in s as v1beta2 names.
func inV1beta2(s string) string {
	for _, r := range v1beta2Fields {
		s = r.from.ReplaceAllString(s, r.to)
	}
	return s
}

// requestedInV1beta2 says whether the client wrote the object under admission in v1beta2.
func requestedInV1beta2(ctx context.Context) bool {
	req, err := admission.RequestFromContext(ctx)
	return err == nil && req.RequestKind != nil && req.RequestKind.Version == "v1beta2"
}

// invalid is the Invalid error for errs, its field names (in paths and details) in the version the
// client wrote, and a boolean whose polarity changed given as the client wrote it.
func invalid(ctx context.Context, gk schema.GroupKind, name string, errs field.ErrorList) error {
	if requestedInV1beta2(ctx) {
		translated := make(field.ErrorList, 0, len(errs))
		for _, e := range errs {
			e := *e
			e.Field = inV1beta2(e.Field)
			e.Detail = inV1beta2(e.Detail)
			if b, ok := e.BadValue.(bool); ok && invertedFields.MatchString(e.Field) {
				e.BadValue = !b
			}
			translated = append(translated, &e)
		}
		errs = translated
	}
	return apierrors.NewInvalid(gk, name, errs)
}

// warningsFor are warnings in the version the client wrote.
func warningsFor(ctx context.Context, warnings admission.Warnings) admission.Warnings {
	if !requestedInV1beta2(ctx) {
		return warnings
	}
	out := make(admission.Warnings, len(warnings))
	for i, w := range warnings {
		out[i] = inV1beta2(w)
	}
	return out
}
