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

package controllers

import (
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

var requeueWait = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "capo_reconcile_wait_seconds_total",
	Help: "Seconds the controllers asked to wait before looking at an object again (the requeue of a reconcile that blocked on nothing), " +
		"by controller and by what the object waits for: the reason of its first condition that is not True, or Ready for the periodic look at a ready object.",
}, []string{"controller", "reason"})

func init() {
	metrics.Registry.MustRegister(Collectors()...)
}

// Collectors are the metrics this package records, for the metrics reference and its tests.
func Collectors() []prometheus.Collector { return []prometheus.Collector{requeueWait} }

// recordWait adds the requeue a reconcile of obj asked for to the time waited for the reason of
// its first condition of types that is not True (they are listed in the order they are reached).
func recordWait(controller string, obj conditions.Getter, types []string, res ctrl.Result) {
	if res.RequeueAfter <= 0 {
		return
	}
	reason := infrav1.ReadyReason
	for _, t := range types {
		if c := conditions.Get(obj, t); c != nil && c.Status != metav1.ConditionTrue {
			reason = c.Reason
			break
		}
	}
	requeueWait.WithLabelValues(controller, reason).Add(res.RequeueAfter.Seconds())
}
