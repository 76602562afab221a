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

package compute

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients"
)

// Service creates, finds and deletes the server and ports of one machine.
type Service struct {
	compute  clients.ComputeClient
	image    clients.ImageClient
	network  clients.NetworkClient
	recorder events.EventRecorder
	owner    runtime.Object
}

// NewService returns a compute service whose events are recorded on owner.
func NewService(compute clients.ComputeClient, image clients.ImageClient, network clients.NetworkClient, recorder events.EventRecorder, owner runtime.Object) *Service {
	return &Service{compute: compute, image: image, network: network, recorder: recorder, owner: owner}
}

func (s *Service) event(reason, action, format string, args ...any) {
	if s.recorder == nil || s.owner == nil {
		return
	}
	s.recorder.Eventf(s.owner, nil, corev1.EventTypeNormal, reason, action, format, args...)
}

// SpecError is a problem with a machine's spec that only the cloud reveals: a flavor, image,
// server group or key pair that matches nothing, or several. The message names the field.
type SpecError struct{ Message string }

func (e *SpecError) Error() string { return e.Message }

// IsSpecError reports whether err is, or wraps, a SpecError.
func IsSpecError(err error) bool {
	var specErr *SpecError
	return errors.As(err, &specErr)
}
