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

// Command preflight checks a management cluster that runs upstream Cluster API Provider OpenStack
// (v0.14) before it switches to this provider: it reads every OpenStackCluster,
// OpenStackClusterTemplate, OpenStackMachine and OpenStackMachineTemplate (and upstream's
// OpenStackServer and OpenStackFloatingIPPool objects) and prints, per object, each field this
// provider's CRDs would prune or its controllers do not honour, and each finalizer, annotation or
// object that changes meaning. It changes nothing, unless asked to record the takeover.
//
//	go run ./cmd/preflight [--kubeconfig FILE] [--record-takeover [--takeover-record NAMESPACE/NAME]]
//
// --record-takeover writes the operator's takeover record (a ConfigMap in the provider's
// namespace, capo-system/capo-takeover by default): every OpenStackCluster and OpenStackMachine
// that exists now may then adopt the resources upstream CAPO made for it. Without the record, this
// provider adopts none of them (docs/switching-from-upstream.md).
//
// Exit status: 0 when nothing is lost by switching, 1 when something would be (the LOST lines
// say what), 2 when the check could not run. docs/switching-from-upstream.md says what to do.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capo-multiaz/cluster-api-provider-openstack/internal/preflight"
	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/takeover"
)

func main() {
	kubeconfig := flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "The management cluster's kubeconfig (default: $KUBECONFIG).")
	record := flag.Bool("record-takeover", false, "Record the takeover of every OpenStackCluster and OpenStackMachine that exists now.")
	recordKey := flag.String("takeover-record", "capo-system/"+takeover.DefaultName, "The takeover record's ConfigMap, namespace/name: the manager's --takeover-record.")
	flag.Parse()
	ns, name, ok := strings.Cut(*recordKey, "/")
	if !ok || ns == "" || name == "" {
		fail(fmt.Errorf("--takeover-record %q: want namespace/name", *recordKey))
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = *kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		fail(fmt.Errorf("reading the kubeconfig: %w", err))
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		fail(err)
	}
	ours, err := preflight.OurSchemas()
	if err != nil {
		fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	report, err := preflight.Run(ctx, c, ours)
	if err != nil {
		fail(err)
	}
	if err := report.Write(os.Stdout); err != nil {
		fail(err)
	}
	if *record && report.Blocking() {
		fmt.Println("the takeover is not recorded: the switch would lose what the LOST lines say")
		os.Exit(1)
	}
	if *record {
		n, err := preflight.RecordTakeover(ctx, c, types.NamespacedName{Namespace: ns, Name: name})
		if err != nil {
			fail(err)
		}
		fmt.Printf("recorded the takeover of %d objects in ConfigMap %s/%s\n", n, ns, name)
	}
	if report.Blocking() {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "preflight: %v\n", err)
	os.Exit(2)
}
