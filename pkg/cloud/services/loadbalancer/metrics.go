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

package loadbalancer

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/zones"
)

var (
	loadBalancers = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "capo_apiserver_loadbalancers",
		Help: "API server load balancers per cluster and availability zone (empty for the single load balancer), by Octavia provisioning status " +
			"(ACTIVE, PENDING_*, ERROR, or NONE while none exists yet). 1 for the status the load balancer is in.",
	}, []string{"namespace", "cluster", "availability_zone", "provisioning_status"})

	reconcileDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "capo_apiserver_loadbalancer_reconcile_duration_seconds",
		Help:    "Time to reconcile one API server load balancer once (OpenStack calls included, never a wait), by outcome (Ready, Waiting, Error, Invalid).",
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	}, []string{"outcome"})
)

func init() {
	metrics.Registry.MustRegister(Collectors()...)
}

// Collectors are the metrics this package records, for the metrics reference and its tests.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{loadBalancers, reconcileDuration}
}

// RecordOutcomes replaces the gauge series of a cluster with the states of its load balancers.
func RecordOutcomes(namespace, cluster string, outcomes []zones.Outcome) {
	loadBalancers.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "cluster": cluster})
	for _, o := range outcomes {
		status := o.ProvisioningStatus
		if status == "" {
			status = "NONE"
		}
		loadBalancers.WithLabelValues(namespace, cluster, o.AvailabilityZone, status).Set(1)
	}
}

// ForgetCluster removes the gauge series of a deleted cluster.
func ForgetCluster(namespace, cluster string) {
	loadBalancers.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "cluster": cluster})
}

func observe(start time.Time, o zones.Outcome) {
	reconcileDuration.WithLabelValues(string(o.State)).Observe(time.Since(start).Seconds())
}
