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

// Package storagemigration moves the provider's stored objects to the storage version of their
// CRD. When a release changes a CRD's storage version (v0.3.0: v1beta1 to v1beta2), the API
// server keeps reading what etcd holds in the old one, and the CRD's status.storedVersions lists
// both. The Migrator, run by the leading manager, rewrites every object of such a CRD once (an
// update that changes nothing but makes the API server encode it anew, in the storage version)
// and then trims status.storedVersions to the storage version alone, so that a later release may
// stop serving the old version. It never changes an object's content.
package storagemigration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The manager moves its own CRDs only: it may update the status of these, by name.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get,resourceNames=openstackclusters.infrastructure.cluster.x-k8s.io;openstackmachines.infrastructure.cluster.x-k8s.io;openstackclustertemplates.infrastructure.cluster.x-k8s.io;openstackmachinetemplates.infrastructure.cluster.x-k8s.io
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions/status,verbs=update,resourceNames=openstackclusters.infrastructure.cluster.x-k8s.io;openstackmachines.infrastructure.cluster.x-k8s.io;openstackclustertemplates.infrastructure.cluster.x-k8s.io;openstackmachinetemplates.infrastructure.cluster.x-k8s.io
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackclustertemplates,verbs=get;list;update
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackmachinetemplates,verbs=get;list;update

// CRDs are the provider's CRDs that have more than one version, by name (OpenStackClusterIdentity
// has one: nothing of it is ever in another version).
var CRDs = []string{
	"openstackclusters.infrastructure.cluster.x-k8s.io",
	"openstackmachines.infrastructure.cluster.x-k8s.io",
	"openstackclustertemplates.infrastructure.cluster.x-k8s.io",
	"openstackmachinetemplates.infrastructure.cluster.x-k8s.io",
}

const (
	// pageSize bounds the objects one list returns, and so the memory one page holds.
	pageSize = 100
	// callTimeout bounds each call to the API server.
	callTimeout = 30 * time.Second
	// DefaultRetry is how long the Migrator waits after the first pass that failed to move a CRD;
	// each further pass that fails doubles the wait, up to MaxRetry.
	DefaultRetry = 30 * time.Second
	// MaxRetry bounds the wait between passes that fail: an object the API server keeps refusing
	// costs a log line every ten minutes, not every 30 s.
	MaxRetry = 10 * time.Minute
	// DefaultSettle is how long the Migrator must have seen a CRD unchanged before it rewrites
	// its objects: the API servers take up a new storage version a moment after the CRD
	// changes, and an object rewritten before that would stay in the old one.
	DefaultSettle = 10 * time.Second
)

// Migrator moves every object of CRDs to its CRD's storage version, then trims the CRD's
// status.storedVersions. As a manager Runnable it runs on the leader only, retries (after Retry,
// then twice as long after each pass that fails, up to MaxRetry) until every CRD is moved, and
// then returns: it never stops the manager.
type Migrator struct {
	// Reader lists the objects and reads the CRDs, uncached.
	Reader client.Reader
	// Writer updates the objects and the CRDs' status.
	Writer client.Client
	Log    logr.Logger
	// CRDs are the names of the CRDs to move; the package's CRDs when empty.
	CRDs []string
	// Retry is the wait after the first pass that failed; DefaultRetry when zero.
	Retry time.Duration
	// Settle is how long the Migrator must have seen a CRD at the same resourceVersion before
	// it rewrites its objects; DefaultSettle when zero. Measured on this process's clock alone,
	// so that a skew between it and the API servers' cannot shorten it.
	Settle time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	// seen is, by CRD name, the resourceVersion first seen and when. Start and Move are called
	// from one goroutine at a time.
	seen map[string]sighting
}

// settlingError says that a CRD has not been seen unchanged for long enough yet.
type settlingError struct {
	crd, resourceVersion string
	wait                 time.Duration
}

func (e *settlingError) Error() string {
	return fmt.Sprintf("CRD %s (resourceVersion %s) may have changed lately: its objects are rewritten once it has been seen unchanged for %s more",
		e.crd, e.resourceVersion, e.wait)
}

// sighting is a CRD's resourceVersion as the Migrator first saw it, and when.
type sighting struct {
	resourceVersion string
	at              time.Time
}

// NeedLeaderElection makes the Migrator run on the leading manager only.
func (m *Migrator) NeedLeaderElection() bool { return true }

// Start moves the CRDs, retrying until all are moved or ctx ends. It returns nil either way.
func (m *Migrator) Start(ctx context.Context) error {
	retry := m.Retry
	if retry <= 0 {
		retry = DefaultRetry
	}
	left := m.CRDs
	if len(left) == 0 {
		left = CRDs
	}
	failures := 0 // passes in a row that failed to move a CRD
	for {
		var unmoved []string
		var settle time.Duration // the shortest wait of a CRD that is settling, 0 when none
		failed := false
		for _, name := range left {
			err := m.safeMove(ctx, name)
			var settling *settlingError
			switch {
			case err == nil:
				continue
			case errors.As(err, &settling):
				m.Log.Info("Waiting before moving stored objects to the storage version", "crd", name, "reason", err.Error())
				if settle == 0 || settling.wait < settle {
					settle = settling.wait
				}
			default:
				failed = true
				m.Log.Error(err, "Moving stored objects to the storage version: will try again", "crd", name, "after", backoff(retry, failures+1))
			}
			unmoved = append(unmoved, name)
		}
		if len(unmoved) == 0 {
			return nil
		}
		left = unmoved
		next := retry
		if failed {
			failures++
			next = backoff(retry, failures)
		}
		if settle > 0 {
			next = min(next, settle)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(next):
		}
	}
}

