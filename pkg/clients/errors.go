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
	"net/http"

	"github.com/gophercloud/gophercloud/v2"
)

// IsNotFound reports whether an OpenStack call answered 404.
func IsNotFound(err error) bool { return gophercloud.ResponseCodeIs(err, http.StatusNotFound) }

// IsConflict reports whether an OpenStack call answered 409: for Octavia, that the load balancer
// is busy with another change (PENDING_*).
func IsConflict(err error) bool { return gophercloud.ResponseCodeIs(err, http.StatusConflict) }
