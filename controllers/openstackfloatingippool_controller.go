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
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1alpha1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1alpha1"
	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/networking"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/report"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/requeue"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scope"
)

// OpenStackFloatingIPPoolReconciler is the IPAM provider of floating IPs: it answers each
// IPAddressClaim that names an OpenStackFloatingIPPool with an IPAddress holding a floating IP
// of the pool's project, and takes the address back when the claim goes. One reconcile handles
// every claim of one pool, one after another, and reads the pool's IPAddresses from the API
// server, not the cache: two claims never get the same address.
type OpenStackFloatingIPPoolReconciler struct {
	Client client.Client
	// APIReader reads the pool's IPAddresses: a cache that has not seen the last one created
	// would show its address as free. Client is used when nil.
	APIReader        client.Reader
	Recorder         events.EventRecorder
	ScopeFactory     scope.Factory
	WatchFilterValue string

	shared shared
}

// poolRefIndex indexes IPAddressClaims and IPAddresses by the name of the OpenStackFloatingIPPool
// their spec.poolRef names ("" for another kind's pool: not indexed).
const poolRefIndex = "spec.poolRef.openStackFloatingIPPool"

// poolOf is the name of the OpenStackFloatingIPPool ref names, "" when it names another kind.
func poolOf(ref ipamv1.IPPoolReference) string {
	if ref.APIGroup != infrav1alpha1.GroupVersion.Group || ref.Kind != "OpenStackFloatingIPPool" {
		return ""
	}
	return ref.Name
}

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackfloatingippools,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=openstackfloatingippools/status;openstackfloatingippools/finalizers,verbs=get;update;patch
// +kubebuilder:rbac:groups=ipam.cluster.x-k8s.io,resources=ipaddressclaims,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=ipam.cluster.x-k8s.io,resources=ipaddressclaims/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=ipam.cluster.x-k8s.io,resources=ipaddresses,verbs=get;list;watch;create;update;patch;delete

// SetupWithManager registers the reconciler: a pool is reconciled when it changes, and when one
// of its claims or addresses does.
func (r *OpenStackFloatingIPPoolReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	log := ctrl.LoggerFrom(ctx).WithName("openstackfloatingippool")
	r.shared.share.workers = options.MaxConcurrentReconciles
	indexer := mgr.GetFieldIndexer()
	if err := indexer.IndexField(ctx, &ipamv1.IPAddressClaim{}, poolRefIndex, func(o client.Object) []string {
		if c, ok := o.(*ipamv1.IPAddressClaim); ok && poolOf(c.Spec.PoolRef) != "" {
			return []string{c.Spec.PoolRef.Name}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := indexer.IndexField(ctx, &ipamv1.IPAddress{}, poolRefIndex, func(o client.Object) []string {
		if a, ok := o.(*ipamv1.IPAddress); ok && poolOf(a.Spec.PoolRef) != "" {
			return []string{a.Spec.PoolRef.Name}
		}
		return nil
	}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&infrav1alpha1.OpenStackFloatingIPPool{}).
		WithOptions(options).
		WithEventFilter(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue)).
		Watches(&ipamv1.IPAddressClaim{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if c, ok := o.(*ipamv1.IPAddressClaim); ok && poolOf(c.Spec.PoolRef) != "" {
				return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: c.Namespace, Name: c.Spec.PoolRef.Name}}}
			}
			return nil
		})).
		Watches(&ipamv1.IPAddress{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			if a, ok := o.(*ipamv1.IPAddress); ok && poolOf(a.Spec.PoolRef) != "" {
				return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: a.Namespace, Name: a.Spec.PoolRef.Name}}}
			}
			return nil
		})).
		Complete(r)
}

// poolConditionTypes are the conditions the controller owns on a pool, besides Ready.
var poolConditionTypes = []string{infrav1alpha1.PoolReadyCondition}

// maxPreAllocatedLookups bounds how many pre-allocated addresses one reconcile looks up in
// Neutron: the rest wait for the next reconcile.
const maxPreAllocatedLookups = 32

