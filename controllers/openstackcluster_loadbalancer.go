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
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/loadbalancer"
)

// reconcileLoadBalancers converges every API server load balancer the plan asks for, each
// availability zone on its own and concurrently: one zone's bad subnet, Octavia errors or ERROR
// state never hold the others back. ready receives how many load balancers are ready.
func (r *OpenStackClusterReconciler) reconcileLoadBalancers(ctx context.Context, c *clusterScope, ready *int) phaseResult {
	osc, ns, name := c.osc, c.cluster.Namespace, c.cluster.Name
	if !osc.Spec.APIServerLoadBalancerEnabled() {
		setCondition(osc, infrav1.APIServerLoadBalancersReadyCondition, metav1.ConditionTrue, infrav1.NotRequiredReason, "spec.apiServerLoadBalancer is not enabled")
		return phaseResult{}
	}
	if msg := loadbalancer.EndpointProblem(&osc.Spec); msg != "" {
		// Admission rejects this; a cluster created before the rule, or with admission
		// bypassed, stops here rather than getting an endpoint nobody can publish.
		for _, t := range []string{infrav1.APIServerLoadBalancersReadyCondition, infrav1.APIEndpointReadyCondition} {
			setCondition(osc, t, metav1.ConditionFalse, infrav1.EndpointConfigurationErrorReason, msg)
		}
		return phaseResult{stop: true, result: ctrl.Result{RequeueAfter: specErrorRequeue}}
	}

	plan, err := loadbalancer.NewPlan(ctx, c.net, ns, name, osc)
	if err != nil {
		return c.fail(infrav1.APIServerLoadBalancersReadyCondition, err)
	}
	svc := r.loadBalancers(c)
	if err := svc.FindUnrecorded(ctx, plan, ns, name); err != nil {
		return c.fail(infrav1.APIServerLoadBalancersReadyCondition, err)
	}

	outcomes := make([]loadbalancer.Outcome, len(plan.Desired))
	var wg sync.WaitGroup
	for i := range plan.Desired {
		wg.Go(func() { outcomes[i] = svc.Reconcile(ctx, plan.Desired[i], plan.Known[i]) })
	}
	staleDone, staleErr := true, error(nil)
	if len(plan.Stale) > 0 {
		wg.Go(func() { staleDone, staleErr = svc.Delete(ctx, plan.StaleRemoval(ns, name, osc)) })
	}
	wg.Wait()
	outcomes = append(outcomes, plan.Invalid...)

	plan.WriteStatus(osc, outcomes, staleDone)
	loadbalancer.RecordOutcomes(ns, name, outcomes)
	summary := loadbalancer.Summarize(outcomes, plan.Stale, staleDone, staleErr)
	*ready = summary.Ready
	setLoadBalancersCondition(osc, summary)
	return phaseResult{result: ctrl.Result{RequeueAfter: summary.RequeueAfter}, err: summary.Err}
}
