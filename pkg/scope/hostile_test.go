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

package scope

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/attributestags"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/floatingips"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/layer3/routers"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/security/groups"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/trunks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/ports"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	. "github.com/onsi/gomega"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
	"github.com/capo-multiaz/cluster-api-provider-openstack/test/hostilecloud"
)

// The hostile-cloud harness: a server that answers as Keystone and every service the manager
// calls, but as a tenant's own auth_url could: objects missing, keys of the wrong type, bodies
// that never end, endless pages, answers that never come, redirects elsewhere. Every method of
// every client is called through the manager's own identity code and transport against each
// answer. Each call must end in an error (or in a whole object) within the client's timeout,
// without a panic, without following a redirect and without reading more than the bounds.

// hostileOpts are values for every options interface the clients take: the first that implements
// a parameter's type is passed. A client method taking a type none implements fails the harness,
// so that a new client path cannot escape it.
var hostileOpts = []any{
	networks.ListOpts{}, networks.CreateOpts{Name: "n"},
	subnets.ListOpts{}, subnets.CreateOpts{NetworkID: hostilecloud.ID, CIDR: "10.0.0.0/24", IPVersion: 4},
	ports.ListOpts{}, ports.CreateOpts{NetworkID: hostilecloud.ID}, ports.UpdateOpts{},
	routers.ListOpts{}, routers.CreateOpts{Name: "r"}, routers.UpdateOpts{},
	routers.AddInterfaceOpts{SubnetID: hostilecloud.ID}, routers.RemoveInterfaceOpts{SubnetID: hostilecloud.ID},
	floatingips.ListOpts{}, floatingips.CreateOpts{FloatingNetworkID: hostilecloud.ID}, floatingips.UpdateOpts{},
	groups.ListOpts{}, groups.CreateOpts{Name: "g"},
	trunks.ListOpts{}, trunks.CreateOpts{PortID: hostilecloud.ID},
	attributestags.ReplaceAllOpts{Tags: []string{"t"}},
	loadbalancers.ListOpts{}, loadbalancers.CreateOpts{Name: "lb", VipSubnetID: hostilecloud.ID}, loadbalancers.UpdateOpts{}, loadbalancers.DeleteOpts{},
	listeners.ListOpts{}, listeners.CreateOpts{Protocol: listeners.ProtocolTCP, ProtocolPort: 6443, LoadbalancerID: hostilecloud.ID}, listeners.UpdateOpts{},
	pools.ListOpts{}, pools.CreateOpts{Protocol: pools.ProtocolTCP, LBMethod: pools.LBMethodRoundRobin, ListenerID: hostilecloud.ID}, pools.UpdateOpts{},
	pools.ListMembersOpts{}, pools.CreateMemberOpts{Address: "10.0.0.1", ProtocolPort: 6443}, pools.UpdateMemberOpts{},
	monitors.ListOpts{}, monitors.CreateOpts{PoolID: hostilecloud.ID, Type: monitors.TypeTCP, Delay: 10, Timeout: 5, MaxRetries: 3}, monitors.UpdateOpts{},
	servers.ListOpts{}, servers.CreateOpts{Name: "s", FlavorRef: hostilecloud.ID, ImageRef: hostilecloud.ID}, servers.SchedulerHintOpts{},
	flavors.ListOpts{}, servergroups.ListOpts{},
	images.ListOpts{},
	volumes.ListOpts{}, volumes.CreateOpts{Size: 1},
}

// hostileArgs are the arguments of method m (after its receiver): the context, IDs, options.
func hostileArgs(t *testing.T, ctx context.Context, name string, m reflect.Type) []reflect.Value {
	t.Helper()
	ctxType := reflect.TypeOf((*context.Context)(nil)).Elem()
	args := make([]reflect.Value, m.NumIn())
	for i := range args {
		in := m.In(i)
		switch {
		case in == ctxType:
			args[i] = reflect.ValueOf(ctx)
		case in.Kind() == reflect.String:
			args[i] = reflect.ValueOf(hostilecloud.ID).Convert(in)
		case in.Kind() == reflect.Slice && in.Elem().Kind() == reflect.String:
			args[i] = reflect.ValueOf([]string{hostilecloud.ID}).Convert(in)
		case in.Kind() == reflect.Interface:
			for _, o := range hostileOpts {
				if reflect.TypeOf(o).Implements(in) {
					args[i] = reflect.ValueOf(o)
					break
				}
			}
			if !args[i].IsValid() {
				t.Fatalf("%s: no value for its parameter %s: add one to hostileOpts", name, in)
			}
		default:
			args[i] = reflect.Zero(in)
		}
	}
	return args
}

// hostileCall calls method name of client with args. It returns what is wrong with how the call
// ended (a panic, or no error with results that do not hold what they claim: a nil object, an
// object without its ID), and the method's error.
func hostileCall(client reflect.Value, name string, args []reflect.Value) (problem string, callErr error) {
	defer func() {
		if r := recover(); r != nil {
			problem = fmt.Sprintf("panicked: %v\n%s", r, debug.Stack())
		}
	}()
	out := client.MethodByName(name).Call(args)
	if last := out[len(out)-1]; !last.IsNil() {
		return "", last.Interface().(error)
	}
	noID := func(v reflect.Value) bool {
		id := v.FieldByName("ID")
		return id.IsValid() && id.Kind() == reflect.String && id.String() == ""
	}
	for _, v := range out[:len(out)-1] {
		switch {
		case v.Kind() == reflect.Pointer && v.IsNil():
			return "no error, and a nil object", nil
		case v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct && noID(v.Elem()):
			return "no error, and an object without an ID", nil
		case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Struct:
			for j := 0; j < v.Len(); j++ {
				if noID(v.Index(j)) {
					return "no error, and a listed object without an ID", nil
				}
			}
		}
	}
	return "", nil
}

