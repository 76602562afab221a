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

package clients

import (
	"context"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
)

//go:generate mockgen -destination=mock/image.go -package=mock -copyright_file=../../hack/boilerplate/boilerplate.mockgen.txt . ImageClient

// ImageClient is the part of Glance the provider uses: finding the image to boot.
type ImageClient interface {
	ListImages(ctx context.Context, opts images.ListOptsBuilder) ([]images.Image, error)
	GetImage(ctx context.Context, id string) (*images.Image, error)
}

type imageClient struct {
	c *gophercloud.ServiceClient
}

// NewImageClient wraps a Glance service client.
func NewImageClient(c *gophercloud.ServiceClient) ImageClient {
	return &imageClient{c: c}
}

func (i *imageClient) ListImages(ctx context.Context, opts images.ListOptsBuilder) ([]images.Image, error) {
	return call(serviceImage, "ListImages", func() ([]images.Image, error) {
		return allPages(ctx, images.List(i.c, opts), images.ExtractImages)
	})
}

func (i *imageClient) GetImage(ctx context.Context, id string) (*images.Image, error) {
	return call(serviceImage, "GetImage", func() (*images.Image, error) { return images.Get(ctx, i.c, id).Extract() })
}
