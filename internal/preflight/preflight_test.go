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
	"context"
	"os"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/capo-multiaz/cluster-api-provider-openstack/internal/localenv"
)

func upstreamObjects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile("testdata/upstream-objects.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := localenv.DecodeYAML(data)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func lines(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.Severity)+" "+f.Kind+" "+f.Object+" "+f.Path)
	}
	return out
}

func TestEveryFieldTheSwitchWouldLoseIsNamedByItsPath(t *testing.T) {
	g := NewWithT(t)
	ours, err := OurSchemas()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ours).To(HaveLen(10), "four kinds, each in v1beta1 and v1beta2, and OpenStackClusterIdentity and OpenStackFloatingIPPool in v1alpha1")

	var all []Finding
	for _, obj := range upstreamObjects(t) {
		all = append(all, CheckObject(obj.GetKind(), obj, ours)...)
	}
	g.Expect(lines(all)).To(ConsistOf(
		// bastion: the server, port and floating IP upstream made are taken over (no finding).
		// provider: ovn gets SOURCE_IP_PORT pools, as upstream made them (no finding).
		"LOST OpenStackCluster team-a/bastioned spec.controlPlaneEndpoint.port",
		// Without a load balancer, the floating IP on a control plane machine is kept and moved
		// on as upstream did (no finding).
		// identityRef.type ClusterIdentity: the OpenStackClusterIdentity is read as upstream's (no finding).
		"CHANGED OpenStackCluster team-a/bastioned metadata.finalizers",
		"NOTE OpenStackCluster team-a/plain status",
		"NOTE OpenStackCluster team-a/plain status.failureDomains",
		// image.imageRef is resolved through ORC's Image as upstream did (no finding).
		// floatingIPPoolRef: the pool answers the machine's claim as upstream's did (no finding).
		"NOTE OpenStackMachine team-a/cp-0 status.instanceID",
		// ports[0].vnicType is passed to Neutron as upstream did (no finding).
		// rootVolume and additionalBlockDevices are made as upstream made them (no finding).
		// trunk (the machine's and a port's) makes trunks as upstream did (no finding).
	))
	for _, f := range all {
		g.Expect(f.Message).NotTo(BeEmpty())
		if f.Path == "spec.controlPlaneEndpoint.port" {
			g.Expect(f.Message).To(ContainSubstring("would replace them"), "says what it costs in the cloud")
		}
		if f.Severity == Changed {
			g.Expect(f.Message).To(ContainSubstring("example.com/backup"))
		}
	}
}

func TestAClusterOfSupportedFieldsLosesNothing(t *testing.T) {
	g := NewWithT(t)
	ours, err := OurSchemas()
	g.Expect(err).NotTo(HaveOccurred())
	plain := upstreamObjects(t)[0]
	for _, f := range CheckObject(plain.GetKind(), plain, ours) {
		g.Expect(f.Severity).To(Equal(Note), f.String())
	}
}

func TestTheReportBlocksTheSwitchOnlyWhenSomethingIsLost(t *testing.T) {
	g := NewWithT(t)
	ours, err := OurSchemas()
	g.Expect(err).NotTo(HaveOccurred())
	objs := upstreamObjects(t)

	c := fakeclient.NewClientBuilder().WithRuntimeObjects(objs[0]).Build()
	r, err := Run(context.Background(), c, ours)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Blocking()).To(BeFalse())
	g.Expect(r.Checked).To(HaveKeyWithValue("OpenStackCluster", 1))
	var out strings.Builder
	g.Expect(r.Write(&out)).To(Succeed())
	g.Expect(out.String()).To(HaveSuffix("nothing is lost by switching\n"))

	crd := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "openstackclusters.infrastructure.cluster.x-k8s.io"},
		"status":   map[string]any{"storedVersions": []any{"v1alpha7", "v1beta1"}}}}
	c = fakeclient.NewClientBuilder().WithRuntimeObjects(objs[0], crd).Build()
	r, err = Run(context.Background(), c, ours)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Blocking()).To(BeTrue(), "a version still stored blocks the CRD's replacement")
	g.Expect(lines(r.Findings)).To(ContainElement("LOST CustomResourceDefinition /openstackclusters.infrastructure.cluster.x-k8s.io status.storedVersions"))

	c = fakeclient.NewClientBuilder().WithRuntimeObjects(objs[0], objs[1]).Build()
	r, err = Run(context.Background(), c, ours)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Blocking()).To(BeTrue())
	out.Reset()
	g.Expect(r.Write(&out)).To(Succeed())
	g.Expect(out.String()).To(ContainSubstring("LOST    OpenStackCluster team-a/bastioned spec.controlPlaneEndpoint.port: 443 differs from apiServerPort"))
	g.Expect(out.String()).To(HaveSuffix("the switch would lose what the LOST lines say: change those objects first, or do not switch\n"))
}

// A management cluster that ran upstream's v0.15 stores v1beta2: the check reads the objects in
// v1beta2 (the installed CRD serves it), names what is lost by its v1beta2 path, and does not
// count v1beta2 among the stored versions the switch would strand.
func TestObjectsUpstreamStoredAsV1beta2AreCheckedInV1beta2(t *testing.T) {
	g := NewWithT(t)
	ours, err := OurSchemas()
	g.Expect(err).NotTo(HaveOccurred())
	data, err := os.ReadFile("testdata/upstream-v1beta2-objects.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := localenv.DecodeYAML(data)
	g.Expect(err).NotTo(HaveOccurred())

	var runtimeObjs []client.Object
	for _, kind := range []string{"OpenStackCluster", "OpenStackMachine"} {
		runtimeObjs = append(runtimeObjs, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": strings.ToLower(kind) + "s.infrastructure.cluster.x-k8s.io"},
			"spec": map[string]any{"versions": []any{
				map[string]any{"name": "v1beta1", "served": true, "storage": false},
				map[string]any{"name": "v1beta2", "served": true, "storage": true},
			}},
			"status": map[string]any{"storedVersions": []any{"v1beta1", "v1beta2"}}}})
	}
	for _, o := range objs {
		runtimeObjs = append(runtimeObjs, o)
	}
	c := fakeclient.NewClientBuilder().WithObjects(runtimeObjs...).Build()
	r, err := Run(context.Background(), c, ours)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Checked).To(HaveKeyWithValue("OpenStackCluster", 2))
	g.Expect(r.Checked).To(HaveKeyWithValue("OpenStackMachine", 1))
	var lost []string
	for _, f := range r.Findings {
		if f.Severity == Lost {
			lost = append(lost, f.Kind+" "+f.Object+" "+f.Path)
		}
	}
	g.Expect(lost).To(ConsistOf(
		"OpenStackCluster team-b/upstream-only spec.controlPlaneEndpoint.port",
	), "everything of team-b/plain and its machine has its v1beta2 place here; storedVersions [v1beta1 v1beta2] are both served")
	for _, f := range r.Findings {
		if f.Path == "spec.controlPlaneEndpoint.port" {
			g.Expect(f.Message).To(ContainSubstring("differs from apiServer.port (6444)"))
		}
	}
}
