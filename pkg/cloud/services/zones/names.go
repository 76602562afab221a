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

package zones

import (
	"fmt"
	"strings"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/cloud/services/ownership"
)

// The names this provider gives a cluster's API server load balancers and their children, and the
// description that marks the floating IPs it allocates for them: how they are found again in
// Octavia and Neutron. Upstream CAPO names the single load balancer the same way, so that a cluster
// it made is taken over.

const (
	// namePrefix and nameSuffix frame every load balancer name: the prefix, the cluster
	// ("<namespace>-<name>"), "-<zone>" for a zone's load balancer, the suffix.
	namePrefix = "k8s-clusterapi-cluster-"
	nameSuffix = "-kubeapi"
)

// Name is the name of an API server load balancer: the legacy single load balancer when az is
// empty, the load balancer of availability zone az otherwise. Listeners, pools and monitors are
// named "<load balancer name>-<port>".
func Name(namespace, cluster, az string) string {
	if az == "" {
		return namePrefix + namespace + "-" + cluster + nameSuffix
	}
	return namePrefix + namespace + "-" + cluster + "-" + az + nameSuffix
}

// ZoneOfName reads the availability zone back out of a load balancer name Name gave the cluster
// ("" for the single one); ok is false for a name Name does not give it.
func ZoneOfName(name, namespace, cluster string) (az string, ok bool) {
	rest, ok := strings.CutPrefix(name, namePrefix+namespace+"-"+cluster)
	if ok {
		rest, ok = strings.CutSuffix(rest, nameSuffix)
	}
	if !ok {
		return "", false
	}
	if rest == "" {
		return "", true
	}
	if az, ok = strings.CutPrefix(rest, "-"); !ok || az == "" {
		return "", false
	}
	return az, true
}

// ChildName is the name of the listener, pool and health monitor of a load balancer for a port.
func ChildName(lbName string, port int) string { return fmt.Sprintf("%s-%d", lbName, port) }

// OwnerTag marks the load balancers the controller creates or adopts for a cluster, so that
// deletion finds them even when the status and the spec no longer name them.
func OwnerTag(namespace, cluster string) string {
	return fmt.Sprintf("k8s-clusterapi-cluster-%s-%s", namespace, cluster)
}

// FloatingIPDescription marks the floating IPs the controller allocates for the API server load
// balancers of a cluster. The user's apiServerFloatingIP never carries it.
func FloatingIPDescription(namespace, cluster, az string) string {
	d := ownership.FloatingIPMarkPrefix + fmt.Sprintf("API server load balancer of %s/%s", namespace, cluster)
	if az != "" {
		d += " in availability zone " + az
	}
	return d
}

// OwnsFloatingIP reports whether a floating IP description is one FloatingIPDescription gives for
// this cluster, in any availability zone.
func OwnsFloatingIP(description, namespace, cluster string) bool {
	_, ok := ZoneOfFloatingIP(description, namespace, cluster)
	return ok
}

// ZoneOfFloatingIP is the availability zone a floating IP description FloatingIPDescription gave
// for this cluster names ("" for the single load balancer's); ok is false for any other
// description.
func ZoneOfFloatingIP(description, namespace, cluster string) (az string, ok bool) {
	base := FloatingIPDescription(namespace, cluster, "")
	if description == base {
		return "", true
	}
	if az, ok := strings.CutPrefix(description, base+" in availability zone "); ok {
		return az, true
	}
	return "", false
}

// ZoneWords names what a load balancer serves, for messages.
func ZoneWords(az string) string {
	if az == "" {
		return "the API server"
	}
	return "availability zone " + az
}
