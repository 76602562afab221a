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

// Package bases holds this provider's CRDs as controller-gen writes them, embedded for the tools
// that need the schema the API server will apply (the pre-flight check of a switch from upstream
// CAPO lists the fields it would prune).
package bases

import "embed"

// CRDs are the CRD manifests of this directory.
//
//go:embed *.yaml
var CRDs embed.FS
