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

package clients

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/apiversions"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/providers"
)

//go:generate mockgen -destination=mock/loadbalancer.go -package=mock -copyright_file=../../hack/boilerplate/boilerplate.mockgen.txt . LoadBalancerClient

// LoadBalancerClient is the part of Octavia the provider uses.
type LoadBalancerClient interface {
	ListLoadBalancers(ctx context.Context, opts loadbalancers.ListOptsBuilder) ([]loadbalancers.LoadBalancer, error)
	GetLoadBalancer(ctx context.Context, id string) (*loadbalancers.LoadBalancer, error)
	CreateLoadBalancer(ctx context.Context, opts loadbalancers.CreateOptsBuilder) (*loadbalancers.LoadBalancer, error)
	// UpdateLoadBalancer is also how a load balancer is renamed.
	UpdateLoadBalancer(ctx context.Context, id string, opts loadbalancers.UpdateOptsBuilder) (*loadbalancers.LoadBalancer, error)
	DeleteLoadBalancer(ctx context.Context, id string, opts loadbalancers.DeleteOptsBuilder) error
	// GetLoadBalancerStatuses returns the provisioning and operating status of a load balancer and
	// of all its listeners, pools, members and monitors, in one call.
	GetLoadBalancerStatuses(ctx context.Context, id string) (*loadbalancers.StatusTree, error)

	ListListeners(ctx context.Context, opts listeners.ListOptsBuilder) ([]listeners.Listener, error)
	GetListener(ctx context.Context, id string) (*listeners.Listener, error)
	CreateListener(ctx context.Context, opts listeners.CreateOptsBuilder) (*listeners.Listener, error)
	UpdateListener(ctx context.Context, id string, opts listeners.UpdateOptsBuilder) (*listeners.Listener, error)
	DeleteListener(ctx context.Context, id string) error

	ListPools(ctx context.Context, opts pools.ListOptsBuilder) ([]pools.Pool, error)
	GetPool(ctx context.Context, id string) (*pools.Pool, error)
	CreatePool(ctx context.Context, opts pools.CreateOptsBuilder) (*pools.Pool, error)
	UpdatePool(ctx context.Context, id string, opts pools.UpdateOptsBuilder) (*pools.Pool, error)
	DeletePool(ctx context.Context, id string) error

	ListMembers(ctx context.Context, poolID string, opts pools.ListMembersOptsBuilder) ([]pools.Member, error)
	CreateMember(ctx context.Context, poolID string, opts pools.CreateMemberOptsBuilder) (*pools.Member, error)
	UpdateMember(ctx context.Context, poolID, memberID string, opts pools.UpdateMemberOptsBuilder) error
	DeleteMember(ctx context.Context, poolID, memberID string) error

	ListMonitors(ctx context.Context, opts monitors.ListOptsBuilder) ([]monitors.Monitor, error)
	CreateMonitor(ctx context.Context, opts monitors.CreateOptsBuilder) (*monitors.Monitor, error)
	UpdateMonitor(ctx context.Context, id string, opts monitors.UpdateOptsBuilder) (*monitors.Monitor, error)
	DeleteMonitor(ctx context.Context, id string) error

	ListProviders(ctx context.Context) ([]providers.Provider, error)
	ListAvailabilityZoneCapabilities(ctx context.Context, provider string) ([]providers.Capability, error)
	ListFlavors(ctx context.Context) ([]flavors.Flavor, error)
	ListAvailabilityZones(ctx context.Context) ([]LoadBalancerAvailabilityZone, error)
	ListAPIVersions(ctx context.Context) ([]apiversions.APIVersion, error)
}

// LoadBalancerAvailabilityZone is one of Octavia's availability zones, which gophercloud does
// not model.
type LoadBalancerAvailabilityZone struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Enabled     bool   `json:"enabled"`
}

type loadBalancerClient struct {
	c *gophercloud.ServiceClient
}

