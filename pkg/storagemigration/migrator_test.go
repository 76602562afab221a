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

package storagemigration

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	infrav1beta2 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta2"
	managerscheme "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scheme"
)

// scriptedReader answers Get with the CRD it holds, after panicking and failing as told; List
// is never expected.
type scriptedReader struct {
	panics, failures int
	crd              *apiextensionsv1.CustomResourceDefinition
	gets             int
}

func (r *scriptedReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	r.gets++
	if r.panics > 0 {
		r.panics--
		panic("a bug in the answer's handling")
	}
	if r.failures > 0 {
		r.failures--
		return errors.New("the API server did not answer")
	}
	if r.crd == nil {
		return apierrors.NewNotFound(schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}, key.Name)
	}
	r.crd.DeepCopyInto(obj.(*apiextensionsv1.CustomResourceDefinition))
	return nil
}

func (r *scriptedReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("unexpected List")
}

// A panic and a failure are retried after Retry; Start returns once every CRD is moved (here: a
// CRD already stored in one version, and one not installed).
func TestStartRetriesPanicsAndFailuresThenReturns(t *testing.T) {
	clean := &apiextensionsv1.CustomResourceDefinition{
		Spec:   apiextensionsv1.CustomResourceDefinitionSpec{Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1beta1"}, {Name: "v1beta2", Storage: true}}},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{StoredVersions: []string{"v1beta2"}},
	}
	for _, tc := range []struct {
		name string
		r    *scriptedReader
	}{
		{"moved already", &scriptedReader{panics: 1, failures: 1, crd: clean}},
		{"not installed", &scriptedReader{panics: 1, failures: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &Migrator{Reader: tc.r, Log: logr.Discard(), CRDs: []string{"a"}, Retry: 10 * time.Millisecond}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := m.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if ctx.Err() != nil {
				t.Fatal("Start did not return once the CRD was moved")
			}
			if tc.r.gets != 3 {
				t.Fatalf("reads of the CRD: want 3 (a panic, a failure, the answer), got %d", tc.r.gets)
			}
		})
	}
}

// A CRD is moved once it has been seen at one resourceVersion for Settle, by this process's
// clock; a CRD seen at another resourceVersion starts the wait again.
func TestUnsettled(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	m := &Migrator{Now: func() time.Time { return now }}
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "1"}}
	for _, step := range []struct {
		after           time.Duration
		resourceVersion string
		wait            time.Duration
	}{
		{0, "1", DefaultSettle},                 // first seen
		{4 * time.Second, "1", 6 * time.Second}, // seen 4 s ago
		{6 * time.Second, "1", 0},               // seen for 10 s
		{time.Second, "2", DefaultSettle},       // changed since
		{DefaultSettle, "2", 0},
	} {
		now = now.Add(step.after)
		crd.ResourceVersion = step.resourceVersion
		if wait := m.unsettled(crd); wait != step.wait {
			t.Errorf("resourceVersion %s, %s later: want a wait of %s, got %s", step.resourceVersion, step.after, step.wait, wait)
		}
	}
}

// movable is a CRD whose storedVersions still list v1beta1, with two objects stored under it.
func movable(t *testing.T, updates func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error,
	statusUpdates func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error) (client.WithWatch, *Migrator) {
	t.Helper()
	scheme, err := managerscheme.New()
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "openstackclusters.infrastructure.cluster.x-k8s.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group:    "infrastructure.cluster.x-k8s.io",
			Names:    apiextensionsv1.CustomResourceDefinitionNames{Plural: "openstackclusters", Kind: "OpenStackCluster", ListKind: "OpenStackClusterList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1beta1"}, {Name: "v1beta2", Storage: true}},
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{StoredVersions: []string{"v1beta1", "v1beta2"}},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(crd).WithObjects(crd,
		&infrav1beta2.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "one"}},
		&infrav1beta2.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "two"}},
	).WithInterceptorFuncs(interceptor.Funcs{Update: updates, SubResourceUpdate: statusUpdates}).Build()
	// A clock a second further at every look: the CRD has been seen for the settle time at the
	// second look.
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	m := &Migrator{Reader: c, Writer: c, Log: logr.Discard(), Settle: time.Second, Now: func() time.Time { now = now.Add(time.Second); return now }}
	return c, m
}

func storedVersions(t *testing.T, c client.Client) []string {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: "openstackclusters.infrastructure.cluster.x-k8s.io"}, crd); err != nil {
		t.Fatal(err)
	}
	return crd.Status.StoredVersions
}

// An object written by someone else between the list and the rewrite (a conflict) is read again
// and rewritten; both objects are moved, then storedVersions is trimmed.
func TestMoveRewritesAnObjectChangedSinceTheList(t *testing.T) {
	conflicts, writes := 0, 0
	c, m := movable(t, func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
		writes++
		if obj.GetName() == "one" && conflicts == 0 {
			conflicts++
			return apierrors.NewConflict(schema.GroupResource{Resource: "openstackclusters"}, "one", errors.New("changed since read"))
		}
		return c.Update(ctx, obj, opts...)
	}, nil)
	moved, err := m.Move(context.Background(), "openstackclusters.infrastructure.cluster.x-k8s.io")
	if err != nil {
		t.Fatal(err)
	}
	if moved != 2 || writes != 3 || conflicts != 1 {
		t.Fatalf("moved %d objects in %d writes (%d conflicts): want 2 in 3 (1)", moved, writes, conflicts)
	}
	if got := storedVersions(t, c); len(got) != 1 || got[0] != "v1beta2" {
		t.Fatalf("storedVersions: want [v1beta2], got %v", got)
	}
}

// A CRD changed between its read and the trim (its update conflicts) keeps its storedVersions:
// the objects may have been listed under the old storage version.
func TestMoveTrimsNothingWhenTheCRDChanged(t *testing.T) {
	c, m := movable(t, nil, func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
		return apierrors.NewConflict(schema.GroupResource{Resource: "customresourcedefinitions"}, obj.GetName(), errors.New("changed since read"))
	})
	if _, err := m.Move(context.Background(), "openstackclusters.infrastructure.cluster.x-k8s.io"); !apierrors.IsConflict(errors.Unwrap(err)) {
		t.Fatalf("want the trim's conflict, got %v", err)
	}
	if got := storedVersions(t, c); len(got) != 2 {
		t.Fatalf("storedVersions: want both kept, got %v", got)
	}
}

// A pass that fails waits Retry, each further one in a row twice as long, never more than
// MaxRetry: an object the API server keeps refusing is not logged every 30 s forever.
func TestBackoffDoublesUpToMaxRetry(t *testing.T) {
	for _, tc := range []struct {
		failures int
		want     time.Duration
	}{
		{0, DefaultRetry},
		{1, DefaultRetry},
		{2, time.Minute},
		{5, 8 * time.Minute},
		{6, MaxRetry},
		{1000, MaxRetry},
	} {
		if got := backoff(DefaultRetry, tc.failures); got != tc.want {
			t.Errorf("after %d failed passes: want a wait of %s, got %s", tc.failures, tc.want, got)
		}
	}
}
