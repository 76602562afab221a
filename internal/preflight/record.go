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

package preflight

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/takeover"
)

// TakenOverKinds are the kinds whose objects' resources upstream CAPO made, and which the record
// lets this provider adopt.
var TakenOverKinds = []string{"OpenStackCluster", "OpenStackMachine"}

// RecordTakeover writes the operator's takeover record (pkg/takeover) into ConfigMap key: an
// entry for each OpenStackCluster and OpenStackMachine that exists now, with its UID. Entries
// already there stay. It returns how many entries it wrote.
func RecordTakeover(ctx context.Context, c client.Client, key types.NamespacedName) (int, error) {
	entries := map[string]string{}
	for _, kind := range TakenOverKinds {
		crd, err := getCRD(ctx, c, kind)
		if err != nil {
			return 0, err
		}
		objs, err := list(ctx, c, schema.GroupVersionKind{Group: Group, Version: readVersion(crd), Kind: kind})
		if err != nil {
			return 0, fmt.Errorf("listing %ss: %w", kind, err)
		}
		for _, o := range objs {
			entries[takeover.Entry(kind, o.GetNamespace(), o.GetName())] = string(o.GetUID())
		}
	}
	cm := &corev1.ConfigMap{}
	err := c.Get(ctx, key, cm)
	switch {
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}, Data: entries}
		if err := c.Create(ctx, cm); err != nil {
			return 0, fmt.Errorf("creating the takeover record %s: %w", key, err)
		}
		return len(entries), nil
	case err != nil:
		return 0, fmt.Errorf("reading the takeover record %s: %w", key, err)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	for k, v := range entries {
		cm.Data[k] = v
	}
	if err := c.Update(ctx, cm); err != nil {
		return 0, fmt.Errorf("updating the takeover record %s: %w", key, err)
	}
	return len(entries), nil
}
