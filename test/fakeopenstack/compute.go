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

package fakeopenstack

import (
	"context"
	"encoding/base64"
	"net/http"
	"regexp"
	"slices"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/availabilityzones"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
)

type serverEntry struct {
	server   servers.Server
	reads    int
	settleTo string
	// userData is the base64 user data the server was created with.
	userData string
	// blockDevices are the server's volumes, and whether Nova deletes them with it.
	blockDevices []blockDevice
	// mapping is the block_device_mapping_v2 the server was created with.
	mapping []any
}

type computeState struct {
	servers  store[serverEntry]
	azs      []availabilityzones.AvailabilityZone
	flavors  []flavors.Flavor
	groups   []servergroups.ServerGroup
	keypairs []keypairs.KeyPair
	images   []images.Image
}

func (s *computeState) init() {
	s.servers = newStore[serverEntry]()
}

func (s *computeState) addAZ(name string) {
	az := availabilityzones.AvailabilityZone{ZoneName: name}
	az.ZoneState.Available = true
	s.azs = append(s.azs, az)
}

// AddFlavor, AddImage, AddKeyPair and AddServerGroup seed what an operator provides.
func (c *Cloud) AddFlavor(name string, vcpus, ramMiB int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := flavors.Flavor{ID: c.newID("flavor"), Name: name, VCPUs: vcpus, RAM: ramMiB}
	c.compute.flavors = append(c.compute.flavors, f)
	return f.ID
}

func (c *Cloud) AddImage(name string, tags ...string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := images.Image{ID: c.newID("image"), Name: name, Tags: tags, Status: images.ImageStatusActive}
	c.compute.images = append(c.compute.images, i)
	return i.ID
}

func (c *Cloud) AddKeyPair(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.compute.keypairs = append(c.compute.keypairs, keypairs.KeyPair{Name: name})
}

// AddServerGroup's group has policy (anti-affinity when not given), shown as Nova shows it at
// the provider's microversion (the policies list).
func (c *Cloud) AddServerGroup(name string, policy ...string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(policy) == 0 {
		policy = []string{"anti-affinity"}
	}
	g := servergroups.ServerGroup{ID: c.newID("servergroup"), Name: name, Policies: policy}
	c.compute.groups = append(c.compute.groups, g)
	return g.ID
}

// ServerUserData is the user data a server was created with, decoded; "" for no server.
func (c *Cloud) ServerUserData(id string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.compute.servers.get(id)
	if !ok {
		return ""
	}
	data, err := base64.StdEncoding.DecodeString(e.userData)
	if err != nil {
		return "undecodable: " + e.userData
	}
	return string(data)
}

// ServerBlockDeviceMapping is the block_device_mapping_v2 server id was created with; nil for
// none or no server.
func (c *Cloud) ServerBlockDeviceMapping(id string) []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.compute.servers.get(id)
	if !ok {
		return nil
	}
	var out []map[string]any
	for _, item := range e.mapping {
		m, _ := item.(map[string]any)
		out = append(out, m)
	}
	return out
}

// settleServer moves a building server to its final state after enough reads.
func (c *Cloud) settleServer(e *serverEntry) {
	if e.server.Status != "BUILD" {
		return
	}
	e.reads++
	if e.reads >= c.opts.ServerBuildReads {
		e.server.Status = e.settleTo
		if e.settleTo == "ERROR" {
			e.server.Fault = servers.Fault{Code: 500, Message: "No valid host was found."}
		}
	}
}

// addresses is the server's addresses as Nova shows them: by network name.
func (c *Cloud) addresses(serverID string) map[string]any {
	out := map[string]any{}
	for _, p := range c.net.ports.all() {
		if p.DeviceID != serverID {
			continue
		}
		name := p.NetworkID
		if n, ok := c.net.networks.get(p.NetworkID); ok {
			name = n.Name
		}
		list, _ := out[name].([]any)
		for _, ip := range p.FixedIPs {
			list = append(list, map[string]any{"addr": ip.IPAddress, "version": 4, "OS-EXT-IPS:type": "fixed", "OS-EXT-IPS-MAC:mac_addr": p.MACAddress})
		}
		out[name] = list
	}
	return out
}