// Reconcile answers the pool's open claims, takes back the addresses of the claims that are
// going, and, when the pool is deleted, releases what it allocated once no address is out.
func (r *OpenStackFloatingIPPoolReconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, reterr error) {
	log := ctrl.LoggerFrom(ctx)
	defer func() { res, reterr = r.shared.pacer.pace(log, req.NamespacedName, res, reterr) }()
	pool := &infrav1alpha1.OpenStackFloatingIPPool{}
	if err := r.Client.Get(ctx, req.NamespacedName, pool); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if annotations.HasPaused(pool) {
		log.V(1).Info("Not reconciling: the pool is paused")
		return ctrl.Result{}, nil
	}
	helper, err := patch.NewHelper(pool, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	p := &poolReconcile{r: r, pool: pool, report: report.NewRecorder(r.Recorder, pool, log), marks: networking.FloatingIPPoolMarks(pool.Namespace, pool.Name)}
	defer func() {
		p.updateStatus()
		if err := helper.Patch(ctx, pool, patch.WithOwnedConditions{Conditions: append([]string{infrav1.ReadyCondition}, poolConditionTypes...)}); err != nil {
			reterr = kerrors.NewAggregate([]error{reterr, err})
		}
	}()
	phases, cancel := context.WithTimeout(ctx, reconcileDeadline)
	defer cancel()
	phases, leave := withLeaves(phases)
	defer leave()
	if !pool.DeletionTimestamp.IsZero() {
		return p.delete(phases)
	}
	if controllerutil.AddFinalizer(pool, infrav1alpha1.FloatingIPPoolFinalizer) {
		return ctrl.Result{}, nil
	}
	return p.normal(phases)
}

// poolReconcile is one reconcile of a pool.
type poolReconcile struct {
	r      *OpenStackFloatingIPPoolReconciler
	pool   *infrav1alpha1.OpenStackFloatingIPPool
	report *report.Recorder
	marks  ownership.FloatingIPMarks
	net    *networking.Service
	found  poolFindings
}

// listed reads the pool's claims from the cache, oldest first, and its IPAddresses from the API
// server, by the name of the claim each answers.
func (p *poolReconcile) listed(ctx context.Context) ([]ipamv1.IPAddressClaim, map[string]ipamv1.IPAddress, error) {
	claims := &ipamv1.IPAddressClaimList{}
	if err := p.r.Client.List(ctx, claims, client.InNamespace(p.pool.Namespace), client.MatchingFields{poolRefIndex: p.pool.Name}); err != nil {
		return nil, nil, fmt.Errorf("listing the pool's IPAddressClaims: %w", err)
	}
	addresses := &ipamv1.IPAddressList{}
	if err := readerOr(p.r.APIReader, p.r.Client).List(ctx, addresses, client.InNamespace(p.pool.Namespace)); err != nil {
		return nil, nil, fmt.Errorf("listing the pool's IPAddresses: %w", err)
	}
	byClaim := map[string]ipamv1.IPAddress{}
	for _, a := range addresses.Items {
		if poolOf(a.Spec.PoolRef) == p.pool.Name {
			byClaim[a.Spec.ClaimRef.Name] = a
		}
	}
	slices.SortFunc(claims.Items, func(a, b ipamv1.IPAddressClaim) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return claims.Items, byClaim, nil
}

// connect builds the pool's OpenStack clients from its identity.
func (p *poolReconcile) connect(ctx context.Context) error {
	if err := p.r.shared.share.admit(ctx, p.pool.Namespace); err != nil {
		return err
	}
	clients, err := p.r.ScopeFactory.NewClients(ctx, p.pool.Namespace, &p.pool.Spec.IdentityRef)
	if err != nil {
		if !authBusy(err) {
			p.found.identity = err
		}
		return err
	}
	warnIdentity(p.report, clients)
	owner := ownership.Owner{Kind: "OpenStackFloatingIPPool", Namespace: p.pool.Namespace, Name: p.pool.Name, Created: p.pool.CreationTimestamp.Time, ProjectID: clients.ProjectID}
	p.net = networking.NewService(clients.Network, p.report, owner)
	return nil
}

// connectResult is what a reconcile returns when connect failed.
func connectResult(err error) (ctrl.Result, error) {
	if authBusy(err) {
		return ctrl.Result{RequeueAfter: requeue.AuthInProgress}, nil
	}
	return ctrl.Result{RequeueAfter: requeue.Config}, faultOnly(err)
}

func (p *poolReconcile) normal(ctx context.Context) (ctrl.Result, error) {
	f := &p.found
	f.normal = true
	claims, addresses, err := p.listed(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	f.addresses = addresses
	if err := p.connect(ctx); err != nil {
		return connectResult(err)
	}
	f.network, err = p.net.ResolveFloatingIPNetwork(ctx, p.pool.Spec.FloatingIPNetwork, field.NewPath("spec", "floatingIPNetwork"))
	if err != nil {
		f.networkErr = err
		return ctrl.Result{RequeueAfter: requeue.Config}, faultOnly(err)
	}
	if f.marked, err = p.net.PoolFloatingIPs(ctx, p.marks); err != nil {
		f.networkErr = err
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, kerrors.NewAggregate(append(p.releaseGone(ctx, claims), p.answerAll(ctx, claims)...))
}

// answerAll answers the claims that are not being deleted, oldest first.
func (p *poolReconcile) answerAll(ctx context.Context, claims []ipamv1.IPAddressClaim) []error {
	var errs []error
	for i := range claims {
		if claims[i].DeletionTimestamp.IsZero() {
			errs = append(errs, p.answer(ctx, &claims[i]))
		}
	}
	return errs
}

// releaseGone takes back the address of every IPAddress of the pool whose claim is gone or
// going, or that is itself being deleted (Kubernetes deletes it with its claim).
func (p *poolReconcile) releaseGone(ctx context.Context, claims []ipamv1.IPAddressClaim) []error {
	live := map[string]bool{}
	for _, c := range claims {
		if c.DeletionTimestamp.IsZero() {
			live[c.Name] = true
		}
	}
	var errs []error
	for name, a := range p.found.addresses {
		if live[name] && a.DeletionTimestamp.IsZero() {
			continue
		}
		errs = append(errs, p.release(ctx, &a))
	}
	return errs
}

// answer gives claim an address, unless it has one: an IPAddress named after it, which points
// at it and this pool.
func (p *poolReconcile) answer(ctx context.Context, claim *ipamv1.IPAddressClaim) error {
	f := &p.found
	if a, ok := f.addresses[claim.Name]; ok {
		return p.r.writeClaimAnswer(ctx, claim, &a, false, "")
	}
	address, why, err := p.take(ctx, claim.Name)
	if err != nil || why != "" {
		if why == "" {
			why = err.Error()
		}
		return kerrors.NewAggregate([]error{err, p.r.writeClaimAnswer(ctx, claim, nil, f.exhausted, why)})
	}
	a, err := p.createAddress(ctx, claim, address)
	if err != nil {
		return err
	}
	f.addresses[claim.Name] = *a
	return p.r.writeClaimAnswer(ctx, claim, a, false, "")
}

// claimed says whether an IPAddress of the pool holds address.
func (f *poolFindings) claimed(address string) bool {
	for _, a := range f.addresses {
		if a.Spec.Address == address {
			return true
		}
	}
	return false
}

// take chooses the address for a claim: a floating IP the pool allocated that no claim holds,
// else a pre-allocated one, else a new one, within maxIPs. why says why there is none.
func (p *poolReconcile) take(ctx context.Context, claim string) (address, why string, err error) {
	f := &p.found
	if maxIPs := p.pool.Spec.MaxIPs; maxIPs != nil && len(f.addresses) >= *maxIPs {
		f.exhausted = true
		return "", fmt.Sprintf("the pool gives out at most %d addresses (spec.maxIPs), and %d are out", *maxIPs, len(f.addresses)), nil
	}
	slices.SortFunc(f.marked, func(a, b floatingips.FloatingIP) int { return strings.Compare(a.FloatingIP, b.FloatingIP) })
	for _, fip := range f.marked {
		if fip.PortID == "" && !f.claimed(fip.FloatingIP) {
			return fip.FloatingIP, "", nil
		}
	}
	// The addresses found unusable before are tried last: those after them get their turn.
	order := slices.Clone(p.pool.Spec.PreAllocatedFloatingIPs)
	slices.SortStableFunc(order, func(a, b string) int {
		return boolOrder(slices.Contains(p.pool.Status.FailedIPs, a), slices.Contains(p.pool.Status.FailedIPs, b))
	})
	for _, address := range order {
		if f.claimed(address) || f.failed[address] != "" {
			continue
		}
		if f.lookups++; f.lookups > maxPreAllocatedLookups {
			return "", "", fmt.Errorf("looked up %d pre-allocated addresses in this reconcile: the rest wait for the next", maxPreAllocatedLookups)
		}
		fip, why, err := p.net.PreAllocatedFloatingIP(ctx, p.marks, f.network.ID, address)
		if err != nil {
			return "", "", err
		}
		if why != "" {
			f.fail(address, why)
			continue
		}
		return fip.FloatingIP, "", nil
	}
	fip, err := p.net.AllocatePoolFloatingIP(ctx, p.marks, f.network.ID, claim)
	if err != nil {
		return "", "", err
	}
	f.marked = append(f.marked, *fip)
	return fip.FloatingIP, "", nil
}

// createAddress creates the IPAddress that gives claim address: named after the claim, owned by
// it (Kubernetes deletes it with the claim) and pointing at the pool. One of that name there
// already is used when it points at the claim and the pool (a reconcile that crashed after
// creating it), and is an error otherwise.
func (p *poolReconcile) createAddress(ctx context.Context, claim *ipamv1.IPAddressClaim, address string) (*ipamv1.IPAddress, error) {
	prefix := int32(32)
	if a, err := netip.ParseAddr(address); err == nil && a.Is6() {
		prefix = 128
	}
	a := &ipamv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{
			Name: claim.Name, Namespace: claim.Namespace,
			Labels: claim.Labels,
			// Kubernetes deletes the IPAddress with its claim; the finalizer keeps it until the
			// pool has taken its floating IP back (upstream CAPO's finalizer, of the same name).
			Finalizers: []string{infrav1alpha1.ReleaseFloatingIPFinalizer},
			OwnerReferences: []metav1.OwnerReference{
				{APIVersion: ipamv1.GroupVersion.String(), Kind: "IPAddressClaim", Name: claim.Name, UID: claim.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)},
				{APIVersion: infrav1alpha1.GroupVersion.String(), Kind: "OpenStackFloatingIPPool", Name: p.pool.Name, UID: p.pool.UID},
			},
		},
		Spec: ipamv1.IPAddressSpec{
			ClaimRef: ipamv1.IPAddressClaimReference{Name: claim.Name},
			PoolRef:  claim.Spec.PoolRef,
			Address:  address,
			Prefix:   &prefix,
		},
	}
	err := p.r.Client.Create(ctx, a)
	if apierrors.IsAlreadyExists(err) {
		there := &ipamv1.IPAddress{}
		if err := p.r.Client.Get(ctx, client.ObjectKeyFromObject(a), there); err != nil {
			return nil, fmt.Errorf("reading IPAddress %s: %w", a.Name, err)
		}
		if there.Spec.ClaimRef.Name != claim.Name || poolOf(there.Spec.PoolRef) != p.pool.Name {
			return nil, fmt.Errorf("IPAddress %s exists and is not this pool's answer to the claim", a.Name)
		}
		return there, nil
	}
	if err != nil {
		return nil, fmt.Errorf("creating IPAddress %s (%s): %w", a.Name, address, err)
	}
	p.report.Changed("ClaimAnswered", report.Resource{Kind: "IPAddressClaim", Name: claim.Name}, "Gave floating IP %s to IPAddressClaim %s", address, claim.Name)
	return a, nil
}

// release takes back the address of IPAddress a, whose claim is gone or going: the floating IP
// is released (Delete, and the pool allocated it) or taken off its port, then the IPAddress is
// let go and deleted. An address that is not the pool's is left as it is (ReturnPoolFloatingIP).
func (p *poolReconcile) release(ctx context.Context, a *ipamv1.IPAddress) error {
	remove := p.pool.Spec.ReclaimPolicy == infrav1alpha1.ReclaimDelete
	notOurs := ""
	for claim, other := range p.found.addresses {
		if claim != a.Spec.ClaimRef.Name && other.Spec.Address == a.Spec.Address && other.DeletionTimestamp.IsZero() {
			// An IPAddress written by hand beside the pool's answer to another claim.
			notOurs = fmt.Sprintf("floating IP %s is IPAddress %s's too: left as it is", a.Spec.Address, other.Name)
		}
	}
	if notOurs == "" {
		var err error
		if notOurs, err = p.net.ReturnPoolFloatingIP(ctx, p.marks, a.Spec.Address, remove, p.pool.Spec.PreAllocatedFloatingIPs); err != nil {
			return err
		}
	}
	if notOurs != "" {
		p.report.Warn("AddressNotReleased", report.Resource{Kind: "IPAddress", Name: a.Name}, "IPAddress %s: %s", a.Name, notOurs)
	}
	if controllerutil.RemoveFinalizer(a, infrav1alpha1.ReleaseFloatingIPFinalizer) {
		if err := p.r.Client.Update(ctx, a); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("removing the release finalizer of IPAddress %s: %w", a.Name, err)
		}
	}
	if err := p.r.Client.Delete(ctx, a); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting IPAddress %s: %w", a.Name, err)
	}
	delete(p.found.addresses, a.Spec.ClaimRef.Name)
	if remove {
		p.found.marked = slices.DeleteFunc(p.found.marked, func(f floatingips.FloatingIP) bool { return f.FloatingIP == a.Spec.Address })
		return nil
	}
	for i := range p.found.marked {
		if p.found.marked[i].FloatingIP == a.Spec.Address {
			p.found.marked[i].PortID = ""
		}
	}
	return nil
}

