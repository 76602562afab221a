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

package localenv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// WriteAdminKubeconfig adds an administrator (group system:masters) to env's API server, writes
// its kubeconfig to path, and returns its client configuration.
func WriteAdminKubeconfig(env *envtest.Environment, path string) (*rest.Config, error) {
	return WriteUserKubeconfig(env, envtest.User{Name: "capo-admin", Groups: []string{"system:masters"}}, path)
}

// WriteUserKubeconfig adds user to env's API server, writes its kubeconfig to path, and returns
// its client configuration.
func WriteUserKubeconfig(env *envtest.Environment, user envtest.User, path string) (*rest.Config, error) {
	u, err := env.AddUser(user, nil)
	if err != nil {
		return nil, fmt.Errorf("adding user %s: %w", user.Name, err)
	}
	data, err := u.KubeConfig()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, err
	}
	return u.Config(), nil
}

// DecodeYAML splits a multi-document YAML stream into objects, skipping empty documents.
func DecodeYAML(data []byte) ([]*unstructured.Unstructured, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*unstructured.Unstructured
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		obj := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &obj.Object); err != nil {
			return nil, err
		}
		if len(obj.Object) > 0 {
			out = append(out, obj)
		}
	}
}