func (c *Cloud) serverView(e *serverEntry) servers.Server {
	s := e.server
	s.Addresses = c.addresses(s.ID)
	s.Tags = nil
	if e.server.Tags != nil {
		tags := slices.Clone(*e.server.Tags)
		s.Tags = &tags
	}
	return s
}

type computeAPI struct{ c *Cloud }

func (a *computeAPI) ListServers(_ context.Context, opts servers.ListOptsBuilder) ([]servers.Server, error) {
	return locked(a.c, "ListServers", func(c *Cloud) ([]servers.Server, error) {
		q, err := listQuery(opts)
		if err != nil {
			return nil, err
		}
		// Nova's name filter is a regular expression; the others are matched as Neutron's are.
		var namePattern *regexp.Regexp
		if name := q.Get("name"); name != "" {
			if namePattern, err = regexp.Compile(name); err != nil {
				return nil, httpError(http.StatusBadRequest, "Invalid name filter: %v", err)
			}
			q.Del("name")
		}
		out := []servers.Server{}
		for _, e := range c.compute.servers.all() {
			c.settleServer(e)
			v := c.serverView(e)
			if (namePattern == nil || namePattern.MatchString(v.Name)) && matches(&v, nil, q) {
				out = append(out, v)
			}
		}
		return out, nil
	})
}

func (a *computeAPI) GetServer(_ context.Context, id string) (*servers.Server, error) {
	return locked(a.c, "GetServer", func(c *Cloud) (*servers.Server, error) {
		e, ok := c.compute.servers.get(id)
		if !ok {
			return nil, notFound("Instance", id)
		}
		c.settleServer(e)
		v := c.serverView(e)
		return &v, nil
	})
}

func (a *computeAPI) CreateServer(_ context.Context, opts servers.CreateOptsBuilder, hints servers.SchedulerHintOptsBuilder) (*servers.Server, error) {
	return locked(a.c, "CreateServer", func(c *Cloud) (*servers.Server, error) {
		body, err := requestBody(opts)
		if err != nil {
			return nil, err
		}
		az := str(body, "availability_zone")
		if az != "" && !slices.ContainsFunc(c.compute.azs, func(z availabilityzones.AvailabilityZone) bool { return z.ZoneName == az }) {
			return nil, httpError(http.StatusBadRequest, "The requested availability zone is not available")
		}
		if az == "" && len(c.compute.azs) > 0 {
			az = c.compute.azs[0].ZoneName
		}
		id := c.newID("server")
		var portIDs []string
		for _, n := range asSlice(body["networks"]) {
			m, _ := n.(map[string]any)
			portID := str(m, "port")
			p, ok := c.net.ports.get(portID)
			if !ok {
				return nil, httpError(http.StatusBadRequest, "Port %s could not be found.", portID)
			}
			if p.DeviceID != "" {
				return nil, httpError(http.StatusConflict, "Port %s is still in use.", portID)
			}
			portIDs = append(portIDs, portID)
		}
		devices, err := c.attachBlockDevices(id, body)
		if err != nil {
			return nil, err
		}
		for _, portID := range portIDs {
			p, _ := c.net.ports.get(portID)
			p.DeviceID, p.DeviceOwner = id, "compute:"+az
		}
		e := &serverEntry{settleTo: "ACTIVE", blockDevices: devices, mapping: asSlice(body["block_device_mapping_v2"])}
		if c.lastCallDrivesToError {
			e.settleTo = "ERROR"
		}
		e.server = servers.Server{ID: id, Name: str(body, "name"), Status: "BUILD", AvailabilityZone: az, TenantID: "fake-project",
			Metadata: stringMap(body["metadata"]), Created: c.opts.Now().UTC().Truncate(time.Second)}
		if tags := stringsOf(body["tags"]); tags != nil {
			e.server.Tags = &tags
		}
		e.server.KeyName = str(body, "key_name")
		e.server.Flavor = map[string]any{"id": str(body, "flavorRef")}
		e.server.Image = map[string]any{"id": str(body, "imageRef")}
		e.userData = str(body, "user_data")
		if h, ok := hints.(servers.SchedulerHintOpts); ok && h.Group != "" {
			e.server.ServerGroups = &[]string{h.Group}
		}
		if c.opts.ServerBuildReads == 0 {
			e.server.Status = e.settleTo
		}
		c.compute.servers.add(id, e)
		// Nova answers a create with the ID and little else: no name, status or addresses.
		return &servers.Server{ID: id}, nil
	})
}

