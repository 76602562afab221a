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

// Package takeover is the operator's record of the objects whose resources upstream CAPO made
// and this provider may adopt: a ConfigMap in the manager's own namespace, which tenants cannot
// write, with one entry per object (its kind, namespace and name) holding the object's UID. The
// pre-flight writes it (go run ./cmd/preflight --record-takeover) for the objects that exist when
// it runs; an object deleted and made again under the same name has another UID, and is not in
// it. Without an entry, a resource that carries no mark and is named as upstream names the
// object's is never adopted (ownership.Owner.Takeover), however the object is named and whenever
// it was made.
package takeover

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// DefaultName is the name of the record's ConfigMap.
const DefaultName = "capo-takeover"

// TTL is how long the manager uses what it read of the record before it reads it again: a
// takeover recorded while the manager runs applies within it.
const TTL = 10 * time.Second

// Entry is the key of an object's entry in the record: "OpenStackCluster.team-a.prod". A
// namespace holds no dot, so the key names one object.
func Entry(kind, namespace, name string) string { return kind + "." + namespace + "." + name }

// Record reads the record. The zero value, or a nil *Record, records nothing.
type Record struct {
	// Reader reads the ConfigMap from the API server (the manager caches no ConfigMap).
	Reader client.Reader
	// Key is the ConfigMap: in the manager's namespace, DefaultName.
	Key types.NamespacedName
	// MaxAge is how long what was read is used; zero means TTL.
	MaxAge time.Duration

	mu      sync.Mutex
	read    time.Time
	entries map[string]string
}

// Allows says whether the operator recorded the takeover of obj, of kind kind: its entry holds
// its UID. When the record cannot be read, what was last read of it stands (nothing, before a
// first read), and it is read again after MaxAge.
func (r *Record) Allows(ctx context.Context, kind string, obj metav1.Object) bool {
	if r == nil || r.Reader == nil || obj.GetUID() == "" {
		return false
	}
	entries := r.current(ctx)
	uid, ok := entries[Entry(kind, obj.GetNamespace(), obj.GetName())]
	return ok && types.UID(uid) == obj.GetUID()
}

func (r *Record) current(ctx context.Context) map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	maxAge := r.MaxAge
	if maxAge == 0 {
		maxAge = TTL
	}
	if !r.read.IsZero() && time.Since(r.read) < maxAge {
		return r.entries
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cm := &corev1.ConfigMap{}
	switch err := r.Reader.Get(ctx, r.Key, cm); {
	case apierrors.IsNotFound(err):
		r.entries = nil
	case err != nil:
		// What was last read stands (nothing, if nothing was), and the record is read again
		// after the same interval: an API server that does not answer is not asked at every
		// reconcile.
		log.FromContext(ctx).Error(err, "reading the takeover record: what was last read of it stands", "configMap", r.Key.String())
	default:
		r.entries = cm.Data
	}
	r.read = time.Now()
	return r.entries
}
