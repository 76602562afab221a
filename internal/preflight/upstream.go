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

package preflight

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// What upstream CAPO v0.14.7 (and v0.15, in v1beta2) has that this provider does not, and what
// losing it means in the cloud. Checked against upstream's v0.14.7 CRDs and controllers, and its
// v1beta2 API definitions (the module proxy serves no v0.15 release to run).

// prunedWhy says, per field name, what upstream did with a field this provider's CRDs lack:
// none at present (primarySubnet and floatingIPPoolRef are served), so every such field is
// reported as "a field upstream's CRD has".
var prunedWhy = map[string]string{}

var index = regexp.MustCompile(`\[[^\]]*\]`)

// unsupportedWhy explains a pruned field path.
func unsupportedWhy(_ string, path string) string {
	parts := strings.Split(index.ReplaceAllString(path, ""), ".")
	if why, ok := prunedWhy[parts[len(parts)-1]]; ok {
		return why
	}
	return "a field upstream's CRD has"
}

// honoured are the checks of fields this provider's schema keeps, for compatibility of the YAML,
// but whose value it does not act on as upstream did, per kind (a template is checked on its
// template's spec). Each returns the path and why when the object's spec is affected.
// version is the object's API version (v1beta1 or v1beta2), for fields whose path differs.
var honoured = map[string][]func(version string, spec map[string]any) (path, why string){
	"OpenStackCluster": {
		func(version string, spec map[string]any) (string, string) {
			host, _, _ := unstructured.NestedString(spec, "controlPlaneEndpoint", "host")
			port, found, _ := unstructured.NestedInt64(spec, "controlPlaneEndpoint", "port")
			portField := []string{"apiServerPort"}
			if version == "v1beta2" {
				portField = []string{"apiServer", "port"}
			}
			api, set, _ := unstructured.NestedInt64(spec, portField...)
			if !set {
				api = infrav1.DefaultAPIServerPort
			}
			if host != "" && found && port != 0 && port != api {
				return "controlPlaneEndpoint.port", fmt.Sprintf("%d differs from %s (%d): upstream's listener and pool serve port %d, this provider serves %d and would replace them",
					port, strings.Join(portField, "."), api, port, api)
			}
			return "", ""
		},
	},
}

// ourFinalizers are the finalizers this provider removes. Upstream v0.14 uses the same names on
// OpenStackCluster and OpenStackMachine.
var ourFinalizers = []string{infrav1.ClusterFinalizer, infrav1.MachineFinalizer}

// upstreamOnlyKinds are upstream's kinds the pre-flight lists each object of: OpenStackServer,
// which this provider does not serve (its objects are not reconciled after the switch), and
// OpenStackFloatingIPPool, which it serves with a difference for the addresses upstream allocated.
var upstreamOnlyKinds = []struct {
	gvk      schema.GroupVersionKind
	severity Severity
	why      string
}{
	{schema.GroupVersionKind{Group: Group, Version: "v1alpha1", Kind: "OpenStackServer"}, Note,
		"upstream's record of one server (a machine's or the bastion's); this provider finds a machine's server from the OpenStackMachine (status.instanceID, then the server's name), and the bastion's by its name (<cluster>-bastion) on the cluster network, and does not use it. It keeps upstream's finalizer: once the switch is done, remove the finalizer and delete the object (docs/switching-from-upstream.md)"},
	{schema.GroupVersionKind{Group: Group, Version: "v1alpha1", Kind: "OpenStackFloatingIPPool"}, Note,
		"served by this provider as it is: the pool goes on answering its IPAddressClaims, and machines keep their addresses. The floating IPs upstream allocated for it (tagged cluster-api-provider-openstack-fip-pool-<name>) carry no mark of this provider: when their claim goes they are taken off the port and kept in the project, never handed out again nor released; list them in spec.preAllocatedFloatingIPs to have them handed out, or release them by hand (docs/floating-ip-pools.md)"},
}