func (a *computeAPI) DeleteServer(_ context.Context, id string) error {
	return lockedErr(a.c, "DeleteServer", func(c *Cloud) error {
		e, ok := c.compute.servers.get(id)
		if !ok {
			return notFound("Instance", id)
		}
		c.detachBlockDevices(e.blockDevices)
		// Ports the user created before the server are detached, not deleted, as Nova does.
		for _, p := range c.net.ports.all() {
			if p.DeviceID == id {
				p.DeviceID, p.DeviceOwner = "", ""
			}
		}
		c.compute.servers.remove(id)
		return nil
	})
}

func (a *computeAPI) ListFlavors(_ context.Context, opts flavors.ListOptsBuilder) ([]flavors.Flavor, error) {
	return locked(a.c, "ListComputeFlavors", func(c *Cloud) ([]flavors.Flavor, error) {
		return slices.Clone(c.compute.flavors), nil
	})
}

func (a *computeAPI) GetFlavor(_ context.Context, id string) (*flavors.Flavor, error) {
	return locked(a.c, "GetFlavor", func(c *Cloud) (*flavors.Flavor, error) {
		for _, f := range c.compute.flavors {
			if f.ID == id {
				return &f, nil
			}
		}
		return nil, notFound("Flavor", id)
	})
}

func (a *computeAPI) ListAvailabilityZones(context.Context) ([]availabilityzones.AvailabilityZone, error) {
	return locked(a.c, "ListComputeAvailabilityZones", func(c *Cloud) ([]availabilityzones.AvailabilityZone, error) {
		return slices.Clone(c.compute.azs), nil
	})
}

func (a *computeAPI) ListServerGroups(_ context.Context, _ servergroups.ListOptsBuilder) ([]servergroups.ServerGroup, error) {
	return locked(a.c, "ListServerGroups", func(c *Cloud) ([]servergroups.ServerGroup, error) {
		// As Nova shows them: each group with the servers made in it, and the project.
		out := slices.Clone(c.compute.groups)
		for i := range out {
			out[i].ProjectID = "fake-project"
			out[i].Members = nil
			for _, e := range c.compute.servers.all() {
				if e.server.ServerGroups != nil && slices.Contains(*e.server.ServerGroups, out[i].ID) {
					out[i].Members = append(out[i].Members, e.server.ID)
				}
			}
			slices.Sort(out[i].Members)
		}
		return out, nil
	})
}

func (a *computeAPI) GetKeyPair(_ context.Context, name string) (*keypairs.KeyPair, error) {
	return locked(a.c, "GetKeyPair", func(c *Cloud) (*keypairs.KeyPair, error) {
		for _, k := range c.compute.keypairs {
			if k.Name == name {
				return &k, nil
			}
		}
		return nil, notFound("Keypair", name)
	})
}

type imageAPI struct{ c *Cloud }

func (a *imageAPI) ListImages(_ context.Context, opts images.ListOptsBuilder) ([]images.Image, error) {
	return locked(a.c, "ListImages", func(c *Cloud) ([]images.Image, error) {
		q, err := listQuery(opts)
		if err != nil {
			return nil, err
		}
		out := []images.Image{}
		for _, i := range c.compute.images {
			// Glance repeats the tag parameter, one tag each, and every tag must match.
			ok := q.Get("name") == "" || i.Name == q.Get("name")
			for _, t := range q["tag"] {
				ok = ok && slices.Contains(i.Tags, t)
			}
			if ok {
				out = append(out, i)
			}
		}
		return out, nil
	})
}

func (a *imageAPI) GetImage(_ context.Context, id string) (*images.Image, error) {
	return locked(a.c, "GetImage", func(c *Cloud) (*images.Image, error) {
		for _, i := range c.compute.images {
			if i.ID == id {
				return &i, nil
			}
		}
		return nil, notFound("Image", id)
	})
}