// NewLoadBalancerClient wraps an Octavia service client.
func NewLoadBalancerClient(c *gophercloud.ServiceClient) LoadBalancerClient {
	return &loadBalancerClient{c: c}
}

func (l *loadBalancerClient) ListLoadBalancers(ctx context.Context, opts loadbalancers.ListOptsBuilder) ([]loadbalancers.LoadBalancer, error) {
	return call(serviceLoadBalancer, "ListLoadBalancers", func() ([]loadbalancers.LoadBalancer, error) {
		return allPages(ctx, loadbalancers.List(l.c, opts), loadbalancers.ExtractLoadBalancers)
	})
}

func (l *loadBalancerClient) GetLoadBalancer(ctx context.Context, id string) (*loadbalancers.LoadBalancer, error) {
	return call(serviceLoadBalancer, "GetLoadBalancer", func() (*loadbalancers.LoadBalancer, error) {
		return loadbalancers.Get(ctx, l.c, id).Extract()
	})
}

func (l *loadBalancerClient) CreateLoadBalancer(ctx context.Context, opts loadbalancers.CreateOptsBuilder) (*loadbalancers.LoadBalancer, error) {
	return call(serviceLoadBalancer, "CreateLoadBalancer", func() (*loadbalancers.LoadBalancer, error) {
		return loadbalancers.Create(ctx, l.c, opts).Extract()
	})
}

func (l *loadBalancerClient) UpdateLoadBalancer(ctx context.Context, id string, opts loadbalancers.UpdateOptsBuilder) (*loadbalancers.LoadBalancer, error) {
	return call(serviceLoadBalancer, "UpdateLoadBalancer", func() (*loadbalancers.LoadBalancer, error) {
		return loadbalancers.Update(ctx, l.c, id, opts).Extract()
	})
}

func (l *loadBalancerClient) DeleteLoadBalancer(ctx context.Context, id string, opts loadbalancers.DeleteOptsBuilder) error {
	return callErr(serviceLoadBalancer, "DeleteLoadBalancer", func() error {
		return loadbalancers.Delete(ctx, l.c, id, opts).ExtractErr()
	})
}

func (l *loadBalancerClient) GetLoadBalancerStatuses(ctx context.Context, id string) (*loadbalancers.StatusTree, error) {
	return call(serviceLoadBalancer, "GetLoadBalancerStatuses", func() (*loadbalancers.StatusTree, error) {
		r := loadbalancers.GetStatuses(ctx, l.c, id)
		tree, err := r.Extract()
		if err != nil {
			return nil, err
		}
		if tree == nil || tree.Loadbalancer == nil {
			return nil, fmt.Errorf("%w: no load balancer in the status tree", ErrMalformedAnswer)
		}
		// Octavia names a pool's monitor "health_monitor" in the status tree, where gophercloud
		// looks for "healthmonitor": read it separately so that the tree carries the monitors.
		var raw statusTreeMonitors
		if err := r.ExtractInto(&raw); err == nil && tree.Loadbalancer != nil {
			raw.fill(tree.Loadbalancer)
		}
		return tree, nil
	})
}

type statusTreeMonitors struct {
	Statuses struct {
		Loadbalancer struct {
			Listeners []struct {
				Pools []struct {
					HealthMonitor *monitors.Monitor `json:"health_monitor"`
				} `json:"pools"`
			} `json:"listeners"`
		} `json:"loadbalancer"`
	} `json:"statuses"`
}

func (raw *statusTreeMonitors) fill(lb *loadbalancers.LoadBalancer) {
	rawListeners := raw.Statuses.Loadbalancer.Listeners
	for i := range lb.Listeners {
		if i >= len(rawListeners) {
			return
		}
		for j := range lb.Listeners[i].Pools {
			if j < len(rawListeners[i].Pools) && rawListeners[i].Pools[j].HealthMonitor != nil && lb.Listeners[i].Pools[j].Monitor.ID == "" {
				lb.Listeners[i].Pools[j].Monitor = *rawListeners[i].Pools[j].HealthMonitor
			}
		}
	}
}

