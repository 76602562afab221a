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

package takeover

import (
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

var key = types.NamespacedName{Namespace: "capo-system", Name: DefaultName}

func object(namespace, name, uid string) metav1.Object {
	return &metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID(uid)}
}

func TestAllows(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	record := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Data: map[string]string{Entry("OpenStackCluster", "team-a", "prod"): "uid-1"}}
	c := fake.NewClientBuilder().WithObjects(record).Build()
	r := &Record{Reader: c, Key: key, MaxAge: time.Nanosecond}

	g.Expect(r.Allows(ctx, "OpenStackCluster", object("team-a", "prod", "uid-1"))).To(BeTrue())
	g.Expect(r.Allows(ctx, "OpenStackCluster", object("team-a", "prod", "uid-2"))).To(BeFalse(), "made again under the same name: another object")
	g.Expect(r.Allows(ctx, "OpenStackMachine", object("team-a", "prod", "uid-1"))).To(BeFalse(), "another kind")
	g.Expect(r.Allows(ctx, "OpenStackCluster", object("team-a-prod", "x", "uid-1"))).To(BeFalse())
	g.Expect(r.Allows(ctx, "OpenStackCluster", object("team-a", "prod", ""))).To(BeFalse(), "an object without a UID")
	g.Expect((*Record)(nil).Allows(ctx, "OpenStackCluster", object("team-a", "prod", "uid-1"))).To(BeFalse(), "no record")

	g.Expect(c.Delete(ctx, record)).To(Succeed())
	g.Expect(r.Allows(ctx, "OpenStackCluster", object("team-a", "prod", "uid-1"))).To(BeFalse(), "the record removed")
}

func TestAnUnreadableRecordKeepsWhatWasReadAndIsReadAgain(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	record := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Data: map[string]string{Entry("OpenStackCluster", "team-a", "prod"): "uid-1"}}
	failing := true
	reads := 0
	c := fake.NewClientBuilder().WithObjects(record).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			reads++
			if failing {
				return errors.New("the API server is away")
			}
			return c.Get(ctx, k, obj, opts...)
		},
	}).Build()
	now := time.Now()
	r := &Record{Reader: c, Key: key, MaxAge: time.Minute}
	prod := object("team-a", "prod", "uid-1")
	g.Expect(r.Allows(ctx, "OpenStackCluster", prod)).To(BeFalse(), "nothing read yet")
	g.Expect(r.Allows(ctx, "OpenStackCluster", prod)).To(BeFalse())
	g.Expect(reads).To(Equal(1), "a failed read is not tried again at once")
	failing = false
	r.read = now.Add(-2 * time.Minute)
	g.Expect(r.Allows(ctx, "OpenStackCluster", prod)).To(BeTrue(), "read again after MaxAge")
	failing = true
	r.read = now.Add(-2 * time.Minute)
	g.Expect(r.Allows(ctx, "OpenStackCluster", prod)).To(BeTrue(), "what was read stands while the record cannot be read")
	g.Expect(reads).To(Equal(3))
}
