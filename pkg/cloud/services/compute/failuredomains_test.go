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
	"context"
	"errors"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/availabilityzones"
	. "github.com/onsi/gomega"
	"go.uber.org/mock/gomock"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/capo-multiaz/cluster-api-provider-openstack/pkg/clients/mock"
)

func zone(name string, available bool) availabilityzones.AvailabilityZone {
	z := availabilityzones.AvailabilityZone{ZoneName: name}
	z.ZoneState.Available = available
	return z
}

func TestFailureDomains(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	m := mock.NewMockComputeClient(gomock.NewController(t))
	m.EXPECT().ListAvailabilityZones(ctx).Return([]availabilityzones.AvailabilityZone{zone("az2", true), zone("az1", true), zone("broken", false)}, nil).Times(2)

	all, err := FailureDomains(ctx, m, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(all).To(Equal([]clusterv1.FailureDomain{{Name: "az1", ControlPlane: ptr.To(true)}, {Name: "az2", ControlPlane: ptr.To(true)}}))

	some, err := FailureDomains(ctx, m, []string{"az2"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(some).To(Equal([]clusterv1.FailureDomain{{Name: "az1", ControlPlane: ptr.To(false)}, {Name: "az2", ControlPlane: ptr.To(true)}}))

	m.EXPECT().ListAvailabilityZones(ctx).Return(nil, errors.New("boom"))
	_, err = FailureDomains(ctx, m, nil)
	g.Expect(err).To(MatchError("listing Nova availability zones: boom"))
}
