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

// Package preflight checks, before a management cluster switches from upstream Cluster API
// Provider OpenStack (v0.14) to this provider, what the switch would lose or change: per stored
// object, each field this provider's CRDs would prune or its controllers do not honour, the
// finalizers, labels and annotations whose meaning changes, and the objects of upstream's other
// kinds that nothing reconciles afterwards. It reads; it changes nothing.
package preflight

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Severity says what a finding costs.
type Severity string

const (
	// Lost: something the cloud has or the user asked for is no longer honoured after the switch.
	Lost Severity = "LOST"
	// Changed: the object is taken over, but something means something else afterwards.
	Changed Severity = "CHANGED"
	// Note: nothing is lost; what the operator should know or do.
	Note Severity = "NOTE"
)

// Finding is one thing the switch does to one object.
type Finding struct {
	Severity Severity
	Kind     string
	Object   string // namespace/name
	Path     string // the field, "spec.bastion"; "" for the whole object
	Message  string
}

func (f Finding) String() string {
	where := f.Kind + " " + f.Object
	if f.Path != "" {
		where += " " + f.Path
	}
	return fmt.Sprintf("%-7s %s: %s", f.Severity, where, f.Message)
}

// Kinds this provider serves, and where each keeps the spec of what it creates.
var Kinds = []struct {
	Kind     string
	SpecPath []string
}{
	{"OpenStackCluster", []string{"spec"}},
	{"OpenStackClusterTemplate", []string{"spec", "template", "spec"}},
	{"OpenStackMachine", []string{"spec"}},
	{"OpenStackMachineTemplate", []string{"spec", "template", "spec"}},
}

// Group is the API group of the kinds, upstream's and ours.
const Group = "infrastructure.cluster.x-k8s.io"

// ServedVersions are the versions this provider's CRDs serve, the storage version first.
var ServedVersions = []string{"v1beta1", "v1beta2"}

// CheckObject returns the findings of one stored object of kind, read from the API server while
// upstream's CRDs serve it.
func CheckObject(kind string, obj *unstructured.Unstructured, ours Schemas) []Finding {
	id := obj.GetNamespace() + "/" + obj.GetName()
	var out []Finding
	add := func(sev Severity, path, format string, args ...any) {
		out = append(out, Finding{Severity: sev, Kind: kind, Object: id, Path: path, Message: fmt.Sprintf(format, args...)})
	}
	version := strings.TrimPrefix(obj.GetAPIVersion(), Group+"/")
	schemaOf := ours.Of(version, kind)
	if schemaOf == nil {
		if ours.Of(ServedVersions[0], kind) == nil {
			add(Lost, "", "this provider has no CRD for the kind")
			return out
		}
		add(Lost, "apiVersion", "read as %s: this provider serves %s only; convert the object with upstream's release first", obj.GetAPIVersion(), strings.Join(ServedVersions, " and "))
		return out
	}
	// What the CRD would prune: everything under spec (status is rebuilt from the cloud).
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	if specSchema, ok := schemaOf.Properties["spec"]; ok {
		for _, p := range pruned("spec", spec, &specSchema) {
			add(Lost, p, "%s; this provider's CRD does not have the field, so the API server drops it", unsupportedWhy(kind, p))
		}
	}
	// Set, kept in the schema for compatibility, but not acted upon.
	for _, k := range Kinds {
		if k.Kind != kind {
			continue
		}
		inner, found, _ := unstructured.NestedMap(obj.Object, k.SpecPath...)
		if !found {
			break
		}
		prefix := strings.Join(k.SpecPath, ".")
		for _, check := range honoured[strings.TrimSuffix(kind, "Template")] {
			if path, why := check(version, inner); path != "" {
				add(Lost, prefix+"."+path, "%s", why)
			}
		}
	}
	if kind == "OpenStackMachine" {
		_, hasID, _ := unstructured.NestedString(obj.Object, "status", "instanceID")
		_, hasProviderID, _ := unstructured.NestedString(obj.Object, "spec", "providerID")
		if !hasID && !hasProviderID {
			add(Note, "status.instanceID", "no server recorded yet: this provider takes the server upstream named after the machine, on the cluster network, if there is exactly one")
		}
	}
	if fd, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "failureDomains"); ok {
		if _, isMap := fd.(map[string]any); isMap {
			add(Note, "status.failureDomains", "upstream's map is read as empty and written again as the list Cluster API's v1beta2 contract has")
		}
	}
	if status, ok, _ := unstructured.NestedMap(obj.Object, "status"); ok {
		if st, ok := schemaOf.Properties["status"]; ok {
			if p := pruned("status", status, &st); len(p) > 0 {
				add(Note, "status", "upstream's status fields %s are dropped; this provider rebuilds what it needs from the cloud", strings.Join(p, ", "))
			}
		}
	}
	for _, f := range obj.GetFinalizers() {
		if !slices.Contains(ourFinalizers, f) {
			add(Changed, "metadata.finalizers", "finalizer %s is not this provider's: nothing removes it after the switch, so deleting the object would hang; remove it once the switch is done", f)
		}
	}
	return out
}