// backoff is the wait after the failures-th failed pass in a row: base, doubled for each
// failure after the first, at most MaxRetry.
func backoff(base time.Duration, failures int) time.Duration {
	wait := base
	for i := 1; i < failures && wait < MaxRetry; i++ {
		wait *= 2
	}
	return min(wait, MaxRetry)
}

// safeMove is Move with a panic turned into its error.
func (m *Migrator) safeMove(ctx context.Context, name string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic while moving %s: %v", name, r)
		}
	}()
	_, err = m.Move(ctx, name)
	return err
}

// Move rewrites every object of the CRD name that its status.storedVersions says may be in
// another version than the storage version, then sets status.storedVersions to the storage
// version alone. It returns the number of objects rewritten. The trim is an update of the CRD as
// read before the objects were listed: if the CRD changed since (another storage version), the
// update conflicts and nothing is trimmed.
func (m *Migrator) Move(ctx context.Context, name string) (int, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := m.get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		if apierrors.IsNotFound(err) {
			return 0, nil // not installed: nothing is stored
		}
		return 0, fmt.Errorf("reading CRD %s: %w", name, err)
	}
	storage := ""
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			storage = v.Name
		}
	}
	if storage == "" {
		return 0, fmt.Errorf("CRD %s has no storage version", name)
	}
	if slices.Equal(crd.Status.StoredVersions, []string{storage}) {
		return 0, nil
	}
	if wait := m.unsettled(crd); wait > 0 {
		return 0, &settlingError{crd: name, resourceVersion: crd.ResourceVersion, wait: wait}
	}
	moved, err := m.rewrite(ctx, crd, storage)
	if err != nil {
		return moved, err
	}
	crd.Status.StoredVersions = []string{storage}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := m.Writer.Status().Update(cctx, crd); err != nil {
		return moved, fmt.Errorf("trimming status.storedVersions of CRD %s to [%s]: %w", name, storage, err)
	}
	m.Log.Info("Stored objects moved to the storage version", "crd", name, "version", storage, "rewritten", moved)
	return moved, nil
}

// unsettled returns how much longer crd must be seen at its resourceVersion before its objects
// are rewritten (zero when it has been seen so for Settle); a CRD seen for the first time, or at
// another resourceVersion than before, starts the wait again.
func (m *Migrator) unsettled(crd *apiextensionsv1.CustomResourceDefinition) time.Duration {
	settle := m.Settle
	if settle <= 0 {
		settle = DefaultSettle
	}
	now := time.Now
	if m.Now != nil {
		now = m.Now
	}
	if m.seen == nil {
		m.seen = map[string]sighting{}
	}
	first, ok := m.seen[crd.Name]
	if !ok || first.resourceVersion != crd.ResourceVersion {
		first = sighting{resourceVersion: crd.ResourceVersion, at: now()}
		m.seen[crd.Name] = first
	}
	if waited := now().Sub(first.at); waited < settle {
		return settle - waited
	}
	return 0
}

// rewrite updates every object of crd, unchanged, in version storage, a page at a time.
func (m *Migrator) rewrite(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, storage string) (int, error) {
	moved := 0
	next := ""
	for {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(crd.Spec.Group + "/" + storage)
		list.SetKind(crd.Spec.Names.ListKind)
		lctx, cancel := context.WithTimeout(ctx, callTimeout)
		err := m.Reader.List(lctx, list, client.Limit(pageSize), client.Continue(next))
		cancel()
		if err != nil {
			return moved, fmt.Errorf("listing %s in %s: %w", crd.Spec.Names.Plural, storage, err)
		}
		for i := range list.Items {
			if err := m.rewriteOne(ctx, &list.Items[i]); err != nil {
				return moved, err
			}
			moved++
		}
		if next = list.GetContinue(); next == "" {
			return moved, nil
		}
	}
}

// rewriteOne updates obj unchanged. An object deleted since the list needs nothing; one changed
// since was written after the list and so in the storage version already, but it is read and
// rewritten once more all the same, so that the rule holds without relying on that.
func (m *Migrator) rewriteOne(ctx context.Context, obj *unstructured.Unstructured) error {
	for attempt := 0; ; attempt++ {
		uctx, cancel := context.WithTimeout(ctx, callTimeout)
		err := m.Writer.Update(uctx, obj)
		cancel()
		switch {
		case err == nil, apierrors.IsNotFound(err):
			return nil
		case apierrors.IsConflict(err) && attempt < 3:
			key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
			fresh := &unstructured.Unstructured{}
			fresh.SetGroupVersionKind(obj.GroupVersionKind())
			if err := m.get(ctx, key, fresh); err != nil {
				if apierrors.IsNotFound(err) {
					return nil
				}
				return fmt.Errorf("reading %s %s: %w", obj.GetKind(), key, err)
			}
			obj = fresh
		default:
			return fmt.Errorf("rewriting %s %s/%s in %s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), obj.GetAPIVersion(), err)
		}
	}
}

func (m *Migrator) get(ctx context.Context, key client.ObjectKey, obj client.Object) error {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return m.Reader.Get(cctx, key, obj)
}
