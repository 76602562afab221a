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

package networking

import (
	"net/netip"

	infrav1 "github.com/capo-multiaz/cluster-api-provider-openstack/api/v1beta1"
)

// UpstreamGroupDescription is the description upstream CAPO v0.14 gives the security groups it
// creates. A cluster taken over from upstream keeps upstream's rule set in those groups (see
// upstreamRules), so that the switch deletes and creates no rule; groups this provider created
// get its own set (desiredRules).
const UpstreamGroupDescription = "Cluster API managed group"

// upstreamRules is the rule set upstream CAPO v0.14 keeps in its managed groups, from the same
// spec: the API server rule on 6443 and the additional ports from any address; NodePorts, TCP and
// UDP, from each IPv4 cluster subnet and from both groups; etcd and kubelet between the groups,
// or instead all IPv4 traffic between them with allowAllInClusterTraffic; SSH from the bastion's
// group while there is a bastion; then the user's rules.
func upstreamRules(spec *infrav1.OpenStackClusterSpec, ids groupIDs, subnetCIDRs []string) (cpRules, workerRules []desiredRule, err error) {
	cpID, workerID := ids.controlPlane, ids.worker
	rule := func(description, protocol string, portMin, portMax int, remoteIPPrefix, remoteGroupID string) desiredRule {
		return desiredRule{description: description, key: ruleKey{direction: "ingress", etherType: "IPv4", protocol: protocol,
			portMin: portMin, portMax: portMax, remoteIPPrefix: remoteIPPrefix, remoteGroupID: remoteGroupID}}
	}
	nodePorts := func(remoteIPPrefix, remoteGroupID string) []desiredRule {
		return []desiredRule{
			rule("Node Port Services", "tcp", 30000, 32767, remoteIPPrefix, remoteGroupID),
			rule("Node Port Services", "udp", 30000, 32767, remoteIPPrefix, remoteGroupID),
		}
	}

	cpRules = append(defaultEgress(), rule("Kubernetes API", "tcp", 6443, 6443, "", ""))
	workerRules = defaultEgress()
	for _, cidr := range subnetCIDRs {
		if p, err := netip.ParsePrefix(cidr); err == nil && p.Addr().Is4() {
			workerRules = append(workerRules, nodePorts(cidr, "")...)
		}
	}
	workerRules = append(workerRules, nodePorts("", workerID)...)
	workerRules = append(workerRules, nodePorts("", cpID)...)
	if spec.APIServerLoadBalancerEnabled() {
		for _, port := range spec.APIServerLoadBalancer.AdditionalPorts {
			cpRules = append(cpRules, rule("Additional port", "tcp", port, port, "", ""))
		}
	}
	msg := spec.ManagedSecurityGroups
	if msg.AllowAllInClusterTraffic {
		cpRules = append(cpRules, rule("In-cluster Ingress", "", 0, 0, "", cpID), rule("In-cluster Ingress", "", 0, 0, "", workerID))
		workerRules = append(workerRules, rule("In-cluster Ingress", "", 0, 0, "", workerID), rule("In-cluster Ingress", "", 0, 0, "", cpID))
	} else {
		cpRules = append(cpRules,
			rule("Etcd", "tcp", 2379, 2380, "", cpID),
			rule("Kubelet API", "tcp", 10250, 10250, "", cpID),
			rule("Kubelet API", "tcp", 10250, 10250, "", workerID))
		workerRules = append(workerRules,
			rule("Kubelet API", "tcp", 10250, 10250, "", workerID),
			rule("Kubelet API", "tcp", 10250, 10250, "", cpID))
	}
	// Upstream lets the bastion reach the nodes over SSH the same way.
	cpRules = append(cpRules, sshFromBastion(ids)...)
	workerRules = append(workerRules, sshFromBastion(ids)...)
	cpUser, workerUser, err := userRules(msg, ids)
	if err != nil {
		return nil, nil, err
	}
	return append(cpRules, cpUser...), append(workerRules, workerUser...), nil
}