// Report is the result of a check: findings in a stable order.
type Report struct {
	Findings []Finding
	Checked  map[string]int // objects read per kind
}

// Blocking says whether the switch would lose something.
func (r *Report) Blocking() bool {
	return slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Severity == Lost })
}

// Write prints the findings, then a verdict.
func (r *Report) Write(w io.Writer) error {
	kinds := make([]string, 0, len(r.Checked))
	for k := range r.Checked {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var counts []string
	for _, k := range kinds {
		counts = append(counts, fmt.Sprintf("%d %s", r.Checked[k], k))
	}
	if _, err := fmt.Fprintf(w, "checked %s\n", strings.Join(counts, ", ")); err != nil {
		return err
	}
	for _, f := range r.Findings {
		if _, err := fmt.Fprintln(w, f.String()); err != nil {
			return err
		}
	}
	verdict := "nothing is lost by switching"
	if r.Blocking() {
		verdict = "the switch would lose what the LOST lines say: change those objects first, or do not switch"
	}
	_, err := fmt.Fprintln(w, verdict)
	return err
}

// Run reads every object of the provider's kinds, and of upstream's other kinds, through c (a
// client of the management cluster while upstream is installed) and checks them.
func Run(ctx context.Context, c client.Reader, ours Schemas) (*Report, error) {
	r := &Report{Checked: map[string]int{}}
	// Each kind's installed CRD, read once: it says which version to read the objects in and
	// which versions may still be stored.
	crds := map[string]*unstructured.Unstructured{}
	for _, k := range Kinds {
		crd, err := getCRD(ctx, c, k.Kind)
		if err != nil {
			return nil, err
		}
		crds[k.Kind] = crd
	}
	for _, k := range Kinds {
		version := readVersion(crds[k.Kind])
		objs, err := list(ctx, c, schema.GroupVersionKind{Group: Group, Version: version, Kind: k.Kind})
		if err != nil {
			return nil, err
		}
		r.Checked[k.Kind] = len(objs)
		for i := range objs {
			r.Findings = append(r.Findings, CheckObject(k.Kind, &objs[i], ours)...)
		}
	}
	checkStoredVersions(crds, r)
	for _, other := range upstreamOnlyKinds {
		objs, err := list(ctx, c, other.gvk)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		r.Checked[other.gvk.Kind] = len(objs)
		for i := range objs {
			r.Findings = append(r.Findings, Finding{Severity: other.severity, Kind: other.gvk.Kind,
				Object: objs[i].GetNamespace() + "/" + objs[i].GetName(), Message: other.why})
		}
	}
	sort.SliceStable(r.Findings, func(i, j int) bool {
		a, b := r.Findings[i], r.Findings[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Object != b.Object {
			return a.Object < b.Object
		}
		return a.Path < b.Path
	})
	return r, nil
}

// readVersion is the version to read a kind's objects in, from its installed CRD: v1beta2 when it serves it
// (upstream's v0.15 stores it: reading it shows the objects as stored, with the fields only
// v1beta2 has), v1beta1 otherwise (upstream's v0.14, or no CRD at all).
func readVersion(crd *unstructured.Unstructured) string {
	if crd == nil {
		return "v1beta1"
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		if v, ok := v.(map[string]any); ok && v["name"] == "v1beta2" && v["served"] == true {
			return "v1beta2"
		}
	}
	return "v1beta1"
}

// getCRD is the installed CRD of kind, or nil when there is none.
func getCRD(ctx context.Context, c client.Reader, kind string) (*unstructured.Unstructured, error) {
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	name := strings.ToLower(kind) + "s." + Group
	if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading CRD %s: %w", name, err)
	}
	return crd, nil
}

// checkStoredVersions reports the CRDs of the kinds whose objects may still be stored in a version
// this provider's CRDs do not serve: the API server refuses a CRD that drops a stored version.
func checkStoredVersions(crds map[string]*unstructured.Unstructured, r *Report) {
	for _, k := range Kinds {
		crd := crds[k.Kind]
		if crd == nil {
			continue
		}
		stored, _, _ := unstructured.NestedStringSlice(crd.Object, "status", "storedVersions")
		if others := slices.DeleteFunc(slices.Clone(stored), func(v string) bool { return slices.Contains(ServedVersions, v) }); len(others) > 0 {
			r.Findings = append(r.Findings, Finding{Severity: Lost, Kind: "CustomResourceDefinition", Object: "/" + crd.GetName(), Path: "status.storedVersions",
				Message: fmt.Sprintf("objects may still be stored as %s: this provider's CRD serves %s only, and the API server refuses to drop a stored version; rewrite every %s, then set storedVersions to the versions it serves",
					strings.Join(others, ", "), strings.Join(ServedVersions, " and "), k.Kind)})
		}
	}
}

func list(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind) ([]unstructured.Unstructured, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.List(ctx, l); err != nil {
		return nil, err
	}
	return l.Items, nil
}