func TestEveryClientPathEndsInAnErrorAgainstAHostileCloud(t *testing.T) {
	h := hostilecloud.New()
	t.Cleanup(h.Close)
	// A short timeout, so that "no answer" ends soon; the manager's default is 60 s.
	const timeout = 100 * time.Millisecond
	// Each case's clients, made while the services' version documents are honest.
	made := make([]*Clients, len(hostilecloud.Answers))
	for i := range hostilecloud.Answers {
		f, _ := newFactory(t, logr.Discard(), secret(map[string]string{CloudsSecretKey: hostilecloud.CloudsYAML(h.Services(i), password)}))
		f.Timeout = timeout
		c, err := f.NewClients(context.Background(), "ns", ref)
		if err != nil {
			t.Fatal(err)
		}
		made[i] = c
	}
	h.HostileRoots()
	// Where an operation's name is not its method's.
	operation := map[string]string{"Cinder ListAvailabilityZones": "ListVolumeAvailabilityZones"}
	for i, a := range hostilecloud.Answers {
		c := made[i]
		services := []struct {
			name   string
			client any
			iface  reflect.Type
		}{
			{"Neutron", c.Network, reflect.TypeOf((*clients.NetworkClient)(nil)).Elem()},
			{"Octavia", c.LoadBalancer, reflect.TypeOf((*clients.LoadBalancerClient)(nil)).Elem()},
			{"Nova", c.Compute, reflect.TypeOf((*clients.ComputeClient)(nil)).Elem()},
			{"Glance", c.Image, reflect.TypeOf((*clients.ImageClient)(nil)).Elem()},
			{"Cinder", c.Volume, reflect.TypeOf((*clients.VolumeClient)(nil)).Elem()},
		}
		t.Run(a.Name, func(t *testing.T) {
			calls := 0
			for _, svc := range services {
				client := reflect.ValueOf(svc.client)
				for j := 0; j < svc.iface.NumMethod(); j++ {
					name := svc.iface.Method(j).Name
					args := hostileArgs(t, context.Background(), svc.name+" "+name, svc.iface.Method(j).Type)
					var before runtime.MemStats
					runtime.ReadMemStats(&before)
					start := time.Now()
					problem, err := hostileCall(client, name, args)
					took := time.Since(start)
					var after runtime.MemStats
					runtime.ReadMemStats(&after)
					calls++
					if problem != "" {
						t.Errorf("%s %s on %s: %s", svc.name, name, a.Name, problem)
					}
					// Nothing waits for the server's own end of "no answer" (minutes): the
					// client's timeout ends it, and says so.
					if took > 20*time.Second {
						t.Errorf("%s %s took %s on %s (timeout %s)", svc.name, name, took, a.Name, timeout)
					}
					if a.Name == hostilecloud.NoAnswer && !clients.Unanswered(err) {
						t.Errorf("%s %s on no answer: not an unanswered call: %v", svc.name, name, err)
					}
					// Reading is bounded: a body that never ends costs at most a few times the
					// largest body a call reads.
					if grown := after.TotalAlloc - before.TotalAlloc; grown > 4*clients.MaxListBody {
						t.Errorf("%s %s allocated %d MiB on %s", svc.name, name, grown>>20, a.Name)
					}
					// A missing or malformed answer is an error that names the operation.
					op := name
					if alias, ok := operation[svc.name+" "+name]; ok {
						op = alias
					}
					if err != nil && !strings.Contains(err.Error(), op) {
						t.Errorf("%s %s on %s: the error does not name the operation: %v", svc.name, name, a.Name, err)
					}
					if err != nil && strings.Contains(err.Error(), password) {
						t.Errorf("%s %s on %s: the error holds the password", svc.name, name, a.Name)
					}
				}
			}
			if calls < 60 {
				t.Errorf("only %d client methods called", calls)
			}
		})
	}
	g := NewWithT(t)
	g.Expect(h.Trapped()).To(BeZero(), "a redirect was followed")
	g.Expect(h.Requests()).To(BeNumerically(">", 0))
}

// Keystone itself answering as the hostile cloud does: every case ends in an error that says
// where it came from, holds no credential, and follows no redirect.
func TestAHostileKeystoneEndsInAnError(t *testing.T) {
	h := hostilecloud.New()
	t.Cleanup(h.Close)
	for i, a := range hostilecloud.Answers {
		t.Run(a.Name, func(t *testing.T) {
			g := NewWithT(t)
			f, _ := newFactory(t, logr.Discard(), secret(map[string]string{CloudsSecretKey: hostilecloud.CloudsYAML(h.Keystone(i), password)}))
			f.Timeout = 100 * time.Millisecond
			var c *Clients
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panicked: %v\n%s", r, debug.Stack())
					}
				}()
				c, err = f.NewClients(context.Background(), "ns", ref)
			}()
			g.Expect(err).To(HaveOccurred())
			g.Expect(c).To(BeNil())
			g.Expect(err.Error()).To(Or(ContainSubstring("Authenticate"), ContainSubstring("service catalog")), "the error says where it came from")
			g.Expect(err.Error()).NotTo(ContainSubstring(password))
		})
	}
	NewWithT(t).Expect(h.Trapped()).To(BeZero(), "a redirect was followed")
}