func (l *loadBalancerClient) ListListeners(ctx context.Context, opts listeners.ListOptsBuilder) ([]listeners.Listener, error) {
	return call(serviceLoadBalancer, "ListListeners", func() ([]listeners.Listener, error) {
		return allPages(ctx, listeners.List(l.c, opts), listeners.ExtractListeners)
	})
}

func (l *loadBalancerClient) GetListener(ctx context.Context, id string) (*listeners.Listener, error) {
	return call(serviceLoadBalancer, "GetListener", func() (*listeners.Listener, error) { return listeners.Get(ctx, l.c, id).Extract() })
}

func (l *loadBalancerClient) CreateListener(ctx context.Context, opts listeners.CreateOptsBuilder) (*listeners.Listener, error) {
	return call(serviceLoadBalancer, "CreateListener", func() (*listeners.Listener, error) { return listeners.Create(ctx, l.c, opts).Extract() })
}

func (l *loadBalancerClient) UpdateListener(ctx context.Context, id string, opts listeners.UpdateOptsBuilder) (*listeners.Listener, error) {
	return call(serviceLoadBalancer, "UpdateListener", func() (*listeners.Listener, error) {
		return listeners.Update(ctx, l.c, id, opts).Extract()
	})
}

func (l *loadBalancerClient) DeleteListener(ctx context.Context, id string) error {
	return callErr(serviceLoadBalancer, "DeleteListener", func() error { return listeners.Delete(ctx, l.c, id).ExtractErr() })
}

func (l *loadBalancerClient) ListPools(ctx context.Context, opts pools.ListOptsBuilder) ([]pools.Pool, error) {
	return call(serviceLoadBalancer, "ListPools", func() ([]pools.Pool, error) {
		return allPages(ctx, pools.List(l.c, opts), pools.ExtractPools)
	})
}

func (l *loadBalancerClient) GetPool(ctx context.Context, id string) (*pools.Pool, error) {
	return call(serviceLoadBalancer, "GetPool", func() (*pools.Pool, error) { return pools.Get(ctx, l.c, id).Extract() })
}

func (l *loadBalancerClient) CreatePool(ctx context.Context, opts pools.CreateOptsBuilder) (*pools.Pool, error) {
	return call(serviceLoadBalancer, "CreatePool", func() (*pools.Pool, error) { return pools.Create(ctx, l.c, opts).Extract() })
}

func (l *loadBalancerClient) UpdatePool(ctx context.Context, id string, opts pools.UpdateOptsBuilder) (*pools.Pool, error) {
	return call(serviceLoadBalancer, "UpdatePool", func() (*pools.Pool, error) { return pools.Update(ctx, l.c, id, opts).Extract() })
}

func (l *loadBalancerClient) DeletePool(ctx context.Context, id string) error {
	return callErr(serviceLoadBalancer, "DeletePool", func() error { return pools.Delete(ctx, l.c, id).ExtractErr() })
}

func (l *loadBalancerClient) ListMembers(ctx context.Context, poolID string, opts pools.ListMembersOptsBuilder) ([]pools.Member, error) {
	return call(serviceLoadBalancer, "ListMembers", func() ([]pools.Member, error) {
		return allPages(ctx, pools.ListMembers(l.c, poolID, opts), pools.ExtractMembers)
	})
}

func (l *loadBalancerClient) CreateMember(ctx context.Context, poolID string, opts pools.CreateMemberOptsBuilder) (*pools.Member, error) {
	return call(serviceLoadBalancer, "CreateMember", func() (*pools.Member, error) {
		return pools.CreateMember(ctx, l.c, poolID, opts).Extract()
	})
}

