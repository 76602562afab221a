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
	"fmt"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	infrav1beta2 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta2"
)

// The webhooks validate v1beta1 objects: a request in v1beta2 reaches them converted (the
// configurations' matchPolicy is Equivalent). Their errors and warnings then name fields where
// v1beta1 has them; these rules move each name to where the client that wrote v1beta2 has it.

// inV1beta2 rewrites the v1beta1 field names in s as v1beta2 names, from the one table of renamed
// fields (infrav1beta2.RenamedFields).
func inV1beta2(s string) string { return infrav1beta2.RenameFields(s) }

// requestedInV1beta2 says whether the client wrote the object under admission in v1beta2.
func requestedInV1beta2(ctx context.Context) bool {
	req, err := admission.RequestFromContext(ctx)
	return err == nil && req.RequestKind != nil && req.RequestKind.Version == "v1beta2"
}

// What the webhooks echo is bounded, whatever the object holds: a value is cut at maxEchoedValue
// bytes, a detail at maxEchoedDetail, and a field gets at most maxErrorsPerField errors. An
// admission answer built from a huge annotation would otherwise take the shared manager's memory.
const (
	maxEchoedValue    = 256
	maxEchoedDetail   = 1024
	maxErrorsPerField = 5
)

// truncated is s cut at n bytes (on a rune boundary), saying how much was left out.
func truncated(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d more bytes)", s[:cut], len(s)-cut)
}

// bounded is errs with every echoed value and detail truncated.
func bounded(errs field.ErrorList) field.ErrorList {
	out := make(field.ErrorList, 0, len(errs))
	for _, e := range errs {
		e := *e
		if v, ok := e.BadValue.(string); ok {
			e.BadValue = truncated(v, maxEchoedValue)
		}
		e.Detail = truncated(e.Detail, maxEchoedDetail)
		out = append(out, &e)
	}
	return out
}

// invalid is the Invalid error for errs, its field names (in paths and details) in the version the
// client wrote, and a boolean whose polarity changed given as the client wrote it. What it echoes
// is bounded.
func invalid(ctx context.Context, gk schema.GroupKind, name string, errs field.ErrorList) error {
	errs = bounded(errs)
	if requestedInV1beta2(ctx) {
		translated := make(field.ErrorList, 0, len(errs))
		for _, e := range errs {
			e := *e
			e.Field = inV1beta2(e.Field)
			e.Detail = inV1beta2(e.Detail)
			if b, ok := e.BadValue.(bool); ok && infrav1beta2.InvertedField(e.Field) {
				e.BadValue = !b
			}
			translated = append(translated, &e)
		}
		errs = translated
	}
	return apierrors.NewInvalid(gk, name, errs)
}

// warningsFor are warnings in the version the client wrote, each bounded.
func warningsFor(ctx context.Context, warnings admission.Warnings) admission.Warnings {
	out := make(admission.Warnings, len(warnings))
	for i, w := range warnings {
		if requestedInV1beta2(ctx) {
			w = inV1beta2(w)
		}
		out[i] = truncated(w, maxEchoedDetail)
	}
	return out
}
