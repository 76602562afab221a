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
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/gophercloud/gophercloud/v2"
	"k8s.io/apimachinery/pkg/types"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/fakeopenstack"
)

// liveReader answers a Get with the object as the API server holds it.
type liveReader struct {
	client.Reader
	obj   *infrav1.OpenStackCluster
	calls int
}

func (r *liveReader) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	r.calls++
	r.obj.DeepCopyInto(obj.(*infrav1.OpenStackCluster))
	return nil
}

func TestOwnWritesTellsAStaleCacheFromANewerWrite(t *testing.T) {
	g := NewWithT(t)
	at := func(rv string) *infrav1.OpenStackCluster {
		return &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", UID: "uid-1", ResourceVersion: rv}}
	}
	var w ownWrites
	live := &liveReader{obj: at("12")}

	behind, err := w.behind(ctx, live, at("10"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(behind).To(BeFalse(), "nothing written yet: nothing to wait for")
	g.Expect(live.calls).To(BeZero())

	w.wrote(at("12"))
	behind, _ = w.behind(ctx, live, at("11"))
	g.Expect(behind).To(BeTrue(), "the cache shows a version older than the one written")
	g.Expect(live.calls).To(Equal(1))

	behind, _ = w.behind(ctx, live, at("12"))
	g.Expect(behind).To(BeFalse(), "the cache shows the write")
	g.Expect(live.calls).To(Equal(1), "no call when the cache shows the write")
	behind, _ = w.behind(ctx, live, at("11"))
	g.Expect(behind).To(BeFalse(), "forgotten once seen")

	// Someone else wrote after us (a status wiped by a restore): the cache shows it, the API
	// server too, and the controller must act on it.
	w.wrote(at("12"))
	live.obj = at("15")
	behind, _ = w.behind(ctx, live, at("15"))
	g.Expect(behind).To(BeFalse())
	g.Expect(live.calls).To(Equal(2))
}

func TestRecordWait(t *testing.T) {
	g := NewWithT(t)
	// The counters are the process's: what this run adds is measured from where they stand.
	base := map[string]float64{}
	for _, r := range []string{infrav1.WaitingForLoadBalancerReason, infrav1.ReadyReason} {
		base[r] = testutil.ToFloat64(requeueWait.WithLabelValues("test", r))
	}
	waited := func(reason string) float64 {
		return testutil.ToFloat64(requeueWait.WithLabelValues("test", reason)) - base[reason]
	}
	osc := &infrav1.OpenStackCluster{}
	types := []string{infrav1.NetworkReadyCondition, infrav1.APIServerLoadBalancersReadyCondition}
	setCondition(osc, infrav1.NetworkReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason, "")
	setCondition(osc, infrav1.APIServerLoadBalancersReadyCondition, metav1.ConditionFalse, infrav1.WaitingForLoadBalancerReason, "PENDING_CREATE")

	recordWait("test", osc, types, ctrl.Result{RequeueAfter: 250 * time.Millisecond})
	recordWait("test", osc, types, ctrl.Result{RequeueAfter: 500 * time.Millisecond})
	g.Expect(waited(infrav1.WaitingForLoadBalancerReason)).To(Equal(0.75), "the first condition that is not True says what is waited for")

	recordWait("test", osc, types, ctrl.Result{})
	g.Expect(waited(infrav1.WaitingForLoadBalancerReason)).To(Equal(0.75), "no requeue, no wait")

	setCondition(osc, infrav1.APIServerLoadBalancersReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason, "")
	recordWait("test", osc, types, ctrl.Result{RequeueAfter: time.Minute})
	g.Expect(waited(infrav1.ReadyReason)).To(Equal(60.0), "a ready object's periodic look")
}

func TestPollsReadTheLoadBalancersAloneWhileOctaviaBuilds(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	building := func() *infrav1.OpenStackCluster {
		osc := &infrav1.OpenStackCluster{ObjectMeta: metav1.ObjectMeta{UID: "uid-1", Generation: 2}}
		osc.Status.Network = &infrav1.NetworkStatusWithSubnets{}
		for _, t := range []string{infrav1.NetworkReadyCondition, infrav1.SecurityGroupsReadyCondition, infrav1.FailureDomainsReadyCondition} {
			setCondition(osc, t, metav1.ConditionTrue, infrav1.ReadyReason, "")
		}
		setCondition(osc, infrav1.APIServerLoadBalancersReadyCondition, metav1.ConditionFalse, infrav1.WaitingForLoadBalancerReason, "load balancer x is PENDING_CREATE")
		return osc
	}
	var f fullChecks
	g.Expect(f.onlyLoadBalancers(building(), now)).To(BeFalse(), "a fresh manager reads everything")
	f.checked(building(), now)
	g.Expect(f.onlyLoadBalancers(building(), now.Add(neutronRecheck-time.Second))).To(BeTrue())
	g.Expect(f.onlyLoadBalancers(building(), now.Add(neutronRecheck))).To(BeFalse(), "read again every neutronRecheck")

	changed := building()
	changed.Generation = 3
	g.Expect(f.onlyLoadBalancers(changed, now)).To(BeFalse(), "a spec change is read at once")
	unhealthy := building()
	setCondition(unhealthy, infrav1.APIServerLoadBalancersReadyCondition, metav1.ConditionFalse, infrav1.LoadBalancerUnhealthyReason, "")
	g.Expect(f.onlyLoadBalancers(unhealthy, now)).To(BeFalse(), "only Octavia's work is polled alone")
	ready := building()
	setCondition(ready, infrav1.APIServerLoadBalancersReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason, "")
	g.Expect(f.onlyLoadBalancers(ready, now)).To(BeFalse(), "a health poll reads everything")
	sgDown := building()
	setCondition(sgDown, infrav1.SecurityGroupsReadyCondition, metav1.ConditionFalse, infrav1.OpenStackErrorReason, "")
	g.Expect(f.onlyLoadBalancers(sgDown, now)).To(BeFalse())

	// A reconcile that found something else not ready forgets the mark; so does deletion.
	f.checked(sgDown, now)
	g.Expect(f.onlyLoadBalancers(building(), now)).To(BeFalse())
	f.checked(building(), now)
	f.forget(building())
	g.Expect(f.onlyLoadBalancers(building(), now)).To(BeFalse())
}

func TestCloudFaultsAreBackedOffExponentiallyUpToTheCap(t *testing.T) {
	g := NewWithT(t)
	cloud := fakeopenstack.New(fakeopenstack.Options{})
	cloud.InjectFault(fakeopenstack.Fault{Operation: "ListLoadBalancers", Nth: 1, Times: 100, Status: http.StatusTooManyRequests})
	_, limited := cloud.LoadBalancer().ListLoadBalancers(ctx, nil)
	g.Expect(limited).To(HaveOccurred())
	g.Expect(failureMessage(limited)).To(HavePrefix("Octavia (loadbalancer API) answered HTTP 429 Too Many Requests to ListLoadBalancers: "),
		"the condition names the service and the status")

	var p pacer
	key := types.NamespacedName{Namespace: "ns", Name: "c"}
	var delays []time.Duration
	for range 11 {
		res, err := p.pace(logr.Discard(), key, ctrl.Result{}, limited)
		g.Expect(err).NotTo(HaveOccurred(), "not returned: controller-runtime would retry it from 5 ms on")
		delays = append(delays, res.RequeueAfter)
	}
	g.Expect(delays).To(Equal([]time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second,
		64 * time.Second, 128 * time.Second, 256 * time.Second, faultBackoffCap, faultBackoffCap}))

	other := types.NamespacedName{Namespace: "ns", Name: "other"}
	res, _ := p.pace(logr.Discard(), other, ctrl.Result{}, limited)
	g.Expect(res.RequeueAfter).To(Equal(time.Second), "each object backs off on its own")

	res, err := p.pace(logr.Discard(), key, ctrl.Result{RequeueAfter: requeue.Wait}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(Equal(requeue.Wait), "a reconcile without a fault is left as it is")
	res, _ = p.pace(logr.Discard(), key, ctrl.Result{}, limited)
	g.Expect(res.RequeueAfter).To(Equal(time.Second), "and starts the backoff over")

	retryAfter := clients.WrapCall("loadbalancer", "ListLoadBalancers",
		gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusTooManyRequests, ResponseHeader: http.Header{"Retry-After": {"40"}}})
	res, _ = p.pace(logr.Discard(), key, ctrl.Result{}, retryAfter)
	g.Expect(res.RequeueAfter).To(Equal(40*time.Second), "Retry-After is honoured")

	conflict := errors.New("load balancer x is PENDING_UPDATE")
	res, err = p.pace(logr.Discard(), key, ctrl.Result{}, conflict)
	g.Expect(err).To(Equal(conflict), "anything else is controller-runtime's to retry")
	g.Expect(res).To(BeZero())
}