func (l *loadBalancerClient) UpdateMember(ctx context.Context, poolID, memberID string, opts pools.UpdateMemberOptsBuilder) error {
	_, err := call(serviceLoadBalancer, "UpdateMember", func() (*pools.Member, error) {
		return pools.UpdateMember(ctx, l.c, poolID, memberID, opts).Extract()
	})
	return err
}

func (l *loadBalancerClient) DeleteMember(ctx context.Context, poolID, memberID string) error {
	return callErr(serviceLoadBalancer, "DeleteMember", func() error {
		return pools.DeleteMember(ctx, l.c, poolID, memberID).ExtractErr()
	})
}

func (l *loadBalancerClient) ListMonitors(ctx context.Context, opts monitors.ListOptsBuilder) ([]monitors.Monitor, error) {
	return call(serviceLoadBalancer, "ListMonitors", func() ([]monitors.Monitor, error) {
		return allPages(ctx, monitors.List(l.c, opts), monitors.ExtractMonitors)
	})
}

func (l *loadBalancerClient) CreateMonitor(ctx context.Context, opts monitors.CreateOptsBuilder) (*monitors.Monitor, error) {
	return call(serviceLoadBalancer, "CreateMonitor", func() (*monitors.Monitor, error) { return monitors.Create(ctx, l.c, opts).Extract() })
}

func (l *loadBalancerClient) UpdateMonitor(ctx context.Context, id string, opts monitors.UpdateOptsBuilder) (*monitors.Monitor, error) {
	return call(serviceLoadBalancer, "UpdateMonitor", func() (*monitors.Monitor, error) {
		return monitors.Update(ctx, l.c, id, opts).Extract()
	})
}

func (l *loadBalancerClient) DeleteMonitor(ctx context.Context, id string) error {
	return callErr(serviceLoadBalancer, "DeleteMonitor", func() error { return monitors.Delete(ctx, l.c, id).ExtractErr() })
}

func (l *loadBalancerClient) ListProviders(ctx context.Context) ([]providers.Provider, error) {
	return call(serviceLoadBalancer, "ListProviders", func() ([]providers.Provider, error) {
		return allPages(ctx, providers.List(l.c, nil), providers.ExtractProviders)
	})
}

func (l *loadBalancerClient) ListAvailabilityZoneCapabilities(ctx context.Context, provider string) ([]providers.Capability, error) {
	return call(serviceLoadBalancer, "ListAvailabilityZoneCapabilities", func() ([]providers.Capability, error) {
		return providers.ListAvailabilityZoneCapabilities(ctx, l.c, provider, nil).Extract()
	})
}

func (l *loadBalancerClient) ListFlavors(ctx context.Context) ([]flavors.Flavor, error) {
	return call(serviceLoadBalancer, "ListFlavors", func() ([]flavors.Flavor, error) {
		return allPages(ctx, flavors.List(l.c, nil), flavors.ExtractFlavors)
	})
}

func (l *loadBalancerClient) ListAvailabilityZones(ctx context.Context) ([]LoadBalancerAvailabilityZone, error) {
	return call(serviceLoadBalancer, "ListAvailabilityZones", func() ([]LoadBalancerAvailabilityZone, error) {
		var body struct {
			AvailabilityZones []LoadBalancerAvailabilityZone `json:"availability_zones"`
		}
		// gophercloud closes the response body itself when it decodes into a JSON response.
		_, err := l.c.Get(ctx, l.c.ServiceURL("lbaas", "availabilityzones"), &body, nil) //nolint:bodyclose
		return body.AvailabilityZones, err
	})
}

func (l *loadBalancerClient) ListAPIVersions(ctx context.Context) ([]apiversions.APIVersion, error) {
	return call(serviceLoadBalancer, "ListAPIVersions", func() ([]apiversions.APIVersion, error) {
		return allPages(ctx, apiversions.List(l.c), apiversions.ExtractAPIVersions)
	})
}