// delete releases the pool once every claim that holds one of its addresses is gone: the
// floating IPs it allocated are released, whatever the reclaim policy; pre-allocated ones stay.
// A pool whose credentials do not work is let go only when no address of it is out, with a
// warning that names the mark of what it may have left.
func (p *poolReconcile) delete(ctx context.Context) (ctrl.Result, error) {
	f := &p.found
	claims, addresses, err := p.listed(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	f.addresses = addresses
	if err := p.connect(ctx); err != nil {
		if authBusy(err) || len(f.addresses) > 0 {
			return connectResult(err)
		}
		p.report.Warn("DeletedWithoutOpenStack", report.Resource{},
			"Deleted without calling OpenStack: %s, and no address of the pool is out. A floating IP it allocated and kept carries the description %q",
			failureMessage(err), p.marks.Ours)
		controllerutil.RemoveFinalizer(p.pool, infrav1alpha1.FloatingIPPoolFinalizer)
		return ctrl.Result{}, nil
	}
	if err := kerrors.NewAggregate(p.releaseGone(ctx, claims)); err != nil {
		return ctrl.Result{}, err
	}
	if len(f.addresses) > 0 {
		f.deleteWaiting = len(f.addresses)
		return ctrl.Result{}, nil // each claim's deletion brings the pool back
	}
	if err := p.net.ReleaseFloatingIPs(ctx, p.marks, "floating IP pool "+p.pool.Name); err != nil {
		return ctrl.Result{}, err
	}
	controllerutil.RemoveFinalizer(p.pool, infrav1alpha1.FloatingIPPoolFinalizer)
	return ctrl.Result{}, nil
}

// boolOrder orders false before true.
func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	default:
		return -1
	}
}
