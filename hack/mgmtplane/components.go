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

package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capo-multiaz/cluster-api-provider-openstack/internal/localenv"
)

// components is the release's infrastructure-components.yaml, its clusterctl variables
// substituted, split into what the management plane installs as it is and what it stands in for.
type components struct {
	// install are the namespace, CRDs, ServiceAccount and RBAC, applied as clusterctl would.
	install []*unstructured.Unstructured
	// webhooks are the webhook configurations, pointed at the manager on 127.0.0.1 instead.
	webhooks []*unstructured.Unstructured
	// deployment is the manager's Deployment: the plane runs its container with runc.
	deployment *appsv1.Deployment
}

// variable is a clusterctl variable reference: ${NAME} or ${NAME:=default}.
var variable = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:=([^}]*))?\}`)

// substitute replaces clusterctl variables as `clusterctl init` does: with the environment's
// value, else the default; a variable with neither is an error.
func substitute(text string, lookup func(string) (string, bool)) (string, error) {
	var missing []string
	out := variable.ReplaceAllStringFunc(text, func(ref string) string {
		m := variable.FindStringSubmatch(ref)
		if v, ok := lookup(m[1]); ok {
			return v
		}
		if m[2] != "" {
			return m[3]
		}
		missing = append(missing, m[1])
		return ref
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("variables without a value: %v", missing)
	}
	return out, nil
}

func readComponents(path string) (*components, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	text, err := substitute(string(data), os.LookupEnv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	objs, err := localenv.DecodeYAML([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c := &components{}
	for _, obj := range objs {
		switch obj.GetKind() {
		case "Namespace", "CustomResourceDefinition", "ServiceAccount", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding":
			c.install = append(c.install, obj)
		case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
			c.webhooks = append(c.webhooks, obj)
		case "Deployment":
			c.deployment = &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, c.deployment); err != nil {
				return nil, fmt.Errorf("%s: the Deployment: %w", path, err)
			}
		}
		// The Service, and cert-manager's Issuer and Certificate, have no use without pods:
		// the plane serves the webhooks with a certificate of its own.
	}
	if c.deployment == nil || len(c.deployment.Spec.Template.Spec.Containers) != 1 {
		return nil, fmt.Errorf("%s: want one Deployment with one container", path)
	}
	return c, nil
}

// apply creates the install objects in order (the file's), replacing those that exist (as
// `kubectl apply` of a release over another provider's CRDs does), and waits for the CRDs to be
// served.
func (c *components) apply(ctx context.Context, cl client.Client) error {
	for _, obj := range c.install {
		if err := createOrReplace(ctx, cl, obj); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(time.Minute)
	for _, obj := range c.install {
		if obj.GetKind() != "CustomResourceDefinition" {
			continue
		}
		for {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := cl.Get(ctx, client.ObjectKey{Name: obj.GetName()}, crd); err != nil {
				return err
			}
			if established(crd) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("CRD %s not established within a minute", obj.GetName())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

// createOrReplace creates a copy of obj, or replaces the object of that name with it.
func createOrReplace(ctx context.Context, cl client.Client, obj *unstructured.Unstructured) error {
	obj = obj.DeepCopy()
	obj.SetResourceVersion("")
	err := cl.Create(ctx, obj)
	if apierrors.IsAlreadyExists(err) {
		existing := &unstructured.Unstructured{}
		existing.SetGroupVersionKind(obj.GroupVersionKind())
		if err = cl.Get(ctx, client.ObjectKeyFromObject(obj), existing); err == nil {
			obj.SetResourceVersion(existing.GetResourceVersion())
			err = cl.Update(ctx, obj)
		}
	}
	if err != nil {
		return fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, cond := range crd.Status.Conditions {
		if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}
